//! A chat request as Ollama's server hands it to a template.
//!
//! Clients send either Ollama's own `/api/chat` body (tool-call arguments as objects,
//! `tool_name` on tool results) or OpenAI's (arguments as a JSON string, `tool_call_id`
//! only, content as a list of parts, or null beside tool calls). Ollama's OpenAI layer
//! maps the second onto the first; [`OllamaRequest::from_json`] accepts both and does
//! the same mapping, so either renders as Ollama would render it.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::model::{GoAny, Message, Tool, ToolCall, ToolCallFunction};
use crate::jinja::{json_nests_deeper, Limits};
use crate::{TemplateError, TemplateErrorKind};

/// What a chat (or generate) request gives the template.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OllamaRequest {
    pub messages: Vec<Message>,
    /// `None` is Go's nil `Tools` (prints and marshals as `null`); `Some(vec![])` an
    /// empty list the client sent.
    pub tools: Option<Vec<Tool>>,
    pub think: Option<Think>,
    /// The generate endpoint's prompt; with [`Self::suffix`] it selects fill-in-the-middle.
    pub prompt: String,
    pub suffix: String,
}

/// The request's `think` field: on/off, or a level (`"low"`, `"medium"`, `"high"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Think {
    Enabled(bool),
    Level(String),
}

impl Think {
    /// `.Think`: whether thinking is on.
    pub fn enabled(&self) -> bool {
        match self {
            Think::Enabled(on) => *on,
            Think::Level(level) => !level.is_empty(),
        }
    }

    /// `.ThinkLevel`: the level, `medium` for a plain `true`.
    pub fn level(&self) -> String {
        match self {
            Think::Enabled(true) => "medium".into(),
            Think::Enabled(false) => String::new(),
            Think::Level(level) => level.clone(),
        }
    }
}

type Result<T> = std::result::Result<T, TemplateError>;

/// A request that Ollama would refuse before rendering, for `why`.
fn refused(why: impl Into<String>) -> TemplateError {
    TemplateError::new(TemplateErrorKind::Request, why)
}

/// `error`, said of the part of the request at `place` (`messages[2]: …`).
fn within(place: String) -> impl FnOnce(TemplateError) -> TemplateError {
    move |error| refused(format!("{place}: {}", error.detail()))
}

impl OllamaRequest {
    /// Reads an Ollama or OpenAI chat request: `messages`, `tools`, `think`, and for the
    /// generate endpoint `prompt`, `system` and `suffix`. Other keys are ignored. A
    /// request nested deeper than [`Limits::max_depth`] is refused before it is read.
    pub fn from_json(request: &Value) -> Result<OllamaRequest> {
        let max_depth = Limits::default().max_depth;
        if json_nests_deeper(request, max_depth) {
            return Err(refused(format!(
                "the request nests values more than {max_depth} deep"
            )));
        }
        let object = request
            .as_object()
            .ok_or_else(|| refused("the request must be a JSON object"))?;
        let mut messages = match object.get("messages") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => read_messages(items)?,
            Some(_) => return Err(refused("messages must be a list")),
        };
        let prompt = string_field(object, "prompt")?;
        let suffix = string_field(object, "suffix")?;
        let system = string_field(object, "system")?;
        if messages.is_empty() && suffix.is_empty() && object.contains_key("prompt") {
            messages = generate_messages(&system, &prompt);
        }
        Ok(OllamaRequest {
            messages,
            tools: read_tools(object.get("tools"))?,
            think: read_think(object.get("think"))?,
            prompt,
            suffix,
        })
    }

    /// Adds a model's defaults as Ollama's chat handler does: the Modelfile's `MESSAGE`s
    /// go before the conversation, and its `SYSTEM` before those unless the request
    /// starts with its own system message.
    pub fn with_model_defaults(mut self, system: Option<&str>, messages: &[Message]) -> Self {
        let starts_with_system = self
            .messages
            .first()
            .is_some_and(|message| message.role == "system");
        let mut all = Vec::with_capacity(messages.len() + self.messages.len() + 1);
        if let Some(system) = system.filter(|s| !s.is_empty() && !starts_with_system) {
            all.push(Message::new("system", system));
        }
        all.extend_from_slice(messages);
        all.append(&mut self.messages);
        self.messages = all;
        self
    }
}

