//! `toolbridge bench mask-time`: how long llguidance takes to compute one token mask over a
//! real model's vocabulary while a tool call is generated. The grammar is a Hermes/Qwen
//! `<tool_call>` wrapper around one JSON object per tool, with the schemas embedded as
//! llguidance `%json`, and again with them converted to rules by our converter. The tokens of a
//! sample call are fed one by one, timing each mask. Also timed: compiling the grammar, and
//! copying a compiled matcher in its start state (what the embedded engine's grammar cache
//! does for a repeated tool set).

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use toolbridge_grammar::check::llguidance::{api::TopLevelGrammar, Matcher, ParserFactory};
use toolbridge_grammar::check::toktrie::TokEnv;
use toolbridge_grammar::schema::{self, Options};
use toolbridge_grammar::{lark, Expr, Grammar};

use super::stream::median;
use super::vocab;

#[derive(clap::Args)]
pub struct MaskTimeArgs {
    /// The GGUF whose vocabulary to use.
    #[arg(long, default_value = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")]
    model: PathBuf,
    /// A JSON file with an OpenAI `tools` array (or an object with a `tools` key).
    #[arg(long, default_value = "examples/tools/seed-000.json")]
    tools: PathBuf,
    /// The model output to follow, token by token.
    #[arg(
        long,
        default_value = "<tool_call>\n{\"name\": \"superSecretTool\", \"arguments\": {\"a\": 2535, \"b\": 32222000}}\n</tool_call>"
    )]
    output: String,
    /// How many times to follow the output (the first run includes cold caches).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

pub fn run(args: &MaskTimeArgs) -> Result<()> {
    let started = Instant::now();
    let tok_env = vocab::from_gguf(&args.model)?;
    println!(
        "vocabulary: {} tokens from {} ({:.0} ms)",
        tok_env.tok_trie().vocab_size(),
        args.model.display(),
        millis(started.elapsed())
    );
    let tools = read_tools(&args.tools)?;
    let mut factory = ParserFactory::new_simple(&tok_env).map_err(|e| anyhow::anyhow!("{e}"))?;
    factory.quiet();
    let embedded = call_grammar(&tools)?;
    let (converted, _) = schema::expand_embedded(&embedded, &Options::default())?;
    for (label, grammar) in [("converted rules", converted), ("%json schemas", embedded)] {
        let lark = lark::print(&grammar);
        let times = time_masks(&factory, &tok_env, &lark, &args.output, args.runs)
            .with_context(|| format!("{label}: the grammar does not admit the output"))?;
        report(label, &times.masks);
        println!(
            "{label}: compile {:.2} ms (median of {}), copy of a compiled matcher {:.3} ms",
            median_ms(&times.compiles),
            times.compiles.len(),
            median_ms(&times.copies),
        );
    }
    Ok(())
}

fn read_tools(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)?;
    let tools = value.get("tools").unwrap_or(&value);
    match tools.as_array() {
        Some(tools) if !tools.is_empty() => Ok(tools.clone()),
        _ => bail!("{} holds no tools", path.display()),
    }
}

/// `root ::= "<tool_call>\n" (call | call | …) "\n</tool_call>"`, each call an
/// embedded schema of `{"name": …, "arguments": …}`.
fn call_grammar(tools: &[Value]) -> Result<Grammar> {
    let mut calls = Vec::new();
    for tool in tools {
        let function = tool.get("function").unwrap_or(tool);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .context("a tool has no name")?;
        let parameters = function
            .get("parameters")
            .cloned()
            .unwrap_or(json!({"type": "object"}));
        calls.push(Expr::Json(json!({
            "type": "object",
            "properties": {"name": {"const": name}, "arguments": parameters},
            "required": ["name", "arguments"],
        })));
    }
    let mut grammar = Grammar::new("root");
    grammar.set_rule(
        "root",
        Expr::Seq(vec![
            Expr::literal("<tool_call>\n"),
            Expr::group(Expr::Alt(calls)),
            Expr::literal("\n</tool_call>"),
        ]),
    );
    Ok(grammar)
}

/// What one grammar's runs took.
struct Times {
    /// Each mask, in order, over all runs.
    masks: Vec<Duration>,
    /// Each run's compile of the grammar.
    compiles: Vec<Duration>,
    /// Each run's copy of the freshly compiled matcher.
    copies: Vec<Duration>,
}

fn time_masks(
    factory: &ParserFactory,
    tok_env: &TokEnv,
    lark: &str,
    output: &str,
    runs: usize,
) -> Result<Times> {
    let tokens = tok_env.tokenize_bytes(output.as_bytes());
    let mut times = Times {
        masks: Vec::with_capacity(tokens.len() * runs),
        compiles: Vec::with_capacity(runs),
        copies: Vec::with_capacity(runs),
    };
    for _ in 0..runs {
        let started = Instant::now();
        let parser = factory
            .create_parser(TopLevelGrammar::from_lark(lark.to_string()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let compiled = Matcher::new(Ok(parser));
        times.compiles.push(started.elapsed());
        let started = Instant::now();
        let mut matcher = compiled.deep_clone();
        times.copies.push(started.elapsed());
        for &token in &tokens {
            let started = Instant::now();
            let mask = matcher.compute_mask().map_err(|e| anyhow::anyhow!("{e}"))?;
            times.masks.push(started.elapsed());
            if !mask.is_allowed(token) {
                bail!(
                    "token {token} ({:?}) is masked",
                    tok_env.tok_trie().token_dbg(token)
                );
            }
            matcher
                .consume_token(token)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    Ok(times)
}

fn report(label: &str, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |p: usize| {
        sorted
            .get((sorted.len().saturating_sub(1)) * p / 100)
            .copied()
    };
    let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
    println!(
        "{label}: {} masks, mean {:.1} µs, p50 {:.1} µs, p95 {:.1} µs, max {:.1} µs",
        times.len(),
        micros(mean),
        micros(at(50).unwrap_or_default()),
        micros(at(95).unwrap_or_default()),
        micros(sorted.last().copied().unwrap_or_default()),
    );
}

fn median_ms(times: &[Duration]) -> f64 {
    median(times.iter().map(|&time| millis(time)))
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
