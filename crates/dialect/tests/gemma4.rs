//! Gemma 4 on its corpus templates: calls in Gemma's own argument notation, reasoning in a
//! thought channel.

use serde_json::{json, Value};
use toolbridge_dialect::{toolkit::gemma_notation::GEMMA4, ChatTemplate};

use crate::framed_common::*;

fn gemma4() -> ChatTemplate {
    template("llama.cpp/google-gemma-4-31B-it.jinja", "<bos>", "<turn|>")
}

fn gemma4_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| {
            let arguments = GEMMA4.write_value(arguments);
            format!("<|tool_call>call:{name}{arguments}<tool_call|>")
        })
        .collect();
    format!("{text}{calls}")
}

#[test]
fn gemma4_renders_calls_and_reads_them_back() {
    let registry = registry();
    let dialect = registry.get("gemma4").expect("registered");
    renders_history(
        dialect,
        &gemma4(),
        &[
            "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
            "sunny, 21C",
        ],
    );
    let text = "<|channel>thought\nTwo things.<channel|>Checking.<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\"<|\"|>,days:2}<tool_call|><|tool_call>call:add{a:1,b:2.5}<tool_call|><|tool_response>";
    let message = reads(
        dialect,
        &gemma4(),
        text,
        &[
            call("get_weather", json!({"city": "Paris, \"FR\"", "days": 2})),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Two things."));
    assert_eq!(message.content_text(), "Checking.");
    let broken = "<|tool_call>call:add{a:1,b:}<tool_call|>";
    let message = parsed_however_cut(&|| dialect.parser(), broken);
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

#[test]
fn gemma4_grammar_honours_tool_choice_and_round_trips() {
    let registry = registry();
    let dialect = registry.get("gemma4").expect("registered");
    honours_tool_choice(dialect, &gemma4(), gemma4_calls);
    random_calls_round_trip(dialect, &gemma4(), gemma4_calls, 24);
    random_bytes_are_safe(dialect);
    let value: Value = json!({"nested": {"k": [1, "x"]}});
    assert!(GEMMA4
        .write_value(&value)
        .contains("nested:{k:[1,<|\"|>x<|\"|>]}"));
}
