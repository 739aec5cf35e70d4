//! Argument values written as text, typed back from the tool's schema: one reading for
//! every format that loses the types.
//!
//! XML-style formats (Qwen3-Coder's `<parameter=k>v`, GLM's `<arg_value>v`) print a string
//! argument as it is and anything else as JSON or as Python prints it (`True`); pythonic
//! templates may write every value as a string (vLLM's Llama 4 template writes
//! `count="5"`). The text alone cannot say whether `12` is the number twelve or the string
//! "12"; the tool's schema can, and peers that read every value as a string hand clients
//! `"12"` for an integer parameter.
//!
//! The reading follows JSON Schema: the text becomes the first value the property's schema
//! validates, trying its alternatives in this order:
//! 1. `const` and `enum` members, compared as the schema's own values (`"1"` for
//!    `{"enum": ["1", "2"]}` is the string; `1` for `{"enum": [1, 2]}` the number). A
//!    schema with members allows nothing else.
//! 2. Each non-string `type` (from a `type` list, or `anyOf` / `oneOf` branches, in order)
//!    the text spells as JSON or as a Python literal: `null` / `None` for `null`, `12` or
//!    `12.0` for `integer`, `true` / `True` for `boolean`, `[…]` for `array`, `{…}` for
//!    `object` (or a schema with `properties` / `items`), or the same inside quotes (`"42"`
//!    for `integer`, as GLM models quote a number).
//! 3. `string`: the text itself.
//!
//! So `null` for `{"type": ["string", "null"]}` is null, and a text no alternative accepts
//! stays text, so the arguments still say what the model wrote. Local `$ref`s (`#/$defs/…`,
//! `#/definitions/…`) are followed into the tool's parameters. A value whose schema says
//! nothing of its type (an unknown tool or parameter, `{}`) is [`untyped`]: JSON when it
//! reads as JSON (so `"12"`, quoted, is the string), the text otherwise.
//!
//! [`ParameterTypes::retype`] applies the same reading to a call's JSON arguments, for
//! formats that write JSON-ish arguments whose string values may stand for other types.
//! [`ParameterTypes::unwrapped`] takes a call's arguments out of the one member a model
//! wrapped them in (`{"arguments": {…}}`), where the schema says they are wrapped.

use std::collections::HashMap;

use crate::toolkit::cut::{CUT_MARK, HELD_MARK};
use serde_json::{Map, Value};
use toolbridge_chat::Tool;

use crate::toolkit::pycall::parse_literal;

/// The keys a model wraps a call's whole arguments in.
const WRAPPERS: [&str; 4] = ["arguments", "input", "parameters", "properties"];

/// How many `$ref`s and nested unions are followed before a schema counts as untyped.
const MAX_DEPTH: usize = 16;

/// The declared parameters of each tool, by tool name, their `$ref`s resolved.
#[derive(Debug, Clone, Default)]
pub struct ParameterTypes {
    tools: HashMap<String, Map<String, Value>>,
}

