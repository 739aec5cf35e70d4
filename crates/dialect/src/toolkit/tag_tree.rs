//! Arguments written as a tree of tags, one element per member, named by its key, read back
//! into JSON with the tool's schema (MiniMax M3):
//!
//! ```text
//! ]<]minimax[>[<city>Paris]<]minimax[>[</city>
//! ]<]minimax[>[<number>]<]minimax[>[<real>1.5]<]minimax[>[</real>]<]minimax[>[</number>
//! ]<]minimax[>[<tags>]<]minimax[>[<item>a]<]minimax[>[</item>]<]minimax[>[</tags>
//! ```
//!
//! Every tag follows a fixed prefix (MiniMax's `]<]minimax[>[` token). An object is its
//! members' elements, an array its `<item>` elements, anything else text typed as
//! [`crate::toolkit::typed_args`] reads it. The text alone cannot tell a string that holds
//! tags from an object, so the schema decides: a value whose schema allows a string is the
//! text up to its closing tag, whatever it holds (as llama.cpp reads it); any other value
//! that starts with a tag is an object, or an array when its first tag is `<item>`. An
//! element written twice under one parent gives an array of its values.

use serde_json::{Map, Value};

use crate::toolkit::typed_args::{may_be_string, typed_value};

/// How deep elements nest before the text is refused.
const MAX_DEPTH: usize = 32;

/// The tag of an array's element.
pub const ITEM: &str = "item";

/// A reader of tag trees whose tags all follow `prefix`.
#[derive(Debug, Clone, Copy)]
pub struct TagTree<'a> {
    pub prefix: &'a str,
}

impl TagTree<'_> {
    /// The members written in `text` (whitespace between elements is layout), typed by
    /// `properties`; `None` when `text` is not a sequence of whole elements.
    pub fn members(
        &self,
        text: &str,
        properties: Option<&Map<String, Value>>,
    ) -> Option<Map<String, Value>> {
        let (members, rest) = self.elements(text, properties, 0)?;
        rest.trim().is_empty().then_some(members)
    }

    /// Elements from the start of `text` while one opens, and the text after them.
    fn elements<'t>(
        &self,
        text: &'t str,
        properties: Option<&Map<String, Value>>,
        depth: usize,
    ) -> Option<(Map<String, Value>, &'t str)> {
        let mut members = Map::new();
        let mut repeated = Vec::new();
        let mut rest = text;
        while let Some(tag) = self.opening(rest) {
            let after = &rest.trim_start()[self.prefix.len() + tag.len() + 2..];
            let schema = properties.and_then(|properties| properties.get(tag));
            let (value, after) = self.value(after, tag, schema, depth + 1)?;
            add_member(&mut members, &mut repeated, tag, value);
            rest = after;
        }
        Some((members, rest))
    }

    /// The tag of the element that opens `text` (after whitespace), if one does.
    fn opening<'t>(&self, text: &'t str) -> Option<&'t str> {
        let rest = text
            .trim_start()
            .strip_prefix(self.prefix)?
            .strip_prefix('<')?;
        let (tag, _) = rest.split_once('>')?;
        let bad = tag.is_empty()
            || tag.starts_with('/')
            || tag.contains(|c: char| c == '<' || c.is_whitespace());
        (!bad).then_some(tag)
    }

    /// The value of element `tag` from `text` (just past its opening tag) through its
    /// closing tag, and the text after it.
    fn value<'t>(
        &self,
        text: &'t str,
        tag: &str,
        schema: Option<&Value>,
        depth: usize,
    ) -> Option<(Value, &'t str)> {
        let close = format!("{}</{tag}>", self.prefix);
        let nested = self
            .opening(text)
            .filter(|_| !schema.is_some_and(may_be_string));
        let (value, rest) = match nested {
            _ if depth > MAX_DEPTH => return None,
            Some(ITEM) => {
                let (items, rest) = self.items(text, branch(schema, "array"), depth)?;
                (Value::Array(items), rest)
            }
            Some(_) => {
                let properties = branch(schema, "object")
                    .and_then(|object| object.get("properties"))
                    .and_then(Value::as_object);
                let (members, rest) = self.elements(text, properties, depth)?;
                (Value::Object(members), rest)
            }
            None => {
                let (raw, rest) = text.split_once(close.as_str())?;
                return Some((scalar(raw, schema), rest));
            }
        };
        let rest = rest.trim_start().strip_prefix(close.as_str())?;
        Some((value, rest))
    }

    /// An array's `<item>` elements from the start of `text`, typed by its `items`.
    fn items<'t>(
        &self,
        text: &'t str,
        array: Option<&Value>,
        depth: usize,
    ) -> Option<(Vec<Value>, &'t str)> {
        let schema = array.and_then(|array| array.get("items"));
        let mut items = Vec::new();
        let mut rest = text;
        while self.opening(rest) == Some(ITEM) {
            let after = &rest.trim_start()[self.prefix.len() + ITEM.len() + 2..];
            let (value, after) = self.value(after, ITEM, schema, depth + 1)?;
            items.push(value);
            rest = after;
        }
        Some((items, rest))
    }
}

