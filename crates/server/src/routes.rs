//! The routes and what guards them.
//!
//! `/health` answers without a key so that load balancers and scripts can poll it, and so
//! does `/` (`HEAD /` is how Claude Code checks that a server is there);
//! everything under `/v1/`, and `/metrics`, needs the API key when one is set. Every
//! answer is counted for `/metrics` and logged in one line ([`observe`]). CORS is open to every
//! origin (browser clients such as chat UIs call local servers), as llama.cpp's server is;
//! the API key, not the origin, is what protects a server. Unknown routes, wrong methods
//! and bodies over the limit are answered as OpenAI errors like everything else.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolbridge_chat::{ApiError, ChatRequest};
use toolbridge_dialect::parser::StreamParser;
use toolbridge_engine::{Engine, Generation};
use tower_http::cors::{Any, CorsLayer};

use crate::admission::Permit;
use crate::answer::AnswerMeta;
use crate::checks::parse_request;
use crate::error::{Failure, FailureCode};
use crate::generate::{self, Preparation, Step};
use crate::messages;
use crate::respond::respond;
use crate::responses;
use crate::server::AppState;
use crate::stream::stream;

pub(crate) type Shared = State<Arc<AppState>>;

/// Every route, with its guards.
pub fn router(state: Arc<AppState>) -> Router {
    let v1 = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/v1/models/{id}", get(model))
        .route("/metrics", get(metrics))
        .route("/v1/responses", post(responses::create))
        .merge(crate::inspect::api())
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            require_api_key,
        ));
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods(Any)
        .allow_headers(Any);
    Router::new()
        .route("/", get(root))
        .route("/health", get(health))
        .merge(crate::inspect::page())
        .merge(v1)
        .route("/v1/messages", messages::route(&state))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(state.options.max_body_bytes))
        .layer(cors)
        .layer(middleware::from_fn_with_state(Arc::clone(&state), observe))
        .with_state(state)
}

/// `POST /v1/chat/completions`, streamed or not.
async fn chat_completions(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let admitted = admit(&state, &body).await?;
    let request = Arc::clone(&admitted.request);
    let (steps, unenforced) = admitted.start_served(&state);
    let meta = AnswerMeta::new(state.model.id());
    let response = if request.is_stream() {
        let events = stream(meta, request.wants_stream_usage(), steps).await?;
        events.into_response()
    } else {
        Json(respond(meta, steps).await?).into_response()
    };
    Ok(unenforced.mark(response))
}

/// What the engine does not enforce of a generation (a remote engine without grammars).
pub(crate) struct Unenforced(Option<&'static str>);

impl Unenforced {
    /// `response` with the header that says what was not enforced, if anything was not.
    pub fn mark(self, mut response: Response) -> Response {
        if let Some(warning) = self
            .0
            .and_then(|text| header::HeaderValue::from_str(text).ok())
        {
            response.headers_mut().insert(UNENFORCED, warning);
        }
        response
    }
}

/// A request read, prepared and given a slot: what [`generate::start`] takes.
pub(crate) struct Admitted {
    pub request: Arc<ChatRequest>,
    pub generation: Generation,
    pub parser: Box<dyn StreamParser + Send>,
    pub permit: Permit,
    pub preparation: Preparation,
}

impl Admitted {
    /// Starts generating on `engine` (the served one, or one wrapping it) within the
    /// server's budget, counted in its metrics ([`generate::start`]).
    pub(crate) fn start(self, state: &AppState, engine: Arc<dyn Engine>) -> mpsc::Receiver<Step> {
        generate::start(
            engine,
            self.generation,
            self.parser,
            self.permit,
            self.preparation,
            state.options.budget,
            Arc::clone(&state.metrics),
        )
    }

    /// Starts generating on the served engine; with what that engine does not enforce.
    pub(crate) fn start_served(self, state: &AppState) -> (mpsc::Receiver<Step>, Unenforced) {
        let engine = Arc::clone(state.model.engine());
        let unenforced = Unenforced(engine.unenforced(&self.generation));
        (self.start(state, engine), unenforced)
    }
}

/// Reads `body` as a chat request, prepares it ([`prepare`]) and waits for a slot, timing
/// each stage.
pub(crate) async fn admit(state: &Arc<AppState>, body: &[u8]) -> Result<Admitted, Failure> {
    let started = Instant::now();
    let request = Arc::new(parse_request(body)?);
    admit_request(state, request, started).await
}

/// Prepares a checked request ([`prepare`]), read from its body since `started`, and waits
/// for a slot: the one path every API's request takes to the engine.
pub(crate) async fn admit_request(
    state: &Arc<AppState>,
    request: Arc<ChatRequest>,
    started: Instant,
) -> Result<Admitted, Failure> {
    let parsed = Instant::now();
    let (generation, parser) = prepare(state, &request).await?;
    let prepared = Instant::now();
    let permit = state.admission.admit().await?;
    let preparation = Preparation {
        parse: parsed - started,
        prepare: prepared - parsed,
        admission: prepared.elapsed(),
    };
    Ok(Admitted {
        request,
        generation,
        parser,
        permit,
        preparation,
    })
}

/// The dialect's preparation of `request`, on a blocking thread (a template render is
/// CPU work) and within the server's `prepare_timeout`, and the prompt checked against the
/// context; then its call grammar, bounded in size, made ready by the engine within the
/// `grammar_timeout`: all before the request waits for a slot. Work that runs past its
/// limit is answered at once; its thread stops at the template's own fuel and output
/// bounds, or llguidance's.
pub(crate) async fn prepare(
    state: &Arc<AppState>,
    request: &Arc<ChatRequest>,
) -> Result<(Generation, Box<dyn StreamParser + Send>), Failure> {
    let (model_state, request) = (Arc::clone(state), Arc::clone(request));
    let prepared = bounded(
        state.options.prepare_timeout,
        Failure::prepare_timeout,
        move || {
            let prepared = model_state.model.generation(&request)?;
            model_state
                .model
                .engine()
                .check_prompt(&prepared.0.prompt)?;
            Ok(prepared)
        },
    )
    .await?;
    let Some(constraint) = prepared.0.constraint.clone() else {
        return Ok(prepared);
    };
    let (limit, bytes) = (state.options.max_grammar_bytes, constraint.lark().len());
    if bytes > limit {
        return Err(Failure::grammar_too_large(bytes, limit));
    }
    let engine = Arc::clone(state.model.engine());
    bounded(
        state.options.grammar_timeout,
        Failure::grammar_timeout,
        move || Ok(engine.prepare_constraint(&constraint)?),
    )
    .await?;
    Ok(prepared)
}

/// `work` on a blocking thread, answered with `too_slow(limit)` when it runs past `limit`.
async fn bounded<T: Send + 'static>(
    limit: Duration,
    too_slow: fn(Duration) -> Failure,
    work: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(done)) => done,
        Ok(Err(_)) => Err(Failure::engine_vanished()),
        Err(_) => Err(too_slow(limit)),
    }
}

