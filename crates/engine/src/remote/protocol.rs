//! What every remote backend provides, and the one place a backend is chosen by kind.
//!
//! A backend is a module that knows one server's wire protocol: how to tell that a URL
//! is such a server ([`EngineKind::detect`]), what the server says of its model
//! ([`Description`]), the request body for one [`Generation`] ([`WireRequest`]), and how
//! to read the frames its streamed answer is made of ([`Reader`]). The HTTP, the replicas
//! and the hand-over to the caller's thread are shared ([`super::http`],
//! [`super::replicas`]); a backend never opens a connection of its own.

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use super::http::{Failure, Http};
use super::{llama_server, ollama, sglang, vllm};
use crate::{EngineError, FinishReason, Generation, ModelInfo, Usage};

/// The kinds of remote engine toolbridge can stand in front of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// llama.cpp's `llama-server` (`/completion`, GBNF with lazy triggers).
    LlamaServer,
    /// vLLM's OpenAI server (`/v1/completions`, structured outputs).
    Vllm,
    /// SGLang's native `/generate`.
    Sglang,
    /// Ollama's `/api/generate` in raw mode.
    Ollama,
}

impl EngineKind {
    pub const ALL: [EngineKind; 4] = [
        EngineKind::LlamaServer,
        EngineKind::Vllm,
        EngineKind::Sglang,
        EngineKind::Ollama,
    ];

    /// The name used on the command line (`--engine-kind`).
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => "llama-server",
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Ollama => "ollama",
        }
    }

    /// The kind of server at `base`, from the endpoints only it answers; the probes run in
    /// an order where no kind's probe is answered by a kind tried later.
    pub(crate) async fn detect(http: &Http, base: &str) -> Result<EngineKind, EngineError> {
        for kind in [
            EngineKind::LlamaServer,
            EngineKind::Ollama,
            EngineKind::Sglang,
            EngineKind::Vllm,
        ] {
            if kind.answers(http, base).await? {
                return Ok(kind);
            }
        }
        Err(EngineError::Unavailable(format!(
            "{base} does not answer as llama-server (/props), Ollama (/api/version), SGLang \
             (/model_info) or vLLM (/v1/models): is it running, and is it one of these? \
             (--engine-kind names the kind)"
        )))
    }

    /// Whether `base` answers as this kind; an error where it answers in a way that says
    /// what is wrong (vLLM wanting an API key).
    async fn answers(self, http: &Http, base: &str) -> Result<bool, EngineError> {
        match self {
            EngineKind::LlamaServer => Ok(llama_server::answers(http, base).await),
            EngineKind::Vllm => vllm::answers(http, base).await,
            EngineKind::Sglang => Ok(sglang::answers(http, base).await),
            EngineKind::Ollama => Ok(ollama::answers(http, base).await),
        }
    }

    /// What the server at `base` serves; `model` is the upstream model name the user gave
    /// (`--engine-model`), else the server's only or first model.
    pub(crate) async fn describe(
        self,
        http: &Http,
        base: &str,
        model: Option<&str>,
    ) -> Result<Description, EngineError> {
        match self {
            EngineKind::LlamaServer => llama_server::describe(http, base).await,
            EngineKind::Vllm => vllm::describe(http, base, model).await,
            EngineKind::Sglang => sglang::describe(http, base, model).await,
            EngineKind::Ollama => ollama::describe(http, base, model).await,
        }
    }

    /// The request that runs `generation` on a server described by `target`; `special`
    /// are the grammar's markers the model has as single tokens, where the kind needs
    /// them told apart (llama-server).
    pub(crate) fn request(
        self,
        generation: &Generation,
        target: &Target,
        special: &[String],
    ) -> Result<WireRequest, EngineError> {
        match self {
            EngineKind::LlamaServer => llama_server::request(generation, target, special),
            EngineKind::Vllm => vllm::request(generation, target),
            EngineKind::Sglang => sglang::request(generation, target),
            EngineKind::Ollama => ollama::request(generation, target),
        }
    }

    /// A reader for one streamed answer.
    pub(crate) fn reader(self) -> Box<dyn Reader> {
        match self {
            EngineKind::LlamaServer => Box::new(llama_server::StreamReader::default()),
            EngineKind::Vllm => Box::new(vllm::StreamReader::default()),
            EngineKind::Sglang => Box::new(sglang::StreamReader::default()),
            EngineKind::Ollama => Box::new(ollama::StreamReader::default()),
        }
    }

    /// The path whose 200 says a replica is up and ready.
    pub(crate) fn health_path(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => llama_server::HEALTH,
            EngineKind::Vllm => vllm::HEALTH,
            EngineKind::Sglang => sglang::HEALTH,
            EngineKind::Ollama => ollama::HEALTH,
        }
    }

    /// The error a failed request stands for: a 400 for a prompt longer than the context,
    /// read from the body as each kind words it; a 400 refusing the grammar, which is the
    /// client's schema or grammar and so the client's 400 (not a 502 that SDKs retry);
    /// else the shared mapping ([`Failure::into_engine_error`]).
    pub(crate) fn error(self, failure: Failure) -> EngineError {
        let refused = match &failure {
            Failure::Status { status: 400, body } => match self {
                EngineKind::LlamaServer => llama_server::too_long(body),
                EngineKind::Vllm => vllm::too_long(&error_message(body))
                    .or_else(|| grammar_refused(&error_message(body))),
                EngineKind::Sglang => sglang::too_long(&error_message(body))
                    .or_else(|| grammar_refused(&error_message(body))),
                EngineKind::Ollama => ollama::too_long(&error_message(body)),
            },
            _ => None,
        };
        refused.unwrap_or_else(|| failure.into_engine_error())
    }

    /// What this kind cannot enforce, said at start-up.
    pub fn limitation(self) -> Option<&'static str> {
        match self {
            EngineKind::Ollama => Some(ollama::LIMITATION),
            _ => None,
        }
    }

    /// What of `generation` this kind cannot enforce, said with its answer.
    pub(crate) fn unenforced(self, generation: &Generation) -> Option<&'static str> {
        match self {
            EngineKind::Ollama => ollama::unenforced(generation),
            _ => None,
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let wanted = name.to_ascii_lowercase().replace('_', "-");
        EngineKind::ALL
            .into_iter()
            .find(|kind| {
                kind.name() == wanted || (wanted == "llama.cpp" && *kind == EngineKind::LlamaServer)
            })
            .ok_or_else(|| {
                format!("unknown engine kind {name:?}; known: llama-server, vllm, sglang, ollama")
            })
    }
}

