//! Python call syntax: the pythonic call lists `[f(a=1), g(b="x")]` that Llama 3.2 / 4,
//! LFM2, Gemma 3 and others are trained to write, and Llama 3.1's built-in calls
//! `brave_search.call(query="…")`.
//!
//! Three parts, each usable alone:
//! - [`parse_calls`] reads a whole call list (or one bare call) into names and JSON
//!   arguments, Python literals translated (`True` → `true`, `None` → `null`, tuples and
//!   sets → arrays, `'single'` quotes); JSON's own `true`/`false`/`null` are read too, since
//!   models mix the two. Only keyword arguments name a parameter; a call with a positional
//!   argument is not a call (there is no parameter to give it to); `**{…}` gives its
//!   members as keywords. String prefixes are read: `r'…'` raw, `b'…'` as its text, `f'…'`
//!   when it holds no `{…}` to evaluate. A quote inside a string that the model left
//!   unescaped (`'sed -n '1,5p' f.py'`) is text when what follows it cannot follow a
//!   string (a `,`, a bracket, `:`, the next `keyword=`, or the end can), as SGLang
//!   recovers it; where the text then does not read to its end, the last quote taken for
//!   an end is read again as text (`mul_symbol=',')` inside a command), so long as the
//!   quotes so kept pair up and the brackets between them balance. [`parse_literal`] reads one such literal alone.
//! - [`BracketScanner`] finds, in streamed text, where a bracketed literal that starts at the
//!   first byte fed to it ends, tracking strings (both quote kinds, escapes) and nesting, so
//!   a parser can hold a candidate list until it is complete whatever the cut.
//! - [`closing`] closes a literal cut off in the middle, so a list being written reads as
//!   far as it goes.
//! - [`write_call`] writes a call back in Python syntax (`f(a=1, b='x')`), Python's `repr`
//!   of each value, as templates render past pythonic calls.
//!
//! Nothing here panics: input that is not a call list is `None`, and nesting is bounded.

use serde_json::{Map, Number, Value};
use toolbridge_pyrepr::python_repr;

/// How deep literals may nest before the text is taken for no call.
const MAX_DEPTH: usize = 64;

/// One call read from Python syntax: its (possibly dotted) name and keyword arguments.
pub type PyCall = (String, Map<String, Value>);

/// The calls of `text`: a list `[f(a=1), g()]` or a single call `f(a=1)`, with blanks
/// around; `None` when `text` is anything else.
pub fn parse_calls(text: &str) -> Option<Vec<PyCall>> {
    Reader::read_all(text, Reader::calls)
}

/// One Python literal (`{'a': True, 'b': (1, 2)}`), JSON's own words taken too, with blanks
/// around; `None` when `text` is anything else. For formats whose templates print call
/// arguments with Python's `str` (Phi-4-mini's), so past calls come out as Python dicts.
pub fn parse_literal(text: &str) -> Option<Value> {
    Reader::read_all(text, Reader::value)
}

/// `name(k=v, …)` in Python syntax, each value as Python's `repr` prints it.
pub fn write_call(name: &str, arguments: &Map<String, Value>) -> String {
    let arguments: Vec<String> = arguments
        .iter()
        .map(|(key, value)| format!("{key}={}", python_repr(value)))
        .collect();
    format!("{name}({})", arguments.join(", "))
}

/// `[f(a=1), g(b='x')]`: calls as a pythonic list.
pub fn write_list<'a>(
    calls: impl IntoIterator<Item = (&'a str, &'a Map<String, Value>)>,
) -> String {
    let calls: Vec<String> = calls
        .into_iter()
        .map(|(name, arguments)| write_call(name, arguments))
        .collect();
    format!("[{}]", calls.join(", "))
}

/// Whether a constant (`True`, `null`) ends where `after` starts: at anything but a
/// name's character, or at the next keyword with no comma before it (`b=True` + `c=1`,
/// as vLLM's Gemma 3 template writes `f(b=truec=1)`).
fn word_ends(after: &str) -> bool {
    let name = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    if name == 0 {
        return true;
    }
    let tail = after[name..].trim_start();
    tail.starts_with('=') && !tail.starts_with("==")
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
    /// Where quotes closed a string because what followed could follow one.
    closed_at: Vec<usize>,
    /// Quotes read as text although what follows could follow a string's end.
    inner: Vec<usize>,
}

