//! Functionary v3.1 on its corpus template.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

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

fn v3_2() -> ChatTemplate {
    template(
        "llama.cpp/meetkai-functionary-medium-v3.2.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
    )
}

fn routes(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| format!(">>>{name}\n{arguments}"))
        .collect();
    let text = if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    };
    format!("all\n{text}{calls}")
}

#[test]
fn v3_2_template_renders_calls_and_results() {
    let registry = registry();
    let prompt = renders_history(
        registry.get("functionary_v3").expect("registered"),
        &v3_2(),
        &[
            ">>>get_weather\n{\"city\": \"Paris\"}",
            "sunny, 21C",
            "type get_weather = (_: {",
        ],
    );
    assert!(
        prompt.ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n>>>"),
        "{prompt}"
    );
}

#[test]
fn v3_2_outputs_parse_into_calls() {
    let registry = registry();
    let dialect = registry.get("functionary_v3").expect("registered");
    // As llama.cpp's Functionary v3.2 tests write the output (after the prompt's `>>>`).
    let text =
        "all\nLet me check.>>>get_weather\n{\"city\": \"Paris\"}>>>add\n{\"a\": 1, \"b\": 2}";
    let message = reads(
        dialect,
        &v3_2(),
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2})),
        ],
    );
    assert_eq!(message.content_text(), "Let me check.");
    let direct = "get_weather\n{\"city\": \"Rome\"}";
    reads(
        dialect,
        &v3_2(),
        direct,
        &[call("get_weather", json!({"city": "Rome"}))],
    );
    let answer = "all\nIt is sunny.";
    let message = reads(dialect, &v3_2(), answer, &[]);
    assert_eq!(message.content_text(), "It is sunny.");
}

#[test]
fn v3_2_grammar_honours_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("functionary_v3").expect("registered"),
        &v3_2(),
        routes,
    );
}

#[test]
fn v3_2_random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("functionary_v3").expect("registered");
    random_calls_round_trip(dialect, &v3_2(), routes, 24);
}
