//! `/v1/messages` answering as Anthropic's Messages API does, over the scripted engine:
//! the request mapped onto the chat path (tools, every `tool_choice`, `tool_use` then
//! `tool_result`, `stop_sequences`), content blocks whole and streamed (the stream's
//! events rebuild the whole message), the event order, `x-api-key`, and bad requests in
//! Anthropic's error shape and statuses; and what real agent clients send: Claude Code's
//! system turns and `HEAD /`, server tools beside client tools, the SDKs' `thread`.

use crate::common;
use crate::common::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Map, Value};
use toolbridge_server::ServerOptions;

const PATH: &str = "/v1/messages";

/// The chat tools of the harness in Anthropic's shape.
fn tools() -> Value {
    let chat_tools = common::tools();
    let anthropic = chat_tools.as_array().expect("tools").iter().map(|tool| {
        let function = &tool["function"];
        json!({
            "name": function["name"],
            "description": function["description"],
            "input_schema": function["parameters"],
        })
    });
    Value::Array(anthropic.collect())
}

fn weather(tool_choice: Value) -> Value {
    json!({
        "model": MODEL_ID,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": tools(),
        "tool_choice": tool_choice,
    })
}

/// `content` with each `tool_use` id replaced by its position.
fn without_ids(content: &Value) -> Value {
    let blocks = content.as_array().expect("content blocks");
    let blocks = blocks.iter().enumerate().map(|(n, block)| {
        let mut block = block.clone();
        if block["type"] == "tool_use" {
            assert!(block["id"].as_str().is_some_and(|id| !id.is_empty()));
            block["id"] = json!(n);
        }
        block
    });
    Value::Array(blocks.collect())
}

/// The message a client rebuilds from the stream, as the Anthropic SDK's
/// `accumulate_event` does: `message_start`'s message, blocks appended by
/// `content_block_start`, text and thinking grown by their deltas, a tool's input parsed
/// from its JSON pieces, and the stop reason and usage from `message_delta`.
fn rebuild(events: &[(String, Value)]) -> Value {
    let mut message = Value::Null;
    let mut json_pieces: Map<String, Value> = Map::new();
    for (name, event) in events {
        let n = event["index"].as_u64().unwrap_or(0) as usize;
        match name.as_str() {
            "message_start" => message = event["message"].clone(),
            "content_block_start" => {
                let content = message["content"].as_array_mut().expect("content");
                assert_eq!(n, content.len(), "blocks start in order");
                content.push(event["content_block"].clone());
            }
            "content_block_delta" => {
                let block = &mut message["content"][n];
                let delta = &event["delta"];
                let grow = |slot: &mut Value, piece: &Value| {
                    *slot = json!(format!(
                        "{}{}",
                        slot.as_str().unwrap_or(""),
                        piece.as_str().unwrap_or("")
                    ));
                };
                match delta["type"].as_str() {
                    Some("text_delta") => grow(&mut block["text"], &delta["text"]),
                    Some("thinking_delta") => grow(&mut block["thinking"], &delta["thinking"]),
                    Some("input_json_delta") => {
                        let pieces = json_pieces.entry(n.to_string()).or_insert(json!(""));
                        grow(pieces, &delta["partial_json"]);
                        let text = pieces.as_str().unwrap_or("");
                        block["input"] = serde_json::from_str(text).unwrap_or(Value::Null);
                    }
                    other => panic!("unknown delta {other:?}"),
                }
            }
            "message_delta" => {
                message["stop_reason"] = event["delta"]["stop_reason"].clone();
                message["stop_sequence"] = event["delta"]["stop_sequence"].clone();
                message["usage"] = event["usage"].clone();
            }
            _ => {}
        }
    }
    message
}

