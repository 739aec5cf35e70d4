//! The embedded engine against the real default model (Qwen2.5-Coder-0.5B-Instruct,
//! fetched by `scripts/fetch-model.sh`, or the GGUF named by `TOOLBRIDGE_MODEL`).
//! Run with `cargo test -p toolbridge-engine --features llama`.
#![cfg(feature = "llama")]

use std::path::PathBuf;

use serde_json::{json, Value};
use toolbridge_engine::{
    Completion, Engine, EngineError, EngineErrorKind, FinishReason, Flow, Generation, LlamaEngine,
    LlamaOptions, Sampling,
};
use toolbridge_grammar::check::Validator;
use toolbridge_grammar::{lark, Constraint, Expr, Grammar, Trigger};

const DEFAULT_MODEL: &str = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

fn model_path() -> PathBuf {
    let path = std::env::var_os("TOOLBRIDGE_MODEL").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(DEFAULT_MODEL)
        },
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "the model is missing: looked for {} (run scripts/fetch-model.sh or set TOOLBRIDGE_MODEL)",
        path.display()
    );
    path
}

/// A small context keeps the tests' memory low; tests run in parallel.
fn engine(parallel: usize) -> LlamaEngine {
    let options = LlamaOptions {
        context_length: Some(2048),
        parallel,
        ..LlamaOptions::new(model_path())
    };
    LlamaEngine::load(options).expect("the model loads")
}

