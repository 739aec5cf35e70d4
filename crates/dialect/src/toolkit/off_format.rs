//! Calls written off-format: a JSON object naming a declared tool, fenced as markdown
//! (```` ```json {"name": …, "arguments": …} ``` ````) or bare, in what a dialect's parser
//! took for content.
//!
//! Small models often write a call the way they saw calls in chat data rather than in
//! their trained wrapper; measured with Qwen2.5-Coder-0.5B, most of its calls without a
//! grammar came out so. [`OffFormatCalls`] wraps any dialect's parser and reads its content
//! again: an object that names a tool of the request and whose arguments fit that tool's
//! schema is a call, anything else stays content exactly as written. Text is never turned
//! into a call that does not name a declared tool.
//!
//! A candidate starts at a `{` or at a fence opening (```` ``` ```` or ```` ```json ````
//! followed by `{`) and is held until its object is complete or cannot be JSON, so the
//! decision depends on the text only, never on how it was cut. A candidate that is not JSON
//! gives back its first character as content and the rest is read again, since a call may
//! start inside it (`{ return {"name": …} }`); a complete object that is not a call is
//! content whole. Candidates are bounded ([`MAX_CANDIDATE`]) so garbage cannot hold the
//! output back for long.
//!
//! Blank space after a call is the layout of a list of calls (one object per line, one
//! fenced block per call), not something the model said: it is held, dropped when another
//! call or the end follows, and given back as content only when text follows it.
//!
//! A call's arguments are the text the model wrote them with, as a tagged call's are.
//!
//! Streamed calls: a lazy grammar may trigger on a call's opening written bare
//! (`{"name": "`, Hermes' [`crate::dialects::hermes_dialect`]), and hold the rest of the
//! object to a call of a declared tool. Where that grammar is enforced (a [`Pacing`] other
//! than whole), a candidate that starts with such an opening is a call by construction, so
//! it is sent as the model writes it: its start once the name is a declared tool's, then its
//! arguments' text as it comes ([`FieldStream`]). A begun call that the text breaks off
//! anyway (the token limit, the end, or an engine that did not hold to the grammar) ends
//! with the arguments sent, closed to a whole JSON value, and its text is the call's, not
//! content; what follows is read afresh. Its schema is not checked again once whole: the
//! grammar did, and the client has the call already.
//!
//! `cargo bench -p toolbridge-dialect --bench parse -- off-format --streamed` (whole →
//! streamed, MB/s): one long call of 1 MB read whole 161 → 112, in 1-byte pieces 3.9 → 5.0
//! (content alone: 6.3); many calls of 1 MB, 1.3 → 105 whole, since a call read without a
//! grammar has its arguments checked against the schema (and a call over
//! [`MAX_CANDIDATE`] without one is content, as the 161 says). A call object is parsed
//! once, its members kept as written (54.7 for those many calls when it was parsed twice).

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::check::Validator;
use toolbridge_grammar::schema::{self, Options};
use toolbridge_grammar::{Constraint, Trigger};

use crate::events::Event;
use crate::parser::{Pacing, StreamParser};
use crate::toolkit::cut::closing_of;
use crate::toolkit::framed::MAX_REGION;
use crate::toolkit::json_scan::{FieldStream, JsonScanner, Scan};
use crate::toolkit::reread::{read_all, Step};

/// The longest candidate held back, in bytes; a longer one is content.
pub const MAX_CANDIDATE: usize = 32 * 1024;

/// The tools a request declares, with their argument checks compiled when first needed.
pub struct DeclaredTools {
    tools: Vec<DeclaredTool>,
}

struct DeclaredTool {
    name: String,
    parameters: Value,
    /// `None` until first needed; then the compiled schema, or `None` when it does not
    /// compile (then no arguments fit, and no off-format call of this tool is read).
    validator: Option<Option<Validator>>,
}

impl DeclaredTools {
    pub fn new(tools: &[&Tool]) -> Self {
        let tools = tools
            .iter()
            .map(|tool| DeclaredTool {
                name: tool.name().to_string(),
                parameters: tool
                    .function
                    .parameters
                    .clone()
                    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
                validator: None,
            })
            .collect();
        DeclaredTools { tools }
    }