/// Ollama's `collate`: consecutive messages of one role (tool results excepted) merge
/// into one, their texts joined by a blank line; the system messages, joined the same
/// way, are returned beside them (and stay in the list).
pub fn collate(messages: &[Message]) -> (String, Vec<Message>) {
    let mut system = Vec::new();
    let mut collated: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        if message.role == "system" {
            system.push(message.content.as_str());
        }
        match collated.last_mut() {
            Some(last) if last.role == message.role && message.role != "tool" => {
                last.content.push_str("\n\n");
                last.content.push_str(&message.content);
            }
            _ => collated.push(message.clone()),
        }
    }
    (system.join("\n\n"), collated)
}

/// The generate endpoint's conversation: the system prompt, then the prompt as a user turn.
fn generate_messages(system: &str, prompt: &str) -> Vec<Message> {
    let system = (!system.is_empty()).then(|| Message::new("system", system));
    system
        .into_iter()
        .chain([Message::new("user", prompt)])
        .collect()
}

fn read_messages(items: &[Value]) -> Result<Vec<Message>> {
    let mut messages = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let object = item
            .as_object()
            .ok_or_else(|| refused(format!("messages[{i}] must be an object")))?;
        let tool_name = tool_name(object, items)?;
        read_message(object, tool_name, &mut messages).map_err(within(format!("messages[{i}]")))?;
    }
    Ok(messages)
}

/// One client message as Ollama's OpenAI layer maps it: a list of text parts becomes
/// one message per part (collate joins them again), with the tool calls on the last.
/// Except a tool result's parts: Ollama makes one result of each, which collate leaves
/// apart, so a template pairing results with calls in order would see more results than
/// calls; here they stay one result, their texts joined by a newline (as vLLM and
/// llama.cpp's server join parts).
fn read_message(
    object: &Map<String, Value>,
    tool_name: String,
    out: &mut Vec<Message>,
) -> Result<()> {
    let role = string_field(object, "role")?;
    let tool_calls = read_tool_calls(object.get("tool_calls"))?;
    let message = Message {
        role: role.clone(),
        thinking: first_string(object, &["thinking", "reasoning", "reasoning_content"])?,
        tool_calls,
        tool_name,
        tool_call_id: string_field(object, "tool_call_id")?,
        ..Message::default()
    };
    match object.get("content") {
        None | Some(Value::Null) => out.push(message),
        Some(Value::String(text)) => out.push(Message {
            content: text.clone(),
            ..message
        }),
        Some(Value::Array(parts)) if role == "tool" => {
            let texts = parts.iter().map(text_part).collect::<Result<Vec<_>>>()?;
            out.push(Message {
                content: texts.join("\n"),
                ..message
            });
        }
        Some(Value::Array(parts)) => {
            for part in parts {
                out.push(Message::new(role.clone(), text_part(part)?));
            }
            match out.last_mut() {
                Some(last) if !parts.is_empty() => {
                    last.tool_calls = message.tool_calls;
                    last.tool_name = message.tool_name;
                    last.tool_call_id = message.tool_call_id;
                    last.thinking = message.thinking;
                }
                _ => out.push(message),
            }
        }
        Some(_) => return Err(refused("content must be a string or a list")),
    }
    Ok(())
}

fn text_part(part: &Value) -> Result<String> {
    match (part.get("type").and_then(Value::as_str), part.get("text")) {
        (Some("text"), Some(Value::String(text))) => Ok(text.clone()),
        (Some(kind), _) => Err(refused(format!(
            "content parts of type {kind:?} are not supported"
        ))),
        _ => Err(refused(
            "a content part must be {\"type\": \"text\", \"text\": …}",
        )),
    }
}

/// A tool result's tool: `tool_name` (Ollama), `name` (OpenAI), or the name of the
/// call its `tool_call_id` answers.
fn tool_name(object: &Map<String, Value>, all: &[Value]) -> Result<String> {
    if object.get("role").and_then(Value::as_str) != Some("tool") {
        return string_field(object, "tool_name");
    }
    let named = first_string(object, &["tool_name", "name"])?;
    if !named.is_empty() {
        return Ok(named);
    }
    let id = string_field(object, "tool_call_id")?;
    if id.is_empty() {
        return Ok(String::new());
    }
    let calls = all
        .iter()
        .filter_map(|message| message.get("tool_calls")?.as_array())
        .flatten();
    Ok(calls
        .filter(|call| call.get("id").and_then(Value::as_str) == Some(id.as_str()))
        .find_map(|call| Some(call.get("function")?.get("name")?.as_str()?.to_owned()))
        .unwrap_or_default())
}

fn read_tool_calls(value: Option<&Value>) -> Result<Vec<ToolCall>> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(refused("tool_calls must be a list")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, call)| read_tool_call(call).map_err(within(format!("tool_calls[{i}]"))))
        .collect()
}

