//! The Hermes / Qwen `<tool_call>` parser: the shapes Qwen 2.5's template and seed 000's
//! `hermes_2_pro` style write, the robustness rules of its module docs, and the split
//! invariance every parser must have (same message whole, cut at every byte, cut anywhere).

use proptest::prelude::*;
use serde_json::{json, Value};
use toolbridge_chat::Message;
use toolbridge_dialect::{
    assemble, parse_all, parse_cut,
    toolkit::tagged_calls::{parser, parser_in_reasoning},
    Event, SequentialIds, StreamParser,
};

use crate::common::split::{
    cut_answers_read_as_far_as_written, parsed_however_cut_and_at, parsed_in_pieces,
};

fn fold(events: Vec<Event>) -> Message {
    assemble(events, SequentialIds::default()).unwrap_or_else(|error| panic!("{error}"))
}

/// The message read from `text`, the same however cut (and at `cuts`).
fn however_cut(text: &str, cuts: &[prop::sample::Index]) -> Message {
    let cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(text.len() + 1)).collect();
    parsed_however_cut_and_at(&|| Box::new(parser()), text, &cuts)
}

fn message_json(text: &str) -> Value {
    let message = fold(parse_all(&mut parser(), text));
    serde_json::to_value(message).unwrap_or_else(|error| panic!("{error}"))
}

/// [`message_json`] for an output the token limit cut.
fn cut_message_json(text: &str) -> Value {
    let message = fold(parse_cut(&mut parser(), text));
    serde_json::to_value(message).unwrap_or_else(|error| panic!("{error}"))
}

fn call(index: usize, name: &str, arguments: &str) -> Value {
    json!({
        "id": format!("call_{index:024}"),
        "type": "function",
        "function": {"name": name, "arguments": arguments}
    })
}

fn calls_only(calls: Vec<Value>) -> Value {
    json!({"role": "assistant", "tool_calls": calls})
}

