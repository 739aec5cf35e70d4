//! Families that write their calls as JSON objects `{"name": …, "arguments": …}` framed by
//! markers, as a list or one object per line:
//!
//! - Granite 3.x: `<|tool_call|>[…]`
//! - Phi-4-mini: `functools[…]` (vLLM's template), `<|tool_call|>[…]<|/tool_call|>` (Ollama's)
//! - xLAM and Hammer: a bare list `[…]`, or `{"tool_calls": […]}` (Ollama's xLAM
//!   template), maybe fenced
//! - Nemotron (Nano v2, Super v1.5): `<TOOLCALL>[…]</TOOLCALL>`, `<think>` reasoning;
//!   Nemotron Mini: `<toolcall> {…} </toolcall>` per call
//! - Apriel 1.5 / 1.6: `<tool_calls>[…]</tool_calls>`, reasoning up to `[BEGIN FINAL RESPONSE]`
//! - Jamba 1.6: `<tool_calls>[…]</tool_calls>`
//! - MiniMax M1: `<tool_calls>` with one object per line, `</tool_calls>`
//! - Apertus: `<|tools_prefix|>[{"<name>": {…}}]<|tools_suffix|>`, the tool's name as key
//! - Granite 20B FC: `<function_call> {…}` per call; InternLM2:
//!   `<|action_start|><|plugin|>\n{…}<|action_end|>` per call
//! - Cogito: a bare list, each call with its `id`; Hunyuan A13B: `<tool_calls>[…]</tool_calls>`;
//!   FireFunction v1: `<functioncall>{…}` per call
//!
//! They differ only in data ([`JsonList`]), so one implementation serves them all. The
//! templates render the tools and past calls themselves. The grammar is the opening marker,
//! the calls (each `{"name": <a tool>, "arguments": <its schema>}`, one unless parallel calls
//! are allowed) and the closing marker; a family with no marker (xLAM) gets the fixed
//! opening `[{"name": "` instead, which is also its lazy trigger, so a bracket in prose does
//! not start a call.
//!
//! The parser is lenient where the grammar is strict: after a marker it reads one JSON value
//! (a list, or a single object), or for line-framed families several, and the closing marker
//! when there is one. A line-framed family's lines are read one by one, as its model writes
//! one call a line: a line that is no call (cut JSON, an object that is no call) is content
//! in its place, set apart by a line break, and costs none of the calls around it (read as
//! one region, one bad line turned every later call into content; vLLM skips such a line
//! and loses its text). Two templates write past calls in ways no JSON reader takes back, and
//! a model imitates its history: vLLM's Phi-4-mini template prints past calls bare, with no
//! `functools`, comma-separated, and object arguments with Python's `str` (`{'a': 1}`). So a
//! family may read [Python literals](crate::toolkit::pycall::parse_literal), and may take
//! calls that open the output with no marker ([`JsonList::bare_start`]); what is no call
//! stays content as written. Such a family's calls are sent once whole, not as the model
//! writes them: its reader may read a quote again otherwise once more text comes
//! ([`Native::streams_calls`]).

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::grammar_parts::{
    call_objects, grammar_of, one_or_more, per_tool, text_without, words, ws,
};
use crate::toolkit::history::{
    history_with_object_arguments, history_with_string_arguments, with_empty_content,
};
use crate::toolkit::native::{Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};
use crate::toolkit::pycall;

/// How the calls sit between the markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One JSON list.
    List,
    /// One call object per line.
    Lines,
    /// Each call after its own opening marker (and before the closing one, if any).
    EachMarked,
}

/// How a call object names its tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// `{"name": "f", "arguments": {…}}`
    NameArguments,
    /// `{"f": {…}}` (Apertus)
    NameAsKey,
}

