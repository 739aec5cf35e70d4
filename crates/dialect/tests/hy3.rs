//! Tencent Hy3 on its template (`tests/llama_cpp/templates/tencent-Hy3.jinja`, llama.cpp's
//! copy at build 11434, MIT; the template's text is Tencent's): GLM's `<arg_key>` pairs
//! after `<tool_call>name<tool_sep>`, all calls in one `<tool_calls>` block, values typed
//! back from the tools' schemas. The template writes every tag with `:opensource` in it.

use serde_json::{json, Value};
use toolbridge_dialect::{detect, ChatTemplate};

use crate::framed_common::*;

const TEMPLATE: &str = "tests/llama_cpp/templates/tencent-Hy3.jinja";

fn hy3() -> ChatTemplate {
    template(TEMPLATE, "", "<｜hy_eos:opensource｜>")
}

/// Calls as the template writes past calls, with `suffix` in every tag (`:opensource`, or
/// nothing as other Hy3 templates and parsers have them).
fn written(text: &str, calls: &[Call], suffix: &str) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| {
            let arguments: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| {
                    let value = match value {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    format!("<arg_key{suffix}>{key}</arg_key{suffix}>\n<arg_value{suffix}>{value}</arg_value{suffix}>\n")
                })
                .collect();
            format!("<tool_call{suffix}>{name}<tool_sep{suffix}>\n{arguments}</tool_call{suffix}>\n")
        })
        .collect();
    format!("{text}<tool_calls{suffix}>\n{calls}</tool_calls{suffix}>")
}

fn hy3_calls(text: &str, calls: &[Call]) -> String {
    written(text, calls, ":opensource")
}

#[test]
fn the_template_is_hy3_not_glm() {
    let source = corpus_text(TEMPLATE);
    assert_eq!(detect::family(&source), Some("hy3"));
    assert_eq!(detect::dialect_name(&source), "hy3");
    // A template that writes the tags as they are (no suffix) is Hy3 too.
    let plain = "{{ '<tool_calls>' }}{{ '<tool_call>' + name + '<tool_sep>' }}<arg_key>";
    assert_eq!(detect::family(plain), Some("hy3"));
}

#[test]
fn the_template_renders_calls_and_results() {
    let registry = registry();
    let dialect = registry.get("hy3").expect("registered");
    renders_history(
        dialect,
        &hy3(),
        &[
            "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
            "sunny, 21C",
        ],
    );
}

#[test]
fn calls_read_back_typed_from_the_schemas() {
    let registry = registry();
    let dialect = registry.get("hy3").expect("registered");
    let expected = [
        call("get_weather", json!({"city": "12", "days": 2})),
        call("add", json!({"a": 1.5, "b": 2})),
    ];
    let text = hy3_calls("Checking.", &expected);
    let request = request(None);
    let message = parsed_however_cut(&|| prepare(dialect, &request, &hy3()).parser, &text);
    assert_eq!(calls_of(&message), expected);
    assert_eq!(message.content_text(), "Checking.");
    // Without the template the tags are read as they are, on one line or several.
    let plain = "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>2</arg_value></tool_call>\n<tool_call>get_time<tool_sep>\n</tool_call></tool_calls>";
    let message = parsed_however_cut(&|| dialect.parser(), plain);
    assert_eq!(
        calls_of(&message),
        [
            call("get_weather", json!({"city": "Paris", "days": 2})),
            call("get_time", json!({})),
        ]
    );
    assert_eq!(message.content_text(), "");
}

#[test]
fn near_misses_stay_content_as_written() {
    let registry = registry();
    let dialect = registry.get("hy3").expect("registered");
    for broken in [
        "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key>Paris</tool_call></tool_calls>",
        "<tool_calls><tool_call>get weather<tool_sep></tool_call></tool_calls>",
    ] {
        let message = parsed_however_cut(&|| dialect.parser(), broken);
        assert!(message.calls().is_empty(), "{broken}");
        assert_eq!(message.content_text(), broken);
    }
}

#[test]
fn a_call_without_its_name_separator_is_read() {
    // The name then ends at the first argument, as SGLang reads Hy4's calls.
    let registry = registry();
    let dialect = registry.get("hy3").expect("registered");
    let text = "<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call></tool_calls>";
    let message = parsed_however_cut(&|| dialect.parser(), text);
    assert_eq!(
        calls_of(&message),
        [call("get_weather", json!({"city": "Paris"}))]
    );
    assert_eq!(message.content_text(), "");
}

#[test]
fn the_grammar_honours_tool_choice_and_random_calls_round_trip() {
    let registry = registry();
    let dialect = registry.get("hy3").expect("registered");
    honours_tool_choice(dialect, &hy3(), hy3_calls);
    random_calls_round_trip_typed(dialect, &hy3(), hy3_calls, 24);
    random_bytes_are_safe(dialect);
}
