//! A Responses request as the chat request it means.
//!
//! The mapping writes chat-completions JSON and parses it with [`ChatRequest`]'s own
//! reader, so everything a chat request may carry (open-model sampling extensions,
//! `chat_template_kwargs`) reaches the model the same way, and [`check_request`] then makes
//! the same checks. What maps:
//! - `instructions` → a first `system` message; `input` as a string → one `user` message;
//! - `input` items: messages (with or without `"type": "message"`; `input_text`,
//!   `output_text` and `input_image` parts become chat content parts; `developer`
//!   messages stay `developer` messages, in their place), `function_call`,
//!   `function_call_output` (a `tool` message, named after its call), `reasoning`;
//! - the items of one answer — consecutive `reasoning`, assistant `message` and
//!   `function_call` items, in any order — are one assistant turn with its content, its
//!   `reasoning_content` and all its `tool_calls`, so an answer sent back as it came
//!   (`[reasoning, message, function_call, function_call]`, then the outputs) is the
//!   history it was;
//! - `tools` of type `function`; a `namespace` of functions is those functions, each named
//!   `namespace.name` in the model's view as OpenAI's own models see them, and a call of one
//!   is answered (and sent back) with `namespace` beside its bare `name`. The namespace's
//!   own description is not shown (it would repeat for each of its functions). Tools this
//!   server cannot run — hosted ones (`web_search`, `file_search`, `code_interpreter`,
//!   `image_generation`, `mcp`, computer use, `local_shell`, …) and free-form `custom`
//!   tools — are left out and named in the answer ([`crate::left_out`]);
//! - `tool_choice` (`auto`, `none`, `required`, a function, or `allowed_tools`),
//!   `parallel_tool_calls`, `text.format` → `response_format`, `max_output_tokens`,
//!   `temperature`, `top_p`; other keys pass through as a chat request's would.
//!
//! The server keeps no state, so what needs a stored response is refused with a clear
//! error: `previous_response_id`, `conversation`, `item_reference` items, `background`.
//! `store` is accepted and answered with `"store": false`.

use serde_json::{json, Map, Value};
use toolbridge_chat::{ApiError, ChatRequest};

use crate::checks::check_request;
use crate::error::Failure;
use crate::left_out::LeftOut;
use crate::mapping::{passed_through, present, text_field};

/// The keys of a Responses request that are read here or refused, never passed through.
const RESPONSES_KEYS: [&str; 22] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stream",
    "previous_response_id",
    "conversation",
    "background",
    "store",
    "metadata",
    "reasoning",
    "include",
    "truncation",
    "user",
    "service_tier",
    "stream_options",
];

/// What state a stateless server cannot give: a key that needs it, and why.
const STATEFUL: [(&str, &str); 3] = [
    (
        "previous_response_id",
        "this server stores no responses: send the whole conversation in 'input'",
    ),
    (
        "conversation",
        "this server stores no conversations: send the whole conversation in 'input'",
    ),
    ("background", "this server runs no background responses"),
];

/// A parsed Responses request: the chat request it maps to, the fields the response
/// object echoes, the namespaces its functions were declared in and the tools left out.
#[derive(Debug)]
pub struct Mapped {
    pub chat: ChatRequest,
    pub echo: Map<String, Value>,
    pub namespaces: Vec<String>,
    pub left_out: LeftOut,
}

/// Reads and checks a `POST /v1/responses` body.
pub fn parse(body: &[u8]) -> Result<Mapped, Failure> {
    let request: Value = serde_json::from_slice(body).map_err(|error| {
        invalid(
            "body",
            format!("The request body is not valid JSON: {error}"),
        )
    })?;
    if !request.is_object() {
        return Err(invalid("body", "The request body must be a JSON object."));
    }
    refuse_stateful(&request)?;
    let mut tools = match present(&request, "tools") {
        Some(tools) => self::tools(tools)?,
        None => Tools::default(),
    };
    let chat_json = chat_json(&request, std::mem::take(&mut tools.chat))?;
    let chat: ChatRequest = serde_json::from_value(Value::Object(chat_json)).map_err(|error| {
        Failure::api(ApiError::invalid_request(format!(
            "Invalid request: {error}"
        )))
    })?;
    check_request(&chat).map_err(responses_param)?;
    Ok(Mapped {
        echo: echo(&request),
        chat,
        namespaces: tools.namespaces,
        left_out: tools.left_out,
    })
}

