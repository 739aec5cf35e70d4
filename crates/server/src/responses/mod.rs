//! `POST /v1/responses`: OpenAI's Responses API, which the Agents SDK and Codex speak.
//!
//! A thin mapping both ways. The request becomes the chat request it means
//! ([`request`]), so validation, the dialect's preparation, the grammar, admission and
//! budgets apply unchanged, and its errors are OpenAI error objects as chat's are. The
//! answer is the same generation's events folded into output items ([`answer`]), whole or
//! streamed ([`crate::items_answer`]). Tools the server cannot run are left out and named
//! in the answer's header ([`crate::left_out`]).

mod answer;
mod request;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::Response;

use crate::answer::AnswerMeta;
use crate::error::Failure;
use crate::items_answer;
use crate::pipeline::{admit_request, body_failure};
use crate::state::Shared;
use answer::ResponseBuilder;

/// Answers one Responses request, streamed or not.
pub(crate) async fn create(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let started = Instant::now();
    let mapped = request::parse(&body)?;
    let request = Arc::new(mapped.chat);
    let (steps, unenforced) = admit_request(&state, Arc::clone(&request), started)
        .await?
        .start_served(&state);
    let meta = AnswerMeta::new(state.model.id());
    let builder = ResponseBuilder::new(meta, mapped.echo, mapped.namespaces);
    let response = items_answer::answer(builder, request.is_stream(), steps).await?;
    Ok(mapped.left_out.mark(unenforced.mark(response)))
}
