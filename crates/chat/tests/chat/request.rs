//! Requests: realistic OpenAI bodies parse, keep everything, and serialize back unchanged.

use crate::common::round_trip;
use serde_json::json;
use toolbridge_chat::{
    Arguments, ChatRequest, Content, ContentPart, Message, ResponseFormat, Role, Stop, ToolChoice,
};

#[test]
fn minimal_request() {
    let request: ChatRequest =
        round_trip(r#"{"model":"gpt-4o","messages":[{"role":"user","content":"Hello!"}]}"#);
    assert_eq!(request.model.as_deref(), Some("gpt-4o"));
    assert_eq!(request.messages, vec![Message::user("Hello!")]);
    assert!(!request.is_stream());
    assert_eq!(
        request.effective_tool_choice(),
        ToolChoice::Mode(toolbridge_chat::ToolChoiceMode::None)
    );
}

#[test]
fn tool_conversation_with_string_arguments() {
    let request: ChatRequest = round_trip(
        r#"{
        "model": "gpt-4.1",
        "messages": [
            {"role": "developer", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris and Bogotá?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_12345xyz", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}},
                {"id": "call_67890abc", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"location\":\"Bogotá, Colombia\"}"}}
            ], "refusal": null},
            {"role": "tool", "tool_call_id": "call_12345xyz", "content": "18°C, cloudy"},
            {"role": "tool", "tool_call_id": "call_67890abc", "content": "22°C, sunny"}
        ],
        "tools": [{"type": "function", "function": {
            "name": "get_weather",
            "description": "Get current temperature for a given location.",
            "parameters": {"type": "object",
                "properties": {"location": {"type": "string", "description": "City and country e.g. Bogotá, Colombia"}},
                "required": ["location"], "additionalProperties": false},
            "strict": true}}],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "temperature": 0,
        "top_p": 1,
        "max_completion_tokens": 512,
        "stream": true,
        "stream_options": {"include_usage": true}
    }"#,
    );
    let assistant = &request.messages[2];
    assert_eq!(assistant.role, Role::Assistant);
    assert_eq!(assistant.content, None);
    assert_eq!(assistant.calls().len(), 2);
    let arguments = &assistant.calls()[1].function.arguments;
    assert_eq!(
        arguments,
        &Arguments::Text("{\"location\":\"Bogotá, Colombia\"}".into())
    );
    assert_eq!(
        arguments.to_value().unwrap(),
        json!({"location": "Bogotá, Colombia"})
    );
    assert_eq!(
        request.messages[3].tool_call_id.as_deref(),
        Some("call_12345xyz")
    );
    assert_eq!(request.temperature, Some(0.0));
    assert_eq!(request.max_output_tokens(), Some(512));
    assert!(request.wants_stream_usage());
    assert!(request.allows_parallel_calls());
    assert_eq!(
        request
            .tool("get_weather")
            .and_then(|tool| tool.function.strict),
        Some(true)
    );
    assert!(request.validate().is_ok());
}

#[test]
fn object_arguments_as_templates_use_them() {
    let request: ChatRequest = round_trip(
        r#"{"messages": [
            {"role": "user", "content": "Add 2 and 3"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"arguments": {"a": 2, "b": 3.5, "nested": {"z": 1, "a": [true, null]}}, "name": "add"}}]},
            {"role": "tool", "name": "add", "tool_call_id": "call_1", "content": "5.5"}
        ]}"#,
    );
    let call = &request.messages[1].calls()[0];
    assert_eq!(call.name(), "add");
    let Arguments::Object(object) = &call.function.arguments else {
        panic!("object arguments must stay an object");
    };
    assert_eq!(object.keys().collect::<Vec<_>>(), ["a", "b", "nested"]);
    assert_eq!(
        call.function.arguments.as_json_string(),
        r#"{"a":2,"b":3.5,"nested":{"z":1,"a":[true,null]}}"#
    );
}