/// The whole answer to `body` and its streamed events, checked to agree.
async fn whole_and_streamed(output: &str, body: &Value) -> (Value, Vec<(String, Value)>) {
    let (whole, events) = whole_then_streamed(PATH, output, body).await;
    let rebuilt = rebuild(&events);
    assert_eq!(
        without_ids(&rebuilt["content"]),
        without_ids(&whole["content"])
    );
    for field in ["stop_reason", "stop_sequence", "model", "role", "type"] {
        assert_eq!(rebuilt[field], whole[field], "{field}");
    }
    // The second run may read its prompt from the cache: the prompt's total is the same.
    let prompt = |usage: &Value| {
        usage["input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
    };
    assert_eq!(prompt(&rebuilt["usage"]), prompt(&whole["usage"]));
    assert_eq!(
        rebuilt["usage"]["output_tokens"],
        whole["usage"]["output_tokens"]
    );
    (whole, events)
}

#[tokio::test]
async fn a_forced_call_is_a_tool_use_block() {
    let body = weather(json!({"type": "any"}));
    let (whole, events) = whole_and_streamed(WEATHER_CALL, &body).await;
    assert_eq!(whole["type"], "message");
    assert!(whole["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("msg_")));
    assert_eq!(whole["stop_reason"], "tool_use");
    assert_eq!(
        without_ids(&whole["content"]),
        json!([{"type": "tool_use", "id": 0, "name": "get_weather", "input": {"city": "Paris"}}])
    );
    assert!(whole["usage"]["input_tokens"]
        .as_u64()
        .is_some_and(|n| n > 0));
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    insta::assert_snapshot!(names.join("\n"), @r"
    message_start
    content_block_start
    content_block_delta
    content_block_stop
    message_delta
    message_stop
    ");
}

#[tokio::test]
async fn thinking_text_and_calls_are_blocks_in_order() {
    let output = reasoning_text_and_two_calls();
    let (whole, _) = whole_and_streamed(&output, &weather(json!({"type": "auto"}))).await;
    assert_eq!(
        without_ids(&whole["content"]),
        json!([
            {"type": "thinking", "thinking": "Paris, then Lyon.", "signature": ""},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": 2, "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": 3, "name": "get_weather", "input": {"city": "Lyon"}}
        ])
    );
}

#[tokio::test]
async fn text_ends_the_turn_and_max_tokens_cuts_it() {
    let body = json!({"max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]});
    let (whole, _) = whole_and_streamed("Hello!", &body).await;
    assert_eq!(whole["stop_reason"], "end_turn");
    assert_eq!(
        whole["content"],
        json!([{"type": "text", "text": "Hello!"}])
    );
    let body = json!({"max_tokens": 2, "messages": [{"role": "user", "content": "Hi"}]});
    let (whole, _) = whole_and_streamed("a long answer", &body).await;
    assert_eq!(whole["stop_reason"], "max_tokens");
    assert_eq!(whole["content"][0]["text"], "a long a");
}

/// A forced call cut by `max_tokens` is a `tool_use` block with the arguments written so
/// far (not an object yet, so kept under `_raw`), and `stop_reason: max_tokens`; streamed,
/// its `partial_json` pieces are those arguments.
#[tokio::test]
async fn a_call_cut_by_max_tokens_is_a_tool_use_block_so_far() {
    let mut body = weather(json!({"type": "any"}));
    body["max_tokens"] = json!(15);
    let (whole, events) = whole_then_streamed(PATH, WEATHER_CALL, &body).await;
    assert_eq!(whole["stop_reason"], "max_tokens");
    assert_eq!(
        without_ids(&whole["content"]),
        json!([{"type": "tool_use", "id": 0, "name": "get_weather",
                "input": {"_raw": "{\"city\": \"P"}}])
    );
    let partial_json: String = events
        .iter()
        .filter_map(|(_, event)| event["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(partial_json, "{\"city\": \"P");
    assert_eq!(rebuild(&events)["stop_reason"], "max_tokens");
}

#[tokio::test]
async fn tool_choice_and_stops_reach_the_engine() {
    let cases = [
        (json!({"type": "auto"}), Some(true)),
        (json!({"type": "any"}), Some(false)),
        (json!({"type": "tool", "name": "get_weather"}), Some(false)),
        (json!({"type": "none"}), None),
    ];
    for (choice, lazy) in cases {
        let engine = scripted(&[WEATHER_CALL]);
        let mut body = weather(choice.clone());
        body["stop_sequences"] = json!(["END"]);
        let (status, answer) = send_json(&app(&engine), PATH, &body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let generation = engine.generation();
        assert_eq!(
            generation.constraint.map(|constraint| constraint.is_lazy()),
            lazy,
            "{choice}"
        );
        assert!(generation.stop.contains(&"END".to_owned()));
        assert_eq!(generation.sampling.max_tokens, Some(64));
    }
}

#[tokio::test]
async fn a_tool_result_goes_back_into_the_prompt() {
    let engine = scripted(&["It is 21 degrees in Paris."]);
    let body = json!({
        "max_tokens": 64,
        "system": "Answer briefly.",
        "messages": [
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21 degrees, sunny"}
            ]}
        ],
        "tools": tools(),
    });
    let (_, answer) = send_json(&app(&engine), PATH, &body).await;
    assert_eq!(answer["content"][0]["text"], "It is 21 degrees in Paris.");
    let prompt = engine.generation().prompt;
    assert!(
        prompt.starts_with("<|im_start|>system\nAnswer briefly."),
        "{prompt}"
    );
    assert_weather_turn_in_prompt(&prompt);
}

#[tokio::test]
async fn claude_codes_system_turns_and_probe_are_answered() {
    let engine = scripted(&["Bonjour."]);
    let app = app(&engine);
    let body = json!({
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "The user switched to French."},
            {"role": "user", "content": [{"type": "text", "text": "Salut"}]},
        ],
    });
    let request = Request::post(format!("{PATH}?beta=true"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request");
    let (status, text) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let prompt = engine.generation().prompt;
    assert!(
        prompt.contains("Hello.<|im_end|>\n<|im_start|>system\nThe user switched to French.<|im_end|>\n<|im_start|>user\nSalut"),
        "{prompt}"
    );
    for method in ["HEAD", "GET"] {
        let request = Request::builder().method(method).uri("/");
        let (status, text) = send(&app, request.body(Body::empty()).expect("a request")).await;
        assert_eq!(status, StatusCode::OK, "{method} /: {text}");
        assert_eq!(text.is_empty(), method == "HEAD", "{method} /: {text}");
    }
}

#[tokio::test]
async fn server_tools_are_named_as_left_out_and_client_tools_are_called() {
    let call =
        "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>";
    let engine = scripted(&[call]);
    let mut declared = tools();
    if let Value::Array(tools) = &mut declared {
        tools.push(json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 3}));
        tools.push(json!({"type": "bash_20250124", "name": "bash"}));
        tools.push(json!({"type": "code_execution_20250825", "name": "code_execution"}));
    }
    let body = json!({
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "List the files."}],
        "tools": declared,
        "tool_choice": {"type": "tool", "name": "bash"},
    });
    let (status, headers, text) = exchange(&app(&engine), post_json(PATH, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        ignored_tools(&headers),
        Some("web_search_20250305, code_execution_20250825")
    );
    let answer: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        without_ids(&answer["content"]),
        json!([{"type": "tool_use", "id": 0, "name": "bash", "input": {"command": "ls"}}])
    );
    let prompt = engine.generation().prompt;
    assert!(prompt.contains("\"name\": \"bash\""), "{prompt}");
    assert!(!prompt.contains("web_search"), "{prompt}");
}

#[tokio::test]
async fn bad_requests_get_anthropic_errors() {
    let app = app(&scripted(&[]));
    let cases = [
        ("no messages", json!({"max_tokens": 8})),
        (
            "bad role",
            json!({"messages": [{"role": "tool", "content": "x"}]}),
        ),
        (
            "thread",
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}], "thread": {"type": "continue", "previous_message_id": "msg_1"}}),
        ),
        (
            "unknown tool",
            json!({"messages": [{"role": "user", "content": "x"}], "tools": tools(), "tool_choice": {"type": "tool", "name": "nope"}}),
        ),
        (
            "unknown choice",
            json!({"messages": [{"role": "user", "content": "x"}], "tools": tools(), "tool_choice": {"type": "some"}}),
        ),
        (
            "bad max_tokens",
            json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": "many"}),
        ),
    ];
    insta::assert_snapshot!(pretty(&bad_request_answers(&app, PATH, &cases).await));
}

