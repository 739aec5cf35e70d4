//! `/v1/chat/completions` answering as OpenAI does: tool calls streamed and not (the
//! stream reassembles to the same message), every `tool_choice` reaching the engine as the
//! right constraint, `response_format`, sampling, finish reasons and usage.

use crate::common::*;
use axum::http::StatusCode;
use serde_json::{json, Value};
use toolbridge_grammar::Expr;

/// `message` without its `null` fields, as a client reassembling deltas never sees them.
fn without_nulls(message: &Value) -> Value {
    let object = message.as_object().expect("a message object");
    Value::Object(
        object
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}

#[tokio::test]
async fn a_tool_call_is_answered_as_openai_answers_it() {
    let engine = scripted(&[WEATHER_CALL]);
    let (status, answer) = chat(&app(&engine), &weather_request()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], MODEL_ID);
    assert!(answer["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("chatcmpl-")));
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        without_ids(choice["message"].clone()),
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": 0,
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
            }],
            "refusal": null
        })
    );
    let usage = &answer["usage"];
    assert!(usage["prompt_tokens"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["prompt_tokens"].as_u64().unwrap_or(0)
                + usage["completion_tokens"].as_u64().unwrap_or(0)
        )
    );
}

#[tokio::test]
async fn a_streamed_call_reassembles_to_the_non_streamed_message() {
    let outputs = [
        WEATHER_CALL.to_owned(),
        WEATHER_CALL.to_owned(),
        format!(
            "Let me look.\n{WEATHER_CALL}\n{}",
            WEATHER_CALL.replace("Paris", "Lyon")
        ),
        format!(
            "Let me look.\n{WEATHER_CALL}\n{}",
            WEATHER_CALL.replace("Paris", "Lyon")
        ),
    ];
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let engine = scripted(&outputs);
    let app = app(&engine);
    for expected_calls in [1, 2] {
        let (_, answer) = chat(&app, &weather_request()).await;
        let chunks = stream_chunks(&app, &weather_request()).await;
        let message = &answer["choices"][0]["message"];
        assert_eq!(
            without_ids(reassemble(&chunks)),
            without_ids(without_nulls(message)),
        );
        assert_eq!(
            message["tool_calls"].as_array().map(Vec::len),
            Some(expected_calls)
        );
        assert_eq!(stream_finish_reason(&chunks), "tool_calls");
        for chunk in &chunks {
            assert_eq!(chunk["object"], "chat.completion.chunk");
            assert_eq!(chunk["id"], chunks[0]["id"], "one id for the whole stream");
            assert!(chunk.get("usage").is_none(), "usage was not asked for");
        }
    }
}

