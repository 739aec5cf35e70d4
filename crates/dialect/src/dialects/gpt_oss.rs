//! GPT-OSS: OpenAI's harmony format, where every part of an answer is a message on a
//! channel; and LLM-jp 4.1, which speaks it with a space after every special token.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants the weather.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
//! ```
//!
//! - `analysis` is reasoning (anywhere, not only first: the model reasons again between
//!   calls), up to its `<|end|>`;
//! - `final` is the answer, and `commentary` without a recipient a preamble to the user:
//!   both content, their channel headers layout, a constraint in them too
//!   (`<|channel|>final <|constrain|>json<|message|>`, as a response format has it);
//! - a message addressed `to=functions.<name>` is a call, whether the recipient comes after
//!   the channel (as models write it) or before it (as the template writes past calls:
//!   `<|start|>assistant to=functions.name<|channel|>commentary json<|message|>…`); one
//!   addressed to a built-in tool (`to=python`, `to=container.exec`) is not the client's
//!   to run, and is dropped, as llama.cpp drops it; one addressed `to=assistant` is the
//!   model talking to itself, layout;
//! - `<|start|>assistant`, `<|end|>`, `<|return|>` and `<|call|>` frame messages: layout.
//!
//! LLM-jp's tokenizer writes a space after each special token
//! (`<|channel|> final<|message|> Hello`): [`GptOss::gap`] puts it into every marker, and
//! its parallel calls are messages each closed by `<|end|>`, the last by `<|call|>`.
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

use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::cut::CUT_MARK;
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::grammar_parts::{free_text, grammar_of, one_or_more, per_tool, words};
use crate::toolkit::history::{history_with_object_arguments, history_with_string_arguments};
use crate::toolkit::native::Native;
use crate::toolkit::pattern::{is_name_char, Call, Pat, Region};

const MESSAGE: &str = "<|message|>";
const CHANNEL: &str = "<|channel|>";
const CONSTRAIN: &str = "<|constrain|>";
const CALL_END: &str = "<|call|>";
const END: &str = "<|end|>";
/// The longest message header read (a recipient, a channel and a constraint).
const MAX_HEADER: usize = 512;

/// A harmony speaker; see the module docs.
#[derive(Debug, Clone, Copy)]
pub enum GptOss {
    /// OpenAI's gpt-oss.
    OpenAi,
    /// LLM-jp 4.1 (`chat_format=llm-jp-harmony-v1`).
    LlmJp,
}

impl GptOss {
    /// What the model's tokenizer writes after a special token.
    fn gap(self) -> &'static str {
        match self {
            GptOss::OpenAi => "",
            GptOss::LlmJp => " ",
        }
    }

    /// `<|channel|>` and the channel's name, as this model writes them.
    fn channel(self, name: &str) -> String {
        format!("{CHANNEL}{}{name}", self.gap())
    }

    fn assistant(self) -> String {
        format!("<|start|>{}assistant", self.gap())
    }

    fn call_open(self) -> String {
        format!("{} to=functions.", self.channel("commentary"))
    }

    /// One call message of `tool` with `arguments` (its rule); OpenAI ends each call
    /// with `<|call|>`, LLM-jp all but the last with `<|end|>` ([`GptOss::parallel_calls`]).
    fn call(self, tool: &Tool, arguments: Expr) -> Expr {
        let open = format!(
            "{}{} {CONSTRAIN}{}json{MESSAGE}{}",
            self.call_open(),
            tool.name(),
            self.gap(),
            self.gap()
        );
        let mut call = vec![Expr::literal(open), arguments];
        if let GptOss::OpenAi = self {
            call.push(Expr::literal(CALL_END));
        }
        Expr::Seq(call)
    }

    /// One call, or with `parallel` several, each its own message.
    fn parallel_calls(self, call: Expr, parallel: bool) -> Expr {
        match self {
            GptOss::OpenAi => one_or_more(call, Expr::literal(self.assistant()), parallel),
            GptOss::LlmJp => {
                let separator = Expr::literal(format!("{END}{}", self.assistant()));
                Expr::Seq(vec![
                    one_or_more(call, separator, parallel),
                    Expr::literal(CALL_END),
                ])
            }
        }
    }

    /// A message's header after its channel (`final`, `commentary`): only a constraint
    /// may follow, then the message; the header is layout.
    fn header_region(self) -> Region {
        Region {
            body: Pat::Seq(vec![Pat::until(MESSAGE, MAX_HEADER), Pat::opt(self.gap())]),
            decode: Arc::new(|captures| match captures {
                [header] if is_header_tail(header) => Some(Vec::new()),
                _ => None,
            }),
        }
    }

    /// A message addressed to a recipient, from ` to=` on: the recipient and the rest of
    /// its header, then the message: JSON arguments for a function, anything for a
    /// built-in tool.
    fn recipient_region(self) -> Region {
        let message = Pat::Alt(vec![
            Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt(CALL_END)]),
            Pat::until(CALL_END, MAX_REGION),
            Pat::until(END, MAX_REGION),
            Pat::Rest,
        ]);
        Region {
            body: Pat::Seq(vec![
                Pat::until(MESSAGE, MAX_HEADER),
                Pat::opt(self.gap()),
                message,
            ]),
            decode: Arc::new(|captures| {
                let [header, message] = captures else {
                    return None;
                };
                addressed(header, message)
            }),
        }
    }
}

