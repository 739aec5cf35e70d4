//! The non-streaming answer: every event folded into one assistant message by the
//! dialect crate's [`Assembler`], the same events a stream would have sent as deltas.

use tokio::sync::mpsc;
use toolbridge_chat::{ChatResponse, Choice};
use toolbridge_dialect::assemble::Assembler;

use crate::answer::{finish_reason, usage, AnswerMeta};
use crate::error::Failure;
use crate::generate::Step;

/// Waits for the whole generation and answers it as one `chat.completion`.
pub async fn respond(
    meta: AnswerMeta,
    mut steps: mpsc::Receiver<Step>,
) -> Result<ChatResponse, Failure> {
    let mut assembler = Assembler::default();
    while let Some(step) = steps.recv().await {
        match step {
            Step::Started => {}
            Step::Events(events) => {
                for event in events {
                    assembler.push(event).map_err(Failure::parser_bug)?;
                }
            }
            Step::Finished(outcome) => {
                let completion = outcome?;
                let message = assembler.finish_response();
                let has_calls = message.tool_calls.is_some();
                let choice = Choice::new(0, message, finish_reason(&completion, has_calls));
                let mut response =
                    ChatResponse::new(meta.id, meta.created, meta.model, vec![choice]);
                response.usage = Some(usage(&completion));
                return Ok(response);
            }
        }
    }
    Err(Failure::engine_vanished())
}
