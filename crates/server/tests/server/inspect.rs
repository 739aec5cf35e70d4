//! The `/inspect` endpoints over the scripted engine: `prepare` shows the prompt the
//! engine is really given, its special tokens marked, the dialect and why, and the
//! constraint as each engine reads it; `run` streams the raw pieces before the events
//! they caused, and ends with the message `/v1/chat/completions` would answer. The page
//! loads without the key; the endpoints need it.

use crate::common::*;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use toolbridge_server::ServerOptions;

async fn post(app: &axum::Router, path: &str, body: &Value) -> (StatusCode, String) {
    send(app, post_json(path, body)).await
}

async fn prepared(body: &Value) -> Value {
    let (status, text) = post(&app(&scripted(&[])), "/inspect/prepare", body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

fn required(mut request: Value) -> Value {
    request["tool_choice"] = json!("required");
    request
}

#[tokio::test]
async fn prepare_shows_the_prompt_the_engine_is_given() {
    let engine = scripted(&[WEATHER_CALL]);
    let app = app(&engine);
    let (status, text) = post(&app, "/inspect/prepare", &weather_request()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let shown: Value = serde_json::from_str(&text).expect("JSON");
    let (status, _) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["prompt"], engine.generation().prompt);
    let joined: String = shown["prompt_parts"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|part| part["text"].as_str().expect("text"))
        .collect();
    assert_eq!(joined, shown["prompt"].as_str().expect("a prompt"));
}

#[tokio::test]
async fn prepare_marks_special_tokens_and_says_why_the_dialect() {
    let shown = prepared(&weather_request()).await;
    assert_eq!(shown["model"], MODEL_ID);
    assert_eq!(shown["dialect"]["name"], "hermes");
    let why = shown["dialect"]["why"].to_string();
    assert!(
        why.contains("because: the template contains `<tool_call>` (the hermes rule)"),
        "{why}"
    );
    let special: Vec<&str> = shown["prompt_parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter(|part| part["special"] == true)
        .map(|part| part["text"].as_str().expect("text"))
        .collect();
    assert_eq!(special.first(), Some(&"<|im_start|>"), "{special:?}");
    assert!(special.contains(&"<|im_end|>"), "{special:?}");
    assert!(special.contains(&"<tool_call>"), "{special:?}");
    assert!(
        !special.iter().any(|text| text.contains("user")),
        "{special:?}"
    );
}

#[tokio::test]
async fn prepare_shows_a_lazy_grammar_with_its_trigger_and_a_forced_one() {
    let lazy = &prepared(&weather_request()).await["constraint"];
    assert_eq!(lazy["lazy"], true);
    assert!(
        lazy["triggers"].to_string().contains("<tool_call>"),
        "{lazy}"
    );
    let forced = &prepared(&required(weather_request())).await["constraint"];
    assert_eq!(forced["lazy"], false);
    for notation in ["gbnf", "lark"] {
        let text = forced[notation].as_str().expect(notation);
        assert!(text.contains("get_weather"), "{notation}: {text}");
    }
    assert!(forced["gbnf"]
        .as_str()
        .is_some_and(|gbnf| gbnf.starts_with("root ::=")));
    let mut plain = weather_request();
    plain["tool_choice"] = json!("none");
    assert_eq!(prepared(&plain).await["constraint"], Value::Null);
}

#[tokio::test]
async fn run_streams_raw_pieces_before_their_events_and_ends_with_the_message() {
    let engine = scripted(&[WEATHER_CALL]);
    let (status, text) = post(&app(&engine), "/inspect/run", &required(weather_request())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let raw: String = events
        .iter()
        .filter(|(name, _)| name == "raw")
        .map(|(_, data)| data["text"].as_str().expect("text"))
        .collect();
    assert_eq!(raw, WEATHER_CALL);
    let first = |wanted: &str| events.iter().position(|(name, _)| name == wanted);
    assert!(first("raw") < first("event"), "{events:?}");
    let start = events
        .iter()
        .find(|(name, data)| name == "event" && data["type"] == "tool_call_start")
        .expect("a call starts");
    assert_eq!(start.1["name"], "get_weather");
    let (name, done) = events.last().expect("events");
    assert_eq!(name, "done", "{events:?}");
    assert_eq!(done["finish_reason"], "tool_calls");
    let call = &done["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["arguments"], r#"{"city": "Paris"}"#);
    assert!(done["usage"]["completion_tokens"].as_u64() > Some(0));
}

#[tokio::test]
async fn a_bad_request_is_refused_before_anything_runs() {
    let engine = scripted(&[WEATHER_CALL]);
    let app = app(&engine);
    for path in ["/inspect/prepare", "/inspect/run"] {
        let (status, text) = post(&app, path, &json!({"messages": "hello"})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {text}");
        assert!(text.contains("\"error\""), "{text}");
    }
    assert!(engine.generations().is_empty());
}

#[tokio::test]
async fn the_page_loads_without_the_key_and_the_endpoints_need_it() {
    let options = ServerOptions {
        api_key: Some("sk-test".into()),
        ..ServerOptions::default()
    };
    let app = app_with(&scripted(&[]), options);
    for (path, needle) in [
        ("/inspect", "/inspect/page.js"),
        ("/inspect/page.js", "/inspect/run"),
        ("/inspect/page.css", ".special"),
    ] {
        let request = Request::get(path)
            .body(axum::body::Body::empty())
            .expect("a request");
        let (status, text) = send(&app, request).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(text.contains(needle), "{path}");
    }
    let (status, _) = post(&app, "/inspect/prepare", &weather_request()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let keyed = Request::post("/inspect/prepare")
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test")
        .body(axum::body::Body::from(weather_request().to_string()))
        .expect("a request");
    let (status, text) = send(&app, keyed).await;
    assert_eq!(status, StatusCode::OK, "{text}");
}

#[tokio::test]
async fn an_engine_failure_ends_the_run_with_an_error_event() {
    let engine = scripted(&["plain text, not the forced call"]);
    let (status, text) = post(&app(&engine), "/inspect/run", &required(weather_request())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let (name, error) = events.last().expect("events");
    assert_eq!(name, "error", "{events:?}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{error}"
    );
    assert!(!events.iter().any(|(name, _)| name == "done"), "{events:?}");
}
