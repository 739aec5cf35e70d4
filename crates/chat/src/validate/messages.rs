//! The checks on `messages`: known roles and content part types, the fields each role
//! needs, and tool results that answer the calls before them, as OpenAI checks them.
//!
//! A tool result must follow the assistant turn whose call it answers, and every call of
//! that turn must be answered before the conversation goes on: a template given anything
//! else renders a history the model was never trained on (a result without its call, a
//! call without its result), so OpenAI refuses it and so do we.

use crate::content::{Content, ContentPart};
use crate::error::ApiError;
use crate::message::{Message, Role};

use super::refusal;

/// The roles OpenAI accepts, in the order its error lists them.
const ROLES: [&str; 6] = [
    "system",
    "assistant",
    "user",
    "function",
    "tool",
    "developer",
];

/// The content part types OpenAI accepts, in the order its error lists them.
const PART_TYPES: [&str; 5] = ["text", "image_url", "input_audio", "refusal", "file"];

/// Checks every message, then how tool results follow calls.
pub fn check(messages: &[Message]) -> Result<(), ApiError> {
    if messages.is_empty() {
        return Err(refusal::empty_array("messages"));
    }
    for (index, message) in messages.iter().enumerate() {
        check_message(index, message)?;
    }
    check_results_follow_calls(messages)
}

/// One message's role, content and the fields its role needs.
fn check_message(index: usize, message: &Message) -> Result<(), ApiError> {
    if let Role::Other(role) = &message.role {
        return Err(refusal::unsupported_value(
            &format!("messages[{index}].role"),
            role,
            &ROLES,
        ));
    }
    if let Some(Content::Parts(parts)) = &message.content {
        check_parts(index, parts)?;
    }
    let content = format!("messages[{index}].content");
    match message.role {
        Role::Assistant if says_nothing(message) => Err(refusal::missing(&content)),
        Role::System | Role::Developer | Role::User | Role::Tool if message.content.is_none() => {
            Err(refusal::missing(&content))
        }
        Role::Tool if message.tool_call_id.is_none() => {
            Err(refusal::missing(&format!("messages[{index}].tool_call_id")))
        }
        _ => Ok(()),
    }
}

/// An assistant turn with no content, no call and no refusal.
fn says_nothing(message: &Message) -> bool {
    message.content.is_none()
        && message.calls().is_empty()
        && message.function_call.is_none()
        && message.refusal.is_none()
}

/// Every part of an array content is of a type OpenAI knows.
fn check_parts(index: usize, parts: &[ContentPart]) -> Result<(), ApiError> {
    for (at, part) in parts.iter().enumerate() {
        if let ContentPart::Other(fields) = part {
            let kind = fields.get("type").and_then(|kind| kind.as_str());
            let param = format!("messages[{index}].content[{at}].type");
            return Err(match kind {
                Some(kind) => refusal::unsupported_value(&param, kind, &PART_TYPES),
                None => refusal::missing(&param),
            });
        }
    }
    Ok(())
}

/// Tool results answer the calls of the assistant turn just before them (ids compared
/// where the calls carry them), and every such call is answered before anything else.
fn check_results_follow_calls(messages: &[Message]) -> Result<(), ApiError> {
    let mut open: Option<OpenCalls> = None;
    for (index, message) in messages.iter().enumerate() {
        if message.role == Role::Tool {
            let Some(calls) = open.as_mut() else {
                return Err(refusal::out_of_order(
                    &format!("messages[{index}].role"),
                    // OpenAI's wording, its spelling included.
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".to_owned(),
                ));
            };
            calls.answer(index, message.tool_call_id.as_deref().unwrap_or_default())?;
            continue;
        }
        if let Some(calls) = open.take() {
            calls.all_answered()?;
        }
        if !message.calls().is_empty() {
            open = Some(OpenCalls::of(index, message));
        }
    }
    open.map_or(Ok(()), OpenCalls::all_answered)
}

/// The calls of one assistant turn still waiting for their results.
struct OpenCalls {
    /// The assistant turn's index.
    at: usize,
    /// The ids not answered yet; `None` where the calls carry no ids (Ollama's clients
    /// send none), so results are matched by count only.
    ids: Option<Vec<String>>,
}

impl OpenCalls {
    fn of(at: usize, message: &Message) -> Self {
        let ids: Option<Vec<String>> = message.calls().iter().map(|call| call.id.clone()).collect();
        OpenCalls { at, ids }
    }

    /// Marks the call `id` answered by the result at `index`.
    fn answer(&mut self, index: usize, id: &str) -> Result<(), ApiError> {
        let Some(ids) = self.ids.as_mut() else {
            return Ok(());
        };
        match ids.iter().position(|open| open == id) {
            Some(found) => {
                ids.remove(found);
                Ok(())
            }
            None => Err(refusal::out_of_order(
                &format!("messages[{index}].tool_call_id"),
                format!(
                    "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
                ),
            )),
        }
    }

    /// Refuses the turn when one of its calls has no result.
    fn all_answered(self) -> Result<(), ApiError> {
        match self.ids {
            Some(ids) if !ids.is_empty() => Err(refusal::out_of_order(
                &format!("messages[{}].role", self.at),
                format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    ids.join(", ")
                ),
            )),
            _ => Ok(()),
        }
    }
}