/// The reasoning a family writes before its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    None,
    /// Between these tags at the start (`<think>…</think>`); a prompt that ends by opening
    /// them starts inside.
    Tags(&'static str, &'static str),
    /// Apriel: reasoning steps, then `[BEGIN FINAL RESPONSE]` and the answer (1.5 closes it
    /// with `[END FINAL RESPONSE]`); a prompt ending `Here are my reasoning steps:` starts
    /// inside the reasoning.
    FinalResponse,
}

/// `<think>…</think>`.
const THINK: Reasoning = Reasoning::Tags("<think>", "</think>");

/// Apriel's marker between reasoning and answer.
const BEGIN_FINAL: &str = "[BEGIN FINAL RESPONSE]";

/// What Apriel 1.6's generation prompt ends with.
const REASONING_STEPS: &str = "Here are my reasoning steps:";

/// How a call object opens in the fixed layout of families without a marker.
const CALL_OPEN: &str = "{\"name\": \"";

/// A family whose calls are JSON objects framed by markers; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct JsonList {
    pub name: &'static str,
    /// What opens the calls; empty where the model writes them bare.
    pub open: &'static str,
    /// What closes them; empty where nothing does.
    pub close: &'static str,
    pub layout: Layout,
    pub keys: Keys,
    /// Other frames (opening, closing) the parser takes calls in, as the family's other
    /// templates write them.
    pub also: &'static [(&'static str, &'static str)],
    /// Whether the output may open with the calls and no marker.
    pub bare_start: bool,
    /// Whether the parser reads Python literals too (`{'a': True}`).
    pub python: bool,
    pub reasoning: Reasoning,
    /// Whether the family's templates print past arguments as they are given (so they are
    /// given as JSON text first, not as objects that would print as Python dicts).
    pub arguments_as_text: bool,
    /// One call as the family writes it, for templates that do not show the tools.
    pub example: &'static str,
}

/// Granite 3.x: `<|tool_call|>[…]`; Granite 3.0's and 3.1's models may write the marker as
/// `<tool_call>` text, as vLLM's Granite parser reads it.
pub const GRANITE: JsonList = JsonList {
    name: "granite",
    open: "<|tool_call|>",
    close: "",
    layout: Layout::List,
    keys: Keys::NameArguments,
    also: &[("<tool_call>", "")],
    bare_start: false,
    python: false,
    reasoning: THINK,
    arguments_as_text: false,
    example: "<|tool_call|>[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]",
};

/// Phi-4-mini: `functools[…]` as vLLM's template asks, `<|tool_call|>[…]<|/tool_call|>` as
/// Ollama's writes past calls, and the bare, Python-printed calls of vLLM's history.
pub const PHI4_MINI: JsonList = JsonList {
    name: "phi4_mini",
    open: "functools",
    close: "",
    layout: Layout::List,
    keys: Keys::NameArguments,
    also: &[("<|tool_call|>", "<|/tool_call|>")],
    bare_start: true,
    python: true,
    reasoning: THINK,
    arguments_as_text: true,
    example: "functools[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]",
};

/// xLAM: a bare list `[{"name": …, "arguments": …}]` (xLAM-2's templates), or
/// `{"tool_calls": […]}` (Ollama's xLAM template), maybe in a ```` ```json ```` fence.
pub const XLAM: JsonList = JsonList {
    name: "xlam",
    open: "",
    close: "",
    layout: Layout::List,
    keys: Keys::NameArguments,
    also: &[
        ("```json", "```"),
        ("```", "```"),
        ("<tool_call>", "</tool_call>"),
        ("[TOOL_CALLS]", ""),
    ],
    bare_start: true,
    python: false,
    // xLAM-2's outputs may open with `<think>…</think>` before the list, as vLLM reads them.
    reasoning: THINK,
    arguments_as_text: false,
    example: "[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]",
};

