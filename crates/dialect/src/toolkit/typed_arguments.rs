//! Argument types restored from the tool's schema, for syntaxes that lose them.
//!
//! Some formats write every argument as text: vLLM's Llama 4 pythonic template writes
//! `f(count="5")`, XML formats write `<parameter=count>5</parameter>`. The text alone cannot
//! say whether `"5"` was the string or the number; the tool's schema can. [`TypedArguments`]
//! wraps a dialect's parser and, for each call of a declared tool, replaces a top-level
//! argument that is a string where the schema's property wants another type by the value
//! that string spells, when it spells one of that type (`"5"` → `5` for an integer, `"true"`
//! or `"True"` → `true`, `"[3, 5]"` → `[3, 5]` for an array). Everything else is left as
//! written, and a property whose schema allows strings is never touched.
//!
//! Calls are held from their start to their end, so this suits parsers that emit a call
//! whole (every parser here does); other events pass through in order.

use serde_json::Value;
use toolbridge_chat::Tool;

use crate::events::Event;
use crate::parser::StreamParser;
use crate::toolkit::pycall::parse_calls;
use crate::toolkit::typed_args::ParameterTypes;

/// The declared tools' properties, by tool name.
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    tools: ParameterTypes,
}

impl Schemas {
    pub fn new(tools: &[&Tool]) -> Self {
        Schemas {
            tools: ParameterTypes::new(tools),
        }
    }

    /// `arguments` (JSON text) with string values retyped where `name`'s schema says so.
    pub fn retype(&self, name: &str, arguments: &str) -> Option<String> {
        let properties = self.tools.properties(name)?;
        let Ok(Value::Object(mut members)) = serde_json::from_str::<Value>(arguments) else {
            return None;
        };
        let mut changed = false;
        for (key, value) in members.iter_mut() {
            let Value::String(text) = value else {
                continue;
            };
            let Some(types) = properties.get(key).map(schema_types) else {
                continue;
            };
            if types.is_empty() || types.iter().any(|kind| kind == "string") {
                continue;
            }
            if let Some(typed) = spelled(text, &types) {
                *value = typed;
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        serde_json::to_string(&Value::Object(members)).ok()
    }
}

/// The JSON types a property's schema names (`type`, or each `anyOf`/`oneOf` branch's).
fn schema_types(schema: &Value) -> Vec<String> {
    let mut types = Vec::new();
    match schema.get("type") {
        Some(Value::String(kind)) => types.push(kind.clone()),
        Some(Value::Array(kinds)) => {
            types.extend(kinds.iter().filter_map(Value::as_str).map(str::to_string))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            types.extend(branches.iter().flat_map(schema_types));
        }
    }
    if types.is_empty() && schema.get("enum").is_some() {
        types.push("string".into());
    }
    types
}

/// The value `text` spells as JSON or as a Python literal, if it has one of `types`.
fn spelled(text: &str, types: &[String]) -> Option<Value> {
    let text = text.trim();
    let value = serde_json::from_str::<Value>(text).ok().or_else(|| {
        let calls = parse_calls(&format!("f(v={text})"))?;
        calls.into_iter().next()?.1.remove("v")
    })?;
    let fits = types.iter().any(|kind| match (kind.as_str(), &value) {
        ("integer", Value::Number(number)) => number.is_i64() || number.is_u64(),
        ("number", Value::Number(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("null", Value::Null) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        _ => false,
    });
    fits.then_some(value)
}

/// A parser whose calls' arguments are retyped from the schemas; see the module docs.
pub struct TypedArguments<P> {
    inner: P,
    schemas: Schemas,
    /// The call being held: its start and its arguments so far.
    held: Option<(Event, String)>,
}

impl<P: StreamParser> TypedArguments<P> {
    pub fn new(inner: P, schemas: Schemas) -> Self {
        TypedArguments {
            inner,
            schemas,
            held: None,
        }
    }

    fn relay(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::new();
        for event in events {
            match event {
                start @ Event::ToolCallStart { .. } => {
                    self.release(&mut out);
                    self.held = Some((start, String::new()));
                }
                Event::ToolCallArguments { index, fragment } => match &mut self.held {
                    Some((_, arguments)) => arguments.push_str(&fragment),
                    None => out.push(Event::ToolCallArguments { index, fragment }),
                },
                Event::ToolCallEnd { index } => {
                    self.release(&mut out);
                    out.push(Event::ToolCallEnd { index });
                }
                other => out.push(other),
            }
        }
        out
    }

    /// The held call's start and (retyped) arguments go out.
    fn release(&mut self, out: &mut Vec<Event>) {
        let Some((start, arguments)) = self.held.take() else {
            return;
        };
        let Event::ToolCallStart { index, name, .. } = &start else {
            return;
        };
        let index = *index;
        let arguments = self.schemas.retype(name, &arguments).unwrap_or(arguments);
        out.push(start);
        if !arguments.is_empty() {
            out.push(Event::ToolCallArguments {
                index,
                fragment: arguments,
            });
        }
    }
}

impl<P: StreamParser> StreamParser for TypedArguments<P> {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let events = self.inner.push(piece);
        self.relay(events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let events = self.inner.finish();
        let mut out = self.relay(events);
        self.release(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolbridge_chat::FunctionDefinition;

    #[test]
    fn strings_become_the_types_the_schema_names() {
        let tool = Tool::function(FunctionDefinition::new(
            "f",
            "",
            json!({"type": "object", "properties": {
                "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                "l": {"type": "array"}, "s": {"type": "string"}, "e": {"enum": ["1"]}
            }}),
        ));
        let schemas = Schemas::new(&[&tool]);
        let retyped = schemas.retype(
            "f",
            r#"{"n": "5", "x": "2.5", "b": "True", "l": "[3, 5]", "s": "7", "e": "1"}"#,
        );
        let value: Value = serde_json::from_str(&retyped.unwrap_or_default()).unwrap_or_default();
        assert_eq!(
            value,
            json!({"n": 5, "x": 2.5, "b": true, "l": [3, 5], "s": "7", "e": "1"})
        );
        assert_eq!(schemas.retype("f", r#"{"n": "five"}"#), None);
        assert_eq!(schemas.retype("g", r#"{"n": "5"}"#), None);
    }
}