/// What a server says of itself at start-up.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Description {
    pub info: ModelInfo,
    /// How many generations it runs at once (llama-server's slots), when it says.
    pub capacity: Option<usize>,
    pub target: Target,
}

/// What every request to one kind of server needs to say, learned at start-up.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Target {
    /// The upstream's name for the model (`model` in vLLM, SGLang and Ollama requests).
    pub model: Option<String>,
    /// A BOS text the server adds itself to a text prompt (llama-server on a model that
    /// adds BOS): a prompt starting with it is sent without it, so it is not doubled.
    pub added_bos: Option<String>,
    /// How the server takes grammars, where that depends on how it was started.
    pub grammars: Grammars,
}

/// The grammar notation a server's structured-outputs backend reads, where it has a
/// choice (vLLM's `--structured-outputs-config`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Grammars {
    /// xgrammar (vLLM's default, SGLang's): EBNF, and a lazy grammar as a structural tag.
    #[default]
    Xgrammar,
    /// llguidance (vLLM's `guidance` backend): Lark, lazy grammars included.
    Lark,
}

/// One HTTP request: where to POST, what, and how its streamed answer is framed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WireRequest {
    pub path: &'static str,
    pub body: Value,
    pub framing: Framing,
}

/// How a streamed answer is cut into frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events: each event's `data:` lines are a frame.
    Sse,
    /// One JSON value per line.
    Ndjson,
}

/// What a frame of an answer says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Update {
    /// More output text.
    Text(String),
    /// The counts so far, for a generation cancelled before its last report.
    Usage(Usage),
    /// The generation is over.
    Done(Ending),
}

/// How a remote generation ended, as the server reported it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ending {
    pub finish: FinishReason,
    pub usage: Usage,
    /// The server's own timings, where it gives them (milliseconds).
    pub prompt_ms: Option<f64>,
    pub generation_ms: Option<f64>,
}

impl Target {
    /// `prompt` as sent: without the BOS text the server adds itself.
    pub fn prompt<'a>(&self, prompt: &'a str) -> &'a str {
        match &self.added_bos {
            Some(bos) => prompt.strip_prefix(bos.as_str()).unwrap_or(prompt),
            None => prompt,
        }
    }
}

impl Ending {
    /// An ending with no numbers: the server closed its stream without a last report.
    pub fn stopped() -> Ending {
        Ending {
            finish: FinishReason::Stop,
            usage: Usage::default(),
            prompt_ms: None,
            generation_ms: None,
        }
    }
}

/// Reads one streamed answer, frame by frame.
pub(crate) trait Reader: Send {
    /// What `frame` (one SSE event's data, or one NDJSON line) says. An error frame is an
    /// error; so is a frame that is not what the protocol sends.
    fn frame(&mut self, frame: &str) -> Result<Vec<Update>, EngineError>;

