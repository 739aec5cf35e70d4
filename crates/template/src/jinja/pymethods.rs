//! Python's `str` methods, charged before they build.
//!
//! `minijinja-contrib`'s `pycompat` gives templates `str.replace`, `str.join` and the
//! rest, but builds the result before anything can weigh it: `s.replace('a', s)`
//! squares a string, and `s.join(l)` repeats it as often as `l` is long. These two are
//! charged against the render's byte budget first (see [`super::limits`]); the others
//! build at most a few times what they are given, and the engine charges what they
//! return.

use std::fmt::{self, Write};

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, State};

use super::limits::{bytes_left, too_large};

/// The method callback: `pycompat`'s, after charging what it is about to build.
pub fn unknown_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if let Some(text) = value.as_str().filter(|_| value.kind() == ValueKind::String) {
        match method {
            "replace" => state.charge_bytes(replaced_len(text, args))?,
            "join" => state.charge_bytes(joined_len(state, text, args)?)?,
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// An upper bound on the length of `text.replace(old, new)`.
fn replaced_len(text: &str, args: &[Value]) -> usize {
    let (Some(old), Some(new)) = (
        args.first().and_then(Value::as_str),
        args.get(1).and_then(Value::as_str),
    ) else {
        return 0;
    };
    let hits = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    hits.saturating_mul(new.len()).saturating_add(text.len())
}

/// The length of `separator.join(items)`, counted without building it.
fn joined_len(state: &State, separator: &str, args: &[Value]) -> Result<usize, Error> {
    let Some(items) = args.first().and_then(|items| items.try_iter().ok()) else {
        return Ok(0);
    };
    let mut counter = Counter {
        len: 0,
        cap: bytes_left(state),
    };
    for (i, item) in items.enumerate() {
        let separator = if i > 0 { separator } else { "" };
        write!(counter, "{separator}{item}").map_err(|_| too_large())?;
    }
    Ok(counter.len)
}

/// Counts what is written, failing past its cap.
struct Counter {
    len: usize,
    cap: usize,
}

impl Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.len = self.len.saturating_add(s.len());
        if self.len > self.cap {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::replaced_len;
    use minijinja::Value;

    #[test]
    fn replacing_is_bounded_before_it_runs() {
        let args = [Value::from("a"), Value::from("bbb")];
        assert_eq!(replaced_len("aXa", &args), 3 + 2 * 3);
        let empty = [Value::from(""), Value::from("-")];
        assert_eq!(replaced_len("ab", &empty), "-a-b-".len());
    }
}
