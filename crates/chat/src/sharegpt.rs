//! ShareGPT conversations (`{"from": …, "value": …}`) to OpenAI messages and back.
//!
//! Fine-tuning datasets in LLaMA-Factory's ShareGPT format, and templates written for them
//! (seed 004: a Gemma-style template with ReAct `Action:` / `Action Input:` calls), speak of
//! `human`, `gpt`, `system`, `function_call` and `observation` turns. This module maps them
//! onto OpenAI messages so the rest of the system sees one shape, and back so such templates
//! can render OpenAI requests.
//!
//! Reading ([`to_openai`]):
//! * `human` → `user`; its value is a string, or a list of content parts (seed 004 renders
//!   `text`, `image` and `audio` items), kept as parts.
//! * `gpt` → `assistant`; `system` → `system`.
//! * `function_call` → an assistant message with `tool_calls`. The value is a call
//!   `{"name", "arguments"}` or a list of calls, either as JSON text (LLaMA-Factory) or as
//!   JSON itself (seed 004 reads `func_call.name`); `arguments` may be an object or a string
//!   of JSON and stays what it was. Calls get ids `call_0`, `call_1`, … numbered across the
//!   conversation. A `function_call` straight after a `gpt` turn joins that turn's message:
//!   in OpenAI terms it is one assistant turn that talks and calls.
//! * `observation` → a `tool` message answering the next unanswered call of the latest
//!   `function_call` (its id in `tool_call_id`, its function in `name`).
//!
//! Writing ([`from_openai`]) is the reverse. `developer` becomes `system`, `tool` and
//! legacy `function` messages become `observation`s in the order they come, and an assistant
//! message that talks and calls becomes a `gpt` turn followed by a `function_call` turn.
//! ShareGPT has no place for call ids, reasoning or refusals; they are not written.

use std::collections::VecDeque;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::chat_error::{ChatError, ChatErrorKind};
use crate::content::{Content, ContentPart};
use crate::json;
use crate::message::{Message, Role};
use crate::tool::ToolType;
use crate::tool_call::{Arguments, FunctionCall, ToolCall};

/// Who speaks a ShareGPT turn: the `from` field. Any other value fails to parse, with
/// serde's "unknown variant" message listing these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    System,
    Human,
    Gpt,
    FunctionCall,
    Observation,
}

impl Speaker {
    /// The speaker as ShareGPT files write it (`"function_call"`).
    pub fn name(self) -> &'static str {
        match self {
            Speaker::System => "system",
            Speaker::Human => "human",
            Speaker::Gpt => "gpt",
            Speaker::FunctionCall => "function_call",
            Speaker::Observation => "observation",
        }
    }
}

impl fmt::Display for Speaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One ShareGPT turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareGptMessage {
    pub from: Speaker,
    /// A string, except: a `human` turn may hold a list of content parts, and a
    /// `function_call` turn the call itself as JSON.
    pub value: Value,
}

impl ShareGptMessage {
    /// A turn whose value is text.
    pub fn text(from: Speaker, text: impl Into<String>) -> Self {
        ShareGptMessage {
            from,
            value: Value::String(text.into()),
        }
    }
}

/// How [`from_openai`] writes the value of a `function_call` turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallEncoding {
    /// JSON text, as LLaMA-Factory datasets store it:
    /// `"{\"name\":\"f\",\"arguments\":{\"a\":1}}"` (a list of them for several calls), with
    /// each call's arguments as they were (object or string).
    JsonText,
    /// JSON itself, with the arguments as a string of JSON, as seed 004's template reads it
    /// (`'Action:' + func_call.name + '\n' + 'Action Input:' + func_call.arguments`):
    /// `{"name": "f", "arguments": "{\"a\":1}"}` (a list of them for several calls).
    Object,
}

/// Converts ShareGPT turns to OpenAI messages (see the module docs for the mapping).
pub fn to_openai(turns: &[ShareGptMessage]) -> Result<Vec<Message>, ChatError> {
    let mut reader = Reader::default();
    for (index, turn) in turns.iter().enumerate() {
        reader.read(index, turn)?;
    }
    Ok(reader.messages)
}

/// The state of a conversion to OpenAI messages.
#[derive(Default)]
struct Reader {
    messages: Vec<Message>,
    /// Calls made so far, which numbers the next call's id.
    calls_made: usize,
    /// The latest `function_call`'s calls no observation has answered yet: (id, name).
    unanswered: VecDeque<(String, String)>,
    /// Whether the previous turn was `gpt`, which a `function_call` then joins.
    after_gpt: bool,
}

