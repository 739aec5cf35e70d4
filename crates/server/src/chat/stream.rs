//! The streaming answer: events as OpenAI `chat.completion.chunk`s over server-sent
//! events, `data: {chunk}` each, ended by `data: [DONE]`.
//!
//! The dialect crate's [`ChatAnswer`] decides each delta (a call opens with its index, id,
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
//! Every API streams through the same machinery ([`crate::sse`]): only the [`SseWriter`],
//! which turns steps into that API's events, is its own.

use axum::response::sse::{Event as SseEvent, Sse};
use futures_util::stream::Stream;
use std::convert::Infallible;
use tokio::sync::mpsc;
use toolbridge_chat::{ChatChunk, ChunkChoice, Delta};
use toolbridge_dialect::{ChatAnswer, Event};
use toolbridge_engine::Completion;

use crate::answer::{finish_reason, usage, AnswerMeta};
use crate::error::Failure;
use crate::generate::Step;
use crate::sse::{data, stream_with, SseWriter};

/// What ends every successful stream.
const DONE: &str = "[DONE]";

/// The SSE response for a generation, or the failure that came before its first piece.
pub(super) async fn stream(
    meta: AnswerMeta,
    include_usage: bool,
    steps: mpsc::Receiver<Step>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, Failure> {
    stream_with(ChunkWriter::new(meta, include_usage), steps).await
}

/// Turns one choice's events into chunks.
struct ChunkWriter {
    meta: AnswerMeta,
    include_usage: bool,
    answer: ChatAnswer,
}

impl ChunkWriter {
    fn new(meta: AnswerMeta, include_usage: bool) -> Self {
        ChunkWriter {
            meta,
            include_usage,
            answer: ChatAnswer::default(),
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
        self.answer
            .open()
            .map(|delta| self.delta_chunk(delta))
            .into_iter()
            .collect()
    }

    /// A chunk for each event a client would see.
    fn write(&mut self, events: Vec<Event>) -> Result<Vec<SseEvent>, Failure> {
        let mut written = Vec::with_capacity(events.len());
        for event in events {
            for delta in self.answer.push(event).map_err(Failure::parser_bug)? {
                written.push(self.delta_chunk(delta));
            }
        }
        Ok(written)
    }

    /// The last delta if any, the finish reason, the usage if asked for, and `[DONE]`.
    fn finish(mut self, completion: &Completion) -> Vec<SseEvent> {
        let reason = finish_reason(completion, self.answer.has_calls());
        let mut events: Vec<SseEvent> = Vec::with_capacity(4);
        if let Some(delta) = self.answer.finish() {
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
