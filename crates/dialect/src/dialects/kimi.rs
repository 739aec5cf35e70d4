//! Kimi K2 (Instruct and Thinking): calls in a section of special tokens, each named by
//! an id `functions.<name>:<n>`:
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The tool's name is the id without its `functions.` prefix and `:<n>` counter. The id is
//! kept as the call's id, as llama.cpp and vLLM keep it: the template writes a past call
//! back with its id, so the model sees its own `functions.<name>:<n>` again, not an id
//! made up for OpenAI. Kimi K2 Thinking reasons in `<think>…</think>` first.
//!
//! The markers are special tokens, never text, so none of them is content: a section
//! opened and closed with no call in it, a section or call marker with no call after it,
//! and a closing or argument marker standing alone are dropped (the text around them
//! stays). A model that opens a section and then thinks better of it, or that writes a
//! section's end twice, leaves only its words.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{
    forced_after_reasoning, grammar_of, one_or_more, per_tool, words, ws,
};
use crate::toolkit::native::{after_think, think, Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};

pub const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
pub const SECTION_END: &str = "<|tool_calls_section_end|>";
pub const CALL_BEGIN: &str = "<|tool_call_begin|>";
pub const ARGUMENT_BEGIN: &str = "<|tool_call_argument_begin|>";
pub const CALL_END: &str = "<|tool_call_end|>";

/// The Kimi K2 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct KimiK2;

impl Native for KimiK2 {
    fn name(&self) -> &'static str {
        "kimi_k2"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![
                Expr::literal(format!("{CALL_BEGIN}functions.{}:", tool.name())),
                Expr::repeat(Expr::range('0', '9'), 1, Some(3)),
                Expr::literal(ARGUMENT_BEGIN),
                arguments,
                Expr::literal(CALL_END),
            ])
        })?;
        let calls = Expr::Seq(vec![
            Expr::literal(SECTION_BEGIN),
            one_or_more(call, ws(), parallel),
            Expr::literal(SECTION_END),
        ]);
        Ok(grammar_of(forced_after_reasoning(
            forced,
            ("<think>", "</think>"),
            calls,
        )))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[SECTION_BEGIN])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let call = || {
            Pat::Seq(vec![
                Pat::until(ARGUMENT_BEGIN, 256),
                Pat::Json,
                Pat::Ws,
                // A call whose arguments are whole stands without its end token (an output
                // cut at a stop, or the next call begun at once).
                Pat::opt(CALL_END),
            ])
        };
        let section = Pat::Seq(vec![
            Pat::Ws,
            Pat::repeat(Pat::Seq(vec![Pat::lit(CALL_BEGIN), call(), Pat::Ws])),
            Pat::opt(SECTION_END),
        ]);
        // A call marker with no call after it reads as nothing (layout).
        let one = Pat::Alt(vec![
            Pat::Seq(vec![call(), Pat::Ws, Pat::opt(SECTION_END)]),
            Pat::Ws,
        ]);
        vec![
            (SECTION_BEGIN.into(), Action::Call(region(section))),
            (CALL_BEGIN.into(), Action::Call(region(one))),
            (SECTION_END.into(), Action::Layout),
            (ARGUMENT_BEGIN.into(), Action::Layout),
            (CALL_END.into(), Action::Layout),
            think(),
        ]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }

    /// Kimi K2 Thinking opens its call section before it closes its reasoning.
    fn calls_end_reasoning(&self) -> bool {
        true
    }
}

/// `functions.get_weather:0` → `get_weather`.
fn name_of(id: &str) -> Option<&str> {
    let id = id.trim();
    let id = id.strip_prefix("functions.").unwrap_or(id);
    let name = match id.rsplit_once(':') {
        Some((name, counter)) if counter.chars().all(|c| c.is_ascii_digit()) => name,
        _ => id,
    };
    (!name.is_empty()).then_some(name)
}

fn region(body: Pat) -> Region {
    Region {
        body,
        // No call in the region (a section with nothing in it) is layout.
        decode: Arc::new(|captures| {
            if captures.len() % 2 != 0 {
                return None;
            }
            captures
                .chunks(2)
                .map(|pair| {
                    let arguments: Value = serde_json::from_str(&pair[1]).ok()?;
                    Some(Call {
                        id: Some(pair[0].trim().to_string()),
                        ..Call::new(name_of(&pair[0])?, arguments_text(&arguments)?)
                    })
                })
                .collect()
        }),
    }
}