#[tokio::test]
async fn the_key_is_read_from_x_api_key_and_refusals_are_anthropics() {
    let options = ServerOptions {
        api_key: Some("sk-test".into()),
        max_body_bytes: 4096,
        ..ServerOptions::default()
    };
    let app = app_with(&scripted(&["Hi.", "Hi."]), options);
    let body = json!({"max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]});
    let request = |key: Option<(&str, &str)>, body: String| {
        let builder = Request::post(PATH).header("content-type", "application/json");
        let builder = match key {
            Some((header, value)) => builder.header(header, value),
            None => builder,
        };
        builder.body(Body::from(body)).expect("a request")
    };
    let mut answers = Map::new();
    for (label, key, status) in [
        ("no key", None, StatusCode::UNAUTHORIZED),
        (
            "wrong key",
            Some(("x-api-key", "sk-nope")),
            StatusCode::UNAUTHORIZED,
        ),
        ("x-api-key", Some(("x-api-key", "sk-test")), StatusCode::OK),
        (
            "bearer",
            Some(("authorization", "Bearer sk-test")),
            StatusCode::OK,
        ),
    ] {
        let (answered, text) = send(&app, request(key, body.to_string())).await;
        assert_eq!(answered, status, "{label}: {text}");
        if status != StatusCode::OK {
            answers.insert(label.to_owned(), serde_json::from_str(&text).expect("JSON"));
        }
    }
    for (method, path, status) in [
        ("GET", PATH, StatusCode::METHOD_NOT_ALLOWED),
        ("POST", "/v1/messages/batches", StatusCode::NOT_FOUND),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("x-api-key", "sk-test");
        let (answered, text) = send(&app, request.body(Body::empty()).expect("a request")).await;
        assert_eq!(answered, status, "{text}");
        answers.insert(
            format!("{method} {path}"),
            serde_json::from_str(&text).expect("JSON"),
        );
    }
    let huge = json!({"messages": [{"role": "user", "content": "x".repeat(5000)}]});
    let (status, text) = send(
        &app,
        request(Some(("x-api-key", "sk-test")), huge.to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    answers.insert(
        "too large".into(),
        serde_json::from_str(&text).expect("JSON"),
    );
    insta::assert_snapshot!(pretty(&Value::Object(answers)));
}

#[tokio::test]
async fn mangled_requests_get_anthropic_4xx_errors_or_answers() {
    let app = app(&scripted(&[WEATHER_CALL; 400]));
    let body = json!({
        "model": MODEL_ID,
        "max_tokens": 20,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}
        ],
        "tools": tools(),
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "stop_sequences": ["END"],
        "thinking": {"type": "disabled"},
    });
    let variants = mangled(&body);
    assert!(variants.len() > 200, "{}", variants.len());
    for variant in &variants {
        let (status, answer) = send_json(&app, PATH, variant).await;
        let clean = status.is_success()
            || (status.is_client_error()
                && answer["type"] == "error"
                && answer["error"]["type"].is_string());
        assert!(clean, "{status} {answer} for {variant}");
    }
}