/// Counts every answer for `/metrics` and logs it in one line: method, route, status,
/// error code and time.
async fn observe(State(state): Shared, request: Request, next: Next) -> Response {
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
async fn metrics(State(state): Shared) -> Response {
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

/// The header that says what the engine did not enforce of a request (a remote engine
/// without grammars), so a client can tell a constrained answer from a hopeful one.
const UNENFORCED: &str = "x-toolbridge-unenforced";

/// A body that could not be read: too large (413), or cut off.
pub(crate) fn body_failure(rejection: &BytesRejection, state: &AppState) -> Failure {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        Failure::body_too_large(state.options.max_body_bytes)
    } else {
        Failure::invalid("body", rejection.body_text())
    }
}

/// `GET /v1/models`: the one model served.
async fn models(State(state): Shared) -> Json<Value> {
    Json(json!({"object": "list", "data": [model_object(&state)]}))
}

/// `GET /v1/models/{id}`: the model, if `id` is its id.
async fn model(State(state): Shared, Path(id): Path<String>) -> Result<Json<Value>, Failure> {
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
async fn root() -> &'static str {
    "toolbridge is running\n"
}

/// `GET /health`.
async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// Lets a request through when no key is set or it carries the key.
async fn require_api_key(
    State(state): Shared,
    request: Request,
    next: Next,
) -> Result<Response, Failure> {
    check_api_key(&state, request.headers())?;
    Ok(next.run(request).await)
}

/// Whether `headers` carry the server's key, when it has one: as `Authorization: Bearer`
/// (OpenAI's clients) or as `x-api-key` (Anthropic's), on every route.
pub(crate) fn check_api_key(state: &AppState, headers: &HeaderMap) -> Result<(), Failure> {
    let Some(expected) = state.options.api_key.as_deref() else {
        return Ok(());
    };
    match bearer_token(headers).or_else(|| x_api_key(headers)) {
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(Failure::api(ApiError::authentication(
            "Incorrect API key provided.",
        ))),
        None => Err(Failure::api(ApiError::authentication(
            "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY' or 'x-api-key: YOUR_KEY'.",
        ))),
    }
}

/// The token of an `Authorization: Bearer …` header.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The key of an `x-api-key` header, as Anthropic's clients send it.
fn x_api_key(headers: &HeaderMap) -> Option<&str> {
    headers.get("x-api-key")?.to_str().ok().map(str::trim)
}

/// Compares without stopping at the first difference, so timing does not reveal how much
/// of a guessed key was right.
fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differs, (a, b)| differs | (a ^ b))
            == 0
}

async fn no_route(method: Method, uri: Uri) -> Response {
    messages::in_its_shape(uri.path(), Failure::no_route(method.as_str(), uri.path()))
}

async fn wrong_method(method: Method, uri: Uri) -> Response {
    messages::in_its_shape(
        uri.path(),
        Failure::wrong_method(method.as_str(), uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_case_insensitively() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            "bearer  sk-1 ".parse().expect("a header"),
        );
        assert_eq!(bearer_token(&headers), Some("sk-1"));
        headers.insert(
            header::AUTHORIZATION,
            "Basic abc".parse().expect("a header"),
        );
        assert_eq!(bearer_token(&headers), None);
    }

    #[test]
    fn keys_compare_whole() {
        assert!(constant_time_eq(b"key", b"key"));
        assert!(!constant_time_eq(b"kez", b"key"));
        assert!(!constant_time_eq(b"ke", b"key"));
    }
}