/// A prompt in Qwen's chat format.
fn chat(system: &str, user: &str) -> String {
    format!(
        "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )
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

fn run(engine: &LlamaEngine, generation: &Generation) -> (String, Completion) {
    try_run(engine, generation).expect("the generation succeeds")
}

fn try_run(
    engine: &LlamaEngine,
    generation: &Generation,
) -> Result<(String, Completion), EngineError> {
    let mut text = String::new();
    let completion = engine.generate(generation, &mut |piece| {
        text.push_str(piece);
        Flow::Continue
    })?;
    Ok((text, completion))
}

/// Runs `generations` at once, each on its own thread; their texts and completions in order.
fn run_together(engine: &LlamaEngine, generations: Vec<Generation>) -> Vec<(String, Completion)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = generations
            .into_iter()
            .map(|generation| scope.spawn(move || run(engine, &generation)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

const ASSISTANT: &str = "You are a helpful assistant.";

#[test]
fn loads_the_model_info_from_the_gguf() {
    let engine = engine(1);
    let info = engine.model();
    assert_eq!(info.id, "qwen2.5-coder-0.5b-instruct-q4_k_m");
    assert!(info
        .chat_template
        .as_deref()
        .is_some_and(|t| t.contains("<|im_start|>")));
    assert_eq!(info.eos_token.as_deref(), Some("<|im_end|>"));
    assert_eq!(info.context_length, 2048);
}

#[test]
fn the_special_tokens_are_the_vocabularys_control_tokens() {
    let engine = engine(1);
    let special = engine.special_tokens();
    for token in ["<|im_start|>", "<|im_end|>", "<|endoftext|>"] {
        assert!(special.iter().any(|s| s == token), "{token} in {special:?}");
    }
    assert!(
        !special.iter().any(|s| s == "<tool_call>" || s == "Paris"),
        "{special:?}"
    );
}

#[test]
fn generates_text_and_reports_usage() {
    let engine = engine(1);
    let generation = greedy(chat(ASSISTANT, "Say hello in one short sentence."), 40);
    let (text, completion) = run(&engine, &generation);
    assert!(!text.trim().is_empty());
    assert!(!text.contains("<|im_end|>"), "{text:?}");
    assert_eq!(completion.finish_reason, FinishReason::Stop, "{text:?}");
    assert!(completion.usage.prompt_tokens > 10);
    assert!(completion.usage.completion_tokens > 0);
    assert!(completion.timings.first_piece_ms > 0.0);
}

#[test]
fn greedy_decoding_is_repeatable() {
    let engine = engine(1);
    let generation = greedy(chat(ASSISTANT, "Name three colours."), 24);
    let (first, _) = run(&engine, &generation);
    let (second, _) = run(&engine, &generation);
    assert_eq!(first, second);
}

/// Qwen's byte-level vocabulary starts with the printable ASCII characters in order from
/// `!`, and its pre-tokenizer writes every digit as a token of its own: `1` is token 16.
const QWEN_DIGIT_ONE: u32 = 16;

#[test]
fn logit_bias_bans_a_token() {
    let engine = engine(1);
    let mut generation = greedy(
        chat(ASSISTANT, "Count from 1 to 5, digits separated by spaces."),
        16,
    );
    let (free, _) = run(&engine, &generation);
    assert!(free.contains('1'), "the model counts from 1: {free:?}");
    generation.sampling.logit_bias = vec![(QWEN_DIGIT_ONE, -100.0), (u32::MAX, 5.0)];
    let (biased, _) = run(&engine, &generation);
    assert!(!biased.contains('1'), "token 16 is banned: {biased:?}");
}

#[test]
fn a_stop_string_cuts_the_output_before_it() {
    let engine = engine(1);
    let generation = greedy(
        chat(ASSISTANT, "Count from 1 to 10, one number per line."),
        40,
    );
    let (free, _) = run(&engine, &generation);
    assert!(free.contains('5'), "{free:?}");
    let stopped = Generation {
        stop: vec!["5".into()],
        ..generation
    };
    let (text, completion) = run(&engine, &stopped);
    assert_eq!(completion.finish_reason, FinishReason::Stop);
    assert_eq!(text, free[..free.find('5').unwrap()]);
}

#[test]
fn max_tokens_ends_with_length() {
    let engine = engine(1);
    let generation = greedy(chat(ASSISTANT, "Write a long story about a dragon."), 5);
    let (_, completion) = run(&engine, &generation);
    assert_eq!(completion.finish_reason, FinishReason::Length);
    assert_eq!(completion.usage.completion_tokens, 5);
}

#[test]
fn a_prompt_longer_than_the_context_is_refused() {
    let engine = engine(1);
    let generation = greedy("word ".repeat(3000), 5);
    let error = try_run(&engine, &generation).unwrap_err();
    assert!(
        matches!(error.kind(), EngineErrorKind::PromptTooLong { .. }),
        "{error}"
    );
}

#[test]
fn a_prompt_far_over_the_context_is_refused_before_generating() {
    let engine = engine(1);
    let huge = "the quick brown fox jumps over the lazy dog ".repeat(40_000);
    match engine.check_prompt(&huge).map_err(|e| *e.kind()) {
        Err(EngineErrorKind::PromptTooLong {
            prompt_tokens,
            context_length,
        }) => assert!(prompt_tokens > context_length, "{prompt_tokens}"),
        other => panic!("an early refusal, got {other:?}"),
    }
    let short = chat("You are brief.", "Hi");
    assert!(engine.check_prompt(&short).is_ok());
    let near = "word ".repeat(1800);
    assert!(
        engine.check_prompt(&near).is_ok(),
        "a prompt that may fit is left to generate's exact check"
    );
}

fn person_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"}
        },
        "required": ["name", "age"],
        "additionalProperties": false
    })
}

#[test]
fn a_forced_json_schema_constraint_yields_valid_json() {
    let engine = engine(1);
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", Expr::Json(person_schema()));
    let generation = Generation {
        constraint: Some(Constraint::new(grammar.clone(), Vec::new(), false)),
        ..greedy(chat(ASSISTANT, "Tell me about a famous scientist."), 100)
    };
    let (text, completion) = run(&engine, &generation);
    assert_eq!(completion.finish_reason, FinishReason::Stop, "{text:?}");
    let value: Value = serde_json::from_str(&text).expect("the output is JSON");
    assert!(value["name"].is_string(), "{value}");
    assert!(value["age"].is_i64(), "{value}");
    assert!(Validator::from_grammar(&grammar).unwrap().accepts(&text));
}

