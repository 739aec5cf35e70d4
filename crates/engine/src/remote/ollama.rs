//! Ollama, through `/api/generate` in raw mode (the prompt is sent as rendered, Ollama's
//! own template is not applied), streamed as newline-delimited JSON.
//!
//! Ollama takes no grammar. A lazy constraint is not sent: tool calls are parsed from
//! whatever the model writes, not constrained ([`LIMITATION`], said at start-up and in
//! each answer it affects). Where the whole answer must be one JSON value (a forced
//! constraint whose root is one embedded schema) that schema goes as `format`, which
//! Ollama does enforce; a forced call grammar (`tool_choice` required) is not sent either,
//! and the answer says so as for a lazy one.
//!
//! The model's Modelfile (its Go `TEMPLATE`, `SYSTEM` and `PARAMETER`s) comes from
//! `/api/show` and is handed up whole, for toolbridge to render as Ollama would; its
//! context is `PARAMETER num_ctx` where the Modelfile sets it, else what the model was
//! trained with (`model_info`'s `<architecture>.context_length`).
//!
//! Fields as Ollama reads and writes them: `docs/api.md` (Generate a completion, Show
//! Model Information, List Local Models, Version), `docs/api/errors.mdx` (errors
//! mid-stream), `api/types.go` (`GenerateRequest`, `ShowResponse`).

use serde_json::{json, Map, Value};
use toolbridge_grammar::{Constraint, Expr};

use super::http::{error_message, Failure, Framing, Http};
use super::protocol::{
    generation_fields, number_after, Backend, Description, Ending, Pending, Reader, Target, Update,
    WireRequest,
};
use crate::error::{unavailable_error, upstream_error};
use crate::{EngineError, EngineErrorKind, FinishReason, Generation, Usage};

const HEALTH: &str = "/api/version";

const LIMITATION: &str = "Ollama takes no grammar: tool calls are parsed, not constrained, \
     and only an answer that is one JSON value is enforced (as Ollama's `format`)";

/// Ollama's protocol.
pub(crate) struct Ollama;

impl Backend for Ollama {
    /// `/api/version` names its version.
    fn answers<'a>(&'a self, http: &'a Http, base: &'a str) -> Pending<'a, bool> {
        Box::pin(async move {
            let version = http.get_json(&format!("{base}{HEALTH}")).await;
            Ok(version
                .is_ok_and(|version| version.get("version").and_then(Value::as_str).is_some()))
        })
    }

    fn describe<'a>(
        &'a self,
        http: &'a Http,
        base: &'a str,
        model: Option<&'a str>,
    ) -> Pending<'a, Description> {
        Box::pin(async move {
            let tags = http
                .get_json(&format!("{base}/api/tags"))
                .await
                .map_err(Failure::into_engine_error)?;
            let name = choose_model(base, &tags, model)?;
            let show = http
                .post_json(&format!("{base}/api/show"), &json!({"model": name}))
                .await
                .map_err(Failure::into_engine_error)?;
            Ok(description(&name, &show))
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
        body.insert("raw".into(), json!(true));
        body.insert("stream".into(), json!(true));
        body.insert("options".into(), Value::Object(options(generation)));
        if let Some(schema) = generation.constraint.as_ref().and_then(format) {
            body.insert("format".into(), schema.clone());
        }
        Ok(WireRequest {
            path: "/api/generate",
            body: Value::Object(body),
            framing: Framing::Ndjson,
        })
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(StreamReader::default())
    }

    fn health_path(&self) -> &'static str {
        HEALTH
    }

    fn default_capacity(&self) -> usize {
        4
    }

    /// Only a prompt too long: Ollama is sent no grammar to refuse.
    fn refused(&self, body: &str) -> Option<EngineError> {
        too_long(&error_message(body))
    }

    fn limitation(&self) -> Option<&'static str> {
        Some(LIMITATION)
    }

    /// A lazy constraint (tool calls), which Ollama cannot take; a forced one is sent as
    /// `format` or refused ([`format()`]).
    fn unenforced(&self, generation: &Generation) -> Option<&'static str> {
        generation
            .constraint
            .as_ref()
            .filter(|constraint| format(constraint).is_none())
            .map(|_| LIMITATION)
    }
}

/// The local model asked for (`--engine-model`, `:latest` implied as Ollama implies
/// it), else the first listed.
fn choose_model(base: &str, tags: &Value, wanted: Option<&str>) -> Result<String, EngineError> {
    let names: Vec<&str> = tags
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|model| model.get("name").and_then(Value::as_str))
        .collect();
    let found = match wanted {
        Some(wanted) => names
            .iter()
            .find(|name| **name == wanted || name.strip_suffix(":latest") == Some(wanted)),
        None => names.first(),
    };
    found.map(|name| (*name).to_owned()).ok_or_else(|| {
        unavailable_error(match wanted {
            Some(wanted) => format!(
                "{base} has no model {wanted:?} (--engine-model); it has: {} (ollama pull {wanted})",
                names.join(", ")
            ),
            None => format!("{base} has no local model; pull one first (ollama pull …)"),
        })
    })
}

