//! Moving a schema into another one with its `$ref`s still pointing where they did.
//!
//! A local reference (`#/$defs/node`, draft 7's `#/definitions/node`, `#/$defs/a/properties/b`,
//! `#` itself) is a JSON pointer from the root of the document it is written in. A dialect
//! that writes a tool's parameters under a call's `arguments` moves them away from that
//! root, and a dialect that writes each argument in its own notation takes one property out
//! of its document: either way the pointers land on nothing (`"$defs" not found`) or on the
//! wrong schema. [`nest`] re-roots the pointers of a schema placed at a known position;
//! [`detached`] makes one part of a document a document of its own, carrying the document
//! with it when the part refers into it. Both leave a schema without local references as
//! it is, so the usual tool costs nothing and prints as before.
//!
//! References inside a schema that declares its own `$id` are relative to that schema (a
//! new resource, `refs::resolve_at`), so they are right wherever it is placed and are left
//! alone; so are references to a URI, which name a resource rather than a position.
//! Constants and examples are data, not schemas: a `"$ref"` key in them is not rewritten.

use serde_json::{Map, Value};

/// The key under `$defs` where [`detached`] carries the part's document.
const DOCUMENT: &str = "toolbridge-document";

/// Nesting deeper than this is left as it is (the converter refuses such schemas anyway).
const MAX_DEPTH: usize = 256;

/// `schema`, a whole document, ready to be placed at JSON pointer `at` (`/properties/arguments`)
/// inside another schema: each local reference `#…` becomes `#{at}…`.
pub fn nest(schema: &Value, at: &str) -> Value {
    let mut nested = schema.clone();
    if !declares_id(schema) {
        rewrite(&mut nested, at, 0);
    }
    nested
}

/// The part `part` of `document` (a property's schema, say) as a schema of its own. When
/// it refers into the document, the document comes along under `$defs` and the part's
/// references are re-rooted there, so `{"$ref": "#/$defs/node"}` out of a tool's
/// parameters still finds `node`, recursion included.
pub fn detached(document: &Value, part: &Value) -> Value {
    if declares_id(part) || !refers_locally(part, 0) {
        return part.clone();
    }
    let at = format!("/$defs/{DOCUMENT}");
    let mut detached = nest(part, &at);
    let Value::Object(members) = &mut detached else {
        return detached;
    };
    let defs = members
        .entry("$defs")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(defs) = defs {
        defs.insert(DOCUMENT.into(), nest(document, &at));
    }
    detached
}

fn declares_id(schema: &Value) -> bool {
    matches!(schema.get("$id"), Some(Value::String(id)) if !id.starts_with('#'))
}

fn is_local(reference: &str) -> bool {
    reference.starts_with('#')
}

/// Keywords whose values are data rather than schemas.
fn is_data(key: &str) -> bool {
    matches!(key, "enum" | "const" | "default" | "examples" | "example")
}

