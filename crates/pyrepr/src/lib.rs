//! JSON values printed the way Python prints them.
//!
//! Prompts written by Python code show JSON data through Python's printers: Llama 3.x
//! zero-shot prompts put `repr(functions)` in the system turn (`[{'name': 'get_weather',
//! 'parameters': {'type': 'object', …}}]`, seed 002), Functionary's templates splice in
//! `str(value)`, and older prompt styles quote constants with `json.dumps`. Each printer
//! here follows CPython's rules: `repr` picks single quotes unless the text holds a `'`
//! and no `"`; `json.dumps` escapes everything outside printable ASCII; floats print as
//! the shortest text that reads back to the same number (`0.1`, `1e-05`, `1e+16`).
//!
//! This crate is the one copy of those rules: `grammar`'s prompt renderers, `dialect`'s
//! pythonic calls and indented tool listings ([`json_dumps_with`]), and `template`'s
//! Python values and `tojson` in chat templates ([`write_str_repr`], [`float_repr`],
//! [`write_json_str`], [`JsonLayout`]) all print through it, so a prompt and a template
//! never disagree on a quote, an escape or an indent.

mod printable;

use std::borrow::Cow;
use std::fmt::Write;

use printable::is_printable;
use serde_json::{Number, Value};

/// How deep containers nest before they print as `...` (Python's `repr` of a
/// self-containing list), so a hostile value cannot overflow the stack.
pub const MAX_DEPTH: usize = 64;

/// Python's `repr` of the value parsed from this JSON (`json.loads`): `None`, `True`,
/// `'text'`, `[1, 2]`, `{'a': 1.5}`. Containers nested deeper than [`MAX_DEPTH`] print
/// as `...`.
pub fn python_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value, 0);
    out
}

/// Python's `str` of the value: strings as they are, everything else as [`python_repr`].
pub fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => python_repr(other),
    }
}

/// Python's `json.dumps(value)` with its defaults: `", "` and `": "` separators and
/// `ensure_ascii`, so every character outside printable ASCII is a `\u` escape.
pub fn json_dumps(value: &Value) -> String {
    json_dumps_with(value, &JsonLayout::DEFAULT)
}

/// Python's `json.dumps(value, …)` laid out as `layout` says (`indent`, `separators`,
/// `ensure_ascii`).
pub fn json_dumps_with(value: &Value, layout: &JsonLayout) -> String {
    let mut out = String::new();
    write_literal(&mut out, value, 0, &JSON, layout);
    out
}

/// How `json.dumps` lays its text out: Python's `indent`, `separators` and
/// `ensure_ascii` arguments. Python's `repr` lays containers out as the default does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonLayout {
    /// Each level's indent; `None` writes everything on one line.
    pub indent: Option<Cow<'static, str>>,
    pub item_separator: Cow<'static, str>,
    pub key_separator: Cow<'static, str>,
    /// Every character outside printable ASCII as a `\u` escape.
    pub ensure_ascii: bool,
}

impl JsonLayout {
    /// `json.dumps`' defaults: one line, `", "` and `": "`, ASCII only.
    pub const DEFAULT: JsonLayout = JsonLayout {
        indent: None,
        item_separator: Cow::Borrowed(", "),
        key_separator: Cow::Borrowed(": "),
        ensure_ascii: true,
    };

    /// `json.dumps(value, indent=spaces)`: each item on its own line, and so `","`
    /// between items, as Python defaults when indenting.
    pub fn indented(spaces: usize) -> JsonLayout {
        JsonLayout {
            indent: Some(" ".repeat(spaces).into()),
            item_separator: Cow::Borrowed(","),
            ..JsonLayout::DEFAULT
        }
    }

    /// Before item `index` of a container whose items are `depth` levels down: the
    /// separator after the previous item, then a new line and the indent, if indented.
    pub fn open_item(&self, out: &mut String, index: usize, depth: usize) {
        if index > 0 {
            out.push_str(&self.item_separator);
        }
        self.new_line(out, depth);
    }

    /// After the last item of a container `depth` levels down, before its bracket.
    pub fn close(&self, out: &mut String, depth: usize) {
        self.new_line(out, depth);
    }

    fn new_line(&self, out: &mut String, depth: usize) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(indent);
            }
        }
    }
}