fn read_tool_call(call: &Value) -> Result<ToolCall> {
    let call = call
        .as_object()
        .ok_or_else(|| refused("a tool call must be an object"))?;
    let function = match call.get("function") {
        Some(Value::Object(function)) => function,
        _ => return Err(refused("a tool call needs a function object")),
    };
    let index = match function.get("index") {
        None | Some(Value::Null) => 0,
        Some(index) => index
            .as_i64()
            .ok_or_else(|| refused("function.index must be an integer"))?,
    };
    Ok(ToolCall {
        id: string_field(call, "id")?,
        function: ToolCallFunction {
            index,
            name: string_field(function, "name")?,
            arguments: read_arguments(function.get("arguments"))?,
        },
    })
}

/// Arguments as an object (Ollama) or a string holding one (OpenAI).
fn read_arguments(value: Option<&Value>) -> Result<BTreeMap<String, GoAny>> {
    let parsed;
    let value = match value {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|err| refused("arguments are not JSON").with_source(err))?;
            &parsed
        }
        Some(value) => value,
    };
    match GoAny::from(value) {
        GoAny::Object(map) => Ok(map),
        GoAny::Null => Ok(BTreeMap::new()),
        _ => Err(refused("arguments must be a JSON object")),
    }
}

fn read_tools(value: Option<&Value>) -> Result<Option<Vec<Tool>>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|err| refused("tools").with_source(err)),
    }
}

fn read_think(value: Option<&Value>) -> Result<Option<Think>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(on)) => Ok(Some(Think::Enabled(*on))),
        Some(Value::String(level)) => Ok(Some(Think::Level(level.clone()))),
        Some(_) => Err(refused("think must be true, false or a level")),
    }
}

/// A string field, `""` when absent or null.
fn string_field(object: &Map<String, Value>, key: &str) -> Result<String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(refused(format!("{key} must be a string"))),
    }
}

/// The first of `keys` that holds a non-empty string.
fn first_string(object: &Map<String, Value>, keys: &[&str]) -> Result<String> {
    for key in keys {
        let text = string_field(object, key)?;
        if !text.is_empty() {
            return Ok(text);
        }
    }
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_and_ollama_shapes_map_to_the_same_messages() {
        let ollama = OllamaRequest::from_json(&json!({"messages": [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "function": {"name": "f", "arguments": {"b": 1, "a": [true]}}}]},
            {"role": "tool", "content": "ok", "tool_name": "f", "tool_call_id": "c1"}
        ]}))
        .unwrap();
        let openai = OllamaRequest::from_json(&json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":[true],\"b\":1}"}}]},
            {"role": "tool", "content": [{"type": "text", "text": "ok"}], "tool_call_id": "c1"}
        ]}))
        .unwrap();
        assert_eq!(ollama, openai);
        assert_eq!(openai.messages[1].tool_name, "f");
    }

    #[test]
    fn a_tool_result_given_as_parts_stays_one_result() {
        let request = OllamaRequest::from_json(&json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "tool", "tool_call_id": "c1", "content": [
                {"type": "text", "text": "README.md"}, {"type": "text", "text": "src"}]}
        ]}))
        .unwrap();
        let shown: Vec<_> = request
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(
            shown,
            [("user", "a"), ("user", "b"), ("tool", "README.md\nsrc")]
        );
    }

    #[test]
    fn collate_merges_same_role_turns_but_not_tool_results() {
        let messages = [
            Message::new("system", "a"),
            Message::new("system", "b"),
            Message::new("tool", "1"),
            Message::new("tool", "2"),
        ];
        let (system, collated) = collate(&messages);
        assert_eq!(system, "a\n\nb");
        assert_eq!(collated.len(), 3);
        assert_eq!(collated[0].content, "a\n\nb");
    }

    #[test]
    fn model_defaults_go_first_unless_the_request_has_a_system_turn() {
        let request = OllamaRequest {
            messages: vec![Message::new("user", "hi")],
            ..OllamaRequest::default()
        };
        let example = [Message::new("assistant", "example")];
        let with = request.clone().with_model_defaults(Some("sys"), &example);
        let roles: Vec<_> = with.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "assistant", "user"]);
        let own = OllamaRequest {
            messages: vec![Message::new("system", "mine")],
            ..OllamaRequest::default()
        };
        assert_eq!(own.with_model_defaults(Some("sys"), &[]).messages.len(), 1);
    }

    #[test]
    fn bad_shapes_are_errors_that_say_where() {
        let err = OllamaRequest::from_json(&json!({"messages": [{"role": "user", "content": 5}]}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid chat request: messages[0]: content must be a string or a list"
        );
    }
}
