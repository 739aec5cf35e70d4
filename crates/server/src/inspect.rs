//! The `/inspect` page: one request followed through the path every chat completion
//! takes, so a person can see why a model answered as it did.
//!
//! `POST /inspect/prepare` prepares a chat request exactly as `/v1/chat/completions` does
//! ([`crate::pipeline::prepare`]: the same dialect, template, constraint and stops) and
//! answers what came out: the dialect and why it was chosen, the prompt cut into plain
//! text and special tokens (the engine's control tokens and the constraint's markers), and
//! the grammar as GBNF (what a llama.cpp server gets) and as Lark (what llguidance gets),
//! with its triggers and whether it is lazy or forced.
//!
//! `POST /inspect/run` runs it through [`generate::start`], the generation path of every
//! completion, and streams server-sent events: `raw` (each piece of text as the engine
//! produced it), `event` (each parser event, as it was decided), then `done` (the folded
//! assistant message, finish reason and usage) or `error`. The raw text is tapped by
//! wrapping the engine ([`Tapped`]), so the path itself is not changed for the page. A
//! piece reaches its channel before the parser sees it, and the raw channel is read first,
//! so each piece is shown before the events it caused.
//!
//! The JSON endpoints sit behind the API key like `/v1/*`: they run the model and show
//! the server's prompts. The page itself (`GET /inspect`, plain HTML, CSS and JS compiled
//! into the binary, no external assets) holds no data, so it loads without the key and
//! asks for it, as a browser cannot send a bearer token on navigation.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header;
use axum::response::sse::Event as SseEvent;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use toolbridge_dialect::{ChatAnswer, Event};
use toolbridge_engine::{Completion, Engine, EngineError, Flow, Generation, ModelInfo};
use toolbridge_grammar::{Constraint, Token, Trigger};

use crate::answer::{finish_reason, usage};
use crate::checks::parse_request;
use crate::error::Failure;
use crate::generate::Step;
use crate::pipeline::{admit, body_failure, prepare};
use crate::sse::{self, named};
use crate::state::{AppState, Shared};

const PAGE: &str = include_str!("inspect/page.html");
const SCRIPT: &str = include_str!("inspect/page.js");
const STYLE: &str = include_str!("inspect/page.css");

