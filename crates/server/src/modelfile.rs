//! A Modelfile's `PARAMETER`s as Ollama applies them: sampling settings that a request
//! leaves unset, and the context size the model is loaded with.
//!
//! Ollama's names are read (`repeat_penalty`, `num_predict`, `num_ctx`, …) with its
//! meanings: a negative `num_predict` is no limit and a negative `seed` a random one.
//! Parameters of Ollama's own runner that have no counterpart here (`mirostat`,
//! `num_gpu`, …) are named in a warning and otherwise ignored, so a Modelfile written for
//! Ollama is served rather than refused; a value that is not a number is an error naming
//! its line.

use toolbridge_engine::Sampling;

use crate::server_error::{ServerError, ServerErrorKind};

/// What a Modelfile's parameters set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelfileDefaults {
    /// Used wherever a request leaves a setting unset.
    pub sampling: Sampling,
    /// `num_ctx`: the context size in tokens.
    pub context_length: Option<u32>,
}

impl ModelfileDefaults {
    /// Reads `parameters` (name, value) as a Modelfile lists them, `stop` aside.
    pub fn read(parameters: &[(String, String)]) -> Result<ModelfileDefaults, ServerError> {
        let mut defaults = ModelfileDefaults::default();
        for (name, value) in parameters {
            defaults.set(&name.to_ascii_lowercase(), value)?;
        }
        Ok(defaults)
    }

    fn set(&mut self, name: &str, value: &str) -> Result<(), ServerError> {
        let sampling = &mut self.sampling;
        match name {
            "temperature" => sampling.temperature = Some(number(name, value)?),
            "top_p" => sampling.top_p = Some(number(name, value)?),
            "min_p" => sampling.min_p = Some(number(name, value)?),
            "repeat_penalty" => sampling.repeat_penalty = Some(number(name, value)?),
            "frequency_penalty" => sampling.frequency_penalty = Some(number(name, value)?),
            "presence_penalty" => sampling.presence_penalty = Some(number(name, value)?),
            "top_k" => sampling.top_k = u32::try_from(integer(name, value)?.max(0)).ok(),
            "seed" => sampling.seed = u64::try_from(integer(name, value)?).ok(),
            "num_predict" => sampling.max_tokens = positive(integer(name, value)?),
            "num_ctx" => self.context_length = positive(integer(name, value)?),
            _ => tracing::warn!("the Modelfile's PARAMETER {name} is not applied here"),
        }
        Ok(())
    }
}

fn number(name: &str, value: &str) -> Result<f32, ServerError> {
    value
        .trim()
        .parse::<f32>()
        .ok()
        .filter(|number| number.is_finite())
        .ok_or_else(|| not_a(name, value, "number"))
}

fn integer(name: &str, value: &str) -> Result<i64, ServerError> {
    value
        .trim()
        .parse::<i64>()
        .map_err(|_| not_a(name, value, "whole number"))
}

/// `value` when it is above zero (Ollama's "no limit" is negative).
fn positive(value: i64) -> Option<u32> {
    u32::try_from(value).ok().filter(|value| *value > 0)
}

/// A `PARAMETER` whose value is not the number its name takes.
fn not_a(name: &str, value: &str, expected: &str) -> ServerError {
    let detail = format!("{name} {value}: not a {expected}");
    ServerError::new(ServerErrorKind::Parameter, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<ModelfileDefaults, ServerError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        ModelfileDefaults::read(&pairs)
    }

    #[test]
    fn ollamas_parameters_become_defaults() {
        let defaults = read(&[
            ("temperature", "0.2"),
            ("TOP_K", "20"),
            ("repeat_penalty", "1.1"),
            ("num_predict", "128"),
            ("num_ctx", "8192"),
            ("seed", "42"),
            ("mirostat", "2"),
        ])
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(defaults.sampling.temperature, Some(0.2));
        assert_eq!(defaults.sampling.top_k, Some(20));
        assert_eq!(defaults.sampling.repeat_penalty, Some(1.1));
        assert_eq!(defaults.sampling.max_tokens, Some(128));
        assert_eq!(defaults.sampling.seed, Some(42));
        assert_eq!(defaults.context_length, Some(8192));
    }

    #[test]
    fn negative_limits_and_seeds_mean_none() {
        let defaults = read(&[("num_predict", "-1"), ("seed", "-1"), ("num_ctx", "0")])
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(defaults, ModelfileDefaults::default());
    }

    #[test]
    fn a_value_that_is_not_a_number_is_an_error() {
        let error = read(&[("temperature", "warm")])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("the Modelfile's PARAMETER temperature warm: not a number")
        );
        assert!(read(&[("num_ctx", "4k")]).is_err());
        assert!(read(&[("temperature", "NaN")]).is_err());
    }

    #[test]
    fn a_request_keeps_what_it_sets() {
        let defaults = Sampling {
            temperature: Some(0.2),
            top_k: Some(20),
            ..Sampling::default()
        };
        let request = Sampling {
            temperature: Some(0.0),
            ..Sampling::default()
        };
        let merged = request.or(&defaults);
        assert_eq!(merged.temperature, Some(0.0));
        assert_eq!(merged.top_k, Some(20));
    }
}
