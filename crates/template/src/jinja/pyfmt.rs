//! Values printed the way Python prints them.
//!
//! A chat template written for Python jinja2 sees Python objects: `{{ x }}` is `str(x)`,
//! so a dict prints as `{'a': 1}`, `None` as `None`, `True` as `True`, and a float as its
//! shortest round-trip `repr` (`1.0`, `1e-05`, `1e+16`). minijinja prints JSON-ish values
//! instead, so templates that print tool schemas or arguments directly would drift by a
//! quote or a capital letter. This module is the single place that knows Python's rules;
//! both the output formatter and the `string` filter use it.

use minijinja::value::{Value, ValueKind};

/// `str(value)` as Python prints it.
pub fn py_str(value: &Value) -> String {
    let mut out = String::new();
    write_str(&mut out, value);
    out
}

/// Appends `str(value)`: strings are themselves, everything else is its `repr`.
pub fn write_str(out: &mut String, value: &Value) {
    match value.as_str() {
        Some(s) if value.kind() == ValueKind::String => out.push_str(s),
        _ => write_repr(out, value),
    }
}

/// Containers nested deeper than this print as `...`: a template can build a list that
/// holds itself a thousand times over, and printing must not overflow the stack.
const MAX_DEPTH: usize = 512;

/// Appends `repr(value)`.
pub fn write_repr(out: &mut String, value: &Value) {
    write_repr_at(out, value, 0);
}

fn write_repr_at(out: &mut String, value: &Value, depth: usize) {
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
        ValueKind::Seq | ValueKind::Iterable => write_seq(out, value, depth),
        ValueKind::Map => write_map(out, value, depth),
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

fn write_seq(out: &mut String, value: &Value, depth: usize) {
    out.push('[');
    if let Ok(items) = value.try_iter() {
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr_at(out, &item, depth + 1);
        }
    }
    out.push(']');
}

fn write_map(out: &mut String, value: &Value, depth: usize) {
    out.push('{');
    if let Ok(keys) = value.try_iter() {
        for (i, key) in keys.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr_at(out, &key, depth + 1);
            out.push_str(": ");
            write_repr_at(out, &value.get_item(&key).unwrap_or_default(), depth + 1);
        }
    }
    out.push('}');
}

/// Python's `repr` of a string: single quotes unless the text holds a single quote and
/// no double quote; backslash escapes for the quote, backslash and control characters.
pub fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `repr(float)`: the shortest digits that round-trip, in positional notation
/// for exponents in `-4..16` and scientific (`1e-05`, `1.5e+16`) outside it.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        format!("{sign}{}", positional(&digits, exponent))
    } else {
        let (head, tail) = digits.split_at(1);
        let dot_tail = if tail.is_empty() {
            String::new()
        } else {
            format!(".{tail}")
        };
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{head}{dot_tail}e{esign}{:02}", exponent.abs())
    }
}

/// Places the decimal point in `digits` (`d.ddd × 10^exponent`), keeping at least one
/// digit after it as Python does (`3.0`).
fn positional(digits: &str, exponent: i32) -> String {
    if exponent < 0 {
        let zeros = "0".repeat((-exponent - 1) as usize);
        return format!("0.{zeros}{digits}");
    }
    let point = exponent as usize + 1;
    if digits.len() > point {
        format!("{}.{}", &digits[..point], &digits[point..])
    } else {
        format!("{digits}{}.0", "0".repeat(point - digits.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_python_repr() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (100.0, "100.0"),
            (0.0, "0.0"),
        ];
        for (f, expected) in cases {
            assert_eq!(float_repr(f), expected, "{f}");
        }
    }

    #[test]
    fn containers_print_like_python_str() {
        let v = Value::from(minijinja::value::Serde(serde_json::json!({
            "a": [1, 2.0, "x", null, true],
            "it's": "\"q\"\n"
        })));
        assert_eq!(
            py_str(&v),
            r#"{'a': [1, 2.0, 'x', None, True], "it's": '"q"\n'}"#
        );
        assert_eq!(py_str(&Value::from("plain")), "plain");
    }
}