/// Nemotron Mini: `<toolcall> {"name": …, "arguments": …} </toolcall>` per call, as
/// Ollama's template writes past calls.
pub const NEMOTRON_MINI: JsonList = JsonList {
    name: "nemotron_mini",
    open: "<toolcall>",
    close: "</toolcall>",
    layout: Layout::EachMarked,
    keys: Keys::NameArguments,
    also: &[],
    bare_start: false,
    python: false,
    reasoning: Reasoning::None,
    arguments_as_text: false,
    example: "<toolcall> {\"name\": \"NAME\", \"arguments\": ARGUMENTS} </toolcall>",
};

/// Nemotron Nano v2 and Llama 3.3 Nemotron Super v1.5: `<TOOLCALL>[…]</TOOLCALL>`.
pub const NEMOTRON: JsonList = JsonList {
    name: "nemotron",
    open: "<TOOLCALL>",
    close: "</TOOLCALL>",
    example: "<TOOLCALL>[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]</TOOLCALL>",
    ..GRANITE
};

/// Apriel 1.5 / 1.6: `<tool_calls>[…]</tool_calls>` after the reasoning.
pub const APRIEL: JsonList = JsonList {
    name: "apriel",
    open: "<tool_calls>",
    close: "</tool_calls>",
    reasoning: Reasoning::FinalResponse,
    example: "<tool_calls>[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]</tool_calls>",
    ..GRANITE
};

/// Jamba 1.6: `<tool_calls>[…]</tool_calls>`, no reasoning.
pub const JAMBA: JsonList = JsonList {
    name: "jamba",
    reasoning: Reasoning::None,
    example: "<tool_calls>[{\"name\": \"NAME\", \"arguments\": ARGUMENTS}]</tool_calls>",
    ..APRIEL
};

/// MiniMax M1: `<tool_calls>\n{…}\n{…}\n</tool_calls>`.
pub const MINIMAX_M1: JsonList = JsonList {
    name: "minimax_m1",
    open: "<tool_calls>",
    close: "</tool_calls>",
    layout: Layout::Lines,
    example: "<tool_calls>\n{\"name\": \"NAME\", \"arguments\": ARGUMENTS}\n</tool_calls>",
    ..GRANITE
};

/// Apertus: `<|tools_prefix|>[{"name": {…}}, …]<|tools_suffix|>`, each call keyed by its
/// tool's name; reasoning between `<|inner_prefix|>` and `<|inner_suffix|>`. Its templates
/// concatenate past arguments, so they are given as text.
pub const APERTUS: JsonList = JsonList {
    name: "apertus",
    open: "<|tools_prefix|>",
    close: "<|tools_suffix|>",
    keys: Keys::NameAsKey,
    reasoning: Reasoning::Tags("<|inner_prefix|>", "<|inner_suffix|>"),
    arguments_as_text: true,
    example: "<|tools_prefix|>[{\"NAME\": ARGUMENTS}]<|tools_suffix|>",
    ..GRANITE
};

/// Granite 20B function calling: `<function_call> {"name": …, "arguments": …}` per call.
pub const GRANITE_20B_FC: JsonList = JsonList {
    name: "granite_20b_fc",
    open: "<function_call>",
    close: "",
    example: "<function_call> {\"name\": \"NAME\", \"arguments\": ARGUMENTS}",
    ..NEMOTRON_MINI
};

/// InternLM2: `<|action_start|><|plugin|>\n{"name": …, "arguments": …}<|action_end|>` per call.
pub const INTERNLM2: JsonList = JsonList {
    name: "internlm2",
    open: "<|action_start|><|plugin|>",
    close: "<|action_end|>",
    example:
        "<|action_start|><|plugin|>\n{\"name\": \"NAME\", \"arguments\": ARGUMENTS}<|action_end|>",
    ..NEMOTRON_MINI
};

/// Cogito (Llama 3.2 based): text, then a bare list `[{"name": …, "arguments": …, "id": …}]`
/// (its template adds each past call's id), `<think>` reasoning when deep thinking is on.
pub const COGITO: JsonList = JsonList {
    name: "cogito",
    ..XLAM
};

