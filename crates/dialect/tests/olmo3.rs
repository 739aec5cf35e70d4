//! OLMo 3 on vLLM's OLMo 3 tool template: Python calls one per line between
//! `<function_calls>` tags.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn olmo3() -> ChatTemplate {
    template(
        "tests/learned/templates/tool_chat_template_olmo3.jinja",
        "",
        "<|im_end|>",
    )
}

fn olmo3_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls.iter().map(python_call).collect();
    format!(
        "{text}<function_calls>\n{}\n</function_calls>",
        calls.join("\n")
    )
}

#[test]
fn olmo3_reads_its_calls() {
    let registry = registry();
    let dialect = registry.get("olmo3").expect("registered");
    renders_history(
        dialect,
        &olmo3(),
        &[
            "<function_calls>\nget_weather(city='Paris')\n</function_calls>",
            "sunny, 21C",
        ],
    );
    let text = "Checking.<function_calls>get_weather(city='Paris, \"FR\"', days=2)\nadd(a=1, b=2.5)</function_calls>";
    let message = reads(
        dialect,
        &olmo3(),
        text,
        &[
            call("get_weather", json!({"city": "Paris, \"FR\"", "days": 2})),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    assert_eq!(message.content_text(), "Checking.");
    let broken = "<function_calls>add(a=1, b=)</function_calls>";
    let message = parsed_however_cut(&|| dialect.parser(), broken);
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

#[test]
fn olmo3_grammar_honours_tool_choice_and_round_trips() {
    let registry = registry();
    let dialect = registry.get("olmo3").expect("registered");
    honours_tool_choice(dialect, &olmo3(), olmo3_calls);
    random_calls_round_trip(dialect, &olmo3(), olmo3_calls, 24);
    random_bytes_are_safe(dialect);
}
