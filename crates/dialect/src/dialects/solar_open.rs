//! Upstage Solar Open: an assistant turn is a reasoning message, then a content or a calls
//! message, each framed by special tokens; a call carries the model's own id, its name and
//! JSON arguments:
//!
//! ```text
//! <|think|>The weather.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>call_0<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"}<|tool_call:end|><|calls|>
//! ```
//!
//! The framing tokens (`<|begin|>assistant`, `<|content|>`, `<|end|>`, `<|calls|>`) are
//! layout; the id is kept as the call's id.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{grammar_of, one_or_more, per_tool, reasoning_then, words, ws};
use crate::toolkit::native::{reasoning_tags, Native};
use crate::toolkit::pattern::{Call, Pat, Region};

const CALLS: &str = "<|tool_calls|>";
const CALL_BEGIN: &str = "<|tool_call:begin|>";
const NAME: &str = "<|tool_call:name|>";
const ARGS: &str = "<|tool_call:args|>";
const CALL_END: &str = "<|tool_call:end|>";
const CALLS_END: &str = "<|calls|>";
const ASSISTANT: &str = "<|begin|>assistant";
const THINK: &str = "<|think|>";
const END: &str = "<|end|>";

/// The Solar Open dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct SolarOpen;

impl Native for SolarOpen {
    fn name(&self) -> &'static str {
        "solar_open"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let id = Expr::repeat(
            Expr::Class(CharClass::new(
                false,
                vec![
                    ClassItem::Range('a', 'z'),
                    ClassItem::Range('A', 'Z'),
                    ClassItem::Range('0', '9'),
                    ClassItem::Char('_'),
                    ClassItem::Char('-'),
                ],
            )),
            1,
            Some(40),
        );
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![
                Expr::literal(CALL_BEGIN),
                id.clone(),
                Expr::literal(format!("{NAME}{}{ARGS}", tool.name())),
                arguments,
                Expr::literal(CALL_END),
            ])
        })?;
        let calls = Expr::Seq(vec![
            Expr::literal(CALLS),
            one_or_more(call, ws(), parallel),
            Expr::literal(CALLS_END),
        ]);
        let root = if forced {
            let message = Expr::Seq(vec![Expr::optional(Expr::literal(ASSISTANT)), calls]);
            reasoning_then(THINK, END, message)
        } else {
            calls
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALLS])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let call = || {
            Pat::Seq(vec![
                Pat::until(NAME, 256),
                Pat::until(ARGS, 256),
                Pat::Json,
                Pat::Ws,
                Pat::lit(CALL_END),
            ])
        };
        let message = Pat::Seq(vec![
            Pat::repeat(Pat::Seq(vec![Pat::Ws, Pat::lit(CALL_BEGIN), call()])),
            Pat::Ws,
            Pat::opt(CALLS_END),
        ]);
        let one = Pat::Seq(vec![call(), Pat::Ws, Pat::opt(CALLS_END)]);
        let mut markers = vec![
            (CALLS.into(), Action::Call(region(message))),
            (CALL_BEGIN.into(), Action::Call(region(one))),
            reasoning_tags(THINK, END),
        ];
        for layout in [ASSISTANT, "<|content|>", END, CALLS_END] {
            markers.push((layout.into(), Action::Layout));
        }
        markers
    }
}

/// A region whose captures are (id, name, arguments) triples, at least one.
fn region(body: Pat) -> Region {
    Region {
        body,
        decode: Arc::new(|captures| {
            if captures.is_empty() || captures.len() % 3 != 0 {
                return None;
            }
            captures
                .chunks(3)
                .map(|call| {
                    let name = call[1].trim();
                    if name.is_empty() || name.contains(char::is_whitespace) {
                        return None;
                    }
                    let arguments: Value = serde_json::from_str(&call[2]).ok()?;
                    let id = call[0].trim();
                    Some(Call {
                        id: (!id.is_empty()).then(|| id.to_string()),
                        ..Call::new(name, arguments_text(&arguments)?)
                    })
                })
                .collect()
        }),
    }
}
