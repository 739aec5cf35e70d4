//! Values printed the way Python prints them.
//!
//! A chat template written for Python jinja2 sees Python objects: `{{ x }}` is `str(x)`,
//! so a dict prints as `{'a': 1}`, `None` as `None`, `True` as `True`, and a float as its
//! shortest round-trip `repr` (`1.0`, `1e-05`, `1e+16`). minijinja prints JSON-ish values
//! instead, so templates that print tool schemas or arguments directly would drift by a
//! quote or a capital letter. This module walks template values; the rules for strings
//! and floats are `toolbridge_pyrepr`'s ([`write_str_repr`], [`float_repr`]), the same
//! ones prompts are written with. Both the output formatter and the `string` filter use it.
//! A list can hold one long string many times over, so printing stops at a cap (the
//! bytes left to the render) instead of building what the cap refuses.

use minijinja::value::{Value, ValueKind};
use minijinja::Error;
use toolbridge_pyrepr::{float_repr, write_str_repr};

use super::limits::too_large;

/// `str(value)` as Python prints it, or an error when it is longer than `cap` bytes.
pub fn py_str(value: &Value, cap: usize) -> Result<String, Error> {
    let mut out = String::new();
    match value.as_str() {
        Some(s) if value.kind() == ValueKind::String => out.push_str(s),
        _ => write_repr_at(&mut out, value, 0, cap),
    }
    if out.len() > cap {
        return Err(too_large());
    }
    Ok(out)
}

/// Containers nested deeper than this print as `...`: a template can build a list that
/// holds itself a thousand times over, and printing must not overflow the stack.
const MAX_DEPTH: usize = 512;

/// Appends `repr(value)`, stopping once `out` is longer than `cap`.
fn write_repr_at(out: &mut String, value: &Value, depth: usize, cap: usize) {
    if out.len() > cap {
        return;
    }
    if depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => write_number(out, value),
        ValueKind::String => write_str_repr(out, value.as_str().unwrap_or_default()),
        ValueKind::Bytes => out.push_str(&format!("{value}")),
        ValueKind::Seq | ValueKind::Iterable => write_seq(out, value, depth, cap),
        ValueKind::Map => write_map(out, value, depth, cap),
        _ => out.push_str(&value.to_string()),
    }
}

fn write_number(out: &mut String, value: &Value) {
    match f64_if_float(value) {
        Some(f) => out.push_str(&float_repr(f)),
        None => out.push_str(&value.to_string()),
    }
}

/// The float inside `value`, or `None` when it is an integer.
pub fn f64_if_float(value: &Value) -> Option<f64> {
    if value.is_integer() {
        None
    } else {
        f64::try_from(value.clone()).ok()
    }
}

fn write_seq(out: &mut String, value: &Value, depth: usize, cap: usize) {
    out.push('[');
    if let Ok(items) = value.try_iter() {
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr_at(out, &item, depth + 1, cap);
        }
    }
    out.push(']');
}

fn write_map(out: &mut String, value: &Value, depth: usize, cap: usize) {
    out.push('{');
    if let Ok(keys) = value.try_iter() {
        for (i, key) in keys.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr_at(out, &key, depth + 1, cap);
            out.push_str(": ");
            write_repr_at(
                out,
                &value.get_item(&key).unwrap_or_default(),
                depth + 1,
                cap,
            );
        }
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_print_like_python_str() {
        let v = Value::from(minijinja::value::Serde(serde_json::json!({
            "a": [1, 2.0, "x", null, true],
            "it's": "\"q\"\n"
        })));
        assert_eq!(
            py_str(&v, usize::MAX).unwrap(),
            r#"{'a': [1, 2.0, 'x', None, True], "it's": '"q"\n'}"#
        );
        assert_eq!(py_str(&Value::from("plain"), 5).unwrap(), "plain");
        // CPython: str(['a\xa0b\u200bc', 'x\U000f0000']) escapes what is not printable.
        let v = Value::from(vec!["a\u{a0}b\u{200b}c", "x\u{f0000}"]);
        assert_eq!(
            py_str(&v, 100).unwrap(),
            r"['a\xa0b\u200bc', 'x\U000f0000']"
        );
    }

    #[test]
    fn printing_stops_at_the_cap() {
        let long = Value::from("x".repeat(1000));
        let many = Value::from(vec![long; 1000]);
        assert!(py_str(&many, 10_000).is_err());
        assert!(py_str(&Value::from("plain"), 4).is_err());
    }
}