/// A `get_weather` call in Qwen's `<tool_call>` wrapper, or in the fenced JSON small
/// models often write instead; lazy on either opening.
fn weather_call_constraint(lazy: bool) -> Constraint {
    let call = json!({
        "type": "object",
        "properties": {
            "name": {"const": "get_weather"},
            "arguments": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": false
            }
        },
        "required": ["name", "arguments"],
        "additionalProperties": false
    });
    let wrapped = |open: &str, close: &str| {
        Expr::Seq(vec![
            Expr::literal(open),
            Expr::reference("call"),
            Expr::literal(close),
        ])
    };
    let mut grammar = Grammar::new("root");
    grammar.set_rule(
        "root",
        Expr::Alt(vec![
            wrapped("<tool_call>\n", "\n</tool_call>"),
            wrapped("```json\n", "\n```"),
        ]),
    );
    grammar.set_rule("call", Expr::Json(call));
    Constraint::new(
        grammar,
        vec![
            Trigger::Word("<tool_call>".into()),
            Trigger::Word("```json".into()),
        ],
        lazy,
    )
}

/// The system prompt Qwen 2.5's template writes for one tool.
fn weather_tool_system() -> String {
    let tool = json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    }});
    format!(
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\n\
         You may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tool}\n</tools>\n\n\
         For each function call, return a json object with function name and arguments within \
         <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>"
    )
}

#[test]
fn a_lazy_constraint_shapes_the_call_after_its_trigger() {
    let engine = engine(1);
    let constraint = weather_call_constraint(true);
    let generation = Generation {
        constraint: Some(constraint.clone()),
        ..greedy(
            chat(&weather_tool_system(), "What is the weather in Paris?"),
            100,
        )
    };
    let (text, completion) = run(&engine, &generation);
    assert_eq!(completion.finish_reason, FinishReason::Stop, "{text:?}");
    let call = ["<tool_call>\n", "```json\n"]
        .iter()
        .find_map(|open| text.split_once(open))
        .map(|(_, rest)| {
            rest.trim_end_matches("\n</tool_call>")
                .trim_end_matches("\n```")
        })
        .unwrap_or_else(|| panic!("no call in {text:?}"));
    let call: Value = serde_json::from_str(call).expect("the call is JSON");
    assert_eq!(call["name"], "get_weather");
    assert!(call["arguments"]["city"].is_string(), "{call}");
    let lazy = lark::print_lazy(constraint.grammar(), constraint.triggers());
    assert!(
        Validator::from_lark(&lazy).unwrap().accepts(&text),
        "{text:?}"
    );
}

#[test]
fn a_forced_call_constraint_starts_the_call_at_once() {
    let engine = engine(1);
    let generation = Generation {
        constraint: Some(weather_call_constraint(false)),
        ..greedy(chat(&weather_tool_system(), "Hello there!"), 100)
    };
    let (text, completion) = run(&engine, &generation);
    assert_eq!(completion.finish_reason, FinishReason::Stop, "{text:?}");
    assert!(
        text.starts_with("<tool_call>\n") || text.starts_with("```json\n"),
        "{text:?}"
    );
    assert!(text.contains("\"get_weather\""), "{text:?}");
}

/// Tokens the grammar forces are taken in one batch, and the answer under greedy decoding
/// is the one sampling every token gives: forced calls, a lazy call, a JSON schema.
#[test]
fn forced_tokens_taken_ahead_leave_the_greedy_answer_as_it_was() {
    let ahead = engine(1);
    let one_by_one = LlamaEngine::load(LlamaOptions {
        context_length: Some(2048),
        forced_tokens_ahead: false,
        ..LlamaOptions::new(model_path())
    })
    .expect("the model loads");
    let mut json = Grammar::new("root");
    json.set_rule("root", Expr::Json(person_schema()));
    let cases = [
        (
            weather_call_constraint(false),
            chat(&weather_tool_system(), "Weather in Oslo?"),
        ),
        (
            weather_call_constraint(false),
            chat(&weather_tool_system(), "Hello there!"),
        ),
        (
            weather_call_constraint(true),
            chat(&weather_tool_system(), "What is the weather in Paris?"),
        ),
        (
            Constraint::new(json, Vec::new(), false),
            chat(ASSISTANT, "Tell me about a famous scientist."),
        ),
    ];
    let mut forced = 0;
    for (constraint, prompt) in cases {
        let generation = Generation {
            constraint: Some(constraint),
            ..greedy(prompt, 80)
        };
        let (text, completion) = run(&ahead, &generation);
        let (sampled, each) = run(&one_by_one, &generation);
        assert_eq!(text, sampled);
        assert_eq!(
            completion.usage.completion_tokens, each.usage.completion_tokens,
            "{text:?}"
        );
        assert_eq!(each.timings.forced_tokens, 0);
        forced += completion.timings.forced_tokens;
    }
    assert!(forced >= 12, "{forced} tokens forced");
}