impl ParameterTypes {
    /// Each tool's declared `properties`; a name declared twice keeps its first.
    pub fn new(tools: &[&Tool]) -> Self {
        let mut by_name = HashMap::new();
        for tool in tools {
            let Some(parameters) = tool.function.parameters.as_ref() else {
                continue;
            };
            let properties = parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| {
                    properties
                        .iter()
                        .map(|(key, schema)| (key.clone(), resolved(schema, parameters, 0)))
                        .collect()
                })
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

    /// `object`, a call of `tool`'s arguments, out of the one member a model wrapped them
    /// in (`{"arguments": {…}}`, `{"input": "{…}"}`, [`WRAPPERS`]), as vLLM repairs them:
    /// only where the tool declares no such parameter and every key inside is declared.
    pub fn unwrapped(&self, tool: &str, object: Map<String, Value>) -> Map<String, Value> {
        let Some(properties) = self.properties(tool) else {
            return object;
        };
        let mut members = object.iter();
        let (Some((key, value)), None) = (members.next(), members.next()) else {
            return object;
        };
        if properties.contains_key(key) || !WRAPPERS.contains(&key.as_str()) {
            return object;
        }
        let inner = match value {
            Value::Object(inner) => Some(inner.clone()),
            Value::String(text) => match parse_literal(text) {
                Some(Value::Object(inner)) => Some(inner),
                _ => None,
            },
            _ => None,
        };
        match inner {
            Some(inner)
                if !inner.is_empty() && inner.keys().all(|key| properties.contains_key(key)) =>
            {
                inner
            }
            _ => object,
        }
    }

    /// `arguments` (a JSON object's text) with each string value typed as `name`'s schema
    /// reads it; `None` when nothing changes. A value the output was cut in is held
    /// ([`held`]) by its schema, or where there is none, unless it can only be text.
    pub fn retype(&self, name: &str, arguments: &str) -> Option<String> {
        let properties = self.properties(name);
        if properties.is_none() && !arguments.contains(CUT_MARK) {
            return None;
        }
        let Ok(Value::Object(mut members)) = serde_json::from_str::<Value>(arguments) else {
            return None;
        };
        let mut changed = false;
        for (key, value) in members.iter_mut() {
            let Value::String(text) = &*value else {
                continue;
            };
            let schema = properties.and_then(|properties| properties.get(key));
            let typed = held(text, schema).or_else(|| fitted(text, schema?));
            if let Some(typed) = typed {
                if typed == *value {
                    continue;
                }
                *value = typed;
                changed = true;
            }
        }
        changed.then(|| Value::Object(members).to_string())
    }

    /// [`ParameterTypes::retype`]'s arguments, or `arguments` as they are where nothing
    /// changes.
    pub fn retyped(&self, name: &str, arguments: String) -> String {
        self.retype(name, &arguments).unwrap_or(arguments)
    }
}

/// `text` as the value `schema` reads it; see the module docs.
pub fn typed_value(text: &str, schema: Option<&Value>) -> Value {
    if let Some(held) = held(text, schema) {
        return held;
    }
    match schema {
        Some(schema) if !alternatives(schema, 0).is_empty() => {
            fitted(text, schema).unwrap_or_else(|| Value::String(text.to_string()))
        }
        _ => untyped(text),
    }
}

/// `text` whose format declared it a string (`string`) or JSON, as DeepSeek's DSML and
/// Kimi K3 do: the declaration is taken where the schema allows it, the schema's reading
/// where it does not (`42` declared a string for an integer parameter is the integer;
/// `null` declared JSON for a string parameter is the string), as vLLM's schema-aware type
/// fixer reads them.
pub fn declared_value(text: &str, string: bool, schema: Option<&Value>) -> Value {
    if !string && text.contains(CUT_MARK) {
        return Value::String(HELD_MARK.to_string());
    }
    let typed = schema.filter(|schema| !alternatives(schema, 0).is_empty());
    match (string, typed) {
        (true, Some(schema)) if !may_be_string(schema) => typed_value(text, Some(schema)),
        (true, _) => Value::String(text.to_string()),
        (false, typed) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::String(json)) if typed.is_none_or(may_be_string) => Value::String(json),
            _ => typed_value(text, schema),
        },
    }
}

/// [`HELD_MARK`] for a value the output was cut in ([`CUT_MARK`] in its text) whose type
/// the rest of its text may still change, so that its arguments written so far stop before
/// it ([`crate::toolkit::cut`]): any value but one only a string can be, or, untyped, one
/// whose text so far may still be JSON (`12`, `tr`, `[1`).
fn held(text: &str, schema: Option<&Value>) -> Option<Value> {
    let (before, _) = text.split_once(CUT_MARK)?;
    let alternatives = schema.map_or_else(Vec::new, |schema| alternatives(schema, 0));
    let stays_text = match alternatives.is_empty() {
        false => alternatives
            .iter()
            .all(|alternative| matches!(alternative, Alternative::Type("string"))),
        true => before
            .trim_start()
            .starts_with(|c: char| !"-0123456789tfnTFN[{\"'".contains(c)),
    };
    (!stays_text).then(|| Value::String(HELD_MARK.to_string()))
}

/// Whether `schema` allows a string: a `string` type among its alternatives, or a string
/// member.
pub fn may_be_string(schema: &Value) -> bool {
    alternatives(schema, 0)
        .iter()
        .any(|alternative| match alternative {
            Alternative::Type(kind) => *kind == "string",
            Alternative::Member(member) => member.is_string(),
        })
}

