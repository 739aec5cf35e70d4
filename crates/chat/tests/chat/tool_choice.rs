//! `tool_choice` in all its forms, and `response_format` in all of its.

use crate::common::round_trip;
use serde_json::json;
use toolbridge_chat::{
    AllowedTools, AllowedToolsMode, ChatRequest, ErrorType, FunctionDefinition, Message, NamedTool,
    ResponseFormat, Tool, ToolChoice, ToolChoiceMode,
};

#[test]
fn modes() {
    for (json, mode) in [
        (r#""auto""#, ToolChoiceMode::Auto),
        (r#""none""#, ToolChoiceMode::None),
        (r#""required""#, ToolChoiceMode::Required),
    ] {
        assert_eq!(round_trip::<ToolChoice>(json), ToolChoice::Mode(mode));
    }
    assert!(ToolChoice::Mode(ToolChoiceMode::Required).requires_call());
    assert!(!ToolChoice::Mode(ToolChoiceMode::Auto).requires_call());
    assert!(!ToolChoice::Mode(ToolChoiceMode::None).allows_calls());
    assert_eq!(ToolChoice::Mode(ToolChoiceMode::Auto).allowed_names(), None);
}

#[test]
fn named_function() {
    let choice: ToolChoice = round_trip(r#"{"type":"function","function":{"name":"get_weather"}}"#);
    assert_eq!(choice, ToolChoice::function("get_weather"));
    assert!(choice.requires_call());
    assert_eq!(choice.allowed_names(), Some(vec!["get_weather"]));
}

#[test]
fn allowed_tools() {
    let choice: ToolChoice = round_trip(
        r#"{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[
            {"type":"function","function":{"name":"get_weather"}},
            {"type":"function","function":{"name":"deepwiki"}}]}}"#,
    );
    let expected = ToolChoice::AllowedTools {
        allowed_tools: AllowedTools {
            mode: AllowedToolsMode::Required,
            tools: vec![
                NamedTool::function("get_weather"),
                NamedTool::function("deepwiki"),
            ],
        },
    };
    assert_eq!(choice, expected);
    assert!(choice.requires_call());
    assert_eq!(
        choice.allowed_names(),
        Some(vec!["get_weather", "deepwiki"])
    );
    let auto: ToolChoice =
        round_trip(r#"{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}"#);
    assert!(!auto.requires_call() && auto.allows_calls());
}

#[test]
fn malformed_choices_are_errors() {
    for (json, expected) in [
        (r#"{"type":"function"}"#, "missing field `function`"),
        (r#"{"function":{"name":"f"}}"#, "missing field `type`"),
        (
            r#"{"type":"custom","custom":{"name":"f"}}"#,
            "unknown variant `custom`",
        ),
        (
            r#"{"type":"allowed_tools","allowed_tools":{"mode":"sometimes","tools":[]}}"#,
            "unknown variant",
        ),
        ("true", "tool_choice must be"),
        (r#""any""#, "unknown variant `any`"),
    ] {
        let error = serde_json::from_str::<ToolChoice>(json)
            .expect_err(json)
            .to_string();
        assert!(
            error.contains(expected),
            "{json}: {error:?} does not mention {expected:?}"
        );
    }
}

fn weather_request(choice: ToolChoice) -> ChatRequest {
    let tool = Tool::function(FunctionDefinition::new(
        "get_weather",
        "Weather",
        json!({"type": "object"}),
    ));
    ChatRequest {
        tools: Some(vec![tool]),
        tool_choice: Some(choice),
        ..ChatRequest::new("m", vec![Message::user("?")])
    }
}

#[test]
fn validation_of_the_choice_against_the_tools() {
    assert!(weather_request(ToolChoice::function("get_weather"))
        .validate()
        .is_ok());
    let unknown = weather_request(ToolChoice::function("get_time"))
        .validate()
        .unwrap_err();
    assert_eq!(unknown.kind, ErrorType::InvalidRequest);
    assert_eq!(unknown.param.as_deref(), Some("tool_choice"));
    assert!(unknown.message.contains("get_time"), "{}", unknown.message);

    let mut no_tools = weather_request(ToolChoiceMode::Required.into());
    no_tools.tools = None;
    assert_eq!(
        no_tools.validate().unwrap_err().param.as_deref(),
        Some("tool_choice")
    );
    no_tools.tool_choice = Some(ToolChoiceMode::Auto.into());
    assert!(
        no_tools.validate().is_ok(),
        "clients send \"auto\" without tools"
    );

    let empty = ChatRequest::new("m", Vec::new()).validate().unwrap_err();
    assert_eq!(
        (empty.param.as_deref(), empty.http_status()),
        (Some("messages"), 400)
    );
}

#[test]
fn the_default_choice_depends_on_the_tools() {
    let mut request = weather_request(ToolChoiceMode::None.into());
    request.tool_choice = None;
    assert_eq!(
        request.effective_tool_choice(),
        ToolChoice::Mode(ToolChoiceMode::Auto)
    );
}

#[test]
fn response_formats() {
    assert_eq!(
        round_trip::<ResponseFormat>(r#"{"type":"text"}"#),
        ResponseFormat::text()
    );
    assert_eq!(
        round_trip::<ResponseFormat>(r#"{"type":"json_object"}"#),
        ResponseFormat::json_object()
    );
    let schema: ResponseFormat = round_trip(
        r#"{"type":"json_schema","json_schema":{"name":"math_response","description":"Steps",
            "schema":{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],
            "additionalProperties":false},"strict":true}}"#,
    );
    assert!(schema.is_json());
    assert_eq!(
        schema.schema().and_then(|s| s.get("required")),
        Some(&json!(["answer"]))
    );
    let ResponseFormat::JsonSchema { json_schema, .. } = &schema else {
        panic!()
    };
    assert_eq!(
        (json_schema.name.as_str(), json_schema.strict),
        ("math_response", Some(true))
    );

    let llama_cpp: ResponseFormat =
        round_trip(r#"{"type":"json_object","schema":{"type":"integer"}}"#);
    assert_eq!(llama_cpp.schema(), Some(&json!({"type": "integer"})));
    assert_eq!(
        serde_json::to_value(ResponseFormat::json_schema("n", json!({"type": "integer"}))).unwrap(),
        json!({"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "integer"}}})
    );
    assert!(!ResponseFormat::text().is_json());
    let error = serde_json::from_str::<ResponseFormat>(r#"{"type":"xml"}"#).unwrap_err();
    assert!(
        error.to_string().contains("unknown variant `xml`"),
        "{error}"
    );
}
