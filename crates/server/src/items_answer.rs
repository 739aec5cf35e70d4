//! Answers made of output items: what the Responses and the Messages APIs share.
//!
//! Both APIs answer with a list of items (reasoning, text, calls) folded from the parser's
//! events ([`toolbridge_dialect::Items`]); they differ only in how an item and each
//! change to it are written. An [`ItemsApi`] says that, and [`answer`] does the rest: the
//! whole answer is the fold's last state, the streamed one is each change written as it
//! happens through the one SSE writer ([`stream_with`]), so the two cannot
//! disagree.

use axum::response::sse::Event as SseEvent;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use tokio::sync::mpsc;
use toolbridge_dialect::{Change, Event};
use toolbridge_engine::Completion;

use crate::answer::fold;
use crate::error::Failure;
use crate::generate::Step;
use crate::sse::{stream_with, SseWriter};

/// One API's answer being built from events, and how it is written.
pub trait ItemsApi: Send + 'static {
    /// Folds in one event.
    fn push(&mut self, event: Event) -> Result<Vec<Change>, Failure>;
    /// Closes what is still open.
    fn finish(&mut self) -> Vec<Change>;
    /// The events that open a stream.
    fn opening(&mut self) -> Vec<SseEvent>;
    /// The events for `changes`.
    fn changes(&mut self, changes: Vec<Change>) -> Vec<SseEvent>;
    /// The events that end a stream that finished.
    fn closing(&mut self, completion: &Completion) -> Vec<SseEvent>;
    /// The event that tells the client the answer failed under way.
    fn failure(&mut self, failure: &Failure) -> SseEvent;
    /// The whole answer, once finished.
    fn whole(&self, completion: &Completion) -> Value;
}

/// Answers a generation's `steps` with `api`, streamed or whole.
pub async fn answer<A: ItemsApi>(
    mut api: A,
    streamed: bool,
    steps: mpsc::Receiver<Step>,
) -> Result<Response, Failure> {
    if streamed {
        let writer = ItemsWriter { api, opened: false };
        return Ok(stream_with(writer, steps).await?.into_response());
    }
    let completion = fold(steps, |event| api.push(event).map(drop)).await?;
    api.finish();
    Ok(Json(api.whole(&completion)).into_response())
}

/// An [`ItemsApi`] as a stream writer: opened once, before anything else is written.
struct ItemsWriter<A> {
    api: A,
    opened: bool,
}

impl<A: ItemsApi> SseWriter for ItemsWriter<A> {
    fn open(&mut self) -> Vec<SseEvent> {
        if std::mem::replace(&mut self.opened, true) {
            return Vec::new();
        }
        self.api.opening()
    }

    fn write(&mut self, events: Vec<Event>) -> Result<Vec<SseEvent>, Failure> {
        let mut written = self.open();
        for event in events {
            let changes = self.api.push(event)?;
            written.extend(self.api.changes(changes));
        }
        Ok(written)
    }

    fn finish(mut self, completion: &Completion) -> Vec<SseEvent> {
        let mut written = self.open();
        let changes = self.api.finish();
        written.extend(self.api.changes(changes));
        written.extend(self.api.closing(completion));
        written
    }

    fn fail(mut self, failure: &Failure) -> Vec<SseEvent> {
        vec![self.api.failure(failure)]
    }
}
