//! The stream parser for Llama 3.1 / 3.2 / 3.3 output.
//!
//! Llama 3.x writes a call in one of these ways, and the parser reads them all:
//!
//! - a JSON object, `{"name": "get_weather", "parameters": {"city": "Paris"}}` (what its
//!   templates ask for; `arguments` and `"type": "function"` are read too), several of them
//!   separated by `;` or new lines, or a JSON list of them;
//! - a pythonic list, `[get_weather(city='Paris'), get_time()]` (the zero-shot format of
//!   seed 002, Llama 3.2's and 4's pythonic templates);
//! - after `<|python_tag|>`: a built-in call `brave_search.call(query="…")`, a JSON call or
//!   a pythonic list, or else code, which is a call of `code_interpreter` with `{"code": …}`.
//!   The python tag has no closing marker (the turn ends with `<|eom_id|>`, an end-of-
//!   generation token), so what follows it is decided when the output ends.
//!
//! Calls come out whole, when their text is complete ([`InlineCalls`]); text that is not a
//! call is content as written. Whitespace and separators around calls are layout.

use crate::events::Event;
use crate::parser::StreamParser;
use crate::toolkit::inline_calls::{CallSyntax, InlineCalls, Judge};
use crate::toolkit::pycall::parse_calls;
use crate::toolkit::tag_scan::{Piece, Placement, TagScanner};

/// Llama 3.1's marker for a built-in call or code.
pub const PYTHON_TAG: &str = "<|python_tag|>";

/// The built-in tool that runs the code written after `<|python_tag|>`.
pub const CODE_INTERPRETER: &str = "code_interpreter";

/// The parser; see the module docs.
#[derive(Debug, Clone)]
pub struct Llama3Parser {
    tags: TagScanner,
    inline: InlineCalls<CallSyntax>,
    /// The text after `<|python_tag|>`, once it has come.
    python: Option<String>,
    events: Vec<Event>,
}

impl Default for Llama3Parser {
    fn default() -> Self {
        Llama3Parser::new()
    }
}

impl Llama3Parser {
    /// A parser reading JSON calls and pythonic lists alike.
    pub fn new() -> Self {
        let tags = TagScanner::new([PYTHON_TAG], Placement::Anywhere)
            .unwrap_or_else(|error| unreachable!("the python tag is not empty: {error}"));
        Llama3Parser {
            tags,
            inline: InlineCalls::new(CallSyntax {
                pythonic: true,
                json: true,
            }),
            python: None,
            events: Vec::new(),
        }
    }

    fn read(&mut self, pieces: Vec<Piece>) {
        for piece in pieces {
            match (&mut self.python, piece) {
                (Some(code), Piece::Text(text)) => code.push_str(&text),
                (Some(code), Piece::Marker(_)) => code.push_str(PYTHON_TAG),
                (None, Piece::Text(text)) => self.inline.push(&text, &mut self.events),
                (None, Piece::Marker(_)) => {
                    self.inline.interrupt(&mut self.events);
                    self.python = Some(String::new());
                }
            }
        }
    }

    /// The text after `<|python_tag|>`: calls, or code for the interpreter.
    fn python_calls(code: &str) -> Vec<(String, String)> {
        let code = code.trim();
        if code.is_empty() {
            return Vec::new();
        }
        let judge = CallSyntax {
            pythonic: true,
            json: true,
        };
        if let Some(calls) = judge.calls(code) {
            return calls;
        }
        if let Some(calls) = json_calls_in_a_row(code) {
            return calls;
        }
        if let Some(calls) = parse_calls(code) {
            let calls: Option<Vec<_>> = calls
                .into_iter()
                .map(|(name, arguments)| {
                    let text = serde_json::to_string(&serde_json::Value::Object(arguments)).ok()?;
                    Some((name, text))
                })
                .collect();
            if let Some(calls) = calls {
                return calls;
            }
        }
        let arguments = serde_json::json!({ "code": code }).to_string();
        vec![(CODE_INTERPRETER.to_string(), arguments)]
    }
}

/// JSON calls one after another, separated by `;` or blanks, and nothing else.
fn json_calls_in_a_row(text: &str) -> Option<Vec<(String, String)>> {
    let mut inline = InlineCalls::new(CallSyntax {
        pythonic: false,
        json: true,
    });
    let mut events = Vec::new();
    inline.push(text, &mut events);
    inline.finish(&mut events);
    let mut calls = Vec::new();
    for event in events {
        match event {
            Event::ToolCallStart { name, .. } => calls.push((name, String::new())),
            Event::ToolCallArguments { fragment, .. } => calls.last_mut()?.1.push_str(&fragment),
            Event::ToolCallEnd { .. } => {}
            Event::Content(_) | Event::Reasoning(_) => return None,
        }
    }
    (!calls.is_empty()).then_some(calls)
}

impl StreamParser for Llama3Parser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let pieces = self.tags.push(piece);
        self.read(pieces);
        std::mem::take(&mut self.events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let pieces = self.tags.finish();
        self.read(pieces);
        match self.python.take() {
            Some(code) => {
                let calls = Llama3Parser::python_calls(&code);
                self.inline.emit_calls(calls, &mut self.events);
                self.inline.finish(&mut self.events);
            }
            None => self.inline.finish(&mut self.events),
        }
        std::mem::take(&mut self.events)
    }
}
