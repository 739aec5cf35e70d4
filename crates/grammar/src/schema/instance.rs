//! A small JSON Schema validator for single values the converter must decide about at
//! conversion time: which `enum`/`const` values also satisfy their sibling keywords,
//! which listed property names a `propertyNames` or `patternProperties` accepts. It
//! answers `None` when a keyword is beyond it, and the caller then warns or refuses.

use serde_json::{Map, Value};

use super::keywords::{self, Types};
use super::merge::json_equal;

/// What a check needs: `$ref` targets and a matcher for `pattern`.
pub(super) struct Checker<'a, 'v> {
    pub resolve: &'a dyn Fn(&str) -> Option<&'v Value>,
    pub pattern: &'a dyn Fn(&str, &str) -> Option<bool>,
}

impl Checker<'_, '_> {
    /// Whether `schema` admits `value`; `None` when that cannot be told here.
    pub fn admits(&self, schema: &Value, value: &Value, depth: usize) -> Option<bool> {
        if depth > 32 {
            return None;
        }
        let obj = match schema {
            Value::Bool(b) => return Some(*b),
            Value::Object(obj) => obj,
            _ => return None,
        };
        let mut verdict = Some(true);
        for (key, keyword) in obj {
            let result = self.keyword(obj, key, keyword, value, depth);
            verdict = and(verdict, result);
            if verdict == Some(false) {
                return verdict;
            }
        }
        verdict
    }

