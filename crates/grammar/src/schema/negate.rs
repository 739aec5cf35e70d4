//! The negation of a schema, written as a schema without `not` where possible (or with
//! only the `not` forms the converter enforces): `not: {required: [a, b]}` is "a is
//! absent or b is", `not: {minimum: 3}` is "a number below 3", `not: {anyOf: […]}` is
//! the `allOf` of the negations. This is what makes `not` and overlapping `oneOf`
//! alternatives (each one and none of the others) exact.
//!
//! Each keyword of a schema is an assertion of its own, so a schema's negation is the
//! `anyOf` of its keywords' negations. A keyword whose negation cannot be written
//! (`pattern`, `multipleOf`, `additionalProperties: false`, …) makes it `None`.

use serde_json::{json, Map, Value};

use super::converter::Converter;
use super::keywords;

const MAX_DEPTH: usize = 8;

impl Converter<'_> {
    /// A schema admitting exactly what `schema` refuses, or `None`.
    pub(super) fn negate(&self, schema: &Value, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let obj = match schema {
            Value::Bool(b) => return Some(Value::Bool(!b)),
            Value::Object(obj) => obj,
            _ => return None,
        };
        let mut alternatives: Vec<Value> = Vec::new();
        for (key, value) in obj {
            if keywords::constrains(key).is_empty() {
                continue;
            }
            // `None` inside: the keyword cannot fail.
            if let Some(negation) = self.negate_keyword(obj, key, value, depth)? {
                alternatives.push(negation);
            }
        }
        Some(match alternatives.len() {
            0 => Value::Bool(false),
            1 => alternatives.remove(0),
            _ => json!({ "anyOf": alternatives }),
        })
    }

    /// The negation of one keyword's assertion: `Some(None)` when the keyword cannot
    /// fail, `None` when its negation cannot be written.
    fn negate_keyword(
        &self,
        obj: &Map<String, Value>,
        key: &str,
        value: &Value,
        depth: usize,
    ) -> Option<Option<Value>> {
        let number = |v: &Value| v.as_f64().is_some() && !v.is_boolean();
        let flag = |k: &str| obj.get(k) == Some(&Value::Bool(true));
        Some(Some(match key {
            "type" | "enum" | "const" => json!({ "not": { key: value } }),
            "$ref" => {
                let target = self.resolve_anywhere(value.as_str()?)?;
                return Some(Some(self.negate(target, depth + 1)?));
            }
            "not" => value.clone(),
            "allOf" => {
                let parts = value.as_array()?;
                let negations = parts
                    .iter()
                    .map(|p| self.negate(p, depth + 1))
                    .collect::<Option<Vec<_>>>()?;
                json!({ "anyOf": negations })
            }
            "anyOf" => {
                let parts = value.as_array()?;
                let negations = parts
                    .iter()
                    .map(|p| self.negate(p, depth + 1))
                    .collect::<Option<Vec<_>>>()?;
                json!({ "allOf": negations })
            }
            "required" => {
                let names = value.as_array()?;
                if names.is_empty() {
                    return Some(None);
                }
                let each: Vec<Value> = names
                    .iter()
                    .map(|n| json!({ "not": { "required": [n] } }))
                    .collect();
                json!({ "anyOf": each })
            }
            "properties" => {
                let properties = value.as_object()?;
                let mut each = Vec::new();
                for (name, schema) in properties {
                    let negation = self.negate(schema, depth + 1)?;
                    if negation == Value::Bool(false) {
                        continue;
                    }
                    each.push(json!({
                        "type": "object",
                        "required": [name],
                        "properties": { name.clone(): negation }
                    }));
                }
                if each.is_empty() {
                    return Some(None);
                }
                json!({ "anyOf": each })
            }
            "minimum" if number(value) => {
                let below = if flag("exclusiveMinimum") {
                    "maximum"
                } else {
                    "exclusiveMaximum"
                };
                json!({ "type": "number", below: value })
            }
            "maximum" if number(value) => {
                let above = if flag("exclusiveMaximum") {
                    "minimum"
                } else {
                    "exclusiveMinimum"
                };
                json!({ "type": "number", above: value })
            }
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => return Some(None),
            "exclusiveMinimum" => json!({ "type": "number", "maximum": value }),
            "exclusiveMaximum" => json!({ "type": "number", "minimum": value }),
            "minLength" | "minItems" | "minProperties" => {
                let n = value.as_u64()?;
                if n == 0 {
                    return Some(None);
                }
                let (t, max) = match key {
                    "minLength" => ("string", "maxLength"),
                    "minItems" => ("array", "maxItems"),
                    _ => ("object", "maxProperties"),
                };
                json!({ "type": t, max: n - 1 })
            }
            "maxLength" | "maxItems" | "maxProperties" => {
                let n = value.as_u64()?;
                let (t, min) = match key {
                    "maxLength" => ("string", "minLength"),
                    "maxItems" => ("array", "minItems"),
                    _ => ("object", "minProperties"),
                };
                json!({ "type": t, min: n.checked_add(1)? })
            }
            "items" if !value.is_array() && !obj.contains_key("prefixItems") => {
                let negation = self.negate(value, depth + 1)?;
                if negation == Value::Bool(false) {
                    return Some(None);
                }
                json!({ "type": "array", "contains": negation })
            }
            // `if` without `then`/`else`, `then`/`else` without `if`: no assertion.
            "if" | "then" | "else"
                if !(obj.contains_key("if")
                    && (obj.contains_key("then") || obj.contains_key("else"))) =>
            {
                return Some(None)
            }
            _ => return None,
        }))
    }
}