/// How many times a read is tried again with a quote taken for text instead.
const MAX_RETRIES: usize = 16;

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            at: 0,
            depth: 0,
            closed_at: Vec::new(),
            inner: Vec::new(),
        }
    }

    /// The calls at the start of the text (see [`parse_calls`]).
    fn calls(&mut self) -> Option<Vec<PyCall>> {
        let calls = if self.peek() == Some('[') {
            self.bump();
            let mut calls = Vec::new();
            self.blank();
            if self.peek() != Some(']') {
                loop {
                    calls.push(self.call()?);
                    self.blank();
                    match self.bump()? {
                        ',' => {
                            self.blank();
                            if self.peek() == Some(']') {
                                self.bump();
                                break;
                            }
                        }
                        ']' => break,
                        _ => return None,
                    }
                }
            } else {
                self.bump();
            }
            calls
        } else {
            vec![self.call()?]
        };
        Some(calls)
    }

    /// `read` over the whole of `text`, blanks around. A quote that could close its string
    /// may be one the model left unescaped inside it (`mul_symbol=',')` in a command): where
    /// the text does not read to its end, the last quote taken for an end is taken for text
    /// and the text read again, a bounded number of times.
    fn read_all<T>(text: &'a str, read: fn(&mut Reader<'a>) -> Option<T>) -> Option<T> {
        let mut inner = Vec::new();
        for _ in 0..=MAX_RETRIES {
            let mut reader = Reader {
                inner: inner.clone(),
                ..Reader::new(text)
            };
            reader.blank();
            let value = read(&mut reader);
            reader.blank();
            if let Some(value) = value.filter(|_| reader.at_end()) {
                return Some(value);
            }
            inner.push(reader.closed_at.pop()?);
        }
        None
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.at..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn at_end(&self) -> bool {
        self.rest().is_empty()
    }

    fn blank(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn identifier(&mut self) -> Option<&'a str> {
        let start = self.at;
        let first = self.peek()?;
        if !(first.is_alphabetic() || first == '_') {
            return None;
        }
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.bump();
        }
        self.text.get(start..self.at)
    }

    /// A dotted name (`math.factorial`, `brave_search.call`).
    fn dotted_name(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.identifier()?;
        while self.peek() == Some('.') {
            self.bump();
            self.identifier()?;
        }
        self.text.get(start..self.at)
    }

    /// `name(k=v, …)`; `x.call(…)` names the built-in tool `x`.
    fn call(&mut self) -> Option<PyCall> {
        let name = self.dotted_name()?;
        let name = name.strip_suffix(".call").unwrap_or(name);
        self.blank();
        if self.bump()? != '(' {
            return None;
        }
        let mut arguments = Map::new();
        self.blank();
        if self.peek() == Some(')') {
            self.bump();
            return Some((name.to_string(), arguments));
        }
        loop {
            self.blank();
            if self.rest().starts_with("**") {
                self.at += 2;
                let Value::Object(members) = self.value()? else {
                    return None;
                };
                arguments.extend(members);
            } else {
                let key = self.identifier()?;
                self.blank();
                if self.bump()? != '=' {
                    return None;
                }
                self.blank();
                let value = self.value()?;
                arguments.insert(key.to_string(), value);
            }
            self.blank();
            match self.peek()? {
                ',' => {
                    self.bump();
                    self.blank();
                    if self.peek() == Some(')') {
                        self.bump();
                        break;
                    }
                }
                ')' => {
                    self.bump();
                    break;
                }
                // The next keyword with no comma before it: vLLM's Gemma 3 template writes
                // past calls so (`f(a=1b=2)`), and a model shown them may copy it.
                c if c.is_alphabetic() || c == '_' => {}
                _ => return None,
            }
        }
        Some((name.to_string(), arguments))
    }

    fn value(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let value = self.value_inner();
        self.depth -= 1;
        value
    }

    fn value_inner(&mut self) -> Option<Value> {
        if let Some(prefix) = self.string_prefix() {
            self.at += prefix.len();
            return self.prefixed_string(&prefix.to_ascii_lowercase());
        }
        match self.peek()? {
            '\'' | '"' => self.string(false).map(Value::String),
            '[' => self.sequence('[', ']'),
            '(' => self.sequence('(', ')'),
            '{' => self.dict_or_set(),
            c if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => self.number(),
            _ => {
                for (word, value) in [
                    ("True", Value::Bool(true)),
                    ("False", Value::Bool(false)),
                    ("None", Value::Null),
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ] {
                    let Some(after) = self.rest().strip_prefix(word) else {
                        continue;
                    };
                    if word_ends(after) {
                        self.at += word.len();
                        return Some(value);
                    }
                }
                None
            }
        }
    }

    fn sequence(&mut self, open: char, close: char) -> Option<Value> {
        if self.bump()? != open {
            return None;
        }
        let mut items = Vec::new();
        loop {
            self.blank();
            if self.peek() == Some(close) {
                self.bump();
                return Some(Value::Array(items));
            }
            items.push(self.value()?);
            self.blank();
            match self.bump()? {
                ',' => {}
                c if c == close => return Some(Value::Array(items)),
                _ => return None,
            }
        }
    }

    fn dict_or_set(&mut self) -> Option<Value> {
        self.bump();
        let mut members = Map::new();
        let mut set = Vec::new();
        loop {
            self.blank();
            if self.peek() == Some('}') {
                self.bump();
                break;
            }
            let key = self.value()?;
            self.blank();
            if self.peek() == Some(':') && set.is_empty() {
                self.bump();
                self.blank();
                let value = self.value()?;
                let key = match key {
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                members.insert(key, value);
            } else if members.is_empty() {
                set.push(key);
            } else {
                return None;
            }
            self.blank();
            match self.bump()? {
                ',' => {}
                '}' => break,
                _ => return None,
            }
        }
        if set.is_empty() {
            Some(Value::Object(members))
        } else {
            Some(Value::Array(set))
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "+-._".contains(c))
        {
            self.bump();
        }
        let token = self.text.get(start..self.at)?;
        if let Some(number) = number_value(token) {
            return Some(number);
        }
        // A number run into the next keyword (`f(a=1b=2)`): the longest number before a
        // letter, the letter left for the call to read.
        let cut = (1..token.len()).rev().find(|&at| {
            token[at..].starts_with(|c: char| c.is_ascii_alphabetic())
                && number_value(&token[..at]).is_some()
        })?;
        self.at = start + cut;
        number_value(&token[..cut])
    }

    /// The prefix of a string literal here (`r`, `b`, `f`, `u`, `rb`, …), if one starts.
    fn string_prefix(&self) -> Option<&'a str> {
        let rest = self.rest();
        let letters = rest
            .find(|c: char| !matches!(c, 'r' | 'R' | 'b' | 'B' | 'f' | 'F' | 'u' | 'U'))
            .filter(|&end| (1..=2).contains(&end))?;
        rest[letters..]
            .starts_with(['\'', '"'])
            .then(|| &rest[..letters])
    }

    /// A string after its prefix: raw (`r`) keeps its escapes; an f-string is read only
    /// when it holds nothing to evaluate.
    fn prefixed_string(&mut self, prefix: &str) -> Option<Value> {
        let text = self.string(prefix.contains('r'))?;
        if prefix.contains('f') {
            let constant = text.replace("{{", "").replace("}}", "");
            if constant.contains(['{', '}']) {
                return None;
            }
            return Some(Value::String(text.replace("{{", "{").replace("}}", "}")));
        }
        Some(Value::String(text))
    }

    /// Whether a quote just read closes its string: what follows can follow a string.
    fn closes_string(&self) -> bool {
        let tail = self.rest().trim_start();
        match tail.chars().next() {
            None | Some(',' | ')' | ']' | '}' | ':') => true,
            Some(c) if c.is_alphabetic() || c == '_' => {
                let name = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                let after = tail[name..].trim_start();
                after.starts_with('=') && !after.starts_with("==")
            }
            Some(_) => false,
        }
    }

    /// A Python string literal, escapes decoded unless `raw`.
    fn string(&mut self, raw: bool) -> Option<String> {
        let quote = self.bump()?;
        let mut out = String::new();
        // Quotes of its own kind read as text, and whether a retry made one so.
        let (mut inner_quotes, mut retried) = (0, false);
        loop {
            match self.bump()? {
                c if c == quote && self.inner.contains(&(self.at - 1)) => {
                    (inner_quotes, retried) = (inner_quotes + 1, true);
                    out.push(c);
                }
                c if c == quote && self.closes_string() => {
                    // Quotes a retry took for text pair up and the brackets between them
                    // balance, as a literal's do inside a command; otherwise the retry
                    // would glue two calls into one string (`x'), g('Paris`).
                    if retried && (inner_quotes % 2 == 1 || !brackets_balance(&out)) {
                        return None;
                    }
                    self.closed_at.push(self.at - 1);
                    return Some(out);
                }
                c if c == quote => {
                    inner_quotes += 1;
                    out.push(c);
                }
                '\\' if raw => {
                    out.push('\\');
                    out.push(self.bump()?);
                }
                '\\' => match self.bump()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => out.push(self.hex(4)?),
                    'U' => out.push(self.hex(8)?),
                    'x' => out.push(self.hex(2)?),
                    '\n' => {}
                    c @ ('\\' | '\'' | '"' | '/') => out.push(c),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                },
                c => out.push(c),
            }
        }
    }

    fn hex(&mut self, digits: usize) -> Option<char> {
        let text = self.rest().get(..digits)?;
        let code = u32::from_str_radix(text, 16).ok()?;
        self.at += digits;
        if (0xD800..0xDC00).contains(&code) && self.rest().starts_with("\\u") {
            let low = u32::from_str_radix(self.rest().get(2..6)?, 16).ok()?;
            if (0xDC00..0xE000).contains(&low) {
                self.at += 6;
                return char::from_u32(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00));
            }
        }
        char::from_u32(code)
    }
}

