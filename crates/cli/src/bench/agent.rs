//! `toolbridge bench agent`: the workload coding agents make, against two servers side by
//! side: several sessions at once, each a conversation of turns that all start with the
//! same long system prompt and the same twelve tools, every turn a call and its result.
//!
//! What an agent waits for is the whole answer of each turn, and what its user sees first
//! is the first content of each (text, or a call's name); so the figures are each turn's
//! first content (the median over the sessions) and the wall time of all sessions, per
//! server. The servers take turns (all sessions on one, then on the other), and each run
//! opens its system prompt with a nonce, so neither finds it cached from before: the run
//! itself shows whether a prompt evaluated for one session is evaluated again for the next.
//!
//! A turn answered with calls continues with each call's result, as an agent's tools would
//! give it; a turn answered with text (no call, or a call a server left in its text)
//! continues with the user asking for the next step. Results are made up but fixed, so
//! both servers see the same kind of conversation.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::serve::{endpoint, nonce};
use super::stream::{
    add_call_delta, at_once, chat_chunk, median, timed_events, StreamedCall, Timing,
};

#[derive(clap::Args)]
pub struct AgentArgs {
    /// The server measured (its `/v1/chat/completions` is asked).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The server it is compared with: llama-server, vLLM, another toolbridge.
    #[arg(long)]
    against: String,
    /// Sessions at once (give the servers as many slots).
    #[arg(long, default_value_t = 4)]
    sessions: usize,
    /// Turns per session.
    #[arg(long, default_value_t = 4)]
    turns: usize,
    /// The shared system prompt's length, in rules of some 33 tokens each (120: ~4k tokens).
    #[arg(long, default_value_t = 120)]
    rules: usize,
    /// Tokens each turn may generate.
    #[arg(long, default_value_t = 160)]
    max_tokens: u32,
    /// The `model` field of the requests.
    #[arg(long, default_value = "default")]
    model: String,
}

/// One server's run: every session's turns.
struct Run {
    /// `turns[session][turn]`.
    turns: Vec<Vec<Timing>>,
    /// Turns answered with a call.
    calls: usize,
    wall: Duration,
    prompt_tokens: u64,
}

pub fn run(args: &AgentArgs) -> Result<()> {
    // A new connection per request, as `bench serve` does: a server may close an idle one
    // just as it is reused (llama-server did, between two turns).
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(1800))
        .max_idle_connections(0)
        .build();
    println!(
        "bench agent: {} against {}, {} sessions of {} turns, {} tools, a {}-rule system prompt",
        args.url,
        args.against,
        args.sessions,
        args.turns,
        tools().as_array().map_or(0, Vec::len),
        args.rules
    );
    let ours = run_sessions(&agent, &endpoint(&args.url), args).context("the measured server")?;
    let theirs =
        run_sessions(&agent, &endpoint(&args.against), args).context("the compared server")?;
    println!(
        "| figure | {} | {} | ratio |\n|---|---|---|---|",
        args.url, args.against
    );
    for turn in 0..args.turns {
        let [a, b] = [&ours, &theirs].map(|run| run.first_content(turn));
        println!(
            "| turn {}, first content (median of {}) | {} | {} | {:.2} |",
            turn + 1,
            args.sessions,
            millis(a),
            millis(b),
            b / a
        );
    }
    for (name, value) in [
        (
            "turn, whole answer (median)",
            Run::answer_time as fn(&Run) -> f64,
        ),
        ("all sessions, wall time", |run: &Run| {
            run.wall.as_secs_f64()
        }),
    ] {
        let [a, b] = [&ours, &theirs].map(value);
        println!("| {name} | {} | {} | {:.2} |", millis(a), millis(b), b / a);
    }
    let all = args.sessions * args.turns;
    println!(
        "| turns answered with a call | {}/{all} | {}/{all} | |",
        ours.calls, theirs.calls
    );
    println!(
        "| largest prompt | {} tokens | {} tokens | |",
        ours.prompt_tokens, theirs.prompt_tokens
    );
    Ok(())
}

impl Run {
    fn first_content(&self, turn: usize) -> f64 {
        median(self.turns.iter().filter_map(|turns| {
            let timing = turns.get(turn)?;
            Some(timing.first_content.unwrap_or(timing.end).as_secs_f64())
        }))
    }

