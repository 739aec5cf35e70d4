//! What every remote backend provides ([`Backend`]), and what the backends share.
//!
//! A backend knows one server's wire protocol: how to tell that a URL is such a server
//! ([`Backend::answers`]), what the server says of its model ([`Description`]), the
//! request body for one [`Generation`] ([`WireRequest`]), and how to read the frames its
//! streamed answer is made of ([`Reader`]). The HTTP, the replicas and the hand-over to
//! the caller's thread are shared ([`super::http`], [`super::replicas`]); a backend never
//! opens a connection of its own.
//!
//! Which backend serves a kind of server is chosen above the backends, by `EngineKind`:
//! this file and the backends import only downwards, never the kinds.

use std::future::Future;
use std::pin::Pin;

use serde_json::{json, Map, Value};

use super::http::{Failure, Framing, Http};
use crate::{EngineError, EngineErrorKind, FinishReason, Generation, ModelInfo, Usage};

/// A backend's answer to come, boxed so that a backend can be chosen at run time
/// (`&dyn Backend`).
pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, EngineError>> + Send + 'a>>;

/// One kind of server's wire protocol.
pub(crate) trait Backend: Sync {
    /// Whether `base` answers as this kind; an error where it answers in a way that says
    /// what is wrong (vLLM wanting an API key).
    fn answers<'a>(&'a self, http: &'a Http, base: &'a str) -> Pending<'a, bool>;

    /// What the server at `base` serves; `model` is the upstream model name the user gave
    /// (`--engine-model`), else the server's only or first model.
    fn describe<'a>(
        &'a self,
        http: &'a Http,
        base: &'a str,
        model: Option<&'a str>,
    ) -> Pending<'a, Description>;

    /// The request that runs `generation` on a server described by `target`; `special`
    /// are the grammar's markers the model has as single tokens, where the kind needs
    /// them told apart (llama-server).
    fn request(
        &self,
        generation: &Generation,
        target: &Target,
        special: &[String],
    ) -> Result<WireRequest, EngineError>;

    /// A reader for one streamed answer.
    fn reader(&self) -> Box<dyn Reader>;

    /// The path whose 200 says a replica is up and ready.
    fn health_path(&self) -> &'static str {
        "/health"
    }

    /// Generations each replica runs at once when neither it nor the user says: servers
    /// that batch freely (vLLM, SGLang) take many.
    fn default_capacity(&self) -> usize {
        64
    }

    /// The client's error that a 400 with `body` stands for, if any: a prompt longer than
    /// the context, read from the body as this kind words it, or a refused grammar
    /// ([`grammar_refused`]), which is the client's schema or grammar and so the client's
    /// 400 (not a 502 that SDKs retry).
    fn refused(&self, body: &str) -> Option<EngineError>;

    /// What this kind cannot enforce, said at start-up.
    fn limitation(&self) -> Option<&'static str> {
        None
    }

    /// What of `generation` this kind cannot enforce, said with its answer.
    fn unenforced(&self, _generation: &Generation) -> Option<&'static str> {
        None
    }

    /// The error a failed request stands for: a 400 this kind reads as the client's
    /// ([`Backend::refused`]), else the shared mapping ([`Failure::into_engine_error`]).
    fn error(&self, failure: Failure) -> EngineError {
        let refused = match &failure {
            Failure::Status { status: 400, body } => self.refused(body),
            _ => None,
        };
        refused.unwrap_or_else(|| failure.into_engine_error())
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

impl Description {
    /// A model known by the name requests give it (`model`), of which the server says
    /// neither the template, nor the BOS and EOS texts, nor how many generations it runs.
    pub fn named(id: &str, context_length: u32) -> Description {
        Description {
            info: ModelInfo {
                id: id.to_owned(),
                context_length,
                ..ModelInfo::default()
            },
            capacity: None,
            target: Target {
                model: Some(id.to_owned()),
                ..Target::default()
            },
        }
    }
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

/// A 400 whose message is about the structured output: the engine could not take the
/// grammar or schema sent. vLLM says "Invalid grammar specification…", "Grammar error: …",
/// "Failed to transform json schema into a grammar: …"
/// (`vllm/v1/structured_output/backend_*.py`); SGLang names the grammar or the structural
/// tag; llama.cpp's server "Failed to parse grammar".
pub(crate) fn grammar_refused(message: &str) -> Option<EngineError> {
    let lower = message.to_ascii_lowercase();
    ["grammar", "structural tag", "structural_tag", "json schema"]
        .iter()
        .any(|word| lower.contains(word))
        .then(|| {
            EngineError::new(
                EngineErrorKind::Constraint,
                format!("the engine refused it: {message}"),
            )
        })
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

/// The cards of an OpenAI model list (`GET /v1/models`), as vLLM and SGLang serve it.
pub(crate) fn cards(models: &Value) -> impl Iterator<Item = &Value> {
    models
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The model asked for (`--engine-model`) in an OpenAI model list, else the first, as its
/// card describes it: its name for requests and its context.
pub(crate) fn listed_model(
    base: &str,
    models: &Value,
    wanted: Option<&str>,
) -> Result<Description, EngineError> {
    let card = choose_card(base, models, wanted)?;
    let id = card.get("id").and_then(Value::as_str).unwrap_or_default();
    let context_length = card
        .get("max_model_len")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    Ok(Description::named(id, context_length))
}

fn choose_card<'a>(
    base: &str,
    models: &'a Value,
    wanted: Option<&str>,
) -> Result<&'a Value, EngineError> {
    let id = |card: &'a Value| card.get("id").and_then(Value::as_str);
    let found = match wanted {
        Some(wanted) => cards(models).find(|card| id(card) == Some(wanted)),
        None => cards(models).next(),
    };
    found.filter(|card| id(card).is_some()).ok_or_else(|| {
        let served: Vec<&str> = cards(models).filter_map(id).collect();
        EngineError::new(
            EngineErrorKind::Unavailable,
            match wanted {
                Some(wanted) => format!(
                    "{base} does not serve {wanted:?} (--engine-model); it serves: {}",
                    served.join(", ")
                ),
                None => format!("{base} lists no model at /v1/models"),
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn refusals_of_the_grammar_are_the_clients_errors() {
        for message in [
            "Invalid grammar specification: 'triggers'",
            "Failed to transform json schema into a grammar: x",
            "Failed to parse grammar",
        ] {
            assert!(
                matches!(grammar_refused(message), Some(e) if e.kind() == &EngineErrorKind::Constraint && e.detail().ends_with(message)),
                "{message}"
            );
        }
        assert!(grammar_refused("The model `x` does not exist.").is_none());
    }
}