#[test]
fn a_repeated_constraint_comes_from_the_cache_and_generates_the_same() {
    let engine = engine(1);
    let generation = Generation {
        constraint: Some(weather_call_constraint(false)),
        ..greedy(chat(&weather_tool_system(), "Weather in Oslo?"), 60)
    };
    let (first_text, first) = run(&engine, &generation);
    let (second_text, second) = run(&engine, &generation);
    assert!(!first.timings.grammar_cached);
    assert!(second.timings.grammar_cached);
    assert_eq!(first_text, second_text);
    let other = Generation {
        constraint: Some(weather_call_constraint(true)),
        ..generation
    };
    assert!(!run(&engine, &other).1.timings.grammar_cached);
}

#[test]
fn the_kernels_have_the_simd_this_cpu_has() {
    let _engine = engine(1);
    let kernels = toolbridge_engine::llama::system_info();
    #[cfg(target_arch = "x86_64")]
    for (cpu_has, kernel) in [
        (std::arch::is_x86_feature_detected!("avx2"), "AVX2 = 1"),
        (std::arch::is_x86_feature_detected!("fma"), "FMA = 1"),
        (std::arch::is_x86_feature_detected!("f16c"), "F16C = 1"),
        (std::arch::is_x86_feature_detected!("avx512f"), "AVX512 = 1"),
        (
            std::arch::is_x86_feature_detected!("avx512vnni"),
            "AVX512_VNNI = 1",
        ),
    ] {
        assert!(
            !cpu_has || kernels.contains(kernel),
            "{kernel} missing: {kernels}"
        );
    }
    println!("llama.cpp kernels: {kernels}");
}

#[test]
fn a_lazy_constraint_leaves_text_before_its_trigger_alone() {
    let engine = engine(1);
    let free = greedy(chat(ASSISTANT, "Name three colours."), 24);
    let lazy = Generation {
        constraint: Some(weather_call_constraint(true)),
        ..free.clone()
    };
    assert_eq!(run(&engine, &lazy).0, run(&engine, &free).0);
}

#[test]
fn an_uncompilable_constraint_is_a_constraint_error() {
    let engine = engine(1);
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", Expr::reference("missing"));
    let generation = Generation {
        constraint: Some(Constraint::new(grammar, Vec::new(), false)),
        ..greedy(chat(ASSISTANT, "Hi"), 5)
    };
    let error = try_run(&engine, &generation).unwrap_err();
    assert!(
        matches!(error.kind(), EngineErrorKind::Constraint),
        "{error}"
    );
}

/// A prompt longer than a batch reports each batch evaluated with an empty piece, so a
/// caller that has gone stops it before its first token instead of holding the slot for
/// the whole prompt.
#[test]
fn a_long_prompt_reports_progress_and_stops_before_its_first_token() {
    let engine = engine(1);
    let story = "The dragon flew over the hills and slept. ".repeat(150);
    let generation = greedy(chat(ASSISTANT, &story), 16);
    let mut pieces = Vec::new();
    let completion = engine
        .generate(&generation, &mut |piece| {
            pieces.push(piece.to_owned());
            Flow::Stop
        })
        .unwrap();
    assert_eq!(pieces, [""]);
    assert_eq!(completion.finish_reason, FinishReason::Cancelled);
    assert_eq!(completion.usage.completion_tokens, 0);
}

#[test]
fn flow_stop_cancels_and_frees_the_slot() {
    let engine = engine(1);
    let generation = greedy(chat(ASSISTANT, "Write a long story about a dragon."), 200);
    let mut pieces = 0;
    let completion = engine
        .generate(&generation, &mut |_| {
            pieces += 1;
            Flow::Stop
        })
        .unwrap();
    assert_eq!(pieces, 1);
    assert_eq!(completion.finish_reason, FinishReason::Cancelled);
    assert!(completion.usage.completion_tokens < 10);
    // The only slot is free again.
    let (_, after) = run(&engine, &greedy(chat(ASSISTANT, "Hi"), 4));
    assert!(after.usage.completion_tokens > 0);
}

