//! Functionary v3.1 on its corpus template.

mod framed_common;

use framed_common::*;
use serde_json::json;
use toolbridge_dialect::dialect::ChatTemplate;

fn v3_1() -> ChatTemplate {
    template(
        "llama.cpp/meetkai-functionary-medium-v3.1.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
    )
}

fn function_tags(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| format!("<function={name}>{arguments}</function>"))
        .collect();
    format!("{text}{calls}")
}

#[test]
fn template_renders_calls_and_results() {
    let registry = registry();
    renders_history(
        registry.get("functionary_v3_1").expect("registered"),
        &v3_1(),
        &[
            "<function=get_weather>{\"city\": \"Paris\"}</function>",
            "<|start_header_id|>ipython<|end_header_id|>\n\nsunny, 21C<|eot_id|>",
        ],
    );
}

#[test]
fn outputs_parse_into_calls() {
    let registry = registry();
    let dialect = registry.get("functionary_v3_1").expect("registered");
    // As llama.cpp's Functionary v3.1 tests write the output.
    let text = "Checking.<function=get_weather>{\"city\": \"Paris\"}</function><function=add>{\"a\": 1, \"b\": 2}</function>";
    let message = reads(
        dialect,
        &v3_1(),
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2})),
        ],
    );
    assert_eq!(message.content_text(), "Checking.");
    let code = "<|python_tag|>print('hi')";
    let message = parsed_however_cut(&|| dialect.parser(), code);
    assert_eq!(
        calls_of(&message),
        [call("python", json!({"code": "print('hi')"}))]
    );
}

#[test]
fn grammar_honours_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("functionary_v3_1").expect("registered"),
        &v3_1(),
        function_tags,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("functionary_v3_1").expect("registered");
    random_calls_round_trip(dialect, &v3_1(), function_tags, 24);
    random_bytes_are_safe(dialect);
}
