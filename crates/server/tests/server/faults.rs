//! The budgets and faults no request may get past: a generation over its time, a request
//! waiting too long for a slot, a call grammar too large or too slow to compile, a client
//! that stops reading, an engine failing one request among others, and a shutdown that
//! drains the requests in flight (or stops waiting for them at its limit).
//!
//! The engines are scripted and paced (a delay per piece), so every limit is met on
//! purpose; the time limits a test waits under are there so a regression fails the test
//! instead of hanging it, not to measure speed.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use axum::http::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolbridge_engine::{
    Completion, Engine, EngineError, EngineErrorKind, FinishReason, Flow, Generation, ModelInfo,
    ScriptedEngine,
};
use toolbridge_server::{Budget, ServerOptions};
use tower::ServiceExt;

/// Long enough that no test waits for a correct answer this long.
const GIVE_UP: Duration = Duration::from_secs(30);

/// What the paced engines write: a long answer to `Talk`, a short one to anything else.
fn answer_to(generation: &Generation) -> String {
    if generation.prompt.contains("Talk") {
        "word ".repeat(4_000)
    } else {
        "Hello.".into()
    }
}

/// An engine writing one character a piece, `delay` apart.
fn paced(delay: Duration) -> Arc<Recorder> {
    Recorder::new(
        ScriptedEngine::from_fn(model_info(), answer_to)
            .with_piece_chars(1)
            .with_piece_delay(delay),
    )
}

fn talk(stream: bool) -> Value {
    json!({"messages": [{"role": "user", "content": "Talk"}], "stream": stream})
}

fn hello() -> Value {
    json!({"messages": [{"role": "user", "content": "Hi"}]})
}

fn options() -> ServerOptions {
    ServerOptions {
        parallel: 1,
        ..ServerOptions::default()
    }
}

/// One slot, and the generation `budget` the default has changed by `change`.
fn with_budget(change: impl FnOnce(&mut Budget)) -> ServerOptions {
    let mut options = options();
    change(&mut options.budget);
    options
}

/// The `toolbridge_budget_refusals_total` count of `kind` on `/metrics`.
async fn refusals(app: &axum::Router, kind: &str) -> u64 {
    let request = axum::http::Request::get("/metrics")
        .body(axum::body::Body::empty())
        .expect("a request");
    let (_, text) = send(app, request).await;
    let line = format!("toolbridge_budget_refusals_total{{kind=\"{kind}\"}} ");
    text.lines()
        .find_map(|row| row.strip_prefix(&line))
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no {kind} count in:\n{text}"))
}

async fn within<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(GIVE_UP, work)
        .await
        .expect("finished well within the test's limit")
}

#[tokio::test]
async fn a_generation_over_its_time_ends_with_an_error_and_frees_its_slot() {
    let engine = paced(Duration::from_millis(2));
    let options = with_budget(|budget| budget.generation = Duration::from_millis(150));
    let app = app_with(&engine, options);

    let (status, answer) = within(chat(&app, &talk(false))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let error = error_object(&answer.to_string(), "invalid_request_error");
    assert_eq!(error["code"], "generation_timeout");
    assert_eq!(error["param"], "max_tokens");

    // A stream keeps what it sent and ends with the error, without `[DONE]`.
    let (status, body) = within(send(&app, chat_request(&talk(true)))).await;
    assert_eq!(status, StatusCode::OK);
    let data = sse_data(&body);
    assert!(data.len() > 2, "some text was streamed first: {body}");
    let last: Value = serde_json::from_str(data.last().expect("events")).expect("JSON");
    assert_eq!(last["error"]["code"], "generation_timeout", "{body}");

    assert_eq!(within(chat(&app, &hello())).await.0, StatusCode::OK);
    assert_eq!(refusals(&app, "generation_timeout").await, 2);
}

#[tokio::test]
async fn a_request_waiting_past_the_queue_limit_gets_503() {
    let engine = paced(Duration::from_millis(5));
    let options = ServerOptions {
        queue_timeout: Duration::from_millis(100),
        ..options()
    };
    let app = app_with(&engine, options);
    let held = app
        .clone()
        .oneshot(chat_request(&talk(true)))
        .await
        .expect("infallible");
    assert_eq!(held.status(), StatusCode::OK);

    let (status, answer) = within(chat(&app, &hello())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    let error = error_object(&answer.to_string(), "server_error");
    assert_eq!(error["code"], "queue_timeout");
    assert_eq!(refusals(&app, "queue_timeout").await, 1);
    drop(held);
}

fn weather_request() -> Value {
    json!({
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}],
    })
}

#[tokio::test]
async fn a_call_grammar_over_the_size_limit_is_refused_before_generating() {
    let engine = scripted(&[WEATHER_CALL]);
    let options = ServerOptions {
        max_grammar_bytes: 64,
        ..options()
    };
    let app = app_with(&engine, options);
    let (status, answer) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let error = error_object(&answer.to_string(), "invalid_request_error");
    assert_eq!(error["code"], "grammar_too_large");
    assert_eq!(error["param"], "tools");
    assert!(engine.generations().is_empty());
    assert_eq!(refusals(&app, "grammar_too_large").await, 1);
}

#[tokio::test]
async fn a_call_grammar_compiled_past_its_time_is_refused() {
    let engine = Arc::new(Slow(ScriptedEngine::new(model_info(), [WEATHER_CALL])));
    let options = ServerOptions {
        grammar_timeout: Duration::from_millis(50),
        ..options()
    };
    let app = server_with(Arc::clone(&engine) as Arc<dyn Engine>, options).router();
    let (status, answer) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "grammar_timeout", "{answer}");
    assert!(engine.0.generations().is_empty());
}

