//! A template's call syntax, learned by rendering it: for a template that renders tool
//! calls but matches no family, the syntax the model was trained on is the one its own
//! template writes past calls in, so it is asked (as llama.cpp's differential analysis
//! does) rather than guessed.
//!
//! Sentinel conversations are rendered: an assistant turn with one call, with two calls,
//! with plain content, with reasoning. Each turn is cut out of the conversation (the
//! render minus the render without it, minus the generation prompt), so what remains is
//! what the model writes. In the one-call turn the call is located by its sentinel name
//! and arguments, read as JSON (an object with its key names, a list of them, the name as
//! the key) or as Python (`f(a=1)`, `[f(a=1)]`); the text before it is the opening marker,
//! the text after it up to the turn's end (the first token of what ends a content turn)
//! the closing marker. The two-call turn gives the separator, and shows whether each call
//! is framed alone. The reasoning turn gives the reasoning markers.
//!
//! Anything not understood is a [`DialectError`] with its reason: a learned syntax that is
//! wrong would be worse than the prompt style that stands in for it.

use serde_json::{json, Map, Value};

use crate::dialect::ChatTemplate;
use crate::error::{DialectError, DialectErrorKind};
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::pycall::{parse_calls, Bracket, BracketScanner};
use crate::toolkit::typed_args::ParameterTypes;
use toolbridge_template::ArgumentsForm;

const USER: &str = "Sentinel question q7";
const CONTENT: &str = "Sentinel answer q7";
const REASONING: &str = "Sentinel reasoning q7";
const FIRST: &str = "sentinel_alpha_q7";
const TEXT: &str = "Sentinel value";
const SECOND: &str = "sentinel_beta_q7";

/// What a template's past calls showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    /// What the template writes between the content and the opening marker (` ` in
    /// `answer -> tool/function_call`): layout a forced call may start with.
    pub lead: String,
    /// What opens the calls (an empty string where they stand bare).
    pub open: String,
    /// What closes them.
    pub close: String,
    pub shape: Shape,
    /// Between two calls, as the template writes it.
    pub separator: String,
    /// Each call is framed by `open` and `close` of its own.
    pub each_framed: bool,
    /// The reasoning markers (open, close), where the template renders reasoning.
    pub reasoning: Option<(String, String)>,
    /// Arguments the template was given, objects or JSON text.
    pub arguments: ArgumentsForm,
    /// How the template writes a Python call's string arguments.
    pub strings: Strings,
}

impl Learned {
    /// What was learned, a line each, for a person reading why a dialect was chosen.
    pub fn describe(&self) -> Vec<String> {
        let reasoning = self
            .reasoning
            .as_ref()
            .map_or("none".to_string(), |(open, close)| {
                format!("{open:?} … {close:?}")
            });
        let framed = if self.each_framed {
            " (each call framed alone)"
        } else {
            ""
        };
        vec![
            format!("opening marker: {:?}", self.open),
            format!("closing marker: {:?}", self.close),
            format!("call shape: {:?}", self.shape),
            format!("separator: {:?}{framed}", self.separator),
            format!("reasoning: {reasoning}"),
            format!("arguments given as: {:?}", self.arguments),
            format!("strings written: {:?}", self.strings),
        ]
    }
}

/// How a string argument is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strings {
    /// In double quotes, as JSON writes it (every JSON shape).
    Double,
    /// In single quotes: `city='Paris'`.
    Single,
    /// Without quotes, as `%s` prints it: `city=Paris`.
    Bare,
}

/// How one call is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A JSON object `{name_key: name, arguments_key: {…}}` (name first or not), or a JSON
    /// list of them.
    Json {
        name: String,
        arguments: String,
        list: bool,
    },
    /// `{"name": {…}}`, or a list of them.
    NameAsKey { list: bool },
    /// `f(a=1)`, or a list `[f(a=1), g(b=2)]`.
    Python { list: bool },
}

/// Why a template's call syntax was not learned.
pub(crate) fn refusal(why: impl Into<String>) -> DialectError {
    DialectError::new(DialectErrorKind::NotLearned, why)
}

fn refuse<T>(why: impl Into<String>) -> Result<T, DialectError> {
    Err(refusal(why))
}

