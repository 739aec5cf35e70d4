//! `/v1/responses` answering as OpenAI's Responses API does, over the scripted engine:
//! the request mapped onto the chat path (tools, every `tool_choice`, a second turn with
//! `function_call_output`), output items whole and streamed (the stream's events rebuild
//! the whole answer), the event order, and bad requests in OpenAI's error shape; and what
//! real agent clients send: Codex's namespaced and hosted tools, an answer sent back as it
//! came (the Agents SDK, pydantic-ai), content parts and `developer` messages.

use crate::common;
use crate::common::*;
use axum::http::StatusCode;
use serde_json::{json, Value};

const PATH: &str = "/v1/responses";

/// The chat tools of the harness in the Responses shape (flat: `name` beside `type`).
fn tools() -> Value {
    let chat_tools = common::tools();
    let flat = chat_tools.as_array().expect("tools").iter().map(|tool| {
        let mut flat = tool["function"].as_object().cloned().unwrap_or_default();
        flat.insert("type".into(), json!("function"));
        Value::Object(flat)
    });
    Value::Array(flat.collect())
}

fn weather(tool_choice: Value) -> Value {
    json!({
        "model": MODEL_ID,
        "input": "What is the weather in Paris?",
        "tools": tools(),
        "tool_choice": tool_choice,
    })
}

