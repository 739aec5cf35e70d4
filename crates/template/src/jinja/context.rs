//! JSON contexts turned into template values.
//!
//! Every render converts its context, so this is on the per-request path. Going through
//! serde's `Serializer` costs about an eighth of a whole render on tool-heavy contexts;
//! walking the JSON tree directly does the same work without the indirection. Key order
//! is kept, as Python's dicts keep it.

use minijinja::Value;

/// The template value of a JSON value.
pub fn json_to_value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => number_value(n),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => items.iter().map(json_to_value).collect(),
        serde_json::Value::Object(map) => Value::from_pairs(
            map.iter()
                .map(|(k, v)| (Value::from(k.as_str()), json_to_value(v))),
        ),
    }
}

fn number_value(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::from(i)
    } else if let Some(u) = n.as_u64() {
        Value::from(u)
    } else {
        Value::from(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::json_to_value;
    use minijinja::value::Serde;
    use minijinja::Value;

    #[test]
    fn matches_the_serde_conversion() {
        let json = serde_json::json!({
            "z": [1, -2, 18446744073709551615u64, 1.5, null, true, "s"],
            "a": {"nested": {"k": []}, "empty": {}}
        });
        assert_eq!(json_to_value(&json), Value::from(Serde(&json)));
        let keys: Vec<String> = json_to_value(&json)
            .try_iter()
            .unwrap()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(keys, ["z", "a"]);
    }
}
