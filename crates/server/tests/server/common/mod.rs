//! The harness of the server tests: the real Qwen 2.5 template (read from the default
//! model's GGUF header) with a [`ScriptedEngine`] behind it, requests sent to the router
//! in-process, and server-sent events read back and reassembled the way OpenAI's Python
//! SDK reassembles them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Map, Value};
use toolbridge_engine::{
    Completion, Engine, EngineError, FinishReason, Flow, Generation, ModelInfo, ScriptedEngine,
};
use toolbridge_grammar::Constraint;
use toolbridge_server::{ServedModel, Server, ServerOptions, TemplateOverride};
use toolbridge_template::TemplateSource;

pub const MODEL_ID: &str = "qwen-test";

/// What Qwen 2.5 writes for one call, as the Hermes grammar admits it.
pub const WEATHER_CALL: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn model_path() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "default model not found (scripts/fetch-model.sh fetches it): looked at {}",
        path.display()
    );
    path
}

/// The default model's templates and tokens, as `toolbridge serve` reads them.
pub fn qwen_source() -> TemplateSource {
    TemplateSource::from_path(model_path()).unwrap_or_else(|error| panic!("{error}"))
}

/// A scripted engine that also records how each generation finished, and says Qwen 2.5's
/// chat markers are its special tokens, as the real model's vocabulary does.
pub struct Recorder {
    pub scripted: ScriptedEngine,
    finished: Mutex<Vec<FinishReason>>,
    special: Vec<String>,
}

impl Recorder {
    pub fn new(scripted: ScriptedEngine) -> Arc<Recorder> {
        Arc::new(Recorder {
            scripted,
            finished: Mutex::new(Vec::new()),
            special: ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
                .map(String::from)
                .to_vec(),
        })
    }

    /// How the generations that have returned so far finished.
    pub fn finished(&self) -> Vec<FinishReason> {
        self.finished.lock().expect("not poisoned").clone()
    }

    /// The generations asked for so far.
    pub fn generations(&self) -> Vec<Generation> {
        self.scripted.generations()
    }

    /// The only generation asked for.
    pub fn generation(&self) -> Generation {
        let mut generations = self.generations();
        assert_eq!(generations.len(), 1, "one generation expected");
        generations.remove(0)
    }
}

impl Engine for Recorder {
    fn model(&self) -> &ModelInfo {
        self.scripted.model()
    }

    fn special_tokens(&self) -> &[String] {
        &self.special
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        let completion = self.scripted.generate(generation, on_piece)?;
        self.finished
            .lock()
            .expect("not poisoned")
            .push(completion.finish_reason);
        Ok(completion)
    }
}

/// A scripted engine that takes half a second to check a prompt and to make a grammar
/// ready: every preparation or compile with a shorter limit runs past it.
pub struct Slow(pub ScriptedEngine);

impl Engine for Slow {
    fn model(&self) -> &ModelInfo {
        self.0.model()
    }

    fn check_prompt(&self, _prompt: &str) -> Result<(), EngineError> {
        std::thread::sleep(std::time::Duration::from_millis(500));
        Ok(())
    }

    fn prepare_constraint(&self, _constraint: &Constraint) -> Result<(), EngineError> {
        std::thread::sleep(std::time::Duration::from_millis(500));
        Ok(())
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        self.0.generate(generation, on_piece)
    }
}

pub fn model_info() -> ModelInfo {
    ModelInfo {
        id: MODEL_ID.into(),
        context_length: 32768,
        ..ModelInfo::default()
    }
}

/// An engine that plays `outputs` back in order.
pub fn scripted(outputs: &[&str]) -> Arc<Recorder> {
    Recorder::new(ScriptedEngine::new(model_info(), outputs.iter().copied()))
}

/// The server over `engine` with the Qwen template and `options`.
pub fn server_with(engine: Arc<dyn Engine>, options: ServerOptions) -> Server {
    let model = ServedModel::new(
        engine,
        Some(TemplateOverride::HuggingFace(qwen_source())),
        None,
    )
    .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.dialect_name(), "hermes");
    Server::new(model, options)
}

/// The server's routes over `engine` with the Qwen template and `options`.
pub fn app_with(engine: &Arc<Recorder>, options: ServerOptions) -> Router {
    server_with(Arc::clone(engine) as Arc<dyn Engine>, options).router()
}

pub fn app(engine: &Arc<Recorder>) -> Router {
    app_with(engine, ServerOptions::default())
}

/// A `POST /v1/chat/completions` with `body`.
pub fn chat_request(body: &Value) -> Request<Body> {
    post_json("/v1/chat/completions", body)
}