    /// The call `text`, a JSON object, stands for: `{"name": <declared>, "arguments":
    /// <fitting>}` (`parameters` is taken for `arguments`, as Llama 3.x writes it); nothing
    /// else. Its arguments are an object's text as written, or one written in a string.
    /// `held` says a grammar held the object to a call: the schema is not checked again
    /// (on a 1 MB call that check is most of a second, and the call was sent anyway).
    fn call(&mut self, text: &str, held: bool) -> Option<(String, String)> {
        let members: HashMap<String, &RawValue> = serde_json::from_str(text).ok()?;
        let name: String = serde_json::from_str(members.get("name")?.get()).ok()?;
        let arguments = call_arguments(&members)?;
        let tool = self.tools.iter_mut().find(|tool| tool.name == name)?;
        let fits = held
            || serde_json::from_str::<Value>(&arguments).is_ok_and(|value| tool.accepts(&value));
        fits.then_some((name, arguments))
    }

    fn declares(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool.name == name)
    }
}

/// The openings of a call written bare that `constraint` holds to a call once written: its
/// triggers that open a JSON object, where it is lazy (a grammar followed from the first
/// byte leaves no content to find calls in).
pub fn held_openings(constraint: Option<&Constraint>) -> Vec<String> {
    let Some(constraint) = constraint.filter(|constraint| constraint.is_lazy()) else {
        return Vec::new();
    };
    constraint
        .triggers()
        .iter()
        .filter_map(|trigger| match trigger {
            Trigger::Word(word) if word.starts_with('{') => Some(word.clone()),
            _ => None,
        })
        .collect()
}

impl DeclaredTool {
    /// Whether `arguments` fit the tool's schema, in any member order: the check is a
    /// grammar, which reads members in the order the schema lists them, so they are put in
    /// that order first (JSON gives the order no meaning; models follow the question's).
    fn accepts(&mut self, arguments: &Value) -> bool {
        let parameters = &self.parameters;
        let validator = self.validator.get_or_insert_with(|| {
            let compiled = schema::compile(parameters, &Options::exact()).ok()?;
            Validator::from_grammar(&compiled.grammar).ok()
        });
        let Some(validator) = validator.as_ref() else {
            return false;
        };
        let ordered = in_schema_order(arguments, parameters, 0);
        serde_json::to_string(&ordered).is_ok_and(|text| validator.accepts(&text))
    }
}

/// How deep [`in_schema_order`] follows a value.
const MAX_ORDER_DEPTH: usize = 64;

