//! OpenAI chat-completions wire types, for every layer of toolbridge to share.
//!
//! A request comes in as [`ChatRequest`]: [`Message`]s with [`Content`] and [`ToolCall`]s,
//! [`Tool`] definitions, a [`ToolChoice`] and a [`ResponseFormat`]. An answer goes out as a
//! [`ChatResponse`] or a stream of [`ChatChunk`]s, a failure as an [`ErrorResponse`].
//! [`sharegpt`] converts to and from the `from`/`value` conversations of fine-tuning
//! datasets, and [`bfcl`] reads the Berkeley Function Calling Leaderboard's questions as
//! requests and judges answers by its rules.
//!
//! Two promises hold for everything a client sends. Nothing is lost: fields this crate does
//! not know are kept in each object's `extra`, and a parsed request serializes back to the
//! JSON it came from, `null`s, key order and integer spellings included (see [`Layout`]).
//! Nothing crashes: any input either parses or gives a serde error.
//!
//! ```
//! use toolbridge_chat::ChatRequest;
//!
//! let body = r#"{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"add","arguments":{"a":1}}}]}],"temperature":0}"#;
//! let request: ChatRequest = serde_json::from_str(body)?;
//! let call = &request.messages[0].calls()[0];
//! assert_eq!(call.function.arguments.as_json_string(), r#"{"a":1}"#);
//! assert_eq!(serde_json::to_string(&request)?, body);
//! # Ok::<(), serde_json::Error>(())
//! ```

pub mod bfcl;
mod chat_error;
mod content;
mod error;
mod faithful;
mod json;
mod logprobs;
mod message;
mod open_enum;
mod request;
mod response;
mod response_format;
pub mod sharegpt;
mod stream;
mod tool;
mod tool_call;
mod tool_choice;
mod usage;
mod validate;

pub use chat_error::{ChatError, ChatErrorKind};
pub use content::{Content, ContentPart, FileRef, ImageUrl, InputAudio};
pub use error::{ApiError, ErrorResponse, ErrorType};
pub use faithful::Layout;
pub use logprobs::{ChoiceLogprobs, TokenLogprob, TopLogprob};
pub use message::{Message, Role};
pub use request::{ChatRequest, Stop, StreamOptions};
pub use response::{ChatResponse, Choice, FinishReason, ResponseMessage, CHAT_COMPLETION_OBJECT};
pub use response_format::{JsonSchemaFormat, ResponseFormat};
pub use stream::{
    ChatChunk, ChunkChoice, Delta, FunctionCallDelta, ToolCallDelta, CHAT_COMPLETION_CHUNK_OBJECT,
};
pub use tool::{FunctionDefinition, Tool, ToolType};
pub use tool_call::{Arguments, FunctionCall, ToolCall};
pub use tool_choice::{
    AllowedTools, AllowedToolsMode, FunctionName, NamedTool, ToolChoice, ToolChoiceMode,
};
pub use usage::{CompletionTokensDetails, PromptTokensDetails, Usage};