impl Reader {
    fn read(&mut self, index: usize, turn: &ShareGptMessage) -> Result<(), ChatError> {
        match turn.from {
            Speaker::System => self.messages.push(Message::system(text(index, turn)?)),
            Speaker::Human => self.messages.push(Message {
                content: Some(human_content(index, turn)?),
                ..Message::new(Role::User)
            }),
            Speaker::Gpt => self.messages.push(Message::assistant(text(index, turn)?)),
            Speaker::FunctionCall => self.read_calls(index, &turn.value)?,
            Speaker::Observation => self.read_observation(index, turn)?,
        }
        self.after_gpt = turn.from == Speaker::Gpt;
        Ok(())
    }

    fn read_calls(&mut self, index: usize, value: &Value) -> Result<(), ChatError> {
        let functions = parse_calls(index, value)?;
        self.unanswered.clear();
        let calls = functions
            .into_iter()
            .map(|function| self.identify(function))
            .collect();
        match self.messages.last_mut() {
            Some(message) if self.after_gpt => message.tool_calls = Some(calls),
            _ => self.messages.push(Message::assistant_calls(calls)),
        }
        Ok(())
    }

    /// Gives a call the next id, and waits for an observation to answer it.
    fn identify(&mut self, function: FunctionCall) -> ToolCall {
        let id = format!("call_{}", self.calls_made);
        self.calls_made += 1;
        self.unanswered
            .push_back((id.clone(), function.name.clone()));
        ToolCall {
            id: Some(id),
            kind: Some(ToolType::Function),
            function,
            ..ToolCall::default()
        }
    }

    fn read_observation(&mut self, index: usize, turn: &ShareGptMessage) -> Result<(), ChatError> {
        let result = text(index, turn)?;
        let (id, name) = self
            .unanswered
            .pop_front()
            .ok_or_else(|| ChatError::from(ChatErrorKind::ShareGptUnanswered { index }))?;
        self.messages.push(Message {
            name: Some(name),
            ..Message::tool(id, result)
        });
        Ok(())
    }
}

/// The value of a turn that must be text.
fn text(index: usize, turn: &ShareGptMessage) -> Result<String, ChatError> {
    match &turn.value {
        Value::String(text) => Ok(text.clone()),
        other => Err(not_a(index, turn, "a string", other)),
    }
}

/// The content of a `human` turn: text, or a list of parts.
fn human_content(index: usize, turn: &ShareGptMessage) -> Result<Content, ChatError> {
    match &turn.value {
        Value::String(text) => Ok(Content::Text(text.clone())),
        Value::Array(parts) => Vec::<ContentPart>::deserialize(Value::Array(parts.clone()))
            .map(Content::Parts)
            .map_err(|error| {
                let kind = ChatErrorKind::ShareGptParts { index };
                ChatError::new(kind, "value is not a list of content parts").with_source(error)
            }),
        other => Err(not_a(
            index,
            turn,
            "a string or a list of content parts",
            other,
        )),
    }
}

/// A turn whose value is `found` where `expected` was.
fn not_a(index: usize, turn: &ShareGptMessage, expected: &str, found: &Value) -> ChatError {
    let kind = ChatErrorKind::ShareGptValue {
        index,
        from: turn.from.name(),
    };
    ChatError::new(kind, format!("{expected}, found {}", json::kind(found)))
}

/// The calls of a `function_call` turn, whose value is a call or a list of calls, as JSON or
/// as JSON text.
fn parse_calls(index: usize, value: &Value) -> Result<Vec<FunctionCall>, ChatError> {
    let parsed: Value;
    let value = match value {
        Value::String(text) => {
            parsed = serde_json::from_str(text).map_err(|error| {
                let kind = ChatErrorKind::ShareGptCallJson { index };
                ChatError::new(kind, "value is not valid JSON").with_source(error)
            })?;
            &parsed
        }
        other => other,
    };
    let shape =
        |problem: String| ChatError::new(ChatErrorKind::ShareGptCallShape { index }, problem);
    match value {
        Value::Object(call) => Ok(vec![parse_call(call).map_err(shape)?]),
        Value::Array(calls) if calls.is_empty() => {
            Err(shape("the list of calls is empty".to_owned()))
        }
        Value::Array(calls) => calls
            .iter()
            .enumerate()
            .map(|(position, call)| match call {
                Value::Object(call) => parse_call(call),
                other => Err(format!(
                    "call {position} must be an object {{\"name\", \"arguments\"}}, found {}",
                    json::kind(other)
                )),
            })
            .collect::<Result<_, _>>()
            .map_err(shape),
        other => Err(shape(format!(
            "expected a call {{\"name\", \"arguments\"}} or a list of calls, found {}",
            json::kind(other)
        ))),
    }
}

