//! Hermes 2 Pro / Qwen 2.5 / Qwen 3: calls as JSON objects between `<tool_call>` tags.
//!
//! Qwen 2.5's template writes a past call as
//!
//! ```text
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Paris"}}
//! </tool_call>
//! ```
//!
//! and models answer the same way, several calls in a row, with text before, between or
//! after them. Hermes 2 Pro's prompt asks for `{"arguments": …, "name": …}` (arguments
//! first), seed 000 shows past calls in OpenAI's own shape (`{"id": …, "type": "function",
//! "function": {"name": …, "arguments": …}}`), which models then imitate, and Qwen 3 may
//! open with `<think>…</think>`. The parser reads all of these:
//!
//! - text outside the tags is `Content`; `<think>…</think>` at the very start is `Reasoning`
//!   (or everything up to `</think>`, for a prompt that already opened it);
//! - a call is decided when its object is complete: then it comes out whole
//!   (`ToolCallStart`, its arguments, `ToolCallEnd`), before any text after it;
//! - whitespace around the call tags is layout, not content (unless text follows it after a
//!   call): a reply that only calls tools has no content at all, as OpenAI clients expect;
//!   the whitespace after `</think>` is dropped too;
//! - `arguments` written as a JSON string holding JSON is decoded; missing or `null`
//!   arguments are `{}`;
//! - a call that is not one (invalid JSON, a missing or non-string name, an object the
//!   output ends inside) is not lost: its raw text, tags included, comes out as content. An
//!   unclosed `<tool_call>` whose object was complete stands (models often stop at
//!   `</tool_call>` as a stop string).
//!
//! A call sent to a client cannot be taken back, and a call garbled by a break in its JSON
//! after its name is worse than none: so a call is held until its object is whole, and
//! anything short of that is content, as written. A call's arguments therefore reach a
//! stream when the call is complete, not byte by byte; under a grammar that is the same
//! moment the engine could know the call is valid. The answer is the same streamed or not,
//! because every decision depends on the text, never on where it was cut.
//!
//! A marker inside a JSON string (`"code": "print('</tool_call>')"`) is text: inside a call,
//! a marker ends the object only where the JSON cannot take it.

use serde_json::Value;

use crate::events::Event;
use crate::parser::StreamParser;
use crate::toolkit::json_scan::{FieldStream, Scan};
use crate::toolkit::tag_scan::{Piece, Placement, TagScanner};

/// The markers the parser looks for, with what each one means.
const MARKERS: [(&str, Marker); 4] = [
    ("<tool_call>", Marker::CallOpen),
    ("</tool_call>", Marker::CallClose),
    ("<think>", Marker::ThinkOpen),
    ("</think>", Marker::ThinkClose),
];

const CALL_CLOSE: &str = "</tool_call>";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    CallOpen,
    CallClose,
    ThinkOpen,
    ThinkClose,
}

/// The stream parser for `<tool_call>` output; see the module docs.
#[derive(Debug, Clone)]
pub struct HermesParser {
    tags: TagScanner,
    mode: Mode,
    out: Output,
    /// Whether any text or marker has been read (`<think>` only counts at the very start).
    seen_output: bool,
}

#[derive(Debug, Clone)]
enum Mode {
    Content,
    Reasoning,
    Call(Box<CallReader>),
}

/// Where decided events go, with the state shared by all calls.
#[derive(Debug, Clone, Default)]
struct Output {
    events: Vec<Event>,
    content: ContentWriter,
    next_index: u32,
}

impl Default for HermesParser {
    fn default() -> Self {
        HermesParser::new()
    }
}

impl HermesParser {
    /// A parser at the start of a model's output.
    pub fn new() -> Self {
        let texts = MARKERS.map(|(text, _)| text);
        let tags = TagScanner::new(texts, Placement::Anywhere)
            .unwrap_or_else(|error| unreachable!("the Hermes markers are not empty: {error}"));
        HermesParser {
            tags,
            mode: Mode::Content,
            out: Output::default(),
            seen_output: false,
        }
    }

    /// A parser for output that begins inside the reasoning, because the prompt itself
    /// ended with `<think>` (QwQ's generation prompt is `<|im_start|>assistant\n<think>\n`).
    pub fn in_reasoning() -> Self {
        HermesParser {
            mode: Mode::Reasoning,
            seen_output: true,
            ..HermesParser::new()
        }
    }

    fn read(&mut self, pieces: Vec<Piece>) {
        for piece in pieces {
            match piece {
                Piece::Text(text) => self.on_text(&text),
                Piece::Marker(index) => {
                    if let Some(&(text, marker)) = MARKERS.get(index) {
                        self.on_marker(text, marker);
                    }
                }
            }
            self.seen_output = true;
        }
    }

