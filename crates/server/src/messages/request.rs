//! A Messages request as the chat request it means.
//!
//! As for the Responses API, the mapping writes chat-completions JSON and parses it with
//! [`ChatRequest`]'s own reader, then makes chat's checks. What maps:
//! - `system` (a string or text blocks) → a first `system` message, and a `system` turn
//!   inside `messages` (Claude Code's mid-conversation system messages) → a `system`
//!   message at its place;
//! - user turns: `text` and `image` blocks → the user message, each `tool_result` → a
//!   `tool` message answering its `tool_use_id` (before the turn's text, as Anthropic
//!   requires them first), an error result marked `is_error`;
//! - assistant turns: `text` → content, `thinking` → `reasoning_content`, `tool_use` →
//!   `tool_calls` with the input as the arguments object; `redacted_thinking` is dropped;
//! - `tools` (`name`, `description`, `input_schema`) → function tools, and so are the
//!   client tools whose schema Anthropic fixes ([`client_tools`]); server tools
//!   (`web_search_…`, `code_execution_…`, …) and the client tools without a known schema
//!   are left out and named in the answer ([`crate::left_out`]);
//! - `tool_choice` `auto` / `any` / `tool` / `none` → `auto` / `required` / the function /
//!   `none`, and `disable_parallel_tool_use` → `parallel_tool_calls: false`;
//! - `output_config.format` (structured outputs) → a JSON-schema `response_format`;
//! - `max_tokens`, `stop_sequences`, `temperature`, `top_p`, `top_k`; `thinking`
//!   `enabled` / `disabled` → the template's `enable_thinking`; other keys pass through as
//!   a chat request's would.
//!
//! The server keeps no state, so a `thread` (the SDKs' server-side conversations) is
//! refused with Anthropic's own `thread_unsupported_request` error, on which the SDKs'
//! tool runners send the whole conversation again without it.
//!
//! Lenient where Anthropic is strict and nothing is lost: `max_tokens` may be left out (the
//! server's limit applies), `model` is optional, and roles need not alternate (the
//! dialect rewrites histories for templates that demand it).

use serde_json::{json, Map, Value};
use toolbridge_chat::{ApiError, ChatRequest};

use super::client_tools;
use crate::checks::check_request;
use crate::error::Failure;
use crate::left_out::LeftOut;
use crate::mapping::{passed_through, present, text_field};

/// The error code Anthropic answers a `thread` it cannot keep with; its SDKs then send the
/// whole conversation without one.
pub const THREAD_UNSUPPORTED: &str = "thread_unsupported_request";

/// The keys of a Messages request that are read here, never passed through.
const MESSAGES_KEYS: [&str; 16] = [
    "model",
    "max_tokens",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "stop_sequences",
    "temperature",
    "top_p",
    "top_k",
    "stream",
    "thinking",
    "metadata",
    "service_tier",
    "output_config",
    "thread",
];

/// A parsed Messages request: the chat request it maps to and the tools left out.
#[derive(Debug)]
pub struct Mapped {
    pub chat: ChatRequest,
    pub left_out: LeftOut,
}

/// Reads and checks a `POST /v1/messages` body.
pub fn parse(body: &[u8]) -> Result<Mapped, Failure> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|error| invalid(format!("The request body is not valid JSON: {error}")))?;
    if !request.is_object() {
        return Err(invalid("The request body must be a JSON object."));
    }
    refuse_thread(&request)?;
    let mut left_out = LeftOut::default();
    let chat_json = chat_json(&request, &mut left_out)?;
    let chat: ChatRequest = serde_json::from_value(Value::Object(chat_json))
        .map_err(|error| invalid(format!("Invalid request: {error}")))?;
    check_request(&chat)?;
    Ok(Mapped { chat, left_out })
}

