//! GPT-OSS: OpenAI's harmony format, where every part of an answer is a message on a
//! channel.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants the weather.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
//! ```
//!
//! - `analysis` is reasoning (anywhere, not only first: the model reasons again between
//!   calls), up to its `<|end|>`;
//! - `final` is the answer, and `commentary` without a recipient a preamble to the user:
//!   both content, their channel headers layout;
//! - a message addressed `to=functions.<name>` is a call, whether the recipient comes after
//!   the channel (as models write it) or before it (as the template writes past calls:
//!   `<|start|>assistant to=functions.name<|channel|>commentary json<|message|>…`);
//! - `<|start|>assistant`, `<|end|>`, `<|return|>` and `<|call|>` frame messages: layout.
//!
//! The template shows only the first call of a turn (harmony has one call per message),
//! and takes past reasoning as `thinking`: the request's `reasoning_content` is given so
//! (and a calling turn's missing content as `""`, which the template searches).
//! The grammar has the model write calls as models do, one message each, several only
//! when parallel calls are allowed; forced, an analysis message may come first.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::DialectError;
use crate::dialects::framed_native::{
    free_text, grammar_of, history_with_object_arguments, history_with_string_arguments,
    one_or_more, per_tool, words, Native,
};
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::{Action, Call, Pat, Region};

const CALL_OPEN: &str = "<|channel|>commentary to=functions.";
const RECIPIENT_FIRST: &str = " to=functions.";
const MESSAGE: &str = "<|message|>";
const CALL_END: &str = "<|call|>";
const START: &str = "<|start|>assistant";

/// The GPT-OSS dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct GptOss;

impl Native for GptOss {
    fn name(&self) -> &'static str {
        "gpt_oss"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![
                Expr::literal(format!(
                    "{CALL_OPEN}{} <|constrain|>json{MESSAGE}",
                    tool.name()
                )),
                arguments,
                Expr::literal(CALL_END),
            ])
        })?;
        let calls = one_or_more(call, Expr::literal(START), parallel);
        let root = if forced {
            Expr::Seq(vec![
                Expr::optional(Expr::group(Expr::Seq(vec![
                    Expr::literal(format!("<|channel|>analysis{MESSAGE}")),
                    free_text(),
                    Expr::literal(format!("<|end|>{START}")),
                ]))),
                calls,
            ])
        } else {
            calls
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALL_OPEN])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![
            Pat::until(MESSAGE, 512),
            Pat::Json,
            Pat::Ws,
            Pat::opt(CALL_END),
        ]);
        let region = Region {
            body,
            decode: Arc::new(|captures| {
                let [header, arguments] = captures else {
                    return None;
                };
                let name = header
                    .split([' ', '<'])
                    .next()
                    .filter(|name| !name.is_empty())?;
                let arguments: Value = serde_json::from_str(arguments).ok()?;
                Some(vec![Call::new(name, arguments_text(&arguments)?)])
            }),
        };
        let layout = |text: &str| (text.to_string(), Action::Layout);
        vec![
            (CALL_OPEN.into(), Action::Call(region.clone())),
            (RECIPIENT_FIRST.into(), Action::Call(region)),
            (
                format!("<|channel|>analysis{MESSAGE}"),
                Action::Reasoning {
                    close: "<|end|>".into(),
                    at_start_only: false,
                },
            ),
            layout(&format!("<|channel|>final{MESSAGE}")),
            layout(&format!("<|channel|>commentary{MESSAGE}")),
            layout(START),
            layout("<|end|>"),
            layout("<|return|>"),
            layout(CALL_END),
        ]
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let mut histories = vec![
            history_with_object_arguments(request)?,
            history_with_string_arguments(request)?,
        ];
        for messages in &mut histories {
            for message in messages {
                let Value::Object(members) = message else {
                    continue;
                };
                if let Some(reasoning) = members.remove("reasoning_content") {
                    members.entry("thinking").or_insert(reasoning);
                }
                if members.get("content") == Some(&Value::Null) {
                    members.insert("content".into(), Value::from(""));
                }
            }
        }
        Ok(histories)
    }
}
