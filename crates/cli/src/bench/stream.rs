//! Timing one streamed request: when its first output came, when the user first saw
//! something of the answer (text, or a call's name), when its call was written out, when
//! it ended, and the token counts its stream reported. Every bench that times servers
//! reads streams here.
//!
//! The first output is not what a user sees: OpenAI-style servers open a stream with an
//! empty `role` delta, and a server that holds a call until it is whole sends that role
//! chunk long before anything else. So the first *content* (text, reasoning or a call's
//! name) is timed apart from it.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// What one streamed event says.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The event carries model output (text, reasoning or a call), or opens the stream.
    pub(super) output: bool,
    /// The event shows the user something: text, reasoning, or a call's name.
    pub(super) content: bool,
    /// The event names a call.
    pub(super) call_name: bool,
    /// The event carries a piece of a call (its name or arguments).
    pub(super) call_part: bool,
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
    /// The first text, reasoning or call name, if any came.
    pub(super) first_content: Option<Duration>,
    /// The first call's name, if a call came.
    pub(super) first_call_name: Option<Duration>,
    /// The last piece of a call, if a call came: when the client has it whole.
    pub(super) call_end: Option<Duration>,
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
/// writes, even a call a server holds until it is whole. Content is text, reasoning
/// (`reasoning_content`, or `reasoning` as vLLM names it) or a call's name.
pub(super) fn chat_chunk(event: &Value) -> Seen {
    let delta = &event["choices"][0]["delta"];
    let has_text = |key: &str| delta[key].as_str().is_some_and(|text| !text.is_empty());
    let calls = delta["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let call_name = calls.iter().any(|call| {
        call["function"]["name"]
            .as_str()
            .is_some_and(|name| !name.is_empty())
    });
    Seen {
        output: delta.as_object().is_some_and(|delta| !delta.is_empty()),
        content: call_name
            || ["content", "reasoning_content", "reasoning"]
                .iter()
                .any(|k| has_text(k)),
        call_name,
        call_part: !calls.is_empty(),
        completion_tokens: event["usage"]["completion_tokens"].as_u64(),
        prompt_tokens: event["usage"]["prompt_tokens"].as_u64(),
    }
}

/// Posts `body` to `url` and reads its server-sent events with `read`.
pub(super) fn timed(agent: &ureq::Agent, url: &str, body: &Value, read: Reader) -> Result<Timing> {
    timed_events(agent, url, body, read).map(|(timing, _)| timing)
}

/// [`timed`], with the events the stream sent, for a caller that reads the answer too.
pub(super) fn timed_events(
    agent: &ureq::Agent,
    url: &str,
    body: &Value,
    read: Reader,
) -> Result<(Timing, Vec<Value>)> {
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
    let (mut first_content, mut first_call_name, mut call_end) = (None, None, None);
    let mut counts = Seen::default();
    let mut events = Vec::new();
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line?;
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let seen = read(&event);
        events.push(event);
        let now = started.elapsed();
        if seen.output {
            first.get_or_insert(now);
        }
        if seen.content {
            first_content.get_or_insert(now);
        }
        if seen.call_name {
            first_call_name.get_or_insert(now);
        }
        if seen.call_part {
            call_end = Some(now);
        }
        counts.completion_tokens = seen.completion_tokens.or(counts.completion_tokens);
        counts.prompt_tokens = seen.prompt_tokens.or(counts.prompt_tokens);
    }
    let timing = Timing {
        first_output: first.with_context(|| format!("{url}: no output"))?,
        first_content,
        first_call_name,
        call_end,
        end: started.elapsed(),
        completion_tokens: counts
            .completion_tokens
            .with_context(|| format!("{url}: no token count"))?,
        prompt_tokens: counts.prompt_tokens.unwrap_or_default(),
    };
    Ok((timing, events))
}

/// A call put together from a chat stream's `tool_calls` deltas.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct StreamedCall {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) arguments: String,
}

/// Adds one `tool_calls` delta to `calls`, per `index` as OpenAI's SDKs do: the id and name
/// from the first delta that has them, the arguments' pieces joined. An index that skips
/// one is an error.
pub(super) fn add_call_delta(calls: &mut Vec<StreamedCall>, delta: &Value) -> Result<()> {
    let index = delta["index"]
        .as_u64()
        .context("a tool-call delta without an index")? as usize;
    if index > calls.len() {
        bail!("tool-call delta index {index} skips one");
    }
    if index == calls.len() {
        calls.push(StreamedCall::default());
    }
    let call = &mut calls[index];
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    if call.id.is_empty() {
        call.id = text(&delta["id"]);
    }
    if call.name.is_empty() {
        call.name = text(&delta["function"]["name"]);
    }
    call.arguments
        .push_str(&text(&delta["function"]["arguments"]));
    Ok(())
}

/// Runs each of `jobs` on its own thread, all at once; their results in order, or the
/// first error (a thread that panicked is one).
pub(super) fn at_once<T: Send, F: FnOnce() -> Result<T> + Send>(jobs: Vec<F>) -> Result<Vec<T>> {
    std::thread::scope(|scope| {
        let running: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
        running
            .into_iter()
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a thread panicked")))
            })
            .collect()
    })
}

/// The median of `values` (NaN for none).
pub(super) fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chunk(delta: Value) -> Seen {
        chat_chunk(&json!({"choices": [{"index": 0, "delta": delta}]}))
    }

    #[test]
    fn the_role_chunk_is_output_but_not_content() {
        let role = chunk(json!({"role": "assistant", "content": ""}));
        assert!(role.output && !role.content && !role.call_part);
    }

    #[test]
    fn text_reasoning_and_a_calls_name_are_content() {
        assert!(chunk(json!({"content": "Hi"})).content);
        assert!(chunk(json!({"reasoning_content": "Let me"})).content);
        let named = chunk(json!({"tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": ""}}]}));
        assert!(named.content && named.call_name && named.call_part);
    }

    #[test]
    fn arguments_are_a_piece_of_the_call_not_its_name() {
        let arguments = chunk(json!({"tool_calls": [
            {"index": 0, "function": {"arguments": "{\"city\": "}}]}));
        assert!(arguments.call_part && !arguments.call_name && !arguments.content);
    }
}