/// A value with no declared type: JSON when it reads as JSON, else the text.
pub fn untyped(text: &str) -> Value {
    serde_json::from_str::<Value>(text.trim()).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// The first value `schema`'s alternatives accept for `text`, in the module docs' order.
fn fitted(text: &str, schema: &Value) -> Option<Value> {
    let alternatives = alternatives(schema, 0);
    let literal = literal(text);
    let unquoted = match &literal {
        Some(Value::String(inner)) => self::literal(inner),
        _ => None,
    };
    let named = alternatives
        .iter()
        .find_map(|alternative| match alternative {
            Alternative::Member(member) => {
                names(text, literal.as_ref(), member).then(|| (*member).clone())
            }
            Alternative::Type(_) => None,
        });
    let typed = || {
        alternatives
            .iter()
            .find_map(|alternative| match alternative {
                Alternative::Type(kind) if *kind != "string" => [&literal, &unquoted]
                    .into_iter()
                    .find_map(|value| value.as_ref().and_then(|value| of_type(value, kind))),
                _ => None,
            })
    };
    let string = || {
        let allowed = alternatives
            .iter()
            .any(|alternative| matches!(alternative, Alternative::Type("string")));
        allowed.then(|| Value::String(text.to_string()))
    };
    named.or_else(typed).or_else(string)
}

/// One way a schema accepts a value: a listed member, or a JSON type.
enum Alternative<'a> {
    Member(&'a Value),
    Type(&'a str),
}

/// `schema`'s alternatives in order: its `const` / `enum` members when it lists any, else
/// its types (a `type` name or list, then each `anyOf` / `oneOf` branch's).
fn alternatives(schema: &Value, depth: usize) -> Vec<Alternative<'_>> {
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    let mut members: Vec<Alternative> = schema
        .get("const")
        .map(Alternative::Member)
        .into_iter()
        .collect();
    if let Some(Value::Array(listed)) = schema.get("enum") {
        members.extend(listed.iter().map(Alternative::Member));
    }
    if !members.is_empty() {
        return members;
    }
    let mut kinds = match schema.get("type") {
        Some(Value::String(kind)) => vec![Alternative::Type(kind.as_str())],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .map(Alternative::Type)
            .collect(),
        _ if schema.get("properties").is_some() => vec![Alternative::Type("object")],
        _ if schema.get("items").is_some() => vec![Alternative::Type("array")],
        _ => Vec::new(),
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            kinds.extend(
                branches
                    .iter()
                    .flat_map(|branch| alternatives(branch, depth + 1)),
            );
        }
    }
    kinds
}

/// Whether `text` (read as `literal`) names `member`: a string member by its text, any
/// other by the value the text spells (numbers compared by value, so `1.0` names `1`).
fn names(text: &str, literal: Option<&Value>, member: &Value) -> bool {
    match member {
        Value::String(member) => member == text || member == text.trim(),
        _ => literal.is_some_and(|literal| same(member, literal)),
    }
}

/// Whether two JSON values are equal, numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The value `text` spells as JSON or as a Python literal (`True`, `None`, `'a'`).
fn literal(text: &str) -> Option<Value> {
    let text = text.trim();
    serde_json::from_str::<Value>(text)
        .ok()
        .or_else(|| parse_literal(text))
}