#[test]
fn concurrent_generations_share_the_batch_and_both_complete() {
    let engine = engine(2);
    let prompts = [
        chat(ASSISTANT, "Write a poem about the sea."),
        chat(ASSISTANT, "Explain recursion to a child."),
    ];
    let results = run_together(
        &engine,
        prompts
            .iter()
            .map(|prompt| greedy(prompt.clone(), 24))
            .collect(),
    );
    for (text, completion) in &results {
        assert!(!text.is_empty());
        assert_eq!(completion.finish_reason, FinishReason::Length, "{text:?}");
        assert_eq!(completion.usage.completion_tokens, 24);
    }
    // Each matches what it generates alone (greedy, same model).
    let (alone, _) = run(&engine, &greedy(prompts[0].clone(), 24));
    assert_eq!(alone, results[0].0);
}

/// A prompt seen on one slot is not evaluated again on another: two requests sharing a
/// long system prompt, at once, each find it cached, whichever slot each lands in (the
/// second is copied the first's cache), and each answers as it does alone.
#[test]
fn a_prompt_seen_on_one_slot_is_reused_on_another() {
    let engine = engine(2);
    let system = format!(
        "{ASSISTANT} {}",
        "Answer in one short sentence, name the country and its capital, and never invent facts. "
            .repeat(8)
    );
    let first = chat(&system, "What is the capital of France?");
    let second = chat(&system, "What is the capital of Italy?");
    let (_, seen) = run(&engine, &greedy(first.clone(), 4));
    let (expected, _) = run(&engine, &greedy(second.clone(), 16));
    let results = run_together(&engine, vec![greedy(first, 160), greedy(second, 16)]);
    let system_tokens = seen.usage.prompt_tokens - 16;
    for (_, completion) in &results {
        assert!(
            completion.usage.cached_tokens >= system_tokens,
            "{:?}: the shared {system_tokens} tokens were evaluated again",
            completion.usage
        );
    }
    assert_eq!(results[1].0, expected);
}

/// Two prompts sharing a prefix longer than a batch arrive together: it is evaluated on
/// one slot, and the other waits for it and copies it, then answers as it does alone.
#[test]
fn prompts_arriving_together_evaluate_their_shared_prefix_once() {
    let engine = engine(2);
    let system = format!(
        "{ASSISTANT} {}",
        "Answer in one short sentence, name the country and its capital, and never invent facts. "
            .repeat(40)
    );
    let prompts = [
        chat(&system, "What is the capital of France?"),
        chat(&system, "What is the capital of Italy?"),
    ];
    let together = run_together(
        &engine,
        prompts
            .iter()
            .map(|prompt| greedy(prompt.clone(), 16))
            .collect(),
    );
    let system_tokens = together[0].1.usage.prompt_tokens - 16;
    assert!(system_tokens > 512, "the prefix spans more than one batch");
    let copied = together
        .iter()
        .filter(|(_, completion)| completion.usage.cached_tokens >= system_tokens)
        .count();
    assert_eq!(
        copied,
        1,
        "one of the two copies the shared {system_tokens} tokens: {:?}",
        together.iter().map(|(_, c)| c.usage).collect::<Vec<_>>()
    );
    for (prompt, (answer, _)) in prompts.iter().zip(&together) {
        assert_eq!(&run(&engine, &greedy(prompt.clone(), 16)).0, answer);
    }
}

#[test]
fn a_prompt_extending_the_last_one_reuses_its_cache() {
    let engine = engine(1);
    let first = chat(ASSISTANT, "What is the capital of France?");
    let (answer, first_completion) = run(&engine, &greedy(first.clone(), 16));
    assert_eq!(first_completion.usage.cached_tokens, 0);
    let second = format!(
        "{first}{answer}<|im_end|>\n<|im_start|>user\nAnd of Italy?<|im_end|>\n<|im_start|>assistant\n"
    );
    let (_, completion) = run(&engine, &greedy(second, 16));
    // At least the whole first prompt is reused, usually the answer too.
    assert!(
        completion.usage.cached_tokens >= first_completion.usage.prompt_tokens,
        "{:?} after {:?}",
        completion.usage,
        first_completion.usage
    );
}
