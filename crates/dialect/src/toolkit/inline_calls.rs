//! Calls written inline in the answer, with no marker around them: Llama 3.x's JSON calls
//! `{"name": "f", "parameters": {…}}`, pythonic lists `[f(a=1), g(b="x")]`, JSON lists
//! `[{"name": …}]`.
//!
//! [`InlineCalls`] reads content and holds every `{` or `[` it meets as a candidate until
//! the bracketed text is complete (JSON by [`JsonScanner`], Python literals by
//! [`BracketScanner`]) or cannot be; a [`Judge`] then says whether the complete text is
//! calls. If so they come out whole, one after another; if not the text is content as
//! written. A candidate that breaks off gives back its first character as content and the
//! rest is read again (a call may start inside it). Every decision rests on the text, never
//! on where it was cut, and candidates are bounded ([`MAX_CANDIDATE`]).
//!
//! Layout is not content: the whitespace before a call, and the whitespace, `;` and `,`
//! between and after calls, are dropped, unless text follows them (then they are content).

use serde_json::{Map, Value};

use crate::events::Event;
use crate::toolkit::json_scan::{JsonScanner, Scan};
use crate::toolkit::pycall::{parse_calls, Bracket, BracketScanner};
use crate::toolkit::reread::{read_all, Step};

/// The longest candidate held back, in bytes; a longer one is content.
pub const MAX_CANDIDATE: usize = 32 * 1024;

/// One call found: its name and its arguments as JSON text.
pub type FoundCall = (String, String);

/// Decides whether a complete bracketed text is calls.
pub trait Judge {
    /// The calls `text` (a complete `{…}` or `[…]`) stands for, or `None` for content.
    fn calls(&self, text: &str) -> Option<Vec<FoundCall>>;
}

/// The usual judge: a JSON call object `{"name", "parameters" | "arguments"}` (with an
/// optional `"type": "function"`; the arguments key must be there), a JSON list of them,
/// or a pythonic call list.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallSyntax {
    /// Whether pythonic lists `[f(a=1)]` are calls.
    pub pythonic: bool,
    /// Whether JSON call objects (and lists of them) are calls.
    pub json: bool,
}

impl Judge for CallSyntax {
    fn calls(&self, text: &str) -> Option<Vec<FoundCall>> {
        if self.json {
            if let Ok(value) = serde_json::from_str::<Value>(text) {
                // Unmarked, an object is a call only when it says so with its arguments
                // key too: `{"name": "Bob"}` is data.
                let inline_call = |value: &Value| {
                    let has_arguments =
                        value.get("parameters").is_some() || value.get("arguments").is_some();
                    has_arguments.then(|| json_call(value)).flatten()
                };
                let calls = match value {
                    Value::Array(items) if !items.is_empty() => {
                        items.iter().map(inline_call).collect::<Option<Vec<_>>>()
                    }
                    object @ Value::Object(_) => inline_call(&object).map(|call| vec![call]),
                    _ => None,
                };
                if calls.is_some() {
                    return calls;
                }
            }
        }
        if self.pythonic && text.starts_with('[') {
            let calls = parse_calls(text)?;
            if calls.is_empty() {
                return None;
            }
            return calls
                .into_iter()
                .map(|(name, arguments)| {
                    Some((name, serde_json::to_string(&Value::Object(arguments)).ok()?))
                })
                .collect();
        }
        None
    }
}

/// `{"name": …, "parameters" | "arguments": {…}}` as a call; the arguments may be missing
/// or `null` (`{}`) or a string holding an object. No other members but `"type": "function"`
/// and an `id`.
pub fn json_call(value: &Value) -> Option<FoundCall> {
    let Value::Object(members) = value else {
        return None;
    };
    let known = ["name", "arguments", "parameters", "type", "id"];
    if members.keys().any(|key| !known.contains(&key.as_str())) {
        return None;
    }
    if members.get("type").is_some_and(|kind| kind != "function") {
        return None;
    }
    let name = members.get("name")?.as_str()?;
    if name.is_empty() {
        return None;
    }
    let arguments = match members.get("parameters").or(members.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(object @ Value::Object(_)) => object.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text).ok()? {
            object @ Value::Object(_) => object,
            _ => return None,
        },
        Some(_) => return None,
    };
    Some((name.to_string(), serde_json::to_string(&arguments).ok()?))
}

/// Content with inline calls read out of it; see the module docs. Not a [`StreamParser`]
/// by itself (it numbers calls from `first_index` and leaves markers to its owner), so a
/// dialect's parser feeds it the text between its own markers.
///
/// [`StreamParser`]: crate::parser::StreamParser
#[derive(Debug, Clone)]
pub struct InlineCalls<J> {
    judge: J,
    candidate: Candidate,
    held: String,
    layout: Layout,
    next_index: u32,
}

