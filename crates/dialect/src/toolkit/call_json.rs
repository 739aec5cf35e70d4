//! Calls written as JSON objects, one or a list, with the family's own key names:
//! `{"tool_name": …, "parameters": …}` (Cohere), `{"name": …, "arguments": …}` (Granite,
//! Phi-4-mini), read out of a region's captured text once it is whole.
//!
//! Arguments are read leniently, as models write them: an object is itself, a string holding
//! a JSON object is that object, missing or `null` is `{}`; anything else makes the whole
//! region no call (so it stays content, as written). A name must be a non-empty string.
//!
//! Hermes' calls ([`written_call`]) are read as the Hermes parser always read them: in either
//! of the two shapes models write, and with the arguments' own text kept, so a client gets
//! the arguments as the model wrote them.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::toolkit::cut::CUT_MARK;
use crate::toolkit::pattern::Call;

/// The key names one family writes its calls with.
#[derive(Debug, Clone, Copy)]
pub struct CallKeys {
    pub name: &'static str,
    /// Where the arguments are; the first key present is read.
    pub arguments: &'static [&'static str],
    /// Where the model's own id for the call is, if its syntax has one.
    pub id: Option<&'static str>,
}

/// `{"name": …, "arguments": …}`, with `parameters` taken for `arguments`.
pub const NAME_ARGUMENTS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments", "parameters"],
    id: None,
};

/// The calls in `text`: one call object, or a list of them (an empty list is no call).
/// `None` when the text is not that.
pub fn calls(text: &str, keys: CallKeys) -> Option<Vec<Call>> {
    calls_in(&serde_json::from_str::<Value>(text).ok()?, keys)
}

/// The calls in a value already read: one call object, or a list of them (an empty list
/// is no call).
pub fn calls_in(value: &Value, keys: CallKeys) -> Option<Vec<Call>> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| call(item, keys)).collect()
        }
        Value::Object(_) => Some(vec![call(value, keys)?]),
        _ => None,
    }
}

/// One call object.
pub fn call(value: &Value, keys: CallKeys) -> Option<Call> {
    let Value::Object(members) = value else {
        return None;
    };
    let name = members.get(keys.name)?.as_str()?;
    if name.is_empty() {
        return None;
    }
    let arguments = keys
        .arguments
        .iter()
        .find_map(|key| members.get(*key))
        .unwrap_or(&Value::Null);
    let id = keys
        .id
        .and_then(|key| members.get(key))
        .and_then(|id| match id {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        });
    Some(Call {
        name: name.to_string(),
        arguments: arguments_text(arguments)?,
        id,
    })
}

/// The members a call written bare in content may have ([`bare_call`]).
pub const BARE_CALL_KEYS: [&str; 5] = ["name", "type", "parameters", "arguments", "id"];

/// A call written bare in content, read strictly: `{"name": …, "parameters" | "arguments":
/// …}` with no members but [`BARE_CALL_KEYS`] and a `type` of `"function"`, so an object of
/// data that has a `name` (`{"name": "Bob"}`) is no call.
pub fn bare_call(value: &Value) -> Option<Call> {
    let Value::Object(members) = value else {
        return None;
    };
    if members
        .keys()
        .any(|key| !BARE_CALL_KEYS.contains(&key.as_str()))
        || members.get("type").is_some_and(|kind| kind != "function")
    {
        return None;
    }
    let arguments = members.get("parameters").or(members.get("arguments"))?;
    let name = members
        .get("name")?
        .as_str()
        .filter(|name| !name.is_empty())?;
    Some(Call::new(name, arguments_text(arguments)?))
}

