//! Kimi K2 on its corpus templates.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

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

const ADD: &str =
    "<|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|>";

/// Section markers without the rest: (output, whether it calls [`ADD`], reasoning,
/// content). Markers are special tokens, never content.
const STRAY_MARKERS: &[(&str, bool, &str, &str)] = &[
    (
        "Hi.<|tool_calls_section_begin|><|tool_calls_section_end|>",
        false,
        "",
        "Hi.",
    ),
    ("Hi.<|tool_calls_section_end|>", false, "", "Hi."),
    ("<|tool_calls_section_begin|>Hi.", false, "", "Hi."),
    ("Hi.<|tool_call_begin|>", false, "", "Hi."),
    (
        "<|tool_calls_section_begin|>{ADD}<|tool_calls_section_end|><|tool_calls_section_end|>",
        true,
        "",
        "",
    ),
    (
        "Hi.<|tool_calls_section_begin|><|tool_calls_section_end|>\n<|tool_calls_section_begin|>{ADD}<|tool_calls_section_end|>",
        true,
        "",
        "Hi.",
    ),
    (
        "<think>Plan.<|tool_calls_section_begin|><|tool_calls_section_end|> More.</think>Hi.",
        false,
        "Plan. More.",
        "Hi.",
    ),
];

#[test]
fn stray_section_markers_are_never_content() {
    let registry = registry();
    let dialect = registry.get("kimi_k2").expect("registered");
    for (text, calls, reasoning, content) in STRAY_MARKERS {
        let text = text.replace("{ADD}", ADD);
        let expected = if *calls {
            vec![call("add", json!({"a": 1}))]
        } else {
            Vec::new()
        };
        let message = reads(dialect, &kimi(), &text, &expected);
        assert_eq!(
            message.reasoning_content.as_deref().unwrap_or(""),
            *reasoning,
            "{text}"
        );
        assert_eq!(message.content_text(), *content, "{text}");
    }
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
