//! Mistral: calls after the `[TOOL_CALLS]` control token, in one of two syntaxes by
//! tokenizer version.
//!
//! - v3 (Mistral 7B v0.3, Nemo, Small 3.1): a JSON list,
//!   `[TOOL_CALLS][{"name": "f", "arguments": {…}, "id": "a1B2c3D4e"}, …]`;
//! - v11+ (Small 3.2, Magistral, Devstral, Ministral 3): one marker per call,
//!   `[TOOL_CALLS]f[ARGS]{…}`, or `[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{…}`.
//!
//! The parser reads both, whatever the template; reasoning in `[THINK]…[/THINK]` (Magistral,
//! Ministral 3 Reasoning) is `Reasoning`. A call comes out whole, with the model's id when
//! it wrote one; text that turns out not to be a call (broken JSON, an output ending inside
//! one) is content as written, marker included. A marker inside a JSON string is text.
//!
//! The dialect renders the model's own template, which lists the tools in
//! `[AVAILABLE_TOOLS]`. Mistral's templates raise on any call id that is not 9 alphanumerics
//! (some take the last 9 of a longer one), so ids in the history that do not have that shape
//! are replaced by 9 alphanumerics derived from them, the same for a call and the result
//! that answers it. Which syntax the grammar asks for is read from the template: one that
//! writes past calls with `[ARGS]` is v11. Grammar: lazy on `[TOOL_CALLS]` for `auto`,
//! from the first byte for `required` and a named function; one call, or with
//! `parallel_tool_calls` several (more list items, or more `[TOOL_CALLS]` markers).
//! Since every id is mapped on its way back into the history, the ids a server generates
//! for calls without one may have any shape ([`IdFormat::Mistral`] keeps them as they are).
//!
//! [`IdFormat::Mistral`]: crate::tool_ids::IdFormat::Mistral

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{
    checked_parameters, ChatTemplate, Constraint, Dialect, DialectError, Prepared,
};
use crate::dialects::prep::{history, named_alternatives, render, repeated};
use crate::events::Event;
use crate::parser::StreamParser;
use crate::tool_ids::IdFormat;
use crate::toolkit::choice::Choice;
use crate::toolkit::inline_calls::Layout;
use crate::toolkit::json_scan::{JsonScanner, Scan};
use crate::toolkit::tag_scan::{Piece, Placement, TagScanner};

/// What opens every call (or list of calls).
pub const TOOL_CALLS: &str = "[TOOL_CALLS]";

const MARKERS: [&str; 5] = [TOOL_CALLS, "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"];
const ARGS: usize = 1;
const CALL_ID: usize = 2;
const THINK: usize = 3;
const THINK_END: usize = 4;

/// The longest name or id read before the text is taken for no call.
const MAX_NAME: usize = 256;

/// The Mistral dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct MistralDialect;

impl Dialect for MistralDialect {
    fn name(&self) -> &'static str {
        "mistral"
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let mut messages = history(request)?;
        mistral_ids(&mut messages);
        let prompt = render(template, &messages, choice.shown, Map::new())?;
        let v11 = writes_args_marker(template);
        choice.prepared(
            request,
            prompt,
            Box::new(MistralParser::new()),
            |tools, lazy, parallel| constraint(tools, lazy, parallel, v11),
        )
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(MistralParser::new())
    }
}

/// Whether the template writes a past call as `name[ARGS]{…}` (v11+).
fn writes_args_marker(template: &ChatTemplate) -> bool {
    let probe = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "a1B2c3D4e", "type": "function",
            "function": {"name": "probe_fn", "arguments": {}}
        }]}),
        json!({"role": "tool", "tool_call_id": "a1B2c3D4e", "content": "ok"}),
    ];
    render(template, &probe, &[], Map::new())
        .is_ok_and(|text| text.contains("probe_fn[ARGS]") || text.contains("probe_fn[CALL_ID]"))
}

/// Replaces, in place, every call id and `tool_call_id` that is not 9 alphanumerics by 9
/// alphanumerics derived from it.
pub fn mistral_ids(messages: &mut [Value]) {
    for message in messages {
        if let Some(Value::String(id)) = message.get_mut("tool_call_id") {
            *id = mistral_id(id);
        }
        if let Some(Value::Array(calls)) = message.get_mut("tool_calls") {
            for call in calls {
                if let Some(Value::String(id)) = call.get_mut("id") {
                    *id = mistral_id(id);
                }
            }
        }
    }
}

/// `id` itself when it is 9 alphanumerics, else 9 alphanumerics from its FNV-1a hash.
pub fn mistral_id(id: &str) -> String {
    if IdFormat::Mistral.accepts(id) {
        return id.to_string();
    }
    const ALPHANUMERICS: &[u8; 62] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let digit = ALPHANUMERICS[(hash % 62) as usize];
            hash /= 62;
            char::from(digit)
        })
        .collect()
}

