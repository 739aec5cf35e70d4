//! MiniCPM3 (a fenced block of Python calls between `<|tool_call_start|>` and
//! `<|tool_call_end|>`, after `<|thought_start|>…<|thought_end|>`) on its corpus template.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn minicpm3_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_minicpm3.jinja",
        "<s>",
        "<|im_end|>",
    )
}

/// Calls as the grammar has the model write them: JSON values, Python's booleans.
fn minicpm3(text: &str, calls: &[Call]) -> String {
    let lines: Vec<String> = calls.iter().map(python_call).collect();
    format!(
        "{text}<|tool_call_start|>\n```python\n{}\n```\n<|tool_call_end|>",
        lines.join("\n")
    )
}

#[test]
fn minicpm3_renders_parses_and_honours_tool_choice() {
    let registry = registry();
    let dialect = registry.get("minicpm3").expect("registered");
    let template = minicpm3_template();
    renders_history(
        dialect,
        &template,
        &[
            "<|tool_call_start|>\n```python\nget_weather(city=\"Paris\")\n```\n<|tool_call_end|>",
            "sunny, 21C",
        ],
    );
    let both = [
        call("add", json!({"a": 1, "b": 2.5})),
        call("get_weather", json!({"city": "Rome ```", "days": 2})),
    ];
    let text = "<|thought_start|>\nBoth.\n<|thought_end|>\n<|tool_call_start|>\n```python\nadd(a=1, b=2.5)\nget_weather(city='Rome ```', days=2)\n```\n<|tool_call_end|>";
    let message = reads(dialect, &template, text, &both);
    assert_eq!(message.reasoning_content.as_deref(), Some("\nBoth.\n"));
    honours_tool_choice(dialect, &template, minicpm3);
    random_calls_round_trip(dialect, &template, minicpm3, 16);
    random_bytes_are_safe(dialect);
}
