//! An embedded schema as llguidance is to read it, so that it means one language wherever
//! it is read: in our converter (the GBNF a llama.cpp server gets, the parser's check of a
//! call) and in llguidance's `%json`, which reads a schema differently on two points.
//!
//! - **Objects.** An object schema that lists `properties` and says nothing of
//!   `additionalProperties` admits no other property in our converter (llama.cpp's rule,
//!   [`super::Options`]'s `extra_properties_by_default: false`); llguidance follows JSON
//!   Schema there and admits any other property. Measured with Qwen2.5-Coder-0.5B under a
//!   forced tool grammar: `{"artist": "Taylor Swift", "duration": 20, "duration2": 15}`,
//!   which the engine let through and the parser, checking with our converter, refused as
//!   a call. So those objects are closed (`"additionalProperties": false`). The branches
//!   of an `allOf` are left open: each would reject the others' properties, where our
//!   converter merges them into one object.
//! - **Whitespace.** Between JSON tokens our converter admits what llama.cpp's does
//!   ([`super::builtins::SPACE_PATTERN`]); llguidance admits any run of whitespace. A
//!   model held to a call could then write blanks until its token limit, and one did: a
//!   forced `get_weather` call of a random-weight model (the GPU check's) ended at 400
//!   tokens as `{"name": "get_weather", "arguments": {` and blanks. So the schema carries
//!   llguidance's `whitespace_pattern` option (`x-guidance`, which replaces any the
//!   request's schema carried).

use serde_json::{json, Map, Value};

use super::builtins::SPACE_PATTERN;

/// How deep subschemas are followed; deeper ones are left as written (serde_json refuses
/// JSON nested past 128 levels anyway).
const MAX_DEPTH: usize = 256;

/// `schema` as llguidance is to read it: every object schema that lists properties, and
/// leaves other properties unsaid, closed to them, and whitespace between tokens bounded
/// as ours is; see the module docs.
pub fn for_llguidance(schema: &Value) -> Value {
    let mut schema = with_closed_objects(schema);
    if schema == Value::Bool(true) {
        schema = Value::Object(Map::new());
    }
    if let Value::Object(members) = &mut schema {
        let options = json!({ "whitespace_pattern": SPACE_PATTERN });
        members.insert("x-guidance".into(), options);
    }
    schema
}

fn with_closed_objects(schema: &Value) -> Value {
    let mut schema = schema.clone();
    close(&mut schema, true, 0);
    schema
}

fn close(schema: &mut Value, may_close: bool, depth: usize) {
    let Value::Object(members) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if may_close && lists_properties_only(members) {
        members.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (keyword, value) in members.iter_mut() {
        match keyword.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(named) = value {
                    for subschema in named.values_mut() {
                        close(subschema, true, depth + 1);
                    }
                }
            }
            "anyOf" | "oneOf" | "prefixItems" => each(value, true, depth),
            "allOf" => each(value, false, depth),
            "items"
            | "additionalProperties"
            | "additionalItems"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else" => match value {
                Value::Array(_) => each(value, true, depth),
                _ => close(value, true, depth + 1),
            },
            _ => {}
        }
    }
}

fn each(list: &mut Value, may_close: bool, depth: usize) {
    if let Value::Array(schemas) = list {
        for subschema in schemas {
            close(subschema, may_close, depth + 1);
        }
    }
}

/// An object schema with `properties` and no word on other properties.
fn lists_properties_only(members: &Map<String, Value>) -> bool {
    let typed_object = match members.get("type") {
        None => true,
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        Some(_) => false,
    };
    typed_object
        && members.contains_key("properties")
        && ![
            "additionalProperties",
            "patternProperties",
            "unevaluatedProperties",
        ]
        .iter()
        .any(|keyword| members.contains_key(*keyword))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_listing_properties_are_closed_at_every_depth() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "integer"}}},
            "c": {"type": "array", "items": {"properties": {"d": {}}}},
            "e": {"anyOf": [{"type": "object", "properties": {"f": {}}}, {"type": "null"}]}
        }, "$defs": {"g": {"type": "object", "properties": {"h": {}}}}});
        let closed = with_closed_objects(&schema);
        for pointer in [
            "",
            "/properties/a",
            "/properties/c/items",
            "/properties/e/anyOf/0",
            "/$defs/g",
        ] {
            assert_eq!(
                closed.pointer(&format!("{pointer}/additionalProperties")),
                Some(&json!(false)),
                "{pointer}"
            );
        }
        assert_eq!(
            closed.pointer("/properties/e/anyOf/1"),
            Some(&json!({"type": "null"}))
        );
    }

    #[test]
    fn what_the_schema_says_of_other_properties_stands() {
        for schema in [
            json!({"properties": {"a": {}}, "additionalProperties": true}),
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}),
            json!({"properties": {"a": {}}, "patternProperties": {"^x": {}}}),
            json!({"type": "string", "properties": {"a": {}}}),
            json!({"type": "object"}),
            json!(true),
        ] {
            assert_eq!(with_closed_objects(&schema), schema);
        }
    }

    #[test]
    fn whitespace_is_bounded_as_our_converter_bounds_it() {
        let pattern = json!({"whitespace_pattern": SPACE_PATTERN});
        for schema in [json!({"type": "integer"}), json!(true)] {
            let read = for_llguidance(&schema);
            assert_eq!(read.get("x-guidance"), Some(&pattern), "{schema}");
        }
        let request = json!({"type": "string", "x-guidance": {"lenient": true}});
        let read = for_llguidance(&request);
        assert_eq!(read, json!({"type": "string", "x-guidance": pattern}));
        assert_eq!(for_llguidance(&json!(false)), json!(false));
    }

    #[test]
    fn all_of_branches_stay_open() {
        let schema = json!({"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]});
        assert_eq!(with_closed_objects(&schema), schema);
    }
}
