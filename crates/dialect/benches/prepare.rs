//! What preparing one request costs: the prompt style over a template without tool
//! support (Qwen 1.5's ChatML), which rewrites history from what the template was found
//! to render, beside the probing itself, which the template now does once and keeps; and
//! the call grammar printed as GBNF, as a llama.cpp server is sent it with each request;
//! the call grammar as the Lark text an in-process engine keys its cache by; and the
//! tool's schema checked as llguidance compiles it, the first time and repeated.
//! `cargo bench -p toolbridge-dialect --bench prepare`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::json;
use toolbridge_chat::ChatRequest;
use toolbridge_dialect::{ChatTemplate, Registry};
use toolbridge_grammar::check::{engine_accepts_schema, Validator};
use toolbridge_grammar::{Expr, Grammar};
use toolbridge_template::TemplateCaps;

const TEMPLATE: &str = "jinja/hfjs-e2e/Qwen_Qwen1.5-72B-Chat.jinja";

fn template() -> ChatTemplate {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(TEMPLATE);
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("corpus not found: {}: {error}", path.display()));
    ChatTemplate::new(&source, "<s>", "</s>").unwrap_or_else(|error| panic!("{error}"))
}

fn request() -> ChatRequest {
    serde_json::from_value(json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "user", "content": "And in Rome?"},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}],
    }))
    .unwrap_or_else(|error| panic!("{error}"))
}

fn prepare(c: &mut Criterion) {
    let template = template();
    let request = request();
    let registry = Registry::default();
    let dialect = registry
        .get("hermes_2_pro")
        .unwrap_or_else(|| panic!("hermes_2_pro is registered"));
    c.bench_function("probe the template", |b| {
        b.iter(|| TemplateCaps::probe(&template))
    });
    c.bench_function("prepare a request (hermes_2_pro style)", |b| {
        b.iter(|| {
            dialect
                .prepare(&request, &template)
                .map(|prepared| prepared.prompt.len())
        })
    });
    // What a llama.cpp server is sent on top: the call grammar as GBNF, its markers as
    // tokens, every request.
    let constraint = dialect
        .prepare(&request, &template)
        .ok()
        .and_then(|prepared| prepared.constraint)
        .unwrap_or_else(|| panic!("a request with tools is constrained"));
    c.bench_function("its call grammar as GBNF with token markers", |b| {
        b.iter(|| {
            let tokens = constraint.marker_candidates();
            constraint
                .with_tokens(&tokens)
                .gbnf()
                .map(|gbnf| gbnf.text.len())
        })
    });
    // What the engine keys its compiled grammars by: the call grammar as Lark, printed
    // once per request (a fresh constraint) and then kept for the size check, the
    // compile and the matcher.
    c.bench_function("its call grammar as Lark, asked three times", |b| {
        b.iter_batched(
            || constraint.clone(),
            |fresh| (0..3).map(|_| fresh.lark().len()).sum::<usize>(),
            BatchSize::SmallInput,
        )
    });
    // What preparing adds per tool: llguidance compiling its schema (the first time a
    // schema is seen), and the same check answered from its cache (every later time).
    let schema = request.tools()[0]
        .function
        .parameters
        .clone()
        .unwrap_or_default();
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", Expr::Json(schema.clone()));
    c.bench_function("a tool schema compiled by llguidance", |b| {
        b.iter(|| Validator::from_grammar(&grammar).is_ok())
    });
    c.bench_function("a tool schema checked again (cached)", |b| {
        b.iter(|| engine_accepts_schema(&schema).is_ok())
    });
}

criterion_group!(benches, prepare);
criterion_main!(benches);