#[test]
fn nulls_are_accepted_and_written_back() {
    let request: ChatRequest = round_trip(
        r#"{"model": null, "messages": [
            {"role": "system", "content": "Be brief.", "name": null, "tool_calls": null},
            {"role": "user", "content": "Hi", "name": null, "tool_calls": null, "tool_call_id": null},
            {"role": "assistant", "content": null, "name": null, "tool_calls": null}
        ], "tools": null, "tool_choice": null, "temperature": null, "stop": null, "seed": null,
        "response_format": null, "stream_options": null, "user": null}"#,
    );
    assert_eq!(request.model, None);
    assert_eq!(request.tools, None);
    assert_eq!(request.messages[1].name, None);
    assert_eq!(request.messages[2].content_text(), "");
    assert!(request.extra.is_empty(), "nulls are not unknown fields");
}

#[test]
fn a_value_set_after_parsing_replaces_the_null() {
    let mut message: Message =
        serde_json::from_str(r#"{"role": "user", "name": null, "content": "Hi"}"#).unwrap();
    message.name = Some("ana".into());
    assert_eq!(
        serde_json::to_string(&message).unwrap(),
        r#"{"role":"user","name":"ana","content":"Hi"}"#
    );
    message.content = None;
    assert_eq!(
        serde_json::to_string(&message).unwrap(),
        r#"{"role":"user","name":"ana"}"#
    );
}

#[test]
fn unknown_fields_are_kept_everywhere() {
    let request: ChatRequest = round_trip(
        r#"{"model": "qwen3", "reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": false},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}], "x-trace": 7},
            {"role": "assistant", "content": "ok", "reasoning": "thought", "tool_calls": [
                {"id": "c", "type": "function", "index": 0, "function": {"name": "f", "arguments": "{}", "index": 0}}]},
            {"role": "ipython", "content": "{\"stdout\": \"\"}"}
        ],
        "tools": [{"type": "function", "x": 1, "function": {"name": "f", "parameters": {}, "x-extra": [1]}}],
        "stream_options": {"include_usage": false, "continuous_usage_stats": true}}"#,
    );
    assert_eq!(request.extra["reasoning_effort"], "low");
    assert_eq!(request.messages[0].extra["x-trace"], 7);
    assert_eq!(request.messages[1].extra["reasoning"], "thought");
    assert_eq!(request.messages[2].role, Role::Other("ipython".into()));
    assert_eq!(request.messages[2].role.as_str(), "ipython");
}

#[test]
fn content_parts_of_every_type() {
    let message: Message = round_trip(
        r#"{"role": "user", "content": [
            {"type": "text", "text": "What is in this image, "},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
            {"type": "text", "text": "and this audio?"},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
            {"type": "file", "file": {"file_id": "file-abc"}},
            {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
            {"type": "image"}
        ]}"#,
    );
    assert_eq!(
        message.content_text(),
        "What is in this image, \nand this audio?"
    );
    let Some(Content::Parts(parts)) = &message.content else {
        panic!("parts expected")
    };
    let kinds: Vec<_> = parts.iter().map(ContentPart::kind).collect();
    assert_eq!(
        kinds,
        [
            Some("text"),
            Some("image_url"),
            Some("text"),
            Some("input_audio"),
            Some("file"),
            Some("file"),
            Some("video_url"),
            Some("image")
        ]
    );
    assert!(matches!(parts[6], ContentPart::Other(_)));
}

#[test]
fn assistant_refusal_and_reasoning() {
    let message: Message = round_trip(
        r#"{"role": "assistant", "reasoning_content": "The user asks for...", "content": [{"type": "refusal", "refusal": "I can't help with that."}], "refusal": "I can't help with that."}"#,
    );
    assert_eq!(message.refusal.as_deref(), Some("I can't help with that."));
    assert_eq!(message.content_text(), "", "refusal parts are not text");
}