/// A 400 about the Responses parameter `param`.
fn invalid(param: &str, message: impl Into<String>) -> Failure {
    Failure::invalid(param, message)
}

/// A chat check's failure, naming the Responses parameter rather than the chat one.
fn responses_param(mut failure: Failure) -> Failure {
    if let Some(param) = failure.error.param.take() {
        let renamed = [
            ("messages", "input"),
            ("max_completion_tokens", "max_output_tokens"),
            ("response_format", "text.format"),
        ]
        .iter()
        .find_map(|(chat, ours)| param.starts_with(chat).then_some(*ours));
        failure.error.param = Some(renamed.map_or(param, str::to_owned));
    }
    failure
}

fn refuse_stateful(request: &Value) -> Result<(), Failure> {
    for (key, why) in STATEFUL {
        match request.get(key) {
            None | Some(Value::Null | Value::Bool(false)) => {}
            Some(_) => return Err(invalid(key, format!("'{key}' is not supported: {why}."))),
        }
    }
    Ok(())
}

/// The chat-completions JSON of `request`, declaring the chat `tools`.
fn chat_json(request: &Value, tools: Vec<Value>) -> Result<Map<String, Value>, Failure> {
    let mut chat = passed_through(request.as_object().unwrap_or(&Map::new()), &RESPONSES_KEYS);
    for key in [
        "model",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "stream",
    ] {
        if let Some(value) = request.get(key) {
            chat.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(limit) = present(request, "max_output_tokens") {
        if limit.as_u64().and_then(|n| u32::try_from(n).ok()).is_none() {
            let message =
                format!("'max_output_tokens' must be a non-negative integer, not {limit}.");
            return Err(invalid("max_output_tokens", message));
        }
        chat.insert("max_completion_tokens".into(), limit.clone());
    }
    chat.insert("messages".into(), Value::Array(messages(request)?));
    if present(request, "tools").is_some() {
        chat.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = present(request, "tool_choice") {
        chat.insert("tool_choice".into(), tool_choice(choice)?);
    }
    if let Some(format) = present(request, "text").and_then(|text| present(text, "format")) {
        chat.insert("response_format".into(), response_format(format)?);
    }
    Ok(chat)
}

/// The chat messages of `instructions` and `input`.
fn messages(request: &Value) -> Result<Vec<Value>, Failure> {
    let mut history = History::default();
    if let Some(instructions) = present(request, "instructions") {
        history.push(json!({"role": "system", "content": instructions}));
    }
    match present(request, "input") {
        None => return Err(invalid("input", "Missing required parameter: 'input'.")),
        Some(Value::String(text)) => history.push(json!({"role": "user", "content": text})),
        Some(Value::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                history
                    .add(item)
                    .map_err(|message| invalid(&format!("input[{n}]"), message))?;
            }
        }
        Some(_) => {
            return Err(invalid(
                "input",
                "'input' must be a string or an array of input items.",
            ))
        }
    }
    Ok(history.finish())
}

/// The chat messages written so far, and the assistant turn being gathered.
#[derive(Default)]
struct History {
    messages: Vec<Value>,
    turn: Option<Turn>,
}

/// One assistant turn, gathered from the items of one answer.
#[derive(Default)]
struct Turn {
    /// Each assistant message's content, in order.
    contents: Vec<Value>,
    reasoning: String,
    calls: Vec<Value>,
}

impl Turn {
    /// The turn as one chat assistant message. A turn of one message keeps its content as
    /// it came; several messages' contents are one list of parts, in order.
    fn message(self) -> Value {
        let Turn {
            mut contents,
            reasoning,
            calls,
        } = self;
        let content = match contents.len() {
            0 if calls.is_empty() => json!(""),
            0 => Value::Null,
            1 => contents.remove(0),
            _ => Value::Array(contents.into_iter().flat_map(as_parts).collect()),
        };
        let mut message = json!({"role": "assistant", "content": content});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        if !reasoning.is_empty() {
            message["reasoning_content"] = Value::String(reasoning);
        }
        message
    }
}

/// Chat content as a list of parts: a string is one text part.
fn as_parts(content: Value) -> Vec<Value> {
    match content {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(parts) => parts,
        _ => Vec::new(),
    }
}

impl History {
    /// Adds one input item.
    fn add(&mut self, item: &Value) -> Result<(), String> {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => self.message(item),
            "function_call" => {
                let call = function_call(item)?;
                self.turn().calls.push(call);
                Ok(())
            }
            "function_call_output" => self.function_call_output(item),
            "reasoning" => {
                let text = reasoning_text(item);
                let turn = self.turn();
                if !turn.reasoning.is_empty() && !text.is_empty() {
                    turn.reasoning.push('\n');
                }
                turn.reasoning.push_str(&text);
                Ok(())
            }
            "item_reference" => Err("'item_reference' items are not supported: this server stores no items; send the item itself.".into()),
            other => Err(format!("Input items of type '{other}' are not supported.")),
        }
    }

    /// The assistant turn the items of an answer add to, opened by the first of them.
    fn turn(&mut self) -> &mut Turn {
        self.turn.get_or_insert_with(Turn::default)
    }

    /// Writes the assistant turn being gathered, if there is one.
    fn close_turn(&mut self) {
        if let Some(turn) = self.turn.take() {
            self.messages.push(turn.message());
        }
    }

    /// Adds a message that ends the assistant turn before it.
    fn push(&mut self, message: Value) {
        self.close_turn();
        self.messages.push(message);
    }

    /// The chat messages, the last turn written.
    fn finish(mut self) -> Vec<Value> {
        self.close_turn();
        self.messages
    }

    fn message(&mut self, item: &Value) -> Result<(), String> {
        let role = text_field(item, "role")?;
        if !["user", "assistant", "system", "developer"].contains(&role) {
            return Err(format!("Invalid role '{role}'."));
        }
        let content = content(item.get("content").unwrap_or(&Value::Null))?;
        if role == "assistant" {
            self.turn().contents.push(content);
        } else {
            self.push(json!({"role": role, "content": content}));
        }
        Ok(())
    }

    fn function_call_output(&mut self, item: &Value) -> Result<(), String> {
        let call_id = text_field(item, "call_id")?;
        let output = match item.get("output") {
            Some(Value::String(text)) => Value::String(text.clone()),
            Some(parts @ Value::Array(_)) => content(parts)?,
            _ => return Err("'output' must be a string or an array of content parts.".into()),
        };
        self.close_turn();
        let mut message = json!({"role": "tool", "tool_call_id": call_id, "content": output});
        if let Some(name) = self.call_name(call_id) {
            message["name"] = Value::String(name);
        }
        self.messages.push(message);
        Ok(())
    }

    /// The name of the earlier call `call_id`, for templates that show a result's tool.
    fn call_name(&self, call_id: &str) -> Option<String> {
        self.messages
            .iter()
            .rev()
            .filter_map(|message| message.get("tool_calls")?.as_array())
            .flatten()
            .find(|call| call["id"] == call_id)
            .and_then(|call| call["function"]["name"].as_str().map(str::to_owned))
    }
}

/// A `function_call` item as a chat tool call; a call in a namespace is named as the model
/// sees it, `namespace.name`.
fn function_call(item: &Value) -> Result<Value, String> {
    let name = text_field(item, "name")?;
    let name = match present(item, "namespace").and_then(Value::as_str) {
        Some(namespace) => format!("{namespace}.{name}"),
        None => name.to_owned(),
    };
    Ok(json!({
        "id": text_field(item, "call_id")?,
        "type": "function",
        "function": {"name": name, "arguments": text_field(item, "arguments")?},
    }))
}

/// The text of a `reasoning` item: its `content`, else its `summary`.
fn reasoning_text(item: &Value) -> String {
    let texts = |key: &str| -> String {
        item.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect()
    };
    let content = texts("content");
    if content.is_empty() {
        texts("summary")
    } else {
        content
    }
}

/// A message's content as chat content: a string as it is, parts as chat parts.
fn content(content: &Value) -> Result<Value, String> {
    let parts = match content {
        Value::String(_) => return Ok(content.clone()),
        Value::Array(parts) => parts,
        _ => return Err("'content' must be a string or an array of content parts.".into()),
    };
    parts
        .iter()
        .map(content_part)
        .collect::<Result<_, _>>()
        .map(Value::Array)
}

fn content_part(part: &Value) -> Result<Value, String> {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text" => {
            Ok(json!({"type": "text", "text": text_field(part, "text")?}))
        }
        "refusal" => Ok(json!({"type": "text", "text": text_field(part, "refusal")?})),
        "input_image" => match part.get("image_url").and_then(Value::as_str) {
            Some(url) => {
                let mut image = json!({"url": url});
                if let Some(detail) = present(part, "detail") {
                    image["detail"] = detail.clone();
                }
                Ok(json!({"type": "image_url", "image_url": image}))
            }
            None => Err("'input_image' parts need an 'image_url' (file ids need stored files, which this server has not).".into()),
        },
        other => Err(format!("Content parts of type '{other}' are not supported.")),
    }
}