#[tokio::test]
async fn a_client_that_stops_reading_frees_its_slot() {
    // Unpaced: the channel to the unread stream fills at once.
    let engine =
        Recorder::new(ScriptedEngine::from_fn(model_info(), answer_to).with_piece_chars(1));
    let options = with_budget(|budget| budget.stalled_client = Duration::from_millis(200));
    let app = app_with(&engine, options);
    let unread = app
        .clone()
        .oneshot(chat_request(&talk(true)))
        .await
        .expect("infallible");
    assert_eq!(unread.status(), StatusCode::OK);

    // The only slot is free again once the stalled stream is given up on.
    assert_eq!(within(chat(&app, &hello())).await.0, StatusCode::OK);
    assert_eq!(engine.finished()[0], FinishReason::Cancelled);
    assert_eq!(refusals(&app, "client_stalled").await, 1);
    drop(unread);
}

/// A scripted engine whose generations for prompts saying `Fail` break after a few
/// pieces, as a backend error in one sequence would.
struct FailingSometimes(ScriptedEngine);

impl Engine for FailingSometimes {
    fn model(&self) -> &ModelInfo {
        self.0.model()
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        if !generation.prompt.contains("Fail") {
            return self.0.generate(generation, on_piece);
        }
        let mut pieces = 0;
        self.0.generate(generation, &mut |piece| {
            pieces += 1;
            if pieces == 5 {
                return Flow::Stop;
            }
            on_piece(piece)
        })?;
        Err(EngineError::new(
            EngineErrorKind::Backend,
            "decoding failed",
        ))
    }
}

#[tokio::test]
async fn an_engine_error_fails_only_its_own_request() {
    let scripted = ScriptedEngine::from_fn(model_info(), answer_to)
        .with_piece_chars(1)
        .with_piece_delay(Duration::from_millis(1));
    let engine: Arc<dyn Engine> = Arc::new(FailingSometimes(scripted));
    let options = ServerOptions {
        parallel: 2,
        ..ServerOptions::default()
    };
    let app = server_with(engine, options).router();
    let failing = json!({"messages": [{"role": "user", "content": "Fail"}], "stream": true});
    let talking = json!({
        "messages": [{"role": "user", "content": "Talk"}],
        "stream": true,
        "max_tokens": 300,
    });
    let (failed, talked) = within(async {
        tokio::join!(
            send(&app, chat_request(&failing)),
            send(&app, chat_request(&talking))
        )
    })
    .await;

    let failed = sse_data(&failed.1);
    let error: Value = serde_json::from_str(failed.last().expect("events")).expect("JSON");
    assert_eq!(error["error"]["type"], "server_error", "{failed:?}");
    let talked = sse_data(&talked.1);
    assert_eq!(talked.last().map(String::as_str), Some("[DONE]"));
    assert_eq!(within(chat(&app, &hello())).await.0, StatusCode::OK);
}

/// Sends a streamed `Talk` of at most `max_tokens` over `stream` as raw HTTP/1.1 and
/// reads its head.
async fn start_stream(stream: &mut TcpStream, max_tokens: u32) -> String {
    let mut body = talk(true);
    body["max_tokens"] = json!(max_tokens);
    let body = body.to_string();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut head = vec![0; 512];
    let read = stream.read(&mut head).await.expect("an answer");
    String::from_utf8_lossy(&head[..read]).into_owned()
}

/// A server on a local port over `engine`, stopped when the returned sender fires.
async fn listening(
    engine: &Arc<Recorder>,
    options: ServerOptions,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("an address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = server_with(Arc::clone(engine) as Arc<dyn Engine>, options);
    let serving = tokio::spawn(server.serve_until(listener, async move {
        let _ = stopped.await;
    }));
    (address, stop, serving)
}

#[tokio::test]
async fn a_shutdown_finishes_the_streams_in_flight_and_takes_no_new_ones() {
    let engine = paced(Duration::from_millis(1));
    let options = ServerOptions {
        drain_timeout: GIVE_UP,
        ..options()
    };
    let (address, stop, serving) = listening(&engine, options).await;
    let mut client = TcpStream::connect(address).await.expect("connected");
    let head = start_stream(&mut client, 300).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    stop.send(()).expect("the server listens");
    let mut rest = String::new();
    within(client.read_to_string(&mut rest))
        .await
        .expect("the stream is read to its end");
    assert!(rest.contains("data: [DONE]"), "the stream finished: {rest}");
    within(serving)
        .await
        .expect("joined")
        .expect("served until stopped");
    assert!(
        TcpStream::connect(address).await.is_err(),
        "no new connections"
    );
    assert_eq!(engine.finished(), [FinishReason::Length]);
}

#[tokio::test]
async fn a_shutdown_stops_waiting_at_its_drain_limit() {
    let engine = paced(Duration::from_millis(20));
    let options = ServerOptions {
        drain_timeout: Duration::from_millis(200),
        ..options()
    };
    let (address, stop, serving) = listening(&engine, options).await;
    let mut client = TcpStream::connect(address).await.expect("connected");
    let head = start_stream(&mut client, 20_000).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stop.send(()).expect("the server listens");
    // The answer would take 400 s; the server returns at its drain limit.
    within(serving)
        .await
        .expect("joined")
        .expect("served until stopped");
    // The process would exit here; the test lets its generation see the client go.
    drop(client);
}