/// `output` with each item's random ids replaced by their kind and position.
fn without_ids(output: &Value) -> Value {
    let items = output.as_array().expect("output items");
    let items = items.iter().enumerate().map(|(n, item)| {
        let mut item = item.clone();
        item["id"] = json!(format!("item {n}"));
        if item.get("call_id").is_some() {
            assert!(item["call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("call_")));
            item["call_id"] = json!(format!("call {n}"));
        }
        item
    });
    Value::Array(items.collect())
}

/// The output a client rebuilds from the stream's item and delta events, as the OpenAI
/// SDK's `ResponseStreamState` does: items added at their index, parts appended, text and
/// arguments grown by their deltas, statuses from the items' `done` events.
fn rebuild(events: &[(String, Value)]) -> Value {
    let mut output: Vec<Value> = Vec::new();
    for (name, event) in events {
        let n = event["output_index"].as_u64().unwrap_or(0) as usize;
        let append = |slot: &mut Value, delta: &Value| {
            let text = format!(
                "{}{}",
                slot.as_str().unwrap_or(""),
                delta.as_str().unwrap_or("")
            );
            *slot = Value::String(text);
        };
        match name.as_str() {
            "response.output_item.added" => {
                assert_eq!(n, output.len(), "items are added in order");
                output.push(event["item"].clone());
            }
            "response.content_part.added" => {
                let content = output[n]["content"].as_array_mut().expect("content");
                content.push(event["part"].clone());
            }
            "response.output_text.delta" | "response.reasoning_text.delta" => {
                let index = event["content_index"].as_u64().unwrap_or(0) as usize;
                append(&mut output[n]["content"][index]["text"], &event["delta"]);
            }
            "response.function_call_arguments.delta" => {
                append(&mut output[n]["arguments"], &event["delta"])
            }
            "response.output_item.done" => {
                output[n]["status"] = event["item"]["status"].clone();
            }
            _ => {}
        }
    }
    Value::Array(output)
}

/// The whole answer to `body`, and its streamed events, checked to agree: the events
/// rebuild the whole output, and the last event's response is the whole response.
async fn whole_and_streamed(output: &str, body: &Value) -> (Value, Vec<(String, Value)>) {
    let (whole, events) = whole_then_streamed(PATH, output, body).await;
    let expected = without_ids(&whole["output"]);
    assert_eq!(without_ids(&rebuild(&events)), expected);
    let (_, last) = events.last().expect("events");
    assert_eq!(without_ids(&last["response"]["output"]), expected);
    assert_eq!(last["response"]["status"], whole["status"]);
    let sequence: Vec<u64> = events
        .iter()
        .map(|(_, event)| {
            event["sequence_number"]
                .as_u64()
                .expect("a sequence number")
        })
        .collect();
    assert_eq!(sequence, (0..events.len() as u64).collect::<Vec<_>>());
    (whole, events)
}

#[tokio::test]
async fn a_forced_call_is_a_function_call_item() {
    let body = weather(json!("required"));
    let (whole, events) = whole_and_streamed(WEATHER_CALL, &body).await;
    assert_eq!(whole["object"], "response");
    assert_eq!(whole["status"], "completed");
    assert!(whole["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("resp_")));
    assert_eq!(
        without_ids(&whole["output"]),
        json!([{
            "id": "item 0", "type": "function_call", "status": "completed",
            "call_id": "call 0", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"
        }])
    );
    assert_eq!(whole["tool_choice"], "required");
    assert_eq!(whole["store"], false);
    let usage = &whole["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["input_tokens"].as_u64().unwrap_or(0)
                + usage["output_tokens"].as_u64().unwrap_or(0)
        )
    );
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    insta::assert_snapshot!(names.join("\n"), @r"
    response.created
    response.in_progress
    response.output_item.added
    response.function_call_arguments.delta
    response.function_call_arguments.done
    response.output_item.done
    response.completed
    ");
}

#[tokio::test]
async fn reasoning_text_and_calls_are_items_in_order() {
    let output = reasoning_text_and_two_calls();
    let (whole, events) = whole_and_streamed(&output, &weather(json!("auto"))).await;
    let kinds: Vec<&str> = whole["output"]
        .as_array()
        .expect("output")
        .iter()
        .filter_map(|item| item["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["reasoning", "message", "function_call", "function_call"]
    );
    assert_eq!(
        whole["output"][0]["content"][0]["text"],
        "Paris, then Lyon."
    );
    assert_eq!(whole["output"][1]["content"][0]["text"], "Let me look.");
    assert_eq!(whole["output"][3]["arguments"], "{\"city\": \"Lyon\"}");
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert!(names.contains(&"response.reasoning_text.delta"));
    assert!(names.contains(&"response.output_text.done"));
}

#[tokio::test]
async fn a_text_answer_is_a_message_and_max_output_tokens_makes_it_incomplete() {
    let body = json!({"input": "Hi", "max_output_tokens": 2});
    let (whole, events) = whole_and_streamed("a long answer", &body).await;
    assert_eq!(whole["status"], "incomplete");
    assert_eq!(
        whole["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
    assert_eq!(whole["output"][0]["content"][0]["text"], "a long a");
    assert_eq!(
        events.last().map(|(name, _)| name.as_str()),
        Some("response.incomplete")
    );

    let (whole, _) = whole_and_streamed("Hello!", &json!({"input": "Hi"})).await;
    assert_eq!(whole["status"], "completed");
    assert_eq!(whole["output"][0]["type"], "message");
    assert_eq!(whole["output"][0]["content"][0]["text"], "Hello!");
}

/// A forced call cut by `max_output_tokens` is a `function_call` item with its arguments
/// as written so far and `status: incomplete`, in an incomplete response; never content.
#[tokio::test]
async fn a_call_cut_by_max_output_tokens_is_an_incomplete_function_call() {
    let mut body = weather(json!("required"));
    body["max_output_tokens"] = json!(15);
    let (whole, events) = whole_and_streamed(WEATHER_CALL, &body).await;
    assert_eq!(whole["status"], "incomplete");
    assert_eq!(
        whole["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
    assert_eq!(
        without_ids(&whole["output"]),
        json!([{
            "id": "item 0", "type": "function_call", "status": "incomplete",
            "call_id": "call 0", "name": "get_weather", "arguments": "{\"city\": \"P"
        }])
    );
    assert_eq!(
        events.last().map(|(name, _)| name.as_str()),
        Some("response.incomplete")
    );
}

#[tokio::test]
async fn tool_choice_reaches_the_engine_as_its_constraint() {
    let cases = [
        (json!("auto"), Some(true)),
        (json!("required"), Some(false)),
        (
            json!({"type": "function", "name": "get_weather"}),
            Some(false),
        ),
        (json!("none"), None),
    ];
    for (choice, lazy) in cases {
        let engine = scripted(&[WEATHER_CALL]);
        let (status, answer) = send_json(&app(&engine), PATH, &weather(choice.clone())).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let constraint = engine.generation().constraint;
        assert_eq!(
            constraint.map(|constraint| constraint.is_lazy()),
            lazy,
            "{choice}"
        );
    }
}

#[tokio::test]
async fn a_function_call_output_goes_back_into_the_prompt() {
    let engine = scripted(&["It is 21 degrees in Paris."]);
    let body = json!({
        "instructions": "Answer briefly.",
        "input": [
            {"role": "user", "content": "What is the weather in Paris?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "21 degrees, sunny"}
        ],
        "tools": tools(),
        "temperature": 0,
    });
    let (_, answer) = send_json(&app(&engine), PATH, &body).await;
    assert_eq!(
        answer["output"][0]["content"][0]["text"],
        "It is 21 degrees in Paris."
    );
    let generation = engine.generation();
    let prompt = generation.prompt;
    assert!(
        prompt.starts_with("<|im_start|>system\nAnswer briefly."),
        "{prompt}"
    );
    assert_weather_turn_in_prompt(&prompt);
    assert_eq!(generation.sampling.temperature, Some(0.0));
}

/// Codex's tools, as `codex exec` sends them: functions, a namespace of functions, and
/// hosted tools.
fn codex_tools() -> Value {
    let mut tools = tools();
    let spawn = json!({"type": "function", "name": "spawn_agent", "description": "Starts a sub-agent.",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}});
    let codex = [
        json!({"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents", "tools": [spawn]}),
        json!({"type": "web_search", "external_web_access": false}),
        json!({"type": "image_generation", "output_format": "png"}),
    ];
    if let Value::Array(tools) = &mut tools {
        tools.extend(codex);
    }
    tools
}

#[tokio::test]
async fn codex_namespaces_are_functions_and_hosted_tools_are_named_as_left_out() {
    let call = "<tool_call>\n{\"name\": \"multi_agent_v1.spawn_agent\", \"arguments\": {\"message\": \"hi\"}}\n</tool_call>";
    let body =
        json!({"input": "Spawn a helper.", "tools": codex_tools(), "tool_choice": "required"});
    let engine = scripted(&[call]);
    let (status, headers, text) = exchange(&app(&engine), post_json(PATH, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        ignored_tools(&headers),
        Some("web_search, image_generation")
    );
    let prompt = engine.generation().prompt;
    assert!(
        prompt.contains("\"name\": \"multi_agent_v1.spawn_agent\""),
        "{prompt}"
    );
    assert!(!prompt.contains("web_search"), "{prompt}");

    let (whole, _) = whole_and_streamed(call, &body).await;
    let item = &whole["output"][0];
    assert_eq!(
        (&item["namespace"], &item["name"]),
        (&json!("multi_agent_v1"), &json!("spawn_agent")),
        "{whole}"
    );

    // The call sent back as it came, with its output, is the history the model wrote.
    let engine = scripted(&["Spawned."]);
    let mut input = vec![
        json!({"role": "user", "content": "Spawn a helper."}),
        item.clone(),
    ];
    input.push(
        json!({"type": "function_call_output", "call_id": item["call_id"], "output": "agent 7"}),
    );
    let body = json!({"input": input, "tools": codex_tools()});
    let (status, answer) = send_json(&app(&engine), PATH, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let prompt = engine.generation().prompt;
    assert!(
        prompt.contains(
            "{\"name\": \"multi_agent_v1.spawn_agent\", \"arguments\": {\"message\": \"hi\"}}"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("<tool_response>\nagent 7\n</tool_response>"),
        "{prompt}"
    );
}

#[tokio::test]
async fn an_answer_sent_back_as_it_came_is_one_assistant_turn() {
    let (whole, _) =
        whole_and_streamed(&reasoning_text_and_two_calls(), &weather(json!("auto"))).await;
    let output = whole["output"].as_array().cloned().expect("output items");
    let results: Vec<Value> = output
        .iter()
        .filter(|item| item["type"] == "function_call")
        .zip(["21 degrees, sunny", "rain"])
        .map(|(call, result)| json!({"type": "function_call_output", "call_id": call["call_id"], "output": result}))
        .collect();
    // As it came ([reasoning, message, call, call]), and calls first as other models answer.
    let mut calls_first = output.clone();
    calls_first.rotate_left(2);
    for answer in [output, calls_first] {
        let engine = scripted(&["Sunny in Paris, rain in Lyon."]);
        let mut input = vec![json!({"role": "user", "content": "Weather in Paris and Lyon?"})];
        input.extend(answer);
        input.extend(results.clone());
        let body = json!({"input": input, "tools": tools()});
        let (status, reply) = send_json(&app(&engine), PATH, &body).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        let prompt = engine.generation().prompt;
        let turn = prompt
            .split("<|im_start|>")
            .find(|turn| turn.starts_with("assistant\n"))
            .expect("an assistant turn");
        assert!(turn.contains("Let me look."), "{prompt}");
        assert_eq!(turn.matches("<tool_call>").count(), 2, "{prompt}");
        assert_weather_turn_in_prompt(&prompt);
        assert!(
            prompt.contains("<tool_response>\nrain\n</tool_response>"),
            "{prompt}"
        );
    }
}

#[tokio::test]
async fn content_parts_and_developer_messages_are_answered() {
    let engine = scripted(&["A red square."]);
    let body = json!({
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Describe images."}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "What is this?"},
                {"type": "input_text", "text": "A picture of mine."},
            ]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "An image.", "annotations": []}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Which colour?"}]},
        ],
    });
    let (status, answer) = send_json(&app(&engine), PATH, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let prompt = engine.generation().prompt;
    for text in [
        "Be brief.",
        "Describe images.",
        "What is this?",
        "An image.",
        "Which colour?",
    ] {
        assert!(prompt.contains(text), "{text} in {prompt}");
    }
}

#[tokio::test]
async fn bad_requests_get_openai_errors() {
    let app = app(&scripted(&[]));
    let cases = [
        ("no input", json!({"model": MODEL_ID})),
        (
            "stored state",
            json!({"input": "x", "previous_response_id": "resp_1"}),
        ),
        (
            "untyped tool",
            json!({"input": "x", "tools": [{"name": "f", "parameters": {"type": "object"}}]}),
        ),
        (
            "unknown tool",
            json!({"input": "x", "tools": tools(), "tool_choice": {"type": "function", "name": "nope"}}),
        ),
        (
            "output without call",
            json!({"input": [{"type": "function_call_output", "output": "x"}]}),
        ),
        (
            "unknown format",
            json!({"input": "x", "text": {"format": {"type": "yaml"}}}),
        ),
    ];
    insta::assert_snapshot!(pretty(&bad_request_answers(&app, PATH, &cases).await));
    let (status, text) = send(&app, post_json(PATH, &json!(null))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
}

#[tokio::test]
async fn mangled_requests_get_openai_4xx_errors_or_answers() {
    let app = app(&scripted(&[WEATHER_CALL; 400]));
    let body = json!({
        "model": MODEL_ID,
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
        ],
        "tools": tools(),
        "tool_choice": {"type": "function", "name": "get_weather"},
        "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}}},
        "max_output_tokens": 20,
    });
    let variants = mangled(&body);
    assert!(variants.len() > 200, "{}", variants.len());
    for variant in &variants {
        let (status, answer) = send_json(&app, PATH, variant).await;
        let clean = status.is_success()
            || (status.is_client_error() && answer["error"]["type"].is_string());
        assert!(clean, "{status} {answer} for {variant}");
    }
}