/// How one literal notation spells the scalars; containers are laid out by a
/// [`JsonLayout`] in both Python's `repr` and `json.dumps`.
struct Spelling {
    null: &'static str,
    booleans: [&'static str; 2],
    string: fn(&mut String, &str, &JsonLayout),
    too_deep: &'static str,
}

const REPR: Spelling = Spelling {
    null: "None",
    booleans: ["False", "True"],
    string: |out, s, _| write_str_repr(out, s),
    too_deep: "...",
};

const JSON: Spelling = Spelling {
    null: "null",
    booleans: ["false", "true"],
    string: |out, s, layout| write_json_str(out, s, layout.ensure_ascii),
    too_deep: "null",
};

/// [`python_repr`] of `value` onto `out`, `depth` levels down already.
pub fn write_repr(out: &mut String, value: &Value, depth: usize) {
    write_literal(out, value, depth, &REPR, &JsonLayout::DEFAULT);
}

fn write_literal(
    out: &mut String,
    value: &Value,
    depth: usize,
    spelling: &Spelling,
    layout: &JsonLayout,
) {
    match value {
        Value::Null => out.push_str(spelling.null),
        Value::Bool(b) => out.push_str(spelling.booleans[usize::from(*b)]),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => (spelling.string)(out, s, layout),
        _ if depth >= MAX_DEPTH => out.push_str(spelling.too_deep),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                layout.open_item(out, i, depth + 1);
                write_literal(out, item, depth + 1, spelling, layout);
            }
            layout.close(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                layout.open_item(out, i, depth + 1);
                (spelling.string)(out, key, layout);
                out.push_str(&layout.key_separator);
                write_literal(out, item, depth + 1, spelling, layout);
            }
            layout.close(out, depth);
            out.push('}');
        }
    }
}

/// Integers print as written; a JSON number with a fraction or exponent is a Python
/// float (`json.loads("2.0")` is `2.0`).
fn write_number(out: &mut String, n: &Number) {
    if n.is_f64() {
        out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN)));
    } else {
        out.push_str(&n.to_string());
    }
}

/// Python's `repr(float)`: the shortest round-tripping digits, positional for decimal
/// exponents in `-4..16`, scientific with a signed two-digit exponent outside it.
pub fn float_repr(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "nan"
        } else if f > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    // Rust's `{:e}` prints the same shortest digits: `-1.25e-7`.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        return format!("{sign}{}", positional(&digits, exponent));
    }
    let (head, tail) = digits.split_at(1);
    let point = if tail.is_empty() { "" } else { "." };
    let esign = if exponent < 0 { '-' } else { '+' };
    format!(
        "{sign}{head}{point}{tail}e{esign}{:02}",
        exponent.unsigned_abs()
    )
}

/// `d.ddd × 10^exponent` written out, with at least one digit after the point (`3.0`).
fn positional(digits: &str, exponent: i32) -> String {
    if exponent < 0 {
        let zeros = "0".repeat(exponent.unsigned_abs() as usize - 1);
        return format!("0.{zeros}{digits}");
    }
    let point = exponent as usize + 1;
    if digits.len() > point {
        format!("{}.{}", &digits[..point], &digits[point..])
    } else {
        format!("{digits}{}.0", "0".repeat(point - digits.len()))
    }
}

/// Appends Python's `repr(str)`: single quotes unless the text holds a `'` and no `"`;
/// backslash escapes for the quote, the backslash, `\n` `\r` `\t`, and `\xhh` / `\uhhhh`
/// / `\Uhhhhhhhh` for every character `str.isprintable` rejects.
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
            c if !is_printable(c) => write_py_escape(out, c),
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// `\xhh`, `\uhhhh` or `\Uhhhhhhhh`, the shortest that holds the code point.
fn write_py_escape(out: &mut String, c: char) {
    let code = c as u32;
    // Writing to a String cannot fail.
    let _ = match code {
        0..=0xff => write!(out, "\\x{code:02x}"),
        0x100..=0xffff => write!(out, "\\u{code:04x}"),
        _ => write!(out, "\\U{code:08x}"),
    };
}

