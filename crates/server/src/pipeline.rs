//! The one path every API's request takes to the engine: read ([`admit`]), prepared by the
//! dialect and checked against the model's context and the server's grammar limits
//! ([`prepare`]), given a slot ([`admit_request`]), then started ([`Admitted::start`]).
//! Chat completions, Responses, Messages and the `/inspect` page differ only in how they
//! read their body and write their answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::BytesRejection;
use axum::http::{header, StatusCode};
use axum::response::Response;
use tokio::sync::mpsc;
use toolbridge_chat::ChatRequest;
use toolbridge_dialect::{Pacing, StreamParser};
use toolbridge_engine::{Engine, Generation};

use crate::admission::Permit;
use crate::checks::parse_request;
use crate::error::Failure;
use crate::generate::{self, Preparation, Step};
use crate::state::AppState;

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
    /// Where the engine holds the model to the call grammar, calls stream as the model
    /// writes them ([`Pacing`]); elsewhere each is sent once whole.
    pub(crate) fn start(
        mut self,
        state: &AppState,
        engine: Arc<dyn Engine>,
    ) -> mpsc::Receiver<Step> {
        if self.generation.constraint.is_some() && engine.unenforced(&self.generation).is_none() {
            self.parser.set_pacing(Pacing::Timed);
        }
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
    let Some(constraint) = &prepared.0.constraint else {
        return Ok(prepared);
    };
    // Printed here, on the generation's own constraint: the copy the engine compiles and
    // the generation's matcher both read this text, not a printing of their own.
    let (limit, bytes) = (state.options.max_grammar_bytes, constraint.lark().len());
    if bytes > limit {
        return Err(Failure::grammar_too_large(bytes, limit));
    }
    let (engine, constraint) = (Arc::clone(state.model.engine()), constraint.clone());
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
