//! Granite (`<|tool_call|>[…]`) and Phi-4-mini (`functools[…]`) on their corpus templates.

mod framed_common;

use framed_common::*;
use serde_json::{json, Value};
use toolbridge_dialect::dialect::{ChatTemplate, Dialect};
use toolbridge_dialect::dialects::framed_native::NativeDialect;
use toolbridge_dialect::dialects::json_list::PHI4_MINI;

fn granite_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_granite.jinja",
        "",
        "<|end_of_text|>",
    )
}

fn phi4_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_phi4_mini.jinja",
        "",
        "<|endoftext|>",
    )
}

fn list(text: &str, marker: &str, calls: &[Call]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect();
    format!("{text}{marker}{}", Value::Array(calls))
}

fn granite(text: &str, calls: &[Call]) -> String {
    list(text, "<|tool_call|>", calls)
}

fn phi4(text: &str, calls: &[Call]) -> String {
    list(text, "functools", calls)
}

#[test]
fn templates_render_calls_and_results() {
    let registry = registry();
    renders_history(
        registry.get("granite").expect("registered"),
        &granite_template(),
        &[
            "<|tool_call|>[\n    {\n        \"name\": \"get_weather\"",
            "sunny, 21C",
        ],
    );
    renders_history(
        &NativeDialect(PHI4_MINI) as &dyn Dialect,
        &phi4_template(),
        &["functools", "\"name\": \"get_weather\"", "sunny, 21C"],
    );
}

#[test]
fn outputs_parse_into_calls() {
    let registry = registry();
    let granite_dialect = registry.get("granite").expect("registered");
    // As Granite's template writes a past call (tojson with indent 4).
    let text = "<|tool_call|>[\n    {\n        \"name\": \"get_weather\",\n        \"arguments\": {\n            \"city\": \"Paris\"\n        }\n    }\n]";
    reads(
        granite_dialect,
        &granite_template(),
        text,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    let phi4_dialect = &NativeDialect(PHI4_MINI) as &dyn Dialect;
    let text = "functools[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]";
    reads(
        phi4_dialect,
        &phi4_template(),
        text,
        &[
            call("add", json!({"a": 1, "b": 2})),
            call("get_weather", json!({"city": "Rome"})),
        ],
    );
    let prose = "Use functools wisely.";
    let message = reads(phi4_dialect, &phi4_template(), prose, &[]);
    assert_eq!(message.content_text(), prose);
}

#[test]
fn grammars_honour_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("granite").expect("registered"),
        &granite_template(),
        granite,
    );
    honours_tool_choice(
        &NativeDialect(PHI4_MINI) as &dyn Dialect,
        &phi4_template(),
        phi4,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let granite_dialect = registry.get("granite").expect("registered");
    random_calls_round_trip(granite_dialect, &granite_template(), granite, 16);
    let phi4_dialect = &NativeDialect(PHI4_MINI) as &dyn Dialect;
    random_calls_round_trip(phi4_dialect, &phi4_template(), phi4, 16);
    random_bytes_are_safe(granite_dialect);
    random_bytes_are_safe(phi4_dialect);
}
