//! A thousand malformed or hostile requests, of more than forty kinds, each answered with
//! a clean OpenAI 4xx error, none reaching the engine, the server healthy after.
//!
//! The kinds: every request `crates/chat/tests/validate/refused.jsonl` lists (wrong roles,
//! results without calls, bad tool names and schemas, out-of-range fields, …), bodies that
//! are not requests (not JSON, not UTF-8, wrong types, nesting past any parser's depth,
//! over the body limit), schemas a grammar cannot enforce, wrong methods and routes; and,
//! to reach a thousand, a valid request cut at every length (each cut is broken JSON).
//! Each answer must come within [`HANG`]: that is a hang detector, not a speed check.

use std::path::Path;
use std::time::Duration;

use crate::common::*;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{json, Value};

/// Longer than any answer here takes on the slowest machine; reaching it is a hang.
const HANG: Duration = Duration::from_secs(60);

/// How many requests are sent.
const TOTAL: usize = 1000;

/// One hostile request: a kind, a method and path, a body.
struct Hostile {
    kind: String,
    method: Method,
    path: &'static str,
    body: Vec<u8>,
}

impl Hostile {
    fn chat(kind: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Hostile {
            kind: kind.into(),
            method: Method::POST,
            path: "/v1/chat/completions",
            body: body.into(),
        }
    }
}

/// The requests `ChatRequest::validate` refuses, from the chat crate's case file.
fn refused_by_validation() -> Vec<Hostile> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../chat/tests/validate/refused.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).expect("a JSON case");
            let kind = format!("validation: {}", case["kind"].as_str().unwrap_or("?"));
            Hostile::chat(kind, case["body"].to_string())
        })
        .collect()
}