#[tokio::test]
async fn a_call_streams_opening_with_its_name_then_argument_fragments() {
    let engine = scripted(&[WEATHER_CALL]);
    let chunks = stream_chunks(&app(&engine), &weather_request()).await;
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    let (first, rest) = calls.split_first().expect("call deltas");
    assert_eq!(first["index"], 0);
    assert_eq!(first["type"], "function");
    assert_eq!(first["function"]["name"], "get_weather");
    assert!(first["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("call_")));
    assert!(!rest.is_empty(), "arguments follow in fragments");
    for fragment in rest {
        assert_eq!(fragment["index"], 0);
        assert!(fragment.get("id").is_none() && fragment["function"].get("name").is_none());
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
}

#[tokio::test]
async fn a_stream_opens_at_the_first_token_before_the_call_is_whole() {
    let engine = scripted(&[WEATHER_CALL]);
    let chunks = stream_chunks(&app(&engine), &weather_request()).await;
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant"})
    );
    assert!(chunks[1..]
        .iter()
        .all(|chunk| chunk["choices"][0]["delta"].get("role").is_none()));
    assert_eq!(
        reassemble(&chunks)["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
}

#[tokio::test]
async fn text_answers_stream_and_finish_with_stop() {
    let engine = scripted(&["Hello there!", "Hello there!"]);
    let app = app(&engine);
    let (_, answer) = chat(
        &app,
        &json!({"messages": [{"role": "user", "content": "Hi"}]}),
    )
    .await;
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello there!");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    let chunks = stream_chunks(
        &app,
        &json!({"messages": [{"role": "user", "content": "Hi"}]}),
    )
    .await;
    assert_eq!(reassemble(&chunks)["content"], "Hello there!");
    assert_eq!(stream_finish_reason(&chunks), "stop");
}

#[tokio::test]
async fn stream_usage_comes_last_when_asked_for() {
    let engine = scripted(&["Hello there!"]);
    let body = json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "stream_options": {"include_usage": true},
    });
    let chunks = stream_chunks(&app(&engine), &body).await;
    let (last, rest) = chunks.split_last().expect("chunks");
    assert_eq!(last["choices"], json!([]));
    assert_eq!(
        last["usage"]["completion_tokens"], 3,
        "12 characters in 4-character pieces"
    );
    assert!(rest
        .iter()
        .all(|chunk| chunk["usage"].is_null() && chunk.get("usage").is_some()));
}

#[tokio::test]
async fn max_tokens_finishes_with_length() {
    let engine = scripted(&["a long answer that goes on", "a long answer that goes on"]);
    let app = app(&engine);
    let body = json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2});
    let (_, answer) = chat(&app, &body).await;
    assert_eq!(answer["choices"][0]["finish_reason"], "length");
    assert_eq!(answer["choices"][0]["message"]["content"], "a long a");
    assert_eq!(
        stream_finish_reason(&stream_chunks(&app, &body).await),
        "length"
    );
}

/// A forced call cut by `max_tokens` is answered as OpenAI answers it: the call so far,
/// its arguments as written (not repaired), `finish_reason: length`; never its markup as
/// content. Streamed, the deltas reassemble to the same message.
#[tokio::test]
async fn a_call_cut_by_max_tokens_is_the_call_so_far() {
    let max_tokens = 15;
    let cut = 4 * max_tokens;
    let arguments = &WEATHER_CALL[WEATHER_CALL.find("{\"city").expect("arguments")..cut];
    assert_eq!(arguments, "{\"city\": \"P");
    let engine = scripted(&[WEATHER_CALL, WEATHER_CALL]);
    let app = app(&engine);
    let mut body = weather_request();
    body["tool_choice"] = json!("required");
    body["max_tokens"] = json!(max_tokens);
    let (status, answer) = chat(&app, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "length");
    let message = &choice["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(message["tool_calls"][0]["function"]["arguments"], arguments);
    let chunks = stream_chunks(&app, &body).await;
    assert_eq!(stream_finish_reason(&chunks), "length");
    assert_eq!(
        without_ids(reassemble(&chunks)),
        without_ids(without_nulls(message))
    );
}

/// Cut before its name is complete, a call is no call, and its markup no content: the
/// answer is empty, cut by the limit.
#[tokio::test]
async fn a_call_cut_before_its_name_is_complete_is_nothing() {
    let engine = scripted(&[WEATHER_CALL]);
    let mut body = weather_request();
    body["tool_choice"] = json!("required");
    body["max_tokens"] = json!(6);
    let (_, answer) = chat(&app(&engine), &body).await;
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "length");
    assert_eq!(
        without_nulls(&choice["message"]),
        json!({"role": "assistant", "content": ""})
    );
}

