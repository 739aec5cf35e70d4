//! The request's sampling fields as the engine's [`Sampling`].
//!
//! OpenAI's fields are checked against OpenAI's ranges (a temperature of 5 is refused, not
//! clamped). The open-model extensions are read as llama.cpp's and vLLM's servers read
//! them: `top_k`, `min_p`, and `repetition_penalty` or llama.cpp's `repeat_penalty`; a
//! `top_k` of 0 or less turns it off, as in both, and a negative `seed` asks for a random
//! one, as llama.cpp's `-1` does.

use serde_json::Value;
use toolbridge_chat::ChatRequest;
use toolbridge_engine::Sampling;

use crate::error::Failure;

/// llama.cpp's name for `repetition_penalty`, read from the request's extra fields.
const LLAMA_CPP_REPEAT_PENALTY: &str = "repeat_penalty";

/// The engine settings `request` asks for; a value out of range is a 400 naming it.
pub fn sampling(request: &ChatRequest) -> Result<Sampling, Failure> {
    Ok(Sampling {
        temperature: within("temperature", request.temperature, 0.0, 2.0)?,
        top_p: within("top_p", request.top_p, 0.0, 1.0)?,
        top_k: request
            .top_k
            .map(|k| u32::try_from(k.max(0)).unwrap_or(u32::MAX)),
        min_p: within("min_p", request.min_p, 0.0, 1.0)?,
        seed: request.seed.and_then(|seed| u64::try_from(seed).ok()),
        repeat_penalty: within("repetition_penalty", repeat_penalty(request), 0.0, 10.0)?,
        frequency_penalty: within("frequency_penalty", request.frequency_penalty, -2.0, 2.0)?,
        presence_penalty: within("presence_penalty", request.presence_penalty, -2.0, 2.0)?,
        max_tokens: max_tokens(request)?,
    })
}

/// `repetition_penalty`, else llama.cpp's `repeat_penalty` when it is a number.
fn repeat_penalty(request: &ChatRequest) -> Option<f64> {
    request.repetition_penalty.or_else(|| {
        request
            .extra
            .get(LLAMA_CPP_REPEAT_PENALTY)
            .and_then(Value::as_f64)
    })
}

/// `value` as an `f32` when it lies in `[low, high]`.
fn within(param: &str, value: Option<f64>, low: f64, high: f64) -> Result<Option<f32>, Failure> {
    match value {
        None => Ok(None),
        // The range is checked first, so the narrowing keeps the value's meaning.
        Some(value) if (low..=high).contains(&value) => Ok(Some(value as f32)),
        Some(value) => Err(Failure::invalid(
            param,
            format!("Invalid '{param}': {value} is outside the range {low} to {high}."),
        )),
    }
}

/// `max_completion_tokens`, else `max_tokens`; at least 1, as OpenAI requires.
fn max_tokens(request: &ChatRequest) -> Result<Option<u32>, Failure> {
    match request.max_output_tokens() {
        Some(0) => {
            let param = if request.max_completion_tokens.is_some() {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            Err(Failure::invalid(
                param,
                format!("Invalid '{param}': it must be at least 1."),
            ))
        }
        limit => Ok(limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(extra: &str) -> ChatRequest {
        let body = format!(r#"{{"messages": [{{"role": "user", "content": "hi"}}]{extra}}}"#);
        serde_json::from_str(&body).expect("a request")
    }

    #[test]
    fn openai_fields_map_one_to_one() {
        let sampling = sampling(&request(
            r#", "temperature": 0.5, "top_p": 0.9, "seed": 7, "max_tokens": 20,
                "max_completion_tokens": 10, "frequency_penalty": 0.1, "presence_penalty": -0.1"#,
        ))
        .expect("in range");
        assert_eq!(
            sampling,
            Sampling {
                temperature: Some(0.5),
                top_p: Some(0.9),
                seed: Some(7),
                max_tokens: Some(10),
                frequency_penalty: Some(0.1),
                presence_penalty: Some(-0.1),
                ..Sampling::default()
            }
        );
    }

    #[test]
    fn open_model_extensions_are_read() {
        let sampling = sampling(&request(
            r#", "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "seed": -1"#,
        ))
        .expect("in range");
        assert_eq!(sampling.top_k, Some(40));
        assert_eq!(sampling.min_p, Some(0.05));
        assert_eq!(sampling.repeat_penalty, Some(1.1));
        assert_eq!(sampling.seed, None, "a negative seed is a random one");
        let off = super::sampling(&request(r#", "top_k": -1"#)).expect("in range");
        assert_eq!(off.top_k, Some(0));
    }

    #[test]
    fn out_of_range_values_name_their_parameter() {
        for (extra, param) in [
            (r#", "temperature": 2.5"#, "temperature"),
            (r#", "top_p": -0.1"#, "top_p"),
            (r#", "presence_penalty": 3"#, "presence_penalty"),
            (r#", "max_tokens": 0"#, "max_tokens"),
            (r#", "max_completion_tokens": 0"#, "max_completion_tokens"),
        ] {
            let failure = sampling(&request(extra)).expect_err(param);
            assert_eq!(failure.error.param.as_deref(), Some(param));
        }
    }
}