/// `value` with each object's members in the order its schema's `properties` lists them,
/// members it does not list after those, following `properties` and `items` down.
fn in_schema_order(value: &Value, schema: &Value, depth: usize) -> Value {
    if depth > MAX_ORDER_DEPTH {
        return value.clone();
    }
    match value {
        Value::Object(members) => {
            let listed = schema.get("properties").and_then(Value::as_object);
            let mut ordered = Map::new();
            for (name, member_schema) in listed.into_iter().flatten() {
                if let Some(member) = members.get(name) {
                    ordered.insert(
                        name.clone(),
                        in_schema_order(member, member_schema, depth + 1),
                    );
                }
            }
            for (name, member) in members {
                if !ordered.contains_key(name) {
                    ordered.insert(name.clone(), member.clone());
                }
            }
            Value::Object(ordered)
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema @ Value::Object(_)) => Value::Array(
                items
                    .iter()
                    .map(|item| in_schema_order(item, item_schema, depth + 1))
                    .collect(),
            ),
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

/// The arguments of a call object with no members but a name and its arguments, as the
/// text of a JSON object: an object as written, missing or `null` arguments `{}`, a string
/// holding an object that object.
fn call_arguments(members: &HashMap<String, &RawValue>) -> Option<String> {
    let known = ["name", "arguments", "parameters"];
    if members.keys().any(|key| !known.contains(&key.as_str())) {
        return None;
    }
    let Some(arguments) = members.get("arguments").or(members.get("parameters")) else {
        return Some("{}".into());
    };
    match arguments.get() {
        "null" => Some("{}".into()),
        object if object.starts_with('{') => Some(object.to_string()),
        string if string.starts_with('"') => {
            let inner: String = serde_json::from_str(string).ok()?;
            let object: Map<String, Value> = serde_json::from_str(&inner).ok()?;
            serde_json::to_string(&object).ok()
        }
        _ => None,
    }
}

/// A dialect's parser with off-format calls read out of its content; see the module docs.
pub struct OffFormatCalls<P> {
    inner: P,
    tools: DeclaredTools,
    scanner: CandidateScanner,
    /// The openings the request's grammar holds to a call ([`held_openings`]).
    openings: Vec<String>,
    /// The call being sent as it is written, if one is.
    begun: Option<BegunCall>,
    /// The index the next call gets, the inner parser's and ours numbered together.
    next_index: u32,
    /// The inner parser's call indexes, and the index each call got here.
    renumbered: Vec<(u32, u32)>,
    layout: CallLayout,
}

/// A call sent before it was whole: what of it has been sent.
struct BegunCall {
    index: u32,
    name: String,
    sent: String,
}

impl<P: StreamParser> OffFormatCalls<P> {
    /// `inner`'s content read again for calls of `tools`; those opened by one of
    /// `openings` are streamed where the pacing says the grammar is enforced.
    pub fn new(inner: P, tools: DeclaredTools, openings: Vec<String>) -> Self {
        OffFormatCalls {
            inner,
            tools,
            scanner: CandidateScanner::default(),
            openings,
            begun: None,
            next_index: 0,
            renumbered: Vec::new(),
            layout: CallLayout::default(),
        }
    }

    fn relay(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::new();
        for event in events {
            match event {
                Event::Content(text) => {
                    let found = self.scanner.push(&text, &mut self.tools);
                    self.emit(found, &mut out);
                }
                other => {
                    let found = self.scanner.interrupt();
                    self.emit(found, &mut out);
                    out.push(self.renumber(other));
                }
            }
        }
        self.layout.pass(out)
    }

    fn emit(&mut self, found: Vec<Found>, out: &mut Vec<Event>) {
        for item in found {
            match item {
                Found::Content(text) => out.push(Event::Content(text)),
                Found::Call { name, arguments } => self.emit_call(name, arguments, out),
                Found::Begun { name } => {
                    let index = self.take_index();
                    out.push(Event::ToolCallStart {
                        index,
                        id: None,
                        name: name.clone(),
                    });
                    self.begun = Some(BegunCall {
                        index,
                        name,
                        sent: String::new(),
                    });
                }
                Found::Arguments(fragment) => {
                    if let Some(begun) = &mut self.begun {
                        begun.sent.push_str(&fragment);
                        out.push(Event::ToolCallArguments {
                            index: begun.index,
                            fragment,
                        });
                    }
                }
                Found::BrokenOff => self.end_begun(out),
            }
        }
    }

    /// A whole call: the rest of the one begun for it, or a new one.
    fn emit_call(&mut self, name: String, arguments: String, out: &mut Vec<Event>) {
        let index = match self.begun.take() {
            Some(begun) if begun.name == name && arguments.starts_with(&begun.sent) => {
                push_arguments(out, begun.index, &arguments[begun.sent.len()..]);
                begun.index
            }
            begun => {
                self.begun = begun;
                self.end_begun(out);
                let index = self.take_index();
                out.push(Event::ToolCallStart {
                    index,
                    id: None,
                    name,
                });
                push_arguments(out, index, &arguments);
                index
            }
        };
        out.push(Event::ToolCallEnd { index });
    }

    /// Ends the call begun, if one is, with the arguments sent closed to a whole value: a
    /// client has them already, and cannot take them back.
    fn end_begun(&mut self, out: &mut Vec<Event>) {
        if let Some(begun) = self.begun.take() {
            push_arguments(out, begun.index, &closing_of(&begun.sent));
            out.push(Event::ToolCallEnd { index: begun.index });
        }
    }

    fn renumber(&mut self, event: Event) -> Event {
        match event {
            Event::ToolCallStart { index, id, name } => {
                let outer = self.take_index();
                self.renumbered.push((index, outer));
                Event::ToolCallStart {
                    index: outer,
                    id,
                    name,
                }
            }
            Event::ToolCallArguments { index, fragment } => Event::ToolCallArguments {
                index: self.outer(index),
                fragment,
            },
            Event::ToolCallEnd { index } => Event::ToolCallEnd {
                index: self.outer(index),
            },
            other => other,
        }
    }

    fn outer(&self, inner: u32) -> u32 {
        self.renumbered
            .iter()
            .rev()
            .find(|(from, _)| *from == inner)
            .map_or(inner, |(_, to)| *to)
    }

    fn take_index(&mut self) -> u32 {
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        index
    }
}

impl<P: StreamParser> StreamParser for OffFormatCalls<P> {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let events = self.inner.push(piece);
        self.relay(events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let events = self.inner.finish();
        self.end(events)
    }

    fn finish_cut(&mut self) -> Vec<Event> {
        let events = self.inner.finish_cut();
        self.end(events)
    }

    fn set_pacing(&mut self, pacing: Pacing) {
        self.scanner.streamed_openings = match pacing {
            Pacing::Whole => Vec::new(),
            Pacing::Timed | Pacing::EveryPiece => self.openings.clone(),
        };
        self.inner.set_pacing(pacing);
    }
}

/// Arguments sent, where there are any.
fn push_arguments(out: &mut Vec<Event>, index: u32, fragment: &str) {
    if !fragment.is_empty() {
        out.push(Event::ToolCallArguments {
            index,
            fragment: fragment.to_string(),
        });
    }
}

impl<P: StreamParser> OffFormatCalls<P> {
    /// The last events: the inner parser's `events` at its end, then the calls found off
    /// format in the text it left.
    fn end(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = self.relay(events);
        let found = self.scanner.finish(&mut self.tools);
        let mut last = Vec::new();
        self.emit(found, &mut last);
        out.extend(self.layout.pass(last));
        out
    }
}

/// Holds blank space after a call until it is known to be layout; see the module docs.
#[derive(Debug, Default)]
struct CallLayout {
    after_call: bool,
    held: String,
}

impl CallLayout {
    fn pass(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            match event {
                Event::Content(text) if self.after_call && text.trim().is_empty() => {
                    self.held.push_str(&text);
                }
                Event::Content(text) if self.after_call => {
                    self.after_call = false;
                    out.push(Event::Content(std::mem::take(&mut self.held) + &text));
                }
                Event::ToolCallStart { .. } => {
                    self.held.clear();
                    out.push(event);
                }
                Event::ToolCallEnd { .. } => {
                    self.after_call = true;
                    out.push(event);
                }
                other => out.push(other),
            }
        }
        out
    }
}

/// What the scanner decided about a stretch of content.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Content(String),
    /// A whole call (the end of the one begun, if it is that one).
    Call {
        name: String,
        arguments: String,
    },
    /// A call held to the grammar begins: its name is written.
    Begun {
        name: String,
    },
    /// More of the begun call's arguments.
    Arguments(String),
    /// The begun call's text broke off before it was whole.
    BrokenOff,
}

