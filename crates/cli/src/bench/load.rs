//! `toolbridge bench load`: a running server under load and faults for a while, then
//! checked: every well-formed request answered (or refused 503 for a full queue), oversized
//! prompts refused 400, the server's memory back where it was, `/metrics` agreeing with
//! what was sent.
//!
//! Clients mix what users send: streamed and whole answers, every `tool_choice` over eight
//! tools; a third of the streams hang up after their first chunk; one more client sends a
//! prompt far over any context every few seconds. Run it against `toolbridge serve
//! --parallel 2` on the default model (`scripts/load-test.sh` does both).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::serve::{eight_tools, endpoint};

#[derive(clap::Args)]
pub struct LoadArgs {
    /// The server (its `/v1/chat/completions` and `/metrics` are asked).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// How long the load runs.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Clients sending requests one after another.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Seconds between two prompts far over the context.
    #[arg(long, default_value_t = 5)]
    oversize_every: u64,
    /// Tokens generated per request.
    #[arg(long, default_value_t = 24)]
    max_tokens: u32,
    /// The server's process id, to read its resident memory before and after.
    #[arg(long)]
    pid: Option<u32>,
}

/// How one request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Answered whole (a stream read to `[DONE]`).
    Answered,
    /// A stream the client hung up on after its first chunk.
    HungUp,
    /// 503: the queue was full.
    Busy,
    /// 400 `context_length_exceeded` for an oversized prompt.
    RefusedOversize,
    /// Anything else: a failure.
    Failed,
}

/// The outcomes by request kind.
#[derive(Default)]
struct Tally {
    counts: Mutex<BTreeMap<(String, Outcome), u64>>,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn record(&self, kind: &str, outcome: Result<Outcome>) {
        let outcome = outcome.unwrap_or_else(|error| {
            let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
            failures.push(format!("{kind}: {error:#}"));
            Outcome::Failed
        });
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry((kind.to_owned(), outcome)).or_default() += 1;
    }

    fn total(&self, outcome: Outcome) -> u64 {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts
            .iter()
            .filter(|((_, o), _)| *o == outcome)
            .map(|(_, n)| n)
            .sum()
    }
}

pub fn run(args: &LoadArgs) -> Result<()> {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(300))
        .build();
    let url = endpoint(&args.url);
    // One answer first, so that memory the engine allocates once (its compute buffers,
    // the grammar cache) is in the baseline rather than counted as growth.
    let (_, warm_up, _) = request(0, 1, args.max_tokens);
    send(&agent, &url, &warm_up, false).context("the warm-up request")?;
    let before_metrics = scrape(&agent, &args.url)?;
    let rss_before = args.pid.map(resident_kib).transpose()?;
    let tally = Tally::default();
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    std::thread::scope(|scope| {
        for client in 0..args.clients {
            let (agent, url, tally) = (&agent, &url, &tally);
            scope.spawn(move || {
                let mut turn = 0;
                while Instant::now() < deadline {
                    let (kind, body, hang_up) = request(client, turn, args.max_tokens);
                    tally.record(&kind, send(agent, url, &body, hang_up));
                    turn += 1;
                }
            });
        }
        let (agent, url, tally) = (&agent, &url, &tally);
        scope.spawn(move || {
            while Instant::now() < deadline {
                tally.record("prompt over the context", oversize(agent, url));
                std::thread::sleep(Duration::from_secs(args.oversize_every));
            }
        });
    });
    // Let hung-up generations notice and give their slots back.
    std::thread::sleep(Duration::from_secs(2));
    let after_metrics = scrape(&agent, &args.url)?;
    let rss_after = args.pid.map(resident_kib).transpose()?;
    report(
        &tally,
        &before_metrics,
        &after_metrics,
        rss_before.zip(rss_after),
    )
}

/// The `turn`-th request of `client`: its kind, its body, whether to hang up after the
/// first chunk. Each client alternates streamed and whole answers and steps through the
/// tool choices (offset by its number, so all combinations run at once); every third
/// stream hangs up.
fn request(client: usize, turn: usize, max_tokens: u32) -> (String, Value, bool) {
    const CHOICES: [&str; 4] = ["auto", "required", "none", "get_weather"];
    let choice = CHOICES[(client + turn / 2) % CHOICES.len()];
    let stream = turn.is_multiple_of(2);
    let hang_up = stream && (turn / 2).is_multiple_of(3);
    let tool_choice = match choice {
        "get_weather" => json!({"type": "function", "function": {"name": "get_weather"}}),
        mode => json!(mode),
    };
    let body = json!({
        "messages": [{"role": "user", "content": format!(
            "Request {client}.{turn}: what is the weather in Paris, and what time is it there?")}],
        "tools": eight_tools(),
        "tool_choice": tool_choice,
        "max_tokens": max_tokens,
        "stream": stream,
    });
    let shape = match (stream, hang_up) {
        (false, _) => "whole",
        (true, false) => "streamed",
        (true, true) => "streamed, hung up",
    };
    (format!("{shape}, tool_choice {choice}"), body, hang_up)
}

