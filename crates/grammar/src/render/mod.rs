//! Tool definitions rendered as the text that prompts show models.
//!
//! Models trained on tool calling were shown their tools in one fixed textual form, and
//! they call tools best when they see that form again, byte for byte. Each renderer here
//! reproduces one such form from an OpenAI tool list (`{"type": "function", "function":
//! {...}}` objects, or the bare function objects):
//!
//! - [`typescript`]: TypeScript declarations in a `namespace functions { … }` block, as
//!   the `functionary_v2` prompt style of seed 000 shows them and as MeetKai's Functionary
//!   templates generate them;
//! - [`python`]: Python `def` signatures with docstrings, as Cohere's Command-R templates
//!   (Hugging Face and Ollama) show them;
//! - [`functions_repr`]: the Python `repr` of the function objects, as Llama 3.x
//!   zero-shot prompts show tools (`[{'name': 'get_weather', …}]`), through
//!   `toolbridge_pyrepr`, the one copy of Python's printers.
//!
//! The schema walking they share lives here: reading a tool's name and description,
//! listing a schema's properties in order, the required set, the `type` keyword, lists
//! such as `enum`. None of it panics: a field of the wrong JSON type reads as absent,
//! and recursion stops at [`MAX_DEPTH`] with a fallback each renderer names.

pub mod python;
pub mod typescript;

use serde_json::{Map, Value};
use toolbridge_pyrepr::write_repr;

/// How deep a renderer descends into nested schemas or values before it prints its
/// fallback instead (Python's printers' own bound). Real tool schemas nest a handful of
/// levels; this bound keeps a hostile one from exhausting the stack.
pub use toolbridge_pyrepr::MAX_DEPTH;

/// The functions of a tool list as Llama 3.x zero-shot prompts show them after
/// `Customized Functions: `: the `repr` of the list of function objects, unwrapped from
/// their OpenAI `{"type": "function", "function": …}` envelopes, every key kept in order.
pub fn functions_repr(tools: &[Value]) -> String {
    let mut out = String::from("[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_repr(&mut out, function_object(tool), 1);
    }
    out.push(']');
    out
}

/// The parts of one tool that every rendering shows.
pub(crate) struct Tool<'a> {
    /// Never empty: a tool without a name cannot be called, so it is not shown.
    pub name: &'a str,
    /// Empty when absent or not a string.
    pub description: &'a str,
    /// `Value::Null` when absent; may be any JSON value.
    pub parameters: &'a Value,
}

/// The function object of a tool: the `function` member of an OpenAI tool when it is a
/// non-empty object, else the value itself.
pub(crate) fn function_object(tool: &Value) -> &Value {
    match tool.get("function") {
        Some(Value::Object(f)) if !f.is_empty() => &tool["function"],
        _ => tool,
    }
}

/// Reads a tool; `None` when it has no usable name.
pub(crate) fn tool(tool: &Value) -> Option<Tool<'_>> {
    let f = function_object(tool);
    let name = str_field(f, "name").filter(|n| !n.is_empty())?;
    Some(Tool {
        name,
        description: str_field(f, "description").unwrap_or(""),
        parameters: f.get("parameters").unwrap_or(&Value::Null),
    })
}

/// The tools of a list that can be shown, in order.
pub(crate) fn tools(list: &[Value]) -> impl Iterator<Item = Tool<'_>> {
    list.iter().filter_map(tool)
}

/// `schema[key]` when `schema` is an object holding `key`.
pub(crate) fn field<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    schema.as_object()?.get(key)
}

/// `schema[key]` when it is a string.
pub(crate) fn str_field<'a>(schema: &'a Value, key: &str) -> Option<&'a str> {
    field(schema, key)?.as_str()
}

/// `schema[key]` when it is an array (`enum`, `oneOf`, `examples`, …).
pub(crate) fn list_field<'a>(schema: &'a Value, key: &str) -> Option<&'a [Value]> {
    field(schema, key)?.as_array().map(Vec::as_slice)
}

/// `schema[key]` when it is an object.
pub(crate) fn object_field<'a>(schema: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    field(schema, key)?.as_object()
}

/// The declared properties of an object schema, in the order they were written.
pub(crate) fn properties(schema: &Value) -> impl Iterator<Item = (&str, &Value)> {
    object_field(schema, "properties")
        .into_iter()
        .flatten()
        .map(|(name, prop)| (name.as_str(), prop))
}

/// The names in the schema's `required` array. A `required` that is not an array lists
/// nothing; entries that are not strings are skipped.
pub(crate) fn required(schema: &Value) -> Vec<&str> {
    list_field(schema, "required")
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Python's truthiness, which the reference renderers test fields with: `null`, `false`,
/// zero, and empty strings, arrays and objects are false.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The `type` keyword as a list of type names: `"string"` gives one, `["string",
/// "null"]` gives each string in it, anything else none.
pub(crate) fn type_names(schema: &Value) -> Vec<&str> {
    match field(schema, "type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The alternatives of a `oneOf`, else of an `anyOf` (in that order of preference, as
/// the reference converters read them).
pub(crate) fn alternatives(schema: &Value) -> Option<&[Value]> {
    list_field(schema, "oneOf")
        .filter(|l| !l.is_empty())
        .or_else(|| list_field(schema, "anyOf"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_accept_both_shapes_and_skip_the_nameless() {
        let list = [
            json!({"type": "function", "function": {"name": "a", "description": "d"}}),
            json!({"name": "b", "parameters": {"type": "object"}}),
            json!({"type": "function", "function": {"description": "no name"}}),
            json!({"name": ""}),
            json!("not a tool"),
        ];
        let shown: Vec<_> = tools(&list)
            .map(|t| (t.name, t.description, t.parameters.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                ("a", "d", Value::Null),
                ("b", "", json!({"type": "object"}))
            ]
        );
    }

    #[test]
    fn malformed_keywords_read_as_absent() {
        let schema = json!({"properties": [1], "required": "a", "type": 3, "oneOf": {}});
        assert_eq!(properties(&schema).count(), 0);
        assert!(required(&schema).is_empty());
        assert_eq!(required(&json!({"required": ["a", 1, "b"]})), ["a", "b"]);
        assert!(type_names(&schema).is_empty());
        assert!(alternatives(&schema).is_none());
        assert_eq!(
            type_names(&json!({"type": ["string", 1, "null"]})),
            ["string", "null"]
        );
    }
}