/// Refuses a `thread` (`{"type": "create"}`, or `continue` with only the new messages):
/// this server stores no conversation to continue.
fn refuse_thread(request: &Value) -> Result<(), Failure> {
    match present(request, "thread") {
        None | Some(Value::Bool(false)) => Ok(()),
        Some(_) => {
            let message = "this server stores no threads: send the whole conversation in 'messages', without 'thread'.";
            let error = ApiError::invalid_request(message)
                .with_param("thread")
                .with_code(THREAD_UNSUPPORTED);
            Err(Failure::api(error))
        }
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::api(ApiError::invalid_request(message))
}

/// A 400 about `param`, named in Anthropic's dotted style (`messages.1.content.0`).
fn invalid_at(param: &str, message: impl Into<String>) -> Failure {
    Failure::invalid(param, message)
}

/// The chat-completions JSON of `request`, with the tools it leaves out in `left_out`.
fn chat_json(request: &Value, left_out: &mut LeftOut) -> Result<Map<String, Value>, Failure> {
    let mut chat = passed_through(request.as_object().unwrap_or(&Map::new()), &MESSAGES_KEYS);
    for key in [
        "model",
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "stream",
    ] {
        if let Some(value) = present(request, key) {
            chat.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(stops) = present(request, "stop_sequences") {
        chat.insert("stop".into(), stops.clone());
    }
    chat.insert("messages".into(), Value::Array(messages(request)?));
    if let Some(tools) = present(request, "tools") {
        chat.insert("tools".into(), self::tools(tools, left_out)?);
    }
    if let Some(choice) = present(request, "tool_choice") {
        tool_choice(choice, &mut chat)?;
    }
    if let Some(format) = present(request, "output_config").and_then(|config| config.get("format"))
    {
        chat.insert("response_format".into(), response_format(format)?);
    }
    if let Some(thinking) = present(request, "thinking") {
        let enabled = thinking.get("type").and_then(Value::as_str) != Some("disabled");
        let kwargs = chat
            .entry("chat_template_kwargs")
            .or_insert_with(|| json!({}));
        if let Value::Object(kwargs) = kwargs {
            kwargs.insert("enable_thinking".into(), Value::Bool(enabled));
        }
    }
    Ok(chat)
}

/// Structured outputs' `output_config.format` (`{"type": "json_schema", "schema": …}`) as
/// a JSON-schema `response_format`.
fn response_format(format: &Value) -> Result<Value, Failure> {
    match (
        format.get("type").and_then(Value::as_str),
        format.get("schema"),
    ) {
        (Some("json_schema"), Some(schema)) => Ok(json!({
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema, "strict": true},
        })),
        _ => Err(invalid_at(
            "output_config.format",
            "must be {\"type\": \"json_schema\", \"schema\": …}.",
        )),
    }
}

/// The chat messages of `system` and `messages`.
fn messages(request: &Value) -> Result<Vec<Value>, Failure> {
    let mut chat = Vec::new();
    if let Some(system) = present(request, "system") {
        chat.push(system_turn(system).map_err(|message| invalid_at("system", message))?);
    }
    let Some(Value::Array(turns)) = present(request, "messages") else {
        return Err(invalid_at(
            "messages",
            "Field required: an array of messages.",
        ));
    };
    for (n, turn) in turns.iter().enumerate() {
        let at = format!("messages.{n}");
        let role = turn.get("role").and_then(Value::as_str);
        let blocks = blocks(turn.get("content").unwrap_or(&Value::Null))
            .map_err(|message| invalid_at(&format!("{at}.content"), message))?;
        let written = match role {
            Some("user") => user_turn(&blocks),
            Some("assistant") => assistant_turn(&blocks).map(|turn| vec![turn]),
            Some("system") => {
                system_turn(turn.get("content").unwrap_or(&Value::Null)).map(|turn| vec![turn])
            }
            _ => Err("'role' must be 'user', 'assistant' or 'system'.".to_owned()),
        };
        chat.extend(written.map_err(|message| invalid_at(&at, message))?);
    }
    Ok(chat)
}

/// A system prompt, or a system turn: a string or text blocks, as one `system` message.
fn system_turn(content: &Value) -> Result<Value, String> {
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            let texts = blocks.iter().map(|block| match kind(block) {
                "text" => text_field(block, "text"),
                other => Err(format!(
                    "Content blocks of type '{other}' are not supported in system turns."
                )),
            });
            texts.collect::<Result<Vec<_>, _>>()?.join("\n")
        }
        _ => return Err("must be a string or an array of text blocks.".into()),
    };
    Ok(json!({"role": "system", "content": text}))
}

