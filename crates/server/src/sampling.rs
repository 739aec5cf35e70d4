//! The request's sampling fields as the engine's [`Sampling`].
//!
//! The open-model extensions are read as llama.cpp's and vLLM's servers read them: `top_k`,
//! `min_p`, and `repetition_penalty` or llama.cpp's `repeat_penalty`; a `top_k` of 0 or
//! less turns it off, as in both, and a negative `seed` asks for a random one, as
//! llama.cpp's `-1` does.

use toolbridge_chat::ChatRequest;
use toolbridge_engine::Sampling;

/// The engine settings `request` asks for; its values were checked against their ranges by
/// [`ChatRequest::validate`].
pub fn sampling(request: &ChatRequest) -> Sampling {
    Sampling {
        temperature: narrow(request.temperature),
        top_p: narrow(request.top_p),
        top_k: request
            .top_k
            .map(|k| u32::try_from(k.max(0)).unwrap_or(u32::MAX)),
        min_p: narrow(request.min_p),
        seed: request.seed.and_then(|seed| u64::try_from(seed).ok()),
        repeat_penalty: narrow(request.effective_repetition_penalty()),
        frequency_penalty: narrow(request.frequency_penalty),
        presence_penalty: narrow(request.presence_penalty),
        max_tokens: request.max_output_tokens(),
        logit_bias: logit_bias(request),
    }
}

/// The checked `logit_bias` (integer keys, biases within ±100) as token ids and biases.
fn logit_bias(request: &ChatRequest) -> Vec<(u32, f32)> {
    let Some(biases) = &request.logit_bias else {
        return Vec::new();
    };
    biases
        .iter()
        .filter_map(|(token, bias)| Some((token.parse().ok()?, bias.as_f64()? as f32)))
        .collect()
}

/// A checked value (within its small range) as the engine's `f32`.
fn narrow(value: Option<f64>) -> Option<f32> {
    value.map(|value| value as f32)
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
                "max_completion_tokens": 10, "frequency_penalty": 0.1, "presence_penalty": -0.1,
                "logit_bias": {"16": -100, "42": 2.5}"#,
        ));
        assert_eq!(
            sampling,
            Sampling {
                temperature: Some(0.5),
                top_p: Some(0.9),
                seed: Some(7),
                max_tokens: Some(10),
                frequency_penalty: Some(0.1),
                presence_penalty: Some(-0.1),
                logit_bias: vec![(16, -100.0), (42, 2.5)],
                ..Sampling::default()
            }
        );
    }

    #[test]
    fn open_model_extensions_are_read() {
        let sampling = sampling(&request(
            r#", "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "seed": -1"#,
        ));
        assert_eq!(sampling.top_k, Some(40));
        assert_eq!(sampling.min_p, Some(0.05));
        assert_eq!(sampling.repeat_penalty, Some(1.1));
        assert_eq!(sampling.seed, None, "a negative seed is a random one");
        let off = super::sampling(&request(r#", "top_k": -1"#));
        assert_eq!(off.top_k, Some(0));
    }
}
