//! `tojson` as `transformers` defines it: Python's `json.dumps`.
//!
//! `transformers` replaces jinja2's HTML-safe `tojson` with
//! `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`, and
//! templates lean on its exact bytes: `", "` and `": "` between items, one space per
//! indent level, non-ASCII text left alone, floats as Python's `repr`. minijinja's own
//! `tojson` is serde_json's compact, HTML-escaped form, so it is replaced here.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use toolbridge_pyrepr::{float_repr, write_json_str, JsonLayout};

use super::pyfmt::f64_if_float;

/// How `json.dumps` was asked to print.
struct DumpOptions {
    layout: JsonLayout,
    sort_keys: bool,
    /// The longest text this call may build: the bytes left to the render.
    cap: usize,
}

/// The `tojson` filter: `tojson(x, ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`, arguments by position or by name as Python allows.
pub fn tojson(
    state: &State,
    value: Value,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let options = DumpOptions::from_args(&args, &kwargs, super::limits::bytes_left(state))?;
    kwargs.assert_all_used()?;
    let mut out = String::new();
    dump(&mut out, &value, &options, 0)?;
    Ok(out)
}

impl DumpOptions {
    fn from_args(args: &[Value], kwargs: &Kwargs, cap: usize) -> Result<Self, Error> {
        const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
        if args.len() > NAMES.len() {
            return Err(type_error(format!(
                "tojson() takes from 1 to 5 positional arguments but {} were given",
                args.len() + 1
            )));
        }
        let mut slots: [Value; 4] = Default::default();
        for (slot, value) in slots.iter_mut().zip(args.iter()) {
            *slot = value.clone();
        }
        for (slot, name) in slots.iter_mut().zip(NAMES) {
            if let Some(value) = kwargs.get::<Option<Value>>(name)? {
                *slot = value;
            }
        }
        let [ensure_ascii, indent, separators, sort_keys] = slots;
        let indent = indent_text(&indent)?;
        let (item_separator, key_separator) = separators_text(&separators, indent.is_some())?;
        Ok(DumpOptions {
            layout: JsonLayout {
                indent: indent.map(Into::into),
                item_separator: item_separator.into(),
                key_separator: key_separator.into(),
                ensure_ascii: ensure_ascii.is_true(),
            },
            sort_keys: sort_keys.is_true(),
            cap,
        })
    }
}

/// `indent` is an int (that many spaces; negative means none) or a string used as is.
fn indent_text(indent: &Value) -> Result<Option<String>, Error> {
    match indent.kind() {
        ValueKind::Undefined | ValueKind::None => Ok(None),
        ValueKind::String => Ok(Some(indent.as_str().unwrap_or_default().to_string())),
        ValueKind::Number if indent.is_integer() => {
            let n = i64::try_from(indent.clone()).unwrap_or(0).clamp(0, 1024);
            Ok(Some(" ".repeat(n as usize)))
        }
        _ => Err(type_error("indent must be an integer or a string".into())),
    }
}

/// Python's defaults: `(", ", ": ")` without indent, `(",", ": ")` with it.
fn separators_text(separators: &Value, indented: bool) -> Result<(String, String), Error> {
    if separators.is_none() || separators.is_undefined() {
        let item = if indented { "," } else { ", " };
        return Ok((item.into(), ": ".into()));
    }
    let parts: Vec<Value> = separators.try_iter()?.collect();
    match parts.as_slice() {
        [item, key] if item.as_str().is_some() && key.as_str().is_some() => Ok((
            item.as_str().unwrap_or_default().into(),
            key.as_str().unwrap_or_default().into(),
        )),
        _ => Err(type_error(
            "separators must be a pair of strings (item_separator, key_separator)".into(),
        )),
    }
}

/// Deeper than this and Python's encoder would have hit its recursion limit; here it
/// also keeps a hostile template's self-nesting list from overflowing the stack.
const MAX_DEPTH: usize = 512;

fn dump(out: &mut String, value: &Value, options: &DumpOptions, depth: usize) -> Result<(), Error> {
    if out.len() > options.cap {
        return Err(super::limits::too_large());
    }
    if depth > MAX_DEPTH {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "RecursionError: maximum recursion depth exceeded while encoding a JSON object",
        ));
    }
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => dump_number(out, value),
        ValueKind::String => write_json_str(
            out,
            value.as_str().unwrap_or_default(),
            options.layout.ensure_ascii,
        ),
        ValueKind::Seq => dump_seq(out, value, options, depth)?,
        ValueKind::Map => dump_map(out, value, options, depth)?,
        _ => {
            return Err(type_error(format!(
                "Object of type {} is not JSON serializable",
                python_type_name(value)
            )))
        }
    }
    Ok(())
}

fn python_type_name(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::Undefined => "Undefined",
        ValueKind::Iterable => "generator",
        ValueKind::Bytes => "bytes",
        _ => "object",
    }
}

