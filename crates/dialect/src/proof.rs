//! The proof that a dialect reads what its template writes.
//!
//! Detection ([`crate::detect`]) names a dialect from markers in the template's text: a
//! guess, however good the markers. A template that renders tool calls also says exactly
//! what a call looks like to its model, so the guess can be checked: render an assistant
//! turn carrying calls through the template itself, cut the assistant's text out of the
//! render, and parse it back with the dialect. If the names and the argument values come
//! back, the dialect reads what the model was trained to write; if not, the failure says
//! which call, the text the template wrote and what the dialect read from it — which is
//! what a person needs to fix the dialect or the template.
//!
//! [`prove`] makes two renderings, one call and two calls, whose arguments hold what breaks
//! readers most often: a string, an integer, a boolean, a nested object, and a string with
//! a comma, quotes and a newline. [`Sample`] is the machinery, shared with the corpus round
//! trip (`tests/template_round_trip.rs`), which renders BFCL's calls the same way.
//!
//! A template is untrusted input: a render that raises, or runs out of the template
//! engine's fuel or output cap (`toolbridge_template`'s limits bound each render), is a
//! failed rendering, never a panic; the work is a fixed handful of renders and parses.

use std::fmt;

use serde_json::{json, Map, Value};
use toolbridge_chat::{Arguments, ChatRequest, FunctionDefinition, Message, Tool, ToolCall};
use toolbridge_template::{ArgumentsForm, TemplateCaps};

use crate::completion::assemble;
use crate::dialect::{ChatTemplate, Dialect};
use crate::parser::{parse_all, StreamParser};
use crate::tool_ids::SequentialIds;
use crate::toolkit::learn::common_prefix;

/// One conversation whose last assistant turn carries `calls`: what a template renders and
/// a dialect must read back.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The conversation before the assistant's turn.
    pub messages: Vec<Message>,
    /// The tools the request offers.
    pub tools: Vec<Tool>,
    /// The calls of the assistant's turn; ids of 9 alphanumerics, the only shape the
    /// strictest templates (Mistral's) take.
    pub calls: Vec<ToolCall>,
}

/// What a dialect read from a rendered assistant text.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The message read.
    pub message: Message,
    /// Whether it took the parser prepared for the sample's request (see [`Sample::read`]).
    pub prepared: bool,
}

impl Sample {
    /// A sample with `calls` given the ids templates take (`call00000`, `call00001`, …).
    pub fn new(messages: Vec<Message>, tools: Vec<Tool>, calls: Vec<ToolCall>) -> Sample {
        let calls = calls
            .into_iter()
            .enumerate()
            .map(|(at, mut call)| {
                call.id = Some(format!("call{at:05}"));
                call
            })
            .collect();
        Sample {
            messages,
            tools,
            calls,
        }
    }

    /// The two renders: the conversation up to the assistant turn with the generation
    /// prompt, and with the turn (its arguments in the form the template takes).
    pub fn renders(&self, template: &ChatTemplate) -> Result<(String, String), String> {
        let form = template
            .caps()
            .tool_call_arguments
            .unwrap_or(ArgumentsForm::Object);
        let tools = serde_json::to_value(&self.tools).map_err(|error| error.to_string())?;
        let messages = serde_json::to_value(&self.messages).map_err(|error| error.to_string())?;
        let context = |messages: &Value, generation: bool| {
            let mut context = Map::new();
            context.insert("messages".into(), messages.clone());
            context.insert("tools".into(), tools.clone());
            context.insert("add_generation_prompt".into(), generation.into());
            context
        };
        let before = template
            .render_context(context(&messages, true))
            .map_err(|error| format!("render without the turn: {error}"))?;
        let calls: Vec<Value> = self
            .calls
            .iter()
            .map(|call| call_json(call, form))
            .collect();
        let mut first_error = None;
        // Content `""` first (many templates test or iterate it), then `null` as OpenAI
        // sends it.
        for content in [json!(""), Value::Null] {
            let mut with_turn = messages.clone();
            if let Value::Array(list) = &mut with_turn {
                list.push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
            }
            match template.render_context(context(&with_turn, false)) {
                Ok(after) => return Ok((before, after)),
                Err(error) => {
                    first_error.get_or_insert_with(|| format!("render with the turn: {error}"));
                }
            }
        }
        Err(first_error.unwrap_or_default())
    }