/// Whether the brackets in `text` close in the order they open, all of them.
fn brackets_balance(text: &str) -> bool {
    let mut open = Vec::new();
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => open.push(c),
            ')' | ']' | '}' if open.pop() != Some(opener_of(c)) => return false,
            _ => {}
        }
    }
    open.is_empty()
}

/// Where a bracketed literal ends, in streamed text; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct BracketScanner {
    /// The brackets open, innermost last.
    open: Vec<char>,
    quote: Option<char>,
    escaped: bool,
    started: bool,
}

/// What a piece did to the literal being scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracket {
    /// Still inside; more text is needed.
    NeedMore,
    /// The literal closed; the text after it starts at this byte offset of the piece.
    Complete { rest_at: usize },
    /// Brackets do not pair up (a closer of the wrong kind, or nesting too deep); the
    /// offending character is at this byte offset.
    Invalid { at: usize },
}

impl BracketScanner {
    pub fn new() -> Self {
        BracketScanner::default()
    }

    /// Feeds the next piece; the first character ever fed must be the opening bracket.
    pub fn push(&mut self, piece: &str) -> Bracket {
        for (at, c) in piece.char_indices() {
            if let Some(quote) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == quote {
                    self.quote = None;
                }
                continue;
            }
            match c {
                '\'' | '"' if self.started => self.quote = Some(c),
                '[' | '(' | '{' if self.open.len() < MAX_DEPTH => {
                    self.started = true;
                    self.open.push(c);
                }
                '[' | '(' | '{' => return Bracket::Invalid { at },
                ']' | ')' | '}' if self.started => {
                    if self.open.pop() != Some(opener_of(c)) {
                        return Bracket::Invalid { at };
                    }
                    if self.open.is_empty() {
                        return Bracket::Complete {
                            rest_at: at + c.len_utf8(),
                        };
                    }
                }
                _ if !self.started => return Bracket::Invalid { at },
                _ => {}
            }
        }
        Bracket::NeedMore
    }

    /// What closes the literal read so far where it was cut inside a string: `mark`
    /// (taken), the quote, then the brackets still open. `None` outside every string or
    /// in an escape.
    pub fn closing(&self, mark: &mut Option<&str>) -> Option<String> {
        let quote = self.quote.filter(|_| !self.escaped)?;
        let mut out: String = mark.take().into_iter().collect();
        out.push(quote);
        out.extend(self.open.iter().rev().map(|&c| match c {
            '[' => ']',
            '(' => ')',
            _ => '}',
        }));
        Some(out)
    }
}