/// Bodies that are no request at all, or requests the grammar layer refuses.
fn malformed_bodies() -> Vec<Hostile> {
    let user = json!([{"role": "user", "content": "hi"}]);
    let with = |key: &str, value: Value| {
        let mut body = json!({"messages": user});
        body[key] = value;
        body.to_string()
    };
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let deep_schema = {
        let mut schema = json!({"type": "object"});
        for _ in 0..200 {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        with(
            "tools",
            json!([{"type": "function", "function": {"name": "f", "parameters": schema}}]),
        )
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty body", Vec::new()),
        ("not JSON", b"{not json".to_vec()),
        ("NUL bytes", b"\0\x01\x02".to_vec()),
        ("not UTF-8", b"{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\xfe\"}]}".to_vec()),
        ("a lone surrogate", br#"{"messages": [{"role": "user", "content": "\ud800"}]}"#.to_vec()),
        ("NaN", br#"{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}"#.to_vec()),
        ("JSON null", b"null".to_vec()),
        ("a JSON array", b"[]".to_vec()),
        ("a JSON string", b"\"hi\"".to_vec()),
        ("nesting 100,000 deep", deep(100_000).into_bytes()),
        ("content nested 10,000 deep", format!(r#"{{"messages": [{{"role": "user", "content": {}}}]}}"#, deep(10_000)).into_bytes()),
        ("messages an object", with("messages", json!({"role": "user"})).into_bytes()),
        ("messages a string", br#"{"messages": "hi"}"#.to_vec()),
        ("a message a string", with("messages", json!(["hi"])).into_bytes()),
        ("role a number", with("messages", json!([{"role": 1, "content": "hi"}])).into_bytes()),
        ("content a number", with("messages", json!([{"role": "user", "content": 1}])).into_bytes()),
        ("tools an object", with("tools", json!({"name": "f"})).into_bytes()),
        ("a tool without function", with("tools", json!([{"type": "function"}])).into_bytes()),
        ("a tool of unknown type", with("tools", json!([{"type": "browser", "function": {"name": "f"}}])).into_bytes()),
        ("tool_choice a number", with("tool_choice", json!(3)).into_bytes()),
        ("tool_choice an unknown mode", with("tool_choice", json!("sometimes")).into_bytes()),
        ("stream a string", with("stream", json!("yes")).into_bytes()),
        ("max_tokens negative", with("max_tokens", json!(-5)).into_bytes()),
        ("temperature a string", with("temperature", json!("hot")).into_bytes()),
        ("stop a number", with("stop", json!(7)).into_bytes()),
        ("logit_bias an array", with("logit_bias", json!([1, 2])).into_bytes()),
        ("response_format unknown type", with("response_format", json!({"type": "yaml"})).into_bytes()),
        ("response_format schema of an unknown type", with("response_format", json!({"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "no such type"}}})).into_bytes()),
        ("response_format $ref nowhere", with("response_format", json!({"type": "json_schema", "json_schema": {"name": "r", "schema": {"$ref": "#/nowhere"}}})).into_bytes()),
        ("tool schema $ref nowhere", with("tools", json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}}}])).into_bytes()),
        ("tool schema with a bad minimum", with("tools", json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer", "minimum": "zero"}}}}}])).into_bytes()),
        ("tool schema nested past serde's depth", deep_schema.into_bytes()),
        ("over the body limit", format!(r#"{{"messages": [{{"role": "user", "content": "{}"}}]}}"#, "a".repeat(17 << 20)).into_bytes()),
    ];
    cases
        .into_iter()
        .map(|(kind, body)| Hostile::chat(kind, body))
        .collect()
}

/// Wrong methods and paths.
fn wrong_routes() -> Vec<Hostile> {
    vec![
        Hostile {
            kind: "GET on chat completions".into(),
            method: Method::GET,
            path: "/v1/chat/completions",
            body: Vec::new(),
        },
        Hostile {
            kind: "an unknown route".into(),
            method: Method::POST,
            path: "/v1/chat/complete",
            body: weather_request().to_string().into_bytes(),
        },
    ]
}

/// A valid request cut short at `TOTAL - kinds` lengths spread over its length.
fn truncations(count: usize) -> Vec<Hostile> {
    let whole = weather_request().to_string();
    let cuts: Vec<usize> = (0..whole.len())
        .filter(|&at| whole.is_char_boundary(at))
        .collect();
    (0..count)
        .map(|index| {
            let at = cuts[index * cuts.len() / count];
            Hostile::chat("a valid request cut short", &whole.as_bytes()[..at])
        })
        .collect()
}

async fn answer(app: &axum::Router, hostile: &Hostile) -> (StatusCode, String) {
    let request = Request::builder()
        .method(hostile.method.clone())
        .uri(hostile.path)
        .header("content-type", "application/json")
        .body(Body::from(hostile.body.clone()))
        .expect("a request");
    tokio::time::timeout(HANG, send(app, request))
        .await
        .unwrap_or_else(|_| panic!("{}: no answer within {HANG:?}", hostile.kind))
}

/// `body` is an OpenAI error object: `error` with a message, a type, `param` and `code`.
fn is_openai_error(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let error = &value["error"];
    error["message"].as_str().is_some_and(|m| !m.is_empty())
        && error["type"].is_string()
        && error.get("param").is_some()
        && error.get("code").is_some()
}

#[tokio::test]
async fn a_thousand_hostile_requests_get_clean_4xx_errors() {
    let engine = scripted(&["It is sunny."]);
    let app = app(&engine);
    let mut hostile = refused_by_validation();
    hostile.extend(malformed_bodies());
    hostile.extend(wrong_routes());
    let mut kinds: Vec<String> = hostile.iter().map(|h| h.kind.clone()).collect();
    hostile.extend(truncations(TOTAL - hostile.len()));
    kinds.push("a valid request cut short".into());
    assert!(kinds.len() >= 40, "{} kinds", kinds.len());
    let mut clean = 0;
    for request in &hostile {
        let (status, body) = answer(&app, request).await;
        assert!(
            status.is_client_error(),
            "{}: {status} {}",
            request.kind,
            &body[..body.len().min(300)]
        );
        assert!(is_openai_error(&body), "{}: {body}", request.kind);
        clean += 1;
    }
    println!(
        "hostile requests: {clean}/{} answered with a clean OpenAI 4xx ({} kinds)",
        hostile.len(),
        kinds.len()
    );
    assert!(engine.generations().is_empty(), "none reached the engine");
    let health = Request::get("/health")
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&app, health).await.0, StatusCode::OK);
    let (status, answer) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::OK, "a good request after: {answer}");
}
