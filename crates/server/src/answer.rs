//! What the streamed and the non-streamed answer share: the completion's id, creation
//! time and model, its finish reason and its usage, each decided in one place so the two
//! answers cannot disagree on them; and how every API's whole answer reads the
//! generation's steps ([`fold`]).

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use toolbridge_chat::{FinishReason, PromptTokensDetails, Usage};
use toolbridge_dialect::{Event, RandomIds, ToolIds};
use toolbridge_engine::{Completion, FinishReason as EngineFinish};

use crate::error::Failure;
use crate::generate::Step;

/// The fields every chunk, or the one response, of an answer repeats.
#[derive(Debug, Clone)]
pub struct AnswerMeta {
    /// `chatcmpl-` and 24 random alphanumerics, as OpenAI writes them.
    pub id: String,
    /// Unix time in seconds.
    pub created: u64,
    pub model: String,
}

impl AnswerMeta {
    /// A new answer from `model`, created now.
    pub fn new(model: &str) -> Self {
        AnswerMeta {
            id: random_id("chatcmpl-"),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_secs()),
            model: model.to_owned(),
        }
    }
}

/// `prefix` and 24 random alphanumerics, the shape of OpenAI's (`chatcmpl-`, `resp_`,
/// `fc_`) and Anthropic's (`msg_`) ids.
pub fn random_id(prefix: &str) -> String {
    let call_id = RandomIds::default().next_id();
    let random = call_id.strip_prefix("call_").unwrap_or(&call_id);
    format!("{prefix}{random}")
}

/// OpenAI's finish reason: `length` when the limit cut the answer (a call in it may be
/// cut short too), else `tool_calls` when the model called tools, else `stop`.
pub fn finish_reason(completion: &Completion, has_calls: bool) -> FinishReason {
    match completion.finish_reason {
        EngineFinish::Length => FinishReason::Length,
        EngineFinish::Stop | EngineFinish::Cancelled if has_calls => FinishReason::ToolCalls,
        EngineFinish::Stop | EngineFinish::Cancelled => FinishReason::Stop,
    }
}

/// The engine's token counts as OpenAI's `usage`, cached prompt tokens included.
pub fn usage(completion: &Completion) -> Usage {
    let counts = completion.usage;
    Usage {
        prompt_tokens_details: Some(PromptTokensDetails {
            cached_tokens: Some(counts.cached_tokens),
            ..PromptTokensDetails::default()
        }),
        ..Usage::new(counts.prompt_tokens, counts.completion_tokens)
    }
}

/// Waits for the whole generation, giving each event to `push`; how it finished.
pub async fn fold(
    mut steps: mpsc::Receiver<Step>,
    mut push: impl FnMut(Event) -> Result<(), Failure>,
) -> Result<Completion, Failure> {
    while let Some(step) = steps.recv().await {
        match step {
            Step::Started => {}
            Step::Events(events) => events.into_iter().try_for_each(&mut push)?,
            Step::Finished(outcome) => return outcome,
        }
    }
    Err(Failure::engine_vanished())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbridge_engine::{Timings, Usage as EngineUsage};

    fn completion(finish_reason: EngineFinish) -> Completion {
        Completion {
            finish_reason,
            usage: EngineUsage {
                prompt_tokens: 5,
                completion_tokens: 3,
                cached_tokens: 2,
            },
            timings: Timings::default(),
        }
    }

    #[test]
    fn length_wins_then_calls_then_stop() {
        let length = completion(EngineFinish::Length);
        assert_eq!(finish_reason(&length, true), FinishReason::Length);
        let stop = completion(EngineFinish::Stop);
        assert_eq!(finish_reason(&stop, true), FinishReason::ToolCalls);
        assert_eq!(finish_reason(&stop, false), FinishReason::Stop);
    }

    #[test]
    fn usage_totals_and_reports_the_cache() {
        let usage = usage(&completion(EngineFinish::Stop));
        assert_eq!(usage.total_tokens, 8);
        assert_eq!(
            usage.prompt_tokens_details.and_then(|d| d.cached_tokens),
            Some(2)
        );
    }

    #[test]
    fn ids_look_like_openais() {
        let meta = AnswerMeta::new("m");
        assert!(meta.id.starts_with("chatcmpl-"));
        assert_eq!(meta.id.len(), "chatcmpl-".len() + 24);
        assert_ne!(meta.id, AnswerMeta::new("m").id);
    }
}
