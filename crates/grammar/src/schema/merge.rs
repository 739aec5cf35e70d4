//! `allOf` as one schema: the parts' keywords merged the way their meanings combine —
//! types intersected, bounds tightened, `required` united, properties of the same name
//! merged, a part's `additionalProperties` applied to the properties only the other parts
//! list — so that the merged schema can be converted like any other. `anyOf`/`oneOf`
//! inside (or beside) the parts are multiplied out into alternatives, each merged in turn.
//!
//! A `$ref` with sibling keywords and an `anyOf` with sibling keywords are merged the
//! same way: both mean "this and that".

use serde_json::{Map, Value};

use super::converter::Converter;
use super::keywords::{self, Types};
use crate::error::{limit_error, schema_error, Result};

/// A merged schema.
pub(super) enum Merged {
    /// Nothing satisfies every part.
    Never,
    /// One schema, without `allOf`, `anyOf` or `oneOf` left at its top.
    One(Map<String, Value>),
    /// Alternatives, from an `anyOf`/`oneOf` multiplied out; each may need merging again.
    Any(Vec<Value>),
}

/// The object keywords of one part.
#[derive(Default)]
struct ObjectPart {
    properties: Vec<(String, Value)>,
    patterns: Vec<(String, Value)>,
    additional: Option<Value>,
}

/// The array keywords of one part: leading item schemas and the schema of the rest.
#[derive(Default)]
struct ArrayPart {
    prefix: Vec<Value>,
    rest: Option<Value>,
}

#[derive(Default)]
struct Acc {
    map: Map<String, Value>,
    objects: Vec<ObjectPart>,
    arrays: Vec<ArrayPart>,
    unions: Vec<(Vec<Value>, bool, String)>,
    nots: Vec<Value>,
    never: bool,
}

