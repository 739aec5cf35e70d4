//! FireFunction v2 (Llama 3 based, seed 001): calls as one JSON list after `functools`,
//! `functools[{"name": "f", "arguments": {…}}, …]`, with no closing marker.
//!
//! Its template does not read `tools`: it shows `functions`, the tools as JSON text (printed
//! with two-space indents, as llama.cpp passes them), and `datetime`, now by the dialect's
//! [`Clock`] as `Jul 26 2024 10:30:00 GMT` (llama.cpp's format, local time as llama.cpp
//! prints it), in a system prompt of its own; both are passed here, with the history's past
//! calls' arguments as objects (the template writes `arguments|tojson`). Seed 001's Ollama
//! template shows the same prompt.
//!
//! Grammar (llama.cpp's): `functools[` then one call object per tool alternative, more after
//! `, ` with `parallel_tool_calls`, then `]`; lazy on `functools[` for `auto`, from the first
//! byte for `required` and a named function. The parser is [`FramedParser`]'s: `functools[`
//! opens a region of call objects separated by commas up to `]`, read when it is complete;
//! text around it is content, and a list that is not calls is content as written.
//!
//! [`FramedParser`]: crate::toolkit::framed::FramedParser

use std::sync::Arc;

use serde_json::{Map, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};
use toolbridge_template::Clock;

use crate::dialect::ChatTemplate;
use crate::error::{json_error, DialectError};
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{name_first_call, one_or_more, words};
use crate::toolkit::native::{render_with, Native, NativeDialect};
use crate::toolkit::pattern::{Call, Pat, Region};

/// What opens the list of calls.
pub const FUNCTOOLS: &str = "functools[";

/// How the template's `datetime` is printed.
const DATETIME: &str = "%b %d %Y %H:%M:%S GMT";

/// The FireFunction v2 family, dated by its clock; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct FireFunction {
    pub clock: Clock,
}

/// The FireFunction v2 dialect dated by `clock`.
pub fn dialect(clock: Clock) -> NativeDialect<FireFunction> {
    NativeDialect(FireFunction { clock })
}

impl Native for FireFunction {
    fn name(&self) -> &'static str {
        "firefunction_v2"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("call", name_first_call(tools, "arguments")?);
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal(FUNCTOOLS),
                one_or_more(Expr::reference("call"), Expr::literal(", "), parallel),
                Expr::literal("]"),
            ]),
        );
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[FUNCTOOLS])
    }

    /// `functools[` opens the rest of the list: call objects, commas between, then `]`.
    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![
            Pat::Json,
            Pat::repeat(Pat::Seq(vec![Pat::Ws, Pat::lit(","), Pat::Json])),
            Pat::Ws,
            Pat::lit("]"),
        ]);
        let region = Region {
            body,
            decode: Arc::new(decode),
        };
        vec![(FUNCTOOLS.into(), Action::Call(region))]
    }

    /// The template with `functions` and `datetime` instead of `tools`.
    fn render(
        &self,
        template: &ChatTemplate,
        messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        let mut extra = Map::new();
        extra.insert("functions".into(), functions(tools)?.into());
        let now = self
            .clock
            .strftime_now(DATETIME)
            .expect("DATETIME is a valid strftime format");
        extra.insert("datetime".into(), now.into());
        render_with(template, &messages, &[], extra)
    }
}

/// Each captured object as a call; any that is not makes the list no call.
fn decode(captures: &[String]) -> Option<Vec<Call>> {
    captures
        .iter()
        .map(|capture| call_json::call(&serde_json::from_str(capture).ok()?, NAME_ARGUMENTS))
        .collect()
}

/// The tools as the template's `functions`: JSON with two-space indents, `""` for none.
fn functions(tools: &[Tool]) -> Result<String, DialectError> {
    if tools.is_empty() {
        return Ok(String::new());
    }
    serde_json::to_string_pretty(tools).map_err(json_error("the tools"))
}
