//! Argument values written as text (XML-style formats: Qwen3-Coder's `<parameter=k>v`,
//! GLM's `<arg_value>v`), given back their JSON types from the tool's schema.
//!
//! These formats print a string argument as it is and anything else as JSON (or as Python
//! prints it: `True`), so `12` may be the number twelve or the string "12". Peers that read
//! every value as a string hand clients `"12"` for an integer parameter; here the declared
//! type decides: `integer` / `number` / `boolean` / `null` read as such when the text is
//! one, `object` / `array` as JSON, `string` as the text itself. A value the schema does
//! not describe (an unknown tool or parameter, or no tools at all) is JSON when it reads as
//! JSON (so `"12"`, quoted, is the string), the text otherwise. A value that does not fit its declared type stays text, so
//! the arguments still say what the model wrote.

use std::collections::HashMap;

use serde_json::{Map, Value};
use toolbridge_chat::Tool;

/// The declared parameters of each tool, by tool name.
#[derive(Debug, Clone, Default)]
pub struct ParameterTypes {
    tools: HashMap<String, Map<String, Value>>,
}

impl ParameterTypes {
    /// Each tool's declared `properties`; a name declared twice keeps its first.
    pub fn new(tools: &[&Tool]) -> Self {
        let mut by_name = HashMap::new();
        for tool in tools {
            let properties = tool
                .function
                .parameters
                .as_ref()
                .and_then(|parameters| parameters.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            by_name.entry(tool.name().to_string()).or_insert(properties);
        }
        ParameterTypes { tools: by_name }
    }

    /// The declared `properties` of `tool`.
    pub fn properties(&self, tool: &str) -> Option<&Map<String, Value>> {
        self.tools.get(tool)
    }

    /// The arguments object of a call of `tool` with these `(name, text)` pairs, as JSON
    /// text.
    pub fn arguments(&self, tool: &str, pairs: &[(String, String)]) -> Option<String> {
        let properties = self.properties(tool);
        let object: Map<String, Value> = pairs
            .iter()
            .map(|(key, text)| {
                let schema = properties.and_then(|properties| properties.get(key));
                (key.clone(), typed_value(text, schema))
            })
            .collect();
        serde_json::to_string(&Value::Object(object)).ok()
    }
}

/// `text` as the value `schema` declares; see the module docs.
pub fn typed_value(text: &str, schema: Option<&Value>) -> Value {
    let types = schema.map(declared_types).unwrap_or_default();
    if types.is_empty() {
        return serde_json::from_str::<Value>(text.trim())
            .unwrap_or_else(|_| Value::String(text.to_string()));
    }
    for kind in &types {
        if let Some(value) = as_type(text, kind) {
            return value;
        }
    }
    Value::String(text.to_string())
}

fn declared_types(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(|kind| kind.as_str().map(str::to_string))
            .collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|key| schema.get(*key)?.as_array())
            .flatten()
            .flat_map(declared_types)
            .collect(),
    }
}

fn as_type(text: &str, kind: &str) -> Option<Value> {
    let trimmed = text.trim();
    match kind {
        "string" => Some(Value::String(text.to_string())),
        "integer" | "number" => match serde_json::from_str::<Value>(trimmed).ok()? {
            Value::Number(number) if kind == "number" || !number.is_f64() => {
                Some(Value::Number(number))
            }
            Value::Number(number) => {
                let float = number.as_f64()?;
                (float.fract() == 0.0 && float.abs() < 9e15).then(|| Value::from(float as i64))
            }
            _ => None,
        },
        "boolean" => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => matches!(trimmed, "null" | "None").then_some(Value::Null),
        "object" | "array" => {
            let value = serde_json::from_str::<Value>(trimmed).ok()?;
            let fits = match kind {
                "object" => value.is_object(),
                _ => value.is_array(),
            };
            fits.then_some(value)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_declared_type_decides() {
        let string = json!({"type": "string"});
        let integer = json!({"type": "integer"});
        let flag = json!({"type": "boolean"});
        let list = json!({"type": "array"});
        assert_eq!(typed_value("12", Some(&string)), json!("12"));
        assert_eq!(typed_value("12", Some(&integer)), json!(12));
        assert_eq!(typed_value("12.0", Some(&integer)), json!(12));
        assert_eq!(typed_value("twelve", Some(&integer)), json!("twelve"));
        assert_eq!(typed_value("True", Some(&flag)), json!(true));
        assert_eq!(typed_value("[1, \"a\"]", Some(&list)), json!([1, "a"]));
        assert_eq!(typed_value("[1", Some(&list)), json!("[1"));
        let nullable = json!({"type": ["integer", "null"]});
        assert_eq!(typed_value("null", Some(&nullable)), json!(null));
        assert_eq!(typed_value("3", None), json!(3));
        assert_eq!(typed_value("Paris", None), json!("Paris"));
        assert_eq!(typed_value("\"12\"", None), json!("12"));
    }
}
