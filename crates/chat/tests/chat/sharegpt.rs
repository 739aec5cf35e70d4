//! ShareGPT (`from`/`value`) conversations to OpenAI messages and back.

use serde_json::{json, Value};
use toolbridge_chat::sharegpt::{self, CallEncoding, ShareGptMessage, Speaker};
use toolbridge_chat::ChatErrorKind;
use toolbridge_chat::{Arguments, Content, ContentPart, Message, Role, ToolCall};

fn turns(value: Value) -> Vec<ShareGptMessage> {
    serde_json::from_value(value).expect("valid ShareGPT turns")
}

fn openai(value: Value) -> Vec<Message> {
    serde_json::from_value(value).expect("valid OpenAI messages")
}

/// A LLaMA-Factory tool-calling sample (glaive style): calls as JSON text.
fn llama_factory_sample() -> Value {
    json!([
        {"from": "system", "value": "You are a helpful assistant."},
        {"from": "human", "value": "Generate a password of length 12."},
        {"from": "function_call", "value": "{\"name\":\"generate_password\",\"arguments\":{\"length\":12}}"},
        {"from": "observation", "value": "{\"password\": \"aB3$dE6&gH9*\"}"},
        {"from": "gpt", "value": "Here is your password: aB3$dE6&gH9*"}
    ])
}

#[test]
fn llama_factory_conversation_to_openai() {
    let messages = sharegpt::to_openai(&turns(llama_factory_sample())).unwrap();
    assert_eq!(
        serde_json::to_value(&messages).unwrap(),
        json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Generate a password of length 12."},
            {"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function",
                "function": {"name": "generate_password", "arguments": {"length": 12}}}]},
            {"role": "tool", "content": "{\"password\": \"aB3$dE6&gH9*\"}", "name": "generate_password",
                "tool_call_id": "call_0"},
            {"role": "assistant", "content": "Here is your password: aB3$dE6&gH9*"}
        ])
    );
}

#[test]
fn llama_factory_conversation_round_trips() {
    let original = turns(llama_factory_sample());
    let back = sharegpt::from_openai(
        &sharegpt::to_openai(&original).unwrap(),
        CallEncoding::JsonText,
    )
    .unwrap();
    assert_eq!(back, original);
}

/// Seed 004's template reads `func_call.name` and concatenates `func_call.arguments`, and
/// renders `human` values that are lists of text, image and audio items.
fn seed_004_sample() -> Value {
    json!([
        {"from": "human", "value": [
            {"type": "image"},
            {"type": "text", "text": "What is in the picture? Also, what's the weather in Paris?"}
        ]},
        {"from": "function_call", "value": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"from": "observation", "value": "{\"temperature\": 21}"},
        {"from": "gpt", "value": "A cat. It is 21 degrees in Paris."}
    ])
}

#[test]
fn seed_004_conversation_to_openai() {
    let messages = sharegpt::to_openai(&turns(seed_004_sample())).unwrap();
    let Some(Content::Parts(parts)) = &messages[0].content else {
        panic!("parts expected")
    };
    assert!(matches!(&parts[0], ContentPart::Other(part) if part["type"] == "image"));
    assert_eq!(
        messages[0].content_text(),
        "What is in the picture? Also, what's the weather in Paris?"
    );
    let call = &messages[1].calls()[0];
    assert_eq!(call.id.as_deref(), Some("call_0"));
    assert_eq!(
        call.function.arguments,
        Arguments::Text("{\"city\": \"Paris\"}".into())
    );
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("call_0"));
}

#[test]
fn seed_004_conversation_round_trips_with_object_calls() {
    let original = turns(seed_004_sample());
    let back = sharegpt::from_openai(
        &sharegpt::to_openai(&original).unwrap(),
        CallEncoding::Object,
    )
    .unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), seed_004_sample());
}