/// Learns `template`'s call syntax; see the module docs.
pub fn learn(template: &ChatTemplate) -> Result<Learned, DialectError> {
    let caps = template.caps();
    let Some(form) = caps.tool_call_arguments else {
        return refuse("the template renders no tool calls");
    };
    if !caps.supports_tools {
        return refuse("the template renders calls but does not show the tools");
    }
    let arguments = match form {
        ArgumentsForm::String => ArgumentsForm::String,
        _ => ArgumentsForm::Object,
    };
    let turns = Turns {
        template,
        arguments,
        generation: caps.generation_prompt.clone().unwrap_or_default(),
    };
    let end = turn_end(caps.assistant_suffix.as_deref(), &template.eos_token);
    let one = turns.output(vec![call(FIRST, &first_arguments())])?;
    let (start, stop, shape, strings) = locate(&one, FIRST, &first_arguments(), 0)?;
    let mut close = one[stop..].to_string();
    if let Some(at) = end.as_deref().and_then(|end| close.find(end)) {
        close.truncate(at);
    }
    let open = one[..start].to_string();
    let two = turns.output(vec![
        call(FIRST, &first_arguments()),
        call(SECOND, &second_arguments()),
    ])?;
    let (mut separator, each_framed) = separator(&two, &shape, &open, &close)?;
    let (open_trimmed, close_trimmed) = (open.trim_start(), close.trim_end());
    if each_framed {
        // The layout the trimmed markers leave out goes between the framed calls.
        separator = format!(
            "{}{separator}{}",
            &close[close_trimmed.len()..],
            &open[..open.len() - open_trimmed.len()]
        );
    }
    Ok(Learned {
        lead: open[..open.len() - open_trimmed.len()].to_string(),
        open: open_trimmed.to_string(),
        close: close_trimmed.to_string(),
        shape,
        separator,
        each_framed,
        reasoning: turns.reasoning(),
        arguments,
        strings,
    })
}

/// The sentinel conversations of one template.
struct Turns<'a> {
    template: &'a ChatTemplate,
    arguments: ArgumentsForm,
    generation: String,
}

impl Turns<'_> {
    /// What the model writes for an assistant turn with these `calls`.
    fn output(&self, calls: Vec<Value>) -> Result<String, DialectError> {
        let calls: Vec<Value> = calls
            .into_iter()
            .map(|mut call| {
                if self.arguments == ArgumentsForm::String {
                    if let Some(arguments) = call.pointer_mut("/function/arguments") {
                        *arguments = Value::String(arguments.to_string());
                    }
                }
                call
            })
            .collect();
        // Empty content first: some templates print a `null` one as `None`.
        let turn = json!({"role": "assistant", "content": "", "tool_calls": calls});
        let mut null = turn.clone();
        null["content"] = Value::Null;
        self.turn(turn)
            .or_else(|| self.turn(null))
            .ok_or_else(|| refusal("the template raised on a sentinel call turn"))
    }

    /// The text the model writes for `turn` after a user question.
    fn turn(&self, turn: Value) -> Option<String> {
        let without = self.render(vec![user()])?;
        let with = self.render(vec![user(), turn])?;
        let turn = &with[common_prefix(&with, &without)..];
        Some(turn[common_prefix(turn, &self.generation)..].to_string())
    }

    fn render(&self, messages: Vec<Value>) -> Option<String> {
        let mut context = Map::new();
        context.insert("messages".into(), Value::Array(messages));
        context.insert("tools".into(), json!([tool(FIRST), tool(SECOND)]));
        context.insert("add_generation_prompt".into(), false.into());
        self.template.render_context(context).ok()
    }

    /// The markers around reasoning, trimmed, where a turn with `reasoning_content` shows
    /// it before its content.
    fn reasoning(&self) -> Option<(String, String)> {
        let turn = json!({"role": "assistant", "content": CONTENT, "reasoning_content": REASONING});
        let text = self.turn(turn)?;
        let at = text.find(REASONING)?;
        let content = text.find(CONTENT)?;
        let open = text[..at].trim();
        let close = text.get(at + REASONING.len()..content)?.trim();
        (!open.is_empty() && !close.is_empty()).then(|| (open.to_string(), close.to_string()))
    }
}

/// The first token of what ends a content turn (`<|im_end|>`), or the end-of-sequence
/// token's text: where a call turn's closing marker ends.
fn turn_end(suffix: Option<&str>, eos: &str) -> Option<String> {
    let head = suffix.map(str::trim_start).unwrap_or("");
    let token = if head.starts_with('<') {
        head.find('>').map(|at| &head[..=at])
    } else {
        head.split_whitespace().next()
    };
    token
        .filter(|token| !token.is_empty())
        .or((!eos.is_empty()).then_some(eos))
        .map(str::to_string)
}

/// The separator between two calls in `two`, and whether each call is framed alone (the
/// separator is the closing marker, something, and the opening one).
fn separator(
    two: &str,
    shape: &Shape,
    open: &str,
    close: &str,
) -> Result<(String, bool), DialectError> {
    let (first_start, first_end, first_shape, _) = locate(two, FIRST, &first_arguments(), 0)?;
    if first_shape != *shape {
        return refuse("one call and two calls are written in different shapes");
    }
    if shape.is_list() {
        return if two[first_start..first_end].contains(SECOND) {
            Ok((", ".into(), false))
        } else {
            refuse("the second call is not in the first call's list")
        };
    }
    let (second, _, _, _) = locate(two, SECOND, &second_arguments(), first_end)?;
    let between = &two[first_end..second];
    match between
        .strip_prefix(close)
        .and_then(|rest| rest.strip_suffix(open))
    {
        Some(gap) if !close.trim().is_empty() && !open.trim().is_empty() => {
            Ok((gap.to_string(), true))
        }
        _ => Ok((between.to_string(), false)),
    }
}