    /// The assistant's text as the template writes it ([`assistant_text`] of
    /// [`Sample::renders`]).
    pub fn render(&self, template: &ChatTemplate) -> Result<String, String> {
        let (before, after) = self.renders(template)?;
        Ok(assistant_text(&before, &after, template.caps()))
    }

    /// The dialect's plain parser, or with `prepared` the one it prepares for this
    /// sample's request on `template` (which knows the request's tools: a template that
    /// writes every value as text needs them), or the plain one where it cannot prepare
    /// one.
    pub fn parser(
        &self,
        dialect: &dyn Dialect,
        template: &ChatTemplate,
        prepared: bool,
    ) -> Box<dyn StreamParser + Send> {
        if !prepared {
            return dialect.parser();
        }
        let mut request = ChatRequest::new("m", self.messages.clone());
        request.tools = Some(self.tools.clone());
        dialect
            .prepare(&request, template)
            .map_or_else(|_| dialect.parser(), |prepared| prepared.parser)
    }

    /// What `dialect` reads from `text`: with its plain parser, else, where that misses
    /// the sample's calls, with the one prepared for the request. `Err` when the parser's
    /// events break their order contract.
    pub fn read(
        &self,
        dialect: &dyn Dialect,
        template: &ChatTemplate,
        text: &str,
    ) -> Result<Reading, String> {
        let mut reading = None;
        for prepared in [false, true] {
            let mut parser = self.parser(dialect, template, prepared);
            let message = read_whole(parser.as_mut(), text)?;
            let read = same_calls(message.calls(), &self.calls);
            reading = Some(Reading { message, prepared });
            if read {
                break;
            }
        }
        reading.ok_or_else(|| String::from("no parser"))
    }
}

/// The message `parser` reads from `text` fed whole, or why its events do not fold.
pub fn read_whole(parser: &mut dyn StreamParser, text: &str) -> Result<Message, String> {
    assemble(parse_all(parser, text), SequentialIds::default()).map_err(|error| error.to_string())
}

/// A call as a template is given it, its arguments in `form`.
fn call_json(call: &ToolCall, form: ArgumentsForm) -> Value {
    let object = call.function.arguments.to_value().unwrap_or(Value::Null);
    let arguments = match form {
        ArgumentsForm::String => Value::String(object.to_string()),
        ArgumentsForm::Object | ArgumentsForm::Either => object,
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name(), "arguments": arguments},
    })
}

/// The tokens that close a turn in the templates seen, trimmed off the assistant's text
/// where the template's own turn suffix is not known.
const CLOSERS: &[&str] = &[
    "</s>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<|end_of_text|>",
];

/// The assistant's text: `after` (the render with the turn) past what it shares with
/// `before` (the render without it, with the generation prompt), without the turn's
/// closing tokens.
pub fn assistant_text(before: &str, after: &str, caps: &TemplateCaps) -> String {
    let shared = common_prefix(before, after);
    // A generation prompt that opens more than the finished turn has (`<think>`) shares a
    // few bytes with the turn's first marker (`<t` of `<tool_call>`): back off to the end
    // of the last marker or line they share.
    let shared = if shared < before.len() {
        after[..shared].rfind(['\n', '>']).map_or(0, |at| at + 1)
    } else {
        shared
    };
    let mut text = after.get(shared..).unwrap_or("");
    loop {
        let trimmed = text.trim_end();
        let suffix = caps
            .assistant_suffix
            .as_deref()
            .map(str::trim)
            .filter(|suffix| !suffix.is_empty() && trimmed.ends_with(suffix));
        let closer = suffix.or_else(|| CLOSERS.iter().copied().find(|c| trimmed.ends_with(c)));
        match closer {
            Some(closer) => text = &trimmed[..trimmed.len() - closer.len()],
            None => return trimmed.to_string(),
        }
    }
}

