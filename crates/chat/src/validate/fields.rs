//! The checks on the scalar fields: sampling ranges, counts, `logit_bias` and
//! `response_format`.
//!
//! The ranges are OpenAI's (a temperature of 5 is refused, not clamped). The open-model
//! extensions get the ranges llama.cpp and vLLM give them. Deliberately more lenient than
//! OpenAI, where the request means the same either way: `stop` may hold more than four
//! sequences (the engine matches any number), and `stream_options` without `stream` or
//! `parallel_tool_calls` without `tools` are ignored rather than refused.

use serde_json::Value;

use crate::error::ApiError;
use crate::json;
use crate::request::ChatRequest;
use crate::response_format::ResponseFormat;

use super::refusal;
use super::tools::check_name;

/// The largest `logit_bias` magnitude, as OpenAI bounds it.
const MAX_LOGIT_BIAS: f64 = 100.0;

/// Checks every scalar field of `request`.
pub fn check(request: &ChatRequest) -> Result<(), ApiError> {
    check_sampling(request)?;
    check_counts(request)?;
    check_logit_bias(request)?;
    match &request.response_format {
        Some(format) => check_response_format(format),
        None => Ok(()),
    }
}

fn check_sampling(request: &ChatRequest) -> Result<(), ApiError> {
    within("temperature", request.temperature, 0.0, 2.0)?;
    within("top_p", request.top_p, 0.0, 1.0)?;
    within("presence_penalty", request.presence_penalty, -2.0, 2.0)?;
    within("frequency_penalty", request.frequency_penalty, -2.0, 2.0)?;
    within("min_p", request.min_p, 0.0, 1.0)?;
    within(
        "repetition_penalty",
        request.effective_repetition_penalty(),
        0.0,
        10.0,
    )
}

/// `value`, when given, lies in `[low, high]`.
fn within(param: &str, value: Option<f64>, low: f64, high: f64) -> Result<(), ApiError> {
    match value {
        Some(value) if value < low => Err(refusal::below(param, low, value, false)),
        Some(value) if value > high => Err(refusal::above(param, high, value, false)),
        _ => Ok(()),
    }
}

fn check_counts(request: &ChatRequest) -> Result<(), ApiError> {
    at_least_one("max_tokens", request.max_tokens)?;
    at_least_one("max_completion_tokens", request.max_completion_tokens)?;
    at_least_one("n", request.n)?;
    match request.n {
        Some(n) if n > 128 => return Err(refusal::above("n", 128, n, true)),
        _ => {}
    }
    match request.top_logprobs {
        Some(count) if count > 20 => Err(refusal::above("top_logprobs", 20, count, true)),
        _ => Ok(()),
    }
}

fn at_least_one(param: &str, value: Option<u32>) -> Result<(), ApiError> {
    match value {
        Some(0) => Err(refusal::below(param, 1, 0, true)),
        _ => Ok(()),
    }
}

/// `logit_bias` maps token ids (integers, written as strings) to biases in -100..=100.
fn check_logit_bias(request: &ChatRequest) -> Result<(), ApiError> {
    let Some(biases) = &request.logit_bias else {
        return Ok(());
    };
    for (token, bias) in biases {
        if token.parse::<u32>().is_err() {
            return Err(refusal::invalid(
                "logit_bias",
                format!("the key '{token}' is not a token id. Keys must be integers, written as strings."),
            ));
        }
        match bias.as_f64() {
            Some(bias) if (-MAX_LOGIT_BIAS..=MAX_LOGIT_BIAS).contains(&bias) => {}
            _ => {
                return Err(refusal::invalid(
                    "logit_bias",
                    format!(
                    "the bias for token {token} must be a number from -100 to 100, but got {bias}."
                ),
                ))
            }
        }
    }
    Ok(())
}

/// A JSON schema format is named as a function is, and its schema is a JSON Schema object.
fn check_response_format(format: &ResponseFormat) -> Result<(), ApiError> {
    let (param, schema) = match format {
        ResponseFormat::Text { .. } => return Ok(()),
        ResponseFormat::JsonObject { schema, .. } => ("response_format.schema", schema),
        ResponseFormat::JsonSchema { json_schema, .. } => {
            check_name("response_format.json_schema.name", &json_schema.name, "")?;
            ("response_format.json_schema.schema", &json_schema.schema)
        }
    };
    match schema {
        None | Some(Value::Object(_) | Value::Bool(_)) => Ok(()),
        Some(other) => Err(refusal::wrong_type(param, "an object", json::kind(other))),
    }
}
