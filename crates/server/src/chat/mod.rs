//! `POST /v1/chat/completions`: OpenAI's Chat Completions API, the one every client speaks.
//!
//! The request is read and checked as it comes ([`crate::checks`]); the answer is the
//! generation's events folded into one message ([`answer`]) or written as
//! `chat.completion.chunk` deltas ([`stream`]).

mod answer;
mod stream;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::answer::AnswerMeta;
use crate::error::Failure;
use crate::pipeline::{admit, body_failure};
use crate::state::Shared;

/// Answers one chat completion, streamed or not.
pub(crate) async fn create(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let admitted = admit(&state, &body).await?;
    let request = Arc::clone(&admitted.request);
    let (steps, unenforced) = admitted.start_served(&state);
    let meta = AnswerMeta::new(state.model.id());
    let response = if request.is_stream() {
        let events = stream::stream(meta, request.wants_stream_usage(), steps).await?;
        events.into_response()
    } else {
        Json(answer::respond(meta, steps).await?).into_response()
    };
    Ok(unenforced.mark(response))
}
