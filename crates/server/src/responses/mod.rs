//! `POST /v1/responses`: OpenAI's Responses API, which the Agents SDK and Codex speak.
//!
//! A thin mapping both ways. The request becomes the chat request it means
//! ([`request`]), so validation, the dialect's preparation, the grammar, admission and
//! budgets apply unchanged, and its errors are OpenAI error objects as chat's are. The
//! answer is the same generation's events folded into output items ([`answer`]), whole or
//! streamed through the chat stream's machinery ([`crate::stream::stream_with`]).

mod answer;
mod request;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::answer::AnswerMeta;
use crate::error::Failure;
use crate::respond::fold;
use crate::routes::{body_failure, start_generation, Shared};
use crate::stream::stream_with;
use answer::{EventWriter, ResponseBuilder};

/// Answers one Responses request, streamed or not.
pub async fn create(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let started = Instant::now();
    let mapped = request::parse(&body)?;
    let request = Arc::new(mapped.chat);
    let (steps, unenforced) = start_generation(&state, &request, started).await?;
    let mut builder = ResponseBuilder::new(AnswerMeta::new(state.model.id()), mapped.echo);
    let response = if request.is_stream() {
        stream_with(EventWriter::new(builder), steps)
            .await?
            .into_response()
    } else {
        let completion = fold(steps, |event| builder.push(event).map(drop)).await?;
        builder.finish();
        Json(builder.response(Some(&completion))).into_response()
    };
    Ok(unenforced.mark(response))
}