fn constraint(
    tools: &[&Tool],
    lazy: bool,
    parallel: bool,
    v11: bool,
) -> Result<Constraint, DialectError> {
    let mut grammar = Grammar::new("root");
    let root = if v11 {
        let call_id = Expr::Seq(vec![
            Expr::literal("[CALL_ID]"),
            Expr::repeat(
                Expr::Class(CharClass::new(
                    false,
                    vec![
                        ClassItem::Range('a', 'z'),
                        ClassItem::Range('A', 'Z'),
                        ClassItem::Range('0', '9'),
                    ],
                )),
                9,
                Some(9),
            ),
        ]);
        let alternatives = tools
            .iter()
            .map(|tool| {
                Ok(Expr::Seq(vec![
                    Expr::literal(tool.name()),
                    Expr::optional(Expr::group(call_id.clone())),
                    Expr::literal("[ARGS]"),
                    Expr::Json(checked_parameters(tool)?),
                ]))
            })
            .collect::<Result<Vec<_>, DialectError>>()?;
        grammar.set_rule(
            "call",
            Expr::Seq(vec![
                Expr::literal(TOOL_CALLS),
                Expr::group(Expr::Alt(alternatives)),
            ]),
        );
        repeated(Expr::reference("call"), "", parallel)
    } else {
        grammar.set_rule(
            "call",
            Expr::Seq(vec![
                Expr::literal("{\"name\": \""),
                named_alternatives(tools, "\", \"arguments\": ")?,
                Expr::literal("}"),
            ]),
        );
        Expr::Seq(vec![
            Expr::literal(format!("{TOOL_CALLS}[")),
            repeated(Expr::reference("call"), ", ", parallel),
            Expr::literal("]"),
        ])
    };
    grammar.set_rule("root", root);
    Ok(Constraint {
        grammar,
        triggers: vec![Trigger::Word(TOOL_CALLS.to_string())],
        lazy,
    })
}

/// The stream parser for Mistral output; see the module docs.
#[derive(Debug, Clone)]
pub struct MistralParser {
    tags: TagScanner,
    mode: Mode,
    layout: Layout,
    events: Vec<Event>,
    next_index: u32,
    seen_output: bool,
}

#[derive(Debug, Clone)]
enum Mode {
    Content,
    Reasoning,
    /// After `[TOOL_CALLS]`, reading a call; `raw` is its text so far, marker included.
    Call {
        raw: String,
        call: CallText,
    },
}

#[derive(Debug, Clone)]
enum CallText {
    /// Only whitespace so far.
    Start,
    /// A JSON list (or object) of calls.
    Json(JsonScanner),
    /// A v11 name, then maybe `[CALL_ID]`, until `[ARGS]`.
    Name { name: String, id: Option<String> },
    /// A v11 call's arguments.
    Arguments {
        name: String,
        id: Option<String>,
        scanner: JsonScanner,
        text: String,
    },
}

impl Default for MistralParser {
    fn default() -> Self {
        MistralParser::new()
    }
}

impl MistralParser {
    pub fn new() -> Self {
        let tags = TagScanner::new(MARKERS, Placement::Anywhere)
            .unwrap_or_else(|error| unreachable!("the Mistral markers are not empty: {error}"));
        MistralParser {
            tags,
            mode: Mode::Content,
            layout: Layout::default(),
            events: Vec::new(),
            next_index: 0,
            seen_output: false,
        }
    }

    fn read(&mut self, pieces: Vec<Piece>) {
        for piece in pieces {
            match piece {
                Piece::Text(text) => self.on_text(&text),
                Piece::Marker(index) => self.on_marker(index),
            }
            self.seen_output = true;
        }
    }

    fn on_text(&mut self, text: &str) {
        let mut rest = text.to_string();
        while !rest.is_empty() {
            rest = match &mut self.mode {
                Mode::Content => {
                    self.layout.write(&rest, &mut self.events);
                    String::new()
                }
                Mode::Reasoning => {
                    self.events.push(Event::Reasoning(rest));
                    String::new()
                }
                Mode::Call { .. } => self.call_text(&rest),
            };
        }
    }

    /// Reads call text; returns what follows the call, if it ended inside `text`.
    fn call_text(&mut self, text: &str) -> String {
        let Mode::Call { raw, call } = &mut self.mode else {
            return String::new();
        };
        match call {
            CallText::Start => {
                let body = text.trim_start();
                raw.push_str(&text[..text.len() - body.len()]);
                if body.is_empty() {
                    return String::new();
                }
                *call = if body.starts_with(['[', '{']) {
                    CallText::Json(JsonScanner::new())
                } else {
                    CallText::Name {
                        name: String::new(),
                        id: None,
                    }
                };
                body.to_string()
            }
            CallText::Json(scanner) => match scanner.push(text) {
                Scan::NeedMore => {
                    raw.push_str(text);
                    String::new()
                }
                Scan::Complete { rest_at } => {
                    let (read, rest) = text.split_at_checked(rest_at).unwrap_or((text, ""));
                    raw.push_str(read);
                    let json = raw.get(TOOL_CALLS.len()..).unwrap_or("").to_string();
                    match json_calls(&json) {
                        Some(calls) => self.emit(calls),
                        None => self.give_back(),
                    }
                    rest.to_string()
                }
                Scan::Invalid { .. } => {
                    raw.push_str(text);
                    self.give_back();
                    String::new()
                }
            },
            CallText::Name { name, id } => {
                let target = id.as_mut().unwrap_or(name);
                let ok = text
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_-.".contains(c));
                raw.push_str(text);
                target.push_str(text);
                if !ok || target.len() > MAX_NAME {
                    self.give_back();
                }
                String::new()
            }
            CallText::Arguments {
                name,
                id,
                scanner,
                text: arguments,
            } => match scanner.push(text) {
                Scan::NeedMore => {
                    raw.push_str(text);
                    arguments.push_str(text);
                    String::new()
                }
                Scan::Complete { rest_at } => {
                    let (read, rest) = text.split_at_checked(rest_at).unwrap_or((text, ""));
                    raw.push_str(read);
                    arguments.push_str(read);
                    let call = arguments_object(arguments.trim())
                        .map(|arguments| (std::mem::take(name), id.take(), arguments));
                    match call {
                        Some(call) => self.emit(vec![call]),
                        None => self.give_back(),
                    }
                    rest.to_string()
                }
                Scan::Invalid { .. } => {
                    raw.push_str(text);
                    self.give_back();
                    String::new()
                }
            },
        }
    }