/// A request's tools as the chat request declares them.
#[derive(Debug, Default)]
struct Tools {
    /// The function tools, in the chat shape.
    chat: Vec<Value>,
    /// The namespaces the functions were declared in.
    namespaces: Vec<String>,
    left_out: LeftOut,
}

/// Reads `tools`: functions as they are, the functions of a namespace under its name, and
/// every other kind left out.
fn tools(tools: &Value) -> Result<Tools, Failure> {
    let Value::Array(tools) = tools else {
        return Err(invalid("tools", "'tools' must be an array."));
    };
    let mut mapped = Tools::default();
    for (n, tool) in tools.iter().enumerate() {
        let at = format!("tools[{n}]");
        match tool.get("type").and_then(Value::as_str) {
            Some("function") => mapped.chat.push(chat_tool(tool, None)),
            Some("namespace") => mapped.namespace(tool, &at)?,
            Some(kind) => mapped.left_out.add(kind),
            None => {
                let message = "Missing required parameter: a tool's 'type'.";
                return Err(invalid(&format!("{at}.type"), message));
            }
        }
    }
    Ok(mapped)
}

impl Tools {
    /// The functions of a `namespace` tool, named `namespace.name`; its other tools left
    /// out by that name.
    fn namespace(&mut self, tool: &Value, at: &str) -> Result<(), Failure> {
        let name =
            text_field(tool, "name").map_err(|message| invalid(&format!("{at}.name"), message))?;
        let Some(Value::Array(members)) = tool.get("tools") else {
            return Err(invalid(
                &format!("{at}.tools"),
                "A namespace's 'tools' must be an array.",
            ));
        };
        for (m, member) in members.iter().enumerate() {
            let member_name = text_field(member, "name")
                .map_err(|message| invalid(&format!("{at}.tools[{m}].name"), message))?;
            let qualified = format!("{name}.{member_name}");
            match member.get("type").and_then(Value::as_str) {
                Some("function") => self.chat.push(chat_tool(member, Some(&qualified))),
                _ => self.left_out.add(qualified),
            }
        }
        self.namespaces.push(name.to_owned());
        Ok(())
    }
}