const FENCE: &str = "```";

/// Finds candidates in a stream of content; see the module docs.
#[derive(Debug, Default)]
struct CandidateScanner {
    /// The text of the candidate being read (empty when none is).
    held: String,
    state: Candidate,
    /// The openings of calls sent as they are written (none unless the grammar holding
    /// them to a call is enforced).
    streamed_openings: Vec<String>,
}

#[derive(Debug, Default)]
enum Candidate {
    /// No candidate: content flows.
    #[default]
    None,
    /// Inside a fence opening, before its `{`.
    FenceOpening,
    /// Inside the object; `fenced` when a fence opened it.
    Object {
        scanner: JsonScanner,
        fenced: bool,
        streamed: Streamed,
    },
    /// A fenced call's object is complete; its closing fence may follow.
    FenceClosing { name: String, arguments: String },
}

impl CandidateScanner {
    fn push(&mut self, text: &str, tools: &mut DeclaredTools) -> Vec<Found> {
        let mut found = Vec::new();
        read_all(text, |rest| self.step(rest, tools, &mut found));
        merge_content(found)
    }

    /// Reads as much of `text` as the current state takes.
    fn step(&mut self, text: &str, tools: &mut DeclaredTools, found: &mut Vec<Found>) -> Step {
        match self.state {
            Candidate::None => self.scan_content(text, found),
            Candidate::FenceOpening => self.read_fence_opening(text, found),
            Candidate::Object { .. } => self.read_object(text, tools, found),
            Candidate::FenceClosing { .. } => self.read_fence_closing(text, found),
        }
    }