/// The text that closes `text`, a bracketed literal cut off in a string (leading blanks
/// allowed), with `mark` (taken) where it was cut: the quote and brackets still open.
/// `None` anywhere else (no literal, a whole one, a cut in an escape, or outside every
/// string, where a value such as `2` may still go on and nothing in Python's syntax can
/// hold the mark).
pub fn closing(text: &str, mark: &mut Option<&str>) -> Option<String> {
    let body = text.trim_start();
    if !body.starts_with(['[', '{']) {
        return None;
    }
    let mut scanner = BracketScanner::new();
    match scanner.push(body) {
        Bracket::NeedMore => scanner.closing(mark),
        Bracket::Complete { .. } | Bracket::Invalid { .. } => None,
    }
}

/// The bracket a closing one closes.
fn opener_of(closer: char) -> char {
    match closer {
        ')' => '(',
        ']' => '[',
        _ => '{',
    }
}

/// A Python number literal's value (`1_000`, `+2`, `1e-3`), or `None`.
fn number_value(token: &str) -> Option<Value> {
    let text = token.replace('_', "");
    let text = text.strip_prefix('+').unwrap_or(&text);
    if let Ok(integer) = text.parse::<i64>() {
        return Some(Value::from(integer));
    }
    if !text.chars().any(|c| c.is_ascii_digit()) || text.contains("inf") || text.contains("nan") {
        return None;
    }
    let float: f64 = text.parse().ok()?;
    Number::from_f64(float).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_quote_taken_for_an_end_is_read_again_as_text_where_the_rest_does_not_read() {
        let command = "[bash(command='python3 -c \"print(latex(x, sym='\\,'))\"')]";
        let calls = parse_calls(command).expect("read");
        assert_eq!(
            calls[0].1["command"],
            json!("python3 -c \"print(latex(x, sym='\\,'))\"")
        );
        // Two calls are never glued into one string.
        let positional = "[search(query='x'), get_weather('Paris', unit='celsius')]";
        assert_eq!(parse_calls(positional), None);
    }

    #[test]
    fn a_literal_cut_off_is_closed_with_the_mark_in_its_string() {
        let closed = |text: &str| closing(text, &mut Some("<cut>"));
        assert_eq!(closed("[f(a='Par").as_deref(), Some("<cut>')]"));
        assert_eq!(
            closed(" [f(a={\"k\": [1, \"x").as_deref(),
            Some("<cut>\"]})]")
        );
        assert_eq!(closed("[f(a=1, b=").as_deref(), None);
        assert_eq!(closed("[f(a='it\\").as_deref(), None);
        assert_eq!(closed("[f(a=1]").as_deref(), None);
        assert_eq!(closed("f(a=1").as_deref(), None);
    }

    #[test]
    fn reads_seed_002s_call_list() {
        let calls = parse_calls(
            "[get_weather(city='San Francisco', metric='celsius'), get_weather(city='Seattle', metric='celsius')]",
        )
        .unwrap_or_default();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "get_weather");
        assert_eq!(
            Value::Object(calls[1].1.clone()),
            json!({"city": "Seattle", "metric": "celsius"})
        );
    }

    #[test]
    fn reads_keywords_that_lack_their_comma() {
        let calls = parse_calls("[f(a=1000b=[3, 5]c='x'd=2.5)]").unwrap_or_default();
        assert_eq!(
            Value::Object(calls[0].1.clone()),
            json!({"a": 1000, "b": [3, 5], "c": "x", "d": 2.5})
        );
        let calls = parse_calls("[f(a=truec=Noned=False)]").unwrap_or_default();
        assert_eq!(
            Value::Object(calls[0].1.clone()),
            json!({"a": true, "c": null, "d": false})
        );
        assert_eq!(parse_calls("[f(a=truex)]"), None);
        assert_eq!(parse_calls("[f(a=TrueTrue)]"), None);
        assert_eq!(parse_calls("[f(a=12abc)]"), None);
        assert_eq!(parse_calls("[f(a=[12abc])]"), None);
    }

    #[test]
    fn reads_python_literals_and_builtin_calls() {
        let calls =
            parse_calls(r#"math.f(a=True, b=None, c=(1, 2.5), d={'k': "v\n"}, e=-3, f=1e3, g=[])"#)
                .unwrap_or_default();
        assert_eq!(calls[0].0, "math.f");
        assert_eq!(
            Value::Object(calls[0].1.clone()),
            json!({"a": true, "b": null, "c": [1, 2.5], "d": {"k": "v\n"}, "e": -3, "f": 1000.0, "g": []})
        );
        let calls = parse_calls("brave_search.call(query=\"x\")").unwrap_or_default();
        assert_eq!(calls[0].0, "brave_search");
    }

    #[test]
    fn anything_else_is_no_call() {
        for text in [
            "[f(1)]",
            "[f(a=1)",
            "f(a=)",
            "[f(a=1)] x",
            "hello",
            "[1, 2]",
            "",
        ] {
            assert_eq!(parse_calls(text), None, "{text}");
        }
        assert_eq!(parse_calls("[]"), Some(Vec::new()));
    }

    #[test]
    fn reads_what_models_write_past_strict_python() {
        let arguments = |text: &str| {
            parse_calls(text)
                .unwrap_or_default()
                .into_iter()
                .map(|(name, arguments)| (name, Value::Object(arguments)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            arguments("[search(query='sed -n '360,450p' f.py'), g(a='x 'y', b=1)]"),
            [
                (
                    "search".to_string(),
                    json!({"query": "sed -n '360,450p' f.py"})
                ),
                ("g".to_string(), json!({"a": "x 'y", "b": 1})),
            ]
        );
        assert_eq!(
            arguments(r"[f(a=f'hi {{x}}', b=b'raw', c=r'\d\n', **{'d': 2}, e=u'é')]"),
            [(
                "f".to_string(),
                json!({"a": "hi {x}", "b": "raw", "c": "\\d\\n", "d": 2, "e": "é"})
            )]
        );
        assert_eq!(parse_calls("[f(a=f'{x}')]"), None);
        assert_eq!(parse_calls("[f(**[1])]"), None);
    }

    #[test]
    fn reads_one_literal_and_nothing_more() {
        assert_eq!(
            parse_literal(" {'a': True, \"b\": [1, None], 'c': (2,)} "),
            Some(json!({"a": true, "b": [1, null], "c": [2]}))
        );
        for text in ["{'a': 1} x", "{'a': }", "", "f(a=1)"] {
            assert_eq!(parse_literal(text), None, "{text}");
        }
    }

    #[test]
    fn written_calls_read_back() {
        let arguments = json!({"a": "it's", "b": [1, 2.5, true, null], "c": {"d": "\"q\""}});
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let text = write_list([("f", &arguments), ("g.h", &Map::new())]);
        let calls = parse_calls(&text).unwrap_or_default();
        assert_eq!(
            calls,
            vec![("f".into(), arguments), ("g.h".into(), Map::new())]
        );
    }

    #[test]
    fn the_bracket_scanner_ends_where_the_list_ends_however_cut() {
        let text = "[f(a=')]', b=\"\\\"]\"), g(c=[1])] after";
        let end = text.find(" after").unwrap_or(0);
        for cut in 0..=text.len() {
            let Some((first, second)) = text.split_at_checked(cut) else {
                continue;
            };
            let mut scanner = BracketScanner::new();
            let found = match scanner.push(first) {
                Bracket::Complete { rest_at } => Some(rest_at),
                Bracket::NeedMore => match scanner.push(second) {
                    Bracket::Complete { rest_at } => Some(cut + rest_at),
                    _ => None,
                },
                Bracket::Invalid { .. } => None,
            };
            assert_eq!(found, Some(end), "cut at {cut}");
        }
    }
}