#[test]
fn openai_object_arguments_become_text_for_the_react_template() {
    let messages = openai(json!([
        {"role": "user", "content": "Add 2 and 3"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_531873", "type": "function",
            "function": {"name": "superSecretTool", "arguments": {"a": 2, "b": 3}}}]},
        {"role": "tool", "tool_call_id": "call_531873", "content": "5"}
    ]));
    let object = sharegpt::from_openai(&messages, CallEncoding::Object).unwrap();
    assert_eq!(
        serde_json::to_value(&object).unwrap(),
        json!([
            {"from": "human", "value": "Add 2 and 3"},
            {"from": "function_call", "value": {"name": "superSecretTool", "arguments": "{\"a\":2,\"b\":3}"}},
            {"from": "observation", "value": "5"}
        ])
    );
    let text = sharegpt::from_openai(&messages, CallEncoding::JsonText).unwrap();
    assert_eq!(
        text[1].value,
        json!("{\"name\":\"superSecretTool\",\"arguments\":{\"a\":2,\"b\":3}}")
    );
}

#[test]
fn parallel_calls_are_numbered_and_answered_in_order() {
    let messages = sharegpt::to_openai(&turns(json!([
        {"from": "human", "value": "Weather in Oslo and Rome, then the time in Oslo"},
        {"from": "function_call", "value": "[{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"weather\", \"arguments\": \"{\\\"city\\\": \\\"Rome\\\"}\"}]"},
        {"from": "observation", "value": "-3"},
        {"from": "observation", "value": "18"},
        {"from": "function_call", "value": {"name": "time", "arguments": {"city": "Oslo"}}},
        {"from": "observation", "value": "12:00"}
    ])))
    .unwrap();
    let ids: Vec<_> = messages[1]
        .calls()
        .iter()
        .map(|call| call.id.as_deref())
        .collect();
    assert_eq!(ids, [Some("call_0"), Some("call_1")]);
    assert_eq!(
        messages[1].calls()[1].function.arguments,
        Arguments::Text("{\"city\": \"Rome\"}".into())
    );
    let answers: Vec<_> = messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| {
            (
                message.tool_call_id.as_deref(),
                message.name.as_deref(),
                message.content_text(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            (Some("call_0"), Some("weather"), "-3".into()),
            (Some("call_1"), Some("weather"), "18".into()),
            (Some("call_2"), Some("time"), "12:00".into())
        ]
    );
}

#[test]
fn talking_and_calling_is_one_assistant_turn() {
    let original = turns(json!([
        {"from": "human", "value": "Search for cats"},
        {"from": "gpt", "value": "Thought: I should search."},
        {"from": "function_call", "value": "{\"name\":\"search\",\"arguments\":{\"q\":\"cats\"}}"},
        {"from": "observation", "value": "many cats"},
        {"from": "gpt", "value": "There are many cats."}
    ]));
    let messages = sharegpt::to_openai(&original).unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1].content_text(), "Thought: I should search.");
    assert_eq!(messages[1].calls()[0].name(), "search");
    assert_eq!(
        sharegpt::from_openai(&messages, CallEncoding::JsonText).unwrap(),
        original
    );
}

#[test]
fn openai_roles_map_onto_speakers() {
    let messages = openai(json!([
        {"role": "developer", "content": "Rules."},
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "done"},
        {"role": "assistant", "content": "Bye", "reasoning_content": "not written"}
    ]));
    let turns = sharegpt::from_openai(&messages, CallEncoding::JsonText).unwrap();
    let speakers: Vec<_> = turns.iter().map(|turn| turn.from).collect();
    assert_eq!(
        speakers,
        [
            Speaker::System,
            Speaker::Human,
            Speaker::FunctionCall,
            Speaker::Observation,
            Speaker::Gpt
        ]
    );
    assert_eq!(turns[1].value, json!([{"type": "text", "text": "Hi"}]));
    assert_eq!(
        turns[2].value,
        json!("{\"name\":\"f\",\"arguments\":\"{}\"}")
    );
    assert_eq!(turns[4], ShareGptMessage::text(Speaker::Gpt, "Bye"));
}