    /// Content up to the next possible candidate start.
    fn scan_content(&mut self, text: &str, found: &mut Vec<Found>) -> Step {
        let Some(at) = text.find(['{', '`']) else {
            found.push(Found::Content(text.to_string()));
            return Step::Read(text.len());
        };
        if at > 0 {
            found.push(Found::Content(text[..at].to_string()));
        }
        self.state = if text[at..].starts_with('{') {
            Candidate::Object {
                scanner: JsonScanner::new(),
                fenced: false,
                streamed: Streamed::default(),
            }
        } else {
            Candidate::FenceOpening
        };
        Step::Read(at)
    }

    /// ```` ``` ````, an optional `json`, optional whitespace, then `{`.
    fn read_fence_opening(&mut self, text: &str, found: &mut Vec<Found>) -> Step {
        for (at, c) in text.char_indices() {
            self.held.push(c);
            match fence_opening(&self.held) {
                Opening::Partial => {}
                Opening::Object => {
                    self.held.pop();
                    self.state = Candidate::Object {
                        scanner: JsonScanner::new(),
                        fenced: true,
                        streamed: Streamed::default(),
                    };
                    return Step::Read(at);
                }
                Opening::Not => {
                    return Step::Again(at + c.len_utf8(), self.give_back_first(found));
                }
            }
        }
        Step::Read(text.len())
    }

    fn read_object(
        &mut self,
        text: &str,
        tools: &mut DeclaredTools,
        found: &mut Vec<Found>,
    ) -> Step {
        let Candidate::Object {
            scanner, fenced, ..
        } = &mut self.state
        else {
            return Step::Read(0);
        };
        let fenced = *fenced;
        let scan = scanner.push(text);
        let read = match scan {
            Scan::NeedMore => text,
            Scan::Complete { rest_at } => split_at(text, rest_at).0,
            Scan::Invalid { at } => split_at(text, at).0,
        };
        self.held.push_str(read);
        self.stream(read, tools, found);
        let too_long = self.held.len() > max_candidate(self.is_begun());
        match scan {
            Scan::Invalid { .. } => Step::Again(read.len(), self.give_back_first(found)),
            _ if too_long => Step::Again(read.len(), self.give_back_first(found)),
            Scan::NeedMore => Step::Read(text.len()),
            Scan::Complete { .. } => {
                self.decide_object(fenced, tools, found);
                Step::Read(read.len())
            }
        }
    }

    fn is_begun(&self) -> bool {
        matches!(
            self.state,
            Candidate::Object {
                streamed: Streamed::Begun { .. },
                ..
            }
        )
    }