/// A Responses function tool (flat: `name` beside `type`) in the chat shape, renamed when
/// `name` is given.
fn chat_tool(tool: &Value, name: Option<&str>) -> Value {
    let mut function = tool.as_object().cloned().unwrap_or_default();
    function.remove("type");
    if let Some(name) = name {
        function.insert("name".into(), Value::String(name.to_owned()));
    }
    json!({"type": "function", "function": function})
}

/// `tool_choice` in the chat shape.
fn tool_choice(choice: &Value) -> Result<Value, Failure> {
    let kind = choice.get("type").and_then(Value::as_str);
    match (choice, kind) {
        (Value::String(_), _) => Ok(choice.clone()),
        (_, Some("function")) => {
            Ok(json!({"type": "function", "function": {"name": choice["name"]}}))
        }
        (_, Some("allowed_tools")) => {
            let tools: Vec<Value> = choice["tools"]
                .as_array()
                .into_iter()
                .flatten()
                // Hosted tools among them were left out of `tools`.
                .filter(|tool| tool["type"] == "function")
                .map(|tool| json!({"type": "function", "function": {"name": tool["name"]}}))
                .collect();
            Ok(
                json!({"type": "allowed_tools", "allowed_tools": {"mode": choice["mode"], "tools": tools}}),
            )
        }
        _ => Err(invalid(
            "tool_choice",
            "'tool_choice' must be 'auto', 'none', 'required', a function or allowed tools.",
        )),
    }
}

