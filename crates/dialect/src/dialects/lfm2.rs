//! LFM2 / LFM2.5 (Liquid AI): a pythonic call list between special tokens, after optional
//! reasoning in `<think>…</think>`:
//!
//! ```text
//! <|tool_call_start|>[get_weather(city='Paris'), add(a=1, b=2.5)]<|tool_call_end|>
//! ```
//!
//! The list is read by [`crate::toolkit::pycall`] (Python literals: `'x'`, `True`, `None`)
//! and written by the grammar [`call_list`] shares with the other pythonic families. Newer
//! LFM2 templates (and a system prompt asking for JSON) have the model write JSON between
//! the same tokens instead, a list of `{"name": …, "arguments": …}` or one such object:
//!
//! ```text
//! <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>
//! ```
//!
//! so the region reads either ([`crate::toolkit::call_json`] the JSON), and its two tokens
//! are the region's, never content. A list whose closing token never came (the output
//! ended first) is still read, whole.

use std::sync::Arc;

use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{forced_after_reasoning, words};
use crate::toolkit::native::{after_think, think, Native, Start};
use crate::toolkit::pattern::{Pat, Region};
use crate::toolkit::pycall::parse_calls;
use crate::toolkit::pythonic::{call_list, python_calls_of};

const CALLS_START: &str = "<|tool_call_start|>";
const CALLS_END: &str = "<|tool_call_end|>";

/// The LFM2 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lfm2;

impl Native for Lfm2 {
    fn name(&self) -> &'static str {
        "lfm2"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        let list = call_list(&mut grammar, tools, CALLS_START, parallel)?;
        let calls = Expr::Seq(vec![list, Expr::literal(CALLS_END)]);
        let root = forced_after_reasoning(forced, ("<think>", "</think>"), calls);
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALLS_START])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        vec![
            (CALLS_START.into(), Action::Call(python_list(CALLS_END))),
            think(),
        ]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }
}

/// A region holding a pythonic call list, or JSON calls, up to `end` (or to the end of the
/// output).
pub fn python_list(end: &str) -> Region {
    Region {
        body: Pat::until_or_end(end),
        decode: Arc::new(|captures| {
            let text = captures.first()?;
            match parse_calls(text) {
                Some(calls) => python_calls_of(calls),
                None => call_json::calls(text.trim(), NAME_ARGUMENTS),
            }
        }),
    }
}