/// Whether two argument values are the same, numbers compared as numbers (`5` and `5.0`
/// are the same argument).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `found` are the `expected` calls: the same names, in order, with the same
/// argument values.
pub fn same_calls(found: &[ToolCall], expected: &[ToolCall]) -> bool {
    found.len() == expected.len()
        && found.iter().zip(expected).all(|(a, b)| {
            a.name() == b.name()
                && same(
                    &a.function.arguments.to_value().unwrap_or(Value::Null),
                    &b.function.arguments.to_value().unwrap_or(Value::Null),
                )
        })
}

/// The calls of `message` as text, `name{arguments}` each, for a person reading a failure.
pub fn calls_text(calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|call| {
            format!(
                "{}{}",
                call.name(),
                call.function.arguments.as_json_string()
            )
        })
        .collect();
    format!("{} calls {calls:?}", calls.len())
}

/// What the proof of one dialect on one template found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// Nothing to prove: the template renders no calls, so there is no written call to
    /// read back.
    NotProvable,
    /// The dialect `dialect` read back `read` of the `of` renderings the template wrote.
    Read {
        dialect: &'static str,
        read: usize,
        of: usize,
        /// The first rendering that did not read back.
        failure: Option<Failure>,
        /// The first rendering the template did not write whole (it raised, or wrote fewer
        /// calls than its turn carried: Llama 3.1 takes one call per turn): not the
        /// dialect's to read, so not counted, but a proof needs one rendering at least.
        unwritten: Option<Failure>,
    },
}

/// A rendering that did not read back, or that the template did not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Which rendering: `one call`, `two calls`.
    pub rendering: &'static str,
    /// The assistant's text the template wrote, or `None` when it raised.
    pub text: Option<String>,
    /// What the dialect read from it, or what the template did.
    pub read: String,
}

impl Proof {
    /// Whether the dialect read back every rendering the template wrote, and it wrote one
    /// at least.
    pub fn holds(&self) -> bool {
        matches!(self, Proof::Read { read, of, .. } if *of > 0 && read == of)
    }

    /// Whether renderings were made and one did not read back (or none could be made):
    /// what makes [`crate::detect::choose`] look further.
    pub fn failed(&self) -> bool {
        !self.holds() && *self != Proof::NotProvable
    }

    /// How many renderings read back (0 where there is nothing to prove).
    pub fn score(&self) -> usize {
        match self {
            Proof::Read { read, .. } => *read,
            Proof::NotProvable => 0,
        }
    }

    /// The first rendering that did not read back.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Proof::Read { failure, .. } => failure.as_ref(),
            Proof::NotProvable => None,
        }
    }
}

/// The longest rendered text a proof's line quotes whole; longer ones are cut with `…`.
const QUOTED: usize = 600;

impl fmt::Display for Failure {
    /// `two calls: the template wrote "…", read 1 calls […]`, or what the template did;
    /// the text cut at [`QUOTED`] chars, a template error at its first line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Some(text) => {
                let mut cut = text.chars().take(QUOTED).collect::<String>();
                if cut.len() < text.len() {
                    cut.push('…');
                }
                write!(
                    f,
                    "{}: the template wrote {cut:?}, read {}",
                    self.rendering, self.read
                )
            }
            None => {
                let first_line = self.read.lines().next().unwrap_or("");
                write!(f, "{}: {first_line}", self.rendering)
            }
        }
    }
}

impl fmt::Display for Proof {
    /// `2/2 renderings read back (by hermes)`, then the first rendering that did not read
    /// back and the first the template did not write, where there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Proof::NotProvable => write!(f, "not provable: the template renders no calls"),
            Proof::Read {
                dialect,
                read,
                of,
                failure,
                unwritten,
            } => {
                write!(f, "{read}/{of} renderings read back (by {dialect})")?;
                if let Some(failure) = failure {
                    write!(f, "; {failure}")?;
                }
                if let Some(unwritten) = unwritten {
                    write!(f, "; not written: {unwritten}")?;
                }
                Ok(())
            }
        }
    }
}

