//! JSON exactly as Go's `encoding/json.Marshal` writes it.
//!
//! Ollama's `json` template function and the `String()` methods of its tool types are
//! `json.Marshal`, and a model's prompt carries that text byte for byte. Go differs from
//! `serde_json` in two places, both handled by [`GoFormatter`]: strings escape `<`, `>`,
//! `&`, U+2028 and U+2029 (Go's HTML-safe default), and a `float64` prints without a
//! trailing `.0`, in exponent form only below 1e-6 or from 1e21 up (`1e+21`, `1e-7`).

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `json.Marshal(value)` as text. Go's `json` template function prints nothing when
/// marshalling fails, and so does this.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    match value.serialize(&mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// A `serde_json` formatter with Go's escaping and float format.
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(float(value).as_bytes())
    }

    fn write_f32<W: ?Sized + Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(['<', '>', '&', '\u{2028}', '\u{2029}']) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let Some(special) = rest[at..].chars().next() else {
                break;
            };
            write!(writer, "\\u{:04x}", u32::from(special))?;
            rest = &rest[at + special.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}

/// A `float64` as Go's JSON encoder prints it: the shortest digits that read back the
/// same number, `'f'` format, or `'e'` format below 1e-6 and from 1e21 up.
pub fn float(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        let (mantissa, exponent) = shortest_exponent_form(value);
        let sign = if exponent < 0 { '-' } else { '+' };
        let digits = exponent.unsigned_abs();
        // Go pads the exponent to two digits, then JSON drops the padding of e-07.
        if exponent < 0 {
            format!("{mantissa}e{sign}{digits}")
        } else {
            format!("{mantissa}e{sign}{digits:02}")
        }
    } else {
        format!("{value}")
    }
}

/// The shortest round-trip digits of `value` as `d.ddd` and a decimal exponent.
pub fn shortest_exponent_form(value: f64) -> (String, i32) {
    let text = format!("{value:e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => (mantissa.to_owned(), exponent.parse().unwrap_or(0)),
        None => (text, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_html_characters_as_go_does() {
        assert_eq!(
            to_string("a<b>&c\u{2028}\n\t\u{1}\"\\"),
            r#""a\u003cb\u003e\u0026c\u2028\n\t\u0001\"\\""#
        );
    }

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(to_string(&2535.0), "2535");
        assert_eq!(to_string(&32222000403.0), "32222000403");
        assert_eq!(to_string(&0.5), "0.5");
        assert_eq!(to_string(&1e21), "1e+21");
        assert_eq!(to_string(&1.5e-7), "1.5e-7");
        assert_eq!(to_string(&1e-100), "1e-100");
        assert_eq!(to_string(&-0.000001), "-0.000001");
        assert_eq!(to_string(&12345678901234567890.0), "12345678901234567000");
    }
}
