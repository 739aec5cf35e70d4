//! Qwen3-Coder and GLM on their corpus templates: XML-style calls whose argument types
//! come back from the tools' schemas.

mod framed_common;

use framed_common::*;
use serde_json::{json, Value};
use toolbridge_dialect::dialect::ChatTemplate;

fn qwen3_coder() -> ChatTemplate {
    template("llama.cpp/Qwen3-Coder.jinja", "", "<|im_end|>")
}

fn glm() -> ChatTemplate {
    template("llama.cpp/GLM-4.6.jinja", "[gMASK]<sop>", "<|endoftext|>")
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn qwen3_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| {
                    format!("<parameter={key}>\n{}\n</parameter>\n", value_text(value))
                })
                .collect();
            format!("<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>")
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

fn glm_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| {
                    format!(
                        "<arg_key>{key}</arg_key>\n<arg_value>{}</arg_value>\n",
                        value_text(value)
                    )
                })
                .collect();
            format!("<tool_call>{name}\n{parameters}</tool_call>")
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

#[test]
fn templates_render_calls_and_results() {
    let registry = registry();
    renders_history(
        registry.get("qwen3_coder").expect("registered"),
        &qwen3_coder(),
        &[
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "sunny, 21C",
        ],
    );
    renders_history(
        registry.get("glm").expect("registered"),
        &glm(),
        &["<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>", "sunny, 21C"],
    );
}

#[test]
fn argument_types_come_back_from_the_schema() {
    let registry = registry();
    let dialect = registry.get("qwen3_coder").expect("registered");
    // As Qwen3-Coder's template writes a past call, and as vLLM's parser tests write output.
    let text = "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\n12\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=add>\n<parameter=a>\n1.5\n</parameter>\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>";
    let request = request(None);
    let message = parsed_however_cut(&|| prepare(dialect, &request, &qwen3_coder()).parser, text);
    assert_eq!(
        calls_of(&message),
        [
            call("get_weather", json!({"city": "12", "days": 3})),
            call("add", json!({"a": 1.5, "b": 2}))
        ]
    );
    assert_eq!(message.content_text(), "Let me check.");
    let glm_dialect = registry.get("glm").expect("registered");
    let text = "<think>Rome.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rome</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";
    let message = parsed_however_cut(&|| prepare(glm_dialect, &request, &glm()).parser, text);
    assert_eq!(
        calls_of(&message),
        [call("get_weather", json!({"city": "Rome", "days": 2}))]
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Rome."));
    let broken = "<tool_call>\n<function=add>\n<parameter=a>\n1\n</function>";
    let message = parsed_however_cut(
        &|| prepare(dialect, &request, &qwen3_coder()).parser,
        broken,
    );
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

#[test]
fn grammars_honour_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("qwen3_coder").expect("registered"),
        &qwen3_coder(),
        qwen3_calls,
    );
    honours_tool_choice(registry.get("glm").expect("registered"), &glm(), glm_calls);
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let qwen = registry.get("qwen3_coder").expect("registered");
    random_calls_round_trip_typed(qwen, &qwen3_coder(), qwen3_calls, 24);
    let glm_dialect = registry.get("glm").expect("registered");
    random_calls_round_trip_typed(glm_dialect, &glm(), glm_calls, 24);
    random_bytes_are_safe(qwen);
    random_bytes_are_safe(glm_dialect);
}
