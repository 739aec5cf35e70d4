//! Reading another API's request as a chat request: the helpers the Responses and the
//! Messages mappings share.
//!
//! Both write chat-completions JSON from the other API's JSON, so what they share is how
//! that JSON is read: a field that is absent and one that is `null` mean the same, a
//! required string field missing is an error naming it, and the keys a mapping does not
//! read pass through to the chat request unchanged (open-model extensions such as
//! `top_k` or `chat_template_kwargs`).

use serde_json::{Map, Value};

/// `value[key]` unless absent or `null`.
pub fn present<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|field| !field.is_null())
}

/// The string field `key` of `value`, which must be there.
pub fn text_field<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("Missing required string field '{key}'."))
}

/// The keys of `request` a mapping does not `read`, with their values, for the chat
/// request to read as its own.
pub fn passed_through(request: &Map<String, Value>, read: &[&str]) -> Map<String, Value> {
    request
        .iter()
        .filter(|(key, _)| !read.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_is_absent_and_missing_strings_are_named() {
        let value = json!({"a": null, "b": "x", "c": 1});
        assert!(present(&value, "a").is_none());
        assert_eq!(text_field(&value, "b"), Ok("x"));
        assert_eq!(
            text_field(&value, "c"),
            Err("Missing required string field 'c'.".to_owned())
        );
        let Value::Object(map) = value else {
            unreachable!()
        };
        assert_eq!(
            passed_through(&map, &["a", "b"]),
            json!({"c": 1}).as_object().cloned().unwrap_or_default()
        );
    }
}