    fn answer_time(&self) -> f64 {
        median(self.turns.iter().flatten().map(|t| t.end.as_secs_f64()))
    }
}

fn millis(seconds: f64) -> String {
    format!("{:.0} ms", seconds * 1e3)
}

/// Runs every session at once on `url`, each on its own thread.
fn run_sessions(agent: &ureq::Agent, url: &str, args: &AgentArgs) -> Result<Run> {
    let system = format!("{} {}", nonce(), system_prompt(args.rules));
    let started = Instant::now();
    let sessions = at_once(
        (0..args.sessions)
            .map(|index| {
                let system = &system;
                move || run_session(agent, url, args, system, index)
            })
            .collect(),
    )?;
    let wall = started.elapsed();
    Ok(Run {
        calls: sessions.iter().map(|s| s.calls).sum(),
        prompt_tokens: sessions
            .iter()
            .flat_map(|s| &s.turns)
            .map(|t| t.prompt_tokens)
            .max()
            .unwrap_or(0),
        turns: sessions.into_iter().map(|s| s.turns).collect(),
        wall,
    })
}

struct Session {
    turns: Vec<Timing>,
    calls: usize,
}

/// One session: its task, then a turn per request, each answer and its results added.
fn run_session(
    agent: &ureq::Agent,
    url: &str,
    args: &AgentArgs,
    system: &str,
    index: usize,
) -> Result<Session> {
    let mut messages = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": TASKS[index % TASKS.len()]}),
    ];
    let mut session = Session {
        turns: Vec::new(),
        calls: 0,
    };
    for turn in 0..args.turns {
        let request = json!({
            "model": args.model,
            "messages": messages,
            "tools": tools(),
            "temperature": 0,
            "max_tokens": args.max_tokens,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        let (timing, events) = timed_events(agent, url, &request, chat_chunk)
            .with_context(|| format!("session {index}, turn {}", turn + 1))?;
        let answer =
            Answer::of(&events).with_context(|| format!("session {index}, turn {}", turn + 1))?;
        session.turns.push(timing);
        if answer.calls.is_empty() {
            messages.push(json!({"role": "assistant", "content": answer.text}));
            messages.push(json!({"role": "user", "content": NEXT_STEP}));
            continue;
        }
        session.calls += 1;
        messages.push(answer.message());
        for (n, call) in answer.calls.iter().enumerate() {
            messages.push(json!({
                "role": "tool",
                "tool_call_id": call_id(call, n),
                "content": tool_result(&call.name),
            }));
        }
    }
    Ok(session)
}

/// What the user says after a turn answered without a call.
const NEXT_STEP: &str = "Go on with the next step; use the tools.";

/// Each session's task.
const TASKS: [&str; 4] = [
    "The test parse_dates in tests/dates.rs fails since yesterday. Find out why and fix it.",
    "Add a --verbose flag to the command line in src/main.rs that prints each step.",
    "Rename the function load_cfg to load_config everywhere in the repository.",
    "cargo build warns about an unused import in src/net/client.rs; remove it and commit.",
];

/// An answer put back together from its stream: its text and its calls.
#[derive(Default)]
struct Answer {
    text: String,
    calls: Vec<StreamedCall>,
}

impl Answer {
    fn of(events: &[Value]) -> Result<Answer> {
        let mut answer = Answer::default();
        for event in events {
            let delta = &event["choices"][0]["delta"];
            if let Some(text) = delta["content"].as_str() {
                answer.text.push_str(text);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                add_call_delta(&mut answer.calls, call)?;
            }
        }
        Ok(answer)
    }

    /// The assistant message the answer is in the conversation's history.
    fn message(&self) -> Value {
        let calls: Vec<Value> = self
            .calls
            .iter()
            .enumerate()
            .map(|(n, call)| {
                json!({"id": call_id(call, n), "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments}})
            })
            .collect();
        let content = (!self.text.is_empty()).then_some(self.text.as_str());
        json!({"role": "assistant", "content": content, "tool_calls": calls})
    }
}

/// The call's id, or one made up for a server that sent none.
fn call_id(call: &StreamedCall, n: usize) -> String {
    if call.id.is_empty() {
        format!("call_{n}")
    } else {
        call.id.clone()
    }
}

/// A tool's made-up result, the same for every call of it.
fn tool_result(name: &str) -> String {
    match name {
        "read_file" => (1..=24)
            .map(|line| format!("{line:>4} | {}", SOURCE_LINES[line % SOURCE_LINES.len()]))
            .collect::<Vec<_>>()
            .join("\n"),
        "list_dir" => "src/\n  main.rs\n  lib.rs\n  dates.rs\n  net/\n    client.rs\n    server.rs\ntests/\n  dates.rs\n  cli.rs\nCargo.toml\nREADME.md".into(),
        "search_code" => "src/dates.rs:14: pub fn parse_date(text: &str) -> Option<Date> {\nsrc/main.rs:31:     let config = load_cfg(&path)?;\ntests/dates.rs:9: fn parse_dates() {".into(),
        "run_tests" | "run_shell" => "running 12 tests\ntest dates::parse_dates ... FAILED\n\nfailures:\n---- dates::parse_dates stdout ----\nthread 'dates::parse_dates' panicked at tests/dates.rs:12:5:\nassertion `left == right` failed\n  left: None\n right: Some(Date { year: 2026, month: 2, day: 29 })\n\ntest result: FAILED. 11 passed; 1 failed".into(),
        "git_status" | "git_diff" => "M src/dates.rs\n@@ -14,7 +14,7 @@\n-    if day > 28 {\n+    if day > days_in_month(year, month) {".into(),
        _ => "Done.".into(),
    }
}

const SOURCE_LINES: [&str; 8] = [
    "use std::str::FromStr;",
    "pub fn parse_date(text: &str) -> Option<Date> {",
    "    let mut parts = text.split('-');",
    "    let year = u32::from_str(parts.next()?).ok()?;",
    "    let month = u8::from_str(parts.next()?).ok()?;",
    "    let day = u8::from_str(parts.next()?).ok()?;",
    "    if day > 28 { return None; }",
    "    Some(Date { year, month, day })",
];

/// The twelve tools of `examples/tools/agent.json`.
fn tools() -> Value {
    let file: Value = serde_json::from_str(include_str!("../../../../examples/tools/agent.json"))
        .unwrap_or_default();
    file["tools"].clone()
}

/// A coding agent's system prompt of `rules` numbered rules, some 33 tokens each.
fn system_prompt(rules: usize) -> String {
    const WHEN: [&str; 6] = [
        "before you change a file",
        "when a test fails",
        "when the user's request is unclear",
        "after every edit",
        "when a command may delete data",
        "before you commit",
    ];
    const DO: [&str; 7] = [
        "read the surrounding code and follow its conventions",
        "run the narrowest test that covers the change",
        "ask one short question instead of guessing",
        "check the diff for changes you did not mean to make",
        "explain what the command does and wait for approval",
        "keep the change as small as the task allows",
        "write a commit message that says why, not only what",
    ];
    const WHY: [&str; 5] = [
        "because the user reviews every line you write",
        "since a broken build blocks everyone on the team",
        "as the repository is shared by many people",
        "so that the history stays easy to read",
        "because a wrong guess costs more than a question",
    ];
    let mut prompt = String::from(
        "You are a coding agent working in the user's repository through the tools you are \
         given. Follow these rules.\n",
    );
    for rule in 0..rules {
        prompt.push_str(&format!(
            "Rule {}: {}, {}, {}.\n",
            rule + 1,
            WHEN[rule % WHEN.len()],
            DO[(rule / WHEN.len()) % DO.len()],
            WHY[rule % WHY.len()],
        ));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_put_back_together_from_its_chunks() {
        let events = [
            json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1",
                "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "{\"path\": "}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "\"src/dates.rs\"}"}}]}}]}),
        ];
        let answer = Answer::of(&events).expect("well formed");
        assert_eq!(answer.calls.len(), 1);
        assert_eq!(answer.calls[0].name, "read_file");
        assert_eq!(answer.calls[0].arguments, "{\"path\": \"src/dates.rs\"}");
        assert_eq!(answer.message()["tool_calls"][0]["id"], "c1");
    }

    #[test]
    fn the_system_prompt_and_tools_are_an_agents() {
        assert_eq!(tools().as_array().map(Vec::len), Some(12));
        let prompt = system_prompt(120);
        assert_eq!(prompt.lines().count(), 121);
    }
}