#[test]
fn legacy_function_role_and_function_call() {
    let request: ChatRequest = round_trip(
        r#"{"model": "gpt-3.5-turbo-0613", "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "function_call": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}},
            {"role": "function", "name": "get_weather", "content": "-3"}
        ], "functions": [{"name": "get_weather", "parameters": {"type": "object"}}], "function_call": "auto"}"#,
    );
    assert_eq!(request.messages[2].role, Role::Function);
    assert_eq!(
        request.messages[1]
            .function_call
            .as_ref()
            .map(|call| call.name.as_str()),
        Some("get_weather")
    );
    assert!(request.extra.contains_key("functions"));
}

#[test]
fn sampling_fields_and_their_spellings() {
    let request: ChatRequest = round_trip(
        r#"{"model": "m", "messages": [], "temperature": 1, "top_p": 0.95, "top_k": -1, "min_p": 0.05,
        "repetition_penalty": 1.1, "max_tokens": 100, "n": 1, "stop": ["</s>", "\nUser:"], "seed": -42,
        "presence_penalty": 0, "frequency_penalty": 0.5, "logit_bias": {"50256": -100, "1000": 2.5},
        "logprobs": true, "top_logprobs": 5, "user": "user-1234"}"#,
    );
    assert_eq!(request.temperature, Some(1.0));
    assert_eq!(request.top_k, Some(-1));
    assert_eq!(request.seed, Some(-42));
    assert_eq!(request.stop_sequences(), ["</s>", "\nUser:"]);
    let one: ChatRequest = round_trip(r#"{"messages": [], "stop": "\n\n"}"#);
    assert_eq!(one.stop, Some(Stop::One("\n\n".into())));
    assert_eq!(one.stop_sequences(), ["\n\n"]);
}

#[test]
fn a_changed_float_is_written_as_the_new_value() {
    let mut request: ChatRequest =
        serde_json::from_str(r#"{"messages": [], "temperature": 1}"#).unwrap();
    request.temperature = Some(0.5);
    assert_eq!(
        serde_json::to_string(&request).unwrap(),
        r#"{"messages":[],"temperature":0.5}"#
    );
}

#[test]
fn requests_built_in_code() {
    let mut request = ChatRequest::new(
        "llama3",
        vec![Message::system("Be kind."), Message::user("Hi")],
    );
    request.response_format = Some(ResponseFormat::json_object());
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        json!({"model": "llama3", "messages": [
            {"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}],
            "response_format": {"type": "json_object"}})
    );
}

#[test]
fn messages_compare_by_content_not_by_layout() {
    let parsed: Message =
        serde_json::from_str(r#"{"content": "Hi", "name": null, "role": "user"}"#).unwrap();
    assert_eq!(parsed, Message::user("Hi"));
}

#[test]
fn wrong_types_are_errors_that_say_what_was_expected() {
    let cases = [
        (
            r#"{"messages": [{"role": "user", "content": 5}]}"#,
            "content must be a string or an array",
        ),
        (
            r#"{"messages": [{"role": "user", "content": [{"type": "text"}]}]}"#,
            "missing field `text`",
        ),
        (
            r#"{"messages": [{"content": "x"}]}"#,
            "missing field `role`",
        ),
        (
            r#"{"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 1}}]}]}"#,
            "arguments must be a JSON string or a JSON object, found a number",
        ),
        (
            r#"{"messages": [], "stop": 3}"#,
            "stop must be a string or an array of strings",
        ),
        (
            r#"{"messages": [], "tool_choice": "sometimes"}"#,
            "unknown variant `sometimes`",
        ),
        (
            r#"{"messages": [], "tools": [{"type": "custom", "function": {"name": "f"}}]}"#,
            "unknown variant `custom`",
        ),
        (r#"{"messages": [], "max_tokens": -1}"#, "invalid value"),
        (r#"{"model": "m"}"#, "missing field `messages`"),
        (r#"[]"#, "expected a map"),
    ];
    for (json, expected) in cases {
        let error = serde_json::from_str::<ChatRequest>(json)
            .expect_err(json)
            .to_string();
        assert!(
            error.contains(expected),
            "{json}: {error:?} does not mention {expected:?}"
        );
    }
}
