//! Families that write their calls as one JSON list after a marker: Granite
//! (`<|tool_call|>[{"name": …, "arguments": …}]`) and Phi-4-mini (`functools[…]`, as
//! vLLM's template for it asks).
//!
//! The templates render the tools and past calls themselves. The grammar is the marker
//! and a list of call objects, each `{"name": <a tool>, "arguments": <its schema>}`, one
//! unless parallel calls are allowed; the parser reads the list whole after the marker
//! (a single object is taken too), and anything else after it is content as written.

use std::sync::Arc;

use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::{call_schema, DialectError};
use crate::dialects::framed_native::{
    after_think, grammar_of, one_or_more, think, words, ws, Native, Start,
};
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::{Action, Pat, Region};

/// A family whose calls are a JSON list after `marker`.
#[derive(Debug, Clone, Copy)]
pub struct JsonList {
    pub name: &'static str,
    pub marker: &'static str,
}

/// Granite 3.x: `<|tool_call|>[…]`.
pub const GRANITE: JsonList = JsonList {
    name: "granite",
    marker: "<|tool_call|>",
};

/// Phi-4-mini: `functools[…]`. Not registered yet: vLLM's template for it writes past calls
/// bare, without `functools`, and prints object arguments as Python dicts, which no JSON
/// reader takes back; the detector's round trip over that template needs a Python-literal
/// reading of bare calls first.
pub const PHI4_MINI: JsonList = JsonList {
    name: "phi4_mini",
    marker: "functools",
};

impl Native for JsonList {
    fn name(&self) -> &'static str {
        self.name
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        let calls = tools
            .iter()
            .map(|tool| Ok(Expr::Json(call_schema(tool)?)))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let call = Expr::group(Expr::Alt(calls));
        Ok(grammar_of(Expr::Seq(vec![
            Expr::literal(format!("{}[", self.marker)),
            ws(),
            one_or_more(
                call,
                Expr::Seq(vec![ws(), Expr::literal(","), ws()]),
                parallel,
            ),
            ws(),
            Expr::literal("]"),
        ])))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[self.marker])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let region = Region {
            body: Pat::Json,
            decode: Arc::new(|captures| call_json::calls(captures.first()?, NAME_ARGUMENTS)),
        };
        vec![(self.marker.into(), Action::Call(region)), think()]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }
}
