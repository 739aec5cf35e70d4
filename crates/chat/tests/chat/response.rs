//! Responses, stream chunks and errors are written the way OpenAI writes them.

use crate::common::round_trip;
use serde_json::json;
use toolbridge_chat::{
    ApiError, Arguments, ChatChunk, ChatResponse, Choice, ChunkChoice, Delta, ErrorResponse,
    ErrorType, FinishReason, Message, ResponseMessage, Role, ToolCall, ToolCallDelta, Usage,
};

#[test]
fn openai_text_response() {
    let response: ChatResponse = round_trip(
        r#"{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,
        "model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":{"role":"assistant",
        "content":"Hello! How can I assist you today?","refusal":null,"annotations":[]},"logprobs":null,
        "finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,
        "prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":
        {"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},
        "system_fingerprint":"fp_50cad350e4","service_tier":"default"}"#,
    );
    assert_eq!(response.choices[0].finish_reason, Some(FinishReason::Stop));
    assert_eq!(
        response.usage.as_ref().map(|usage| usage.total_tokens),
        Some(29)
    );
    assert_eq!(response.extra["service_tier"], "default");
}

#[test]
fn openai_tool_call_response() {
    let response: ChatResponse = round_trip(
        r#"{"id":"chatcmpl-abc123","object":"chat.completion","created":1699896916,"model":"gpt-4o-mini",
        "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc123",
        "type":"function","function":{"name":"get_current_weather","arguments":"{\n\"location\": \"Boston, MA\"\n}"}}],
        "refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],
        "usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99}}"#,
    );
    let message = response.choices[0].message.clone().into_message();
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.calls()[0].name(), "get_current_weather");
}

#[test]
fn responses_built_in_code_have_openai_nulls() {
    let call = ToolCall::new("call_0", "add", Arguments::Text(r#"{"a":1}"#.into()));
    let message = ResponseMessage::assistant(None, None, vec![call]);
    let mut response = ChatResponse::new(
        "chatcmpl-1",
        1700000000,
        "qwen2.5",
        vec![Choice::new(0, message, FinishReason::ToolCalls)],
    );
    response.usage = Some(Usage::new(10, 5));
    assert_eq!(
        serde_json::to_string(&response).unwrap(),
        concat!(
            r#"{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"qwen2.5","#,
            r#""choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","#,
            r#""type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}],"refusal":null},"#,
            r#""logprobs":null,"finish_reason":"tool_calls"}],"#,
            r#""usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#
        )
    );
    let text = ResponseMessage::assistant(Some("Hi".into()), Some("greet".into()), Vec::new());
    assert_eq!(
        serde_json::to_value(&text).unwrap(),
        json!({"role": "assistant", "content": "Hi", "reasoning_content": "greet", "refusal": null})
    );
    assert_eq!(
        text.into_message(),
        Message {
            reasoning_content: Some("greet".into()),
            ..Message::assistant("Hi")
        }
    );
}

#[test]
fn logprobs_round_trip() {
    let _: Choice = round_trip(
        r#"{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null},"logprobs":{"content":[
        {"token":"Hi","logprob":-0.31725305,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.31725305,
        "bytes":[72,105]},{"token":"Hello","logprob":-1.3190403,"bytes":null}]}],"refusal":null},"finish_reason":"stop"}"#,
    );
}

const HEAD: &str = r#"{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","#;

fn chunk(choices: Vec<ChunkChoice>) -> ChatChunk {
    ChatChunk::new("chatcmpl-123", 1694268190, "gpt-4o-mini", choices)
}

