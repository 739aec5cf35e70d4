//! llama.cpp's `llama-server`, through its native `/completion` endpoint.
//!
//! The grammar travels as GBNF. A lazy one sets `grammar_lazy` with the dialect's triggers
//! (`grammar_triggers`, type 1: a word, which the server turns into a token trigger when
//! the word is one token; type 0 with `token` for a trigger known only by its id); its
//! root starts with the trigger, as the server's own lazy grammars do, because the server
//! hands the grammar the text from the trigger on. The dialect's markers are
//! `preserved_tokens`: the server only writes a special token's text into the output (and
//! only accepts a one-token trigger word) when it is preserved.
//!
//! llama.cpp's grammars match a quoted literal with text tokens only, so a dialect's
//! markers that the model has as single tokens (`</tool_call>` in Qwen) are written in
//! the grammar as tokens ([`Constraint::with_tokens`]); which markers those are is asked
//! of the server's tokenizer once per marker ([`SpecialTokens`]).
//!
//! The model's template and its BOS and EOS texts come from `GET /props`. The server
//! tokenizes a text prompt with the model's BOS added (when the model adds one), so a
//! prompt that starts with the BOS text, as rendered templates do, is sent without it.
//!
//! Fields as llama.cpp's server reads and writes them (`tools/server/README.md`, and the
//! exchanges captured from a real server in `tests/fixtures/llama_server/`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{json, Map, Value};
use toolbridge_grammar::{Constraint, Token, Trigger};

use super::http::{error_message, Failure, Framing, Http};
use super::protocol::{
    generation_fields, grammar_refused, Backend, Description, Ending, Pending, Reader, Target,
    Update, WireRequest,
};
use crate::error::{constraint_error, upstream_error};
use crate::{EngineError, EngineErrorKind, FinishReason, Generation, ModelInfo, Usage};

/// `grammar_triggers` types, as llama.cpp's `common_grammar_trigger_type` numbers them.
const TRIGGER_TOKEN: u8 = 0;
const TRIGGER_WORD: u8 = 1;

/// llama-server's protocol.
pub(crate) struct LlamaServer;

impl Backend for LlamaServer {
    /// `/props` describes its generation settings.
    fn answers<'a>(&'a self, http: &'a Http, base: &'a str) -> Pending<'a, bool> {
        Box::pin(async move {
            let props = http.get_json(&format!("{base}/props")).await;
            Ok(props.is_ok_and(|props| {
                props.get("default_generation_settings").is_some()
                    || props.get("total_slots").is_some()
            }))
        })
    }

    fn describe<'a>(
        &'a self,
        http: &'a Http,
        base: &'a str,
        _model: Option<&'a str>,
    ) -> Pending<'a, Description> {
        Box::pin(async move {
            let props = http
                .get_json(&format!("{base}/props"))
                .await
                .map_err(Failure::into_engine_error)?;
            Ok(description(&props, adds_bos(http, base).await))
        })
    }

    fn request(
        &self,
        generation: &Generation,
        target: &Target,
        special: &[String],
    ) -> Result<WireRequest, EngineError> {
        request(generation, target, special)
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(StreamReader::default())
    }

    /// One slot, where `/props` does not say how many it has.
    fn default_capacity(&self) -> usize {
        1
    }

    fn refused(&self, body: &str) -> Option<EngineError> {
        too_long(body).or_else(|| grammar_refused(&error_message(body)))
    }
}

/// Whether the server puts a BOS before a text prompt: it does when tokenizing nothing
/// "with special tokens" gives a token.
async fn adds_bos(http: &Http, base: &str) -> bool {
    let asked = json!({"content": "", "add_special": true});
    match http.post_json(&format!("{base}/tokenize"), &asked).await {
        Ok(answer) => answer
            .get("tokens")
            .and_then(Value::as_array)
            .is_some_and(|tokens| !tokens.is_empty()),
        Err(_) => false,
    }
}

fn description(props: &Value, adds_bos: bool) -> Description {
    let text = |key: &str| {
        props
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let bos_token = text("bos_token");
    let id = text("model_alias")
        .or_else(|| text("model_path"))
        .map(|name| file_stem(&name))
        .unwrap_or_else(|| "llama-server".to_owned());
    let context_length = props
        .pointer("/default_generation_settings/n_ctx")
        .and_then(Value::as_u64)
        .unwrap_or(0) as u32;
    Description {
        info: ModelInfo {
            id,
            chat_template: text("chat_template"),
            bos_token: bos_token.clone(),
            eos_token: text("eos_token"),
            context_length,
            ollama_modelfile: None,
        },
        capacity: props
            .get("total_slots")
            .and_then(Value::as_u64)
            .map(|n| n as usize),
        target: Target {
            model: None,
            added_bos: bos_token.filter(|_| adds_bos),
            ..Target::default()
        },
    }
}

fn file_stem(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".gguf").unwrap_or(name).to_owned()
}