    fn on_text(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Content => self.out.write_content(text),
            Mode::Reasoning => self.out.events.push(Event::Reasoning(text.to_owned())),
            Mode::Call(reader) => reader.on_text(text, &mut self.out),
        }
    }

    fn on_marker(&mut self, text: &str, marker: Marker) {
        let next = match &mut self.mode {
            Mode::Content => self.content_marker(text, marker),
            Mode::Reasoning => self.reasoning_marker(text, marker),
            Mode::Call(reader) => reader.on_marker(text, marker, &mut self.out),
        };
        match next {
            Next::Stay => {}
            Next::Content => self.mode = Mode::Content,
            Next::Reasoning => self.mode = Mode::Reasoning,
            Next::NewCall => self.mode = Mode::Call(Box::new(self.out.open_call())),
        }
    }

    fn content_marker(&mut self, text: &str, marker: Marker) -> Next {
        match marker {
            Marker::CallOpen => Next::NewCall,
            Marker::ThinkOpen if !self.seen_output => Next::Reasoning,
            Marker::CallClose | Marker::ThinkOpen | Marker::ThinkClose => {
                self.out.write_content(text);
                Next::Stay
            }
        }
    }

    fn reasoning_marker(&mut self, text: &str, marker: Marker) -> Next {
        if marker == Marker::ThinkClose {
            self.out.content.end_of_reasoning();
            return Next::Content;
        }
        self.out.events.push(Event::Reasoning(text.to_owned()));
        Next::Stay
    }

    fn finish_mode(&mut self) {
        if let Mode::Call(reader) = &mut self.mode {
            reader.finish(&mut self.out);
        }
        self.mode = Mode::Content;
        self.out.content.finish(&mut self.out.events);
    }
}

impl StreamParser for HermesParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let pieces = self.tags.push(piece);
        self.read(pieces);
        std::mem::take(&mut self.out.events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let pieces = self.tags.finish();
        self.read(pieces);
        self.finish_mode();
        std::mem::take(&mut self.out.events)
    }
}

/// What the parser does after a marker.
enum Next {
    Stay,
    Content,
    Reasoning,
    NewCall,
}

impl Output {
    fn write_content(&mut self, text: &str) {
        self.content.write(text, &mut self.events);
    }

    /// A call opens: the whitespace before its tag goes with it.
    fn open_call(&mut self) -> CallReader {
        CallReader::new(self.content.take_held())
    }

    fn take_index(&mut self) -> u32 {
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        index
    }
}

/// Writes content, keeping the whitespace around tags out of it.
///
/// Trailing whitespace is held until text follows it (then it is content) or a call opens
/// (then it is layout, dropped if the call stands). Whitespace after a call is held the same
/// way, and dropped if the output ends there; after the reasoning it is skipped.
#[derive(Debug, Clone, Default)]
struct ContentWriter {
    held_whitespace: String,
    /// Whether the held whitespace directly follows `</tool_call>`.
    held_follows_call: bool,
    skip_leading_whitespace: bool,
}

impl ContentWriter {
    fn write(&mut self, text: &str, events: &mut Vec<Event>) {
        let text = if self.skip_leading_whitespace {
            text.trim_start()
        } else {
            text
        };
        if text.is_empty() {
            return;
        }
        self.skip_leading_whitespace = false;
        let body = text.trim_end();
        if body.is_empty() {
            self.held_whitespace.push_str(text);
            return;
        }
        let mut content = self.take_held();
        content.push_str(body);
        self.held_whitespace.push_str(&text[body.len()..]);
        events.push(Event::Content(content));
    }

    fn take_held(&mut self) -> String {
        self.held_follows_call = false;
        std::mem::take(&mut self.held_whitespace)
    }

    /// A call has closed: the whitespace before its tag was layout, and so is what follows
    /// unless text comes after it.
    fn end_of_call(&mut self) {
        self.held_whitespace.clear();
        self.held_follows_call = true;
    }

    /// The reasoning has closed: the whitespace after it separates it from the answer.
    fn end_of_reasoning(&mut self) {
        self.skip_leading_whitespace = true;
    }

    fn finish(&mut self, events: &mut Vec<Event>) {
        let follows_call = self.held_follows_call;
        let held = self.take_held();
        if !held.is_empty() && !follows_call {
            events.push(Event::Content(held));
        }
    }
}

/// One `<tool_call>` from its opening tag on.
#[derive(Debug, Clone)]
struct CallReader {
    phase: Phase,
    /// Whitespace before the opening tag: content again if the call does not stand.
    layout_before: String,
    /// The call's text from its opening tag on, for giving it back as content.
    raw: String,
    fields: CallFields,
    name_text: String,
    /// The call's index once its name is known and it has started.
    index: Option<u32>,
    arguments_kind: ArgumentsKind,
    /// Arguments text read but not yet sent.
    unsent_arguments: String,
    /// The call's events, held until its object is complete.
    held: Vec<Event>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Inside the call object.
    Reading,
    /// The call has ended; text up to `</tool_call>` is content.
    Stood,
    /// The call never started; its raw text is content once `</tool_call>` or the end comes.
    Failed,
}