/// After a call, a model that writes on what its client cannot see (blank space, held as
/// layout) is ended after `UNSEEN_AFTER_CALL` pieces, counted, not timed: blank space ends
/// the answer as its calls. A second call that never closes is seen as it is written (the
/// grammar holds the model to the call syntax, so calls stream): it runs to the token limit
/// and is a call cut by the limit.
#[tokio::test]
async fn what_a_client_cannot_see_after_a_call_ends_the_generation() {
    let unseen = toolbridge_server::UNSEEN_AFTER_CALL;
    let call_pieces = WEATHER_CALL.len().div_ceil(4);
    let blank = format!("{WEATHER_CALL}{}", "\n   ".repeat(4 * unseen));
    let endless = format!(
        "{WEATHER_CALL}\n<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{}",
        "la ".repeat(8 * unseen)
    );
    let cases = [
        (&blank, "tool_calls", 1, call_pieces + unseen + 16),
        (&endless, "length", 2, endless.len() / 4),
    ];
    for (output, finish, calls, most_pieces) in cases {
        // A limit the script exceeds, so it is not checked against the grammar whole.
        let engine = scripted(&[output.as_str()]);
        let mut body = weather_request();
        body["max_tokens"] = json!(output.len() / 4 - 1);
        body["stream_options"] = json!({"include_usage": true});
        let chunks = stream_chunks(&app(&engine), &body).await;
        assert_eq!(
            engine.finished(),
            [toolbridge_engine::FinishReason::Cancelled]
        );
        let usage = chunks.last().map(|chunk| chunk["usage"].clone());
        let pieces = usage.and_then(|usage| usage["completion_tokens"].as_u64());
        assert!(
            pieces.is_some_and(|pieces| pieces as usize <= most_pieces),
            "{pieces:?} pieces generated"
        );
        assert_eq!(stream_finish_reason(&chunks), finish);
        let message = reassemble(&chunks);
        let written = message["tool_calls"].as_array().map_or(0, Vec::len);
        assert_eq!(written, calls, "{message}");
        assert_eq!(message["content"].as_str().unwrap_or(""), "", "{message}");
        if calls == 2 {
            let arguments = message["tool_calls"][1]["function"]["arguments"].as_str();
            assert!(arguments.is_some_and(|text| text.starts_with("{\"city\": \"la la ")));
        }
    }
}

#[tokio::test]
async fn tool_choice_reaches_the_engine_as_its_constraint() {
    let with_choice = |choice: Value| {
        let mut body = weather_request();
        body["tool_choice"] = choice;
        body
    };
    // auto: lazy, both tools.
    let engine = scripted(&[WEATHER_CALL]);
    chat(&app(&engine), &weather_request()).await;
    let constraint = engine.generation().constraint.expect("a constraint");
    assert!(constraint.is_lazy());
    assert!(format!("{:?}", constraint.grammar()).contains("\"add\""));

    // required: from the first byte.
    let engine = scripted(&[WEATHER_CALL]);
    let (status, _) = chat(&app(&engine), &with_choice(json!("required"))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!engine
        .generation()
        .constraint
        .expect("a constraint")
        .is_lazy());

    // a named function: from the first byte, only that tool.
    let engine = scripted(&[WEATHER_CALL]);
    let named = json!({"type": "function", "function": {"name": "get_weather"}});
    let (_, answer) = chat(&app(&engine), &with_choice(named)).await;
    assert_eq!(
        answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    let constraint = engine.generation().constraint.expect("a constraint");
    assert!(!constraint.is_lazy());
    assert!(!format!("{:?}", constraint.grammar()).contains("\"add\""));

    // allowed_tools in auto mode: lazy, only those tools.
    let engine = scripted(&["No need."]);
    let allowed = json!({"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "add"}}]
    }});
    chat(&app(&engine), &with_choice(allowed)).await;
    let constraint = engine.generation().constraint.expect("a constraint");
    assert!(constraint.is_lazy());
    assert!(!format!("{:?}", constraint.grammar()).contains("get_weather"));

    // none: no constraint, and the prompt shows no tools.
    let engine = scripted(&["It is sunny."]);
    let (_, answer) = chat(&app(&engine), &with_choice(json!("none"))).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "It is sunny.");
    let generation = engine.generation();
    assert!(generation.constraint.is_none());
    assert!(
        !generation.prompt.contains("get_weather"),
        "{}",
        generation.prompt
    );
}