/// Appends a JSON string as Python's `json.dumps` writes it: the short escapes, `\u00XX`
/// for other control characters, and with `ensure_ascii` every character outside
/// printable ASCII as `\uXXXX` (a surrogate pair above the BMP).
pub fn write_json_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    let mut plain_from = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            c if c < ' ' || (ensure_ascii && c > '~') => "",
            _ => continue,
        };
        out.push_str(&s[plain_from..i]);
        plain_from = i + c.len_utf8();
        if escape.is_empty() {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Expected values are what CPython 3.12 prints for `json.loads` of the same input.

    #[test]
    fn scalars_print_like_python() {
        let cases = [
            (json!(null), "None"),
            (json!(true), "True"),
            (json!(false), "False"),
            (json!(0), "0"),
            (json!(-7), "-7"),
            (json!(18446744073709551615u64), "18446744073709551615"),
        ];
        for (value, expected) in cases {
            assert_eq!(python_repr(&value), expected);
        }
    }

    #[test]
    fn floats_print_like_python_repr() {
        let cases = [
            ("2.0", "2.0"),
            ("0.1", "0.1"),
            ("-0.0", "-0.0"),
            ("1e-05", "1e-05"),
            ("0.0001", "0.0001"),
            ("1.5e16", "1.5e+16"),
            ("1e16", "1e+16"),
            ("123456789012345.6", "123456789012345.6"),
            ("1e300", "1e+300"),
            ("2.5e-300", "2.5e-300"),
            ("3.14159", "3.14159"),
        ];
        for (json, expected) in cases {
            let value: Value = serde_json::from_str(json).unwrap();
            assert_eq!(python_repr(&value), expected, "{json}");
        }
    }

    #[test]
    fn strings_pick_quotes_and_escapes_like_python() {
        let cases = [
            ("plain", "'plain'"),
            ("it's", "\"it's\""),
            ("say \"hi\"", "'say \"hi\"'"),
            ("it's \"both\"", "'it\\'s \"both\"'"),
            ("a\\b\n\t\r", "'a\\\\b\\n\\t\\r'"),
            ("\u{0}\u{1f}\u{7f}\u{85}", "'\\x00\\x1f\\x7f\\x85'"),
            ("café ☕ 日本", "'café ☕ 日本'"),
            (
                "nb\u{a0}sp zw\u{200b} bom\u{feff}",
                "'nb\\xa0sp zw\\u200b bom\\ufeff'",
            ),
            ("private\u{f0000}", "'private\\U000f0000'"),
        ];
        for (s, expected) in cases {
            assert_eq!(python_repr(&json!(s)), expected, "{s:?}");
        }
    }

    #[test]
    fn containers_print_like_python() {
        let value = json!({"a": [1, 2.5, null], "b": {}, "c": [], "it's": {"x": true}});
        assert_eq!(
            python_repr(&value),
            "{'a': [1, 2.5, None], 'b': {}, 'c': [], \"it's\": {'x': True}}"
        );
        assert_eq!(python_str(&json!("raw 'text'")), "raw 'text'");
        assert_eq!(python_str(&json!([1, "a"])), "[1, 'a']");
    }

    #[test]
    fn json_dumps_escapes_like_python() {
        let value = json!({"k": "é\"\\\u{1}\u{7f}😀", "n": [1, 1.0, null, false]});
        assert_eq!(
            json_dumps(&value),
            r#"{"k": "\u00e9\"\\\u0001\u007f\ud83d\ude00", "n": [1, 1.0, null, false]}"#
        );
    }

    #[test]
    fn indented_json_is_laid_out_like_python() {
        let value = json!({"a": [1, {}], "b": "é\u{7f}"});
        assert_eq!(
            json_dumps_with(&value, &JsonLayout::indented(2)),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"\\u00e9\\u007f\"\n}"
        );
        let unescaped = JsonLayout {
            ensure_ascii: false,
            ..JsonLayout::DEFAULT
        };
        assert_eq!(
            json_dumps_with(&value, &unescaped),
            "{\"a\": [1, {}], \"b\": \"é\u{7f}\"}"
        );
    }

    #[test]
    fn deep_values_are_cut_off_readably() {
        let mut value = json!(1);
        for _ in 0..(MAX_DEPTH + 10) {
            value = json!([value]);
        }
        let repr = python_repr(&value);
        assert!(repr.contains("..."));
        assert_eq!(repr.matches('[').count(), MAX_DEPTH);
    }
}
