//! SGLang, through its native `/generate` endpoint.
//!
//! SGLang enforces grammars with xgrammar (`--grammar-backend xgrammar`, its default), in
//! the same notation as vLLM: a forced constraint as EBNF (`sampling_params.ebnf`), a
//! lazy one as a structural tag (`sampling_params.structural_tag`); both are built in
//! [`super::xgrammar`]. The output keeps special tokens (`skip_special_tokens: false`).
//!
//! `/generate` tokenizes `text` with the tokenizer's special tokens added, so a model
//! whose tokenizer adds a BOS would get two when the rendered prompt starts with one. At
//! start-up `/v1/tokenize` of nothing with special tokens says whether it adds one and
//! `/v1/detokenize` what its text is; a prompt starting with that text is sent without
//! it, as for llama-server. (Sending token ids instead would need the tokenizer here.)
//!
//! Its stream is cumulative: each event's `text` is the whole output so far, so the
//! reader hands on only what is new. SGLang's detokenizer never ends an event inside a
//! character, so what is new is always whole characters.
//!
//! Fields as SGLang reads and writes them: `python/sglang/srt/entrypoints/http_server.py`
//! (`/generate`, `/get_model_info`, `/v1/models`, `/v1/tokenize`),
//! `python/sglang/srt/sampling/sampling_params.py` (`SamplingParams`),
//! `python/sglang/srt/managers/tokenizer_manager.py` (the context-length check).

use serde_json::{json, Map, Value};

use super::http::{error_message, Failure, Framing, Http};
use super::protocol::{
    generation_fields, grammar_refused, listed_model, number_after, Backend, Description, Ending,
    Pending, Reader, Target, Update, WireRequest,
};
use super::xgrammar;
use crate::error::upstream_error;
use crate::{EngineError, EngineErrorKind, FinishReason, Generation, Usage};

/// SGLang's protocol.
pub(crate) struct Sglang;

impl Backend for Sglang {
    /// `/get_model_info` (or its newer name `/model_info`) names the model's path and
    /// whether it generates.
    fn answers<'a>(&'a self, http: &'a Http, base: &'a str) -> Pending<'a, bool> {
        Box::pin(async move {
            for path in ["/model_info", "/get_model_info"] {
                if let Ok(info) = http.get_json(&format!("{base}{path}")).await {
                    if info.get("model_path").is_some() && info.get("is_generation").is_some() {
                        return Ok(true);
                    }
                }
            }
            Ok(false)
        })
    }

    fn describe<'a>(
        &'a self,
        http: &'a Http,
        base: &'a str,
        model: Option<&'a str>,
    ) -> Pending<'a, Description> {
        Box::pin(async move {
            let models = http
                .get_json(&format!("{base}/v1/models"))
                .await
                .map_err(Failure::into_engine_error)?;
            let mut description = listed_model(base, &models, model)?;
            description.target.added_bos = added_bos(http, base).await;
            Ok(description)
        })
    }

    fn request(
        &self,
        generation: &Generation,
        target: &Target,
        _special: &[String],
    ) -> Result<WireRequest, EngineError> {
        let prompt = target.prompt(&generation.prompt);
        let mut params = Map::new();
        // `null` is "what the context leaves"; left out, SGLang would stop after 128 tokens.
        params.insert(
            "max_new_tokens".into(),
            json!(generation.sampling.max_tokens),
        );
        generation_fields(
            &mut params,
            generation,
            "repetition_penalty",
            "sampling_seed",
        );
        params.insert("skip_special_tokens".into(), json!(false));
        params.insert("spaces_between_special_tokens".into(), json!(false));
        if let Some(constraint) = &generation.constraint {
            let (key, value) = xgrammar::constraint(constraint)?;
            let key = if key == "grammar" { "ebnf" } else { key };
            params.insert(key.into(), value);
        }
        Ok(WireRequest {
            path: "/generate",
            body: json!({"text": prompt, "sampling_params": params, "stream": true}),
            framing: Framing::Sse,
        })
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(StreamReader::default())
    }

    fn refused(&self, body: &str) -> Option<EngineError> {
        let message = error_message(body);
        too_long(&message).or_else(|| grammar_refused(&message))
    }
}