fn rewrite(node: &mut Value, at: &str, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(members) => {
            for (key, value) in members.iter_mut() {
                match value {
                    Value::String(reference) if key == "$ref" && is_local(reference) => {
                        *reference = format!("#{at}{}", &reference[1..]);
                    }
                    _ if is_data(key) || declares_id(value) => {}
                    _ => rewrite(value, at, depth + 1),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if !declares_id(item) {
                    rewrite(item, at, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn refers_locally(node: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match node {
        Value::Object(members) => members.iter().any(|(key, value)| match value {
            Value::String(reference) if key == "$ref" => is_local(reference),
            _ if is_data(key) || declares_id(value) => false,
            _ => refers_locally(value, depth + 1),
        }),
        Value::Array(items) => items
            .iter()
            .any(|item| !declares_id(item) && refers_locally(item, depth + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check::Validator;
    use crate::schema::{compile, Options};
    use crate::tree::{Expr, Grammar};

    /// A binary tree whose nodes refer to themselves, in draft 2020's `$defs`.
    fn tree() -> Value {
        json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/node"}, "1st": {"type": "integer"}},
            "required": ["tree"],
            "$defs": {"node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "left": {"$ref": "#/$defs/node"},
                    "right": {"$ref": "#/$defs/node"}
                },
                "required": ["value"],
                "additionalProperties": false
            }}
        })
    }

    /// The call object a dialect writes, `parameters` nested under `arguments`.
    fn call(parameters: &Value) -> Value {
        json!({
            "type": "object",
            "properties": {"name": {"const": "f"}, "arguments": nest(parameters, "/properties/arguments")},
            "required": ["name", "arguments"],
            "additionalProperties": false
        })
    }

    /// Whether both the converter's grammar and llguidance (as the embedded engine
    /// compiles it) accept `text` under `schema`; panics when they disagree.
    fn accepts(schema: &Value, text: &str) -> bool {
        let compiled = compile(schema, &Options::default()).expect("compiles");
        let ours = Validator::from_grammar(&compiled.grammar)
            .expect("a grammar")
            .accepts(text);
        let mut embedded = Grammar::new("root");
        embedded.set_rule("root", Expr::Json(schema.clone()));
        let llguidance = Validator::from_grammar(&embedded)
            .expect("llguidance compiles it")
            .accepts(text);
        assert_eq!(ours, llguidance, "{text} under {schema}");
        ours
    }

    #[test]
    fn recursive_defs_nested_under_arguments() {
        let schema = call(&tree());
        let deep = r#"{"name": "f", "arguments": {"tree": {"value": 1, "left": {"value": 2, "right": {"value": 3}}}, "1st": 4}}"#;
        assert!(accepts(&schema, deep));
        let bad = r#"{"name": "f", "arguments": {"tree": {"value": 1, "left": {"value": "x"}}}}"#;
        assert!(!accepts(&schema, bad));
    }

    #[test]
    fn draft_7_definitions_and_pointers_into_a_definition() {
        let parameters = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/definitions/pair/properties/left"},
                "b": {"$ref": "#/$defs/a/properties/b"}
            },
            "required": ["a", "b"],
            "definitions": {"pair": {"properties": {"left": {"type": "boolean"}}}},
            "$defs": {"a": {"properties": {"b": {"enum": ["x", "y"]}}}}
        });
        let schema = call(&parameters);
        assert!(accepts(
            &schema,
            r#"{"name": "f", "arguments": {"a": true, "b": "y"}}"#
        ));
        assert!(!accepts(
            &schema,
            r#"{"name": "f", "arguments": {"a": 1, "b": "y"}}"#
        ));
    }

    #[test]
    fn the_document_itself_and_data_are_kept_apart() {
        let parameters = json!({
            "type": "object",
            "properties": {"child": {"$ref": "#"}, "note": {"const": {"$ref": "#/x"}}}
        });
        let nested = nest(&parameters, "/properties/arguments");
        assert_eq!(
            nested["properties"]["child"]["$ref"],
            "#/properties/arguments"
        );
        assert_eq!(nested["properties"]["note"]["const"]["$ref"], "#/x");
        assert!(accepts(
            &call(&parameters),
            r#"{"name": "f", "arguments": {"child": {"child": {}}}}"#
        ));
    }

    #[test]
    fn a_resource_with_its_own_id_is_left_as_it_is() {
        let parameters = json!({
            "$id": "https://example.com/tree.json",
            "$ref": "#/$defs/leaf",
            "$defs": {"leaf": {"type": "integer"}}
        });
        assert_eq!(nest(&parameters, "/properties/arguments"), parameters);
    }

    #[test]
    fn a_detached_property_carries_its_document() {
        let document = tree();
        let property = detached(&document, &document["properties"]["tree"]);
        assert!(accepts(&property, r#"{"value": 1, "left": {"value": 2}}"#));
        assert!(!accepts(&property, r#"{"value": 1, "left": {}}"#));
        let plain = &document["properties"]["1st"];
        assert_eq!(&detached(&document, plain), plain);
    }
}
