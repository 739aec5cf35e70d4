//! OLMo 3 (AI2): Python calls one per line between `<function_calls>` tags, after optional
//! reasoning in `<think>…</think>`, as vLLM's OLMo 3 parser reads them:
//!
//! ```text
//! <function_calls>
//! get_weather(city='Paris')
//! add(a=1, b=2.5)
//! </function_calls>
//! ```
//!
//! Each line is read as MiniCPM3's are ([`calls_by_line`]: a list on one line too); a
//! region any line of which is no call is content, as written. The grammar writes the calls with
//! [`call_sequence`], one per line, laid out as vLLM's OLMo 3 template writes past calls.

use std::sync::Arc;

use toolbridge_chat::Tool;
use toolbridge_grammar::{Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{forced_after_reasoning, words};
use crate::toolkit::native::{after_think, think, Native, Start};
use crate::toolkit::pattern::{Pat, Region};
use crate::toolkit::pythonic::{call_sequence, calls_by_line};

const CALLS_START: &str = "<function_calls>";
const CALLS_END: &str = "</function_calls>";

/// The OLMo 3 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Olmo3;

impl Native for Olmo3 {
    fn name(&self) -> &'static str {
        "olmo3"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        let calls = call_sequence(
            &mut grammar,
            tools,
            (&format!("{CALLS_START}\n"), "\n", &format!("\n{CALLS_END}")),
            parallel,
        )?;
        let root = forced_after_reasoning(forced, ("<think>", "</think>"), calls);
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALLS_START])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let region = Region {
            body: Pat::until_or_end(CALLS_END),
            decode: Arc::new(|captures| calls_by_line(captures.first()?)),
        };
        vec![(CALLS_START.into(), Action::Call(region)), think()]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }

    fn call_example(&self) -> Option<&'static str> {
        Some("<function_calls>\nNAME(key='value', number=1)\n</function_calls>")
    }
}
