//! `POST /v1/messages`: Anthropic's Messages API, which Claude Code and the Anthropic SDKs
//! speak.
//!
//! A thin mapping both ways, like [`crate::responses`]: the request becomes the chat
//! request it means ([`request`]), the answer is the same generation's events folded into
//! content blocks ([`answer`]), whole or streamed ([`crate::items_answer`]). Tools the
//! server cannot run are left out and named in the answer's header ([`crate::left_out`]).
//! Every failure, the API key's included, is answered in Anthropic's error shape
//! ([`error`]). Anthropic's clients send the key as `x-api-key`; the bearer header is
//! accepted too, as on every route.

mod answer;
mod client_tools;
mod error;
mod request;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, MethodRouter};

use crate::answer::AnswerMeta;
use crate::auth::check_api_key;
use crate::error::Failure;
use crate::items_answer;
use crate::pipeline::{admit_request, body_failure};
use crate::state::{AppState, Shared};
use answer::MessageBuilder;
use error::AnthropicFailure;

/// The route, guarded by the API key with failures in Anthropic's shape.
pub(crate) fn route(state: &Arc<AppState>) -> MethodRouter<Arc<AppState>> {
    post(create).route_layer(middleware::from_fn_with_state(
        Arc::clone(state),
        require_api_key,
    ))
}

/// `failure` in Anthropic's shape for a path under `/v1/messages` (a wrong method, or a
/// route this server lacks, such as `/v1/messages/count_tokens`), else in OpenAI's.
pub(crate) fn in_its_shape(path: &str, failure: Failure) -> Response {
    if path.starts_with("/v1/messages") {
        AnthropicFailure(failure).into_response()
    } else {
        failure.into_response()
    }
}

async fn require_api_key(
    State(state): Shared,
    request: Request,
    next: Next,
) -> Result<Response, AnthropicFailure> {
    check_api_key(&state, request.headers())?;
    Ok(next.run(request).await)
}

/// Answers one Messages request, streamed or not.
async fn create(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AnthropicFailure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let started = Instant::now();
    let mapped = request::parse(&body)?;
    let request = Arc::new(mapped.chat);
    let (steps, unenforced) = admit_request(&state, Arc::clone(&request), started)
        .await?
        .start_served(&state);
    let builder = MessageBuilder::new(AnswerMeta::new(state.model.id()));
    let response = items_answer::answer(builder, request.is_stream(), steps).await?;
    Ok(mapped.left_out.mark(unenforced.mark(response)))
}