/// What the `arguments` value turned out to be, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgumentsKind {
    NotSeen,
    /// An object: streamed as it arrives.
    Object,
    /// Anything else (a string holding JSON, `null`, …): read whole, then translated.
    Other,
}

impl CallReader {
    fn new(layout_before: String) -> Self {
        CallReader {
            phase: Phase::Reading,
            layout_before,
            raw: String::from("<tool_call>"),
            fields: CallFields::new(),
            name_text: String::new(),
            index: None,
            arguments_kind: ArgumentsKind::NotSeen,
            unsent_arguments: String::new(),
            held: Vec::new(),
        }
    }

    fn on_text(&mut self, text: &str, out: &mut Output) {
        match self.phase {
            Phase::Reading => self.read_object(text, out),
            Phase::Stood => out.write_content(text),
            Phase::Failed => self.raw.push_str(text),
        }
    }

    fn read_object(&mut self, text: &str, out: &mut Output) {
        let step = self.fields.push(text);
        self.take_name(step.name, out);
        self.take_arguments(step.arguments);
        let (read, rest) = match step.scan {
            Scan::NeedMore => (text, ""),
            Scan::Complete { rest_at } | Scan::Invalid { at: rest_at } => split(text, rest_at),
        };
        self.raw.push_str(read);
        match step.scan {
            Scan::NeedMore => return,
            Scan::Complete { .. } => self.complete(out),
            Scan::Invalid { .. } => self.break_off(),
        }
        self.on_text(rest, out);
    }

    fn take_name(&mut self, fragment: &str, out: &mut Output) {
        if self.index.is_some() || fragment.is_empty() {
            return;
        }
        self.name_text.push_str(fragment);
        match serde_json::from_str::<String>(&self.name_text) {
            Ok(name) if !name.is_empty() => self.start(name, out),
            _ => {}
        }
    }

    /// The name is known: the call's events begin, held until its object is complete.
    fn start(&mut self, name: String, out: &Output) {
        let index = out.next_index;
        self.index = Some(index);
        self.held.push(Event::ToolCallStart {
            index,
            id: None,
            name,
        });
        if self.arguments_kind == ArgumentsKind::Object {
            let arguments = std::mem::take(&mut self.unsent_arguments);
            hold_arguments(index, arguments, &mut self.held);
        }
    }

    fn take_arguments(&mut self, fragment: &str) {
        if fragment.is_empty() {
            return;
        }
        if self.arguments_kind == ArgumentsKind::NotSeen {
            self.arguments_kind = if fragment.starts_with('{') {
                ArgumentsKind::Object
            } else {
                ArgumentsKind::Other
            };
        }
        match (self.arguments_kind, self.index) {
            (ArgumentsKind::Object, Some(index)) => {
                hold_arguments(index, fragment.into(), &mut self.held)
            }
            _ => self.unsent_arguments.push_str(fragment),
        }
    }

    /// The call object has ended: the call stands if it has a name.
    fn complete(&mut self, out: &mut Output) {
        let Some(index) = self.index else {
            self.phase = Phase::Failed;
            return;
        };
        let unsent = std::mem::take(&mut self.unsent_arguments);
        let arguments = match self.arguments_kind {
            ArgumentsKind::NotSeen => String::from("{}"),
            ArgumentsKind::Object => unsent,
            ArgumentsKind::Other => arguments_from_value(unsent),
        };
        hold_arguments(index, arguments, &mut self.held);
        self.held.push(Event::ToolCallEnd { index });
        out.take_index();
        out.events.append(&mut self.held);
        out.content.end_of_call();
        self.layout_before.clear();
        self.phase = Phase::Stood;
    }

    /// The call object cannot go on (invalid JSON, or a marker it cannot take): it is no
    /// call, and its text will be content.
    fn break_off(&mut self) {
        self.held.clear();
        self.index = None;
        self.phase = Phase::Failed;
    }

    fn on_marker(&mut self, text: &str, marker: Marker, out: &mut Output) -> Next {
        if self.phase == Phase::Reading {
            if self.object_takes(text) {
                self.read_object(text, out);
                return Next::Stay;
            }
            self.break_off();
        }
        match (self.phase, marker) {
            (Phase::Failed, Marker::CallClose) => {
                self.raw.push_str(CALL_CLOSE);
                self.give_back(out);
                Next::Content
            }
            (_, Marker::CallClose) => {
                out.content.end_of_call();
                Next::Content
            }
            (Phase::Failed, Marker::CallOpen) => {
                self.give_back(out);
                Next::NewCall
            }
            (_, Marker::CallOpen) => Next::NewCall,
            (Phase::Failed, Marker::ThinkOpen | Marker::ThinkClose) => {
                self.raw.push_str(text);
                Next::Stay
            }
            (_, Marker::ThinkOpen | Marker::ThinkClose) => {
                out.write_content(text);
                Next::Stay
            }
        }
    }