/// The arguments as JSON object text: an object, a string holding one, or `{}` for none.
/// Where the output was cut before them ([`CUT_MARK`] in their place), the mark: none
/// are written yet.
pub fn arguments_text(arguments: &Value) -> Option<String> {
    match arguments {
        Value::Null => Some(String::from("{}")),
        Value::Object(_) => serde_json::to_string(arguments).ok(),
        Value::String(text) if text.starts_with(CUT_MARK) => Some(CUT_MARK.to_string()),
        Value::String(text) => match serde_json::from_str::<Value>(text).ok()? {
            object @ Value::Object(_) => serde_json::to_string(&object).ok(),
            _ => None,
        },
        _ => None,
    }
}

/// A call object's members, each value as the text it was written with.
type Members<'a> = HashMap<String, &'a RawValue>;

/// A call written `{"name": …, "arguments": …}` (in any key order) or in OpenAI's shape
/// `{"id": …, "type": "function", "function": {"name": …, "arguments": …}}`, as seed 000's
/// history shows past calls and models then imitate. Each of the two fields is read from
/// whichever place `text` writes it first. `None` when the name is not a non-empty string.
pub fn written_call(text: &str) -> Option<Call> {
    let top: Members = serde_json::from_str(text).ok()?;
    let nested: Members = top
        .get("function")
        .and_then(|function| serde_json::from_str(function.get()).ok())
        .unwrap_or_default();
    let name = first_written(text, top.get("name"), nested.get("name"))?;
    let name: String = serde_json::from_str(name.get()).ok()?;
    if name.is_empty() {
        return None;
    }
    let arguments = first_written(text, top.get("arguments"), nested.get("arguments"));
    Some(Call::new(name, written_arguments(arguments)))
}

/// Of a field written at the top level and in `function`, the one that comes first in
/// `text` (both are slices of it).
fn first_written<'a>(
    text: &str,
    top_level: Option<&&'a RawValue>,
    in_function: Option<&&'a RawValue>,
) -> Option<&'a RawValue> {
    let offset =
        |value: &RawValue| (value.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    match (top_level, in_function) {
        (Some(top), Some(inner)) if offset(inner) < offset(top) => Some(inner),
        (Some(top), _) => Some(top),
        (None, inner) => inner.copied(),
    }
}

/// Arguments as the model wrote them: missing or `null` is `{}`, a string holding JSON is
/// that JSON, anything else (an object, or a string of plain words) its own text.
fn written_arguments(arguments: Option<&RawValue>) -> String {
    let Some(arguments) = arguments else {
        return String::from("{}");
    };
    match serde_json::from_str::<Value>(arguments.get()) {
        Ok(Value::Null) => String::from("{}"),
        Ok(Value::String(inner)) if serde_json::from_str::<Value>(&inner).is_ok() => inner,
        _ => arguments.get().to_string(),
    }
}

/// An arguments object's text, for decoders that build the object themselves.
pub fn object_text(members: Map<String, Value>) -> Option<String> {
    serde_json::to_string(&Value::Object(members)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COHERE: CallKeys = CallKeys {
        name: "tool_name",
        arguments: &["parameters"],
        id: Some("tool_call_id"),
    };

    #[test]
    fn reads_lists_and_single_objects() {
        let text = r#"[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}},
                       {"tool_name": "g"}]"#;
        let read = calls(text, COHERE).unwrap_or_default();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].arguments, r#"{"a":1}"#);
        assert_eq!(read[0].id.as_deref(), Some("0"));
        assert_eq!(read[1].arguments, "{}");
        let single = calls(
            r#"{"name": "f", "arguments": "{\"a\": 2}"}"#,
            NAME_ARGUMENTS,
        );
        assert_eq!(
            single.map(|c| c[0].arguments.clone()),
            Some(r#"{"a":2}"#.into())
        );
    }

    #[test]
    fn anything_else_is_no_call() {
        for text in [
            "[]",
            "{}",
            "[1]",
            r#"{"name": ""}"#,
            r#"{"name": "f", "arguments": 3}"#,
            "x",
        ] {
            assert_eq!(calls(text, NAME_ARGUMENTS), None, "{text}");
        }
    }
}
