//! The request body of `POST /v1/chat/completions`.
//!
//! Every field OpenAI documents is typed, together with the sampling extensions open-model
//! servers accept (`top_k`, `min_p`, `repetition_penalty`). Anything else (`reasoning_effort`,
//! `chat_template_kwargs`, `metadata`, a client's own keys) lands in `extra`, so a request
//! is never rejected for carrying a field we do not know, and it re-serializes to the JSON
//! it came from.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::faithful::{faithful, Layout};
use crate::json;
use crate::message::Message;
use crate::response_format::ResponseFormat;
use crate::tool::Tool;
use crate::tool_choice::{ToolChoice, ToolChoiceMode};

/// llama.cpp's name for `repetition_penalty`, read from the extra fields.
const LLAMA_CPP_REPEAT_PENALTY: &str = "repeat_penalty";

/// A chat-completions request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ChatRequest {
    /// Optional, as in llama.cpp's and vLLM's servers: a server with one model needs none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Open-model extension; `-1` (vLLM) or `0` (llama.cpp) turn it off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Open-model extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f64>,
    /// Open-model extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetition_penalty: Option<f64>,
    /// Deprecated by OpenAI in favour of `max_completion_tokens`, still what most clients send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Token id (as a string) to bias, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logit_bias: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(ChatRequest);

impl ChatRequest {
    /// A request for `model` with `messages` and nothing else set.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            model: Some(model.into()),
            messages,
            ..ChatRequest::default()
        }
    }

    /// The tools of the request; empty when it has none.
    pub fn tools(&self) -> &[Tool] {
        self.tools.as_deref().unwrap_or_default()
    }

    /// The tool called `name`, if the request declares one.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools().iter().find(|tool| tool.name() == name)
    }

    /// The tool choice in force: the one sent, or OpenAI's default when none was, which is
    /// `"auto"` when the request has tools and `"none"` when it has not.
    pub fn effective_tool_choice(&self) -> ToolChoice {
        match &self.tool_choice {
            Some(choice) => choice.clone(),
            None if self.tools().is_empty() => ToolChoiceMode::None.into(),
            None => ToolChoiceMode::Auto.into(),
        }
    }

    /// The variables a client asks the chat template to see (`chat_template_kwargs`, as
    /// vLLM and llama.cpp's server take them: `{"enable_thinking": false}`); `None` when it
    /// sends none; `None` too for a value that is not an object.
    pub fn chat_template_kwargs(&self) -> Option<&Map<String, Value>> {
        self.extra.get("chat_template_kwargs")?.as_object()
    }

    /// The repetition penalty asked for: `repetition_penalty` (vLLM), else llama.cpp's
    /// `repeat_penalty` when it is a number.
    pub fn effective_repetition_penalty(&self) -> Option<f64> {
        self.repetition_penalty.or_else(|| {
            self.extra
                .get(LLAMA_CPP_REPEAT_PENALTY)
                .and_then(Value::as_f64)
        })
    }

    /// Whether the model may make several calls in one turn (OpenAI's default is yes).
    pub fn allows_parallel_calls(&self) -> bool {
        self.parallel_tool_calls.unwrap_or(true)
    }

    /// The completion length limit: `max_completion_tokens`, else `max_tokens`.
    pub fn max_output_tokens(&self) -> Option<u32> {
        self.max_completion_tokens.or(self.max_tokens)
    }

    /// Whether the response should stream.
    pub fn is_stream(&self) -> bool {
        self.stream.unwrap_or(false)
    }

    /// Whether a stream should end with a usage chunk (`stream_options.include_usage`).
    pub fn wants_stream_usage(&self) -> bool {
        self.stream_options
            .as_ref()
            .and_then(|options| options.include_usage)
            .unwrap_or(false)
    }

    /// The stop sequences; empty when none were given.
    pub fn stop_sequences(&self) -> &[String] {
        self.stop.as_ref().map_or(&[], Stop::sequences)
    }
}

/// `stop`: one sequence as a string, or several as an array.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    One(String),
    Many(Vec<String>),
}

impl Stop {
    /// The stop sequences, however they were sent.
    pub fn sequences(&self) -> &[String] {
        match self {
            Stop::One(sequence) => std::slice::from_ref(sequence),
            Stop::Many(sequences) => sequences,
        }
    }
}

impl Serialize for Stop {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Stop::One(sequence) => serializer.serialize_str(sequence),
            Stop::Many(sequences) => sequences.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Stop {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(sequence) => Ok(Stop::One(sequence)),
            Value::Array(sequences) => Vec::<String>::deserialize(Value::Array(sequences))
                .map(Stop::Many)
                .map_err(de::Error::custom),
            other => Err(de::Error::custom(format_args!(
                "stop must be a string or an array of strings, found {}",
                json::kind(&other)
            ))),
        }
    }
}

/// `stream_options`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct StreamOptions {
    /// Send a last chunk with the usage of the whole request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(StreamOptions);
