//! Streaming responses: `{"object": "chat.completion.chunk", "choices": [{"delta": …}]}`.
//!
//! Chunks are written as OpenAI writes them: every choice carries `logprobs` and
//! `finish_reason` (`null` until the last), a delta carries only what is new, and a tool call
//! is opened by a delta with its `index`, `id`, `type` and `name` (arguments `""`) and
//! continued by deltas with the same `index` and an `arguments` fragment. With
//! `stream_options.include_usage`, every chunk carries `"usage": null` and a last chunk with
//! no choices carries the usage; without it, chunks have no `usage` key at all.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::logprobs::ChoiceLogprobs;
use crate::message::Role;
use crate::response::FinishReason;
use crate::tool::ToolType;
use crate::usage::Usage;

/// The `object` of a stream chunk.
pub const CHAT_COMPLETION_CHUNK_OBJECT: &str = "chat.completion.chunk";

/// One server-sent event of a streaming response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    pub id: String,
    /// `"chat.completion.chunk"`.
    pub object: String,
    /// Unix time in seconds, the same on every chunk of a stream.
    pub created: u64,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    pub choices: Vec<ChunkChoice>,
    /// `None`: no `usage` key (usage not requested). `Some(None)`: `"usage": null` (requested,
    /// not the last chunk). `Some(Some(usage))`: the usage chunk.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<Option<Usage>>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Reads a key that is present, `null` or not, as `Some`; an absent key stays `None` by default.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

impl ChatChunk {
    /// A chunk with these choices and no `usage` key.
    pub fn new(
        id: impl Into<String>,
        created: u64,
        model: impl Into<String>,
        choices: Vec<ChunkChoice>,
    ) -> Self {
        ChatChunk {
            id: id.into(),
            object: CHAT_COMPLETION_CHUNK_OBJECT.to_owned(),
            created,
            model: model.into(),
            system_fingerprint: None,
            choices,
            usage: None,
            extra: Map::new(),
        }
    }

    /// The last chunk of a stream that asked for usage: no choices, only the usage.
    pub fn usage(
        id: impl Into<String>,
        created: u64,
        model: impl Into<String>,
        usage: Usage,
    ) -> Self {
        ChatChunk {
            usage: Some(Some(usage)),
            ..ChatChunk::new(id, created, model, Vec::new())
        }
    }
}

/// One choice of a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: Delta,
    /// Always written, `null` when not requested.
    #[serde(default)]
    pub logprobs: Option<ChoiceLogprobs>,
    /// Always written: `null` until the choice's last chunk.
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChunkChoice {
    /// Choice `index` carrying `delta`.
    pub fn new(index: u32, delta: Delta) -> Self {
        ChunkChoice {
            index,
            delta,
            logprobs: None,
            finish_reason: None,
            extra: Map::new(),
        }
    }

    /// The last chunk of choice `index`: an empty delta and why it finished.
    pub fn finish(index: u32, finish_reason: FinishReason) -> Self {
        ChunkChoice {
            finish_reason: Some(finish_reason),
            ..ChunkChoice::new(index, Delta::default())
        }
    }
}

/// What a chunk adds to a choice's message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Set on a choice's first chunk only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Keys not listed above, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Delta {
    /// A choice's first delta, as OpenAI sends it: `{"role": "assistant", "content": ""}`.
    pub fn start() -> Self {
        Delta {
            role: Some(Role::Assistant),
            content: Some(String::new()),
            ..Delta::default()
        }
    }

    /// A piece of content.
    pub fn content(text: impl Into<String>) -> Self {
        Delta {
            content: Some(text.into()),
            ..Delta::default()
        }
    }

    /// A piece of reasoning.
    pub fn reasoning(text: impl Into<String>) -> Self {
        Delta {
            reasoning_content: Some(text.into()),
            ..Delta::default()
        }
    }

    /// A piece of one tool call.
    pub fn tool_call(call: ToolCallDelta) -> Self {
        Delta {
            tool_calls: Some(vec![call]),
            ..Delta::default()
        }
    }
}

/// A piece of one tool call, which `index` identifies across chunks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionCallDelta>,
}

impl ToolCallDelta {
    /// The first piece of call `index`: its id and name, with arguments `""`.
    pub fn start(index: u32, id: impl Into<String>, name: impl Into<String>) -> Self {
        ToolCallDelta {
            index,
            id: Some(id.into()),
            kind: Some(ToolType::Function),
            function: Some(FunctionCallDelta {
                name: Some(name.into()),
                arguments: Some(String::new()),
            }),
        }
    }

    /// A fragment of call `index`'s arguments text.
    pub fn arguments(index: u32, fragment: impl Into<String>) -> Self {
        ToolCallDelta {
            index,
            function: Some(FunctionCallDelta {
                name: None,
                arguments: Some(fragment.into()),
            }),
            ..ToolCallDelta::default()
        }
    }
}

/// The `function` of a tool-call delta.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}
