//! Filters and tests whose Python behaviour differs from minijinja's defaults.
//!
//! Each override below exists because a real chat template renders differently without
//! it: `tools|length` on an undefined `tools` is `0` in Python (jinja2's `Undefined`
//! has `__len__`), `None is iterable` is false, `indent` keeps a trailing newline, and
//! `map`/`select`/… return generators, which `tojson` refuses to serialize.

use std::sync::Arc;

use minijinja::value::{
    Enumerator, Kwargs, Object, ObjectExt, ObjectRepr, Rest, Value, ValueKind, ValueOrKwargs,
};
use minijinja::{filters, Environment, Error, State};

/// Registers every override on `env`.
pub fn register(env: &mut Environment<'static>) {
    env.add_filter("length", length);
    env.add_filter("count", length);
    env.add_filter("indent", indent);
    env.add_filter("int", int);
    env.add_filter("float", float);
    env.add_filter("items", items);
    env.add_test("iterable", is_iterable);
    env.add_function("cycler", minijinja_contrib::globals::cycler);
    env.add_function("joiner", minijinja_contrib::globals::joiner);
    env.add_filter(
        "map",
        |state: &mut State, value: Value, args: Rest<ValueOrKwargs>| {
            filters::map(state, value, args).map(Generator::value)
        },
    );
    env.add_filter(
        "select",
        |state: &mut State, value: Value, test: Option<String>, args: Rest<ValueOrKwargs>| {
            filters::select(state, value, test.map(Into::into), args).map(Generator::value)
        },
    );
    env.add_filter(
        "reject",
        |state: &mut State, value: Value, test: Option<String>, args: Rest<ValueOrKwargs>| {
            filters::reject(state, value, test.map(Into::into), args).map(Generator::value)
        },
    );
    env.add_filter(
        "selectattr",
        |state: &mut State,
         value: Value,
         attr: String,
         test: Option<String>,
         args: Rest<ValueOrKwargs>| {
            filters::selectattr(state, value, attr.into(), test.map(Into::into), args)
                .map(Generator::value)
        },
    );
    env.add_filter(
        "rejectattr",
        |state: &mut State,
         value: Value,
         attr: String,
         test: Option<String>,
         args: Rest<ValueOrKwargs>| {
            filters::rejectattr(state, value, attr.into(), test.map(Into::into), args)
                .map(Generator::value)
        },
    );
}

/// `len(x)`; jinja2's `Undefined` has length 0.
fn length(value: &Value) -> Result<usize, Error> {
    if value.is_undefined() {
        return Ok(0);
    }
    filters::length(value)
}

/// `dict.items()`; jinja2's `Undefined` iterates as empty.
fn items(value: &Value) -> Result<Value, Error> {
    if value.is_undefined() {
        return Ok(Value::from(Vec::<Value>::new()));
    }
    filters::items(value)
}

/// jinja2's `int(value, default=0, base=10)`: Python's `int()`, then `int(float())`,
/// then the default; never an error.
fn int(value: &Value, default: Option<Value>, base: Option<u32>) -> Value {
    let default = default.unwrap_or(Value::from(0));
    match value.kind() {
        ValueKind::Bool => Value::from(i64::from(value.is_true())),
        ValueKind::Number if value.is_integer() => value.clone(),
        ValueKind::Number => f64::try_from(value.clone())
            .ok()
            .and_then(truncate)
            .map_or(default, Value::from),
        ValueKind::String => {
            let text = python_number_text(value.as_str().unwrap_or_default());
            i128::from_str_radix(&text, base.unwrap_or(10).clamp(2, 36))
                .ok()
                .or_else(|| text.parse::<f64>().ok().and_then(truncate))
                .map_or(default, Value::from)
        }
        _ => default,
    }
}

/// jinja2's `float(value, default=0.0)`: Python's `float()` or the default.
fn float(value: &Value, default: Option<Value>) -> Value {
    let default = default.unwrap_or(Value::from(0.0));
    match value.kind() {
        ValueKind::Bool => Value::from(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).map_or(default, Value::from),
        ValueKind::String => python_number_text(value.as_str().unwrap_or_default())
            .parse::<f64>()
            .map_or(default, Value::from),
        _ => default,
    }
}

/// Python reads numbers with surrounding whitespace and `_` between digits.
fn python_number_text(text: &str) -> String {
    text.trim().replace('_', "")
}

fn truncate(f: f64) -> Option<i128> {
    (f.is_finite() && f.abs() < 1e38).then_some(f.trunc() as i128)
}

/// `iter(x)` succeeds: strings, sequences, mappings, generators and `Undefined`.
fn is_iterable(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Iterable
            | ValueKind::Bytes
    )
}

/// jinja2's `indent(width=4, first=False, blank=False)`: a newline is appended before
/// splitting, so a trailing newline survives, and blank lines stay unindented.
fn indent(state: &State, value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let argument = |position: usize, name: &str| -> Result<Option<Value>, Error> {
        Ok(kwargs
            .get::<Option<Value>>(name)?
            .or_else(|| args.get(position).cloned()))
    };
    let width = argument(0, "width")?;
    let first = argument(1, "first")?.is_some_and(|v| v.is_true());
    let blank = argument(2, "blank")?.is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    let text = super::pyfmt::py_str(&value, super::limits::bytes_left(state))?;
    let indention = match &width {
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or_default().to_string(),
        Some(w) => " ".repeat(usize::try_from(w.clone()).unwrap_or(0).min(1024)),
        None => "    ".to_string(),
    };
    let with_newline = format!("{text}\n");
    let lines = python_splitlines(&with_newline);
    state.charge_bytes(
        indention
            .len()
            .saturating_mul(lines.len() + 1)
            .saturating_add(text.len()),
    )?;
    let mut rv = String::with_capacity(text.len() + indention.len() * lines.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            rv.push('\n');
            if blank || !line.is_empty() {
                rv.push_str(&indention);
            }
        }
        rv.push_str(line);
    }
    if first {
        rv.insert_str(0, &indention);
    }
    Ok(rv)
}

/// `str.splitlines()`: splits on every line boundary Python knows, dropping them.
pub fn python_splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&text[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
            chars.next();
            start += 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The result of a lazy jinja2 filter: iterable, always true, and not JSON.
#[derive(Debug)]
struct Generator(Vec<Value>);

impl Generator {
    fn value(items: Vec<Value>) -> Value {
        Value::from_object(Generator(items))
    }
}

impl Object for Generator {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| Box::new(this.0.iter().cloned()))
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::python_splitlines;

    #[test]
    fn splitlines_matches_python() {
        assert_eq!(python_splitlines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"]);
        assert_eq!(python_splitlines("{\n\n"), ["{", ""]);
        assert!(python_splitlines("").is_empty());
    }
}
