//! Llama 3.2 on its official template (corpus `llama.cpp/`): JSON calls, each of several
//! after a `<|python_tag|>` of its own, or `;`-separated after one; only text after the tag
//! that is no call is code for the interpreter.

use serde_json::json;
use toolbridge_dialect::{detect, ChatTemplate};

use crate::framed_common::*;

const TEMPLATE: &str = "llama.cpp/meta-llama-Llama-3.2-3B-Instruct.jinja";

fn llama3_2() -> ChatTemplate {
    template(TEMPLATE, "<|begin_of_text|>", "<|eot_id|>")
}

#[test]
fn each_call_after_its_own_python_tag_is_a_call() {
    assert_eq!(detect::dialect_name(&corpus_text(TEMPLATE)), "llama3");
    let registry = registry();
    let dialect = registry.get("llama3.2").expect("registered");
    let both = [
        call("get_weather", json!({"city": "Paris"})),
        call("add", json!({"a": 1, "b": 2.5})),
    ];
    for text in [
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2.5}}",
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n<|python_tag|>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}",
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2.5}}",
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2.5}}",
    ] {
        let message = reads(dialect, &llama3_2(), text, &both);
        assert_eq!(message.content_text(), "", "{text}");
    }
}

#[test]
fn code_after_the_tag_is_still_code() {
    let registry = registry();
    let dialect = registry.get("llama3").expect("registered");
    // A part that is no call makes the whole text after the first tag code, as written.
    let text = "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}<|python_tag|>print(1)";
    let message = parsed_however_cut(&|| dialect.parser(), text);
    let code = "{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}<|python_tag|>print(1)";
    assert_eq!(
        calls_of(&message),
        [call("code_interpreter", json!({ "code": code }))]
    );
    random_bytes_are_safe(dialect);
}
