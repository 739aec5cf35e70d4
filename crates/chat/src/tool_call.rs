//! Tool calls: the calls an assistant message made, and their arguments.
//!
//! OpenAI sends `function.arguments` as a string of JSON; Hugging Face templates, Ollama and
//! our seed conversations use a JSON object. Templates differ in which they can print
//! (`arguments | tojson` versus `arguments | items`), and a request must come back out
//! unchanged, so [`Arguments`] keeps which one it was and converts on demand.

use std::borrow::Cow;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::chat_error::{ChatError, ChatErrorKind};
use crate::faithful::{faithful, Layout};
use crate::json;
use crate::tool::ToolType;

/// One element of an assistant message's `tool_calls`.
///
/// `id` and `type` are required by OpenAI but left out by many template test conversations
/// and by Ollama, so both are optional here and written back only when they were given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ToolCall {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolType>,
    pub function: FunctionCall,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(ToolCall);

impl ToolCall {
    /// A function call with an id, as OpenAI writes one: `{"id", "type": "function", "function"}`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Arguments) -> Self {
        ToolCall {
            id: Some(id.into()),
            kind: Some(ToolType::Function),
            function: FunctionCall::new(name, arguments),
            ..ToolCall::default()
        }
    }

    /// The called function's name.
    pub fn name(&self) -> &str {
        &self.function.name
    }
}

/// The `function` of a tool call (also the legacy `function_call` of an assistant message).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct FunctionCall {
    pub name: String,
    pub arguments: Arguments,
    /// Keys not listed above (Ollama's `index`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(FunctionCall);

impl FunctionCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Arguments) -> Self {
        FunctionCall {
            name: name.into(),
            arguments,
            ..FunctionCall::default()
        }
    }
}

/// A call's arguments, in the form they were given.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// A string holding JSON, as OpenAI sends it: `"{\"a\": 1}"`. It is not checked: models
    /// and clients do send text that is not JSON, and it must survive a round trip.
    Text(String),
    /// A JSON object, as Hugging Face templates and Ollama use it: `{"a": 1}`.
    Object(Map<String, Value>),
}

impl Default for Arguments {
    /// No arguments: `{}`.
    fn default() -> Self {
        Arguments::Object(Map::new())
    }
}

impl Arguments {
    /// The arguments as a string of JSON, as OpenAI clients expect them: text as it is, an
    /// object printed compactly (`{"a":1}`).
    pub fn as_json_string(&self) -> Cow<'_, str> {
        match self {
            Arguments::Text(text) => Cow::Borrowed(text),
            Arguments::Object(object) => Cow::Owned(Value::Object(object.clone()).to_string()),
        }
    }

    /// The arguments as a JSON value: an object as it is, text parsed (text that is not
    /// JSON is a [`ChatErrorKind::ArgumentsJson`]).
    pub fn to_value(&self) -> Result<Value, ChatError> {
        match self {
            Arguments::Text(text) => serde_json::from_str(text).map_err(|error| {
                ChatError::new(ChatErrorKind::ArgumentsJson, "").with_source(error)
            }),
            Arguments::Object(object) => Ok(Value::Object(object.clone())),
        }
    }

    /// The arguments as a JSON object, which is what templates that iterate over them need
    /// (other JSON is a [`ChatErrorKind::ArgumentsNotObject`]).
    pub fn to_object(&self) -> Result<Map<String, Value>, ChatError> {
        match self.to_value()? {
            Value::Object(object) => Ok(object),
            other => Err(ChatError::new(
                ChatErrorKind::ArgumentsNotObject,
                json::kind(&other),
            )),
        }
    }
}

impl From<Map<String, Value>> for Arguments {
    fn from(object: Map<String, Value>) -> Self {
        Arguments::Object(object)
    }
}

impl From<String> for Arguments {
    fn from(text: String) -> Self {
        Arguments::Text(text)
    }
}

impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Arguments::Text(text) => serializer.serialize_str(text),
            Arguments::Object(object) => object.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Arguments::Text(text)),
            Value::Object(object) => Ok(Arguments::Object(object)),
            other => Err(de::Error::custom(format_args!(
                "tool call arguments must be a JSON string or a JSON object, found {}",
                json::kind(&other)
            ))),
        }
    }
}
