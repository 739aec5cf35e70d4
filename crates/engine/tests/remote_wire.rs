//! The remote backends' wire protocols, against a fixture HTTP server that answers as
//! vLLM, SGLang and Ollama do (`tests/fixtures/{vllm,sglang,ollama}/`, each file naming
//! the upstream source of its fields). Each test connects a `RemoteEngine` to the fixture
//! as a user would, runs one generation and checks what toolbridge sent (against a
//! reviewed `*.request.json`), the pieces it handed on and how the generation ended.
//!
//! `TOOLBRIDGE_BLESS=1` rewrites the expected request files from what was sent, for
//! review in the diff.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolbridge_engine::{
    Completion, Engine, EngineError, EngineErrorKind, EngineKind, FinishReason, Flow, Generation,
    RemoteEngine, RemoteOptions, Sampling, Usage,
};
use toolbridge_grammar::{Constraint, Expr, Grammar, Token, Trigger};

// ---- the fixture server ----

/// One answer of the fixture server.
#[derive(Clone)]
struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    /// Sent as chunks of this many bytes, with a pause between them.
    chunk: Option<usize>,
    /// The connection is dropped after this many bytes of the body.
    cut_after: Option<usize>,
    /// Nothing is sent for this long first (a server busy or hung).
    delay: Option<Duration>,
}

impl Reply {
    fn json(status: u16, file: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: fixture_json(file).to_string().into_bytes(),
            chunk: None,
            cut_after: None,
            delay: None,
        }
    }

    fn empty() -> Reply {
        Reply {
            status: 200,
            content_type: "text/plain",
            body: Vec::new(),
            chunk: None,
            cut_after: None,
            delay: None,
        }
    }

    /// A streamed body (SSE or NDJSON), sent in small chunks that cut events and
    /// characters apart.
    fn stream(file: &str, content_type: &'static str) -> Reply {
        Reply {
            status: 200,
            content_type,
            body: fixture_text(file).into_bytes(),
            chunk: Some(7),
            cut_after: None,
            delay: None,
        }
    }

    fn cut_after(mut self, bytes: usize) -> Reply {
        self.cut_after = Some(bytes);
        self
    }

    fn after(mut self, delay: Duration) -> Reply {
        self.delay = Some(delay);
        self
    }
}

/// A request the fixture server received.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    body: Value,
}

/// An HTTP/1.1 server on its own runtime, answering `(method, path)` from its routes and
/// 404 to anything else, one request per connection.
struct Fixture {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Fixture {
    fn start(routes: Vec<(&str, &str, Reply)>) -> Fixture {
        let routes: HashMap<(String, String), Reply> = routes
            .into_iter()
            .map(|(method, path, reply)| ((method.to_owned(), path.to_owned()), reply))
            .collect();
        let routes = Arc::new(routes);
        let received = Arc::new(Mutex::new(Vec::new()));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a port");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let log = Arc::clone(&received);
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&routes), Arc::clone(&log)));
            }
        });
        Fixture {
            base,
            received,
            _runtime: runtime,
        }
    }

    /// The bodies POSTed to `path`, in order.
    fn posted(&self, path: &str) -> Vec<Value> {
        let received = self.received.lock().expect("the log");
        received
            .iter()
            .filter(|r| r.method == "POST" && r.path == path)
            .map(|r| r.body.clone())
            .collect()
    }

    /// The generations POSTed to vLLM's `/v1/completions`: its bodies without the one
    /// toolbridge sends at start-up to learn which grammars the server reads (a
    /// one-token completion of `<probe>`).
    fn generations(&self) -> Vec<Value> {
        self.posted("/v1/completions")
            .into_iter()
            .filter(|body| body["prompt"] != "<probe>")
            .collect()
    }

    fn paths(&self) -> Vec<String> {
        let received = self.received.lock().expect("the log");
        received
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }
}

