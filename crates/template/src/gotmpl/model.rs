//! Ollama's request types (`api.Message`, `api.Tool`, …), as its Go server holds them.
//!
//! A Go template sees Ollama's structs, not the JSON a client sent: unknown fields are
//! gone, numbers are `float64`, maps print and marshal with sorted keys, and a tool's
//! `String()` is `json.Marshal` of exactly these fields in this order (`omitempty`
//! where Go has it). These types carry that shape; [`super::values`] turns them into
//! template values and [`super::request`] reads them from a chat request.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// A decoded JSON value as Go's `any` holds it: every number a `float64`, every object
/// a `map[string]any` (which Go prints and marshals in key order).
#[derive(Clone, Debug, PartialEq)]
pub enum GoAny {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<GoAny>),
    Object(BTreeMap<String, GoAny>),
}

impl From<&serde_json::Value> for GoAny {
    fn from(value: &serde_json::Value) -> GoAny {
        use serde_json::Value;
        match value {
            Value::Null => GoAny::Null,
            Value::Bool(b) => GoAny::Bool(*b),
            Value::Number(n) => GoAny::Number(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => GoAny::String(s.clone()),
            Value::Array(items) => GoAny::Array(items.iter().map(GoAny::from).collect()),
            Value::Object(map) => GoAny::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), GoAny::from(v)))
                    .collect(),
            ),
        }
    }
}

impl Serialize for GoAny {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            GoAny::Null => serializer.serialize_unit(),
            GoAny::Bool(b) => serializer.serialize_bool(*b),
            GoAny::Number(n) => serializer.serialize_f64(*n),
            GoAny::String(s) => serializer.serialize_str(s),
            GoAny::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            GoAny::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    out.serialize_entry(key, value)?;
                }
                out.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for GoAny {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<GoAny, D::Error> {
        serde_json::Value::deserialize(deserializer).map(|value| GoAny::from(&value))
    }
}

/// `api.Message`: one turn of the conversation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Message {
    pub role: String,
    pub content: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_call_id: String,
}

impl Message {
    /// A message with only a role and text.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
            ..Message::default()
        }
    }
}

/// `api.ToolCall`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolCall {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub function: ToolCallFunction,
}

/// `api.ToolCallFunction`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolCallFunction {
    pub index: i64,
    pub name: String,
    pub arguments: BTreeMap<String, GoAny>,
}

/// `api.Tool`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tool {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<GoAny>,
    pub function: ToolFunction,
}

/// `api.ToolFunction`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolFunction {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub parameters: ToolFunctionParameters,
}

/// `api.ToolFunctionParameters`: the top of a tool's JSON schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolFunctionParameters {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(rename = "$defs", skip_serializing_if = "Option::is_none")]
    pub defs: Option<GoAny>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<GoAny>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// `None` is Go's nil map, which marshals as `null`.
    pub properties: Option<BTreeMap<String, ToolProperty>>,
}

/// `api.ToolProperty`: one parameter's schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolProperty {
    #[serde(rename = "anyOf", skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<ToolProperty>,
    #[serde(rename = "type", skip_serializing_if = "PropertyType::is_empty")]
    pub kind: PropertyType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<GoAny>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub enumeration: Vec<GoAny>,
    /// An object parameter's own parameters. Ollama dropped these for a while (its issue
    /// #13472, fixed by #13508); a prompt without them misleads the model, so they stay.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, ToolProperty>,
}

impl ToolProperty {
    /// `ToolProperty.ToTypeScriptType`: the TypeScript type of this parameter.
    pub fn typescript_type(&self) -> String {
        typescript_type(&self.kind.0)
    }
}

/// The TypeScript type for JSON Schema type names, joined with ` | `; `any` for none.
pub fn typescript_type(types: &[String]) -> String {
    if types.is_empty() {
        return "any".into();
    }
    let mapped: Vec<&str> = types
        .iter()
        .map(|name| match name.as_str() {
            "string" => "string",
            "number" | "integer" => "number",
            "boolean" => "boolean",
            "array" => "any[]",
            "object" => "Record<string, any>",
            "null" => "null",
            _ => "any",
        })
        .collect();
    mapped.join(" | ")
}

/// `api.PropertyType`: a JSON Schema `type`, one name or several.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropertyType(pub Vec<String>);

impl PropertyType {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `PropertyType.String()`: the one name, or Go's `[a b]` for several.
    pub fn go_string(&self) -> String {
        match self.0.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(" ")),
        }
    }
}

impl Serialize for PropertyType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => serializer.serialize_str(one),
            many => many.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for PropertyType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PropertyType, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        Ok(match OneOrMany::deserialize(deserializer)? {
            OneOrMany::One(name) => PropertyType(vec![name]),
            OneOrMany::Many(names) => PropertyType(names),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::gojson;

    #[test]
    fn a_tool_marshals_with_gos_fields_and_order() {
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"b": {"type": ["string", "null"], "default": 1}, "a": {"type": "integer"}},
                    "required": ["a"],
                    "additionalProperties": false
                }
            }
        }))
        .unwrap();
        assert_eq!(
            gojson::to_string(&tool),
            r#"{"type":"function","function":{"name":"f","parameters":{"type":"object","required":["a"],"properties":{"a":{"type":"integer"},"b":{"type":["string","null"]}}}}}"#
        );
    }

    #[test]
    fn typescript_types_follow_ollama() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(typescript_type(&names(&["integer"])), "number");
        assert_eq!(
            typescript_type(&names(&["string", "null"])),
            "string | null"
        );
        assert_eq!(typescript_type(&names(&["object"])), "Record<string, any>");
        assert_eq!(typescript_type(&[]), "any");
    }
}
