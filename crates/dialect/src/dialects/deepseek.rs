//! DeepSeek R1 (and its distills), V3 and V3.1: calls between DeepSeek's full-width special
//! tokens, reasoning in `<think>`.
//!
//! V3 and R1 write each call as a function type, the name and fenced JSON:
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"city": "Paris"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! V3.1 writes the name first and bare JSON:
//! `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
//!
//! One parser reads both shapes (models of one family slip between them), with or without
//! the outer `calls` tokens; `<think>…</think>` at the start is reasoning, and a prompt that
//! ends by opening `<think>` (R1's generation prompt) starts the parser inside it. The
//! grammars differ: each admits its own model's shape. R1's distill template prints past
//! arguments with `tojson` (so they are given as objects); V3.1's concatenates them (so
//! they stay the JSON strings OpenAI sends).

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{
    forced_after_reasoning, grammar_of, one_or_more, per_tool, words,
};
use crate::toolkit::history::{history_with_object_arguments, history_with_string_arguments};
use crate::toolkit::native::{after_think, think, Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};

pub const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub const CALLS_END: &str = "<｜tool▁calls▁end｜>";
pub const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub const CALL_END: &str = "<｜tool▁call▁end｜>";
pub const SEP: &str = "<｜tool▁sep｜>";

const MAX_NAME: usize = 256;

/// Which DeepSeek.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepSeek {
    /// R1 and its distills: V3's calls, reasoning first.
    R1,
    /// V3 / V2.5.
    V3,
    /// V3.1: the name first, bare JSON.
    V3_1,
}

impl Native for DeepSeek {
    fn name(&self) -> &'static str {
        match self {
            DeepSeek::R1 => "deepseek_r1",
            DeepSeek::V3 => "deepseek_v3",
            DeepSeek::V3_1 => "deepseek_v3_1",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |_, name, arguments| match self {
            DeepSeek::V3_1 => Expr::Seq(vec![
                Expr::literal(format!("{CALL_BEGIN}{name}{SEP}")),
                arguments,
                Expr::literal(CALL_END),
            ]),
            DeepSeek::R1 | DeepSeek::V3 => Expr::Seq(vec![
                Expr::literal(format!("{CALL_BEGIN}function{SEP}{name}\n```json\n")),
                arguments,
                Expr::literal(format!("\n```{CALL_END}")),
            ]),
        })?;
        let calls = Expr::Seq(vec![
            Expr::literal(CALLS_BEGIN),
            one_or_more(call, Expr::optional(Expr::literal("\n")), parallel),
            Expr::literal(CALLS_END),
        ]);
        let forced_r1 = forced && *self == DeepSeek::R1;
        Ok(grammar_of(forced_after_reasoning(
            forced_r1,
            ("<think>", "</think>"),
            calls,
        )))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALLS_BEGIN])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let call = || {
            Pat::Alt(vec![
                Pat::Seq(vec![
                    Pat::lit("function"),
                    Pat::lit(SEP),
                    Pat::until("\n", MAX_NAME),
                    Pat::Ws,
                    Pat::opt("```json"),
                    Pat::opt("```"),
                    Pat::Json,
                    Pat::Ws,
                    Pat::opt("```"),
                    Pat::Ws,
                    Pat::lit(CALL_END),
                ]),
                Pat::Seq(vec![
                    Pat::until(SEP, MAX_NAME),
                    Pat::Json,
                    Pat::Ws,
                    Pat::lit(CALL_END),
                ]),
            ])
        };
        let all = Pat::Seq(vec![
            Pat::Ws,
            Pat::repeat(Pat::Seq(vec![Pat::lit(CALL_BEGIN), call(), Pat::Ws])),
            Pat::opt(CALLS_END),
        ]);
        let one = Pat::Seq(vec![call(), Pat::Ws, Pat::opt(CALLS_END)]);
        vec![
            (CALLS_BEGIN.into(), Action::Call(region(all))),
            (CALL_BEGIN.into(), Action::Call(region(one))),
            think(),
        ]
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(match self {
            DeepSeek::V3_1 => "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            DeepSeek::R1 | DeepSeek::V3 => "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGUMENTS\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        })
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }

    /// V3.1's template concatenates past arguments: strings first there.
    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let objects = history_with_object_arguments(request)?;
        let strings = history_with_string_arguments(request)?;
        Ok(match self {
            DeepSeek::V3_1 => vec![strings, objects],
            DeepSeek::R1 | DeepSeek::V3 => vec![objects, strings],
        })
    }
}

/// A region whose captures are (name, arguments) pairs, at least one.
fn region(body: Pat) -> Region {
    Region {
        body,
        decode: Arc::new(|captures| {
            if captures.is_empty() || captures.len() % 2 != 0 {
                return None;
            }
            captures
                .chunks(2)
                .map(|pair| {
                    let name = pair[0].trim();
                    if name.is_empty() {
                        return None;
                    }
                    let arguments: Value = serde_json::from_str(&pair[1]).ok()?;
                    Some(Call::new(name, arguments_text(&arguments)?))
                })
                .collect()
        }),
    }
}
