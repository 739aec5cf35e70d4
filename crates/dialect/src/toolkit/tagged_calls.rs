//! Calls as one JSON object `{"name": …, "arguments": …}` between `<tool_call>` and
//! `</tool_call>`, as Hermes 2 Pro writes them: the parser that reads them ([`markers`],
//! the Hermes family's and the prompt styles'), and the call syntax of the `short`, `long`,
//! `mixtral` and `hermes_2_pro` styles ([`TaggedCalls`]).
//!
//! The parser is a [`FramedParser`]: `<think>…</think>` at the very start is reasoning, and
//! the opening tag opens a call region, the JSON object then the closing tag (an unclosed
//! call whose object was complete stands: models often stop at the closing tag as a stop
//! string). The object is read by [`call_json::written_call`]: name and arguments in any
//! order, or OpenAI's own shape, arguments as the model wrote them. A region that is no
//! call is content, as written.
//!
//! Seed 000's grammar for these styles is `content* tool-call?` with `tool-call ::=
//! "<tool_call>" space (one alternative per tool) space "</tool_call>"`: free text, then at
//! most one call, which ends the answer. Here the free text is the lazy part of the
//! constraint (before the trigger `<tool_call>`), and the grammar is the call: `name` first
//! and `arguments` following the tool's schema, as the seed's alternatives are, with an
//! optional space or newline on either side of the object. Past calls are written with
//! [`ToolCallTags`], and the output is read by [`parser`], which takes every shape of call
//! these prompts lead models to write (arguments first, as `hermes_2_pro` asks, or
//! OpenAI's own shape, as the rewritten history shows).
//!
//! The `mixtral` style takes the same calls with markdown's escaped underscores, which
//! Mixtral writes out of habit: its grammar admits `<tool\_call>` and `</tool\_call>` (the
//! seed's `"<tool" "\\"? "_" "call>"`), its trigger is `<tool`, common to both, and its
//! parser reads the output with every `\_` unescaped ([`Unescaped`]), names included.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar};

use crate::error::DialectError;
use crate::parser::StreamParser;
use crate::rewrite::{CallWriter, ToolCallTags};
use crate::toolkit::call_json;
use crate::toolkit::framed::{Action, FramedParser};
use crate::toolkit::grammar_parts::call_objects;
use crate::toolkit::native::think;
use crate::toolkit::pattern::{Pat, Region};
use crate::toolkit::prompt_style::CallSyntax;
use crate::toolkit::unescape::Unescaped;

/// What opens a call (and switches a lazy grammar on), and what closes it.
pub type Tags = (&'static str, &'static str);

/// Hermes' tags, which Qwen and the prompt styles write too.
pub const TOOL_CALL_TAGS: Tags = ("<tool_call>", "</tool_call>");

/// The parser for `<tool_call>` output at the start of a model's output.
pub fn parser() -> FramedParser {
    FramedParser::new(markers(TOOL_CALL_TAGS)).streaming(true)
}

/// The parser for output that begins inside the reasoning, because the prompt itself
/// ended with `<think>` (QwQ's generation prompt is `<|im_start|>assistant\n<think>\n`).
pub fn parser_in_reasoning() -> FramedParser {
    FramedParser::in_reasoning(markers(TOOL_CALL_TAGS), "</think>").streaming(true)
}

/// `<think>` at the start, and `open` opening a call: the object, then optionally `close`.
pub fn markers((open, close): Tags) -> Vec<(String, Action)> {
    let region = Region {
        body: Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt(close)]),
        decode: Arc::new(|captures| Some(vec![call_json::written_call(captures.first()?)?])),
    };
    vec![think(), (open.into(), Action::Call(region))]
}

/// `<tool_call>{"name": …, "arguments": …}</tool_call>`; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaggedCalls {
    /// Whether `\_` is taken for `_` (the `mixtral` style).
    escaped_underscores: bool,
}

impl TaggedCalls {
    /// The tags as written.
    pub const PLAIN: TaggedCalls = TaggedCalls {
        escaped_underscores: false,
    };

    /// The tags and names with markdown's `\_` allowed.
    pub const ESCAPED: TaggedCalls = TaggedCalls {
        escaped_underscores: true,
    };

    /// `<{slash}tool_call>`, with an optional backslash before its underscore where
    /// underscores may be escaped.
    fn tag(&self, slash: &str) -> Expr {
        if !self.escaped_underscores {
            return Expr::literal(format!("<{slash}tool_call>"));
        }
        Expr::Seq(vec![
            Expr::literal(format!("<{slash}tool")),
            Expr::optional(Expr::literal("\\")),
            Expr::literal("_call>"),
        ])
    }
}

impl CallSyntax for TaggedCalls {
    fn writer(&self) -> &dyn CallWriter {
        &ToolCallTags
    }

    fn trigger(&self) -> Option<&'static str> {
        Some(if self.escaped_underscores {
            "<tool"
        } else {
            "<tool_call>"
        })
    }

    /// `root ::= "<tool_call>" space call space "</tool_call>"`, `call` one alternative
    /// per tool, `space` an optional space or newline.
    fn grammar(&self, tools: &[&Tool], _answer: Option<&Value>) -> Result<Grammar, DialectError> {
        let calls = call_objects(tools, ("name", "arguments"), None)?;
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                self.tag(""),
                Expr::reference("space"),
                Expr::reference("call"),
                Expr::reference("space"),
                self.tag("/"),
            ]),
        );
        grammar.set_rule("call", Expr::Alt(calls));
        grammar.set_rule(
            "space",
            Expr::optional(Expr::Alt(vec![Expr::literal(" "), Expr::literal("\n")])),
        );
        Ok(grammar)
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        if self.escaped_underscores {
            Box::new(Unescaped::new(parser()))
        } else {
            Box::new(parser())
        }
    }
}
