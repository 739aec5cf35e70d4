//! Kimi K2 on its corpus templates.

mod framed_common;

use framed_common::*;
use serde_json::json;
use toolbridge_dialect::dialect::ChatTemplate;

fn kimi() -> ChatTemplate {
    template("llama.cpp/moonshotai-Kimi-K2.jinja", "", "<|im_end|>")
}

fn kimi_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            format!("<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>")
        })
        .collect();
    format!("{text}<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>")
}

#[test]
fn template_renders_calls_and_results() {
    let registry = registry();
    renders_history(
        registry.get("kimi_k2").expect("registered"),
        &kimi(),
        &[
            "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>",
            "sunny, 21C",
        ],
    );
}

#[test]
fn outputs_parse_into_calls() {
    let registry = registry();
    let dialect = registry.get("kimi_k2").expect("registered");
    // As vLLM's Kimi K2 parser tests write the output.
    let text = "<think>Two lookups.</think>Let me check.<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\n<|tool_call_begin|>functions.add:1<|tool_call_argument_begin|>{\"a\": 1, \"b\": 2}<|tool_call_end|><|tool_calls_section_end|>";
    let message = reads(
        dialect,
        &kimi(),
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2})),
        ],
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Two lookups."));
    assert_eq!(message.content_text(), "Let me check.");
}

#[test]
fn grammar_honours_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("kimi_k2").expect("registered"),
        &kimi(),
        kimi_calls,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("kimi_k2").expect("registered");
    random_calls_round_trip(dialect, &kimi(), kimi_calls, 24);
    random_bytes_are_safe(dialect);
}