/// A `POST` of `body` as JSON to `path`.
pub fn post_json(path: &str, body: &Value) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request")
}

/// Sends `body` to `path` and returns the status and the JSON answer.
pub async fn send_json(app: &Router, path: &str, body: &Value) -> (StatusCode, Value) {
    let (status, text) = send(app, post_json(path, body)).await;
    let json = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    (status, json)
}

/// `value` as indented JSON, for snapshots.
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON prints")
}

/// Sends each labelled body of `cases` to `path`, requires a 400 for each, and returns
/// the answers by label, for one snapshot of an API's refusals.
pub async fn bad_request_answers(app: &Router, path: &str, cases: &[(&str, Value)]) -> Value {
    let mut answers = Map::new();
    for (label, body) in cases {
        let (status, error) = send_json(app, path, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
        answers.insert((*label).to_owned(), error);
    }
    Value::Object(answers)
}

/// Streams `body` (with `"stream": true` added) to `path` and returns its named events
/// (`event:` then `data:`), the name beside the JSON, checking each event's `type` is its
/// name, as the Responses and Messages APIs write them.
pub async fn named_events(app: &Router, path: &str, body: &Value) -> Vec<(String, Value)> {
    let mut body = body.clone();
    body["stream"] = json!(true);
    let (status, text) = send(app, post_json(path, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str(), "{data}");
    }
    events
}

/// Sends `request` and returns the status and the whole body.
pub async fn send(app: &Router, request: Request<Body>) -> (StatusCode, String) {
    let (status, _, body) = exchange(app, request).await;
    (status, body)
}

/// Sends `request` and returns the status, the headers and the whole body.
pub async fn exchange(app: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
    use tower::ServiceExt;
    let response = app.clone().oneshot(request).await.expect("infallible");
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.expect("a body").to_bytes();
    let text = String::from_utf8(bytes.to_vec()).expect("UTF-8");
    (parts.status, parts.headers, text)
}

/// The header that names the tools an answer left out, if it has one.
pub fn ignored_tools(headers: &HeaderMap) -> Option<&str> {
    headers.get("x-toolbridge-ignored-tools")?.to_str().ok()
}

/// Sends `body` as a chat completion and returns the status and the JSON answer.
pub async fn chat(app: &Router, body: &Value) -> (StatusCode, Value) {
    let (status, text) = send(app, chat_request(body)).await;
    let json = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    (status, json)
}

/// Asserts `body` is an OpenAI error object of `kind` and returns its `error`.
pub fn error_object(body: &str, kind: &str) -> Value {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {body}"));
    let error = value["error"].clone();
    assert_eq!(error["type"], kind, "{body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    for key in ["param", "code"] {
        assert!(error.get(key).is_some(), "{key} is always written: {body}");
    }
    error
}

/// The `data:` payloads of an SSE body, in order.
pub fn sse_data(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            event
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data event: {event:?}"))
                .to_owned()
        })
        .collect()
}

/// The named events of an SSE body (`event: NAME`, `data: JSON`), in order.
pub fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let field = |name: &str| {
                event
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .unwrap_or_else(|| panic!("no {name:?} in {event:?}"))
            };
            let data = field("data: ");
            let value =
                serde_json::from_str(data).unwrap_or_else(|error| panic!("{error}: {data}"));
            (field("event: ").to_owned(), value)
        })
        .collect()
}