/// The page and its assets, open to all.
pub fn page() -> Router<Arc<AppState>> {
    Router::new()
        .route("/inspect", get(|| asset("text/html; charset=utf-8", PAGE)))
        .route(
            "/inspect/page.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/inspect/page.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
}

/// The JSON endpoints, to be put behind the API key.
pub fn api() -> Router<Arc<AppState>> {
    Router::new()
        .route("/inspect/prepare", post(prepare_request))
        .route("/inspect/run", post(run_request))
}

async fn asset(content_type: &'static str, text: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

/// `POST /inspect/prepare`: what the model would be asked, and why.
async fn prepare_request(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let request = Arc::new(parse_request(&body)?);
    let (generation, _parser) = prepare(&state, &request).await?;
    let model = &state.model;
    let special = special_tokens(model.engine().special_tokens(), &generation);
    Ok(Json(json!({
        "model": model.id(),
        "dialect": {"name": model.dialect_name(), "why": model.why()},
        "prompt": generation.prompt,
        "prompt_parts": prompt_parts(&generation.prompt, &special),
        "special_tokens": special,
        "constraint": generation.constraint.as_ref().map(describe_constraint),
        "stop": generation.stop,
        "max_tokens": generation.sampling.max_tokens,
    })))
}

/// The strings marked in the prompt: the engine's special tokens and the dialect's markers
/// in the constraint's grammar (`<tool_call>` may be an ordinary token of the vocabulary;
/// trigger words such as `{"name": "` are not markers), the longest first so that no
/// token is marked inside a longer one.
fn special_tokens(engine: &[String], generation: &Generation) -> Vec<String> {
    let mut tokens: Vec<String> = engine.to_vec();
    if let Some(constraint) = &generation.constraint {
        tokens.extend(constraint.marker_candidates());
    }
    tokens.retain(|token| !token.is_empty());
    tokens.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    tokens.dedup();
    tokens
}

/// `prompt` cut into `{"text", "special"}` parts, each special token a part of its own.
/// Only positions whose first byte starts some token are tried, so a long prompt with a
/// large vocabulary of special tokens stays a single quick pass.
fn prompt_parts(prompt: &str, tokens: &[String]) -> Vec<Value> {
    let mut starts = [false; 256];
    for first in tokens.iter().filter_map(|token| token.bytes().next()) {
        starts[usize::from(first)] = true;
    }
    let mut parts = Vec::new();
    let (mut plain, mut at) = (0, 0);
    while let Some((rest, first)) = prompt
        .get(at..)
        .and_then(|rest| Some((rest, rest.bytes().next()?)))
    {
        let found = starts[usize::from(first)]
            .then(|| {
                tokens
                    .iter()
                    .find(|token| !token.is_empty() && rest.starts_with(token.as_str()))
            })
            .flatten();
        match found {
            Some(token) => {
                push_part(&mut parts, &prompt[plain..at], false);
                push_part(&mut parts, token, true);
                at += token.len();
                plain = at;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    push_part(&mut parts, &prompt[plain..], false);
    parts
}

fn push_part(parts: &mut Vec<Value>, text: &str, special: bool) {
    if !text.is_empty() {
        parts.push(json!({"text": text, "special": special}));
    }
}

/// The constraint as the engines read it: GBNF (or why it cannot be printed), Lark, its
/// triggers, and whether it waits for one.
fn describe_constraint(constraint: &Constraint) -> Value {
    let (gbnf, warnings, gbnf_error) = match constraint.gbnf() {
        Ok(gbnf) => (Some(gbnf.text), gbnf.warnings, None),
        Err(error) => (None, Vec::new(), Some(error.to_string())),
    };
    json!({
        "lazy": constraint.is_lazy(),
        "triggers": constraint.triggers().iter().map(trigger_text).collect::<Vec<_>>(),
        "gbnf": gbnf,
        "gbnf_error": gbnf_error,
        "warnings": warnings,
        "lark": constraint.lark(),
    })
}

fn trigger_text(trigger: &Trigger) -> String {
    match trigger {
        Trigger::Word(word) => word.clone(),
        Trigger::Token(Token::Text(text)) => format!("{text} (token)"),
        Trigger::Token(Token::Id(id)) => format!("token #{id}"),
    }
}

/// `POST /inspect/run`: the request generated, raw text and parser events streamed live.
async fn run_request(
    State(state): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| body_failure(&rejection, &state))?;
    let admitted = admit(&state, &body).await?;
    let (raw_sender, raw) = mpsc::unbounded_channel();
    let engine = Arc::new(Tapped {
        inner: Arc::clone(state.model.engine()),
        raw: raw_sender,
    });
    let steps = admitted.start(&state, engine);
    let (out, events) = mpsc::channel(64);
    tokio::spawn(relay(raw, steps, out));
    Ok(sse::from_channel(events).into_response())
}

/// Writes the raw pieces and the steps of one generation to `out` as SSE events, pieces
/// first, until the generation ends or the client goes away (dropping `steps` then stops
/// the engine at its next piece).
async fn relay(
    mut raw: mpsc::UnboundedReceiver<String>,
    mut steps: mpsc::Receiver<Step>,
    out: mpsc::Sender<SseEvent>,
) {
    let mut answer = ChatAnswer::default();
    loop {
        let events = tokio::select! {
            biased;
            Some(piece) = raw.recv() => vec![named("raw", &json!({"text": piece}))],
            step = steps.recv() => {
                let last = !matches!(step, Some(Step::Started | Step::Events(_)));
                let mut events = drain(&mut raw);
                events.extend(step_events(step, &mut answer));
                if last {
                    send_all(&out, events).await;
                    return;
                }
                events
            }
        };
        if !send_all(&out, events).await {
            return;
        }
    }
}

/// The pieces already waiting, as `raw` events.
fn drain(raw: &mut mpsc::UnboundedReceiver<String>) -> Vec<SseEvent> {
    std::iter::from_fn(|| raw.try_recv().ok())
        .map(|piece| named("raw", &json!({"text": piece})))
        .collect()
}

/// Whether the client still listens after `events` were sent.
async fn send_all(out: &mpsc::Sender<SseEvent>, events: Vec<SseEvent>) -> bool {
    for event in events {
        if out.send(event).await.is_err() {
            return false;
        }
    }
    true
}

/// The SSE events of one step: each parser event, or the end (`None`: the engine's thread
/// vanished).
fn step_events(step: Option<Step>, answer: &mut ChatAnswer) -> Vec<SseEvent> {
    match step {
        Some(Step::Started) => Vec::new(),
        Some(Step::Events(events)) => events
            .into_iter()
            .map(|event| {
                let shown = named("event", &event_json(&event));
                match answer.push(event) {
                    Ok(_) => shown,
                    Err(error) => error_event(&Failure::parser_bug(error)),
                }
            })
            .collect(),
        Some(Step::Finished(Ok(completion))) => vec![done(std::mem::take(answer), &completion)],
        Some(Step::Finished(Err(failure))) => vec![error_event(&failure)],
        None => vec![error_event(&Failure::engine_vanished())],
    }
}

/// The `done` event: the assistant message the events fold into, as
/// `/v1/chat/completions` would answer it, with its finish reason and usage.
fn done(answer: ChatAnswer, completion: &Completion) -> SseEvent {
    let message = answer.message();
    let reason = finish_reason(completion, message.tool_calls.is_some());
    named(
        "done",
        &json!({"message": message, "finish_reason": reason, "usage": usage(completion)}),
    )
}

fn error_event(failure: &Failure) -> SseEvent {
    named("error", &json!(failure.body()))
}

/// A parser event as JSON, named as the event contract names it.
fn event_json(event: &Event) -> Value {
    match event {
        Event::Content(text) => json!({"type": "content", "text": text}),
        Event::Reasoning(text) => json!({"type": "reasoning", "text": text}),
        Event::ToolCallStart { index, id, name } => {
            json!({"type": "tool_call_start", "index": index, "id": id, "name": name})
        }
        Event::ToolCallArguments { index, fragment } => {
            json!({"type": "tool_call_arguments", "index": index, "fragment": fragment})
        }
        Event::ToolCallEnd { index } => json!({"type": "tool_call_end", "index": index}),
    }
}

/// The served engine, with each piece it produces copied to `raw` before the caller sees
/// it.
struct Tapped {
    inner: Arc<dyn Engine>,
    raw: mpsc::UnboundedSender<String>,
}

impl Engine for Tapped {
    fn model(&self) -> &ModelInfo {
        self.inner.model()
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        self.inner.generate(generation, &mut |piece| {
            // A page that went away is told by `on_piece`'s channel.
            if !piece.is_empty() && self.raw.send(piece.to_owned()).is_err() {
                return Flow::Stop;
            }
            on_piece(piece)
        })
    }

    fn check_prompt(&self, prompt: &str) -> Result<(), EngineError> {
        self.inner.check_prompt(prompt)
    }

    fn special_tokens(&self) -> &[String] {
        self.inner.special_tokens()
    }

    fn prepare_constraint(&self, constraint: &Constraint) -> Result<(), EngineError> {
        self.inner.prepare_constraint(constraint)
    }

    fn unenforced(&self, generation: &Generation) -> Option<&'static str> {
        self.inner.unenforced(generation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_tokens_are_cut_out_longest_first() {
        let tokens = ["<|im_start|>", "<tool_call>", "<|im"].map(String::from);
        let mut sorted = tokens.to_vec();
        sorted.sort_by_key(|token| std::cmp::Reverse(token.len()));
        let parts = prompt_parts("<|im_start|>user\né<tool_call><|i", &sorted);
        assert_eq!(
            parts,
            vec![
                json!({"text": "<|im_start|>", "special": true}),
                json!({"text": "user\né", "special": false}),
                json!({"text": "<tool_call>", "special": true}),
                json!({"text": "<|i", "special": false}),
            ]
        );
        assert!(prompt_parts("", &sorted).is_empty());
    }
}