/// A turn's content as blocks: a string is one text block.
fn blocks(content: &Value) -> Result<Vec<Value>, String> {
    match content {
        Value::String(text) => Ok(vec![json!({"type": "text", "text": text})]),
        Value::Array(blocks) => Ok(blocks.clone()),
        _ => Err("must be a string or an array of content blocks.".into()),
    }
}

fn kind(block: &Value) -> &str {
    block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A user turn: its tool results as `tool` messages, then the rest as a user message.
fn user_turn(blocks: &[Value]) -> Result<Vec<Value>, String> {
    let mut messages = Vec::new();
    let mut parts = Vec::new();
    for block in blocks {
        match kind(block) {
            "tool_result" => messages.push(tool_result(block)?),
            "text" | "image" => parts.push(content_part(block)?),
            other => {
                return Err(format!(
                    "Content blocks of type '{other}' are not supported in user turns."
                ))
            }
        }
    }
    if !parts.is_empty() {
        messages.push(json!({"role": "user", "content": chat_content(parts)}));
    }
    Ok(messages)
}

/// An assistant turn as one assistant message.
fn assistant_turn(blocks: &[Value]) -> Result<Value, String> {
    let (mut text, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
    for block in blocks {
        match kind(block) {
            "text" => text.push_str(text_field(block, "text")?),
            "thinking" => reasoning.push_str(text_field(block, "thinking")?),
            "redacted_thinking" => {}
            "tool_use" => calls.push(json!({
                "id": text_field(block, "id")?,
                "type": "function",
                "function": {"name": text_field(block, "name")?, "arguments": block.get("input").cloned().unwrap_or_else(|| json!({}))},
            })),
            other => return Err(format!("Content blocks of type '{other}' are not supported in assistant turns.")),
        }
    }
    let content = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    Ok(message)
}

/// A `tool_result` block as a `tool` message.
fn tool_result(block: &Value) -> Result<Value, String> {
    let content = match block.get("content") {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(Value::String(text)) => Value::String(text.clone()),
        Some(Value::Array(blocks)) => {
            chat_content(blocks.iter().map(content_part).collect::<Result<_, _>>()?)
        }
        Some(_) => {
            return Err("a tool result's 'content' must be a string or an array of blocks.".into())
        }
    };
    let mut message = json!({"role": "tool", "tool_call_id": text_field(block, "tool_use_id")?, "content": content});
    if block.get("is_error") == Some(&Value::Bool(true)) {
        message["is_error"] = Value::Bool(true);
    }
    Ok(message)
}

/// A `text` or `image` block as a chat content part.
fn content_part(block: &Value) -> Result<Value, String> {
    match kind(block) {
        "text" => Ok(json!({"type": "text", "text": text_field(block, "text")?})),
        "image" => {
            let source = block.get("source").unwrap_or(&Value::Null);
            let url = match kind(source) {
                "base64" => format!(
                    "data:{};base64,{}",
                    text_field(source, "media_type")?,
                    text_field(source, "data")?
                ),
                "url" => text_field(source, "url")?.to_owned(),
                other => {
                    return Err(format!(
                        "Image sources of type '{other}' are not supported."
                    ))
                }
            };
            Ok(json!({"type": "image_url", "image_url": {"url": url}}))
        }
        other => Err(format!(
            "Content blocks of type '{other}' are not supported here."
        )),
    }
}

/// Parts as chat content: a string when they are all text, else the parts.
fn chat_content(parts: Vec<Value>) -> Value {
    if parts.iter().all(|part| part["type"] == "text") {
        let text: String = parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect();
        Value::String(text)
    } else {
        Value::Array(parts)
    }
}

/// Custom tools, and client tools of a known schema, as function tools; every other kind
/// recorded in `left_out`.
fn tools(tools: &Value, left_out: &mut LeftOut) -> Result<Value, Failure> {
    let Value::Array(tools) = tools else {
        return Err(invalid_at("tools", "must be an array."));
    };
    let mut functions = Vec::new();
    for (n, tool) in tools.iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str);
        let function = match (tool.get("type").and_then(Value::as_str), name) {
            (None | Some("custom"), Some(name)) => custom_tool(tool, name),
            (None | Some("custom"), None) => {
                return Err(invalid_at(&format!("tools.{n}"), "Field required: 'name'."))
            }
            (Some(kind), _) => match name.and_then(|name| client_tools::function(kind, name)) {
                Some(function) => function,
                None => {
                    left_out.add(kind);
                    continue;
                }
            },
        };
        functions.push(json!({"type": "function", "function": function}));
    }
    Ok(Value::Array(functions))
}