impl Converter<'_> {
    /// Merges `schema` (its `allOf`, `$ref` and `anyOf`/`oneOf` included) into one schema
    /// or a set of alternatives.
    pub(super) fn merge(&mut self, schema: &Map<String, Value>, path: &str) -> Result<Merged> {
        let mut acc = Acc::default();
        let mut refs = Vec::new();
        self.absorb(&mut acc, &Value::Object(schema.clone()), path, &mut refs, 0)?;
        if acc.never {
            return Ok(Merged::Never);
        }
        let unions = std::mem::take(&mut acc.unions);
        let Some(base) = self.finish(acc, path)? else {
            return Ok(Merged::Never);
        };
        let mut unions = unions.into_iter();
        let Some((alternatives, one_of, union_path)) = unions.next() else {
            return Ok(Merged::One(base));
        };
        let alternatives = if one_of {
            self.one_of_alternatives(&alternatives, &union_path)
        } else {
            alternatives
        };
        // The other unions stay as parts of each alternative, to be multiplied out when
        // that alternative is merged in turn.
        let rest: Vec<Value> = unions
            .map(|(alts, _, _)| {
                let mut m = Map::new();
                m.insert("anyOf".into(), Value::Array(alts));
                Value::Object(m)
            })
            .collect();
        self.alternatives_made += alternatives.len();
        if self.alternatives_made > self.options.limits.max_alternatives {
            return Err(limit_error(format!(
                "{path}: allOf/anyOf multiply out to more than {} alternatives",
                self.options.limits.max_alternatives
            )));
        }
        let has_base = !base.is_empty();
        let out = alternatives
            .into_iter()
            .map(|alternative| {
                let mut parts = Vec::new();
                if has_base {
                    parts.push(Value::Object(base.clone()));
                }
                parts.extend(rest.iter().cloned());
                if parts.is_empty() {
                    return alternative;
                }
                parts.push(alternative);
                let mut m = Map::new();
                m.insert("allOf".into(), Value::Array(parts));
                Value::Object(m)
            })
            .collect();
        Ok(Merged::Any(out))
    }

    fn absorb(
        &mut self,
        acc: &mut Acc,
        schema: &Value,
        path: &str,
        refs: &mut Vec<String>,
        depth: usize,
    ) -> Result<()> {
        if depth > self.options.limits.max_depth {
            return Err(limit_error(format!(
                "{path}: allOf/$ref nested deeper than {}",
                self.options.limits.max_depth
            )));
        }
        let obj = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => {
                acc.never = true;
                return Ok(());
            }
            Value::Object(obj) => obj,
            other => {
                return Err(schema_error(format!(
                    "{path}: a schema must be an object or a boolean, not {other}"
                )))
            }
        };
        if let Some(reference) = obj.get("$ref") {
            let Value::String(reference) = reference else {
                return Err(schema_error(format!("{path}/$ref: expected a string")));
            };
            if refs.contains(reference) {
                return Err(schema_error(format!(
                    "{path}: $ref {reference:?} refers to itself without progress"
                )));
            }
            let target = self.resolve_at(path, reference)?;
            let (target_schema, target_path) = (target.schema.clone(), target.path);
            refs.push(reference.clone());
            self.absorb(acc, &target_schema, &target_path, refs, depth + 1)?;
            refs.pop();
        }
        let mut object = ObjectPart::default();
        let mut has_object = false;
        let mut array = ArrayPart::default();
        let mut has_array = false;
        for (key, value) in obj {
            match key.as_str() {
                "$ref" => {}
                "allOf" => {
                    let Value::Array(parts) = value else {
                        return Err(schema_error(format!("{path}/allOf: expected an array")));
                    };
                    for (i, part) in parts.iter().enumerate() {
                        self.absorb(acc, part, &format!("{path}/allOf/{i}"), refs, depth + 1)?;
                    }
                }
                "anyOf" | "oneOf" => {
                    let Value::Array(alternatives) = value else {
                        return Err(schema_error(format!("{path}/{key}: expected an array")));
                    };
                    acc.unions.push((
                        alternatives.clone(),
                        key == "oneOf",
                        format!("{path}/{key}"),
                    ));
                }
                "properties" | "patternProperties" => {
                    let Value::Object(props) = value else {
                        return Err(schema_error(format!("{path}/{key}: expected an object")));
                    };
                    let list: Vec<(String, Value)> =
                        props.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    if key == "properties" {
                        object.properties = list;
                    } else {
                        object.patterns = list;
                    }
                    has_object = true;
                }
                "additionalProperties" => {
                    object.additional = Some(value.clone());
                    has_object = true;
                }
                "prefixItems" => {
                    array.prefix = as_schemas(value, path, key)?;
                    has_array = true;
                }
                "items" => {
                    if let Value::Array(items) = value {
                        array.prefix = items.clone();
                    } else {
                        array.rest = Some(value.clone());
                    }
                    has_array = true;
                }
                "additionalItems" => {
                    if matches!(obj.get("items"), Some(Value::Array(_))) {
                        array.rest = Some(value.clone());
                        has_array = true;
                    }
                }
                "not" => acc.nots.push(value.clone()),
                "dependencies" | "dependentRequired" | "dependentSchemas" => {
                    let Value::Object(dependencies) = value else {
                        return Err(schema_error(format!("{path}/{key}: expected an object")));
                    };
                    for (trigger, dependent) in dependencies {
                        acc.unions.push((
                            dependency_alternatives(trigger, dependent),
                            false,
                            format!("{path}/{key}"),
                        ));
                    }
                }
                "if" => {
                    let then = obj.get("then").cloned().unwrap_or(Value::Bool(true));
                    let otherwise = obj.get("else").cloned().unwrap_or(Value::Bool(true));
                    if then == Value::Bool(true) && otherwise == Value::Bool(true) {
                        continue;
                    }
                    let mut alternatives = vec![all_of(vec![value.clone(), then])];
                    let mut not = Map::new();
                    not.insert("not".into(), value.clone());
                    let not = Value::Object(not);
                    if self.not_effect(value, 0).is_some() {
                        alternatives.push(all_of(vec![not, otherwise]));
                    } else if !self.options.strict {
                        self.warn(path, "if/then/else: the else branch is admitted without checking that the if schema fails");
                        alternatives.push(otherwise);
                    }
                    acc.unions.push((alternatives, false, format!("{path}/if")));
                }
                "then" | "else" => {}
                "minimum" | "maximum" => {
                    let exclusive_key = if key == "minimum" {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    };
                    if obj.get(exclusive_key) == Some(&Value::Bool(true)) {
                        tighten(&mut acc.map, exclusive_key, value, key == "minimum");
                    } else {
                        tighten(&mut acc.map, key, value, key == "minimum");
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    if value.is_number() {
                        tighten(&mut acc.map, key, value, key == "exclusiveMinimum");
                    }
                }
                "minLength" | "minItems" | "minProperties" | "minContains" => {
                    tighten(&mut acc.map, key, value, true)
                }
                "maxLength" | "maxItems" | "maxProperties" | "maxContains" => {
                    tighten(&mut acc.map, key, value, false)
                }
                "type" => {
                    let Some(types) = keywords::declared_types(obj) else {
                        return Err(schema_error(format!("{path}/type: unknown type {value}")));
                    };
                    let current = match acc.map.get("type") {
                        Some(_) => keywords::declared_types(&acc.map).unwrap_or(Types::ALL),
                        None => Types::ALL,
                    };
                    let both = current.intersect(types);
                    if both.is_empty() {
                        acc.never = true;
                    }
                    acc.map.insert("type".into(), types_value(both));
                }
                "const" | "enum" => {
                    let values = match (key.as_str(), value) {
                        ("const", v) => vec![v.clone()],
                        (_, Value::Array(values)) => values.clone(),
                        _ => return Err(schema_error(format!("{path}/enum: expected an array"))),
                    };
                    let kept = match acc.map.get("enum") {
                        Some(Value::Array(current)) => current
                            .iter()
                            .filter(|v| values.iter().any(|w| json_equal(v, w)))
                            .cloned()
                            .collect(),
                        _ => values,
                    };
                    if kept.is_empty() {
                        acc.never = true;
                    }
                    acc.map.insert("enum".into(), Value::Array(kept));
                }
                "required" => {
                    let mut names: Vec<Value> = match acc.map.get("required") {
                        Some(Value::Array(names)) => names.clone(),
                        _ => Vec::new(),
                    };
                    if let Value::Array(more) = value {
                        for name in more {
                            if !names.contains(name) {
                                names.push(name.clone());
                            }
                        }
                    }
                    acc.map.insert("required".into(), Value::Array(names));
                }
                "uniqueItems" => {
                    if value == &Value::Bool(true) {
                        acc.map.insert(key.clone(), Value::Bool(true));
                    }
                }
                _ if keywords::is_annotation(key) => {}
                _ => match acc.map.get(key) {
                    None => {
                        acc.map.insert(key.clone(), value.clone());
                    }
                    Some(existing) if existing == value => {}
                    // Keywords JSON Schema does not know constrain nothing.
                    Some(_) if keywords::constrains(key).is_empty() => {}
                    Some(_) if key == "unevaluatedProperties" || key == "unevaluatedItems" => {
                        combine_schemas(&mut acc.map, key, value);
                    }
                    Some(_) if matches!(key.as_str(), "propertyNames" | "contains" | "if") => {
                        combine_schemas(&mut acc.map, key, value);
                        if key == "if" {
                            self.warn(path, "several if/then/else in one allOf are not enforced");
                        }
                    }
                    Some(_) => {
                        self.warn(
                            path,
                            format!("`{key}` given twice in allOf with different values; only the first is enforced"),
                        );
                    }
                },
            }
        }
        if has_object {
            acc.objects.push(object);
        }
        if has_array {
            acc.arrays.push(array);
        }
        Ok(())
    }

    /// The merged keywords as a schema; `None` when they admit nothing.
    fn finish(&mut self, mut acc: Acc, path: &str) -> Result<Option<Map<String, Value>>> {
        let mut map = std::mem::take(&mut acc.map);
        // Objects: a property listed by some parts is checked by every part, by its
        // own schema for it or else by its additionalProperties.
        if !acc.objects.is_empty() {
            let patterned = acc.objects.iter().any(|o| !o.patterns.is_empty());
            if patterned && acc.objects.len() > 1 {
                self.warn(path, "patternProperties merged across allOf parts: keys matching a part's pattern but listed by another part are not checked against that pattern");
            }
            let mut names: Vec<String> = Vec::new();
            for object in &acc.objects {
                for (name, _) in &object.properties {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
            }
            let mut properties = Map::new();
            for name in names {
                let mut constraints: Vec<Value> = Vec::new();
                for object in &acc.objects {
                    match object.properties.iter().find(|(n, _)| *n == name) {
                        Some((_, schema)) => constraints.push(schema.clone()),
                        None if object.patterns.is_empty() => {
                            if let Some(additional) = &object.additional {
                                constraints.push(additional.clone());
                            }
                        }
                        None => {}
                    }
                }
                properties.insert(name, all_of(constraints));
            }
            if !properties.is_empty() {
                map.insert("properties".into(), Value::Object(properties));
            }
            let mut patterns = Map::new();
            for object in &acc.objects {
                for (pattern, schema) in &object.patterns {
                    let merged = match patterns.remove(pattern) {
                        Some(existing) => all_of(vec![existing, schema.clone()]),
                        None => schema.clone(),
                    };
                    patterns.insert(pattern.clone(), merged);
                }
            }
            if !patterns.is_empty() {
                map.insert("patternProperties".into(), Value::Object(patterns));
            }
            let additional: Vec<Value> = acc
                .objects
                .iter()
                .filter_map(|o| o.additional.clone())
                .collect();
            if !additional.is_empty() {
                map.insert("additionalProperties".into(), all_of(additional));
            }
        }
        // Properties no part evaluated: `unevaluatedProperties` is then what
        // `additionalProperties` would be (an `additionalProperties` anywhere evaluates
        // every property).
        if let Some(unevaluated) = map.remove("unevaluatedProperties") {
            if !map.contains_key("additionalProperties") {
                if map.contains_key("patternProperties") {
                    self.warn(
                        path,
                        "unevaluatedProperties beside patternProperties is not enforced",
                    );
                } else {
                    map.insert("additionalProperties".into(), unevaluated);
                }
            }
        }
        if !acc.arrays.is_empty() {
            let len = acc.arrays.iter().map(|a| a.prefix.len()).max().unwrap_or(0);
            let mut prefix = Vec::with_capacity(len);
            for i in 0..len {
                let constraints: Vec<Value> = acc
                    .arrays
                    .iter()
                    .filter_map(|a| a.prefix.get(i).or(a.rest.as_ref()).cloned())
                    .collect();
                prefix.push(all_of(constraints));
            }
            if !prefix.is_empty() {
                map.insert("prefixItems".into(), Value::Array(prefix));
            }
            let rests: Vec<Value> = acc.arrays.iter().filter_map(|a| a.rest.clone()).collect();
            if !rests.is_empty() {
                map.insert("items".into(), all_of(rests));
            }
        }
        if let Some(unevaluated) = map.remove("unevaluatedItems") {
            if !map.contains_key("items") {
                map.insert("items".into(), unevaluated);
            }
        }
        match acc.nots.len() {
            0 => {}
            1 => {
                map.insert("not".into(), acc.nots.remove(0));
            }
            _ => {
                let mut any = Map::new();
                any.insert("anyOf".into(), Value::Array(acc.nots));
                map.insert("not".into(), Value::Object(any));
            }
        }
        Ok(Some(map))
    }
}

