//! The non-streaming answer: every event folded into one assistant message by the
//! dialect crate's [`Assembler`], the same events a stream would have sent as deltas.
//! The other APIs' whole answers read the steps the same way ([`fold`]), each with its own
//! fold of the events.

use tokio::sync::mpsc;
use toolbridge_chat::{ChatResponse, Choice};
use toolbridge_dialect::assemble::Assembler;
use toolbridge_dialect::events::Event;
use toolbridge_engine::Completion;

use crate::answer::{finish_reason, usage, AnswerMeta};
use crate::error::Failure;
use crate::generate::Step;

/// Waits for the whole generation and answers it as one `chat.completion`.
pub async fn respond(
    meta: AnswerMeta,
    steps: mpsc::Receiver<Step>,
) -> Result<ChatResponse, Failure> {
    let mut assembler = Assembler::default();
    let completion = fold(steps, |event| {
        assembler.push(event).map_err(Failure::parser_bug)
    })
    .await?;
    let message = assembler.finish_response();
    let has_calls = message.tool_calls.is_some();
    let choice = Choice::new(0, message, finish_reason(&completion, has_calls));
    let mut response = ChatResponse::new(meta.id, meta.created, meta.model, vec![choice]);
    response.usage = Some(usage(&completion));
    Ok(response)
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