impl Shape {
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            Shape::Json { list: true, .. }
                | Shape::NameAsKey { list: true }
                | Shape::Python { list: true }
        )
    }
}

/// The earliest call of `name` with `arguments` in `text` from byte `from`: its span, its
/// shape, and how its strings are written.
fn locate(
    text: &str,
    name: &str,
    arguments: &Value,
    from: usize,
) -> Result<(usize, usize, Shape, Strings), DialectError> {
    let Some(name_at) = text.get(from..).and_then(|rest| rest.find(name)) else {
        return refuse(format!(
            "the call's name {name} does not appear in its turn"
        ));
    };
    let name_at = from + name_at;
    for (start, c) in text[from..=name_at]
        .char_indices()
        .map(|(at, c)| (from + at, c))
    {
        let found = match c {
            '{' | '[' => json_call(&text[start..], name, arguments)
                .or_else(|| python_call(&text[start..], name, arguments, true)),
            _ if start == name_at => python_call(&text[start..], name, arguments, false),
            _ => None,
        };
        if let Some((length, shape, strings)) = found {
            return Ok((start, start + length, shape, strings));
        }
    }
    refuse(format!(
        "the call of {name} is written in no shape learned here (JSON, Python)"
    ))
}

/// A JSON call (or list with it first) at the start of `text`: its length and shape.
fn json_call(text: &str, name: &str, arguments: &Value) -> Option<(usize, Shape, Strings)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = values.next()?.ok()?;
    let length = values.byte_offset();
    let (item, list) = match &value {
        Value::Array(items) => (items.first()?, true),
        other => (other, false),
    };
    let members = item.as_object()?;
    if members.len() == 1
        && members
            .get(name)
            .is_some_and(|a| same_arguments(a, arguments))
    {
        return Some((length, Shape::NameAsKey { list }, Strings::Double));
    }
    let name_key = members.iter().find(|(_, v)| v.as_str() == Some(name))?.0;
    let arguments_key = members
        .iter()
        .find(|(_, v)| same_arguments(v, arguments))?
        .0;
    let shape = Shape::Json {
        name: name_key.clone(),
        arguments: arguments_key.clone(),
        list,
    };
    Some((length, shape, Strings::Double))
}

/// Whether a written value holds `arguments` (as an object, or JSON text of one).
fn same_arguments(written: &Value, arguments: &Value) -> bool {
    arguments_text(written)
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|value| value == *arguments)
}

/// A Python call (`list`: a list of calls with it first) at the start of `text`.
fn python_call(
    text: &str,
    name: &str,
    arguments: &Value,
    list: bool,
) -> Option<(usize, Shape, Strings)> {
    let opening = if list { 0 } else { name.len() };
    let length = opening + bracketed(text.get(opening..)?)?;
    let written = &text[..length];
    let quoted = if written.contains(&format!("'{TEXT}'")) {
        Strings::Single
    } else {
        Strings::Double
    };
    for (candidate, strings) in [
        (written.to_string(), quoted),
        (
            quote_bare_strings(written, &ParameterTypes::default()),
            Strings::Bare,
        ),
    ] {
        let calls = parse_calls(&candidate).unwrap_or_default();
        if let Some((first, read)) = calls.first() {
            if first == name && Value::Object(read.clone()) == *arguments {
                return Some((length, Shape::Python { list }, strings));
            }
        }
    }
    None
}

/// The length of the bracketed literal `text` starts with.
fn bracketed(text: &str) -> Option<usize> {
    match BracketScanner::new().push(text) {
        Bracket::Complete { rest_at } => Some(rest_at),
        _ => None,
    }
}