/// `value` as a value of JSON type `kind`, if it is one (`12.0` is the integer 12).
fn of_type(value: &Value, kind: &str) -> Option<Value> {
    let fits = match (kind, value) {
        ("integer", Value::Number(number)) => {
            if number.is_i64() || number.is_u64() {
                true
            } else {
                let float = number.as_f64()?;
                return (float.fract() == 0.0 && float.abs() < 9e15)
                    .then(|| Value::from(float as i64));
            }
        }
        ("number", Value::Number(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        _ => false,
    };
    fits.then(|| value.clone())
}

/// `schema` with its local `$ref`s, and those of its `anyOf` / `oneOf` branches, replaced
/// by their targets in `root`; a reference that points nowhere is left as written. What
/// the parser reads a value by is what the grammar writes it by
/// ([`crate::dialect::declared_parameters`]).
pub(crate) fn resolved(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return schema.clone();
    }
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| root.pointer(reference.strip_prefix('#')?));
    if let Some(target) = target {
        return resolved(target, root, depth + 1);
    }
    let mut schema = schema.clone();
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(key) {
            for branch in branches {
                *branch = resolved(branch, root, depth + 1);
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolbridge_chat::FunctionDefinition;

    fn typed(text: &str, schema: Value) -> Value {
        typed_value(text, Some(&schema))
    }

    #[test]
    fn the_declared_type_decides() {
        assert_eq!(typed("12", json!({"type": "string"})), json!("12"));
        assert_eq!(typed("null", json!({"type": "string"})), json!("null"));
        assert_eq!(typed("12", json!({"type": "integer"})), json!(12));
        assert_eq!(typed("12.0", json!({"type": "integer"})), json!(12));
        assert_eq!(typed("12.5", json!({"type": "integer"})), json!("12.5"));
        assert_eq!(typed("2.5", json!({"type": "number"})), json!(2.5));
        assert_eq!(typed("twelve", json!({"type": "integer"})), json!("twelve"));
        assert_eq!(typed("True", json!({"type": "boolean"})), json!(true));
        assert_eq!(
            typed("[1, \"a\"]", json!({"type": "array"})),
            json!([1, "a"])
        );
        assert_eq!(typed("[1", json!({"type": "array"})), json!("[1"));
        assert_eq!(
            typed("{'a': None}", json!({"properties": {}})),
            json!({"a": null})
        );
        assert_eq!(typed(" 7 \n", json!({"type": "integer"})), json!(7));
    }

    #[test]
    fn members_are_compared_as_the_schemas_own_values() {
        assert_eq!(typed("1", json!({"enum": ["1", "2"]})), json!("1"));
        assert_eq!(typed("1", json!({"enum": [1, 2]})), json!(1));
        assert_eq!(typed("1.0", json!({"enum": [1, 2]})), json!(1));
        assert_eq!(typed("3", json!({"enum": [1, 2]})), json!("3"));
        assert_eq!(typed("None", json!({"enum": ["a", null]})), json!(null));
        assert_eq!(typed("true", json!({"const": "true"})), json!("true"));
        assert_eq!(
            typed("1", json!({"type": "integer", "enum": ["1", 1]})),
            json!("1")
        );
    }

    #[test]
    fn unions_take_the_first_alternative_the_text_validates() {
        let nullable = json!({"type": ["string", "null"]});
        assert_eq!(typed("null", nullable.clone()), json!(null));
        assert_eq!(typed("None", nullable.clone()), json!(null));
        assert_eq!(typed("Paris", nullable), json!("Paris"));
        let any_of = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(typed("null", any_of), json!(null));
        let one_of = json!({"oneOf": [{"type": "integer"}, {"type": "array"}]});
        assert_eq!(typed("[3]", one_of.clone()), json!([3]));
        assert_eq!(typed("3", one_of.clone()), json!(3));
        assert_eq!(typed("x", one_of), json!("x"));
        let mixed = json!({"anyOf": [{"enum": ["auto"]}, {"type": "integer"}]});
        assert_eq!(typed("auto", mixed.clone()), json!("auto"));
        assert_eq!(typed("3", mixed), json!(3));
        let number_or_string = json!({"type": ["string", "number"]});
        assert_eq!(typed("2.5", number_or_string), json!(2.5));
    }

    #[test]
    fn untyped_values_are_json_when_they_read_as_json() {
        assert_eq!(typed_value("3", None), json!(3));
        assert_eq!(typed_value("Paris", None), json!("Paris"));
        assert_eq!(typed_value("\"12\"", None), json!("12"));
        assert_eq!(typed("[1]", json!({"description": "anything"})), json!([1]));
    }

    fn tool(parameters: Value) -> Tool {
        Tool::function(FunctionDefinition::new("f", "", parameters))
    }

    #[test]
    fn references_are_followed_into_the_parameters() {
        let tool = tool(json!({
            "type": "object",
            "$defs": {"count": {"type": "integer"}, "unit": {"enum": ["1", "2"]}},
            "definitions": {"maybe": {"anyOf": [{"$ref": "#/$defs/count"}, {"type": "null"}]}},
            "properties": {
                "n": {"$ref": "#/$defs/count"},
                "u": {"$ref": "#/$defs/unit"},
                "m": {"$ref": "#/definitions/maybe"},
                "loop": {"$ref": "#/properties/loop"},
                "gone": {"$ref": "#/$defs/nowhere"}
            }
        }));
        let types = ParameterTypes::new(&[&tool]);
        let schema = |key: &str| types.properties("f").and_then(|p| p.get(key));
        assert_eq!(typed_value("5", schema("n")), json!(5));
        assert_eq!(typed_value("1", schema("u")), json!("1"));
        assert_eq!(typed_value("null", schema("m")), json!(null));
        assert_eq!(typed_value("4", schema("m")), json!(4));
        assert_eq!(typed_value("4", schema("loop")), json!(4));
        assert_eq!(typed_value("4", schema("gone")), json!(4));
    }

    #[test]
    fn retyping_changes_only_strings_a_schema_reads_otherwise() {
        let tool = tool(json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "l": {"type": "array"}, "s": {"type": "string"}, "e": {"enum": ["1"]},
            "z": {"type": ["string", "null"]}, "k": {"enum": [1, 2]}, "d": {}
        }}));
        let types = ParameterTypes::new(&[&tool]);
        let retyped = types.retype(
            "f",
            r#"{"n": "5", "x": "2.5", "b": "True", "l": "[3, 5]", "s": "7", "e": "1",
                "z": "null", "k": "2", "d": "3", "extra": "4"}"#,
        );
        let value: Value = serde_json::from_str(&retyped.unwrap_or_default()).unwrap_or_default();
        assert_eq!(
            value,
            json!({"n": 5, "x": 2.5, "b": true, "l": [3, 5], "s": "7", "e": "1",
                   "z": null, "k": 2, "d": "3", "extra": "4"})
        );
        assert_eq!(types.retype("f", r#"{"n": "five"}"#), None);
        assert_eq!(types.retype("f", r#"{"s": "7"}"#), None);
        assert_eq!(types.retype("g", r#"{"n": "5"}"#), None);
        assert_eq!(types.retype("f", "not json"), None);
    }
}