/// Hunyuan A13B: `<tool_calls>[…]</tool_calls>` after `<think>` reasoning.
pub const HUNYUAN: JsonList = JsonList {
    name: "hunyuan",
    reasoning: THINK,
    ..JAMBA
};

/// FireFunction v1: `<functioncall>{"name": …, "arguments": …}` per call; its template
/// concatenates past arguments, so they are given as text.
pub const FIREFUNCTION_V1: JsonList = JsonList {
    name: "firefunction_v1",
    open: "<functioncall>",
    close: "",
    layout: Layout::EachMarked,
    keys: Keys::NameArguments,
    also: &[],
    bare_start: false,
    python: false,
    reasoning: Reasoning::None,
    arguments_as_text: true,
    example: "<functioncall>{\"name\": \"NAME\", \"arguments\": ARGUMENTS}",
};

impl Native for JsonList {
    fn name(&self) -> &'static str {
        self.name
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let calls = if self.open.is_empty() {
            bare_calls(tools, parallel)?
        } else {
            self.framed_calls(tools, parallel)?
        };
        let root = match self.reasoning.forced_prefix() {
            Some(reasoning) if forced => Expr::Seq(vec![Expr::optional(reasoning), calls]),
            _ => calls,
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        if self.open.is_empty() {
            words(&[&format!("[{CALL_OPEN}")])
        } else {
            words(&[self.open])
        }
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let mut markers = Vec::new();
        if self.layout == Layout::Lines {
            markers.push((self.open.into(), self.lines_region(self.close)));
        } else if !self.open.is_empty() {
            markers.push((self.open.into(), self.region(self.close, false)));
        }
        for (open, close) in self.also {
            markers.push((open.to_string(), self.region(close, false)));
        }
        if self.bare_start {
            markers.push((String::new(), self.region("", true)));
        }
        markers.extend(self.reasoning.markers());
        markers
    }

    /// Not where the parser reads Python literals: [`pycall`] reads a quote it took for a
    /// string's end as text again where the rest does not read (a quote the model left
    /// unescaped), so text it read one way while the call was being written may read
    /// otherwise whole, and what was sent cannot be taken back. With a comma dropped
    /// (`"b": ["x"]"c": 1`), a key read whole swallowed the list sent before it.
    fn streams_calls(&self) -> bool {
        !self.python
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        if self.bare_start {
            return Start::AfterMarker("");
        }
        match self.reasoning {
            Reasoning::None => Start::Content,
            Reasoning::Tags(open, close) => match prompt {
                Some(prompt) if prompt.trim_end().ends_with(open) => Start::Reasoning(close),
                _ => Start::Content,
            },
            Reasoning::FinalResponse => match prompt {
                Some(prompt) if prompt.trim_end().ends_with(REASONING_STEPS) => {
                    Start::Reasoning(BEGIN_FINAL)
                }
                _ => Start::Content,
            },
        }
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let objects = history_with_object_arguments(request)?;
        let strings = history_with_string_arguments(request)?;
        let mut histories = if self.arguments_as_text {
            vec![strings, objects]
        } else {
            vec![objects, strings]
        };
        let empty = histories
            .iter()
            .cloned()
            .map(with_empty_content)
            .collect::<Vec<_>>();
        histories.extend(empty);
        Ok(histories)
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(self.example)
    }
}