/// `text` with each keyword argument's value that is no Python literal (`city=Paris`, as
/// a template that prints strings with `%s` writes them) quoted as a string.
///
/// Such a value runs to the `)` that closes its call (parentheses inside it pair up), or
/// to a `,` that the next argument follows: `, NAME=` where `NAME` is a parameter `types`
/// declares for the call's tool, or any `NAME` where the tool is not known. A comma before
/// anything else is the value's own: ToolACE writes `location=Paris, France, unit=celsius`,
/// which split at every comma lost `France` and then the call. Quoted strings are skipped
/// whole, so an `=` inside one starts nothing.
pub fn quote_bare_strings(text: &str, types: &ParameterTypes) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    // Each open bracket, with the name of the call a `(` opens.
    let mut open: Vec<Option<&str>> = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        let next = at + c.len_utf8();
        match c {
            '\'' | '"' => {
                let end = quoted_end(text, next, c);
                out.push_str(&text[at..end]);
                at = end;
                continue;
            }
            '(' => open.push(Some(name_before(&text[..at]))),
            '[' | '{' => open.push(None),
            ')' | ']' | '}' => {
                open.pop();
            }
            '=' if !text[next..].starts_with('=')
                && !text[..at].ends_with(['=', '!', '<', '>']) =>
            {
                if let Some(Some(call)) = open.last() {
                    out.push('=');
                    let rest = &text[next..];
                    if is_literal(rest) {
                        at = next;
                        continue;
                    }
                    let end = bare_end(rest, types.properties(call));
                    out.push_str(&Value::String(rest[..end].to_string()).to_string());
                    at = next + end;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        at = next;
    }
    out
}

/// Where the quoted string whose body starts at `from` ends (past its closing `quote`, or
/// the end of `text`).
fn quoted_end(text: &str, from: usize, quote: char) -> usize {
    let mut escaped = false;
    for (offset, c) in text[from..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if c == quote => return from + offset + c.len_utf8(),
            _ => {}
        }
    }
    text.len()
}

/// The name a call's `(` follows: the identifier that ends `text`.
fn name_before(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .last()
        .map_or(text.len(), |(at, _)| at);
    &text[start..]
}

/// Whether `rest` starts with a Python literal: a quoted or bracketed one, a number, a
/// constant.
fn is_literal(rest: &str) -> bool {
    rest.starts_with(['\'', '"', '[', '{', '(', '-'])
        || rest.starts_with(|c: char| c.is_ascii_digit())
        || ["True", "False", "None", "true", "false", "null"]
            .iter()
            .any(|word| {
                rest.starts_with(word) && !rest[word.len()..].starts_with(char::is_alphanumeric)
            })
}

/// The length of the bare value `rest` starts with: up to the `)` that closes its call,
/// or a `,` that the next argument (`NAME=`, a declared one where `declared` is known)
/// or nothing but the call's end follows.
fn bare_end(rest: &str, declared: Option<&Map<String, Value>>) -> usize {
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return at,
            ')' => depth -= 1,
            ',' if depth == 0 && argument_follows(&rest[at + 1..], declared) => return at,
            _ => {}
        }
    }
    rest.len()
}

/// Whether `after` (the text after a `,`) is the next argument, `NAME=`, or the call's end.
fn argument_follows(after: &str, declared: Option<&Map<String, Value>>) -> bool {
    let after = after.trim_start();
    if after.is_empty() || after.starts_with(')') {
        return true;
    }
    let name_len = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let (name, tail) = after.split_at(name_len);
    let tail = tail.trim_start();
    !name.is_empty()
        && tail.starts_with('=')
        && !tail.starts_with("==")
        && declared.is_none_or(|declared| declared.contains_key(name))
}

/// The length of the common prefix of `a` and `b`, at a character boundary.
pub(crate) fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((at, _), _)| at)
}

fn user() -> Value {
    json!({"role": "user", "content": USER})
}

fn first_arguments() -> Value {
    json!({"sentinel_text": TEXT, "sentinel_count": 42})
}

fn second_arguments() -> Value {
    json!({"sentinel_place": {"sentinel_city": "Paris"}})
}

fn call(name: &str, arguments: &Value) -> Value {
    json!({
        "id": "sentinel1",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    })
}

fn tool(name: &str) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": "A sentinel.",
            "parameters": {"type": "object", "properties": {}},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_strings_are_quoted_and_literals_kept() {
        let quote = |text: &str| quote_bare_strings(text, &ParameterTypes::default());
        assert_eq!(
            quote("[f(city=New York, days=3, ok=True), g(x='a', y=[1])]"),
            r#"[f(city="New York", days=3, ok=True), g(x='a', y=[1])]"#
        );
        assert_eq!(quote("f(a=Nonesuch)"), r#"f(a="Nonesuch")"#);
        assert_eq!(quote("=="), "==");
        assert_eq!(
            quote("[f(q='a=b, c', where=Paris, France (FR), n=1)]"),
            r#"[f(q='a=b, c', where="Paris, France (FR)", n=1)]"#
        );
    }

    #[test]
    fn a_turn_ends_at_its_first_token() {
        assert_eq!(
            turn_end(Some("<|im_end|><|endofturn|>\n"), "</s>").as_deref(),
            Some("<|im_end|>")
        );
        assert_eq!(turn_end(Some("\n"), "</s>").as_deref(), Some("</s>"));
        assert_eq!(turn_end(None, ""), None);
    }
}