#[derive(Debug, Clone)]
enum Candidate {
    None,
    Json(JsonScanner),
    List(BracketScanner),
}

/// Content with the layout around calls kept out of it: trailing whitespace is held until
/// text follows it (then it is content) or a call comes (then it is dropped); after a call,
/// whitespace, `;` and `,` are held the same way, and dropped if the output ends there.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Whitespace (and, after a call, separators) not yet decided.
    held: String,
    after_call: bool,
}

impl<J: Judge> InlineCalls<J> {
    pub fn new(judge: J) -> Self {
        InlineCalls {
            judge,
            candidate: Candidate::None,
            held: String::new(),
            layout: Layout::default(),
            next_index: 0,
        }
    }

    /// The index the next call will get.
    pub fn next_index(&self) -> u32 {
        self.next_index
    }

    /// Feeds content; pushes what it decided onto `events`.
    pub fn push(&mut self, text: &str, events: &mut Vec<Event>) {
        read_all(text, |rest| self.step(rest, events));
    }

    /// Something else than content comes (a marker): what is held is decided now, as at
    /// the end, and held layout is dropped.
    pub fn interrupt(&mut self, events: &mut Vec<Event>) {
        self.drain(events);
        self.layout.held.clear();
    }

    /// The content ended.
    pub fn finish(&mut self, events: &mut Vec<Event>) {
        self.drain(events);
        self.layout.finish(events);
    }

    /// Calls found outside this scanner's text (after a marker) take the next indexes.
    pub fn emit_calls(&mut self, calls: Vec<FoundCall>, events: &mut Vec<Event>) {
        self.layout.before_call();
        for (name, arguments) in calls {
            let index = self.next_index;
            self.next_index = self.next_index.saturating_add(1);
            events.push(Event::ToolCallStart {
                index,
                id: None,
                name,
            });
            events.push(Event::ToolCallArguments {
                index,
                fragment: arguments,
            });
            events.push(Event::ToolCallEnd { index });
        }
        self.layout.after_call();
    }

    fn drain(&mut self, events: &mut Vec<Event>) {
        while !matches!(self.candidate, Candidate::None) {
            let again = self.give_back_first(events);
            self.push(&again, events);
        }
    }

    fn step(&mut self, text: &str, events: &mut Vec<Event>) -> Step {
        match &mut self.candidate {
            Candidate::None => {
                let Some(at) = text.find(['{', '[']) else {
                    self.layout.write(text, events);
                    return Step::Read(text.len());
                };
                self.layout.write(&text[..at], events);
                self.candidate = if text[at..].starts_with('{') {
                    Candidate::Json(JsonScanner::new())
                } else {
                    Candidate::List(BracketScanner::new())
                };
                Step::Read(at)
            }
            Candidate::Json(scanner) => {
                let scan = match scanner.push(text) {
                    Scan::NeedMore => Bracket::NeedMore,
                    Scan::Complete { rest_at } => Bracket::Complete { rest_at },
                    Scan::Invalid { at } => Bracket::Invalid { at },
                };
                self.after_scan(scan, text, events)
            }
            Candidate::List(scanner) => {
                let scan = scanner.push(text);
                self.after_scan(scan, text, events)
            }
        }
    }

    fn after_scan(&mut self, scan: Bracket, text: &str, events: &mut Vec<Event>) -> Step {
        match scan {
            Bracket::NeedMore => {
                self.held.push_str(text);
                let hopeless = match self.candidate {
                    Candidate::List(_) => !may_open_call_list(&self.held),
                    Candidate::Json(_) => !may_open_call_object(&self.held),
                    Candidate::None => false,
                };
                if hopeless || self.held.len() > MAX_CANDIDATE {
                    return Step::Again(text.len(), self.give_back_first(events));
                }
                Step::Read(text.len())
            }
            Bracket::Invalid { at } => {
                let read = text.get(..at).unwrap_or(text);
                self.held.push_str(read);
                Step::Again(read.len(), self.give_back_first(events))
            }
            Bracket::Complete { rest_at } => {
                let read = text.get(..rest_at).unwrap_or(text);
                self.held.push_str(read);
                self.candidate = Candidate::None;
                let held = std::mem::take(&mut self.held);
                match self.judge.calls(&held) {
                    Some(calls) => self.emit_calls(calls, events),
                    None => self.layout.write(&held, events),
                }
                Step::Read(read.len())
            }
        }
    }

    /// The candidate is none: its first character is content, and the text after it is
    /// returned, to be read again.
    fn give_back_first(&mut self, events: &mut Vec<Event>) -> String {
        let held = std::mem::take(&mut self.held);
        self.candidate = Candidate::None;
        let first = held.chars().next().map_or(0, char::len_utf8);
        self.layout.write(&held[..first], events);
        held[first..].to_string()
    }
}