#[test]
fn an_assistant_with_no_content_and_no_calls_is_an_empty_gpt_turn() {
    let turns =
        sharegpt::from_openai(&[Message::new(Role::Assistant)], CallEncoding::Object).unwrap();
    assert_eq!(turns, [ShareGptMessage::text(Speaker::Gpt, "")]);
    let calls = Message::assistant_calls(vec![ToolCall::new("x", "f", Arguments::default())]);
    let turns = sharegpt::from_openai(&[calls], CallEncoding::Object).unwrap();
    assert_eq!(turns[0].value, json!({"name": "f", "arguments": "{}"}));
}

#[test]
fn unknown_speakers_are_parse_errors() {
    let error =
        serde_json::from_value::<Vec<ShareGptMessage>>(json!([{"from": "bot", "value": "hi"}]))
            .unwrap_err()
            .to_string();
    assert!(error.contains("unknown variant `bot`"), "{error}");
    assert!(
        error.contains("`human`"),
        "the message lists the known speakers: {error}"
    );
}

fn conversion_error(value: Value) -> String {
    match sharegpt::to_openai(&turns(value)) {
        Ok(messages) => panic!("expected an error, got {messages:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn malformed_turns_are_clear_errors() {
    let cases = [
        (
            json!([{"from": "function_call", "value": "{\"name\": \"f\", "}]),
            "message 0 (function_call): value is not valid JSON",
        ),
        (
            json!([{"from": "function_call", "value": "42"}]),
            "expected a call {\"name\", \"arguments\"} or a list of calls, found a number",
        ),
        (
            json!([{"from": "function_call", "value": "[]"}]),
            "the list of calls is empty",
        ),
        (
            json!([{"from": "function_call", "value": "[1]"}]),
            "call 0 must be an object",
        ),
        (
            json!([{"from": "function_call", "value": {"arguments": {}}}]),
            "a call has no \"name\"",
        ),
        (
            json!([{"from": "function_call", "value": {"name": 7}}]),
            "a call's \"name\" must be a string, found a number",
        ),
        (
            json!([{"from": "function_call", "value": {"name": "f", "arguments": [1]}}]),
            "the arguments of `f` must be an object or a string of JSON, found an array",
        ),
        (
            json!([{"from": "human", "value": "hi"}, {"from": "observation", "value": "x"}]),
            "message 1 (observation): no call left to answer",
        ),
        (
            json!([{"from": "function_call", "value": {"name": "f"}}, {"from": "observation", "value": "a"}, {"from": "observation", "value": "b"}]),
            "message 2 (observation): no call left to answer",
        ),
        (
            json!([{"from": "gpt", "value": ["a"]}]),
            "message 0 (gpt): value must be a string, found an array",
        ),
        (
            json!([{"from": "human", "value": null}]),
            "message 0 (human): value must be a string or a list of content parts, found null",
        ),
        (
            json!([{"from": "human", "value": ["text"]}]),
            "message 0 (human): value is not a list of content parts",
        ),
    ];
    for (value, expected) in cases {
        let error = conversion_error(value.clone());
        assert!(
            error.contains(expected),
            "{value}: {error:?} does not mention {expected:?}"
        );
    }
}

#[test]
fn roles_without_a_speaker_are_errors() {
    let messages = [
        Message::user("hi"),
        Message::with_text(Role::from("ipython"), "out"),
    ];
    let error = sharegpt::from_openai(&messages, CallEncoding::JsonText).unwrap_err();
    assert!(matches!(
        error.kind(),
        ChatErrorKind::ShareGptRole { index: 1 }
    ));
    assert_eq!(
        error.to_string(),
        "message 1: role `ipython` has no ShareGPT equivalent"
    );
}