/// `dependencies`/`dependentRequired`/`dependentSchemas` for one property: either it is
/// absent, or it is present with the names it requires (or the schema it brings).
fn dependency_alternatives(trigger: &str, dependent: &Value) -> Vec<Value> {
    let trigger_value = Value::String(trigger.to_string());
    let mut absent = Map::new();
    let mut required = Map::new();
    required.insert("required".into(), Value::Array(vec![trigger_value]));
    absent.insert("not".into(), Value::Object(required.clone()));
    let present = match dependent {
        Value::Array(names) => {
            let mut all = vec![Value::String(trigger.to_string())];
            all.extend(names.iter().cloned());
            let mut m = Map::new();
            m.insert("required".into(), Value::Array(all));
            Value::Object(m)
        }
        schema => all_of(vec![Value::Object(required), schema.clone()]),
    };
    vec![Value::Object(absent), present]
}

fn as_schemas(value: &Value, path: &str, key: &str) -> Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        // llama.cpp reads an object here as the schema of every item.
        _ => Err(schema_error(format!(
            "{path}/{key}: expected an array of schemas"
        ))),
    }
}

/// One schema for all of `schemas`: itself when there is one, `allOf` otherwise, `false`
/// when one of them is.
fn all_of(mut schemas: Vec<Value>) -> Value {
    schemas.retain(|s| *s != Value::Bool(true) && *s != Value::Object(Map::new()));
    if schemas.contains(&Value::Bool(false)) {
        return Value::Bool(false);
    }
    match schemas.len() {
        0 => Value::Bool(true),
        1 => schemas.remove(0),
        _ => {
            let mut m = Map::new();
            m.insert("allOf".into(), Value::Array(schemas));
            Value::Object(m)
        }
    }
}

fn combine_schemas(map: &mut Map<String, Value>, key: &str, value: &Value) {
    let existing = map.remove(key).unwrap_or(Value::Bool(true));
    map.insert(key.to_string(), all_of(vec![existing, value.clone()]));
}

/// Keeps the tighter of two numeric bounds: the larger lower bound, the smaller upper.
fn tighten(map: &mut Map<String, Value>, key: &str, value: &Value, lower: bool) {
    let Some(new) = value.as_f64() else {
        map.entry(key.to_string()).or_insert_with(|| value.clone());
        return;
    };
    let keep_new = match map.get(key).and_then(Value::as_f64) {
        None => true,
        Some(old) => (lower && new > old) || (!lower && new < old),
    };
    if keep_new {
        map.insert(key.to_string(), value.clone());
    }
}

fn types_value(types: Types) -> Value {
    let names = types.names();
    if names.len() == 1 {
        Value::String(names[0].to_string())
    } else {
        Value::Array(
            names
                .into_iter()
                .map(|n| Value::String(n.to_string()))
                .collect(),
        )
    }
}

/// Equality as JSON Schema sees it: numbers by value (`1` equals `1.0`).
pub(super) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}