/// The text of the BOS the server puts before a text prompt, if it puts one.
async fn added_bos(http: &Http, base: &str) -> Option<String> {
    let asked = json!({"prompt": "", "add_special_tokens": true});
    let tokenized = http
        .post_json(&format!("{base}/v1/tokenize"), &asked)
        .await
        .ok()?;
    let first = tokenized.pointer("/tokens/0")?.as_u64()?;
    let asked = json!({"tokens": [first]});
    let text = http
        .post_json(&format!("{base}/v1/detokenize"), &asked)
        .await
        .ok()?;
    text.get("text")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A 400 for a prompt longer than the context: "The input (M tokens) is longer than the
/// model's context length (N tokens).", or "Requested token count exceeds the model's
/// maximum context length of N tokens. You requested a total of T tokens: M tokens from
/// the input messages and …".
fn too_long(message: &str) -> Option<EngineError> {
    if let Some(context_length) = number_after(message, "context length (") {
        return Some(EngineError::from(EngineErrorKind::PromptTooLong {
            prompt_tokens: number_after(message, "The input (").unwrap_or(0),
            context_length,
        }));
    }
    let context_length = number_after(message, "maximum context length of ")?;
    Some(EngineError::from(EngineErrorKind::PromptTooLong {
        prompt_tokens: number_after(message, " tokens: ").unwrap_or(0),
        context_length,
    }))
}

/// Reads `/generate`'s stream: each event the whole `text` so far and its `meta_info`,
/// whose `finish_reason` is set on the last; `[DONE]` ends it.
#[derive(Debug, Default)]
struct StreamReader {
    /// The output handed on so far.
    text: String,
    done: Option<Ending>,
}

impl Reader for StreamReader {
    fn frame(&mut self, frame: &str) -> Result<Vec<Update>, EngineError> {
        if frame.trim() == "[DONE]" {
            return Ok(self.done.map(Update::Done).into_iter().collect());
        }
        let value: Value = serde_json::from_str(frame).map_err(|error| {
            upstream_error(format!(
                "SGLang sent an unreadable event ({error}): {frame}"
            ))
        })?;
        if value.get("error").is_some() {
            let message = error_message(frame);
            return Err(too_long(&message).unwrap_or(upstream_error(message)));
        }
        let mut updates = Vec::new();
        if let Some(text) = value.get("text").and_then(Value::as_str) {
            updates.push(Update::Text(self.new_text(text)?));
        }
        if let Some(finish) = value
            .pointer("/meta_info/finish_reason")
            .filter(|f| !f.is_null())
        {
            let ending = ending(finish, &value["meta_info"])?;
            self.done = Some(ending);
            updates.push(Update::Done(ending));
        }
        Ok(updates)
    }

    fn closed(&mut self) -> Result<Ending, EngineError> {
        self.done
            .ok_or_else(|| upstream_error("SGLang closed the stream before its last event"))
    }
}

impl StreamReader {
    /// What `text`, the whole output so far, adds to what was handed on.
    fn new_text(&mut self, text: &str) -> Result<String, EngineError> {
        let Some(new) = text.strip_prefix(self.text.as_str()) else {
            return Err(upstream_error(format!(
                "SGLang's stream is not cumulative (is --incremental-streaming-output set?): {text:?} does not continue {:?}",
                self.text
            )));
        };
        let new = new.to_owned();
        self.text.push_str(&new);
        Ok(new)
    }
}

/// The ending the last event's `meta_info` reports; an aborted generation is an error.
fn ending(finish: &Value, meta: &Value) -> Result<Ending, EngineError> {
    let finish = match finish.get("type").and_then(Value::as_str) {
        Some("length") => FinishReason::Length,
        Some("abort") => {
            let message = finish
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("aborted")
                .to_owned();
            return Err(too_long(&message).unwrap_or(upstream_error(message)));
        }
        _ => FinishReason::Stop,
    };
    let count = |key: &str| meta.get(key).and_then(Value::as_u64).unwrap_or(0) as u32;
    Ok(Ending {
        finish,
        usage: Usage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
            cached_tokens: count("cached_tokens"),
        },
        prompt_ms: None,
        generation_ms: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_text_becomes_pieces() {
        let mut reader = StreamReader::default();
        let mut pieces = Vec::new();
        for frame in [
            r#"{"text":"Ca"}"#,
            r#"{"text":"Café"}"#,
            r#"{"text":"Café!"}"#,
        ] {
            for update in reader.frame(frame).unwrap() {
                if let Update::Text(text) = update {
                    pieces.push(text);
                }
            }
        }
        assert_eq!(pieces, vec!["Ca", "fé", "!"]);
        assert!(reader.frame(r#"{"text":"Other"}"#).is_err());
    }

    #[test]
    fn both_context_messages_are_too_long() {
        let first =
            "The input (309 tokens) is longer than the model's context length (256 tokens).";
        assert!(matches!(
            too_long(first).map(|e| *e.kind()),
            Some(EngineErrorKind::PromptTooLong {
                prompt_tokens: 309,
                context_length: 256
            })
        ));
        let second = "Requested token count exceeds the model's maximum context length of 256 tokens. \
                      You requested a total of 400 tokens: 300 tokens from the input messages and 100 tokens for the completion.";
        assert!(matches!(
            too_long(second).map(|e| *e.kind()),
            Some(EngineErrorKind::PromptTooLong {
                prompt_tokens: 300,
                context_length: 256
            })
        ));
    }
}
