//! MiniCPM3: calls as Python, one per line, in a fence between special tokens, after the
//! model's thought:
//!
//! ````text
//! <|thought_start|>
//! Both cities.
//! <|thought_end|>
//! <|tool_call_start|>
//! ```python
//! get_weather(city="Paris")
//! get_weather(city="Rome")
//! ```
//! <|tool_call_end|>
//! ````
//!
//! Its template writes past arguments with `tojson`, so values are JSON; the parser reads
//! Python's literals too ([`crate::toolkit::pycall`]), and the grammar is the shared
//! pythonic one ([`crate::toolkit::pythonic`]), a call per line. The fence closes at a
//! line that starts with its backticks: a call is one line (JSON and Python strings escape
//! their newlines), so backticks inside an argument do not end it. The thought is
//! reasoning.

use std::sync::Arc;

use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::grammar_parts::{forced_after_reasoning, one_or_more, words};
use crate::toolkit::native::Native;
use crate::toolkit::pattern::{Pat, Region, MAX_PROSE};
use crate::toolkit::pythonic::{call_alternatives, calls_by_line, tools_arguments};

pub const CALLS_START: &str = "<|tool_call_start|>";
pub const CALLS_END: &str = "<|tool_call_end|>";
pub const THOUGHT_START: &str = "<|thought_start|>";
pub const THOUGHT_END: &str = "<|thought_end|>";

/// The MiniCPM3 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct MiniCpm3;

impl Native for MiniCpm3 {
    fn name(&self) -> &'static str {
        "minicpm3"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        let arguments = tools_arguments(&mut grammar, tools)?;
        grammar.set_rule("call", call_alternatives("", tools, &arguments));
        let calls = Expr::Seq(vec![
            Expr::literal(format!("{CALLS_START}\n```python\n")),
            one_or_more(Expr::reference("call"), Expr::literal("\n"), parallel),
            Expr::literal(format!("\n```\n{CALLS_END}")),
        ]);
        let root = forced_after_reasoning(forced, (THOUGHT_START, THOUGHT_END), calls);
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALLS_START])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let block = Pat::Seq(vec![
            Pat::Ws,
            Pat::Alt(vec![
                Pat::Seq(vec![
                    Pat::lit("```"),
                    Pat::opt("python"),
                    Pat::until("\n```", MAX_REGION),
                    Pat::Ws,
                    Pat::opt(CALLS_END),
                ]),
                Pat::until(CALLS_END, MAX_PROSE),
            ]),
        ]);
        vec![
            (
                CALLS_START.into(),
                Action::Call(Region {
                    body: block,
                    decode: Arc::new(|captures| calls_by_line(captures.first()?)),
                }),
            ),
            (
                THOUGHT_START.into(),
                Action::Reasoning {
                    close: THOUGHT_END.into(),
                    at_start_only: true,
                },
            ),
        ]
    }

    fn call_example(&self) -> Option<&'static str> {
        Some("<|tool_call_start|>\n```python\nNAME(PARAMETER=VALUE)\n```\n<|tool_call_end|>")
    }
}
