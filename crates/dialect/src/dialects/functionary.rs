//! Functionary v3.1 (MeetKai, on Llama 3.1): calls as `<function=name>{…}</function>`,
//! code for the built-in python tool after `<|python_tag|>`; and Functionary v3.2, whose
//! messages are routed by `>>>recipient\n` headers (see [`FunctionaryV32`]).
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

use toolbridge_chat::ChatRequest;
use toolbridge_grammar::{CharClass, ClassItem};

use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{grammar_of, one_or_more, per_tool, words};
use crate::toolkit::history::{history_with_object_arguments, history_with_string_arguments};
use crate::toolkit::native::{Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};

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
                named_call(name, arguments)
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

const ROUTE: &str = ">>>";

/// Functionary v3.2: every message opens with `>>>recipient\n`: `all` for text to the user,
/// a tool's name for a call whose JSON arguments follow.
///
/// ```text
/// all
/// Let me check.>>>get_weather
/// {"city": "Paris"}
/// ```
///
/// The generation prompt already ends with the first `>>>`, so the parser starts just after
/// it. The template concatenates past arguments (the JSON strings OpenAI sends are given
/// first). The grammar is lazy on `>>>`; forced, the output may start with a (short) `all`
/// message before the first call, or with the call itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionaryV32;

impl Native for FunctionaryV32 {
    fn name(&self) -> &'static str {
        "functionary_v3"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![Expr::literal(format!("{}\n", tool.name())), arguments])
        })?;
        let routed = Expr::Seq(vec![Expr::literal(ROUTE), call.clone()]);
        let more = if parallel {
            Expr::repeat(Expr::group(routed.clone()), 0, None)
        } else {
            Expr::Empty
        };
        let root = if forced {
            Expr::Alt(vec![
                Expr::Seq(vec![call, more.clone()]),
                Expr::Seq(vec![
                    Expr::literal("all\n"),
                    text_without_route(),
                    routed,
                    more,
                ]),
            ])
        } else {
            Expr::Seq(vec![routed, more])
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[ROUTE])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let region = Region {
            body: Pat::Alt(vec![
                Pat::lit("all\n"),
                Pat::Seq(vec![Pat::until("\n", 256), Pat::Json]),
            ]),
            decode: Arc::new(|captures| {
                let [name, arguments] = captures else {
                    // `all`: text follows, the header is layout.
                    return captures.is_empty().then(Vec::new);
                };
                named_call(name, arguments)
            }),
        };
        vec![(ROUTE.into(), Action::Call(region))]
    }

    fn start(&self, _prompt: Option<&str>) -> Start {
        Start::AfterMarker(ROUTE)
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        Ok(vec![
            history_with_string_arguments(request)?,
            history_with_object_arguments(request)?,
        ])
    }
}

/// The call of `name` (trimmed, without blanks) with the JSON `arguments` text.
fn named_call(name: &str, arguments: &str) -> Option<Vec<Call>> {
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let arguments: Value = serde_json::from_str(arguments).ok()?;
    Some(vec![Call::new(name, arguments_text(&arguments)?)])
}

/// Text without `>>>`: characters other than `>`, or one or two `>` before another.
fn text_without_route() -> Expr {
    let other = || Expr::Class(CharClass::new(true, vec![ClassItem::Char('>')]));
    Expr::Seq(vec![Expr::repeat(
        Expr::group(Expr::Alt(vec![
            other(),
            Expr::Seq(vec![Expr::literal(">"), other()]),
            Expr::Seq(vec![Expr::literal(">>"), other()]),
        ])),
        0,
        Some(256),
    )])
}