/// `text.format` as `response_format`.
fn response_format(format: &Value) -> Result<Value, Failure> {
    match format.get("type").and_then(Value::as_str) {
        Some("text" | "json_object") => Ok(format.clone()),
        Some("json_schema") => {
            let mut schema = format.as_object().cloned().unwrap_or_default();
            schema.remove("type");
            Ok(json!({"type": "json_schema", "json_schema": schema}))
        }
        _ => Err(invalid(
            "text.format",
            "'text.format' must be of type 'text', 'json_object' or 'json_schema'.",
        )),
    }
}

/// The request's fields a response object repeats, with OpenAI's defaults.
fn echo(request: &Value) -> Map<String, Value> {
    let field = |key: &str, default: Value| present(request, key).cloned().unwrap_or(default);
    let format = present(request, "text")
        .and_then(|text| present(text, "format"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "text"}));
    let mut echo = Map::new();
    echo.insert("instructions".into(), field("instructions", Value::Null));
    echo.insert(
        "max_output_tokens".into(),
        field("max_output_tokens", Value::Null),
    );
    echo.insert("metadata".into(), field("metadata", json!({})));
    echo.insert(
        "parallel_tool_calls".into(),
        field("parallel_tool_calls", json!(true)),
    );
    echo.insert("temperature".into(), field("temperature", json!(1.0)));
    echo.insert("text".into(), json!({"format": format}));
    echo.insert("tool_choice".into(), field("tool_choice", json!("auto")));
    echo.insert("tools".into(), field("tools", json!([])));
    echo.insert("top_p".into(), field("top_p", json!(1.0)));
    echo
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
    fn a_string_input_is_one_user_message_after_the_instructions() {
        let chat = chat_of(
            json!({"model": "m", "instructions": "Be brief.", "input": "Hi", "max_output_tokens": 9}),
        );
        assert_eq!(
            chat,
            json!({
                "model": "m",
                "max_completion_tokens": 9,
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"}
                ]
            })
        );
    }

    #[test]
    fn calls_and_their_outputs_are_one_assistant_turn_and_tool_messages() {
        let chat = chat_of(json!({
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "need it"}]},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": "{\"city\":\"Lyon\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "rain"}]},
            ],
        }));
        let messages = &chat["messages"];
        assert_eq!(messages[1]["reasoning_content"], "need it");
        assert_eq!(messages[1]["tool_calls"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            messages[2],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny", "name": "get_weather"})
        );
    }

    #[test]
    fn the_items_of_one_answer_are_one_assistant_turn_in_any_order() {
        let call = |id: &str| json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"});
        let output =
            |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
        let said = json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]});
        let thought =
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "need f"}]});
        let user = json!({"role": "user", "content": "go"});
        let tools = json!([{"type": "function", "name": "f", "parameters": {"type": "object"}}]);
        let cases = [
            vec![user.clone(), call("c1"), said.clone(), output("c1")],
            vec![
                user.clone(),
                thought.clone(),
                said.clone(),
                call("c1"),
                call("c2"),
                output("c1"),
                output("c2"),
            ],
            vec![
                user.clone(),
                call("c1"),
                thought.clone(),
                call("c2"),
                said.clone(),
                output("c1"),
                output("c2"),
            ],
        ];
        for input in cases {
            let calls = input
                .iter()
                .filter(|item| item["type"] == "function_call")
                .count();
            let chat = chat_of(json!({"input": input, "tools": tools}));
            let turn = &chat["messages"][1];
            assert_eq!(turn["role"], "assistant", "{chat}");
            assert_eq!(
                turn["tool_calls"].as_array().map(Vec::len),
                Some(calls),
                "{chat}"
            );
            assert_eq!(
                turn["content"],
                json!([{"type": "text", "text": "Let me look."}])
            );
            let reasoned = input.contains(&thought);
            assert_eq!(
                turn["reasoning_content"].as_str().is_some(),
                reasoned,
                "{chat}"
            );
            let roles: Vec<&str> = chat["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["role"].as_str())
                .collect();
            assert_eq!(roles.len(), 2 + calls, "{chat}");
        }
    }

    #[test]
    fn developer_messages_and_every_part_kind_are_kept_in_place() {
        let chat = chat_of(json!({
            "instructions": "Be brief.",
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use tools."}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "What is this?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
                ]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A cat.", "annotations": []}]},
                {"type": "message", "role": "developer", "content": "Answer in French."},
            ],
        }));
        assert_eq!(
            chat["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "auto"}},
                ]},
                {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
                {"role": "developer", "content": "Answer in French."},
            ])
        );
    }

    #[test]
    fn namespaced_functions_are_functions_and_hosted_tools_are_left_out() {
        let mapped = parse(json!({
            "input": [
                {"role": "user", "content": "spawn"},
                {"type": "function_call", "call_id": "c1", "namespace": "multi_agent_v1", "name": "spawn_agent", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "spawned"},
            ],
            "tools": [
                {"type": "function", "name": "shell", "parameters": {"type": "object"}},
                {"type": "web_search", "external_web_access": false},
                {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents", "tools": [
                    {"type": "function", "name": "spawn_agent", "parameters": {"type": "object"}},
                    {"type": "custom", "name": "note", "format": {"type": "text"}},
                ]},
                {"type": "image_generation"},
            ],
            "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "shell"}, {"type": "web_search"}]},
        }).to_string().as_bytes()).expect("a valid request");
        let chat = serde_json::to_value(&mapped.chat).expect("serializes");
        let names: Vec<&str> = chat["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["function"]["name"].as_str())
            .collect();
        assert_eq!(names, ["shell", "multi_agent_v1.spawn_agent"]);
        assert_eq!(
            chat["messages"][1]["tool_calls"][0]["function"]["name"],
            "multi_agent_v1.spawn_agent"
        );
        assert_eq!(chat["messages"][2]["name"], "multi_agent_v1.spawn_agent");
        assert_eq!(
            chat["tool_choice"]["allowed_tools"]["tools"],
            json!([{"type": "function", "function": {"name": "shell"}}])
        );
        assert_eq!(mapped.namespaces, ["multi_agent_v1"]);
        assert_eq!(
            mapped.left_out.tools(),
            ["web_search", "multi_agent_v1.note", "image_generation"]
        );
    }

    #[test]
    fn tools_choices_and_formats_take_the_chat_shape() {
        let tool = json!({"type": "function", "name": "f", "parameters": {"type": "object"}});
        let chat = chat_of(json!({
            "input": "x",
            "tools": [tool],
            "tool_choice": {"type": "function", "name": "f"},
            "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}}},
        }));
        assert_eq!(chat["tools"][0]["function"]["name"], "f");
        assert_eq!(
            chat["tool_choice"],
            json!({"type": "function", "function": {"name": "f"}})
        );
        assert_eq!(chat["response_format"]["json_schema"]["name"], "s");
    }

    #[test]
    fn what_needs_stored_state_is_refused_by_name() {
        let error = error_of(json!({"input": "x", "previous_response_id": "resp_1"}));
        assert_eq!(error.param.as_deref(), Some("previous_response_id"));
        let error = error_of(json!({"input": [{"type": "item_reference", "id": "msg_1"}]}));
        assert_eq!(error.param.as_deref(), Some("input[0]"));
        assert!(parse(br#"{"input": "x", "store": true}"#).is_ok());
    }

    #[test]
    fn bad_requests_name_the_responses_parameter() {
        assert_eq!(error_of(json!({})).param.as_deref(), Some("input"));
        let untyped = json!({"input": "x", "tools": [{"name": "f"}]});
        assert_eq!(error_of(untyped).param.as_deref(), Some("tools[0].type"));
        let unnamed = json!({"input": "x", "tools": [{"type": "namespace", "tools": []}]});
        assert_eq!(error_of(unnamed).param.as_deref(), Some("tools[0].name"));
        let unknown = json!({"input": "x", "tools": [], "tool_choice": "required"});
        assert_eq!(error_of(unknown).param.as_deref(), Some("tool_choice"));
        let negative = json!({"input": "x", "max_output_tokens": -1});
        assert_eq!(
            error_of(negative).param.as_deref(),
            Some("max_output_tokens")
        );
    }
}