fn content_only(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

#[test]
fn the_qwen_template_shape_is_a_call_without_content() {
    let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    assert_eq!(
        message_json(text),
        calls_only(vec![call(0, "get_weather", r#"{"city": "Paris"}"#)])
    );
}

#[test]
fn text_before_and_several_calls_in_a_row() {
    let text = "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n</tool_call>";
    assert_eq!(
        message_json(text),
        json!({
            "role": "assistant",
            "content": "Let me check both.",
            "tool_calls": [
                call(0, "get_weather", r#"{"city": "Paris"}"#),
                call(1, "get_time", r#"{"zone": "CET"}"#),
            ]
        })
    );
}

#[test]
fn the_seed_shapes_without_whitespace_and_with_arguments_first() {
    let tight = r#"<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call>"#;
    assert_eq!(
        message_json(tight),
        calls_only(vec![call(0, "say", r#"{"text": "hi"}"#)])
    );
    let arguments_first = "<tool_call>\n{\"arguments\": {\"a\": 2535, \"b\": 32222000403}, \"name\": \"superSecretTool\"}\n</tool_call>";
    assert_eq!(
        message_json(arguments_first),
        calls_only(vec![call(
            0,
            "superSecretTool",
            r#"{"a": 2535, "b": 32222000403}"#
        )])
    );
}

#[test]
fn the_openai_shape_seed_000_shows_in_history_is_read_too() {
    let text = r#"<tool_call>{"id": "call_531873", "type": "function", "function": {"name": "superSecretTool", "arguments": {"a": 2535, "b": 32222000403}}}</tool_call>"#;
    assert_eq!(
        message_json(text),
        calls_only(vec![call(
            0,
            "superSecretTool",
            r#"{"a": 2535, "b": 32222000403}"#
        )])
    );
}

#[test]
fn a_field_is_read_where_it_is_written_first() {
    let text = r#"<tool_call>{"function": {"name": "inner", "arguments": {"a": 1}}, "name": "outer", "arguments": {"b": 2}}</tool_call>"#;
    assert_eq!(
        message_json(text),
        calls_only(vec![call(0, "inner", r#"{"a": 1}"#)])
    );
}

#[test]
fn qwen3_thinking_at_the_start_is_reasoning() {
    let text = "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
    assert_eq!(
        message_json(text),
        json!({
            "role": "assistant",
            "reasoning_content": "\nThe user wants the weather.\n",
            "tool_calls": [call(0, "get_weather", "{}")]
        })
    );
    assert_eq!(
        message_json("<think>hm</think>\n\nHello."),
        json!({"role": "assistant", "content": "Hello.", "reasoning_content": "hm"})
    );
}

#[test]
fn output_after_a_prompt_that_opened_the_thinking_starts_as_reasoning() {
    let text = "Need the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
    let message = fold(parse_all(&mut parser_in_reasoning(), text));
    assert_eq!(
        serde_json::to_value(message).unwrap_or_else(|error| panic!("{error}")),
        json!({
            "role": "assistant",
            "reasoning_content": "Need the weather.\n",
            "tool_calls": [call(0, "get_weather", "{}")]
        })
    );
}

#[test]
fn think_tags_later_on_are_content() {
    let text = "So <think>maybe</think> not.";
    assert_eq!(message_json(text), content_only(text));
}

#[test]
fn text_between_and_after_calls_is_content() {
    let text = "A\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nB\n<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>\n";
    assert_eq!(
        message_json(text),
        json!({
            "role": "assistant",
            "content": "A\nB",
            "tool_calls": [call(0, "f", "{}"), call(1, "g", "{}")]
        })
    );
}

#[test]
fn a_call_that_never_gets_a_name_is_content() {
    let cases = [
        "Hi <tool_call>{not json}</tool_call> bye",
        "<tool_call>\n{\"arguments\": {\"a\": 1}}\n</tool_call>",
        "<tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": [\"f\"]}</tool_call>",
    ];
    for text in cases {
        assert_eq!(message_json(text), content_only(text), "{text:?}");
    }
}

#[test]
fn a_failed_call_does_not_hide_the_next_one() {
    let text =
        "<tool_call>{oops</tool_call><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    assert_eq!(
        message_json(text),
        json!({
            "role": "assistant",
            "content": "<tool_call>{oops</tool_call>",
            "tool_calls": [call(0, "f", "{}")]
        })
    );
}

#[test]
fn an_unclosed_call_stands_when_its_object_was_complete() {
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}";
    assert_eq!(
        message_json(text),
        calls_only(vec![call(0, "f", r#"{"a": 1}"#)])
    );
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n";
    assert_eq!(
        message_json(text),
        calls_only(vec![call(0, "f", r#"{"a": 1}"#)])
    );
}

/// An output that stops inside a call's syntax, without the engine saying the token limit
/// cut it, is text as written: it may be prose, or a near miss.
#[test]
fn an_unclosed_call_is_content_when_the_output_was_not_cut() {
    for text in [
        "<tool_call>\n{\"argu",
        "Sure. <tool_call>",
        "<tool_call>{\"name\": \"f",
        r#"Sure. <tool_call>{"name": "f", "arguments": {"a": "#,
    ] {
        assert_eq!(message_json(text), content_only(text), "{text:?}");
    }
}

/// Cut by the token limit, a call cut before its name is whole is dropped, its markup
/// never shown as content; a marker with nothing after it at the very end stays text (it
/// may be prose).
#[test]
fn a_cut_call_without_a_name_is_dropped() {
    for (text, content) in [
        ("<tool_call>\n{\"argu", ""),
        ("Sure. <tool_call>", "Sure. <tool_call>"),
        ("<tool_call>{\"name\": \"f", ""),
    ] {
        assert_eq!(cut_message_json(text), content_only(content), "{text:?}");
    }
}

/// Cut by the token limit inside a call's object, the output is the call so far: its name
/// and its arguments as written.
#[test]
fn an_output_cut_inside_a_call_object_is_the_call_so_far() {
    let text = r#"Sure. <tool_call>{"name": "f", "arguments": {"a": "#;
    let mut expected = calls_only(vec![call(0, "f", r#"{"a": "#)]);
    expected["content"] = "Sure.".into();
    assert_eq!(cut_message_json(text), expected);
}

/// A call is held until its object is whole: JSON that breaks after the name is no call,
/// and the text comes out as written rather than as a call with garbled arguments.
#[test]
fn json_breaking_after_the_name_is_content_as_written() {
    for text in [
        r#"<tool_call>{"name": "f", "arguments": {"a": 1 x}}</tool_call> done"#,
        r#"<tool_call>{"name":"A,"arguments":{}}</tool_call>"#,
    ] {
        assert_eq!(message_json(text), content_only(text), "{text}");
    }
}

#[test]
fn arguments_given_as_a_string_of_json_are_decoded() {
    let text = r#"<tool_call>{"name": "f", "arguments": "{\"a\": [1, \"x\"]}"}</tool_call>"#;
    assert_eq!(
        message_json(text),
        calls_only(vec![call(0, "f", r#"{"a": [1, "x"]}"#)])
    );
    let not_json = r#"<tool_call>{"name": "f", "arguments": "plain words"}</tool_call>"#;
    assert_eq!(
        message_json(not_json),
        calls_only(vec![call(0, "f", r#""plain words""#)])
    );
}

#[test]
fn missing_or_null_arguments_are_an_empty_object() {
    for text in [
        r#"<tool_call>{"name": "f"}</tool_call>"#,
        r#"<tool_call>{"name": "f", "arguments": null}</tool_call>"#,
    ] {
        assert_eq!(message_json(text), calls_only(vec![call(0, "f", "{}")]));
    }
}

#[test]
fn markers_inside_json_strings_are_text() {
    let text = r#"<tool_call>{"name": "run", "arguments": {"code": "print('</tool_call><think>')"}}</tool_call>"#;
    assert_eq!(
        message_json(text),
        calls_only(vec![call(
            0,
            "run",
            r#"{"code": "print('</tool_call><think>')"}"#
        )])
    );
}

#[test]
fn a_stray_closing_tag_is_content() {
    let text = "Done.</tool_call>";
    assert_eq!(message_json(text), content_only(text));
}

/// A call comes out whole once its region is: the object, then its closing tag (or the end
/// of the output), its arguments as the model wrote them.
#[test]
fn a_call_comes_out_whole_when_its_object_completes() {
    let mut parser = parser();
    assert_eq!(
        parser.push("Checking.\n<tool_"),
        [Event::Content("Checking.".into())]
    );
    assert_eq!(parser.push("call>\n{\"name\": \"get_wea"), []);
    assert_eq!(parser.push("ther\", \"arguments\": {\"ci"), []);
    assert_eq!(parser.push("ty\": \"Paris\"}}"), []);
    assert_eq!(
        parser.push("\n</tool_call>"),
        [
            Event::ToolCallStart {
                index: 0,
                id: None,
                name: "get_weather".into()
            },
            Event::ToolCallArguments {
                index: 0,
                fragment: "{\"city\": \"Paris\"}".into()
            },
            Event::ToolCallEnd { index: 0 },
        ]
    );
    assert_eq!(parser.finish(), []);
}

/// An agent writing a file writes it as a call's argument: a call of 300 KB (far past the
/// 64 KB a region was once bounded by) is one call, whole and streamed byte by byte.
#[test]
fn a_call_writing_a_300_kb_file_is_one_call() {
    let line = "fn main() { println!(\"<tool_call> is text here\"); }\n";
    let file = line.repeat(300 * 1024 / line.len());
    let arguments = json!({"path": "src/main.rs", "content": file}).to_string();
    let text = format!(
        "Writing it.\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {arguments}}}\n</tool_call>"
    );
    assert!(text.len() > 300 * 1024);
    let message = parsed_in_pieces(&|| Box::new(parser()), &text, &[1, 16]);
    let expected = json!({
        "role": "assistant",
        "content": "Writing it.",
        "tool_calls": [call(0, "write_file", &arguments)]
    });
    let message = serde_json::to_value(message).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        message == expected,
        "the 300 KB call was not read as one call"
    );
}

/// Writes `value` as Python's `json.dumps` does with its default separators, escaping
/// non-ASCII characters when `ensure_ascii` (the template's `tojson` does not).
fn python_dumps(value: &Value, ensure_ascii: bool) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|item| python_dumps(item, ensure_ascii))
                .collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(key, item)| {
                    let key = python_dumps(&Value::from(key.as_str()), ensure_ascii);
                    format!("{key}: {}", python_dumps(item, ensure_ascii))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::String(text) if ensure_ascii => escape_non_ascii(&value.to_string(), text),
        scalar => scalar.to_string(),
    }
}

fn escape_non_ascii(serialized: &str, text: &str) -> String {
    if text.is_ascii() {
        return serialized.to_owned();
    }
    let mut escaped = String::new();
    for char in serialized.chars() {
        if char.is_ascii() {
            escaped.push(char);
        } else {
            for unit in char.encode_utf16(&mut [0; 2]) {
                escaped.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    escaped
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        "[a-z \"\\\\/\n<>é😀]{0,8}".prop_map(Value::from),
        Just(Value::from("</tool_call>")),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_é\"]{1,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn arguments_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-z_]{1,8}", json_value(), 0..5)
        .prop_map(|map| Value::Object(map.into_iter().collect()))
}

/// Content around calls: it starts and ends with a letter, so the layout rules leave it be.
fn content() -> impl Strategy<Value = Option<String>> {
    prop::option::of("[A-Za-z][A-Za-z .,!?é<>/]{0,12}[A-Za-z.!]")
}

/// One call as Qwen 2.5's template writes it, and what the parser must find.
#[derive(Debug, Clone)]
struct Rendered {
    text: String,
    name: String,
    arguments: Value,
    content: Option<String>,
}

fn rendered() -> impl Strategy<Value = Rendered> {
    (
        "[A-Za-z_][A-Za-z0-9_.-]{0,15}",
        arguments_object(),
        any::<bool>(),
        content(),
        content(),
    )
        .prop_map(|(name, arguments, ensure_ascii, before, after)| {
            let call = format!(
                "<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {}}}\n</tool_call>",
                python_dumps(&arguments, ensure_ascii)
            );
            let text = match (&before, &after) {
                (Some(before), Some(after)) => format!("{before}\n{call}\n{after}"),
                (Some(before), None) => format!("{before}\n{call}"),
                (None, Some(after)) => format!("{call}\n{after}"),
                (None, None) => call,
            };
            let content = match (before, after) {
                (None, None) => None,
                (before, after) => Some(format!(
                    "{}{}",
                    before.unwrap_or_default(),
                    after.map(|after| format!("\n{after}")).unwrap_or_default()
                )),
            };
            Rendered {
                text,
                name,
                arguments,
                content,
            }
        })
}

fn reread(text: &str) -> Result<Value, TestCaseError> {
    serde_json::from_str(text).map_err(|error| TestCaseError::fail(format!("{error}: {text:?}")))
}

fn check_message(message: &Message, expected: &Rendered) -> Result<(), TestCaseError> {
    prop_assert_eq!(message.calls().len(), 1);
    let call = &message.calls()[0];
    prop_assert_eq!(&call.function.name, &expected.name);
    // Both sides go through serde_json once, as float digits may not round-trip.
    let expected_arguments = reread(&expected.arguments.to_string())?;
    prop_assert_eq!(
        reread(&call.function.arguments.as_json_string())?,
        expected_arguments
    );
    let content =
        serde_json::to_value(message).map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert_eq!(
        content.get("content").and_then(Value::as_str),
        expected.content.as_deref()
    );
    Ok(())
}

proptest! {
    #[test]
    fn the_message_is_the_same_however_the_text_is_cut(
        rendered in rendered(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let whole = however_cut(&rendered.text, &cuts);
        check_message(&whole, &rendered)?;
    }
}

/// Several calls in a row, each written name first (Qwen), arguments first (seed 000's
/// Hermes 2 Pro prompt) or in OpenAI's shape (seed 000's history), with or without
/// whitespace around the JSON.
fn several_calls() -> impl Strategy<Value = (String, Vec<(String, Value)>)> {
    let one = (
        "[A-Za-z_][A-Za-z0-9_]{0,10}",
        arguments_object(),
        0..3u8,
        prop::sample::select(vec!["", "\n", " "]),
    );
    prop::collection::vec(one, 1..4).prop_map(|calls| {
        let mut text = String::new();
        let mut expected = Vec::new();
        for (name, arguments, shape, space) in calls {
            let arguments_text = python_dumps(&arguments, false);
            let name_first = format!("{{\"name\": \"{name}\", \"arguments\": {arguments_text}}}");
            let object = match shape {
                0 => name_first,
                1 => format!("{{\"arguments\": {arguments_text}, \"name\": \"{name}\"}}"),
                _ => format!(
                    "{{\"id\": \"call_1\", \"type\": \"function\", \"function\": {name_first}}}"
                ),
            };
            text.push_str(&format!("<tool_call>{space}{object}{space}</tool_call>\n"));
            expected.push((name, arguments));
        }
        (text, expected)
    })
}

/// Text made of markers, parts of markers, JSON bits and near misses.
fn near_misses() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec![
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "<tool_",
        "</tool",
        "{\"name\": \"f\"",
        "{\"arguments\": {",
        "\"arguments\": \"{}\"",
        "{\"function\": {\"name\": \"g\"",
        "\"function\": {",
        ", ",
        "}",
        "{",
        "\"",
        "\\",
        "\n",
        "é",
        "x",
    ]);
    prop::collection::vec(part, 0..16).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn several_calls_come_back_whole_and_cut(
        (text, expected) in several_calls(),
        cut in any::<prop::sample::Index>(),
    ) {
        let whole = however_cut(&text, &[cut]);
        prop_assert_eq!(whole.content_text(), "");
        prop_assert_eq!(whole.calls().len(), expected.len());
        cut_answers_read_as_far_as_written(&|| Box::new(parser()), &text, &whole);
        for (call, (name, arguments)) in whole.calls().iter().zip(&expected) {
            prop_assert_eq!(&call.function.name, name);
            prop_assert_eq!(
                reread(&call.function.arguments.as_json_string())?,
                reread(&arguments.to_string())?
            );
        }
    }

    #[test]
    fn near_misses_never_panic_and_ignore_the_cuts(
        text in near_misses(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        however_cut(&text, &cuts);
    }
}
