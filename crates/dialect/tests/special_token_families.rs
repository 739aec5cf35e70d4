//! Families whose calls are framed by special tokens around JSON arguments, on their
//! corpus templates: Solar Open and GigaChat 3 / 3.1.

use serde_json::json;
use toolbridge_chat::ToolChoiceMode;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn solar_open() -> ChatTemplate {
    template("llama.cpp/upstage-Solar-Open-100B.jinja", "", "<|end|>")
}

fn gigachat3() -> ChatTemplate {
    template(
        "llama.cpp/GigaChat3-10B-A1.8B.jinja",
        "<s>",
        "<|message_sep|>",
    )
}

fn gigachat31() -> ChatTemplate {
    template(
        "llama.cpp/GigaChat3.1-10B-A1.8B.jinja",
        "<s>",
        "<|message_sep|>",
    )
}

/// One call, as GigaChat 3.1 writes it.
fn gigachat_call(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| {
            format!("<|function_call|>{{\"name\": \"{name}\", \"arguments\": {arguments}}}")
        })
        .collect();
    format!("{text}{calls}")
}

fn solar_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .enumerate()
        .map(|(at, (name, arguments))| {
            format!("<|tool_call:begin|>call_{at}<|tool_call:name|>{name}<|tool_call:args|>{arguments}<|tool_call:end|>")
        })
        .collect();
    format!("{text}<|tool_calls|>{calls}<|calls|>")
}

#[test]
fn solar_open_renders_calls_and_reads_them_back() {
    let registry = registry();
    let dialect = registry.get("solar_open").expect("registered");
    renders_history(
        dialect,
        &solar_open(),
        &[
            "<|tool_calls|><|tool_call:begin|>call_1<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\"}<|tool_call:end|><|calls|>",
            "<|tool_response:result|>sunny, 21C",
        ],
    );
    let text = "<|think|>Two things.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\"}<|tool_call:end|><|tool_call:begin|>a2<|tool_call:name|>add<|tool_call:args|>{\"a\": 1, \"b\": 2.5}<|tool_call:end|><|calls|>";
    let message = reads(
        dialect,
        &solar_open(),
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Two things."));
    assert_eq!(message.content_text(), "");
    let answer = parsed_however_cut(
        &|| dialect.parser(),
        "<|think|>Hm.<|end|><|begin|>assistant<|content|>It is sunny.<|end|>",
    );
    assert_eq!(answer.content_text(), "It is sunny.");
    honours_tool_choice(dialect, &solar_open(), solar_calls);
    random_calls_round_trip(dialect, &solar_open(), solar_calls, 24);
    random_bytes_are_safe(dialect);
}

#[test]
fn gigachat_renders_calls_and_reads_both_forms_back() {
    let registry = registry();
    let dialect = registry.get("gigachat").expect("registered");
    renders_history(
        dialect,
        &gigachat3(),
        &["function call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}", "sunny, 21C"],
    );
    renders_history(
        dialect,
        &gigachat31(),
        &[
            "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
            "sunny, 21C",
        ],
    );
    let expected = [call("get_weather", json!({"city": "Paris"}))];
    let text = "Checking.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}";
    let message = reads(dialect, &gigachat3(), text, &expected);
    assert_eq!(message.content_text(), "Checking.");
    let text = "Checking.<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}";
    let message = reads(dialect, &gigachat31(), text, &expected);
    assert_eq!(message.content_text(), "Checking.");

    // One call per turn, as the templates render them.
    let forced = prepare(
        dialect,
        &request(Some(ToolChoiceMode::Required.into())),
        &gigachat3(),
    );
    let grammar = validator(forced.constraint.as_ref().expect("constraint"));
    let add = [call("add", json!({"a": 1, "b": 2.5}))];
    assert!(grammar.accepts(&gigachat_call("", &add)));
    assert!(grammar.accepts("<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}"));
    assert!(!grammar.accepts("It is sunny."));
    assert!(!grammar.accepts(&gigachat_call(
        "",
        &[call("add", json!({"a": "x", "b": 1}))]
    )));
    let auto = prepare(dialect, &request(None), &gigachat31());
    let grammar = validator(auto.constraint.as_ref().expect("constraint"));
    assert!(grammar.accepts(&gigachat_call("Checking.", &add)));
    random_bytes_are_safe(dialect);
}
