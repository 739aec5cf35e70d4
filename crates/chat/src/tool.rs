//! Tool definitions: what the client says the model may call.
//!
//! The `parameters` schema is kept as an arbitrary `serde_json::Value`: the grammar crate
//! compiles it and templates print it, and both need it exactly as sent (key order included),
//! not a lossy typed model of JSON Schema.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::faithful::{faithful, Layout};

/// The `"type"` of a tool, a tool call or a named tool choice. Chat completions knows only
/// function tools; any other type is rejected with serde's "unknown variant" error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolType {
    /// `"function"`.
    #[default]
    Function,
}

/// One entry of the request's `tools`: `{"type": "function", "function": {…}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Tool {
    #[serde(rename = "type")]
    pub kind: ToolType,
    pub function: FunctionDefinition,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(Tool);

impl Tool {
    /// A function tool.
    pub fn function(function: FunctionDefinition) -> Self {
        Tool {
            function,
            ..Tool::default()
        }
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        &self.function.name
    }
}

/// A function the model may call: its name, what it does, and a JSON Schema of its arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct FunctionDefinition {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema for the arguments object, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Whether the arguments must follow the schema exactly (OpenAI structured outputs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(FunctionDefinition);

impl FunctionDefinition {
    /// A function with a name, a description and a parameters schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        FunctionDefinition {
            name: name.into(),
            description: Some(description.into()),
            parameters: Some(parameters),
            ..FunctionDefinition::default()
        }
    }
}
