//! vLLM's OpenAI server, through `/v1/completions` with a raw prompt.
//!
//! vLLM enforces grammars with the structured-outputs backend it was started with
//! (`--structured-outputs-config '{"backend": …}'`). With xgrammar (the default `auto`
//! picks it for these requests) a forced constraint travels as EBNF
//! (`structured_outputs.grammar`); a lazy one as an xgrammar structural tag
//! (`structured_outputs.structural_tag`): `triggered_tags`, one tag per trigger whose
//! content is the grammar of what follows that trigger, so text before a trigger stays
//! free. xgrammar's EBNF has no special-token syntax, so a token the grammar names is
//! matched by its text; the prompt's special tokens are parsed as written
//! (`add_special_tokens: false` keeps vLLM from adding a second BOS) and the output keeps
//! them (`skip_special_tokens: false`), for the dialect's parser to see its markers.
//!
//! The `guidance` backend reads only the older structural tag (`{"triggers",
//! "structures"}`, each structure a JSON schema between fixed texts), which cannot hold a
//! call grammar, and refuses the newer one (`Invalid grammar specification: 'triggers'`).
//! It takes any grammar in llguidance's Lark, lazy ones included (`[lazy]` free text up to
//! a trigger), which is what the embedded engine runs, so there every constraint goes as
//! that Lark. Which backend runs is not served anywhere, so it is asked once at start-up
//! ([`grammars`]): a one-token completion under a structural tag.
//!
//! Usage is asked for in every chunk (`continuous_usage_stats`), so a generation toolbridge
//! stops itself (a repeat guard, a time budget) still reports its counts.
//!
//! The model and its context come from `/v1/models`; vLLM does not expose the chat
//! template, so `--template` names it. SGLang lists its models the same way
//! ([`listed_model`]).
//!
//! Fields as vLLM reads and writes them: `vllm/entrypoints/openai/completion/protocol.py`
//! (`CompletionRequest`), `vllm/sampling_params.py` (`StructuredOutputsParams`),
//! `vllm/v1/structured_output/backend_xgrammar.py` and `backend_guidance.py`
//! (`serialize_guidance_grammar`), and xgrammar's `docs/structural_tag/structural_tag.md`.

use serde_json::{json, Map, Value};

use toolbridge_grammar::{Constraint, Expr, Grammar, Trigger};

use super::http::{error_message, Failure, Framing, Http};
use super::protocol::{
    cards, generation_fields, grammar_refused, listed_model, number_after, number_before, Backend,
    Description, Ending, Grammars, Pending, Reader, Target, Update, WireRequest,
};
use super::xgrammar;
use crate::error::{unavailable_error, upstream_error};
use crate::{EngineError, EngineErrorKind, FinishReason, Generation, Usage};

/// vLLM's protocol.
pub(crate) struct Vllm;