    /// Sends what `read`, just added to the candidate object, makes of the call it streams:
    /// its start once its opening and name are written, then its arguments.
    fn stream(&mut self, read: &str, tools: &DeclaredTools, found: &mut Vec<Found>) {
        let Candidate::Object { streamed, .. } = &mut self.state else {
            return;
        };
        match streamed {
            Streamed::No => {}
            Streamed::Begun { arguments } => {
                if let Some(fragment) = arguments_read(arguments, read) {
                    found.push(Found::Arguments(fragment));
                }
            }
            Streamed::Undecided => {
                let object = &self.held[self.held.find('{').unwrap_or(0)..];
                match streamed_call(object, &self.streamed_openings, tools) {
                    Ok(name) => {
                        found.push(Found::Begun { name });
                        let mut arguments = Some(ObjectArguments {
                            field: FieldStream::new("arguments"),
                            begun: false,
                        });
                        if let Some(fragment) = arguments_read(&mut arguments, object) {
                            found.push(Found::Arguments(fragment));
                        }
                        *streamed = Streamed::Begun { arguments };
                    }
                    Err(true) => {}
                    Err(false) => *streamed = Streamed::No,
                }
            }
        }
    }

    /// The candidate's object is complete: a call, or content whole.
    fn decide_object(&mut self, fenced: bool, tools: &mut DeclaredTools, found: &mut Vec<Found>) {
        let object_start = self.held.find('{').unwrap_or(0);
        let begun = self.is_begun();
        let call = tools.call(&self.held[object_start..], begun);
        self.state = Candidate::None;
        match call {
            Some((name, arguments)) if fenced => {
                self.held.clear();
                self.state = Candidate::FenceClosing { name, arguments };
            }
            Some((name, arguments)) => {
                self.held.clear();
                found.push(Found::Call { name, arguments });
            }
            None if begun => {
                self.held.clear();
                found.push(Found::BrokenOff);
            }
            None => found.push(Found::Content(std::mem::take(&mut self.held))),
        }
    }

    /// Whitespace and the closing ```` ``` ```` after a fenced call are its layout; anything
    /// else ends the call there and is read afresh (the next call of the same block, say).
    fn read_fence_closing(&mut self, text: &str, found: &mut Vec<Found>) -> Step {
        for (at, c) in text.char_indices() {
            self.held.push(c);
            let layout = self.held.trim_start();
            if layout == FENCE {
                self.held.clear();
                self.end_fenced_call(found);
                return Step::Read(at + c.len_utf8());
            }
            if !FENCE.starts_with(layout) {
                self.held.pop();
                let held = std::mem::take(&mut self.held);
                self.end_fenced_call(found);
                found.push(Found::Content(held));
                return Step::Read(at);
            }
        }
        Step::Read(text.len())
    }

    fn end_fenced_call(&mut self, found: &mut Vec<Found>) {
        if let Candidate::FenceClosing { name, arguments } = std::mem::take(&mut self.state) {
            found.push(Found::Call { name, arguments });
        }
    }

    /// The candidate is none: its first character is content, and the rest of it is
    /// returned, to be read again. A begun call's text is the call's: it breaks off there.
    fn give_back_first(&mut self, found: &mut Vec<Found>) -> String {
        let held = std::mem::take(&mut self.held);
        if self.is_begun() {
            self.state = Candidate::None;
            found.push(Found::BrokenOff);
            return String::new();
        }
        self.state = Candidate::None;
        let first = held.chars().next().map_or(0, char::len_utf8);
        found.push(Found::Content(held[..first].to_string()));
        held[first..].to_string()
    }

    /// A marker or a call of the dialect's own came: a candidate cannot complete across
    /// it, so what it holds is content (a complete fenced call stands).
    fn interrupt(&mut self) -> Vec<Found> {
        let mut found = Vec::new();
        self.end_fenced_call(&mut found);
        let held = std::mem::take(&mut self.held);
        if self.is_begun() {
            found.push(Found::BrokenOff);
        } else {
            found.push(Found::Content(held));
        }
        self.state = Candidate::None;
        merge_content(found)
    }