    fn keyword(
        &self,
        obj: &Map<String, Value>,
        key: &str,
        keyword: &Value,
        value: &Value,
        depth: usize,
    ) -> Option<bool> {
        let t = Types::of_value(value);
        if keywords::constrains(key).intersect(t).is_empty() {
            return Some(true);
        }
        match key {
            "type" => {
                let types = keywords::declared_types(obj)?;
                Some(!types.intersect(t).is_empty())
            }
            "enum" => Some(keyword.as_array()?.iter().any(|v| json_equal(v, value))),
            "const" => Some(json_equal(keyword, value)),
            "$ref" => {
                let target = (self.resolve)(keyword.as_str()?)?;
                self.admits(target, value, depth + 1)
            }
            "allOf" => keyword.as_array()?.iter().try_fold(true, |acc, s| {
                Some(acc && self.admits(s, value, depth + 1)?)
            }),
            "anyOf" => {
                let mut verdict = Some(false);
                for s in keyword.as_array()? {
                    verdict = or(verdict, self.admits(s, value, depth + 1));
                }
                verdict
            }
            "oneOf" => {
                let mut count = 0;
                for s in keyword.as_array()? {
                    if self.admits(s, value, depth + 1)? {
                        count += 1;
                    }
                }
                Some(count == 1)
            }
            "not" => self.admits(keyword, value, depth + 1).map(|b| !b),
            "if" => {
                let branch = if self.admits(keyword, value, depth + 1)? {
                    "then"
                } else {
                    "else"
                };
                match obj.get(branch) {
                    Some(schema) => self.admits(schema, value, depth + 1),
                    None => Some(true),
                }
            }
            "then" | "else" => Some(true),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let x = value.as_f64()?;
                let exclusive_flag = |k: &str| obj.get(k) == Some(&Value::Bool(true));
                match (key, keyword) {
                    (_, Value::Bool(_)) => Some(true),
                    ("minimum", b) => {
                        let b = b.as_f64()?;
                        Some(if exclusive_flag("exclusiveMinimum") {
                            x > b
                        } else {
                            x >= b
                        })
                    }
                    ("maximum", b) => {
                        let b = b.as_f64()?;
                        Some(if exclusive_flag("exclusiveMaximum") {
                            x < b
                        } else {
                            x <= b
                        })
                    }
                    ("exclusiveMinimum", b) => Some(x > b.as_f64()?),
                    (_, b) => Some(x < b.as_f64()?),
                }
            }
            "multipleOf" => {
                let m = keyword.as_f64()?;
                let x = value.as_f64()?;
                let q = x / m;
                (m > 0.0).then_some(q.is_finite() && (q - q.round()).abs() < 1e-9)
            }
            "minLength" | "maxLength" => {
                let n = value.as_str()?.chars().count() as u64;
                let b = keyword.as_u64()?;
                Some(if key == "minLength" { n >= b } else { n <= b })
            }
            "pattern" => (self.pattern)(keyword.as_str()?, value.as_str()?),
            "minItems" | "maxItems" => {
                let n = value.as_array()?.len() as u64;
                let b = keyword.as_u64()?;
                Some(if key == "minItems" { n >= b } else { n <= b })
            }
            "minProperties" | "maxProperties" => {
                let n = value.as_object()?.len() as u64;
                let b = keyword.as_u64()?;
                Some(if key == "minProperties" {
                    n >= b
                } else {
                    n <= b
                })
            }
            "required" => {
                let object = value.as_object()?;
                Some(
                    keyword
                        .as_array()?
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| object.contains_key(n))),
                )
            }
            "properties" | "patternProperties" | "additionalProperties" => {
                self.object(obj, value.as_object()?, key, depth)
            }
            "items" | "prefixItems" | "additionalItems" => {
                self.array(obj, value.as_array()?, key, depth)
            }
            "uniqueItems" => {
                let items = value.as_array()?;
                if keyword != &Value::Bool(true) {
                    return Some(true);
                }
                Some(
                    items
                        .iter()
                        .enumerate()
                        .all(|(i, a)| items[i + 1..].iter().all(|b| !json_equal(a, b))),
                )
            }
            "propertyNames" => {
                let mut verdict = Some(true);
                for name in value.as_object()?.keys() {
                    verdict = and(
                        verdict,
                        self.admits(keyword, &Value::String(name.clone()), depth + 1),
                    );
                }
                verdict
            }
            "format" => None,
            _ if keywords::constrains(key) == Types::NONE => Some(true),
            _ => None,
        }
    }

    /// `properties`, `patternProperties` and `additionalProperties`, each checked once
    /// (by the first of them that the schema has).
    fn object(
        &self,
        obj: &Map<String, Value>,
        object: &Map<String, Value>,
        key: &str,
        depth: usize,
    ) -> Option<bool> {
        let first = ["properties", "patternProperties", "additionalProperties"]
            .into_iter()
            .find(|k| obj.contains_key(*k));
        if first != Some(key) {
            return Some(true);
        }
        let properties = obj.get("properties").and_then(Value::as_object);
        let patterns = obj.get("patternProperties").and_then(Value::as_object);
        let mut verdict = Some(true);
        for (name, v) in object {
            let mut evaluated = false;
            if let Some(schema) = properties.and_then(|p| p.get(name)) {
                evaluated = true;
                verdict = and(verdict, self.admits(schema, v, depth + 1));
            }
            for (pattern, schema) in patterns.into_iter().flatten() {
                match (self.pattern)(pattern, name) {
                    Some(true) => {
                        evaluated = true;
                        verdict = and(verdict, self.admits(schema, v, depth + 1));
                    }
                    Some(false) => {}
                    None => return None,
                }
            }
            if !evaluated {
                if let Some(additional) = obj.get("additionalProperties") {
                    verdict = and(verdict, self.admits(additional, v, depth + 1));
                }
            }
            if verdict == Some(false) {
                return verdict;
            }
        }
        verdict
    }

    fn array(
        &self,
        obj: &Map<String, Value>,
        items: &[Value],
        key: &str,
        depth: usize,
    ) -> Option<bool> {
        let first = ["prefixItems", "items", "additionalItems"]
            .into_iter()
            .find(|k| obj.contains_key(*k));
        if first != Some(key) {
            return Some(true);
        }
        let (prefix, rest): (&[Value], Option<&Value>) =
            match (obj.get("prefixItems"), obj.get("items")) {
                (Some(Value::Array(prefix)), rest) => (prefix, rest),
                (_, Some(Value::Array(prefix))) => (prefix, obj.get("additionalItems")),
                (_, rest) => (&[], rest),
            };
        let mut verdict = Some(true);
        for (i, item) in items.iter().enumerate() {
            let schema = prefix.get(i).or(rest);
            if let Some(schema) = schema {
                verdict = and(verdict, self.admits(schema, item, depth + 1));
            }
        }
        verdict
    }
}

fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn admits(schema: Value, value: Value) -> Option<bool> {
        let no_patterns = |_: &str, _: &str| None;
        let no_refs = |_: &str| None;
        let checker = Checker {
            resolve: &no_refs,
            pattern: &no_patterns,
        };
        checker.admits(&schema, &value, 0)
    }

    #[test]
    fn checks_simple_keywords() {
        assert_eq!(
            admits(json!({"type": "string", "minLength": 2}), json!("a")),
            Some(false)
        );
        assert_eq!(
            admits(json!({"type": "string", "minLength": 2}), json!("ab")),
            Some(true)
        );
        assert_eq!(admits(json!({"type": "integer"}), json!(1.0)), Some(true));
        assert_eq!(
            admits(json!({"minimum": 3, "exclusiveMinimum": true}), json!(3)),
            Some(false)
        );
        assert_eq!(admits(json!({"pattern": "^a"}), json!("a")), None);
        assert_eq!(admits(json!({"pattern": "^a"}), json!(1)), Some(true));
        assert_eq!(
            admits(
                json!({"properties": {"a": {"type": "null"}}, "additionalProperties": false}),
                json!({"a": null, "b": 1})
            ),
            Some(false)
        );
    }
}
