//! The call syntax of the `short`, `long` and `hermes_2_pro` styles: one JSON object
//! `{"name": …, "arguments": …}` between `<tool_call>` and `</tool_call>`.
//!
//! Seed 000's grammar for these styles is `content* tool-call?` with `tool-call ::=
//! "<tool_call>" space (one alternative per tool) space "</tool_call>"`: free text, then at
//! most one call, which ends the answer. Here the free text is the lazy part of the
//! constraint (before the trigger `<tool_call>`), and the grammar is the call: `name` first
//! and `arguments` following the tool's schema, as the seed's alternatives are, with an
//! optional space or newline on either side of the object. Past calls are written with
//! [`ToolCallTags`], and the output is read by the Hermes parser, which takes every shape
//! of call these prompts lead models to write (arguments first, as `hermes_2_pro` asks, or
//! OpenAI's own shape, as the rewritten history shows).

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar};

use super::CallSyntax;
use crate::dialect::{call_schema, DialectError};
use crate::dialects::hermes::HermesParser;
use crate::parser::StreamParser;
use crate::rewrite::{CallWriter, ToolCallTags};

const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";

/// `<tool_call>{"name": …, "arguments": …}</tool_call>`; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaggedCalls;

impl CallSyntax for TaggedCalls {
    fn writer(&self) -> &dyn CallWriter {
        &ToolCallTags
    }

    fn trigger(&self) -> Option<&'static str> {
        Some(CALL_OPEN)
    }

    /// `root ::= "<tool_call>" space call space "</tool_call>"`, `call` one alternative
    /// per tool, `space` an optional space or newline.
    fn grammar(&self, tools: &[&Tool], _answer: Option<&Value>) -> Result<Grammar, DialectError> {
        let calls = tools
            .iter()
            .map(|tool| Ok(Expr::Json(call_schema(tool)?)))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal(CALL_OPEN),
                Expr::reference("space"),
                Expr::reference("call"),
                Expr::reference("space"),
                Expr::literal(CALL_CLOSE),
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
        Box::new(HermesParser::new())
    }
}