/// A custom tool (`name`, `description`, `input_schema`) as a function.
fn custom_tool(tool: &Value, name: &str) -> Value {
    let mut function = json!({"name": name});
    if let Some(description) = tool.get("description") {
        function["description"] = description.clone();
    }
    if let Some(schema) = tool.get("input_schema") {
        function["parameters"] = schema.clone();
    }
    function
}

/// `tool_choice` (and `disable_parallel_tool_use`) in the chat request.
fn tool_choice(choice: &Value, chat: &mut Map<String, Value>) -> Result<(), Failure> {
    let mapped = match choice.get("type").and_then(Value::as_str) {
        Some("auto") => json!("auto"),
        Some("any") => json!("required"),
        Some("none") => json!("none"),
        Some("tool") => match choice.get("name").and_then(Value::as_str) {
            Some(name) => json!({"type": "function", "function": {"name": name}}),
            None => return Err(invalid_at("tool_choice", "Field required: 'name'.")),
        },
        _ => {
            return Err(invalid_at(
                "tool_choice",
                "'type' must be 'auto', 'any', 'tool' or 'none'.",
            ))
        }
    };
    chat.insert("tool_choice".into(), mapped);
    if choice.get("disable_parallel_tool_use") == Some(&Value::Bool(true)) {
        chat.insert("parallel_tool_calls".into(), Value::Bool(false));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat_of(request: Value) -> Value {
        let mapped = parse(request.to_string().as_bytes()).expect("a valid request");
        serde_json::to_value(&mapped.chat).expect("serializes")
    }

    fn error_of(request: Value) -> ApiError {
        parse(request.to_string().as_bytes())
            .expect_err("refused")
            .error
    }

    #[test]
    fn a_tool_use_and_its_result_become_a_call_and_a_tool_message() {
        let chat = chat_of(json!({
            "model": "m",
            "max_tokens": 32,
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "need it", "signature": "s"},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
                    {"type": "text", "text": "And tomorrow?"}
                ]}
            ],
            "stop_sequences": ["END"],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        }));
        assert_eq!(
            chat["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        let call = &chat["messages"][2];
        assert_eq!(call["reasoning_content"], "need it");
        assert_eq!(
            call["tool_calls"][0]["function"]["arguments"],
            json!({"city": "Paris"})
        );
        assert_eq!(
            chat["messages"][3],
            json!({"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"})
        );
        assert_eq!(
            chat["messages"][4],
            json!({"role": "user", "content": "And tomorrow?"})
        );
        assert_eq!(chat["tool_choice"], "required");
        assert_eq!(chat["parallel_tool_calls"], false);
        assert_eq!(chat["stop"], json!(["END"]));
        assert_eq!(
            chat["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn a_system_turn_is_a_system_message_in_its_place() {
        let chat = chat_of(json!({
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "system", "content": [{"type": "text", "text": "Now in French."}, {"type": "text", "text": "Politely."}]},
                {"role": "assistant", "content": "Bonjour."},
                {"role": "system", "content": "Stop."},
            ],
        }));
        let system = |text: &str| json!({"role": "system", "content": text});
        assert_eq!(chat["messages"][0], system("Be brief."));
        assert_eq!(chat["messages"][2], system("Now in French.\nPolitely."));
        assert_eq!(chat["messages"][4], system("Stop."));
    }

    #[test]
    fn client_tools_of_known_schema_map_and_server_tools_are_left_out() {
        let mapped = parse(json!({
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {"type": "bash_20250124", "name": "bash"},
                {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
                {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool", "max_characters": 1000},
                {"type": "code_execution_20250825", "name": "code_execution"},
                {"type": "computer_20250124", "name": "computer", "display_width_px": 1024, "display_height_px": 768},
                {"name": "get_weather", "input_schema": {"type": "object"}},
            ],
        }).to_string().as_bytes()).expect("a valid request");
        let chat = serde_json::to_value(&mapped.chat).expect("serializes");
        let names: Vec<&str> = chat["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["function"]["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["bash", "str_replace_based_edit_tool", "get_weather"]
        );
        assert_eq!(
            mapped.left_out.tools(),
            [
                "web_search_20250305",
                "code_execution_20250825",
                "computer_20250124"
            ]
        );
    }

    #[test]
    fn a_thread_is_refused_with_anthropics_code() {
        for thread in [
            json!({"type": "create"}),
            json!({"type": "continue", "previous_message_id": "msg_1"}),
        ] {
            let error = error_of(
                json!({"messages": [{"role": "user", "content": "hi"}], "thread": thread}),
            );
            assert_eq!(error.param.as_deref(), Some("thread"));
            assert_eq!(error.code.as_deref(), Some(THREAD_UNSUPPORTED));
        }
        assert!(
            parse(br#"{"messages": [{"role": "user", "content": "hi"}], "thread": null}"#).is_ok()
        );
    }

    #[test]
    fn structured_outputs_are_a_json_schema_response_format() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let chat = chat_of(json!({
            "messages": [{"role": "user", "content": "hi"}],
            "output_config": {"effort": "low", "format": {"type": "json_schema", "schema": schema}},
        }));
        assert_eq!(chat["response_format"]["json_schema"]["schema"], schema);
        let wrong = json!({"messages": [{"role": "user", "content": "hi"}], "output_config": {"format": {"type": "xml"}}});
        assert_eq!(
            error_of(wrong).param.as_deref(),
            Some("output_config.format")
        );
    }

    #[test]
    fn thinking_reaches_the_template_switch() {
        let chat = chat_of(
            json!({"messages": [{"role": "user", "content": "hi"}], "thinking": {"type": "disabled"}}),
        );
        assert_eq!(
            chat["chat_template_kwargs"],
            json!({"enable_thinking": false})
        );
    }

    #[test]
    fn bad_requests_say_where() {
        assert_eq!(error_of(json!({})).param.as_deref(), Some("messages"));
        let unnamed = json!({"messages": [{"role": "user", "content": "x"}], "tools": [{"input_schema": {"type": "object"}}]});
        assert_eq!(error_of(unnamed).param.as_deref(), Some("tools.0"));
        let role = json!({"messages": [{"role": "tool", "content": "x"}]});
        assert_eq!(error_of(role).param.as_deref(), Some("messages.0"));
        let system = json!({"messages": [{"role": "system", "content": [{"type": "image"}]}]});
        assert_eq!(error_of(system).param.as_deref(), Some("messages.0"));
        let unknown = json!({"messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "g"}});
        assert_eq!(error_of(unknown).param.as_deref(), Some("tool_choice"));
    }
}
