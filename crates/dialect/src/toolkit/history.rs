//! The conversation as a family's template reads it: OpenAI's messages as JSON, past calls'
//! `arguments` as objects or as the strings OpenAI sends, `content` on a turn that only
//! calls as `null`, `""` or left out, one call per turn. Templates disagree on each of these
//! and raise on the shape they do not expect, so a family tries the shapes its templates
//! read, in order ([`default_histories`]), and none re-derives them.

use serde_json::Value;
use toolbridge_chat::ChatRequest;

use crate::dialect::messages_json;
use crate::error::DialectError;

/// The shapes of history templates read, in the order they are tried: past calls'
/// `arguments` as objects (templates that print them with `tojson`), then as the JSON
/// strings OpenAI sends (templates that concatenate them), then objects with `content: ""`
/// on turns that only call (templates that iterate or search the content of every
/// assistant turn: LFM2's, Qwen 3's `'</think>' in message.content`).
pub fn default_histories(request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
    Ok(vec![
        history_with_object_arguments(request)?,
        history_with_string_arguments(request)?,
        history_with_empty_content(request)?,
    ])
}

/// The messages as JSON, past calls' `arguments` as objects where they hold JSON objects:
/// templates print them with `tojson` and OpenAI's string form would come out quoted twice.
pub fn history_with_object_arguments(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_object_arguments(history_with_string_arguments(
        request,
    )?))
}

/// `messages` with past calls' `arguments` as objects where they hold JSON objects.
pub fn with_object_arguments(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        let Some(Value::Array(calls)) = message.get_mut("tool_calls") else {
            continue;
        };
        for call in calls {
            let Some(arguments) = call.pointer_mut("/function/arguments") else {
                continue;
            };
            if let Value::String(text) = arguments {
                if let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                    *arguments = object;
                }
            }
        }
    }
    messages
}

/// The messages as JSON, as OpenAI sends them, with `content: null` on assistant turns
/// that only call (templates test `message['content'] is none`, as `transformers` gives it).
pub fn history_with_string_arguments(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    let mut messages = messages_json(&request.messages)?;
    for message in &mut messages {
        if let Value::Object(members) = message {
            if members.contains_key("tool_calls") {
                members.entry("content").or_insert(Value::Null);
            }
        }
    }
    Ok(messages)
}

/// [`history_with_object_arguments`] with `content: ""` instead of `null` on assistant turns
/// that only call.
pub fn history_with_empty_content(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_empty_content(history_with_object_arguments(request)?))
}

/// `messages` with `content: ""` where a turn that only calls has `null`, for templates
/// that raise on a `content` that is present and not a string (Apertus').
pub fn with_empty_content(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        if let Value::Object(members) = message {
            if members.contains_key("tool_calls") && members.get("content") == Some(&Value::Null) {
                members.insert("content".into(), Value::String(String::new()));
            }
        }
    }
    messages
}

/// The messages as templates read them, past calls' arguments as objects, and `content`
/// left out where the client left it out: unlike [`history_with_object_arguments`], no
/// `null` is written for a turn that only calls, on which Gemma 3's template raises
/// "Invalid content type".
pub fn history(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_object_arguments(messages_json(&request.messages)?))
}

/// An assistant message with several calls split into one message per call, for templates
/// that take one call per turn (Llama 3.1 raises on more).
pub fn one_call_per_message(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message.get("tool_calls").and_then(Value::as_array) {
            Some(calls) if calls.len() > 1 => {
                for (at, call) in calls.iter().enumerate() {
                    let mut single = message.clone();
                    if let Some(members) = single.as_object_mut() {
                        members.insert("tool_calls".into(), Value::Array(vec![call.clone()]));
                        if at > 0 {
                            members.insert("content".into(), Value::Null);
                        }
                    }
                    out.push(single);
                }
            }
            _ => out.push(message.clone()),
        }
    }
    out
}