/// Which marker texts the served model has as one token, asked of `/tokenize` once each.
#[derive(Debug, Default)]
pub(crate) struct SpecialTokens {
    known: Mutex<HashMap<String, bool>>,
}

/// Markers remembered at most; past that, new ones are asked each time they come.
const MAX_KNOWN_MARKERS: usize = 4096;
/// Markers asked about for one request at most; the rest stay text.
const MAX_ASKED_MARKERS: usize = 64;

impl SpecialTokens {
    /// The `candidates` the model at `base` has as single tokens.
    pub async fn resolve(&self, http: &Http, base: &str, candidates: &[String]) -> Vec<String> {
        let mut single = Vec::new();
        for candidate in candidates.iter().take(MAX_ASKED_MARKERS) {
            let known = self.lock().get(candidate).copied();
            let is_token = match known {
                Some(is_token) => is_token,
                None => match one_token(http, base, candidate).await {
                    Some(is_token) => {
                        let mut known = self.lock();
                        if known.len() < MAX_KNOWN_MARKERS {
                            known.insert(candidate.clone(), is_token);
                        }
                        is_token
                    }
                    None => false,
                },
            };
            if is_token {
                single.push(candidate.clone());
            }
        }
        single
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the server's tokenizer makes `text` one token; `None` when it cannot say.
async fn one_token(http: &Http, base: &str, text: &str) -> Option<bool> {
    let asked = json!({"content": text, "add_special": false, "parse_special": true});
    let answer = http
        .post_json(&format!("{base}/tokenize"), &asked)
        .await
        .ok()?;
    Some(answer.get("tokens")?.as_array()?.len() == 1)
}

/// The `/completion` request for `generation`; `special` are the markers the model has
/// as single tokens ([`SpecialTokens`]).
fn request(
    generation: &Generation,
    target: &Target,
    special: &[String],
) -> Result<WireRequest, EngineError> {
    let prompt = target.prompt(&generation.prompt);
    let mut body = Map::new();
    body.insert("prompt".into(), json!(prompt));
    body.insert("stream".into(), json!(true));
    body.insert("cache_prompt".into(), json!(true));
    // Counts with every event, so a generation cancelled midway still knows its usage.
    body.insert("timings_per_token".into(), json!(true));
    let max_tokens = generation.sampling.max_tokens;
    body.insert("n_predict".into(), json!(max_tokens.map_or(-1, i64::from)));
    generation_fields(&mut body, generation, "repeat_penalty", "seed");
    if let Some(constraint) = &generation.constraint {
        add_grammar(&mut body, &constraint.with_tokens(special))?;
    }
    Ok(WireRequest {
        path: "/completion",
        body: Value::Object(body),
        framing: Framing::Sse,
    })
}

/// The grammar is printed anew for each request: 29 µs for a one-tool Hermes call grammar
/// (`cargo bench -p toolbridge-dialect --bench prepare`), too little to cache.
fn add_grammar(body: &mut Map<String, Value>, constraint: &Constraint) -> Result<(), EngineError> {
    let gbnf = constraint
        .gbnf()
        .map_err(|error| constraint_error("").with_source(error))?;
    body.insert("grammar".into(), json!(gbnf.text));
    let markers = constraint.markers();
    if !markers.is_empty() {
        body.insert("preserved_tokens".into(), json!(markers));
    }
    if constraint.is_lazy() {
        body.insert("grammar_lazy".into(), json!(true));
        let triggers: Vec<Value> = constraint.triggers().iter().map(trigger).collect();
        body.insert("grammar_triggers".into(), Value::Array(triggers));
    }
    Ok(())
}

fn trigger(trigger: &Trigger) -> Value {
    match trigger {
        Trigger::Word(word) | Trigger::Token(Token::Text(word)) => {
            json!({"type": TRIGGER_WORD, "value": word})
        }
        Trigger::Token(Token::Id(id)) => json!({"type": TRIGGER_TOKEN, "value": "", "token": id}),
    }
}

/// A 400 for a prompt longer than the context (`exceed_context_size_error`), with the
/// counts the server gives.
fn too_long(body: &str) -> Option<EngineError> {
    let value: Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    if error.get("type").and_then(Value::as_str)? != "exceed_context_size_error" {
        return None;
    }
    let count = |key: &str| error.get(key).and_then(Value::as_u64).unwrap_or(0) as u32;
    Some(EngineError::from(EngineErrorKind::PromptTooLong {
        prompt_tokens: count("n_prompt_tokens"),
        context_length: count("n_ctx"),
    }))
}

/// Reads `/completion`'s stream: each event a JSON object with the next `content`; the
/// last one has `"stop": true`, why (`stop_type`) and the counts.
#[derive(Debug, Default)]
struct StreamReader {
    done: Option<Ending>,
}

impl Reader for StreamReader {
    fn frame(&mut self, frame: &str) -> Result<Vec<Update>, EngineError> {
        if frame.trim() == "[DONE]" {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(frame).map_err(|error| {
            upstream_error(format!(
                "llama-server sent an unreadable event ({error}): {frame}"
            ))
        })?;
        if let Some(error) = value.get("error") {
            return Err(upstream_error(error_message(
                &json!({"error": error}).to_string(),
            )));
        }
        let mut updates = Vec::new();
        if let Some(content) = value.get("content").and_then(Value::as_str) {
            if !content.is_empty() {
                updates.push(Update::Text(content.to_owned()));
            }
        }
        let ending = ending(&value);
        if value.get("stop").and_then(Value::as_bool) == Some(true) {
            self.done = Some(ending);
            updates.push(Update::Done(ending));
        } else if value.get("timings").is_some() {
            updates.push(Update::Usage(ending.usage));
        }
        Ok(updates)
    }

    fn closed(&mut self) -> Result<Ending, EngineError> {
        self.done
            .ok_or_else(|| upstream_error("llama-server closed the stream before its last event"))
    }
}

fn ending(last: &Value) -> Ending {
    let number = |pointer: &str| last.pointer(pointer).and_then(Value::as_f64);
    let finish = match last.get("stop_type").and_then(Value::as_str) {
        Some("limit") => FinishReason::Length,
        _ if last.get("truncated").and_then(Value::as_bool) == Some(true) => FinishReason::Length,
        _ => FinishReason::Stop,
    };
    let prompt_tokens = number("/timings/prompt_n")
        .zip(number("/timings/cache_n"))
        .map(|(evaluated, cached)| evaluated + cached)
        .or_else(|| number("/tokens_evaluated"))
        .unwrap_or(0.0);
    Ending {
        finish,
        usage: Usage {
            prompt_tokens: prompt_tokens as u32,
            completion_tokens: number("/tokens_predicted").unwrap_or(0.0) as u32,
            cached_tokens: number("/timings/cache_n").unwrap_or(0.0) as u32,
        },
        prompt_ms: number("/timings/prompt_ms"),
        generation_ms: number("/timings/predicted_ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbridge_grammar::{Expr, Grammar};

    #[test]
    fn a_lazy_grammar_travels_with_triggers_and_markers() {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>\n"),
                Expr::Json(json!({"type": "object"})),
                Expr::literal("\n</tool_call>"),
            ]),
        );
        let generation = Generation {
            prompt: "<s>hi".into(),
            constraint: Some(Constraint::new(
                grammar,
                vec![
                    Trigger::Word("<tool_call>".into()),
                    Trigger::Token(Token::Id(7)),
                ],
                true,
            )),
            stop: vec!["<|im_end|>".into()],
            ..Generation::default()
        };
        let target = Target {
            model: None,
            added_bos: Some("<s>".into()),
            ..Target::default()
        };
        let body = request(&generation, &target, &[]).expect("built").body;
        assert_eq!(body["prompt"], "hi");
        assert_eq!(body["grammar_lazy"], true);
        assert_eq!(
            body["grammar_triggers"],
            json!([{"type": 1, "value": "<tool_call>"}, {"type": 0, "value": "", "token": 7}])
        );
        assert_eq!(body["preserved_tokens"], json!(["<tool_call>"]));
        assert!(body["grammar"]
            .as_str()
            .unwrap()
            .starts_with("root ::= \"<tool_call>\\n\""));
        assert_eq!(body["stop"], json!(["<|im_end|>"]));
        assert_eq!(body["n_predict"], -1);
    }

    #[test]
    fn the_last_event_says_why_and_how_much() {
        let mut reader = StreamReader::default();
        assert_eq!(
            reader.frame(r#"{"content":"Hi","stop":false}"#).unwrap(),
            vec![Update::Text("Hi".into())]
        );
        let last = r#"{"content":"","stop":true,"stop_type":"limit","tokens_predicted":8,"tokens_evaluated":20,
            "timings":{"prompt_n":5,"cache_n":15,"prompt_ms":12.5,"predicted_ms":80.0}}"#;
        let updates = reader.frame(last).unwrap();
        let Update::Done(ending) = &updates[0] else {
            panic!("{updates:?}")
        };
        assert_eq!(ending.finish, FinishReason::Length);
        assert_eq!(
            ending.usage,
            Usage {
                prompt_tokens: 20,
                completion_tokens: 8,
                cached_tokens: 15
            }
        );
        assert_eq!(reader.closed().unwrap(), *ending);
    }

    #[test]
    fn errors_in_the_stream_and_too_long_prompts() {
        let mut reader = StreamReader::default();
        assert!(reader
            .frame(r#"{"error":{"code":500,"message":"boom"}}"#)
            .is_err());
        assert!(StreamReader::default().closed().is_err());
        let too_long_body = r#"{"error":{"code":400,"message":"too long","type":"exceed_context_size_error","n_prompt_tokens":300,"n_ctx":256}}"#;
        assert!(matches!(
            too_long(too_long_body).map(|e| *e.kind()),
            Some(EngineErrorKind::PromptTooLong {
                prompt_tokens: 300,
                context_length: 256
            })
        ));
    }
}