/// One call `{"name": "…", "arguments": {…} | "…"}`; missing arguments are `{}`.
fn parse_call(call: &Map<String, Value>) -> Result<FunctionCall, String> {
    let name = match call.get("name") {
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(format!(
                "a call's \"name\" must be a string, found {}",
                json::kind(other)
            ))
        }
        None => return Err("a call has no \"name\"".to_owned()),
    };
    let arguments = match call.get("arguments") {
        None => Arguments::default(),
        Some(Value::String(text)) => Arguments::Text(text.clone()),
        Some(Value::Object(object)) => Arguments::Object(object.clone()),
        Some(other) => {
            return Err(format!(
                "the arguments of `{name}` must be an object or a string of JSON, found {}",
                json::kind(other)
            ))
        }
    };
    Ok(FunctionCall::new(name.clone(), arguments))
}

/// Converts OpenAI messages to ShareGPT turns (see the module docs for the mapping).
pub fn from_openai(
    messages: &[Message],
    encoding: CallEncoding,
) -> Result<Vec<ShareGptMessage>, ChatError> {
    let mut turns = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        write(&mut turns, index, message, encoding)?;
    }
    Ok(turns)
}

fn write(
    turns: &mut Vec<ShareGptMessage>,
    index: usize,
    message: &Message,
    encoding: CallEncoding,
) -> Result<(), ChatError> {
    let text = message.content_text().into_owned();
    match &message.role {
        Role::System | Role::Developer => turns.push(ShareGptMessage::text(Speaker::System, text)),
        Role::User => turns.push(ShareGptMessage {
            from: Speaker::Human,
            value: human_value(index, message)?,
        }),
        Role::Assistant => write_assistant(turns, message, text, encoding),
        Role::Tool | Role::Function => {
            turns.push(ShareGptMessage::text(Speaker::Observation, text))
        }
        Role::Other(_) => {
            let role = &message.role;
            let detail = format!("role `{role}` has no ShareGPT equivalent");
            return Err(ChatError::new(
                ChatErrorKind::ShareGptRole { index },
                detail,
            ));
        }
    }
    Ok(())
}

/// A user message's value: its text, or its parts as JSON.
fn human_value(index: usize, message: &Message) -> Result<Value, ChatError> {
    match &message.content {
        Some(Content::Parts(parts)) => serde_json::to_value(parts).map_err(|error| {
            let kind = ChatErrorKind::ShareGptPartsJson { index };
            ChatError::new(kind, "content parts could not be written as JSON").with_source(error)
        }),
        _ => Ok(Value::String(message.content_text().into_owned())),
    }
}

/// An assistant message: a `gpt` turn for its text, a `function_call` turn for its calls.
fn write_assistant(
    turns: &mut Vec<ShareGptMessage>,
    message: &Message,
    text: String,
    encoding: CallEncoding,
) {
    let calls: Vec<&FunctionCall> = message
        .calls()
        .iter()
        .map(|call| &call.function)
        .chain(&message.function_call)
        .collect();
    if calls.is_empty() || !text.is_empty() {
        turns.push(ShareGptMessage::text(Speaker::Gpt, text));
    }
    if !calls.is_empty() {
        turns.push(ShareGptMessage {
            from: Speaker::FunctionCall,
            value: encode_calls(&calls, encoding),
        });
    }
}

/// The value of a `function_call` turn: one call, or a list of them.
fn encode_calls(calls: &[&FunctionCall], encoding: CallEncoding) -> Value {
    let mut encoded: Vec<Value> = calls
        .iter()
        .map(|call| encode_call(call, encoding))
        .collect();
    let value = match encoded.len() {
        1 => encoded.remove(0),
        _ => Value::Array(encoded),
    };
    match encoding {
        CallEncoding::JsonText => Value::String(value.to_string()),
        CallEncoding::Object => value,
    }
}

fn encode_call(call: &FunctionCall, encoding: CallEncoding) -> Value {
    let arguments = match (encoding, &call.arguments) {
        (CallEncoding::JsonText, Arguments::Object(object)) => Value::Object(object.clone()),
        (CallEncoding::JsonText, Arguments::Text(text)) => Value::String(text.clone()),
        (CallEncoding::Object, arguments) => Value::String(arguments.as_json_string().into_owned()),
    };
    json!({ "name": call.name, "arguments": arguments })
}
