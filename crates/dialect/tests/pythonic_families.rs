//! LFM2 and Gemma 3 on their corpus templates: pythonic call lists, between special tokens
//! (LFM2) or bare in the content (Gemma 3).

use serde_json::json;
use toolbridge_chat::ToolChoiceMode;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn lfm2() -> ChatTemplate {
    template(
        "llama.cpp/LFM2.5-8B-A1B.jinja",
        "<|startoftext|>",
        "<|im_end|>",
    )
}

/// A call list as the grammar writes it: values as JSON, booleans as Python's.
fn python_list(calls: &[Call]) -> String {
    let calls: Vec<String> = calls.iter().map(python_call).collect();
    format!("[{}]", calls.join(", "))
}

fn gemma3() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_gemma3_pythonic.jinja",
        "<bos>",
        "<end_of_turn>",
    )
}

fn gemma3_calls(text: &str, calls: &[Call]) -> String {
    format!("{text}{}", python_list(calls))
}

fn lfm2_calls(text: &str, calls: &[Call]) -> String {
    format!(
        "{text}<|tool_call_start|>{}<|tool_call_end|>",
        python_list(calls)
    )
}

#[test]
fn lfm2_renders_calls_and_reads_them_back() {
    let registry = registry();
    let dialect = registry.get("lfm2").expect("registered");
    renders_history(
        dialect,
        &lfm2(),
        &[
            "<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>",
            "sunny, 21C",
        ],
    );
    let text = "<think>Two things.</think>Checking.<|tool_call_start|>[get_weather(city='Paris', days=2), add(a=1, b=2.5)]<|tool_call_end|>";
    let message = reads(
        dialect,
        &lfm2(),
        text,
        &[
            call("get_weather", json!({"city": "Paris", "days": 2})),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Two things."));
    assert_eq!(message.content_text(), "Checking.");
    let broken = "<|tool_call_start|>[get_weather(city=)]<|tool_call_end|>";
    let message = parsed_however_cut(&|| dialect.parser(), broken);
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

/// Newer LFM2 templates have the model write JSON between the same tokens: a list of
/// `{"name", "arguments"}` objects or one object. The tokens are the region's, not content.
#[test]
fn lfm2_reads_json_calls_between_its_tokens() {
    let registry = registry();
    let dialect = registry.get("lfm2").expect("registered");
    let both = [
        call("get_weather", json!({"city": "Paris", "days": 2})),
        call("add", json!({"a": 1, "b": 2.5})),
    ];
    let list = "<think>Two things.</think>Checking.<|tool_call_start|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}, {\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}]<|tool_call_end|>";
    let message = reads(dialect, &lfm2(), list, &both);
    assert_eq!(message.reasoning_content.as_deref(), Some("Two things."));
    assert_eq!(message.content_text(), "Checking.");
    let one = "<|tool_call_start|>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}<|tool_call_end|>";
    let message = reads(dialect, &lfm2(), one, &both[1..]);
    assert_eq!(message.content_text(), "");
    for broken in [
        "<|tool_call_start|>{\"name\": \"add\", \"arguments\": [1]}<|tool_call_end|>",
        "<|tool_call_start|>{\"nam\": \"add\"}<|tool_call_end|>",
    ] {
        let message = parsed_however_cut(&|| dialect.parser(), broken);
        assert!(message.calls().is_empty(), "{broken}");
        assert_eq!(message.content_text(), broken);
    }
}

#[test]
fn values_written_as_text_are_read_as_json_schema_reads_them() {
    let registry = registry();
    let dialect = registry.get("gemma3_pythonic").expect("registered");
    let request = union_request();
    let text = r#"[pick(level="1", rank="2", note="null", count="4")]"#;
    let message = parsed_however_cut(&|| prepare(dialect, &request, &gemma3()).parser, text);
    assert_eq!(
        calls_of(&message),
        [call(
            "pick",
            json!({"level": "1", "rank": 2, "note": null, "count": 4})
        )]
    );
}

#[test]
fn lfm2_grammar_honours_tool_choice_and_round_trips() {
    let registry = registry();
    let dialect = registry.get("lfm2").expect("registered");
    honours_tool_choice(dialect, &lfm2(), lfm2_calls);
    random_calls_round_trip(dialect, &lfm2(), lfm2_calls, 24);
    random_bytes_are_safe(dialect);
}

#[test]
fn gemma3_renders_calls_and_reads_them_back() {
    let registry = registry();
    let dialect = registry.get("gemma3_pythonic").expect("registered");
    renders_history(
        dialect,
        &gemma3(),
        &[
            "[get_weather(city=\"Paris\")]",
            "<tool_response>\nsunny, 21C</tool_response>",
        ],
    );
    // Past calls as the template writes them, without commas between arguments.
    let text = "[get_weather(city=\"Paris\"days=2), add(a=1b=2.5)]";
    reads(
        dialect,
        &gemma3(),
        text,
        &[
            call("get_weather", json!({"city": "Paris", "days": 2})),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    // A bare list has no marker: `auto` starts the grammar at `[name(` of a known tool, so
    // an unknown name is text there; `required` admits only the tools' calls.
    let required = prepare(
        dialect,
        &request(Some(ToolChoiceMode::Required.into())),
        &gemma3(),
    );
    let grammar = validator(required.constraint.as_ref().expect("constraint"));
    let add = [call("add", json!({"a": 1, "b": 2.5}))];
    assert!(grammar.accepts(&gemma3_calls("", &add)));
    assert!(!grammar.accepts("[get_wether(city=\"Paris\")]"));
    assert!(!grammar.accepts("It is sunny."));
    random_calls_round_trip(dialect, &gemma3(), gemma3_calls, 24);
    random_bytes_are_safe(dialect);
}
