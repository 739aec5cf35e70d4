//! The Python agent clients of `scripts/clients.sh` — OpenAI's Agents SDK (Chat
//! Completions and Responses), pydantic-ai (Chat Completions, Responses, Anthropic),
//! langchain-openai (`bind_tools`, whole, streamed and over Responses) and the Anthropic
//! SDK's tool runner — each run as its documentation shows against `toolbridge serve` on
//! the default model, on one task that needs a tool (`scripts/clients/sdk_clients.py`).
//!
//! What must hold is the wire: every request a client makes is answered without a 4xx or
//! 5xx (read from the server's own `/metrics` counters, before and after each client) and
//! no client raises. Whether the 0.5B model calls the tool is its own affair; the table
//! printed at the end says which did. The npm CLIs (Codex, Claude Code, opencode) and the
//! `llm` CLI send prompts of thousands of tokens and take minutes each on two cores, so
//! they stay in `scripts/clients.sh`.
//!
//! The clients are installed from PyPI, at the versions `scripts/clients.sh` pins, into the
//! tests' virtual environment (`common::test_python`). Built with the `llama` feature.

#![cfg(feature = "llama")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::serve::ServeProcess;
use crate::common::{one_at_a_time, scratch, test_python, workspace};

const KEY: &str = "sk-clients";

/// The clients' packages, pinned as in `scripts/clients.sh`, with a module each imports.
const PACKAGES: &[(&str, &str)] = &[
    ("openai-agents==0.24.0", "agents"),
    ("pydantic-ai-slim[openai,anthropic]==2.68.0", "pydantic_ai"),
    ("langchain-openai==1.7.4", "langchain_openai"),
    ("anthropic==2.14.0", "anthropic"),
];

/// Refusals a client is built to answer: the Anthropic SDK's tool runner first asks for a
/// server-side thread, and on the 400 `thread_unsupported_request` that toolbridge (being
/// stateless) sends, resends the whole conversation. Client, route, status, how many.
const EXPECTED_REFUSALS: &[(&str, &str, u16, u64)] =
    &[("anthropic-tool-runner", "/v1/messages", 400, 1)];

/// How one client fared.
struct Outcome {
    client: String,
    /// Requests answered for it, by route and status.
    answered: BTreeMap<(String, u16), u64>,
    exit: std::process::ExitStatus,
    tool_called: bool,
}

impl Outcome {
    /// Whether `count` answers of `status` on `route` are refusals this client expects.
    fn expected(&self, route: &str, status: u16, count: u64) -> bool {
        EXPECTED_REFUSALS.contains(&(self.client.as_str(), route, status, count))
    }

    /// The client raised its own verdict on the model's well-formed answers (exit 3 of
    /// `sdk_clients.py`: a turn limit, an empty answer retried too often): the 0.5B model's
    /// affair, not the wire's.
    fn model_gave_up(&self) -> bool {
        self.exit.code() == Some(3)
    }

    fn faults(&self) -> Vec<String> {
        let mut faults: Vec<String> = self
            .answered
            .iter()
            .filter(|((route, status), count)| {
                *status >= 400 && !self.expected(route, *status, **count)
            })
            .map(|((route, status), count)| format!("{count}× {route} {status}"))
            .collect();
        if self.answered.is_empty() {
            faults.push("no request".to_owned());
        }
        if !self.exit.success() && !self.model_gave_up() {
            faults.push(format!("client {}", self.exit));
        }
        faults
    }
}

#[test]
fn the_python_agent_clients_get_clean_answers() {
    let _turn = one_at_a_time();
    let python = test_python(PACKAGES);
    let server = ServeProcess::start(&["--api-key", KEY], &[]);
    let scripts = workspace().join("scripts/clients");
    let outcomes: Vec<Outcome> = clients(&python, &scripts)
        .into_iter()
        .map(|client| run_client(&python, &scripts, &server, client))
        .collect();

    println!("| client | requests | faults | tool called | model gave up |");
    for outcome in &outcomes {
        println!(
            "| {} | {} | {} | {} | {} |",
            outcome.client,
            outcome.answered.values().sum::<u64>(),
            outcome.faults().join(", "),
            if outcome.tool_called { "yes" } else { "no" },
            if outcome.model_gave_up() { "yes" } else { "no" }
        );
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|outcome| !outcome.faults().is_empty())
        .map(|outcome| format!("{}: {}", outcome.client, outcome.faults().join(", ")))
        .collect();
    assert!(failed.is_empty(), "wire faults:\n{}", failed.join("\n"));
}

/// The clients `sdk_clients.py` knows.
fn clients(python: &Path, scripts: &Path) -> Vec<String> {
    let output = Command::new(python)
        .arg(scripts.join("sdk_clients.py"))
        .arg("--list")
        .output()
        .expect("sdk_clients.py runs");
    assert!(output.status.success(), "sdk_clients.py --list failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs `client` in a folder of its own and counts the requests it made.
fn run_client(python: &Path, scripts: &Path, server: &ServeProcess, client: String) -> Outcome {
    let folder = scratch(&format!("agent-clients/{client}"));
    let before = answered(server);
    let exit = Command::new(python)
        .arg(scripts.join("sdk_clients.py"))
        .args([&client, &server.base_url, KEY, &model_id(server)])
        .current_dir(&folder)
        .env("PYTHONPATH", scripts)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    let mut answered = answered(server);
    for (key, count) in before {
        if let Some(after) = answered.get_mut(&key) {
            *after -= count;
        }
    }
    answered.retain(|(route, _), count| *count > 0 && route != "/metrics");
    Outcome {
        client,
        answered,
        exit,
        tool_called: folder.join("tool-called.txt").is_file(),
    }
}

/// The id of the model the server serves, as `/v1/models` names it.
fn model_id(server: &ServeProcess) -> String {
    let models: serde_json::Value = ureq::get(&format!("{}/v1/models", server.base_url))
        .set("Authorization", &format!("Bearer {KEY}"))
        .call()
        .expect("/v1/models answers")
        .into_json()
        .expect("/v1/models is JSON");
    models["data"][0]["id"]
        .as_str()
        .expect("a model id")
        .to_owned()
}

/// The server's `toolbridge_requests_total` counters, by route and status.
fn answered(server: &ServeProcess) -> BTreeMap<(String, u16), u64> {
    let text = ureq::get(&format!("{}/metrics", server.base_url))
        .set("Authorization", &format!("Bearer {KEY}"))
        .call()
        .expect("/metrics answers")
        .into_string()
        .expect("/metrics is text");
    text.lines()
        .filter_map(|line| line.strip_prefix("toolbridge_requests_total{route=\""))
        .filter_map(|rest| {
            let (route, rest) = rest.split_once("\",status=\"")?;
            let (status, count) = rest.split_once("\"} ")?;
            Some((
                (route.to_owned(), status.parse().ok()?),
                count.parse().ok()?,
            ))
        })
        .collect()
}
