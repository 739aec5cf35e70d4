//! GPT-OSS (harmony) on its corpus template.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn gpt_oss() -> ChatTemplate {
    template("llama.cpp/openai-gpt-oss-120b.jinja", "", "<|return|>")
}

fn harmony(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            format!("<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{arguments}<|call|>")
        })
        .collect();
    let analysis = if text.is_empty() {
        String::new()
    } else {
        format!("<|channel|>analysis<|message|>{text}<|end|><|start|>assistant")
    };
    format!("{analysis}{}", calls.join("<|start|>assistant"))
}

#[test]
fn template_renders_calls_and_results() {
    let registry = registry();
    let prompt = renders_history(
        registry.get("gpt_oss").expect("registered"),
        &gpt_oss(),
        &[
            "namespace functions",
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"sunny, 21C\"<|end|>",
        ],
    );
    assert!(prompt.ends_with("<|start|>assistant"), "{prompt}");
}

#[test]
fn outputs_parse_into_calls_reasoning_and_content() {
    let registry = registry();
    let dialect = registry.get("gpt_oss").expect("registered");
    // As llama.cpp's and vLLM's harmony tests write the output.
    let text = "<|channel|>analysis<|message|>Need weather. to=functions.add {}<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>";
    let message = reads(
        dialect,
        &gpt_oss(),
        text,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    assert_eq!(
        message.reasoning_content.as_deref(),
        Some("Need weather. to=functions.add {}")
    );
    let as_template_writes = "<|start|>assistant to=functions.add<|channel|>commentary json<|message|>{\"a\": 1, \"b\": 2}<|call|>";
    reads(
        dialect,
        &gpt_oss(),
        as_template_writes,
        &[call("add", json!({"a": 1, "b": 2}))],
    );
    let answer = "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>";
    let message = reads(dialect, &gpt_oss(), answer, &[]);
    assert_eq!(message.content_text(), "It is sunny.");
    assert_eq!(message.reasoning_content.as_deref(), Some("Easy."));
}

#[test]
fn grammar_honours_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("gpt_oss").expect("registered"),
        &gpt_oss(),
        harmony,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("gpt_oss").expect("registered");
    random_calls_round_trip(dialect, &gpt_oss(), harmony, 24);
}
