//! Kimi K3 on its corpus template: calls framed by `<|open|>…<|sep|>` / `<|close|>…<|sep|>`
//! tokens, each argument's JSON type declared, reasoning and the response as frames.

use serde_json::{json, Value};
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn kimi_k3() -> ChatTemplate {
    template("llama.cpp/Kimi-K3.jinja", "", "<|end_of_msg|>")
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
    }
}

/// The answer after the generation prompt (which opened `think`): `text` as reasoning, an
/// empty response, then the calls as the template writes past calls.
fn kimi_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .enumerate()
        .map(|(at, (name, arguments))| {
            let arguments: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| {
                    let text = match value {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    format!(
                        "<|open|>argument key=\"{key}\" type=\"{}\"<|sep|>{text}<|close|>argument<|sep|>",
                        json_type(value)
                    )
                })
                .collect();
            format!(
                "<|open|>call tool=\"{name}\" index=\"{}\"<|sep|>{arguments}<|close|>call<|sep|>",
                at + 1
            )
        })
        .collect();
    format!("{text}<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|>{calls}<|close|>tools<|sep|>")
}

#[test]
fn the_template_renders_calls_and_results_and_opens_reasoning() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    let prompt = renders_history(
        dialect,
        &kimi_k3(),
        &[
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            "<|open|>message role=\"tool\" tool=\"get_weather\" index=\"1\"<|sep|>sunny, 21C<|close|>message<|sep|>",
            "\"name\":\"add\"",
        ],
    );
    assert!(
        prompt.ends_with("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"),
        "{prompt}"
    );
}

#[test]
fn reads_typed_arguments_a_json_object_and_the_frames() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    let text = "Two calls.<|close|>think<|sep|><|open|>response<|sep|>Let me check.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>12<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"add\" index=\"2\"<|sep|><|open|>json type=\"object\"<|sep|>{\"a\": 1.5, \"b\": 2}<|close|>json<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>";
    let request = request(None);
    let message = parsed_however_cut(&|| prepare(dialect, &request, &kimi_k3()).parser, text);
    let expected = [
        call("get_weather", json!({"city": "12", "days": 3})),
        call("add", json!({"a": 1.5, "b": 2})),
    ];
    assert_eq!(calls_of(&message), expected);
    assert_eq!(message.reasoning_content.as_deref(), Some("Two calls."));
    assert_eq!(message.content_text(), "Let me check.");
    // Read without a prompt, the reasoning opens in the output; the declared types need
    // no schema.
    let plain = parsed_however_cut(&|| dialect.parser(), &format!("<|open|>think<|sep|>{text}"));
    assert_eq!(calls_of(&plain), expected);
    assert_eq!(plain.reasoning_content.as_deref(), Some("Two calls."));
}

#[test]
fn attributes_are_unescaped_and_garbage_stays_content() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    let text = "<|open|>tools<|sep|><|open|>call tool=\"a&amp;b\" index=\"1\"<|sep|><|open|>argument key=\"say &quot;hi&quot;\" type=\"boolean\"<|sep|>true<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
    let message = parsed_however_cut(&|| dialect.parser(), text);
    assert_eq!(
        calls_of(&message),
        [call("a&b", json!({"say \"hi\"": true}))]
    );
    for broken in [
        "<|open|>tools<|sep|><|open|>call tool=\"add\" index=\"one\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        "<|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>json type=\"object\"<|sep|>[1]<|close|>json<|sep|><|close|>call<|sep|>",
    ] {
        let message = parsed_however_cut(&|| dialect.parser(), broken);
        assert!(message.calls().is_empty(), "{broken}");
        // The tools frame's closing token is never content.
        let written = broken
            .strip_suffix("<|close|>tools<|sep|>")
            .unwrap_or(broken);
        assert_eq!(message.content_text(), written);
    }
}

const CALL: &str = "<|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"number\"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>";

/// Output after the prompt (which opened `think`) with frames a model wrote wrong:
/// (output, whether it calls [`CALL`], reasoning, content). Frames are tokens, never
/// content; the response frame ends reasoning left open.
const IMPERFECT: &[(&str, bool, &str, &str)] = &[
    // A tools frame with no call in it, then one closed twice.
    (
        "Done.<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|><|open|>tools<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        false,
        "Done.",
        "Hi.",
    ),
    (
        "<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|><|open|>tools<|sep|>{CALL}<|close|>tools<|sep|><|close|>tools<|sep|><|close|>message<|sep|>",
        true,
        "",
        "Hi.",
    ),
    // A tools frame opened with nothing after it, and one with words in it.
    (
        "<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|><|open|>tools<|sep|>",
        false,
        "",
        "Hi.",
    ),
    (
        "<|close|>think<|sep|><|open|>tools<|sep|>Hi.<|close|>tools<|sep|>",
        false,
        "",
        "Hi.",
    ),
    // Straight to the response, no reasoning written and `think` left open.
    (
        "<|open|>response<|sep|>Let me check.<|close|>response<|sep|><|open|>tools<|sep|>{CALL}<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        true,
        "",
        "Let me check.",
    ),
    (
        "Easy.<|open|>response<|sep|>Hi.<|close|>response<|sep|><|close|>message<|sep|>",
        false,
        "Easy.",
        "Hi.",
    ),
    // An argument's closing frame left out: the call's closing frame ends its value.
    (
        "<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"number\"<|sep|>1<|close|>call<|sep|><|close|>tools<|sep|>",
        true,
        "",
        "",
    ),
];

#[test]
fn frames_written_wrong_lose_nothing_and_never_show() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    let request = request(None);
    for (text, calls, reasoning, content) in IMPERFECT {
        let text = text.replace("{CALL}", CALL);
        let message = parsed_however_cut(&|| prepare(dialect, &request, &kimi_k3()).parser, &text);
        let expected = if *calls {
            vec![call("add", json!({"a": 1}))]
        } else {
            Vec::new()
        };
        assert_eq!(calls_of(&message), expected, "{text}");
        assert_eq!(
            message.reasoning_content.as_deref().unwrap_or(""),
            *reasoning,
            "{text}"
        );
        assert_eq!(message.content_text(), *content, "{text}");
    }
}

#[test]
fn a_call_inside_reasoning_is_reasoning() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    let call = "<|open|>tools<|sep|><|open|>call tool=\"add\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
    let text = format!("Maybe {call}?<|close|>think<|sep|><|open|>response<|sep|>No call.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>");
    let request = request(None);
    let message = parsed_however_cut(&|| prepare(dialect, &request, &kimi_k3()).parser, &text);
    assert!(message.calls().is_empty());
    assert_eq!(
        message.reasoning_content.as_deref(),
        Some(format!("Maybe {call}?").as_str())
    );
    assert_eq!(message.content_text(), "No call.");
}

#[test]
fn the_grammar_honours_tool_choice_and_the_schemas() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    honours_tool_choice(dialect, &kimi_k3(), kimi_calls);
    let auto = prepare(dialect, &request(None), &kimi_k3());
    let grammar = validator(auto.constraint.as_ref().expect("constraint"));
    let missing = kimi_calls("", &[call("add", json!({"a": 1}))]);
    assert!(!grammar.accepts(&missing), "{missing}");
    let string_as_number = kimi_calls("", &[call("add", json!({"a": 1, "b": "2"}))]);
    assert!(!grammar.accepts(&string_as_number), "{string_as_number}");
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("kimi_k3").expect("registered");
    random_calls_round_trip(dialect, &kimi_k3(), kimi_calls, 24);
    random_bytes_are_safe(dialect);
}
