//! The non-streaming response: `{"object": "chat.completion", "choices": […], "usage": …}`.
//!
//! A response is written the way OpenAI writes it, `null`s included (`"content": null` next
//! to tool calls, `"logprobs": null`, `"refusal": null`), because clients written against
//! OpenAI index those keys directly. It also reads responses from remote engines, keeping
//! keys it does not know in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::logprobs::ChoiceLogprobs;
use crate::message::{Message, Role};
use crate::open_enum::open_enum;
use crate::tool_call::ToolCall;
use crate::usage::Usage;

/// The `object` of a response.
pub const CHAT_COMPLETION_OBJECT: &str = "chat.completion";

open_enum! {
    /// Why the model stopped.
    pub enum FinishReason {
        /// A stop sequence or the end-of-turn token.
        Stop => "stop",
        /// The token limit.
        Length => "length",
        /// The model called tools.
        ToolCalls => "tool_calls",
        ContentFilter => "content_filter",
        /// The legacy single function call.
        FunctionCall => "function_call",
    }
}

/// A chat-completions response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub id: String,
    /// `"chat.completion"`.
    pub object: String,
    /// Unix time in seconds.
    pub created: u64,
    pub model: String,
    pub choices: Vec<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatResponse {
    /// A response with these choices and no usage.
    pub fn new(
        id: impl Into<String>,
        created: u64,
        model: impl Into<String>,
        choices: Vec<Choice>,
    ) -> Self {
        ChatResponse {
            id: id.into(),
            object: CHAT_COMPLETION_OBJECT.to_owned(),
            created,
            model: model.into(),
            choices,
            usage: None,
            system_fingerprint: None,
            extra: Map::new(),
        }
    }
}

/// One of a response's `choices`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub index: u32,
    pub message: ResponseMessage,
    /// Always written, `null` when not requested.
    #[serde(default)]
    pub logprobs: Option<ChoiceLogprobs>,
    /// Always written.
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Choice {
    /// Choice `index` with this message and finish reason.
    pub fn new(index: u32, message: ResponseMessage, finish_reason: FinishReason) -> Self {
        Choice {
            index,
            message,
            logprobs: None,
            finish_reason: Some(finish_reason),
            extra: Map::new(),
        }
    }
}

/// The assistant message of a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    pub role: Role,
    /// Always written: `null` when the model only called tools.
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Always written, `null` unless the model refused.
    #[serde(default)]
    pub refusal: Option<String>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponseMessage {
    /// An assistant message with this content, reasoning and calls (`None` or empty for none).
    pub fn assistant(
        content: Option<String>,
        reasoning_content: Option<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        ResponseMessage {
            role: Role::Assistant,
            content,
            reasoning_content,
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
            refusal: None,
            extra: Map::new(),
        }
    }

    /// The message as it goes into the next request's history.
    pub fn into_message(self) -> Message {
        Message {
            content: self.content.map(Content::Text),
            reasoning_content: self.reasoning_content,
            tool_calls: self.tool_calls,
            refusal: self.refusal,
            extra: self.extra,
            ..Message::new(self.role)
        }
    }
}
