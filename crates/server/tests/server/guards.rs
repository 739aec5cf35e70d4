//! Everything around a generation: OpenAI error objects with the right status for every
//! way a request fails, the API key, the body and concurrency limits, cancellation when a
//! streaming client goes away, `/v1/models` and `/health`.

use std::time::Duration;

use crate::common::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use toolbridge_engine::{FinishReason, ScriptedEngine};
use toolbridge_server::ServerOptions;
use tower::ServiceExt;

async fn post_raw(app: &axum::Router, body: &str) -> (StatusCode, String) {
    let request = Request::post("/v1/chat/completions")
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .expect("a request");
    send(app, request).await
}

#[tokio::test]
async fn bad_requests_are_400_invalid_request_errors() {
    let engine = scripted(&[]);
    let app = app(&engine);
    let unknown_tool = {
        let mut body = weather_request();
        body["tool_choice"] = json!({"type": "function", "function": {"name": "nope"}});
        body
    };
    let hostile_schema = json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"$ref": "#/nowhere"}}}],
    });
    let bad_format = json!({
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"$ref": "#/x"}}},
    });
    let cases = [
        ("{not json".to_owned(), None),
        ("\u{0}\u{1}".to_owned(), None),
        (r#"{"messages": "hi"}"#.to_owned(), None),
        (r#"{"messages": []}"#.to_owned(), Some("messages")),
        (unknown_tool.to_string(), Some("tool_choice")),
        (
            json!({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required"})
                .to_string(),
            Some("tool_choice"),
        ),
        (hostile_schema.to_string(), Some("tools")),
        (bad_format.to_string(), Some("response_format")),
        (
            json!({"messages": [{"role": "user", "content": "hi"}], "temperature": 9}).to_string(),
            Some("temperature"),
        ),
        (
            json!({"messages": [{"role": "user", "content": "hi"}], "n": 3}).to_string(),
            Some("n"),
        ),
    ];
    for (body, param) in cases {
        let (status, answer) = post_raw(&app, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let error = error_object(&answer, "invalid_request_error");
        assert_eq!(error["param"].as_str(), param, "{body}: {answer}");
    }
    assert!(
        engine.generations().is_empty(),
        "no bad request reaches the engine"
    );
}

#[tokio::test]
async fn an_engine_failure_is_a_500_server_error() {
    let engine = scripted(&[]); // no outputs: the scripted engine fails
    let app = app(&engine);
    let (status, answer) = post_raw(&app, &weather_request().to_string()).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{answer}");
    error_object(&answer, "server_error");
    let mut body = weather_request();
    body["stream"] = json!(true);
    let (status, answer) = post_raw(&app, &body.to_string()).await;
    assert_eq!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "a stream that fails at once: {answer}"
    );
    error_object(&answer, "server_error");
}

#[tokio::test]
async fn an_api_key_guards_v1_but_not_health() {
    let engine = scripted(&["hi"]);
    let options = ServerOptions {
        api_key: Some("sk-test".into()),
        ..ServerOptions::default()
    };
    let app = app_with(&engine, options);
    let models = |key: Option<&str>| {
        let mut request = Request::get("/v1/models");
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        request.body(Body::empty()).expect("a request")
    };
    for key in [None, Some("sk-wrong")] {
        let (status, body) = send(&app, models(key)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(
            error_object(&body, "authentication_error")["code"],
            "invalid_api_key"
        );
    }
    assert_eq!(send(&app, models(Some("sk-test"))).await.0, StatusCode::OK);
    let unauthorized_chat = chat_request(&json!({"messages": [{"role": "user", "content": "hi"}]}));
    assert_eq!(
        send(&app, unauthorized_chat).await.0,
        StatusCode::UNAUTHORIZED
    );
    let health = Request::get("/health")
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&app, health).await.0, StatusCode::OK);
    assert!(engine.generations().is_empty());
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let engine = scripted(&["hi"]);
    let options = ServerOptions {
        max_body_bytes: 1024,
        ..ServerOptions::default()
    };
    let app = app_with(&engine, options);
    let body = json!({"messages": [{"role": "user", "content": "x".repeat(2048)}]});
    let (status, answer) = send(&app, chat_request(&body)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    error_object(&answer, "invalid_request_error");
}

#[tokio::test]
async fn unknown_routes_and_methods_are_openai_errors() {
    let app = app(&scripted(&[]));
    let (status, body) = send(
        &app,
        Request::get("/v1/nothing")
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    error_object(&body, "not_found_error");
    let get_chat = Request::get("/v1/chat/completions")
        .body(Body::empty())
        .expect("a request");
    let (status, body) = send(&app, get_chat).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    error_object(&body, "invalid_request_error");
}

#[tokio::test]
async fn models_lists_the_served_model_and_health_is_ok() {
    let app = app(&scripted(&[]));
    let (status, body) = send(
        &app,
        Request::get("/v1/models")
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let models: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], MODEL_ID);
    assert_eq!(models["data"][0]["object"], "model");
    let one = Request::get(format!("/v1/models/{MODEL_ID}"))
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&app, one).await.0, StatusCode::OK);
    let other = Request::get("/v1/models/gpt-4")
        .body(Body::empty())
        .expect("a request");
    let (status, body) = send(&app, other).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        error_object(&body, "invalid_request_error")["code"],
        "model_not_found"
    );
    let (status, body) = send(
        &app,
        Request::get("/health")
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, r#"{"status":"ok"}"#)
    );
}

/// An engine whose every generation is a long text, one character a token.
fn endless_engine() -> std::sync::Arc<Recorder> {
    Recorder::new(
        ScriptedEngine::from_fn(model_info(), |_| "word ".repeat(20_000)).with_piece_chars(1),
    )
}

fn streaming_request() -> Request<Body> {
    chat_request(&json!({"messages": [{"role": "user", "content": "Talk"}], "stream": true}))
}

/// Waits (up to 10 s) until the engine has returned `count` generations.
async fn finished(engine: &Recorder, count: usize) -> Vec<FinishReason> {
    for _ in 0..1000 {
        let finished = engine.finished();
        if finished.len() >= count {
            return finished;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the engine did not finish: {:?}", engine.finished());
}

#[tokio::test]
async fn a_client_leaving_a_stream_stops_the_engine() {
    let engine = endless_engine();
    let app = app(&engine);
    let response = app.oneshot(streaming_request()).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let frame = body
        .frame()
        .await
        .expect("a first event")
        .expect("readable");
    assert!(frame
        .data_ref()
        .is_some_and(|data| data.starts_with(b"data: ")));
    drop(body);
    assert_eq!(finished(&engine, 1).await, [FinishReason::Cancelled]);
}

#[tokio::test]
async fn beyond_the_slots_and_queue_requests_get_503() {
    let engine = endless_engine();
    let options = ServerOptions {
        parallel: 1,
        max_waiting: 0,
        ..ServerOptions::default()
    };
    let app = app_with(&engine, options);
    // The first stream holds the only slot while its client reads nothing.
    let held = app
        .clone()
        .oneshot(streaming_request())
        .await
        .expect("infallible");
    assert_eq!(held.status(), StatusCode::OK);
    let (status, body) = send(&app, streaming_request()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        error_object(&body, "server_error")["code"],
        "server_overloaded"
    );
    drop(held);
    assert_eq!(finished(&engine, 1).await, [FinishReason::Cancelled]);
}
