//! Chat messages: one struct for every role.
//!
//! Templates and dialects treat messages uniformly (`message.role`, `message.content`,
//! `message.tool_calls`), and history rewriting moves fields between roles, so a message is
//! one struct with optional fields rather than one type per role. Whatever a client adds
//! beyond OpenAI's fields (`reasoning`, vLLM's extensions, a template's own keys) is kept in
//! `extra`, and `null`s and key order survive a round trip (see [`Layout`]).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::faithful::{faithful, Layout};
use crate::open_enum::open_enum;
use crate::tool_call::{FunctionCall, ToolCall};

open_enum! {
    /// Who wrote a message.
    pub enum Role {
        /// Instructions from the application.
        System => "system",
        /// OpenAI's newer name for system instructions.
        Developer => "developer",
        User => "user",
        Assistant => "assistant",
        /// The result of a tool call, answering `tool_call_id`.
        Tool => "tool",
        /// The legacy (pre-`tools`) result of a `function_call`.
        Function => "function",
    }
}

/// One entry of the request's `messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Message {
    pub role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// The participant's name; on `tool` and `function` messages, the function's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The calls an assistant message made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// On a `tool` message, the id of the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An assistant's reasoning ("thinking"), as vLLM, DeepSeek and llama.cpp name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// An assistant's refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// The legacy single call of an assistant message, before `tool_calls`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(Message);

impl Message {
    /// A message of `role` with no fields set.
    pub fn new(role: Role) -> Self {
        Message {
            role,
            content: None,
            name: None,
            tool_calls: None,
            tool_call_id: None,
            reasoning_content: None,
            refusal: None,
            function_call: None,
            extra: Map::new(),
            layout: Layout::default(),
        }
    }

    /// A message of `role` with text content.
    pub fn with_text(role: Role, text: impl Into<String>) -> Self {
        Message {
            content: Some(Content::Text(text.into())),
            ..Message::new(role)
        }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::with_text(Role::System, text)
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::with_text(Role::User, text)
    }

    /// An assistant message with text content.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::with_text(Role::Assistant, text)
    }

    /// An assistant message that makes `calls` and says nothing.
    pub fn assistant_calls(calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls: Some(calls),
            ..Message::new(Role::Assistant)
        }
    }

    /// A tool message answering the call `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            ..Message::with_text(Role::Tool, text)
        }
    }

    /// The text of the content (text parts joined by newlines); empty when there is none.
    pub fn content_text(&self) -> Cow<'_, str> {
        self.content
            .as_ref()
            .map_or(Cow::Borrowed(""), Content::text)
    }

    /// The tool calls this message makes; empty when it makes none.
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or_default()
    }
}