/// The calls of a message with this header (from its recipient on) and text: a
/// function's call, nothing for a built-in tool, `None` when it is no message.
fn addressed(header: &str, message: &str) -> Option<Vec<Call>> {
    let end = header.find([' ', '<']).unwrap_or(header.len());
    let (recipient, tail) = header.split_at(end);
    let valid = !recipient.is_empty() && recipient.chars().all(is_name_char);
    if !valid || !is_header_tail(tail.strip_prefix(CHANNEL).unwrap_or(tail)) {
        return None;
    }
    let Some(name) = recipient.strip_prefix("functions.") else {
        return Some(Vec::new());
    };
    let arguments: Value = serde_json::from_str(message).ok()?;
    Some(vec![Call::new(name, arguments_text(&arguments)?)])
}

/// Whether `text` is what may follow a recipient or a channel in a header: at most a
/// channel's name and a constraint (`commentary <|constrain|>json`, ` json`). A header
/// the output was cut in ([`CUT_MARK`]) may end in a constraint's tag half written.
fn is_header_tail(text: &str) -> bool {
    let (text, cut) = match text.split_once(CUT_MARK) {
        Some((before, _)) => (before, true),
        None => (text, false),
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    words.len() <= 3
        && words.iter().enumerate().all(|(n, word)| {
            let half_written = cut && n + 1 == words.len() && CONSTRAIN.starts_with(word);
            let word = word.strip_prefix(CONSTRAIN).unwrap_or(word);
            half_written || word.is_empty() || word.chars().all(is_name_char)
        })
}

impl Native for GptOss {
    fn name(&self) -> &'static str {
        match self {
            GptOss::OpenAi => "gpt_oss",
            GptOss::LlmJp => "llm_jp_harmony",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let gap = self.gap();
        let call = per_tool(tools, |tool, _, arguments| self.call(tool, arguments))?;
        let calls = self.parallel_calls(call, parallel);
        let root = if forced {
            Expr::Seq(vec![
                Expr::optional(Expr::group(Expr::Seq(vec![
                    Expr::literal(format!("{}{MESSAGE}{gap}", self.channel("analysis"))),
                    free_text(),
                    Expr::literal(format!("{END}{}", self.assistant())),
                ]))),
                calls,
            ])
        } else {
            calls
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[&self.call_open()])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let layout = |text: String| (text, Action::Layout);
        let recipient = |text: String| (text, Action::Call(self.recipient_region()));
        let header = |text: String| (text, Action::Call(self.header_region()));
        let analysis = format!("{}{MESSAGE}", self.channel("analysis"));
        let mut markers = vec![
            recipient(format!("{} to=", self.channel("commentary"))),
            recipient(format!("{} to=", self.channel("analysis"))),
            recipient(" to=".into()),
            header(self.channel("final")),
            header(self.channel("commentary")),
            layout(format!("{} to=assistant", self.channel("commentary"))),
            layout(self.assistant()),
            layout(END.into()),
            layout("<|return|>".into()),
            layout(CALL_END.into()),
        ];
        let reasoning = Action::Reasoning {
            close: END.into(),
            at_start_only: false,
        };
        if !self.gap().is_empty() {
            // The gap after the header is the tokenizer's, not the reasoning's.
            markers.push((format!("{analysis}{}", self.gap()), reasoning.clone()));
        }
        markers.push((analysis, reasoning));
        markers
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
