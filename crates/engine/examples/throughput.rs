//! How fast the embedded engine generates, and what the tool grammar costs.
//!
//! ```text
//! cargo run --release -p toolbridge-engine --features llama --example throughput -- \
//!     [MODEL.gguf] [MAX_TOKENS] [ROUNDS] [THREADS]
//! ```
//!
//! 1. The same tool-calling prompts, greedy, each without a constraint, with the lazy
//!    `<tool_call>` grammar and with it forced, interleaved so drift in machine speed hits
//!    all three alike: generation tokens/s of each and the ratios to unconstrained, and the
//!    time to the first piece.
//! 2. Aggregate tokens/s with 1 and with 4 streams at once (one engine, four sequences).

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use toolbridge_engine::{
    Completion, Engine, Flow, Generation, LlamaEngine, LlamaOptions, Sampling,
};
use toolbridge_grammar::{Constraint, Expr, Grammar, Trigger};

const DEFAULT_MODEL: &str = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

const QUESTIONS: [&str; 6] = [
    "What is the weather in Paris?",
    "Is it raining in Tokyo right now?",
    "How warm is it in Buenos Aires today?",
    "Tell me the weather for Nairobi.",
    "Should I take an umbrella in London?",
    "What's the temperature in Reykjavik?",
];

const STORIES: [&str; 4] = [
    "Write a long story about a dragon.",
    "Write a long story about a lighthouse keeper.",
    "Write a long story about a robot learning to paint.",
    "Write a long story about a journey across the desert.",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args
        .next()
        .map_or_else(|| PathBuf::from(DEFAULT_MODEL), PathBuf::from);
    let max_tokens: u32 = args.next().map_or(Ok(64), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(2), |a| a.parse())?;
    let threads: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let engine = LlamaEngine::load(LlamaOptions {
        parallel: 4,
        threads,
        progress: true,
        ..LlamaOptions::new(&model)
    })?;
    println!("model: {} ({})", engine.model().id, model.display());
    grammar_cost(&engine, max_tokens, rounds)?;
    concurrency(&engine, max_tokens)?;
    Ok(())
}

/// Tokens and milliseconds of generation, summed over runs.
#[derive(Default)]
struct Tally {
    tokens: u64,
    generation_ms: f64,
    first_piece_ms: Vec<f64>,
}

impl Tally {
    fn add(&mut self, completion: &Completion) {
        self.tokens += u64::from(completion.usage.completion_tokens);
        self.generation_ms += completion.timings.generation_ms;
        self.first_piece_ms.push(completion.timings.first_piece_ms);
    }

    fn tokens_per_second(&self) -> f64 {
        self.tokens as f64 * 1e3 / self.generation_ms.max(f64::EPSILON)
    }

    fn median_first_piece_ms(&self) -> f64 {
        let mut times = self.first_piece_ms.clone();
        times.sort_by(f64::total_cmp);
        times.get(times.len() / 2).copied().unwrap_or_default()
    }
}

fn grammar_cost(
    engine: &LlamaEngine,
    max_tokens: u32,
    rounds: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let modes: [(&str, Option<bool>); 3] = [
        ("unconstrained", None),
        ("lazy tool grammar", Some(true)),
        ("forced tool grammar", Some(false)),
    ];
    let mut tallies: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
    for _ in 0..rounds {
        for question in QUESTIONS {
            for ((_, lazy), tally) in modes.iter().zip(&mut tallies) {
                let generation = Generation {
                    constraint: lazy.map(tool_constraint),
                    ..greedy(chat(&tool_system(), question), max_tokens)
                };
                tally.add(&engine.generate(&generation, &mut |_| Flow::Continue)?);
            }
        }
    }
    println!(
        "\n{} prompts x {rounds} rounds, greedy, up to {max_tokens} tokens",
        QUESTIONS.len()
    );
    println!("(first-piece times include evaluating the prompt; the grammar modes reuse the cache the unconstrained run left)");
    let baseline = tallies[0].tokens_per_second();
    for ((label, _), tally) in modes.iter().zip(&tallies) {
        println!(
            "{label:>20}: {:7.1} tok/s ({:5} tokens)  ratio {:.3}  first piece (median) {:6.1} ms",
            tally.tokens_per_second(),
            tally.tokens,
            tally.tokens_per_second() / baseline,
            tally.median_first_piece_ms(),
        );
    }
    Ok(())
}

fn concurrency(engine: &LlamaEngine, max_tokens: u32) -> Result<(), Box<dyn std::error::Error>> {
    println!("\naggregate generation, greedy, {max_tokens} tokens per stream");
    let mut single = 0.0;
    for streams in [1, 4] {
        let started = Instant::now();
        let tokens = std::thread::scope(|scope| {
            let handles: Vec<_> = STORIES[..streams]
                .iter()
                .map(|story| {
                    scope.spawn(move || {
                        let generation = greedy(chat("You are a storyteller.", story), max_tokens);
                        engine
                            .generate(&generation, &mut |_| Flow::Continue)
                            .map(|c| u64::from(c.usage.completion_tokens))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().unwrap_or(Ok(0)))
                .sum::<Result<u64, _>>()
        })?;
        let rate = tokens as f64 / started.elapsed().as_secs_f64();
        if streams == 1 {
            single = rate;
        }
        println!(
            "{streams} stream(s): {rate:7.1} tok/s aggregate ({tokens} tokens), {:.2}x one stream",
            rate / single
        );
    }
    Ok(())
}

fn greedy(prompt: String, max_tokens: u32) -> Generation {
    Generation {
        prompt,
        sampling: Sampling {
            temperature: Some(0.0),
            max_tokens: Some(max_tokens),
            ..Sampling::default()
        },
        ..Generation::default()
    }
}

fn chat(system: &str, user: &str) -> String {
    format!(
        "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )
}

fn tool_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn tool_system() -> String {
    let tool = json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": tool_schema()
    }});
    format!(
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\n\
         You may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tool}\n</tools>\n\n\
         For each function call, return a json object with function name and arguments within \
         <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>"
    )
}

/// Qwen's `<tool_call>` wrapper around a call of `get_weather`.
fn tool_constraint(lazy: bool) -> Constraint {
    let call = json!({
        "type": "object",
        "properties": {"name": {"const": "get_weather"}, "arguments": tool_schema()},
        "required": ["name", "arguments"]
    });
    let mut grammar = Grammar::new("root");
    grammar.set_rule(
        "root",
        Expr::Seq(vec![
            Expr::literal("<tool_call>\n"),
            Expr::Json(call),
            Expr::literal("\n</tool_call>"),
        ]),
    );
    Constraint::new(grammar, vec![Trigger::Word("<tool_call>".into())], lazy)
}