    /// The stream closed before a frame said it was done: the ending, if the protocol
    /// allows that (a `[DONE]` already seen), else an error.
    fn closed(&mut self) -> Result<Ending, EngineError>;
}

/// The first of `keys` that `body` has as a string: the shared way error bodies name
/// their message (`{"error": {"message": …}}`, `{"error": "…"}`, `{"detail": "…"}`).
pub(crate) fn error_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.trim().chars().take(500).collect();
    };
    let candidates = [
        value.pointer("/error/message"),
        value.get("error"),
        value.get("message"),
        value.get("detail"),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find_map(|v| v.as_str().map(str::to_owned));
    found.unwrap_or_else(|| value.to_string().chars().take(500).collect())
}

/// A 400 of vLLM or SGLang whose message is about the structured output: its grammar
/// backend (xgrammar, llguidance) could not take the grammar or schema sent. vLLM says
/// "Invalid grammar specification…", "Grammar error: …", "Failed to transform json schema
/// into a grammar: …" (`vllm/v1/structured_output/backend_*.py`); SGLang names the grammar
/// or the structural tag.
pub(crate) fn grammar_refused(message: &str) -> Option<EngineError> {
    let lower = message.to_ascii_lowercase();
    ["grammar", "structural tag", "structural_tag", "json schema"]
        .iter()
        .any(|word| lower.contains(word))
        .then(|| EngineError::Constraint(format!("the engine refused it: {message}")))
}

/// A generation's stop strings and the sampling settings that are set, under the names
/// every kind shares; `repetition` and `seed` name the two fields the kinds call
/// differently.
pub(crate) fn generation_fields(
    body: &mut Map<String, Value>,
    generation: &Generation,
    repetition: &str,
    seed: &str,
) {
    if !generation.stop.is_empty() {
        body.insert("stop".into(), json!(generation.stop));
    }
    let sampling = &generation.sampling;
    let settings = [
        ("temperature", sampling.temperature),
        ("top_p", sampling.top_p),
        ("min_p", sampling.min_p),
        (repetition, sampling.repeat_penalty),
        ("frequency_penalty", sampling.frequency_penalty),
        ("presence_penalty", sampling.presence_penalty),
    ];
    for (name, value) in settings {
        if let Some(value) = value {
            body.insert(name.into(), json!((f64::from(value) * 1e6).round() / 1e6));
        }
    }
    if let Some(top_k) = sampling.top_k {
        body.insert("top_k".into(), json!(top_k));
    }
    if let Some(value) = sampling.seed {
        body.insert(seed.into(), json!(value));
    }
    if !sampling.logit_bias.is_empty() {
        let biases: Map<String, Value> = sampling
            .logit_bias
            .iter()
            .map(|(token, bias)| (token.to_string(), json!(bias)))
            .collect();
        body.insert("logit_bias".into(), Value::Object(biases));
    }
}

/// The number written right after `marker` in `text`.
pub(crate) fn number_after(text: &str, marker: &str) -> Option<u32> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The number written right before `marker` in `text`.
pub(crate) fn number_before(text: &str, marker: &str) -> Option<u32> {
    let before = &text[..text.find(marker)?];
    let start = before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    before[start..].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_by_their_names() {
        for kind in EngineKind::ALL {
            assert_eq!(kind.name().parse::<EngineKind>(), Ok(kind));
        }
        assert_eq!(
            "LLAMA_SERVER".parse::<EngineKind>(),
            Ok(EngineKind::LlamaServer)
        );
        assert!("tgi".parse::<EngineKind>().unwrap_err().contains("vllm"));
    }

    #[test]
    fn logit_biases_go_by_token_id_as_openai_writes_them() {
        let generation = Generation {
            sampling: crate::Sampling {
                logit_bias: vec![(16, -100.0), (42, 2.5)],
                ..crate::Sampling::default()
            },
            ..Generation::default()
        };
        let mut body = Map::new();
        generation_fields(&mut body, &generation, "repeat_penalty", "seed");
        assert_eq!(
            Value::Object(body),
            json!({"logit_bias": {"16": -100.0, "42": 2.5}})
        );
    }

    #[test]
    fn error_messages_are_found_in_each_shape() {
        assert_eq!(error_message(r#"{"error":{"message":"bad"}}"#), "bad");
        assert_eq!(error_message(r#"{"error":"worse"}"#), "worse");
        assert_eq!(error_message(r#"{"detail":"gone"}"#), "gone");
        assert_eq!(error_message("plain text\n"), "plain text");
    }
}