/// Sends `body`; a stream is read to its end, or dropped after its first chunk.
fn send(agent: &ureq::Agent, url: &str, body: &Value, hang_up: bool) -> Result<Outcome> {
    let response = match agent.post(url).send_json(body) {
        Ok(response) => response,
        Err(ureq::Error::Status(503, _)) => return Ok(Outcome::Busy),
        Err(ureq::Error::Status(status, response)) => {
            bail!("{status}: {}", response.into_string().unwrap_or_default())
        }
        Err(error) => return Err(error.into()),
    };
    if body["stream"] != json!(true) {
        let answer: Value = response.into_json().context("a JSON answer")?;
        return match answer["choices"][0]["finish_reason"].as_str() {
            Some(_) => Ok(Outcome::Answered),
            None => bail!("no finish reason: {answer}"),
        };
    }
    for line in BufReader::new(response.into_reader()).lines() {
        let line = line.context("the stream broke")?;
        if hang_up && line.starts_with("data: ") {
            return Ok(Outcome::HungUp);
        }
        if line == "data: [DONE]" {
            return Ok(Outcome::Answered);
        }
        if line.contains("\"error\"") {
            bail!("an error in the stream: {line}");
        }
    }
    bail!("the stream ended without [DONE]")
}

/// A prompt of some 400,000 characters, which no default context holds.
fn oversize(agent: &ureq::Agent, url: &str) -> Result<Outcome> {
    let text = "the quick brown fox jumps over the lazy dog ".repeat(10_000);
    let body = json!({"messages": [{"role": "user", "content": text}], "max_tokens": 8});
    match agent.post(url).send_json(&body) {
        Err(ureq::Error::Status(400, response)) => {
            let error: Value = response.into_json().context("an error object")?;
            match error["error"]["code"].as_str() {
                Some("context_length_exceeded") => Ok(Outcome::RefusedOversize),
                _ => bail!("400 but not context_length_exceeded: {error}"),
            }
        }
        Err(ureq::Error::Status(503, _)) => Ok(Outcome::Busy),
        Err(ureq::Error::Status(status, response)) => {
            bail!("{status}: {}", response.into_string().unwrap_or_default())
        }
        Ok(_) => bail!("an oversized prompt was answered 200"),
        Err(error) => Err(error.into()),
    }
}

/// `GET /metrics`, as sample name (with labels) → value.
fn scrape(agent: &ureq::Agent, base: &str) -> Result<BTreeMap<String, f64>> {
    let url = format!("{}/metrics", base.trim_end_matches('/'));
    let text = agent
        .get(&url)
        .call()
        .with_context(|| format!("cannot read {url}"))?
        .into_string()?;
    Ok(text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect())
}

/// The resident memory of process `pid`, in KiB (`VmRSS` in `/proc/PID/status`).
fn resident_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read the memory of process {pid}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS line")
}

/// Prints the tally, memory and metrics; fails when a request failed or the metrics
/// disagree with what was sent.
fn report(
    tally: &Tally,
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
    rss: Option<(u64, u64)>,
) -> Result<()> {
    println!("| requests | outcome | count |\n|---|---|---|");
    let counts = tally.counts.lock().unwrap_or_else(|e| e.into_inner());
    for ((kind, outcome), count) in counts.iter() {
        println!("| {kind} | {outcome:?} | {count} |");
    }
    drop(counts);
    let sent: u64 = [
        Outcome::Answered,
        Outcome::HungUp,
        Outcome::Busy,
        Outcome::RefusedOversize,
        Outcome::Failed,
    ]
    .into_iter()
    .map(|outcome| tally.total(outcome))
    .sum();
    let delta = |name: &str| {
        after.get(name).copied().unwrap_or(0.0) - before.get(name).copied().unwrap_or(0.0)
    };
    let route = "toolbridge_requests_total{route=\"/v1/chat/completions\",status=";
    let answered_200 = delta(&format!("{route}\"200\"}}"));
    let refused_400 = delta(&format!("{route}\"400\"}}"));
    let busy_503 = delta(&format!("{route}\"503\"}}"));
    println!(
        "sent {sent}: answered {}, hung up {}, 503 {}, oversize refused {}, failed {}",
        tally.total(Outcome::Answered),
        tally.total(Outcome::HungUp),
        tally.total(Outcome::Busy),
        tally.total(Outcome::RefusedOversize),
        tally.total(Outcome::Failed)
    );
    println!(
        "/metrics: 200 {answered_200}, 400 {refused_400}, 503 {busy_503}; completion tokens {}; context refusals {}",
        delta("toolbridge_completion_tokens_total"),
        delta("toolbridge_budget_refusals_total{kind=\"context_length_exceeded\"}")
    );
    if let Some((before, after)) = rss {
        let change = after as f64 / before as f64 - 1.0;
        println!(
            "server memory (RSS): {before} KiB before, {after} KiB after ({:+.1}%)",
            change * 100.0
        );
    }
    for failure in tally
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .take(20)
    {
        println!("failure: {failure}");
    }
    let ok_200 = (tally.total(Outcome::Answered) + tally.total(Outcome::HungUp)) as f64;
    let agrees = answered_200 == ok_200
        && refused_400 == tally.total(Outcome::RefusedOversize) as f64
        && busy_503 == tally.total(Outcome::Busy) as f64;
    if tally.total(Outcome::Failed) > 0 || !agrees {
        bail!("the load test failed (failures, or /metrics disagreeing with what was sent)");
    }
    Ok(())
}
