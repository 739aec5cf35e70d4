//! What the server says of itself: `/` and `/health` (up or not), `/v1/models` (the one
//! model served), `/metrics` (Prometheus' text), and the layer that counts and logs every
//! answer for them ([`observe`]).

use std::time::Instant;

use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use toolbridge_chat::ApiError;

use crate::error::{Failure, FailureCode};
use crate::state::{AppState, Shared};

/// Counts every answer for `/metrics` and logs it in one line: method, route, status,
/// error code and time.
pub(crate) async fn observe(State(state): Shared, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let code = response
        .extensions()
        .get::<FailureCode>()
        .map(|code| code.0.as_str());
    state.metrics.answered(&path, status, code);
    tracing::info!(
        %method,
        path = %path,
        status,
        code,
        ms = started.elapsed().as_secs_f64() * 1e3,
        "request"
    );
    response
}

/// `GET /metrics`: Prometheus' text format.
pub(crate) async fn metrics(State(state): Shared) -> Response {
    let text = state.metrics.render(&state.admission);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `GET /v1/models`: the one model served.
pub(crate) async fn models(State(state): Shared) -> Json<Value> {
    Json(json!({"object": "list", "data": [model_object(&state)]}))
}

/// `GET /v1/models/{id}`: the model, if `id` is its id.
pub(crate) async fn model(
    State(state): Shared,
    Path(id): Path<String>,
) -> Result<Json<Value>, Failure> {
    if id == state.model.id() {
        Ok(Json(model_object(&state)))
    } else {
        let error = ApiError::model_not_found(&id);
        Err(Failure {
            status: StatusCode::NOT_FOUND,
            error,
        })
    }
}

fn model_object(state: &AppState) -> Value {
    json!({
        "id": state.model.id(),
        "object": "model",
        "created": 0,
        "owned_by": "toolbridge",
    })
}

/// `GET /` (and `HEAD /`): a line saying the server is up, as Ollama answers; `HEAD`
/// gets the status alone.
pub(crate) async fn root() -> &'static str {
    "toolbridge is running\n"
}

/// `GET /health`.
pub(crate) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}