fn description(name: &str, show: &Value) -> Description {
    let parameters = show
        .get("parameters")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let trained = show
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
        })
        .and_then(|(_, value)| value.as_u64());
    let context_length = parameter(parameters, "num_ctx").or(trained).unwrap_or(0) as u32;
    let mut description = Description::named(name, context_length);
    description.info.ollama_modelfile = show
        .get("modelfile")
        .and_then(Value::as_str)
        .map(str::to_owned);
    description
}

/// A number-valued parameter of `/api/show`'s `parameters` text (`name   value` lines).
fn parameter(parameters: &str, name: &str) -> Option<u64> {
    parameters.lines().find_map(|line| {
        let (key, value) = line.trim().split_once(char::is_whitespace)?;
        (key == name).then(|| value.trim().parse().ok()).flatten()
    })
}

/// The settings that are set, under Ollama's option names.
fn options(generation: &Generation) -> Map<String, Value> {
    let mut options = Map::new();
    generation_fields(&mut options, generation, "repeat_penalty", "seed");
    // Ollama has no such option; it would warn and ignore it.
    options.remove("logit_bias");
    if let Some(max_tokens) = generation.sampling.max_tokens {
        options.insert("num_predict".into(), json!(max_tokens));
    }
    options
}

/// What of `constraint` Ollama can enforce: a forced one whose root is one JSON schema,
/// sent as `format`. Nothing else: a call grammar, lazy or forced (`tool_choice`
/// required), goes unsent, the answer parsed as the model wrote it.
fn format(constraint: &Constraint) -> Option<&Value> {
    if constraint.is_lazy() {
        return None;
    }
    match &constraint.grammar().rule(&constraint.grammar().root)?.body {
        Expr::Json(schema) => Some(schema),
        _ => None,
    }
}

/// A prompt longer than the context: Ollama passes on its runner's "request (M tokens)
/// exceeds the available context size (N tokens)", or says "the input length exceeds
/// the context length".
fn too_long(message: &str) -> Option<EngineError> {
    if !message.contains("exceeds the available context size")
        && !message.contains("exceeds the context length")
    {
        return None;
    }
    Some(EngineError::from(EngineErrorKind::PromptTooLong {
        prompt_tokens: number_after(message, "request (").unwrap_or(0),
        context_length: number_after(message, "context size (").unwrap_or(0),
    }))
}

/// Reads `/api/generate`'s lines: each the next `response` text, the last `done` with
/// why (`done_reason`), the counts and the durations (nanoseconds).
#[derive(Debug, Default)]
struct StreamReader {
    done: Option<Ending>,
}

impl Reader for StreamReader {
    fn frame(&mut self, frame: &str) -> Result<Vec<Update>, EngineError> {
        let value: Value = serde_json::from_str(frame).map_err(|error| {
            upstream_error(format!("Ollama sent an unreadable line ({error}): {frame}"))
        })?;
        if value.get("error").is_some() {
            let message = error_message(frame);
            return Err(too_long(&message).unwrap_or(upstream_error(message)));
        }
        let mut updates = Vec::new();
        if let Some(text) = value.get("response").and_then(Value::as_str) {
            updates.push(Update::Text(text.to_owned()));
        }
        if value.get("done").and_then(Value::as_bool) == Some(true) {
            let ending = ending(&value);
            self.done = Some(ending);
            updates.push(Update::Done(ending));
        }
        Ok(updates)
    }

    fn closed(&mut self) -> Result<Ending, EngineError> {
        self.done
            .ok_or_else(|| upstream_error("Ollama closed the stream before its last line"))
    }
}

fn ending(last: &Value) -> Ending {
    let number = |key: &str| last.get(key).and_then(Value::as_f64);
    let finish = match last.get("done_reason").and_then(Value::as_str) {
        Some("length") => FinishReason::Length,
        _ => FinishReason::Stop,
    };
    Ending {
        finish,
        usage: Usage {
            prompt_tokens: number("prompt_eval_count").unwrap_or(0.0) as u32,
            completion_tokens: number("eval_count").unwrap_or(0.0) as u32,
            cached_tokens: 0,
        },
        prompt_ms: number("prompt_eval_duration").map(|ns| ns / 1e6),
        generation_ms: number("eval_duration").map(|ns| ns / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_by_name() {
        let parameters = "num_keep                       24\nnum_ctx                        8192\nstop \"<|eot_id|>\"";
        assert_eq!(parameter(parameters, "num_ctx"), Some(8192));
        assert_eq!(parameter(parameters, "num_batch"), None);
    }

    #[test]
    fn too_long_prompts_say_their_numbers() {
        let message = "request (309 tokens) exceeds the available context size (256 tokens), try increasing it";
        assert!(matches!(
            too_long(message).map(|e| *e.kind()),
            Some(EngineErrorKind::PromptTooLong {
                prompt_tokens: 309,
                context_length: 256
            })
        ));
        assert!(too_long("model not found").is_none());
    }
}
