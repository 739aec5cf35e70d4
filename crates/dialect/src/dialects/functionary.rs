//! Functionary v3.1 (MeetKai, on Llama 3.1): calls as `<function=name>{…}</function>`,
//! code for the built-in python tool after `<|python_tag|>`.
//!
//! ```text
//! <function=get_weather>{"city": "Paris"}</function>
//! ```
//!
//! The template lists the tools and writes past calls so (arguments with `tojson`); results
//! come back in the `ipython` role, which the template writes itself. The grammar admits
//! the declared tools' calls one after another (one unless parallel calls are allowed),
//! lazily from `<function=`. After `<|python_tag|>` the rest of the output is one call of
//! `python`: its arguments when they are a JSON object, else `{"code": <the text>}`.

use std::sync::Arc;

use serde_json::{json, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::DialectError;
use crate::dialects::framed_native::{grammar_of, one_or_more, per_tool, words, Native};
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::{Action, Call, Pat, Region};

const OPEN: &str = "<function=";
const CLOSE: &str = "</function>";
const PYTHON_TAG: &str = "<|python_tag|>";

/// The Functionary v3.1 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionaryV31;

impl Native for FunctionaryV31 {
    fn name(&self) -> &'static str {
        "functionary_v3_1"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![
                Expr::literal(format!("{OPEN}{}>", tool.name())),
                arguments,
                Expr::literal(CLOSE),
            ])
        })?;
        Ok(grammar_of(one_or_more(call, Expr::Empty, parallel)))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[OPEN])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let function = Region {
            body: Pat::Seq(vec![
                Pat::until(">", 256),
                Pat::Json,
                Pat::Ws,
                Pat::opt(CLOSE),
            ]),
            decode: Arc::new(|captures| {
                let [name, arguments] = captures else {
                    return None;
                };
                let name = name.trim();
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return None;
                }
                let arguments: Value = serde_json::from_str(arguments).ok()?;
                Some(vec![Call::new(name, arguments_text(&arguments)?)])
            }),
        };
        let python = Region {
            body: Pat::Rest,
            decode: Arc::new(|captures| {
                let code = captures.first()?;
                if code.trim().is_empty() {
                    return None;
                }
                let arguments = match serde_json::from_str::<Value>(code.trim()) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => json!({ "code": code }),
                };
                Some(vec![Call::new("python", arguments_text(&arguments)?)])
            }),
        };
        vec![
            (OPEN.into(), Action::Call(function)),
            (PYTHON_TAG.into(), Action::Call(python)),
        ]
    }
}
