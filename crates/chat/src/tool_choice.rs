//! `tool_choice`: whether the model may, must or must not call tools, and which.
//!
//! Peers have shipped servers that parse `tool_choice` and then ignore it. Here it is a
//! closed type with the three shapes OpenAI defines, and the questions a dialect must answer
//! from it ([`ToolChoice::requires_call`], [`ToolChoice::allows_calls`],
//! [`ToolChoice::allowed_names`]) are methods, so forcing or restricting calls is one call away.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::json;
use crate::tool::ToolType;

/// The request's `tool_choice`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// `"auto"`, `"none"` or `"required"`.
    #[serde(skip)]
    Mode(ToolChoiceMode),
    /// `{"type": "function", "function": {"name": "…"}}`: this function must be called.
    Function { function: FunctionName },
    /// `{"type": "allowed_tools", "allowed_tools": {"mode": …, "tools": […]}}`: only these
    /// tools may be called, and with mode `required` one of them must be.
    AllowedTools { allowed_tools: AllowedTools },
}

/// The string forms of `tool_choice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoiceMode {
    /// The model decides whether to call tools.
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
}

/// `{"name": "…"}`, naming a function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FunctionName {
    pub name: String,
}

/// The `allowed_tools` object of an allowed-tools choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowedTools {
    pub mode: AllowedToolsMode,
    pub tools: Vec<NamedTool>,
}

/// Whether one of the allowed tools may or must be called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowedToolsMode {
    Auto,
    Required,
}

/// `{"type": "function", "function": {"name": "…"}}`, an entry of `allowed_tools.tools`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NamedTool {
    #[serde(rename = "type")]
    pub kind: ToolType,
    pub function: FunctionName,
}

impl NamedTool {
    /// The function tool called `name`.
    pub fn function(name: impl Into<String>) -> Self {
        NamedTool {
            kind: ToolType::Function,
            function: FunctionName { name: name.into() },
        }
    }
}

impl ToolChoice {
    /// `{"type": "function", "function": {"name": name}}`.
    pub fn function(name: impl Into<String>) -> Self {
        ToolChoice::Function {
            function: FunctionName { name: name.into() },
        }
    }

    /// Whether the model must call a tool.
    pub fn requires_call(&self) -> bool {
        match self {
            ToolChoice::Mode(mode) => *mode == ToolChoiceMode::Required,
            ToolChoice::Function { .. } => true,
            ToolChoice::AllowedTools { allowed_tools } => {
                allowed_tools.mode == AllowedToolsMode::Required
            }
        }
    }

    /// Whether the model may call a tool at all (false only for `"none"`).
    pub fn allows_calls(&self) -> bool {
        *self != ToolChoice::Mode(ToolChoiceMode::None)
    }

    /// The names of the only functions that may be called, or `None` when every tool of
    /// the request may be.
    pub fn allowed_names(&self) -> Option<Vec<&str>> {
        match self {
            ToolChoice::Mode(_) => None,
            ToolChoice::Function { function } => Some(vec![function.name.as_str()]),
            ToolChoice::AllowedTools { allowed_tools } => Some(
                allowed_tools
                    .tools
                    .iter()
                    .map(|tool| tool.function.name.as_str())
                    .collect(),
            ),
        }
    }
}

impl From<ToolChoiceMode> for ToolChoice {
    fn from(mode: ToolChoiceMode) -> Self {
        ToolChoice::Mode(mode)
    }
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::Mode(mode) => mode.serialize(serializer),
            object => ToolChoice::serialize(object, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let parsed = match value {
            Value::String(_) => ToolChoiceMode::deserialize(value).map(ToolChoice::Mode),
            Value::Object(_) => ToolChoice::deserialize(value),
            other => {
                return Err(de::Error::custom(format_args!(
                    "tool_choice must be \"auto\", \"none\", \"required\" or an object, found {}",
                    json::kind(&other)
                )))
            }
        };
        parsed.map_err(de::Error::custom)
    }
}