fn dump_number(out: &mut String, value: &Value) {
    match f64_if_float(value) {
        Some(f) if f.is_nan() => out.push_str("NaN"),
        Some(f) if f.is_infinite() => out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" }),
        Some(f) => out.push_str(&float_repr(f)),
        None => out.push_str(&value.to_string()),
    }
}

fn dump_seq(
    out: &mut String,
    value: &Value,
    options: &DumpOptions,
    depth: usize,
) -> Result<(), Error> {
    let items: Vec<Value> = value.try_iter()?.collect();
    if items.is_empty() {
        out.push_str("[]");
        return Ok(());
    }
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        open_item(out, i, options, depth + 1)?;
        dump(out, item, options, depth + 1)?;
    }
    close_container(out, options, depth)?;
    out.push(']');
    Ok(())
}

fn dump_map(
    out: &mut String,
    value: &Value,
    options: &DumpOptions,
    depth: usize,
) -> Result<(), Error> {
    let mut keys: Vec<Value> = value.try_iter()?.collect();
    if keys.is_empty() {
        out.push_str("{}");
        return Ok(());
    }
    if options.sort_keys {
        sort_keys(&mut keys)?;
    }
    out.push('{');
    for (i, key) in keys.iter().enumerate() {
        open_item(out, i, options, depth + 1)?;
        write_json_str(out, &key_text(key)?, options.layout.ensure_ascii);
        out.push_str(&options.layout.key_separator);
        dump(out, &value.get_item(key)?, options, depth + 1)?;
    }
    close_container(out, options, depth)?;
    out.push('}');
    Ok(())
}

/// Python refuses to sort keys of mixed types (`'<' not supported between…`).
fn sort_keys(keys: &mut [Value]) -> Result<(), Error> {
    let first_kind = keys.first().map(Value::kind);
    if keys.iter().any(|k| Some(k.kind()) != first_kind) {
        return Err(type_error(
            "'<' not supported between instances of different key types".into(),
        ));
    }
    keys.sort();
    Ok(())
}

/// JSON object keys: strings as they are; numbers, booleans and None the way Python
/// converts them (`1`, `true`, `null`).
fn key_text(key: &Value) -> Result<String, Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_string()),
        ValueKind::None => Ok("null".into()),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
        ValueKind::Number => {
            let mut text = String::new();
            dump_number(&mut text, key);
            Ok(text)
        }
        _ => Err(type_error(format!(
            "keys must be str, int, float, bool or None, not {}",
            key.kind()
        ))),
    }
}

/// Fails when `extra` more bytes would take `out` past the cap.
fn room(out: &str, options: &DumpOptions, extra: usize) -> Result<(), Error> {
    if out.len().saturating_add(extra) > options.cap {
        return Err(super::limits::too_large());
    }
    Ok(())
}

/// The bytes of a newline and `depth` indents.
fn indent_bytes(layout: &JsonLayout, depth: usize) -> usize {
    layout
        .indent
        .as_ref()
        .map_or(0, |indent| indent.len().saturating_mul(depth) + 1)
}

/// [`JsonLayout::open_item`], if the bytes it writes fit under the cap.
fn open_item(
    out: &mut String,
    index: usize,
    options: &DumpOptions,
    depth: usize,
) -> Result<(), Error> {
    let layout = &options.layout;
    let most = layout.item_separator.len() + layout.key_separator.len();
    room(out, options, most + indent_bytes(layout, depth))?;
    layout.open_item(out, index, depth);
    Ok(())
}

/// [`JsonLayout::close`], if the bytes it writes fit under the cap.
fn close_container(out: &mut String, options: &DumpOptions, depth: usize) -> Result<(), Error> {
    room(out, options, indent_bytes(&options.layout, depth))?;
    options.layout.close(out, depth);
    Ok(())
}

fn type_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("TypeError: {message}"))
}

#[cfg(test)]
mod tests {
    use crate::JinjaTemplate;

    fn render(source: &str) -> String {
        let context = serde_json::json!({"x": {"b": "é\n\"", "a": [1, 2.5, null, true], "e": {}}});
        JinjaTemplate::new(source)
            .unwrap()
            .render(&context)
            .unwrap()
    }

    #[test]
    fn prints_like_python_json_dumps() {
        assert_eq!(
            render("{{ x|tojson }}"),
            r#"{"b": "é\n\"", "a": [1, 2.5, null, true], "e": {}}"#
        );
        assert_eq!(
            render("{{ x|tojson(ensure_ascii=True, sort_keys=True, separators=(',', ':')) }}"),
            r#"{"a":[1,2.5,null,true],"b":"\u00e9\n\"","e":{}}"#
        );
        assert_eq!(
            render("{{ x.a|tojson(indent=2) }}"),
            "[\n  1,\n  2.5,\n  null,\n  true\n]"
        );
        assert_eq!(render("{{ '😀'|tojson(true) }}"), r#""\ud83d\ude00""#);
    }

    #[test]
    fn refuses_what_python_cannot_serialize() {
        let template = JinjaTemplate::new("{{ missing|tojson }}").unwrap();
        assert!(template.render(&serde_json::json!({})).is_err());
    }
}
