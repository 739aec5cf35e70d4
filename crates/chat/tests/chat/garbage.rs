//! Whatever arrives, parsing gives a value or a serde error, never a panic; and whatever
//! parses serializes to JSON that parses back to the same value.

use std::fmt::Debug;

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use toolbridge_chat::sharegpt::{self, CallEncoding, ShareGptMessage, Speaker};
use toolbridge_chat::{
    ChatChunk, ChatRequest, ChatResponse, ContentPart, ErrorResponse, Message, ResponseFormat,
    ToolChoice,
};

/// Keys that reach the typed fields, so random objects go deep.
const KEYS: &[&str] = &[
    "role",
    "content",
    "messages",
    "tools",
    "tool_calls",
    "function",
    "name",
    "arguments",
    "type",
    "text",
    "image_url",
    "url",
    "tool_choice",
    "response_format",
    "json_schema",
    "schema",
    "stop",
    "temperature",
    "max_tokens",
    "allowed_tools",
    "mode",
    "stream_options",
    "include_usage",
    "id",
    "tool_call_id",
    "choices",
    "delta",
    "usage",
    "error",
    "message",
    "x",
];

/// Strings that mean something to some field.
const WORDS: &[&str] = &[
    "user",
    "assistant",
    "tool",
    "system",
    "function",
    "text",
    "image_url",
    "refusal",
    "auto",
    "none",
    "required",
    "allowed_tools",
    "json_schema",
    "json_object",
    "{}",
    "{\"a\":1}",
    "[1]",
    "",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        prop::sample::select(WORDS).prop_map(Value::from),
        ".{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..7)
                .prop_map(|entries| Value::Object(object(entries))),
        ]
    })
}

fn object(entries: Vec<(&str, Value)>) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

/// An object with `extra` random entries added to `fields`.
fn with_entries(fields: Vec<(&'static str, Value)>) -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..3).prop_map(
        move |entries| {
            let mut object = object(entries);
            object.extend(
                fields
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), value.clone())),
            );
            Value::Object(object)
        },
    )
}

/// A tool call with a name and string or object arguments, plus random entries.
fn tool_call_like() -> impl Strategy<Value = Value> {
    let arguments = prop_oneof![".{0,12}".prop_map(Value::String), json_value()];
    (prop::sample::select(WORDS), arguments).prop_flat_map(|(name, arguments)| {
        with_entries(vec![(
            "function",
            serde_json::json!({"name": name, "arguments": arguments}),
        )])
    })
}

/// A message with a role and string or random content, maybe calls, plus random entries.
fn message_like() -> impl Strategy<Value = Value> {
    let content = prop_oneof![".{0,12}".prop_map(Value::String), json_value()];
    let calls = prop::option::of(prop::collection::vec(tool_call_like(), 0..3));
    (prop::sample::select(WORDS), content, calls).prop_flat_map(|(role, content, calls)| {
        let mut fields = vec![("role", Value::from(role)), ("content", content)];
        fields.extend(calls.map(|calls| ("tool_calls", Value::Array(calls))));
        with_entries(fields)
    })
}

/// An object with a `messages` array, so most of them get past the first field.
fn request_like() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(prop_oneof![3 => message_like(), 1 => json_value()], 0..4),
        prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..5),
    )
        .prop_map(|(messages, entries)| {
            let mut request = object(entries);
            request.insert("messages".into(), Value::Array(messages));
            Value::Object(request)
        })
}

/// Parsing never panics, and a parsed value survives serialize → parse unchanged.
fn check<T>(value: &Value) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    if let Ok(parsed) = serde_json::from_value::<T>(value.clone()) {
        let output =
            serde_json::to_value(&parsed).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let reparsed = serde_json::from_value::<T>(output.clone())
            .map_err(|e| TestCaseError::fail(format!("{e} for {output}")))?;
        prop_assert_eq!(reparsed, parsed);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn any_json_into_any_type(value in json_value()) {
        check::<ChatRequest>(&value)?;
        check::<Message>(&value)?;
        check::<ContentPart>(&value)?;
        check::<ToolChoice>(&value)?;
        check::<ResponseFormat>(&value)?;
        check::<ChatResponse>(&value)?;
        check::<ChatChunk>(&value)?;
        check::<ErrorResponse>(&value)?;
    }

    #[test]
    fn request_shaped_json(value in request_like()) {
        check::<ChatRequest>(&value)?;
        if let Ok(request) = serde_json::from_value::<ChatRequest>(value.clone()) {
            let _ = request.validate();
            let _ = request.effective_tool_choice();
            for message in &request.messages {
                let _ = message.content_text();
                for call in message.calls() {
                    let _ = call.function.arguments.to_object();
                    let _ = call.function.arguments.as_json_string();
                }
            }
            // Whatever keys the input had, a parsed request comes back out with exactly those.
            let output = serde_json::to_value(&request).unwrap();
            let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
            prop_assert_eq!(keys(&output), keys(&value));
        }
    }

    #[test]
    fn any_text_into_a_request(text in ".{0,64}") {
        let _ = serde_json::from_str::<ChatRequest>(&text);
    }

    #[test]
    fn any_sharegpt_conversation(turns in prop::collection::vec((0..5usize, json_value()), 0..8)) {
        let speakers = [Speaker::System, Speaker::Human, Speaker::Gpt, Speaker::FunctionCall, Speaker::Observation];
        let turns: Vec<ShareGptMessage> =
            turns.into_iter().map(|(speaker, value)| ShareGptMessage { from: speakers[speaker], value }).collect();
        if let Ok(messages) = sharegpt::to_openai(&turns) {
            for encoding in [CallEncoding::JsonText, CallEncoding::Object] {
                prop_assert!(sharegpt::from_openai(&messages, encoding).is_ok());
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!(
        r#"{{"messages": [{{"role": "user", "content": {}1{}}}]}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let error = serde_json::from_str::<ChatRequest>(&deep).unwrap_err();
    assert!(error.to_string().contains("recursion limit"), "{error}");
}

#[test]
fn hand_picked_garbage() {
    for text in [
        "",
        "null",
        "0",
        "\"\"",
        "{",
        "{}",
        "[]",
        "{\"messages\": {}}",
        "{\"messages\": [null]}",
        "{\"messages\": [[]]}",
        "{\"messages\": [{\"role\": null}]}",
        "{\"messages\": [{\"role\": 1}]}",
        "\u{feff}{}",
        "{\"messages\": []} trailing",
    ] {
        assert!(
            serde_json::from_str::<ChatRequest>(text).is_err(),
            "{text:?} should not parse"
        );
    }
}