    fn on_marker(&mut self, index: usize) {
        let text = MARKERS[index];
        match &mut self.mode {
            Mode::Content => match index {
                0 => {
                    self.mode = Mode::Call {
                        raw: text.to_string(),
                        call: CallText::Start,
                    }
                }
                THINK if !self.seen_output => self.mode = Mode::Reasoning,
                _ => self.layout.write(text, &mut self.events),
            },
            Mode::Reasoning => {
                if index == THINK_END {
                    self.mode = Mode::Content;
                    self.layout.after_call();
                } else {
                    self.events.push(Event::Reasoning(text.to_string()));
                }
            }
            Mode::Call { raw, call } => match call {
                CallText::Json(scanner) | CallText::Arguments { scanner, .. } => {
                    let mut trial = scanner.clone();
                    if matches!(trial.push(text), Scan::NeedMore) {
                        self.call_text(text);
                    } else {
                        self.give_back();
                        self.on_marker(index);
                    }
                }
                CallText::Name { name, id }
                    if index == CALL_ID && id.is_none() && !name.is_empty() =>
                {
                    raw.push_str(text);
                    *id = Some(String::new());
                }
                CallText::Name { name, id }
                    if index == ARGS
                        && !name.is_empty()
                        && id.as_ref().is_none_or(|id| !id.is_empty()) =>
                {
                    raw.push_str(text);
                    *call = CallText::Arguments {
                        name: std::mem::take(name),
                        id: id.take(),
                        scanner: JsonScanner::new(),
                        text: String::new(),
                    };
                }
                _ => {
                    self.give_back();
                    self.on_marker(index);
                }
            },
        }
    }

    fn emit(&mut self, calls: Vec<(String, Option<String>, String)>) {
        self.mode = Mode::Content;
        self.layout.before_call();
        for (name, id, arguments) in calls {
            let index = self.next_index;
            self.next_index = self.next_index.saturating_add(1);
            self.events.push(Event::ToolCallStart { index, id, name });
            self.events.push(Event::ToolCallArguments {
                index,
                fragment: arguments,
            });
            self.events.push(Event::ToolCallEnd { index });
        }
        self.layout.after_call();
    }

    /// The call did not stand: its text, marker included, is content.
    fn give_back(&mut self) {
        if let Mode::Call { raw, .. } = std::mem::replace(&mut self.mode, Mode::Content) {
            self.layout.write(&raw, &mut self.events);
        }
    }
}

/// `[{"name", "arguments", "id"?}, …]` or one such object, as calls.
fn json_calls(text: &str) -> Option<Vec<(String, Option<String>, String)>> {
    let value: Value = serde_json::from_str(text).ok()?;
    let items = match value {
        Value::Array(items) if !items.is_empty() => items,
        object @ Value::Object(_) => vec![object],
        _ => return None,
    };
    items
        .iter()
        .map(|item| {
            let members = item.as_object()?;
            let name = members
                .get("name")?
                .as_str()
                .filter(|name| !name.is_empty())?;
            let id = members
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string);
            let arguments = match members.get("arguments").or(members.get("parameters")) {
                None | Some(Value::Null) => String::from("{}"),
                Some(object @ Value::Object(_)) => serde_json::to_string(object).ok()?,
                Some(Value::String(text)) => arguments_object(text)?,
                Some(_) => return None,
            };
            Some((name.to_string(), id, arguments))
        })
        .collect()
}

/// The text of a JSON object, as written; anything else is `None`.
fn arguments_object(text: &str) -> Option<String> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Object(_) => Some(text.to_string()),
        _ => None,
    }
}

impl StreamParser for MistralParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let pieces = self.tags.push(piece);
        self.read(pieces);
        std::mem::take(&mut self.events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let pieces = self.tags.finish();
        self.read(pieces);
        if matches!(self.mode, Mode::Call { .. }) {
            self.give_back();
        }
        self.mode = Mode::Content;
        self.layout.finish(&mut self.events);
        std::mem::take(&mut self.events)
    }
}