impl JsonList {
    /// The opening marker, the calls in the family's layout, the closing marker.
    fn framed_calls(&self, tools: &[&Tool], parallel: bool) -> Result<Expr, DialectError> {
        let call = match self.keys {
            Keys::NameArguments => {
                Expr::group(Expr::Alt(call_objects(tools, ("name", "arguments"), None)?))
            }
            Keys::NameAsKey => per_tool(tools, |_, name, arguments| {
                Expr::Seq(vec![
                    Expr::literal(format!("{{\"{name}\"")),
                    ws(),
                    Expr::literal(":"),
                    ws(),
                    arguments,
                    ws(),
                    Expr::literal("}"),
                ])
            })?,
        };
        let (open, close) = (self.open, self.close);
        Ok(match self.layout {
            Layout::List => Expr::Seq(vec![
                Expr::literal(format!("{open}[")),
                ws(),
                one_or_more(
                    call,
                    Expr::Seq(vec![ws(), Expr::literal(","), ws()]),
                    parallel,
                ),
                ws(),
                Expr::literal(format!("]{close}")),
            ]),
            Layout::Lines => Expr::Seq(vec![
                Expr::literal(format!("{open}\n")),
                one_or_more(call, Expr::literal("\n"), parallel),
                Expr::literal(format!("\n{close}")),
            ]),
            Layout::EachMarked => {
                let mut marked = vec![Expr::literal(open), ws(), call];
                if !close.is_empty() {
                    marked.extend([ws(), Expr::literal(close)]);
                }
                one_or_more(Expr::Seq(marked), ws(), parallel)
            }
        })
    }

    /// A call region closed by `close` (when not empty): one value, or with `several` any
    /// number, each a call object or a list of them, commas between allowed.
    fn region(&self, close: &str, several: bool) -> Action {
        let item = if self.python { Pat::Literal } else { Pat::Json };
        let mut body = vec![Pat::Ws, item.clone()];
        if several {
            body.push(Pat::repeat(Pat::Seq(vec![
                Pat::Ws,
                Pat::opt(","),
                Pat::Ws,
                item,
            ])));
        }
        if !close.is_empty() {
            body.extend([Pat::Ws, Pat::opt(close)]);
        }
        let (python, keys) = (self.python, self.keys);
        Action::Call(Region {
            body: Pat::Seq(body),
            decode: Arc::new(move |captures| decode(captures, python, keys)),
        })
    }
}

impl JsonList {
    /// The calls one a line up to `close`, each line read alone: a line that opens like a
    /// call (`{`, `[`) but is none (bad JSON, an object that names no tool) is content in
    /// its place ([`Call::text`]), and the calls before and after it stand. A line that
    /// does not open like a call ends the region, so prose after the marker is not held
    /// back. No call at all is no region: its text is content as written.
    fn lines_region(&self, close: &str) -> Action {
        let item = if self.python { Pat::Literal } else { Pat::Json };
        let ends = [close].into_iter().filter(|close| !close.is_empty());
        let bad = Pat::Seq(vec![
            Pat::ahead(Pat::Alt(vec![Pat::lit("{"), Pat::lit("[")])),
            Pat::until_or("\n", ends.map(String::from).collect(), MAX_REGION),
        ]);
        let line = Pat::Seq(vec![
            Pat::Ws,
            Pat::opt(","),
            Pat::Ws,
            Pat::Alt(vec![item, bad]),
        ]);
        let mut body = vec![Pat::repeat(line)];
        if !close.is_empty() {
            body.extend([Pat::Ws, Pat::opt(close)]);
        }
        let (python, keys) = (self.python, self.keys);
        Action::Call(Region {
            body: Pat::Seq(body),
            decode: Arc::new(move |captures| lines(captures, python, keys)),
        })
    }
}

/// Each captured line's calls, or its text where it holds none (consecutive such lines
/// one text); at least one call.
fn lines(captures: &[String], python: bool, keys: Keys) -> Option<Vec<Call>> {
    let mut read: Vec<Call> = Vec::new();
    for capture in captures {
        let text = capture.trim();
        if text.is_empty() {
            continue;
        }
        match decode(std::slice::from_ref(capture), python, keys) {
            Some(calls) => read.extend(calls),
            None => match read.last_mut() {
                Some(last) if last.is_text() => {
                    last.arguments.push('\n');
                    last.arguments.push_str(text);
                }
                _ => read.push(Call::text(text)),
            },
        }
    }
    read.iter().any(|call| !call.is_text()).then_some(read)
}

