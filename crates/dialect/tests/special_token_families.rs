//! Families whose calls are framed by special tokens around JSON arguments, on their
//! corpus templates: Solar Open.

mod framed_common;

use framed_common::*;
use serde_json::json;
use toolbridge_dialect::dialect::ChatTemplate;

fn solar_open() -> ChatTemplate {
    template("llama.cpp/upstage-Solar-Open-100B.jinja", "", "<|end|>")
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