async fn serve(
    mut stream: TcpStream,
    routes: Arc<HashMap<(String, String), Reply>>,
    log: Arc<Mutex<Vec<Received>>>,
) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let reply = routes
        .get(&(request.method.clone(), request.path.clone()))
        .cloned()
        .unwrap_or(Reply {
            status: 404,
            content_type: "application/json",
            body: br#"{"detail":"Not Found"}"#.to_vec(),
            chunk: None,
            cut_after: None,
            delay: None,
        });
    log.lock().expect("the log").push(request);
    let _ = write_reply(&mut stream, &reply).await;
}

async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut words = head.split_whitespace();
    let method = words.next()?.to_owned();
    let path = words.next()?.to_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buffer[head_end..head_end + length]).unwrap_or(Value::Null);
    Some(Received { method, path, body })
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let Some(size) = reply.chunk else {
        let head = format!(
            "HTTP/1.1 {} Fixture\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        return stream.write_all(&reply.body).await;
    };
    let head = format!(
        "HTTP/1.1 {} Fixture\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        reply.status, reply.content_type
    );
    stream.write_all(head.as_bytes()).await?;
    let body = &reply.body[..reply
        .cut_after
        .unwrap_or(reply.body.len())
        .min(reply.body.len())];
    for piece in body.chunks(size) {
        stream
            .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
            .await?;
        stream.write_all(piece).await?;
        stream.write_all(b"\r\n").await?;
        stream.flush().await?;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    if reply.cut_after.is_none() {
        stream.write_all(b"0\r\n\r\n").await?;
    }
    stream.flush().await
}

// ---- fixtures ----

fn fixture_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

/// A JSON fixture without its `_source` note.
fn fixture_json(file: &str) -> Value {
    let text =
        std::fs::read_to_string(fixture_path(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    if let Some(object) = value.as_object_mut() {
        object.shift_remove("_source");
    }
    value
}

/// A streamed-body fixture without its `# _source:` comment lines.
fn fixture_text(file: &str) -> String {
    let text =
        std::fs::read_to_string(fixture_path(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.split_inclusive('\n')
        .filter(|line| !line.starts_with("# "))
        .collect()
}

/// Checks `sent` against the reviewed request in `file` (or rewrites it, blessing).
fn assert_sent(file: &str, sent: &Value) {
    if std::env::var_os("TOOLBRIDGE_BLESS").is_some() {
        let path = fixture_path(file);
        let source = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|old| old.get("_source").cloned())
            .unwrap_or(json!("toolbridge's request"));
        let mut blessed = serde_json::Map::new();
        blessed.insert("_source".into(), source);
        blessed.extend(sent.as_object().expect("an object").clone());
        let text = serde_json::to_string_pretty(&Value::Object(blessed)).expect("printable") + "\n";
        std::fs::write(path, text).expect("writable");
        return;
    }
    assert_eq!(
        sent,
        &fixture_json(file),
        "the request sent differs from {file}"
    );
}

// ---- running a generation ----

fn connect(
    fixture: &Fixture,
    kind: Option<EngineKind>,
    model: Option<&str>,
) -> Result<RemoteEngine, EngineError> {
    connect_all(&[fixture], kind, model)
}

fn connect_all(
    fixtures: &[&Fixture],
    kind: Option<EngineKind>,
    model: Option<&str>,
) -> Result<RemoteEngine, EngineError> {
    RemoteEngine::connect(RemoteOptions {
        urls: fixtures
            .iter()
            .map(|fixture| fixture.base.clone())
            .collect(),
        kind,
        model: model.map(str::to_owned),
        timeout: Duration::from_secs(5),
        health_interval: Duration::from_secs(60),
        ..RemoteOptions::default()
    })
}

/// The non-empty pieces and how the generation ended.
fn run(
    engine: &RemoteEngine,
    generation: &Generation,
) -> (Vec<String>, Result<Completion, EngineError>) {
    let mut pieces = Vec::new();
    let outcome = engine.generate(generation, &mut |piece| {
        if !piece.is_empty() {
            pieces.push(piece.to_owned());
        }
        Flow::Continue
    });
    (pieces, outcome)
}

/// A Hermes-style call grammar: `<tool_call>` JSON `</tool_call>`, then `<|im_end|>`.
fn tool_call(lazy: bool) -> Constraint {
    let mut grammar = Grammar::new("root");
    let schema = json!({
        "type": "object",
        "properties": {"name": {"const": "get_weather"}, "arguments": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        "required": ["name", "arguments"]
    });
    grammar.set_rule(
        "root",
        Expr::Seq(vec![
            Expr::literal("<tool_call>\n"),
            Expr::Json(schema),
            Expr::literal("\n</tool_call>"),
            Expr::Token(Token::Text("<|im_end|>".into())),
        ]),
    );
    Constraint::new(grammar, vec![Trigger::Word("<tool_call>".into())], lazy)
}

/// The whole answer one JSON value, as `response_format` makes it.
fn json_answer() -> Constraint {
    let mut grammar = Grammar::new("root");
    grammar.set_rule(
        "root",
        Expr::Json(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})),
    );
    Constraint::new(grammar, Vec::new(), false)
}

fn generation(prompt: &str, constraint: Option<Constraint>) -> Generation {
    Generation {
        prompt: prompt.into(),
        constraint,
        stop: vec!["<|im_end|>".into()],
        sampling: Sampling {
            temperature: Some(0.7),
            top_p: Some(0.8),
            top_k: Some(20),
            min_p: Some(0.05),
            seed: Some(42),
            repeat_penalty: Some(1.05),
            frequency_penalty: None,
            presence_penalty: Some(0.5),
            max_tokens: Some(256),
            logit_bias: Vec::new(),
        },
    }
}

const QWEN_PROMPT: &str = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n";

const CALL_TEXT: &str =
    "Let me check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn is_too_long(outcome: &Result<Completion, EngineError>, prompt: u32, context: u32) -> bool {
    matches!(
        outcome.as_ref().map_err(|e| *e.kind()),
        Err(EngineErrorKind::PromptTooLong { prompt_tokens, context_length }) if prompt_tokens == prompt && context_length == context
    )
}

// ---- vLLM ----

fn vllm(generate: Reply) -> Fixture {
    Fixture::start(vec![
        (
            "GET",
            "/v1/models",
            Reply::json(200, "vllm/models.response.json"),
        ),
        ("GET", "/health", Reply::empty()),
        ("POST", "/v1/completions", generate),
    ])
}

#[test]
fn vllm_is_detected_and_described_from_its_models() {
    let fixture = vllm(Reply::empty());
    let engine = connect(&fixture, None, None).expect("connects");
    assert_eq!(engine.kind(), EngineKind::Vllm);
    let model = engine.model();
    assert_eq!(model.id, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(model.context_length, 32768);
    assert_eq!(
        (
            model.chat_template.as_deref(),
            model.ollama_modelfile.as_deref()
        ),
        (None, None)
    );
    let probed = fixture.paths();
    assert!(
        probed.contains(&"GET /props".to_owned())
            && probed.contains(&"GET /api/version".to_owned()),
        "{probed:?}"
    );
}

#[test]
fn vllm_names_the_models_it_serves_when_another_is_asked_for() {
    let fixture = vllm(Reply::empty());
    let error = connect(&fixture, Some(EngineKind::Vllm), Some("llama3"))
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(
        message.contains("\"llama3\"") && message.contains("Qwen/Qwen2.5-7B-Instruct"),
        "{message}"
    );
}

#[test]
fn vllm_lazy_call_grammar_is_a_structural_tag_and_the_stream_is_read() {
    let fixture = vllm(Reply::stream(
        "vllm/completion_lazy.response.txt",
        "text/event-stream",
    ));
    let engine = connect(
        &fixture,
        Some(EngineKind::Vllm),
        Some("Qwen/Qwen2.5-7B-Instruct"),
    )
    .expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(tool_call(true))));
    let completion = outcome.expect("generated");
    assert_sent(
        "vllm/completion_lazy.request.json",
        &fixture.generations()[0],
    );
    assert_eq!(pieces.concat(), CALL_TEXT);
    assert_eq!(pieces.len(), 4, "{pieces:?}");
    assert_eq!(completion.finish_reason, FinishReason::Stop);
    assert_eq!(
        completion.usage,
        Usage {
            prompt_tokens: 21,
            completion_tokens: 30,
            cached_tokens: 16
        }
    );
}

#[test]
fn vllm_forced_grammar_is_ebnf_and_length_is_read() {
    let fixture = vllm(Reply::stream(
        "vllm/completion_forced.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(tool_call(false))));
    let completion = outcome.expect("generated");
    assert_sent(
        "vllm/completion_forced.request.json",
        &fixture.generations()[0],
    );
    assert_eq!(
        pieces.concat(),
        "<tool_call>\n{\"name\": \"get_weather\", \"arg"
    );
    assert_eq!(completion.finish_reason, FinishReason::Length);
}

#[test]
fn vllm_asks_once_which_grammars_it_reads() {
    let fixture = vllm(vllm_answering());
    connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let posted = fixture.posted("/v1/completions");
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_sent("vllm/probe.request.json", &posted[0]);
}

#[test]
fn vllm_on_llguidance_gets_lark() {
    let fixture = vllm(Reply::json(400, "vllm/guidance_refuses_tags.response.json"));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (_, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(tool_call(true))));
    assert!(
        matches!(&outcome, Err(e) if matches!(e.kind(), EngineErrorKind::Constraint)),
        "{outcome:?}"
    );
    assert_sent(
        "vllm/completion_guidance.request.json",
        &fixture.generations()[0],
    );
}

#[test]
fn vllm_refusing_a_grammar_is_the_clients_error() {
    let fixture = vllm(Reply::json(400, "vllm/grammar_refused.response.json"));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (_, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(tool_call(false))));
    match outcome {
        Err(error) if error.kind() == &EngineErrorKind::Constraint => {
            assert!(error.detail().contains("Grammar error"), "{error}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn vllm_that_wants_a_key_says_so() {
    let fixture = Fixture::start(vec![(
        "GET",
        "/v1/models",
        Reply::json(401, "vllm/unauthorized.response.json"),
    )]);
    for kind in [None, Some(EngineKind::Vllm)] {
        let error = connect(&fixture, kind, None).err().expect("refused");
        assert_eq!(
            error.to_string(),
            format!(
                "no upstream engine is available: {}/v1/models answers 401: the server wants an API key (--engine-api-key)",
                fixture.base
            )
        );
    }
}

#[test]
fn vllm_usage_is_known_when_toolbridge_stops_the_generation() {
    let fixture = vllm(Reply::stream(
        "vllm/completion_continuous_usage.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let mut pieces = 0;
    let completion = engine
        .generate(&generation(QWEN_PROMPT, None), &mut |piece| {
            pieces += usize::from(!piece.is_empty());
            if pieces == 2 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .expect("cancelled, not failed");
    assert_eq!(completion.finish_reason, FinishReason::Cancelled);
    assert_eq!(
        completion.usage,
        Usage {
            prompt_tokens: 12,
            completion_tokens: 2,
            cached_tokens: 0
        }
    );
}

#[test]
fn vllm_too_long_prompt_is_refused_as_such() {
    let fixture = vllm(Reply::json(400, "vllm/context_overflow.response.json"));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(pieces.is_empty());
    assert!(is_too_long(&outcome, 40000, 32768), "{outcome:?}");
}

#[test]
fn vllm_error_mid_stream_fails_the_generation() {
    let fixture = vllm(Reply::stream(
        "vllm/error_stream.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert_eq!(pieces.concat(), "Let me");
    assert!(
        matches!(&outcome, Err(e) if e.kind() == &EngineErrorKind::Upstream && e.detail().contains("grammar")),
        "{outcome:?}"
    );
}

#[test]
fn vllm_stream_cut_before_its_end_fails_the_generation() {
    let reply =
        Reply::stream("vllm/completion_lazy.response.txt", "text/event-stream").cut_after(700);
    let fixture = vllm(reply);
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(!pieces.is_empty());
    assert!(
        matches!(&outcome, Err(e) if matches!(e.kind(), EngineErrorKind::Upstream)),
        "{outcome:?}"
    );
}

// ---- SGLang ----

fn sglang(generate: Reply) -> Fixture {
    Fixture::start(vec![
        (
            "GET",
            "/get_model_info",
            Reply::json(200, "sglang/get_model_info.response.json"),
        ),
        (
            "GET",
            "/v1/models",
            Reply::json(200, "sglang/models.response.json"),
        ),
        (
            "POST",
            "/v1/tokenize",
            Reply::json(200, "sglang/tokenize.response.json"),
        ),
        (
            "POST",
            "/v1/detokenize",
            Reply::json(200, "sglang/detokenize.response.json"),
        ),
        ("GET", "/health", Reply::empty()),
        ("POST", "/generate", generate),
    ])
}

const LLAMA_PROMPT: &str = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nCafé?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";

#[test]
fn sglang_is_detected_and_its_bos_is_not_doubled() {
    let fixture = sglang(Reply::stream(
        "sglang/generate.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, None, None).expect("connects");
    assert_eq!(engine.kind(), EngineKind::Sglang);
    assert_eq!(engine.model().id, "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(engine.model().context_length, 131072);
    assert_eq!(
        fixture.posted("/v1/tokenize"),
        vec![json!({"prompt": "", "add_special_tokens": true})]
    );
    let mut asked = generation(LLAMA_PROMPT, Some(tool_call(true)));
    asked.stop = vec!["<|eot_id|>".into()];
    let (pieces, outcome) = run(&engine, &asked);
    let completion = outcome.expect("generated");
    assert_sent(
        "sglang/generate.request.json",
        &fixture.posted("/generate")[0],
    );
    assert_eq!(pieces, vec!["Un ", "café", " ☕ coûte 2 €."]);
    assert_eq!(completion.finish_reason, FinishReason::Length);
    assert_eq!(
        completion.usage,
        Usage {
            prompt_tokens: 23,
            completion_tokens: 9,
            cached_tokens: 1
        }
    );
}

#[test]
fn sglang_forced_grammar_is_ebnf() {
    let fixture = sglang(Reply::stream(
        "sglang/generate.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Sglang), None).expect("connects");
    let (_, outcome) = run(&engine, &generation(LLAMA_PROMPT, Some(json_answer())));
    outcome.expect("generated");
    let sent = &fixture.posted("/generate")[0];
    assert!(sent.pointer("/sampling_params/structural_tag").is_none());
    let ebnf = sent
        .pointer("/sampling_params/ebnf")
        .and_then(Value::as_str)
        .expect("ebnf");
    assert!(ebnf.starts_with("root ::= "), "{ebnf}");
}

#[test]
fn sglang_too_long_prompt_in_the_stream_is_refused_as_such() {
    let fixture = sglang(Reply::stream(
        "sglang/context_overflow.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Sglang), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(LLAMA_PROMPT, None));
    assert!(pieces.is_empty());
    assert!(is_too_long(&outcome, 140000, 131072), "{outcome:?}");
}

#[test]
fn sglang_abort_mid_stream_fails_the_generation() {
    let fixture = sglang(Reply::stream(
        "sglang/abort.response.txt",
        "text/event-stream",
    ));
    let engine = connect(&fixture, Some(EngineKind::Sglang), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(LLAMA_PROMPT, None));
    assert_eq!(pieces.concat(), "Un ");
    assert!(
        matches!(&outcome, Err(e) if e.kind() == &EngineErrorKind::Upstream && e.detail().contains("memory")),
        "{outcome:?}"
    );
}

// ---- Ollama ----

fn ollama(generate: Reply) -> Fixture {
    Fixture::start(vec![
        (
            "GET",
            "/api/version",
            Reply::json(200, "ollama/version.response.json"),
        ),
        (
            "GET",
            "/api/tags",
            Reply::json(200, "ollama/tags.response.json"),
        ),
        (
            "POST",
            "/api/show",
            Reply::json(200, "ollama/show.response.json"),
        ),
        ("POST", "/api/generate", generate),
    ])
}

#[test]
fn ollama_is_detected_and_its_modelfile_is_handed_up() {
    let fixture = ollama(Reply::empty());
    let engine = connect(&fixture, None, Some("qwen2.5")).expect("connects");
    assert_eq!(engine.kind(), EngineKind::Ollama);
    assert!(engine
        .kind()
        .limitation()
        .is_some_and(|l| l.contains("not constrained")));
    let model = engine.model();
    assert_eq!(model.id, "qwen2.5:latest");
    assert_eq!(
        model.context_length, 8192,
        "PARAMETER num_ctx wins over the trained 32768"
    );
    assert_eq!(model.chat_template, None);
    let modelfile = model.ollama_modelfile.as_deref().expect("a Modelfile");
    assert!(
        modelfile.contains("TEMPLATE \"\"\"{{- if .Messages }}"),
        "{modelfile}"
    );
    assert_eq!(
        fixture.posted("/api/show"),
        vec![json!({"model": "qwen2.5:latest"})]
    );
}

#[test]
fn ollama_raw_generation_sends_no_grammar_and_reads_ndjson() {
    let fixture = ollama(Reply::stream(
        "ollama/generate.response.ndjson",
        "application/x-ndjson",
    ));
    let engine =
        connect(&fixture, Some(EngineKind::Ollama), Some("qwen2.5:latest")).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(tool_call(true))));
    let completion = outcome.expect("generated");
    assert_sent(
        "ollama/generate.request.json",
        &fixture.posted("/api/generate")[0],
    );
    assert_eq!(pieces.concat(), CALL_TEXT);
    assert_eq!(completion.finish_reason, FinishReason::Stop);
    assert_eq!(
        completion.usage,
        Usage {
            prompt_tokens: 21,
            completion_tokens: 30,
            cached_tokens: 0
        }
    );
    assert_eq!(completion.timings.prompt_ms, 35.5);
    assert_eq!(completion.timings.generation_ms, 412.0);
}

#[test]
fn ollama_one_json_answer_goes_as_format() {
    let fixture = ollama(Reply::stream(
        "ollama/generate.response.ndjson",
        "application/x-ndjson",
    ));
    let engine = connect(&fixture, Some(EngineKind::Ollama), None).expect("connects");
    let (_, outcome) = run(&engine, &generation(QWEN_PROMPT, Some(json_answer())));
    outcome.expect("generated");
    let sent = &fixture.posted("/api/generate")[0];
    assert_eq!(sent["format"]["required"], json!(["city"]));
    let json = generation(QWEN_PROMPT, Some(json_answer()));
    assert_eq!(engine.unenforced(&json), None);
    // A forced call (`tool_choice` required) cannot be sent: generated free, said so.
    let forced = generation(QWEN_PROMPT, Some(tool_call(false)));
    run(&engine, &forced).1.expect("generated");
    assert!(fixture.posted("/api/generate")[1].get("format").is_none());
    assert!(engine.unenforced(&forced).is_some());
}

#[test]
fn ollama_error_line_fails_the_generation() {
    let fixture = ollama(Reply::stream(
        "ollama/error.response.ndjson",
        "application/x-ndjson",
    ));
    let engine = connect(&fixture, Some(EngineKind::Ollama), None).expect("connects");
    let (pieces, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert_eq!(pieces.concat(), "Let me");
    assert!(
        matches!(&outcome, Err(e) if e.kind() == &EngineErrorKind::Upstream && e.detail().contains("running the model")),
        "{outcome:?}"
    );
}

#[test]
fn ollama_too_long_prompt_is_refused_as_such() {
    let fixture = ollama(Reply::json(400, "ollama/context_overflow.response.json"));
    let engine = connect(&fixture, Some(EngineKind::Ollama), None).expect("connects");
    let (_, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(is_too_long(&outcome, 8300, 8192), "{outcome:?}");
}

// ---- replicas and failures (the same for every kind; vLLM's protocol stands in) ----

fn vllm_answering() -> Reply {
    Reply::stream("vllm/completion_lazy.response.txt", "text/event-stream")
}

fn failing(status: u16) -> Reply {
    Reply {
        status,
        content_type: "application/json",
        body: br#"{"error":{"message":"engine dead"}}"#.to_vec(),
        chunk: None,
        cut_after: None,
        delay: None,
    }
}

#[test]
fn a_failure_before_the_first_token_is_retried_on_another_replica() {
    // Its health check fails too, so no check re-admits it during the test.
    let broken = Fixture::start(vec![
        (
            "GET",
            "/v1/models",
            Reply::json(200, "vllm/models.response.json"),
        ),
        ("GET", "/health", failing(500)),
        ("POST", "/v1/completions", failing(500)),
    ]);
    let healthy = vllm(vllm_answering());
    let engine = connect_all(&[&broken, &healthy], Some(EngineKind::Vllm), None).expect("connects");
    // Two conversations, so that each replica is chosen first once.
    for prompt in ["first conversation", "second conversation"] {
        let (pieces, outcome) = run(&engine, &generation(prompt, None));
        assert!(outcome.is_ok(), "{outcome:?}");
        assert!(!pieces.is_empty());
    }
    assert!(
        broken.generations().len() <= 1,
        "sent to after its ejection"
    );
    assert_eq!(healthy.generations().len(), 2);
    let health: Vec<bool> = engine
        .replicas()
        .into_iter()
        .map(|(_, healthy)| healthy)
        .collect();
    assert_eq!(health, vec![false, true]);
}

#[test]
fn with_no_healthy_replica_a_generation_is_unavailable_at_once() {
    let fixture = vllm(failing(503));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let (_, first) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(
        matches!(&first, Err(e) if matches!(e.kind(), EngineErrorKind::Unavailable)),
        "{first:?}"
    );
    let (_, second) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(
        matches!(&second, Err(e) if matches!(e.kind(), EngineErrorKind::Unavailable)),
        "{second:?}"
    );
    assert_eq!(
        fixture.generations().len(),
        1,
        "nothing sent to an ejected replica"
    );
}

#[test]
fn a_silent_upstream_times_out() {
    let fixture = vllm(vllm_answering().after(Duration::from_secs(3)));
    let engine = RemoteEngine::connect(RemoteOptions {
        urls: vec![fixture.base.clone()],
        kind: Some(EngineKind::Vllm),
        timeout: Duration::from_millis(300),
        health_interval: Duration::from_secs(60),
        ..RemoteOptions::default()
    })
    .expect("connects");
    let (_, outcome) = run(&engine, &generation(QWEN_PROMPT, None));
    assert!(
        matches!(&outcome, Err(e) if matches!(e.kind(), EngineErrorKind::Timeout)),
        "{outcome:?}"
    );
}

#[test]
fn a_caller_that_stops_cancels_before_the_first_token_too() {
    let fixture = vllm(vllm_answering().after(Duration::from_secs(3)));
    let engine = connect(&fixture, Some(EngineKind::Vllm), None).expect("connects");
    let started = std::time::Instant::now();
    let outcome = engine.generate(&generation(QWEN_PROMPT, None), &mut |_| Flow::Stop);
    let completion = outcome.expect("cancelled, not failed");
    assert_eq!(completion.finish_reason, FinishReason::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "it waited for the upstream"
    );
}