impl Backend for Vllm {
    /// Its `/v1/models` cards say they are owned by vLLM. A server that wants an API key
    /// for them is an error that says so, not "not running".
    fn answers<'a>(&'a self, http: &'a Http, base: &'a str) -> Pending<'a, bool> {
        Box::pin(async move {
            match http.get_json(&format!("{base}/v1/models")).await {
                Ok(models) => Ok(cards(&models)
                    .any(|card| card.get("owned_by").and_then(Value::as_str) == Some("vllm"))),
                Err(
                    failure @ Failure::Status {
                        status: 401 | 403, ..
                    },
                ) => Err(models_failure(base, failure)),
                Err(_) => Ok(false),
            }
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
                .map_err(|failure| models_failure(base, failure))?;
            let mut description = listed_model(base, &models, model)?;
            description.target.grammars = grammars(http, base, &description.target).await;
            Ok(description)
        })
    }

    fn request(
        &self,
        generation: &Generation,
        target: &Target,
        _special: &[String],
    ) -> Result<WireRequest, EngineError> {
        let mut body = Map::new();
        body.insert("model".into(), json!(target.model));
        body.insert("prompt".into(), json!(generation.prompt));
        body.insert("stream".into(), json!(true));
        body.insert(
            "stream_options".into(),
            json!({"include_usage": true, "continuous_usage_stats": true}),
        );
        // `null` is "what the context leaves"; left out, vLLM would stop after 16 tokens.
        body.insert("max_tokens".into(), json!(generation.sampling.max_tokens));
        generation_fields(&mut body, generation, "repetition_penalty", "seed");
        body.insert("add_special_tokens".into(), json!(false));
        body.insert("skip_special_tokens".into(), json!(false));
        body.insert("spaces_between_special_tokens".into(), json!(false));
        if let Some(constraint) = &generation.constraint {
            let (key, value) = match target.grammars {
                Grammars::Xgrammar => xgrammar::constraint(constraint)?,
                Grammars::Lark => ("grammar", json!(constraint.lark())),
            };
            body.insert("structured_outputs".into(), json!({ key: value }));
        }
        Ok(WireRequest {
            path: "/v1/completions",
            body: Value::Object(body),
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

/// A failure to read `/v1/models`: a 401 or 403 is a server started with `--api-key`.
fn models_failure(base: &str, failure: Failure) -> EngineError {
    match failure {
        Failure::Status {
            status: status @ (401 | 403),
            ..
        } => unavailable_error(format!(
            "{base}/v1/models answers {status}: the server wants an API key (--engine-api-key)"
        )),
        failure => failure.into_engine_error(),
    }
}

/// Which grammars the server's structured-outputs backend reads, from one completion of
/// one token under a structural tag: the `guidance` backend refuses it naming the key of
/// the older shape it looked for (`'triggers'`) and takes Lark instead. Any other refusal
/// is said at start-up, since every lazy grammar would meet it.
async fn grammars(http: &Http, base: &str, target: &Target) -> Grammars {
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", Expr::literal("<probe>"));
    let probe = Constraint::new(grammar, vec![Trigger::Word("<probe>".into())], true);
    let Ok((key, tag)) = xgrammar::constraint(&probe) else {
        return Grammars::Xgrammar;
    };
    let body = json!({
        "model": target.model,
        "prompt": "<probe>",
        "max_tokens": 1,
        "structured_outputs": {key: tag},
    });
    match http
        .post_json(&format!("{base}/v1/completions"), &body)
        .await
    {
        Err(Failure::Status { status: 400, body }) => {
            let message = error_message(&body);
            if message.contains("'triggers'") {
                tracing::info!(replica = %base, "vLLM's structured outputs run on llguidance (guidance backend): grammars go as Lark");
                return Grammars::Lark;
            }
            tracing::warn!(
                replica = %base,
                "vLLM refuses xgrammar's structural tags ({message}): requests whose tool calls are not forced will fail; start it with --structured-outputs-config '{{\"backend\": \"xgrammar\"}}'"
            );
            Grammars::Xgrammar
        }
        _ => Grammars::Xgrammar,
    }
}

/// A 400 for a prompt (with its `max_tokens`) longer than the context: "This model's
/// maximum context length is N tokens. However, your request has M input tokens…", or
/// "…is too large: X. This model's maximum context length is N tokens and your request
/// has M input tokens…" (`vllm/renderers`, the serving layer's length check).
fn too_long(message: &str) -> Option<EngineError> {
    let context_length = number_after(message, "maximum context length is ")?;
    let prompt_tokens = number_before(message, " input tokens").unwrap_or(0);
    Some(EngineError::from(EngineErrorKind::PromptTooLong {
        prompt_tokens,
        context_length,
    }))
}

/// Reads `/v1/completions`' stream: chunks whose `choices[0].text` is the next text, each
/// with the `usage` so far (`continuous_usage_stats`); the last choice has its
/// `finish_reason`, a chunk with no choices the final `usage`, and `[DONE]` ends it.
#[derive(Debug, Default)]
struct StreamReader {
    finish: Option<FinishReason>,
    usage: Usage,
}

impl Reader for StreamReader {
    fn frame(&mut self, frame: &str) -> Result<Vec<Update>, EngineError> {
        if frame.trim() == "[DONE]" {
            return Ok(vec![Update::Done(self.ending())]);
        }
        let value: Value = serde_json::from_str(frame).map_err(|error| {
            upstream_error(format!("vLLM sent an unreadable event ({error}): {frame}"))
        })?;
        if value.get("error").is_some()
            || value.get("object").and_then(Value::as_str) == Some("error")
        {
            let message = error_message(frame);
            return Err(too_long(&message).unwrap_or(upstream_error(message)));
        }
        let mut updates = Vec::new();
        if let Some(usage) = value.get("usage").filter(|usage| !usage.is_null()) {
            self.usage = read_usage(usage);
            // Before this chunk's text: a caller that stops on that text has its count.
            updates.push(Update::Usage(self.usage));
        }
        if let Some(choice) = value.pointer("/choices/0") {
            if let Some(text) = choice.get("text").and_then(Value::as_str) {
                updates.push(Update::Text(text.to_owned()));
            }
            match choice.get("finish_reason").and_then(Value::as_str) {
                Some("length") => self.finish = Some(FinishReason::Length),
                Some(_) => self.finish = Some(FinishReason::Stop),
                None => {}
            }
        }
        Ok(updates)
    }

    fn closed(&mut self) -> Result<Ending, EngineError> {
        match self.finish {
            Some(_) => Ok(self.ending()),
            None => Err(upstream_error(
                "vLLM closed the stream before the generation finished",
            )),
        }
    }
}

impl StreamReader {
    fn ending(&self) -> Ending {
        Ending {
            finish: self.finish.unwrap_or(FinishReason::Stop),
            usage: self.usage,
            prompt_ms: None,
            generation_ms: None,
        }
    }
}

/// OpenAI's `usage`; `cached_tokens` is there when vLLM runs with
/// `--enable-prompt-tokens-details`.
fn read_usage(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0) as u32;
    Usage {
        prompt_tokens: count("/prompt_tokens"),
        completion_tokens: count("/completion_tokens"),
        cached_tokens: count("/prompt_tokens_details/cached_tokens"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_around_words() {
        let message = "This model's maximum context length is 256 tokens. However, your request has 309 input tokens.";
        assert_eq!(
            number_after(message, "maximum context length is "),
            Some(256)
        );
        assert_eq!(number_before(message, " input tokens"), Some(309));
        assert!(matches!(
            too_long(message).map(|e| *e.kind()),
            Some(EngineErrorKind::PromptTooLong {
                prompt_tokens: 309,
                context_length: 256
            })
        ));
        assert!(too_long("bad").is_none());
    }
}