#[test]
fn content_stream_chunks_match_openai() {
    let start = chunk(vec![ChunkChoice::new(0, Delta::start())]);
    let piece = chunk(vec![ChunkChoice::new(0, Delta::content("Hello"))]);
    let end = chunk(vec![ChunkChoice::finish(0, FinishReason::Stop)]);
    let choice = |body: &str| format!(r#"{HEAD}"choices":[{body}]}}"#);
    assert_eq!(
        serde_json::to_string(&start).unwrap(),
        choice(
            r#"{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}"#
        )
    );
    assert_eq!(
        serde_json::to_string(&piece).unwrap(),
        choice(r#"{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}"#)
    );
    assert_eq!(
        serde_json::to_string(&end).unwrap(),
        choice(r#"{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}"#)
    );
    for sent in [start, piece, end] {
        let text = serde_json::to_string(&sent).unwrap();
        assert_eq!(serde_json::from_str::<ChatChunk>(&text).unwrap(), sent);
    }
}

#[test]
fn tool_call_stream_chunks_match_openai() {
    let open = chunk(vec![ChunkChoice::new(
        0,
        Delta::tool_call(ToolCallDelta::start(
            0,
            "call_DdmO9pD3xa9XTPNJ32zg2hcA",
            "get_weather",
        )),
    )]);
    let more = chunk(vec![ChunkChoice::new(
        0,
        Delta::tool_call(ToolCallDelta::arguments(0, "{\"")),
    )]);
    let choice = |body: &str| format!(r#"{HEAD}"choices":[{body}]}}"#);
    assert_eq!(
        serde_json::to_string(&open).unwrap(),
        choice(concat!(
            r#"{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","#,
            r#""function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}"#
        ))
    );
    assert_eq!(
        serde_json::to_string(&more).unwrap(),
        choice(
            r#"{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}"#
        )
    );
}

#[test]
fn usage_in_streams() {
    let mut pending = chunk(vec![ChunkChoice::new(0, Delta::content("Hi"))]);
    pending.usage = Some(None);
    let text = serde_json::to_string(&pending).unwrap();
    assert!(
        text.ends_with(r#""finish_reason":null}],"usage":null}"#),
        "{text}"
    );
    assert_eq!(
        serde_json::from_str::<ChatChunk>(&text).unwrap().usage,
        Some(None)
    );

    let last = ChatChunk::usage("chatcmpl-123", 1694268190, "gpt-4o-mini", Usage::new(9, 3));
    assert_eq!(
        serde_json::to_string(&last).unwrap(),
        format!(
            r#"{HEAD}"choices":[],"usage":{{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}}}"#
        )
    );
    let plain = chunk(Vec::new());
    assert!(!serde_json::to_string(&plain).unwrap().contains("usage"));
    assert_eq!(
        serde_json::from_str::<ChatChunk>(&serde_json::to_string(&plain).unwrap())
            .unwrap()
            .usage,
        None
    );
}

#[test]
fn engine_chunks_with_their_own_fields_parse() {
    let _: ChatChunk = round_trip(
        r#"{"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"b1",
        "choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"logprobs":null,"finish_reason":null,
        "stop_reason":null}],"timings":{"predicted_n":3}}"#,
    );
    let abort: ChunkChoice =
        round_trip(r#"{"index":0,"delta":{},"logprobs":null,"finish_reason":"abort"}"#);
    assert_eq!(
        abort.finish_reason,
        Some(FinishReason::Other("abort".into()))
    );
}

#[test]
fn error_objects() {
    let error =
        ErrorResponse::from(ApiError::invalid_request("Missing messages").with_param("messages"));
    assert_eq!(
        serde_json::to_string(&error).unwrap(),
        r#"{"error":{"message":"Missing messages","type":"invalid_request_error","param":"messages","code":null}}"#
    );
    let parsed: ErrorResponse = round_trip(&serde_json::to_string(&error).unwrap());
    assert_eq!(parsed, error);

    let not_found = ApiError::model_not_found("gpt-5");
    assert_eq!(
        serde_json::to_value(&not_found).unwrap(),
        json!({"message": "The model `gpt-5` does not exist.", "type": "invalid_request_error",
               "param": "model", "code": "model_not_found"})
    );
    let statuses = [
        (ApiError::invalid_request("x"), 400, "invalid_request_error"),
        (ApiError::authentication("x"), 401, "authentication_error"),
        (ApiError::permission("x"), 403, "permission_error"),
        (ApiError::not_found("x"), 404, "not_found_error"),
        (ApiError::rate_limit("x"), 429, "rate_limit_error"),
        (ApiError::server("x"), 500, "server_error"),
    ];
    for (error, status, kind) in statuses {
        assert_eq!((error.http_status(), error.kind.as_str()), (status, kind));
    }
    assert_eq!(ApiError::server("boom").to_string(), "server_error: boom");
}

#[test]
fn errors_from_other_servers_parse() {
    let llama_cpp: ErrorResponse = serde_json::from_str(
        r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":9000}}"#,
    )
    .unwrap();
    assert_eq!(llama_cpp.error.code.as_deref(), Some("400"));
    assert_eq!(
        llama_cpp.error.kind,
        ErrorType::Other("exceed_context_size_error".into())
    );
    assert_eq!(llama_cpp.error.param, None);
}

#[test]
fn unparsable_requests_become_invalid_request_errors() {
    let parse_error = serde_json::from_str::<toolbridge_chat::ChatRequest>("{").unwrap_err();
    let error = ApiError::unparsable(&parse_error);
    assert_eq!(error.kind, ErrorType::InvalidRequest);
    assert!(error.message.contains("EOF"), "{}", error.message);
}