/// `value` as member `tag`: an element written again does not replace the first but joins
/// it in an array of them all (`<tag>a</tag><tag>b</tag>` is `["a", "b"]`), so no value
/// the model wrote is lost. `repeated` holds the tags already gathered so.
fn add_member(
    members: &mut Map<String, Value>,
    repeated: &mut Vec<String>,
    tag: &str,
    value: Value,
) {
    match members.get_mut(tag) {
        None => {
            members.insert(tag.to_string(), value);
        }
        Some(Value::Array(values)) if repeated.iter().any(|seen| seen == tag) => values.push(value),
        Some(first) => {
            *first = Value::Array(vec![first.take(), value]);
            repeated.push(tag.to_string());
        }
    }
}

/// A value with no elements: text typed by `schema`, or, empty, the empty array or
/// object a schema that allows no string takes it for (the template writes no items).
fn scalar(raw: &str, schema: Option<&Value>) -> Value {
    let container = schema.filter(|schema| raw.trim().is_empty() && !may_be_string(schema));
    if branch(container, "array").is_some() {
        Value::Array(Vec::new())
    } else if branch(container, "object").is_some() {
        Value::Object(Map::new())
    } else {
        typed_value(raw, schema)
    }
}

/// The part of `schema` that describes a value of JSON type `kind` (`object`, `array`):
/// itself, or its first `anyOf` / `oneOf` branch that does.
pub fn branch<'s>(schema: Option<&'s Value>, kind: &str) -> Option<&'s Value> {
    let schema = schema?;
    let shape = if kind == "object" {
        "properties"
    } else {
        "items"
    };
    let declared = match schema.get("type") {
        Some(Value::String(declared)) => declared == kind,
        Some(Value::Array(declared)) => declared.iter().any(|declared| declared == kind),
        _ => schema.get(shape).is_some(),
    };
    if declared {
        return Some(schema);
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key)?.as_array())
        .flatten()
        .find_map(|alternative| branch(Some(alternative), kind))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TREE: TagTree = TagTree { prefix: "]~" };

    fn read(text: &str, properties: Value) -> Option<Value> {
        TREE.members(text, properties.as_object())
            .map(Value::Object)
    }

    #[test]
    fn scalars_are_typed_by_their_schema() {
        let properties = json!({"n": {"type": "integer"}, "s": {"type": "string"}});
        let text = "]~<n>12]~</n>]~<s>12]~</s>";
        assert_eq!(read(text, properties), Some(json!({"n": 12, "s": "12"})));
    }

    #[test]
    fn objects_and_arrays_nest() {
        let properties = json!({
            "tags": {"type": "array", "items": {"type": "string"}},
            "point": {"type": "object", "properties": {"x": {"type": "number"}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}
        });
        let text = "]~<tags>]~<item>a]~</item> ]~<item>b]~</item>]~</tags>\
                    ]~<point>]~<x>-1.5]~</x>]~</point>\
                    ]~<rows>]~<item>]~<id>1]~</id>]~</item>]~</rows>";
        let expected = json!({"tags": ["a", "b"], "point": {"x": -1.5}, "rows": [{"id": 1}]});
        assert_eq!(read(text, properties), Some(expected));
    }

    #[test]
    fn a_union_with_a_string_keeps_the_tags_as_text() {
        let properties = json!({
            "label": {"oneOf": [{"type": "string"}, {"type": "object"}]},
            "limit": {"oneOf": [{"type": "integer"}, {"type": "object", "properties": {"max": {"type": "integer"}}}]}
        });
        let text = "]~<label>]~<text>hi]~</text>]~</label>]~<limit>]~<max>3]~</max>]~</limit>";
        let expected = json!({"label": "]~<text>hi]~</text>", "limit": {"max": 3}});
        assert_eq!(read(text, properties), Some(expected));
    }

    #[test]
    fn empty_containers_and_unknown_keys() {
        let properties = json!({"a": {"type": "array"}, "o": {"type": "object"}});
        let text = "]~<a>]~</a>]~<o> ]~</o>";
        assert_eq!(read(text, properties), Some(json!({"a": [], "o": {}})));
        let text = "]~<a>1]~</a>]~<b>x y]~</b>";
        assert_eq!(read(text, json!({})), Some(json!({"a": 1, "b": "x y"})));
    }

    #[test]
    fn broken_trees_are_refused() {
        for text in [
            "]~<a>1",
            "]~<a>]~<b>1]~</b>",
            "]~<a>1]~</a> trailing",
            "]~<>1]~</>",
        ] {
            assert_eq!(read(text, json!({})), None, "{text}");
        }
    }
}