/// Whether `held`, a bracket and what followed it, can still open a call list: `[` then
/// blanks, then a JSON object (`{`) or a dotted name and `(`. Text that cannot (a markdown
/// link, `[1, 2]`, `array[i]`) is given back at once instead of held until its bracket
/// closes, so content streams. Once false it stays false for any longer text.
fn may_open_call_list(held: &str) -> bool {
    let rest = held.strip_prefix('[').unwrap_or(held).trim_start();
    if rest.is_empty() || rest.starts_with('{') {
        return true;
    }
    if !rest.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return false;
    }
    let after_name = rest.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.');
    let after_name = after_name.trim_start();
    after_name.is_empty() || after_name.starts_with('(')
}

/// The keys a call object may open with.
const CALL_KEYS: [&str; 5] = ["name", "type", "parameters", "arguments", "id"];

/// Whether `held`, a brace and what followed it, can still open a call object: its first
/// key must be one a call has, so other JSON in the answer streams as soon as its first key
/// says it is data. Once false it stays false for any longer text.
fn may_open_call_object(held: &str) -> bool {
    let rest = held.strip_prefix('{').unwrap_or(held).trim_start();
    let Some(key) = rest.strip_prefix('"') else {
        return rest.is_empty();
    };
    match key.find('"') {
        Some(end) => CALL_KEYS.contains(&&key[..end]),
        None => CALL_KEYS.iter().any(|known| known.starts_with(key)),
    }
}

impl Layout {
    /// A call comes: the held layout before it is dropped.
    pub fn before_call(&mut self) {
        self.held.clear();
    }

    /// A call has ended: what follows is layout until text comes.
    pub fn after_call(&mut self) {
        self.held.clear();
        self.after_call = true;
    }

    /// The output ended: held whitespace is content unless a call came last.
    pub fn finish(&mut self, events: &mut Vec<Event>) {
        let held = std::mem::take(&mut self.held);
        if !self.after_call && !held.is_empty() {
            events.push(Event::Content(held));
        }
    }

    /// Writes content.
    pub fn write(&mut self, text: &str, events: &mut Vec<Event>) {
        let mut text = text;
        if self.after_call {
            let end = text
                .find(|c: char| !(c.is_whitespace() || c == ';' || c == ','))
                .unwrap_or(text.len());
            self.held.push_str(&text[..end]);
            text = &text[end..];
            if text.is_empty() {
                return;
            }
            self.after_call = false;
        }
        let body = text.trim_end();
        if body.is_empty() {
            self.held.push_str(text);
            return;
        }
        let mut content = std::mem::take(&mut self.held);
        content.push_str(body);
        self.held.push_str(&text[body.len()..]);
        events.push(Event::Content(content));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Event> {
        let mut inline = InlineCalls::new(CallSyntax {
            pythonic: true,
            json: true,
        });
        let mut events = Vec::new();
        inline.push(text, &mut events);
        inline.finish(&mut events);
        events
    }

    #[test]
    fn a_bracket_that_cannot_open_a_call_list_streams_at_once() {
        let mut inline = InlineCalls::new(CallSyntax {
            pythonic: true,
            json: true,
        });
        let mut events = Vec::new();
        inline.push("See [the docs", &mut events);
        let content: String = events
            .iter()
            .map(|event| match event {
                Event::Content(text) => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(content, "See [the docs");
        assert!(may_open_call_list("[get_weather(city="));
        assert!(may_open_call_list("[ math.f"));
        assert!(may_open_call_list("[{\"name\""));
        assert!(!may_open_call_list("[1, 2"));
        assert!(!may_open_call_list("[a b"));
        assert!(may_open_call_object("{ \"na"));
        assert!(may_open_call_object("{\"parameters\": {"));
        assert!(!may_open_call_object("{\"nam\""));
        assert!(!may_open_call_object("{\"age\": 3"));
    }

    #[test]
    fn data_with_a_name_is_not_a_call() {
        let text = r#"Here: {"name": "Bob", "age": 3} and {"name": "Ann"}"#;
        let mut content = String::new();
        for event in read(text) {
            match event {
                Event::Content(piece) => content.push_str(&piece),
                other => panic!("{other:?} in {text}"),
            }
        }
        assert_eq!(content, text);
    }

    #[test]
    fn calls_between_text_keep_the_text_and_drop_the_layout() {
        let events = read("Sure. {\"name\": \"f\", \"parameters\": {}}; [g(a=1)]\n");
        assert_eq!(events.first(), Some(&Event::Content("Sure.".into())));
        let names: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                Event::ToolCallStart { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["f", "g"]);
        assert!(matches!(
            events.last(),
            Some(Event::ToolCallEnd { index: 1 })
        ));
    }
}
