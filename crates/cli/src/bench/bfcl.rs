//! `toolbridge bench bfcl`: BFCL questions sent to an OpenAI-compatible server, the
//! answers judged by BFCL's AST rules ([`toolbridge_chat::bfcl`]).
//!
//! It talks HTTP to whatever serves `/v1/chat/completions` — toolbridge, llama.cpp's
//! server, vLLM — so the same command compares them on the same questions. Each question is
//! asked streaming, not streaming, or both; a streamed answer's tool-call deltas are put
//! together as an OpenAI SDK does (per `index`: the first id and name, arguments
//! concatenated), so the two modes are judged on what a client would hold.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use toolbridge_chat::bfcl::{self, Answer, Question};
use toolbridge_chat::{Arguments, ToolCall};

use super::stream::add_call_delta;

#[derive(clap::Args)]
pub struct BfclArgs {
    /// The server's base URL (its `/v1/chat/completions` is asked).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// BFCL's folder: `BFCL_v4_<category>.json` and `possible_answer/`.
    #[arg(long, default_value = "../shared/corpus/bfcl")]
    corpus: PathBuf,
    /// The first N questions of each category, as `category:N`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "simple_python:40,multiple:30,parallel:30"
    )]
    categories: Vec<String>,
    /// Which ways to ask.
    #[arg(long, value_enum, default_value_t = Modes::Both)]
    modes: Modes,
    /// The `model` field of the requests.
    #[arg(long, default_value = "default")]
    model: String,
    /// Each answer, judged, as JSON lines.
    #[arg(long)]
    answers: Option<PathBuf>,
    /// Seconds to wait for one answer.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Modes {
    Streaming,
    NonStreaming,
    Both,
}

impl Modes {
    fn streams(self) -> Vec<bool> {
        match self {
            Modes::Streaming => vec![true],
            Modes::NonStreaming => vec![false],
            Modes::Both => vec![false, true],
        }
    }
}

/// The tally of one mode.
#[derive(Default)]
struct Tally {
    asked: usize,
    with_calls: usize,
    correct: usize,
    seconds: f64,
}

pub fn run(args: &BfclArgs) -> Result<()> {
    let questions = selected_questions(args)?;
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(args.timeout))
        .build();
    let endpoint = format!("{}/v1/chat/completions", args.url.trim_end_matches('/'));
    let mut answers = match &args.answers {
        Some(path) => Some(
            std::fs::File::create(path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        ),
        None => None,
    };
    for stream in args.modes.streams() {
        let mode = if stream { "streaming" } else { "non-streaming" };
        let mut tally = Tally::default();
        for (question, answer) in &questions {
            let started = Instant::now();
            let calls = ask(&agent, &endpoint, &args.model, question, stream)
                .with_context(|| format!("{}: asking {endpoint}", question.id))?;
            tally.seconds += started.elapsed().as_secs_f64();
            let verdict = bfcl::check(question, answer, &calls);
            tally.asked += 1;
            tally.with_calls += usize::from(!calls.is_empty());
            tally.correct += usize::from(verdict.is_ok());
            if let Some(file) = answers.as_mut() {
                let line = json!({
                    "id": question.id, "mode": mode, "calls": calls,
                    "correct": verdict.is_ok(), "why": verdict.err(),
                });
                writeln!(file, "{line}")?;
            }
        }
        println!(
            "bfcl {mode}: {} questions, {} answers with tool calls, {} correct ({:.1} s per answer)",
            tally.asked,
            tally.with_calls,
            tally.correct,
            tally.seconds / tally.asked.max(1) as f64
        );
    }
    Ok(())
}

/// The first questions of each `category:N`.
fn selected_questions(args: &BfclArgs) -> Result<Vec<(Question, Answer)>> {
    let mut selected = Vec::new();
    for spec in &args.categories {
        let (category, count) = spec
            .split_once(':')
            .with_context(|| format!("{spec:?} is not category:N"))?;
        let count: usize = count
            .parse()
            .with_context(|| format!("{spec:?}: {count:?} is not a number"))?;
        let questions = bfcl::load(&args.corpus, category)?;
        if questions.len() < count {
            bail!("{category} has {} questions, not {count}", questions.len());
        }
        selected.extend(questions.into_iter().take(count));
    }
    Ok(selected)
}

/// The tool calls of the server's answer to `question`.
fn ask(
    agent: &ureq::Agent,
    endpoint: &str,
    model: &str,
    question: &Question,
    stream: bool,
) -> Result<Vec<ToolCall>> {
    let body = json!({
        "model": model,
        "messages": question.messages,
        "tools": question.tools()?,
        "temperature": 0,
        "stream": stream,
    });
    let response = match agent.post(endpoint).send_json(body) {
        Ok(response) => response,
        Err(ureq::Error::Status(status, response)) => {
            let text = response.into_string().unwrap_or_default();
            bail!("status {status}: {text}");
        }
        Err(error) => return Err(error.into()),
    };
    if stream {
        streamed_calls(BufReader::new(response.into_reader()))
    } else {
        let answer: Value = response.into_json()?;
        let calls = answer["choices"][0]["message"]["tool_calls"].clone();
        Ok(serde_json::from_value::<Option<Vec<ToolCall>>>(calls)?.unwrap_or_default())
    }
}

/// The calls of a server-sent-events stream, put together per `index` as OpenAI's SDKs do.
fn streamed_calls(reader: impl BufRead) -> Result<Vec<ToolCall>> {
    let mut calls = Vec::new();
    for line in reader.lines() {
        let line = line?;
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).context("a chunk is not JSON")?;
        if let Some(error) = chunk.get("error") {
            bail!("the stream carried an error: {error}");
        }
        for delta in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            add_call_delta(&mut calls, delta)?;
        }
    }
    Ok(calls
        .into_iter()
        .map(|call| ToolCall::new(call.id, call.name, Arguments::Text(call.arguments)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_deltas_fold_per_index() {
        let stream = [
            r#"data: {"choices":[{"delta":{"role":"assistant"}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
            "data: [DONE]",
        ]
        .join("\n\n");
        let calls = streamed_calls(stream.as_bytes()).unwrap();
        let folded: Vec<(String, String)> = calls
            .iter()
            .map(|call| {
                (
                    call.name().to_string(),
                    call.function.arguments.as_json_string().into(),
                )
            })
            .collect();
        assert_eq!(
            folded,
            [("f".into(), "{\"x\":1}".into()), ("g".into(), "{}".into())]
        );
    }
}