/// Streams `body` (with `"stream": true` added) and returns the chunks before `[DONE]`,
/// checking that `[DONE]` ends the stream.
pub async fn stream_chunks(app: &Router, body: &Value) -> Vec<Value> {
    let mut body = body.clone();
    body["stream"] = json!(true);
    let (status, text) = send(app, chat_request(&body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let mut data = sse_data(&text);
    assert_eq!(data.pop().as_deref(), Some("[DONE]"), "{text}");
    data.iter()
        .map(|chunk| serde_json::from_str(chunk).unwrap_or_else(|error| panic!("{error}: {chunk}")))
        .collect()
}

/// The message a client reassembles from the chunks' deltas, as the OpenAI Python SDK's
/// `accumulate_delta` does: strings concatenate, `index` and `type` are replaced, objects
/// merge key by key, lists merge entry by entry at each entry's `index`. The `index` the
/// SDK keeps on each call is removed, as its message type has no such field.
pub fn reassemble(chunks: &[Value]) -> Value {
    let mut message = Map::new();
    for chunk in chunks {
        for choice in chunk["choices"].as_array().expect("choices") {
            accumulate(&mut message, choice["delta"].as_object().expect("a delta"));
        }
    }
    if let Some(Value::Array(calls)) = message.get_mut("tool_calls") {
        for call in calls {
            call.as_object_mut().map(|call| call.remove("index"));
        }
    }
    Value::Object(message)
}

fn accumulate(into: &mut Map<String, Value>, delta: &Map<String, Value>) {
    for (key, value) in delta {
        match (into.get_mut(key), value) {
            (None | Some(Value::Null), _) => {
                into.insert(key.clone(), value.clone());
            }
            (Some(slot), _) if key == "index" || key == "type" => *slot = value.clone(),
            (Some(Value::String(text)), Value::String(piece)) => text.push_str(piece),
            (Some(Value::Object(object)), Value::Object(piece)) => accumulate(object, piece),
            (Some(Value::Array(entries)), Value::Array(pieces)) => {
                for piece in pieces {
                    let index = piece["index"].as_u64().expect("an index") as usize;
                    match (entries.get_mut(index), piece) {
                        (Some(Value::Object(entry)), Value::Object(piece)) => {
                            accumulate(entry, piece)
                        }
                        _ => entries.insert(index.min(entries.len()), piece.clone()),
                    }
                }
            }
            (Some(slot), _) => *slot = value.clone(),
        }
    }
}

/// The finish reason of the stream's last choice chunk.
pub fn stream_finish_reason(chunks: &[Value]) -> Value {
    chunks
        .iter()
        .rev()
        .flat_map(|chunk| chunk["choices"].as_array().cloned().unwrap_or_default())
        .map(|choice| choice["finish_reason"].clone())
        .find(|reason| !reason.is_null())
        .unwrap_or(Value::Null)
}

/// Two tools, as OpenAI's docs show them.
pub fn tools() -> Value {
    json!([
        {"type": "function", "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }
        }},
        {"type": "function", "function": {
            "name": "add",
            "description": "Adds two numbers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }
        }}
    ])
}

/// A request asking about the weather, with the tools.
pub fn weather_request() -> Value {
    json!({
        "model": MODEL_ID,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": tools(),
    })
}

/// What Qwen writes when it reasons, says something, then calls for Paris and Lyon.
pub fn reasoning_text_and_two_calls() -> String {
    format!(
        "<think>Paris, then Lyon.</think>Let me look.\n{WEATHER_CALL}\n{}",
        WEATHER_CALL.replace("Paris", "Lyon")
    )
}

/// Asks `path` for `body` whole, then streamed, with the engine writing `output` both
/// times: the whole JSON answer and the stream's named events.
pub async fn whole_then_streamed(
    path: &str,
    output: &str,
    body: &Value,
) -> (Value, Vec<(String, Value)>) {
    let app = app(&scripted(&[output, output]));
    let (status, whole) = send_json(&app, path, body).await;
    assert_eq!(status, StatusCode::OK, "{whole}");
    (whole, named_events(&app, path, body).await)
}

/// `body` with each of its values, one at a time, replaced by each value of another
/// type: every way a client could get one field's type wrong.
pub fn mangled(body: &Value) -> Vec<Value> {
    let odd = [
        json!(null),
        json!(true),
        json!(-1),
        json!("x"),
        json!([]),
        json!({}),
        json!([{}]),
    ];
    let mut paths = Vec::new();
    collect_paths(body, String::new(), &mut paths);
    let mut variants = Vec::new();
    for path in paths {
        for value in &odd {
            let mut variant = body.clone();
            if let Some(slot) = variant.pointer_mut(&path) {
                if slot != value {
                    *slot = value.clone();
                    variants.push(variant);
                }
            }
        }
    }
    variants
}

fn collect_paths(value: &Value, path: String, paths: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                collect_paths(field, format!("{path}/{key}"), paths);
            }
        }
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                collect_paths(item, format!("{path}/{n}"), paths);
            }
        }
        _ => {}
    }
    if !path.is_empty() {
        paths.push(path);
    }
}

/// Asserts that `prompt` shows the call `get_weather` for Paris and its result, "21
/// degrees, sunny", as Qwen's template writes them.
pub fn assert_weather_turn_in_prompt(prompt: &str) {
    assert!(
        prompt.contains("<tool_response>\n21 degrees, sunny\n</tool_response>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"),
        "{prompt}"
    );
}

/// `message` with each tool call's id replaced by its position (ids are random).
pub fn without_ids(mut message: Value) -> Value {
    if let Some(Value::Array(calls)) = message.get_mut("tool_calls") {
        for (n, call) in calls.iter_mut().enumerate() {
            let id = call["id"].as_str().expect("every call has an id");
            assert!(id.starts_with("call_"), "{id}");
            call["id"] = json!(n);
        }
    }
    message
}