#[tokio::test]
async fn parallel_tool_calls_false_allows_one_call() {
    let engine = scripted(&[WEATHER_CALL]);
    let mut body = weather_request();
    body["parallel_tool_calls"] = json!(false);
    chat(&app(&engine), &body).await;
    let constraint = engine.generation().constraint.expect("a constraint");
    let root = &constraint.grammar().rule("root").expect("a root").body;
    let mut repeats = 0;
    root.walk(&mut |expr| repeats += usize::from(matches!(expr, Expr::Repeat { .. })));
    assert_eq!(repeats, 0, "{root:?}");
}

/// A model looping on calls (bare JSON, one per line) is stopped at the first repeat: the
/// answer keeps the calls before it and ends as a tool-call answer, streamed or not.
#[tokio::test]
async fn a_repeated_call_ends_the_answer() {
    let paris = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}";
    let rome = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}";
    let looping = [paris, rome].repeat(20).join("\n");
    for stream in [false, true] {
        let engine = scripted(&[looping.as_str()]);
        let (finish, message) = if stream {
            let chunks = stream_chunks(&app(&engine), &weather_request()).await;
            (stream_finish_reason(&chunks), reassemble(&chunks))
        } else {
            let choice = chat(&app(&engine), &weather_request()).await.1["choices"][0].clone();
            (choice["finish_reason"].clone(), choice["message"].clone())
        };
        assert_eq!(finish, "tool_calls", "{message}");
        let cities: Vec<Value> = message["tool_calls"]
            .as_array()
            .expect("calls")
            .iter()
            .map(|call| {
                let arguments = call["function"]["arguments"].as_str().expect("a string");
                serde_json::from_str::<Value>(arguments).expect("JSON")["city"].clone()
            })
            .collect();
        assert_eq!(cities, [json!("Paris"), json!("Rome")], "stream: {stream}");
        assert!(message["content"].is_null(), "{message}");
    }
}

#[tokio::test]
async fn a_json_schema_answer_is_constrained_and_shown() {
    let engine = scripted(&["{\"city\": \"Paris\", \"celsius\": 21}"]);
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"],
        "additionalProperties": false
    });
    let body = json!({
        "messages": [{"role": "user", "content": "Weather in Paris as JSON"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "weather", "schema": schema}},
    });
    let (status, answer) = chat(&app(&engine), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");
    let value: Value = serde_json::from_str(content).expect("JSON content");
    assert_eq!(value["celsius"], 21);
    let generation = engine.generation();
    let constraint = generation.constraint.expect("the schema as constraint");
    assert!(!constraint.is_lazy());
    assert!(
        generation.prompt.contains("Please respond in JSON format"),
        "{}",
        generation.prompt
    );
}

#[tokio::test]
async fn sampling_and_stops_reach_the_engine() {
    let engine = scripted(&["fine"]);
    let body = json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 0.2, "top_p": 0.5, "top_k": 20, "min_p": 0.1, "seed": 3,
        "repeat_penalty": 1.2, "max_completion_tokens": 50, "stop": ["END"],
    });
    chat(&app(&engine), &body).await;
    let generation = engine.generation();
    let sampling = generation.sampling;
    assert_eq!(
        (
            sampling.temperature,
            sampling.top_p,
            sampling.top_k,
            sampling.min_p
        ),
        (Some(0.2), Some(0.5), Some(20), Some(0.1))
    );
    assert_eq!(
        (sampling.seed, sampling.repeat_penalty, sampling.max_tokens),
        (Some(3), Some(1.2), Some(50))
    );
    assert_eq!(generation.stop, ["END"]);
    assert!(generation.prompt.ends_with("<|im_start|>assistant\n"));
}

#[tokio::test]
async fn a_tool_result_goes_back_into_the_prompt() {
    let engine = scripted(&["It is 21 degrees in Paris."]);
    let mut body = weather_request();
    body["messages"] = json!([
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
        }]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 degrees, sunny"}
    ]);
    let (_, answer) = chat(&app(&engine), &body).await;
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "It is 21 degrees in Paris."
    );
    assert_weather_turn_in_prompt(&engine.generation().prompt);
}
