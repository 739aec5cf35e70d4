//! The streaming answer: events as OpenAI `chat.completion.chunk`s over server-sent
//! events, `data: {chunk}` each, ended by `data: [DONE]`.
//!
//! The dialect crate's [`DeltaWriter`] decides each delta (a call opens with its index, id,
//! type and name, then argument fragments), so this module only wraps deltas in chunks
//! and writes the end: the finish reason in a last chunk with an empty delta, then, with
//! `stream_options.include_usage`, a chunk with no choices and the usage (every earlier
//! chunk then carries `"usage": null`, as OpenAI's do).
//!
//! Headers are not sent until the first step arrives, so a request the engine refuses
//! outright (a prompt longer than the context) still gets a proper status and error body.
//! The first step is the model's first token: the answer opens then with a
//! `role: assistant` chunk, as OpenAI's and llama-server's streams do, even when what the
//! model writes is a call the parser holds until it is whole.
//! A failure once the stream is under way is sent as `data: {"error": {…}}`, which the
//! OpenAI SDKs raise as an API error, and the stream ends there.
//!
//! The other APIs (`/v1/responses`, `/v1/messages`) stream through the same machinery
//! ([`stream_with`]): only the [`SseWriter`], which turns steps into that API's events, is
//! theirs.

use std::convert::Infallible;

use axum::response::sse::{Event as SseEvent, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use tokio::sync::mpsc;
use toolbridge_chat::{ChatChunk, ChunkChoice, Delta};
use toolbridge_dialect::chunks::DeltaWriter;
use toolbridge_dialect::events::Event;
use toolbridge_engine::Completion;

use crate::answer::{finish_reason, usage, AnswerMeta};
use crate::error::Failure;
use crate::generate::Step;

/// What ends every successful stream.
const DONE: &str = "[DONE]";

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

/// The SSE response for a generation, or the failure that came before its first piece.
pub async fn stream(
    meta: AnswerMeta,
    include_usage: bool,
    steps: mpsc::Receiver<Step>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, Failure> {
    stream_with(ChunkWriter::new(meta, include_usage), steps).await
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

/// Turns one choice's events into chunks.
struct ChunkWriter {
    meta: AnswerMeta,
    include_usage: bool,
    deltas: DeltaWriter,
    has_calls: bool,
}

impl ChunkWriter {
    fn new(meta: AnswerMeta, include_usage: bool) -> Self {
        ChunkWriter {
            meta,
            include_usage,
            deltas: DeltaWriter::default(),
            has_calls: false,
        }
    }

    fn delta_chunk(&self, delta: Delta) -> SseEvent {
        data(&self.chunk(vec![ChunkChoice::new(0, delta)]))
    }

    /// A chunk of this answer with `choices`, `"usage": null` when usage was asked for.
    fn chunk(&self, choices: Vec<ChunkChoice>) -> ChatChunk {
        let meta = &self.meta;
        let mut chunk = ChatChunk::new(&meta.id, meta.created, &meta.model, choices);
        if self.include_usage {
            chunk.usage = Some(None);
        }
        chunk
    }
}

impl SseWriter for ChunkWriter {
    /// The chunk that opens the answer, if nothing was written yet.
    fn open(&mut self) -> Vec<SseEvent> {
        self.deltas
            .open()
            .map(|delta| self.delta_chunk(delta))
            .into_iter()
            .collect()
    }

    /// A chunk for each event a client would see.
    fn write(&mut self, events: Vec<Event>) -> Result<Vec<SseEvent>, Failure> {
        let mut written = Vec::with_capacity(events.len());
        for event in events {
            self.has_calls |= matches!(event, Event::ToolCallStart { .. });
            if let Some(delta) = self.deltas.push(event).map_err(Failure::parser_bug)? {
                written.push(self.delta_chunk(delta));
            }
        }
        Ok(written)
    }

    /// The last delta if any, the finish reason, the usage if asked for, and `[DONE]`.
    fn finish(mut self, completion: &Completion) -> Vec<SseEvent> {
        let reason = finish_reason(completion, self.has_calls);
        let mut events: Vec<SseEvent> = Vec::with_capacity(4);
        if let Some(delta) = std::mem::take(&mut self.deltas).finish() {
            events.push(self.delta_chunk(delta));
        }
        events.push(data(&self.chunk(vec![ChunkChoice::finish(0, reason)])));
        if self.include_usage {
            let meta = &self.meta;
            let last = ChatChunk::usage(&meta.id, meta.created, &meta.model, usage(completion));
            events.push(data(&last));
        }
        events.push(SseEvent::default().data(DONE));
        events
    }

    /// `data: {"error": {…}}`, which the OpenAI SDKs raise as an API error.
    fn fail(self, failure: &Failure) -> Vec<SseEvent> {
        vec![data(&failure.body())]
    }
}

/// `value` as one `data:` event.
fn data(value: &impl Serialize) -> SseEvent {
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
