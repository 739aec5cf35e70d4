//! JSON contexts turned into template values.
//!
//! Every render converts its context, so this is on the per-request path. Going through
//! serde's `Serializer` costs about an eighth of a whole render on tool-heavy contexts;
//! walking the JSON tree directly does the same work without the indirection. Key order
//! is kept, as Python's dicts keep it. A context nested deeper than the render's depth
//! bound is refused here, before the walk could run out of stack.

use minijinja::{Error, Value};

use super::limits::too_deep;

/// The template value of a JSON value, if it nests at most `max_depth` deep.
pub fn json_to_value(json: &serde_json::Value, max_depth: usize) -> Result<Value, Error> {
    convert(json, max_depth).ok_or_else(|| too_deep(max_depth))
}

fn convert(json: &serde_json::Value, depth_left: usize) -> Option<Value> {
    let below = || depth_left.checked_sub(1);
    Some(match json {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => number_value(n),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            let depth_left = below()?;
            items
                .iter()
                .map(|item| convert(item, depth_left))
                .collect::<Option<Vec<Value>>>()?
                .into()
        }
        serde_json::Value::Object(map) => {
            let depth_left = below()?;
            let pairs = map
                .iter()
                .map(|(k, v)| Some((Value::from(k.as_str()), convert(v, depth_left)?)))
                .collect::<Option<Vec<_>>>()?;
            Value::from_pairs(pairs)
        }
    })
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
    use minijinja::{ErrorKind, Value};

    #[test]
    fn matches_the_serde_conversion() {
        let json = serde_json::json!({
            "z": [1, -2, 18446744073709551615u64, 1.5, null, true, "s"],
            "a": {"nested": {"k": []}, "empty": {}}
        });
        assert_eq!(json_to_value(&json, 4).unwrap(), Value::from(Serde(&json)));
        let keys: Vec<String> = json_to_value(&json, 4)
            .unwrap()
            .try_iter()
            .unwrap()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(keys, ["z", "a"]);
    }

    #[test]
    fn refuses_contexts_nested_past_the_bound() {
        let json = serde_json::json!({"a": [[{"b": []}]]});
        assert!(json_to_value(&json, 5).is_ok());
        let err = json_to_value(&json, 4).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueLimit);
    }
}