    /// The output ended: an unfinished candidate gives back its first character and the
    /// rest is read again (a complete call may lie inside it), until nothing is held.
    fn finish(&mut self, tools: &mut DeclaredTools) -> Vec<Found> {
        let mut found = Vec::new();
        loop {
            match self.state {
                Candidate::None => break,
                Candidate::FenceClosing { .. } => {
                    found.extend(self.interrupt());
                    break;
                }
                Candidate::FenceOpening | Candidate::Object { .. } => {
                    let mut given_back = Vec::new();
                    let rest = self.give_back_first(&mut given_back);
                    found.extend(given_back);
                    found.extend(self.push(&rest, tools));
                }
            }
        }
        merge_content(found)
    }
}

/// Whether a candidate object is sent as it is written.
#[derive(Debug, Default)]
enum Streamed {
    /// Not known yet: its opening or its name is not written yet.
    #[default]
    Undecided,
    /// No: it is read whole.
    No,
    /// Its call is begun; its arguments are read by `arguments` while they are an object
    /// (a string holding one is sent whole).
    Begun { arguments: Option<ObjectArguments> },
}

/// A streamed call's `arguments` member, sent while it is written.
#[derive(Debug)]
struct ObjectArguments {
    field: FieldStream,
    /// Whether its first byte was read (an object's `{`).
    begun: bool,
}

/// How far a candidate object `text` is a call sent as written: one of `openings`, then the
/// name of a declared tool and its closing quote.
fn streamed_call(text: &str, openings: &[String], tools: &DeclaredTools) -> Result<String, bool> {
    let Some(opening) = openings
        .iter()
        .find(|opening| text.starts_with(opening.as_str()))
    else {
        let may_open = openings.iter().any(|opening| opening.starts_with(text));
        return Err(may_open);
    };
    let after = &text[opening.len()..];
    match after.find(['"', '\\']) {
        Some(end) if after[end..].starts_with('"') && tools.declares(&after[..end]) => {
            Ok(after[..end].to_string())
        }
        Some(_) => Err(false),
        None => Err(after.len() <= MAX_NAME),
    }
}

/// The longest tool name a streamed call is looked for with; OpenAI allows 64 bytes.
const MAX_NAME: usize = 256;

/// How far a text is a fence opening.
enum Opening {
    Partial,
    Object,
    Not,
}

/// The longest fence opening: ```` ```json ```` and some whitespace.
const MAX_FENCE_OPENING: usize = 64;

fn fence_opening(held: &str) -> Opening {
    if held.len() <= FENCE.len() {
        return if FENCE.starts_with(held) {
            Opening::Partial
        } else {
            Opening::Not
        };
    }
    let after = &held[FENCE.len()..];
    if "json".starts_with(after) {
        return Opening::Partial;
    }
    let after = after.strip_prefix("json").unwrap_or(after);
    match after.trim_start() {
        "" if held.len() < MAX_FENCE_OPENING => Opening::Partial,
        "{" => Opening::Object,
        _ => Opening::Not,
    }
}

/// The arguments' text in `read`, while they are an object: once they turn out to be
/// something else (a string holding one), `arguments` is dropped and they are sent whole.
fn arguments_read(arguments: &mut Option<ObjectArguments>, read: &str) -> Option<String> {
    let reading = arguments.as_mut()?;
    let fragment = reading.field.push(read).fragment;
    if fragment.is_empty() {
        return None;
    }
    if !reading.begun && !fragment.starts_with('{') {
        *arguments = None;
        return None;
    }
    reading.begun = true;
    Some(fragment.to_string())
}

/// The longest candidate held: a call begun under the grammar is bounded as a call region.
fn max_candidate(begun: bool) -> usize {
    if begun {
        MAX_REGION
    } else {
        MAX_CANDIDATE
    }
}

fn split_at(text: &str, at: usize) -> (&str, &str) {
    text.split_at_checked(at).unwrap_or((text, ""))
}

/// Adjacent content joined, empty content dropped.
fn merge_content(found: Vec<Found>) -> Vec<Found> {
    let mut merged: Vec<Found> = Vec::new();
    for item in found {
        match (merged.last_mut(), item) {
            (_, Found::Content(text)) if text.is_empty() => {}
            (Some(Found::Content(last)), Found::Content(text)) => last.push_str(&text),
            (_, item) => merged.push(item),
        }
    }
    merged
}
