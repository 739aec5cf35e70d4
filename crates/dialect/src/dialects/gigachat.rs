//! GigaChat 3 / 3.1: one call per assistant turn, a JSON object `{"name", "arguments"}`
//! after the turn's text, in a `function call` message of its own (GigaChat 3) or after a
//! `<|function_call|>` token (GigaChat 3.1):
//!
//! ```text
//! Checking.<|message_sep|>
//!
//! function call<|role_sep|>
//! {"name": "get_weather", "arguments": {"city": "Paris"}}
//! ```
//!
//! ```text
//! Checking.<|function_call|>{"name": "get_weather", "arguments": {"city": "Paris"}}
//! ```
//!
//! Both templates are one family: the parser reads either form and the grammar admits
//! either; `<|message_sep|>`, which ends a message, is layout. The templates render only a
//! turn's first call, so the grammar admits one whatever `parallel_tool_calls` says.

use std::sync::Arc;

use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{grammar_of, per_tool, words};
use crate::toolkit::native::Native;
use crate::toolkit::pattern::{Pat, Region};

const FUNCTION_CALL: &str = "<|function_call|>";
const CALL_MESSAGE: &str = "function call<|role_sep|>";
const MESSAGE_SEP: &str = "<|message_sep|>";

/// The GigaChat dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct GigaChat;

impl Native for GigaChat {
    fn name(&self) -> &'static str {
        "gigachat"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        _parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |_, name, arguments| {
            Expr::Seq(vec![
                Expr::literal(format!("{{\"name\": \"{name}\", \"arguments\": ")),
                arguments,
                Expr::literal("}"),
            ])
        })?;
        let message = if forced {
            format!("{MESSAGE_SEP}\n\n{CALL_MESSAGE}\n")
        } else {
            format!("{CALL_MESSAGE}\n")
        };
        let root = Expr::Seq(vec![
            Expr::group(Expr::Alt(vec![
                Expr::literal(FUNCTION_CALL),
                Expr::literal(message),
            ])),
            call,
        ]);
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[FUNCTION_CALL, CALL_MESSAGE])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let region = || Region {
            body: Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt(MESSAGE_SEP)]),
            decode: Arc::new(|captures| call_json::calls(captures.first()?, NAME_ARGUMENTS)),
        };
        vec![
            (FUNCTION_CALL.into(), Action::Call(region())),
            (CALL_MESSAGE.into(), Action::Call(region())),
            (MESSAGE_SEP.into(), Action::Layout),
        ]
    }
}