/// `[{"name": "<tool>", "arguments": <its schema>}, …]` in one fixed layout, for families
/// that write their calls with no marker: its opening is the lazy trigger.
fn bare_calls(tools: &[&Tool], parallel: bool) -> Result<Expr, DialectError> {
    let named = per_tool(tools, |_, name, arguments| {
        Expr::Seq(vec![
            Expr::literal(format!("{name}\", \"arguments\": ")),
            arguments,
        ])
    })?;
    let call = Expr::Seq(vec![named, Expr::literal("}")]);
    Ok(Expr::Seq(vec![
        Expr::literal(format!("[{CALL_OPEN}")),
        one_or_more(call, Expr::literal(format!(", {CALL_OPEN}")), parallel),
        Expr::literal("]"),
    ]))
}

/// The calls of a region's captured values, all of them calls, at least one.
fn decode(captures: &[String], python: bool, keys: Keys) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    for capture in captures {
        let value = serde_json::from_str::<Value>(capture)
            .ok()
            .or_else(|| python.then(|| pycall::parse_literal(capture)).flatten())?;
        calls.extend(match keys {
            Keys::NameArguments => calls_in(&value)?,
            Keys::NameAsKey => keyed_calls(&value)?,
        });
    }
    (!calls.is_empty()).then_some(calls)
}

/// A call object, a list of them, or xLAM's `{"tool_calls": […]}`.
fn calls_in(value: &Value) -> Option<Vec<Call>> {
    match value.get("tool_calls") {
        Some(list @ Value::Array(_)) if value.get("name").is_none() => {
            call_json::calls_in(list, NAME_ARGUMENTS)
        }
        _ => call_json::calls_in(value, NAME_ARGUMENTS),
    }
}

/// `{"f": {…}}` objects, one or a list of them.
fn keyed_calls(value: &Value) -> Option<Vec<Call>> {
    let keyed = |item: &Value| {
        let members = item.as_object()?;
        let (name, arguments) = members.iter().next()?;
        if members.len() != 1 || name.is_empty() {
            return None;
        }
        Some(Call::new(name, call_json::arguments_text(arguments)?))
    };
    match value {
        Value::Array(items) if !items.is_empty() => items.iter().map(keyed).collect(),
        Value::Object(_) => Some(vec![keyed(value)?]),
        _ => None,
    }
}

impl Reasoning {
    fn markers(self) -> Vec<(String, Action)> {
        match self {
            Reasoning::None => Vec::new(),
            Reasoning::Tags(open, close) => vec![(
                open.into(),
                Action::Reasoning {
                    close: close.into(),
                    at_start_only: true,
                },
            )],
            Reasoning::FinalResponse => vec![
                (BEGIN_FINAL.into(), Action::Layout),
                ("[END FINAL RESPONSE]".into(), Action::Layout),
                ("<|end|>".into(), Action::Layout),
                (
                    "<thinking>".into(),
                    Action::Reasoning {
                        close: "</thinking>".into(),
                        at_start_only: false,
                    },
                ),
            ],
        }
    }

    /// The reasoning a forced grammar lets the model write before its calls (whether or
    /// not the prompt opened it).
    fn forced_prefix(self) -> Option<Expr> {
        match self {
            Reasoning::None => None,
            Reasoning::Tags(open, close) => Some(Expr::group(Expr::Seq(vec![
                Expr::optional(Expr::literal(open)),
                text_without(close.chars().next().unwrap_or('<')),
                Expr::literal(close),
                ws(),
            ]))),
            Reasoning::FinalResponse => Some(Expr::group(Expr::Seq(vec![
                text_without('['),
                Expr::literal(BEGIN_FINAL),
                ws(),
            ]))),
        }
    }
}
