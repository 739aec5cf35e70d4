//! `GET /metrics` agrees with what was sent: requests by route and status, tokens, the
//! time-to-first-token and per-token histograms, refusals at a limit, and the queue.

use crate::common::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use toolbridge_server::ServerOptions;

/// The value of the sample `name` (with its labels, as written) in `text`.
fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {name} in:\n{text}"))
}

async fn scrape(app: &axum::Router) -> String {
    let request = Request::get("/metrics")
        .body(Body::empty())
        .expect("a request");
    let (status, text) = send(app, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    text
}

/// The metrics once the last generation's thread has given its slot back (just after its
/// answer was sent).
async fn settled(app: &axum::Router) -> String {
    for _ in 0..500 {
        let text = scrape(app).await;
        if sample(&text, "toolbridge_slots_busy") == 0.0 {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("a slot stayed busy after every answer was sent")
}

#[tokio::test]
async fn metrics_agree_with_what_was_sent() {
    let engine = scripted(&["It is sunny.", WEATHER_CALL]);
    let app = app(&engine);
    let (status, whole) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::OK, "{whole}");
    let mut streamed = weather_request();
    streamed["stream_options"] = json!({"include_usage": true});
    let chunks = stream_chunks(&app, &streamed).await;
    let usage = chunks.last().expect("a usage chunk")["usage"].clone();
    let (status, _) = chat(&app, &json!({"messages": []})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let text = settled(&app).await;
    let route = "toolbridge_requests_total{route=\"/v1/chat/completions\"";
    assert_eq!(sample(&text, &format!("{route},status=\"200\"}}")), 2.0);
    assert_eq!(sample(&text, &format!("{route},status=\"400\"}}")), 1.0);
    let tokens = |answer: &Value, key: &str| answer[key].as_f64().expect("a count");
    assert_eq!(
        sample(&text, "toolbridge_completion_tokens_total"),
        tokens(&whole["usage"], "completion_tokens") + tokens(&usage, "completion_tokens")
    );
    assert_eq!(
        sample(&text, "toolbridge_prompt_tokens_total"),
        tokens(&whole["usage"], "prompt_tokens") + tokens(&usage, "prompt_tokens")
    );
    assert_eq!(
        sample(&text, "toolbridge_time_to_first_token_seconds_count"),
        2.0
    );
    assert!(sample(&text, "toolbridge_time_per_token_seconds_count") >= 1.0);
    assert_eq!(sample(&text, "toolbridge_queue_depth"), 0.0);
    assert_eq!(sample(&text, "toolbridge_slots_total"), 1.0);
    assert_eq!(
        sample(
            &text,
            "toolbridge_budget_refusals_total{kind=\"request_too_large\"}"
        ),
        0.0
    );
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let value = line.rsplit(' ').next().expect("a value");
        assert!(value.parse::<f64>().is_ok(), "not a sample: {line}");
    }
}

#[tokio::test]
async fn refusals_at_a_limit_are_counted_by_kind() {
    let engine = scripted(&[]);
    let options = ServerOptions {
        max_body_bytes: 64,
        ..ServerOptions::default()
    };
    let app = app_with(&engine, options);
    let (status, _) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let text = scrape(&app).await;
    assert_eq!(
        sample(
            &text,
            "toolbridge_budget_refusals_total{kind=\"request_too_large\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &text,
            "toolbridge_requests_total{route=\"/v1/chat/completions\",status=\"413\"}"
        ),
        1.0
    );
}

#[tokio::test]
async fn metrics_need_the_api_key_when_one_is_set() {
    let engine = scripted(&[]);
    let options = ServerOptions {
        api_key: Some("sk-test".into()),
        ..ServerOptions::default()
    };
    let app = app_with(&engine, options);
    let request = Request::get("/metrics")
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&app, request).await.0, StatusCode::UNAUTHORIZED);
    let request = Request::get("/metrics")
        .header("authorization", "Bearer sk-test")
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&app, request).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_preparation_past_its_limit_is_refused_and_counted() {
    let engine = std::sync::Arc::new(Slow(toolbridge_engine::ScriptedEngine::new(
        model_info(),
        ["unused"],
    )));
    let options = ServerOptions {
        prepare_timeout: std::time::Duration::from_millis(50),
        ..ServerOptions::default()
    };
    let app = server_with(engine.clone(), options).router();
    let (status, answer) = chat(&app, &weather_request()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "prepare_timeout", "{answer}");
    let text = scrape(&app).await;
    assert_eq!(
        sample(
            &text,
            "toolbridge_budget_refusals_total{kind=\"prepare_timeout\"}"
        ),
        1.0
    );
    assert!(engine.0.generations().is_empty());
}

#[tokio::test]
async fn the_agent_apis_are_counted_by_their_routes() {
    let app = app(&scripted(&["Hi.", "Hi."]));
    let responses = json!({"input": "Hi"});
    let messages = json!({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]});
    for (path, body) in [("/v1/responses", responses), ("/v1/messages", messages)] {
        let (status, answer) = send_json(&app, path, &body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let (status, _) = send_json(&app, path, &json!({})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
    let text = settled(&app).await;
    for route in ["/v1/responses", "/v1/messages"] {
        for status in [200, 400] {
            let name =
                format!("toolbridge_requests_total{{route=\"{route}\",status=\"{status}\"}}");
            assert_eq!(sample(&text, &name), 1.0, "{name}");
        }
    }
}