/// Renders the proof's samples through `template` and reads them back with `dialect`;
/// see the module docs.
pub fn prove(template: &ChatTemplate, dialect: &dyn Dialect) -> Proof {
    if !template.caps().renders_tool_calls() {
        return Proof::NotProvable;
    }
    let (mut read, mut of) = (0, 0);
    let (mut failure, mut unwritten) = (None, None);
    for (rendering, sample) in samples() {
        let text = match sample.render(template) {
            Ok(text) => text,
            Err(error) => {
                unwritten.get_or_insert(Failure {
                    rendering,
                    text: None,
                    read: format!("the template raised: {error}"),
                });
                continue;
            }
        };
        if let Some(written) = fewer_calls(&text, &sample.calls) {
            unwritten.get_or_insert(Failure {
                rendering,
                read: format!(
                    "the template wrote {written} of its {} calls",
                    sample.calls.len()
                ),
                text: Some(text),
            });
            continue;
        }
        of += 1;
        let misread = match sample.read(dialect, template, &text) {
            Ok(reading) if same_calls(reading.message.calls(), &sample.calls) => {
                read += 1;
                continue;
            }
            Ok(reading) => calls_text(reading.message.calls()),
            Err(error) => format!("events out of order: {error}"),
        };
        failure.get_or_insert(Failure {
            rendering,
            text: Some(text),
            read: misread,
        });
    }
    // A template that wrote nothing proves nothing: its refusal is the failure.
    if of == 0 {
        failure = unwritten.take();
    }
    Proof::Read {
        dialect: dialect.name(),
        read,
        of,
        failure,
        unwritten,
    }
}

/// How many of `calls` the template wrote in `text`, where it wrote the first but not
/// all (their names are the tell); `None` otherwise.
fn fewer_calls(text: &str, calls: &[ToolCall]) -> Option<usize> {
    let written = calls
        .iter()
        .take_while(|call| text.contains(call.name()))
        .count();
    (written > 0 && written < calls.len()).then_some(written)
}

/// The proof's two samples, named: one call, and two calls.
fn samples() -> [(&'static str, Sample); 2] {
    let question = || vec![Message::user("Look Paris up, then tell the team.")];
    let tools = || vec![lookup_tool(), notify_tool()];
    let lookup = ToolCall::new("", "proof_lookup", lookup_arguments());
    let notify = ToolCall::new("", "proof_notify", notify_arguments());
    [
        (
            "one call",
            Sample::new(question(), tools(), vec![lookup.clone()]),
        ),
        (
            "two calls",
            Sample::new(question(), tools(), vec![lookup, notify]),
        ),
    ]
}

/// A string, an integer, a boolean, a nested object, and a string with a comma, quotes
/// and a newline.
fn lookup_arguments() -> Arguments {
    object(json!({
        "city": "Paris",
        "days": 3,
        "metric": true,
        "place": {"country": "France", "zip": "75001"},
        "note": "Paris, \"the\" city\nof light",
    }))
}

fn notify_arguments() -> Arguments {
    object(json!({
        "message": "done, \"all\" of it\nbye",
        "urgent": false,
        "retries": 2,
    }))
}

fn object(value: Value) -> Arguments {
    match value {
        Value::Object(object) => Arguments::Object(object),
        _ => Arguments::default(),
    }
}

fn lookup_tool() -> Tool {
    Tool::function(FunctionDefinition::new(
        "proof_lookup",
        "Looks a city up.",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer", "description": "How many days."},
                "metric": {"type": "boolean", "description": "Metric units."},
                "place": {
                    "type": "object",
                    "description": "Where.",
                    "properties": {
                        "country": {"type": "string", "description": "The country."},
                        "zip": {"type": "string", "description": "The postcode."},
                    },
                    "additionalProperties": false,
                },
                "note": {"type": "string", "description": "A note."},
            },
            "required": ["city", "days", "metric", "place", "note"],
        }),
    ))
}

fn notify_tool() -> Tool {
    Tool::function(FunctionDefinition::new(
        "proof_notify",
        "Tells the team.",
        json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What to say."},
                "urgent": {"type": "boolean", "description": "Whether it is urgent."},
                "retries": {"type": "integer", "description": "How often to retry."},
            },
            "required": ["message", "urgent", "retries"],
        }),
    ))
}