    /// Whether the object being read can take `text` (a marker inside a JSON string).
    fn object_takes(&self, text: &str) -> bool {
        let mut trial = self.fields.object.clone();
        !matches!(trial.push(text).scan, Scan::Invalid { .. })
    }

    /// The call did not stand: its text is content after all.
    fn give_back(&mut self, out: &mut Output) {
        let mut text = std::mem::take(&mut self.layout_before);
        text.push_str(&self.raw);
        self.raw.clear();
        out.write_content(&text);
    }

    /// The output ended: a call whose object is not complete is content.
    fn finish(&mut self, out: &mut Output) {
        if self.phase != Phase::Stood {
            self.give_back(out);
        }
    }
}

/// The `name` and `arguments` of a call object, as fragments while its text streams.
///
/// They are read at the object's top level (`{"name": …, "arguments": …}`) or inside its
/// `function` field (`{"id": …, "type": "function", "function": {"name": …, …}}`): that is
/// how OpenAI writes a call, and how seed 000's Hermes 2 Pro prompts show past calls, so
/// models imitate it. Each field is read from whichever place the text writes it first.
#[derive(Debug, Clone)]
struct CallFields {
    /// Scans the whole object (its [`Scan`] says where the object ends) for `arguments`.
    object: FieldStream,
    name: FieldStream,
    function: FieldStream,
    function_name: FieldStream,
    function_arguments: FieldStream,
    name_place: Option<Place>,
    arguments_place: Option<Place>,
}

/// Where in a call object a field is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    TopLevel,
    InFunction,
}

/// What one piece of a call object's text gave.
struct FieldsStep<'a> {
    name: &'a str,
    arguments: &'a str,
    scan: Scan,
}

impl CallFields {
    fn new() -> Self {
        CallFields {
            object: FieldStream::new("arguments"),
            name: FieldStream::new("name"),
            function: FieldStream::new("function"),
            function_name: FieldStream::new("name"),
            function_arguments: FieldStream::new("arguments"),
            name_place: None,
            arguments_place: None,
        }
    }

    fn push<'a>(&mut self, text: &'a str) -> FieldsStep<'a> {
        let step = self.object.push(text);
        let name = self.name.push(text).fragment;
        let function = self.function.push(text).fragment;
        let nested_name = self.function_name.push(function).fragment;
        let nested_arguments = self.function_arguments.push(function).fragment;
        FieldsStep {
            name: first_written(&mut self.name_place, text, name, nested_name),
            arguments: first_written(
                &mut self.arguments_place,
                text,
                step.fragment,
                nested_arguments,
            ),
            scan: step.scan,
        }
    }
}

/// The fragment from the place the field is read from, choosing that place, when not yet
/// chosen, as the one whose fragment comes first in `text` (both are slices of it).
fn first_written<'a>(
    place: &mut Option<Place>,
    text: &str,
    top_level: &'a str,
    in_function: &'a str,
) -> &'a str {
    if place.is_none() {
        *place = match (top_level.is_empty(), in_function.is_empty()) {
            (true, true) => None,
            (false, true) => Some(Place::TopLevel),
            (true, false) => Some(Place::InFunction),
            (false, false) if offset_in(text, top_level) < offset_in(text, in_function) => {
                Some(Place::TopLevel)
            }
            (false, false) => Some(Place::InFunction),
        };
    }
    match place {
        Some(Place::TopLevel) => top_level,
        Some(Place::InFunction) => in_function,
        None => "",
    }
}

/// Where `part`, a slice of `text`, starts in it.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

fn hold_arguments(index: u32, fragment: String, held: &mut Vec<Event>) {
    if !fragment.is_empty() {
        held.push(Event::ToolCallArguments { index, fragment });
    }
}

/// Arguments text for a value that is not an object: a string holding JSON is that JSON,
/// `null` is `{}`, anything else stays as written.
fn arguments_from_value(text: String) -> String {
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Null) => String::from("{}"),
        Ok(Value::String(inner)) if serde_json::from_str::<Value>(&inner).is_ok() => inner,
        _ => text,
    }
}

/// `text` cut at byte `at`, or not cut where `at` is not a character boundary.
fn split(text: &str, at: usize) -> (&str, &str) {
    text.split_at_checked(at).unwrap_or((text, ""))
}
