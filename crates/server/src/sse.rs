//! Server-sent events, written one way for every API: a generation's steps go through an
//! API's [`SseWriter`] ([`stream_with`]), which decides the events; this module decides
//! when they are sent.
//!
//! Headers are not sent until the first step arrives, so a request the engine refuses
//! outright (a prompt longer than the context) still gets a proper status and error body.
//! A failure once the stream is under way is written by the writer ([`SseWriter::fail`])
//! and the stream ends there.

use std::convert::Infallible;

use axum::response::sse::{Event as SseEvent, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use tokio::sync::mpsc;
use toolbridge_dialect::Event;
use toolbridge_engine::Completion;

use crate::error::Failure;
use crate::generate::Step;

/// How one API writes a generation's steps as server-sent events.
pub trait SseWriter: Send + 'static {
    /// The events that open the answer once the model's first token is out (nothing if
    /// they were written already).
    fn open(&mut self) -> Vec<SseEvent>;
    /// The events for what the parser decided.
    fn write(&mut self, events: Vec<Event>) -> Result<Vec<SseEvent>, Failure>;
    /// The last events of an answer that finished.
    fn finish(self, completion: &Completion) -> Vec<SseEvent>;
    /// The event that tells the client the answer failed under way.
    fn fail(self, failure: &Failure) -> Vec<SseEvent>;
}

/// The SSE response for a generation written by `writer`, or the failure that came before
/// its first piece.
pub async fn stream_with<W: SseWriter>(
    writer: W,
    mut steps: mpsc::Receiver<Step>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, Failure> {
    let first = match steps.recv().await {
        None => return Err(Failure::engine_vanished()),
        Some(Step::Finished(Err(error))) => return Err(error),
        Some(step) => step,
    };
    let state = StreamState {
        steps,
        pending: Some(first),
        writer: Some(writer),
    };
    let events = stream::unfold(state, StreamState::next_events)
        .flat_map(stream::iter)
        .map(Ok);
    Ok(Sse::new(events))
}

/// Where a stream is: the steps still to read and the writer, until the stream has ended.
struct StreamState<W> {
    steps: mpsc::Receiver<Step>,
    /// The first step, read before the stream started.
    pending: Option<Step>,
    /// `None` once the stream has ended.
    writer: Option<W>,
}

impl<W: SseWriter> StreamState<W> {
    /// The SSE events of the next step, or `None` when the stream has ended.
    async fn next_events(mut self) -> Option<(Vec<SseEvent>, Self)> {
        let writer = self.writer.as_mut()?;
        let step = match self.pending.take() {
            Some(step) => Some(step),
            None => self.steps.recv().await,
        };
        let events = match step {
            Some(Step::Started) => writer.open(),
            Some(Step::Events(events)) => match writer.write(events) {
                Ok(events) => events,
                Err(failure) => self.end_with(Err(failure)),
            },
            Some(Step::Finished(outcome)) => self.end_with(outcome),
            None => self.end_with(Err(Failure::engine_vanished())),
        };
        Some((events, self))
    }

    /// The stream's last events; nothing is written after them.
    fn end_with(&mut self, outcome: Result<Completion, Failure>) -> Vec<SseEvent> {
        match (self.writer.take(), outcome) {
            (Some(writer), Ok(completion)) => writer.finish(&completion),
            (Some(writer), Err(failure)) => writer.fail(&failure),
            (None, _) => Vec::new(),
        }
    }
}

/// The SSE response of the events sent into `receiver`, as they come.
pub(crate) fn from_channel(
    receiver: mpsc::Receiver<SseEvent>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    Sse::new(stream::unfold(receiver, |mut receiver| async move {
        let event = receiver.recv().await?;
        Some((Ok(event), receiver))
    }))
}

/// `value` as one `data:` event.
pub(crate) fn data(value: &impl Serialize) -> SseEvent {
    SseEvent::default().data(json_text(value))
}

/// `value` as one `data:` event named `name` (`event: name`), as the Responses and
/// Messages APIs write their events.
pub fn named(name: &str, value: &impl Serialize) -> SseEvent {
    SseEvent::default().event(name).data(json_text(value))
}

fn json_text(value: &impl Serialize) -> String {
    // These types are maps with string keys: serializing them cannot fail.
    serde_json::to_string(value).unwrap_or_else(|error| {
        format!(r#"{{"error": {{"message": "cannot write a chunk: {error}", "type": "server_error", "param": null, "code": null}}}}"#)
    })
}
