//! Timing one streamed request: when its first output came, when it ended, and the token
//! counts its stream reported. Every bench that times servers reads streams here.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// What one streamed event says.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The event carries model output (text, reasoning or a call).
    pub(super) output: bool,
    /// Token counts, once the stream reports them.
    pub(super) completion_tokens: Option<u64>,
    pub(super) prompt_tokens: Option<u64>,
}

/// Reads an event of a stream.
pub(super) type Reader = fn(&Value) -> Seen;

/// One request's timing, from sending it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    pub(super) first_output: Duration,
    /// The end of the stream.
    pub(super) end: Duration,
    pub(super) completion_tokens: u64,
    pub(super) prompt_tokens: u64,
}

impl Timing {
    /// Tokens per second after the first output: the decode speed, without the prompt.
    pub(super) fn decode_rate(&self) -> f64 {
        let seconds = (self.end - self.first_output).as_secs_f64();
        self.completion_tokens.saturating_sub(1) as f64 / seconds.max(1e-9)
    }
}

/// An OpenAI chat-completion chunk (`stream_options.include_usage` gives the counts). Any
/// delta is output, the opening `role` one included: servers send it with the first token
/// (llama-server, OpenAI, toolbridge), so it times the first token whatever the model
/// writes, even a call a server holds until it is whole.
pub(super) fn chat_chunk(event: &Value) -> Seen {
    Seen {
        output: event["choices"][0]["delta"]
            .as_object()
            .is_some_and(|delta| !delta.is_empty()),
        completion_tokens: event["usage"]["completion_tokens"].as_u64(),
        prompt_tokens: event["usage"]["prompt_tokens"].as_u64(),
    }
}

/// Posts `body` to `url` and reads its server-sent events with `read`.
pub(super) fn timed(agent: &ureq::Agent, url: &str, body: &Value, read: Reader) -> Result<Timing> {
    let started = Instant::now();
    let response = match agent.post(url).send_json(body) {
        Ok(response) => response,
        Err(ureq::Error::Status(status, response)) => {
            bail!(
                "{url}: {status}: {}",
                response.into_string().unwrap_or_default()
            )
        }
        Err(error) => return Err(error.into()),
    };
    let mut first = None;
    let mut counts = Seen::default();
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line?;
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let seen = read(&event);
        if seen.output {
            first.get_or_insert(started.elapsed());
        }
        counts.completion_tokens = seen.completion_tokens.or(counts.completion_tokens);
        counts.prompt_tokens = seen.prompt_tokens.or(counts.prompt_tokens);
    }
    Ok(Timing {
        first_output: first.with_context(|| format!("{url}: no output"))?,
        end: started.elapsed(),
        completion_tokens: counts
            .completion_tokens
            .with_context(|| format!("{url}: no token count"))?,
        prompt_tokens: counts.prompt_tokens.unwrap_or_default(),
    })
}

/// The median of `values` (NaN for none).
pub(super) fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
