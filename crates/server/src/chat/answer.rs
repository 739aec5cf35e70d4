//! The non-streaming answer: every event folded into one assistant message by the
//! dialect crate's [`ChatAnswer`], the fold a stream writes its deltas from, read from
//! the steps as every API's whole answer reads them ([`fold`]).

use tokio::sync::mpsc;
use toolbridge_chat::{ChatResponse, Choice};
use toolbridge_dialect::ChatAnswer;

use crate::answer::{finish_reason, fold, usage, AnswerMeta};
use crate::error::Failure;
use crate::generate::Step;

/// Waits for the whole generation and answers it as one `chat.completion`.
pub(super) async fn respond(
    meta: AnswerMeta,
    steps: mpsc::Receiver<Step>,
) -> Result<ChatResponse, Failure> {
    let mut answer = ChatAnswer::default();
    let completion = fold(steps, |event| {
        answer.push(event).map(drop).map_err(Failure::parser_bug)
    })
    .await?;
    let message = answer.message();
    let has_calls = message.tool_calls.is_some();
    let choice = Choice::new(0, message, finish_reason(&completion, has_calls));
    let mut response = ChatResponse::new(meta.id, meta.created, meta.model, vec![choice]);
    response.usage = Some(usage(&completion));
    Ok(response)
}
