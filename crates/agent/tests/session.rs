//! The agent loop through toolbridge's real server (the Qwen 2.5 template, the Hermes
//! dialect, its grammar and parser) with a scripted engine: the happy path and the edges
//! (a tool that fails, an unknown tool, bad arguments, the turn limit, a model that fails).

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use toolbridge_agent::{
    AgentError, AgentErrorKind, Builtins, ChatModel, Event, HttpModel, ModelFuture, Options,
    Policy, RouterModel, Session, Toolbox,
};
use toolbridge_chat::{ChatRequest, FunctionDefinition, Tool};
use toolbridge_engine::{Engine, ModelInfo, ScriptedEngine};
use toolbridge_server::{ServedModel, Server, ServerOptions, TemplateOverride};
use toolbridge_template::TemplateSource;

/// The default model's chat template, as `toolbridge serve` reads it.
fn qwen_template() -> TemplateOverride {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "default model not found (scripts/fetch-model.sh fetches it): looked at {}",
        path.display()
    );
    TemplateOverride::HuggingFace(TemplateSource::from_path(path).unwrap_or_else(|e| panic!("{e}")))
}

/// toolbridge's server over an engine that writes `outputs` in order, and the engine.
fn server(outputs: &[&str], options: ServerOptions) -> (Server, Arc<ScriptedEngine>) {
    let info = ModelInfo {
        id: "qwen-test".into(),
        context_length: 32768,
        ..ModelInfo::default()
    };
    let engine = Arc::new(ScriptedEngine::new(info, outputs.iter().copied()));
    let served = ServedModel::new(
        Arc::clone(&engine) as Arc<dyn Engine>,
        Some(qwen_template()),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served.dialect_name(), "hermes");
    (Server::new(served, options), engine)
}

/// The server of [`server`], called in-process.
fn model(outputs: &[&str]) -> (RouterModel, Arc<ScriptedEngine>) {
    let (server, engine) = server(outputs, ServerOptions::default());
    (RouterModel::new(server.router()), engine)
}

fn call(name: &str, arguments: serde_json::Value) -> String {
    format!(
        "<tool_call>\n{}\n</tool_call>",
        json!({"name": name, "arguments": arguments})
    )
}

fn builtins(workspace: &tempfile::TempDir) -> Toolbox {
    Toolbox::new().with_builtins(Builtins::new(Policy::new(workspace.path())).expect("python3"))
}

/// Runs `task` and returns its outcome and every event.
async fn run(
    model: &dyn ChatModel,
    tools: &Toolbox,
    max_turns: usize,
    task: &str,
) -> (Result<String, AgentError>, Vec<Event>) {
    let options = Options {
        max_turns,
        ..Options::default()
    };
    let mut session = Session::new(model, tools, options);
    let mut events = Vec::new();
    let outcome = session
        .run(task, &mut |event| events.push(event.clone()))
        .await;
    (outcome, events)
}

fn names(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            Event::Call { name, .. } => format!("call {name}"),
            Event::Result { name, result } => format!(
                "{} {name}",
                if result.is_error { "error" } else { "result" }
            ),
            Event::Remark(_) => "remark".into(),
            Event::Notice(_) => "notice".into(),
            Event::Answer(text) => format!("answer {text}"),
        })
        .collect()
}

#[tokio::test]
async fn two_calls_then_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (model, engine) = model(&[
        &call(
            "write_file",
            json!({"path": "a.txt", "content": "forty-two"}),
        ),
        &call("read_file", json!({"path": "a.txt"})),
        "The file says forty-two.",
    ]);
    let (outcome, events) = run(&model, &builtins(&dir), 8, "Write a.txt and read it back").await;
    assert_eq!(outcome.expect("an answer"), "The file says forty-two.");
    assert_eq!(
        names(&events),
        [
            "call write_file",
            "result write_file",
            "call read_file",
            "result read_file",
            "answer The file says forty-two."
        ]
    );
    let last_prompt = &engine.generations()[2].prompt;
    assert!(
        last_prompt.contains("<tool_response>\nforty-two\n</tool_response>"),
        "{last_prompt}"
    );
}

#[tokio::test]
async fn the_loop_runs_against_a_url_with_its_api_key() {
    let dir = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        api_key: Some("secret".into()),
        ..ServerOptions::default()
    };
    let outputs = [
        &call("run_shell", json!({"command": "echo 42"})) as &str,
        "42.",
    ];
    let (server, _) = server(&outputs, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));

    let refused = HttpModel::new(&base, Some("wrong".into()));
    let (outcome, _) = run(&refused, &builtins(&dir), 8, "Six times seven?").await;
    let error = outcome.expect_err("the key is wrong").to_string();
    assert!(error.starts_with("the model answered 401"), "{error}");

    let model = HttpModel::new(&base, Some("secret".into()));
    let (outcome, events) = run(&model, &builtins(&dir), 8, "Six times seven?").await;
    assert_eq!(outcome.expect("an answer"), "42.");
    assert_eq!(
        names(&events),
        ["call run_shell", "result run_shell", "answer 42."]
    );
}

#[tokio::test]
async fn a_failing_tool_is_told_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (model, engine) = model(&[
        &call("read_file", json!({"path": "missing.txt"})),
        "There is no such file.",
    ]);
    let (outcome, events) = run(&model, &builtins(&dir), 8, "Read missing.txt").await;
    assert_eq!(outcome.expect("an answer"), "There is no such file.");
    assert_eq!(
        names(&events),
        [
            "call read_file",
            "error read_file",
            "answer There is no such file."
        ]
    );
    assert!(engine.generations()[1]
        .prompt
        .contains("No such file or directory"));
}

/// A server without a grammar, as some remote ones are: it is told of every tool with an
/// open schema, and of one more the toolbox does not have, so the scripted model can
/// write what only an unconstrained model would. Used only for the two edges below.
struct Unconstrained(RouterModel);

impl ChatModel for Unconstrained {
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> ModelFuture<'a> {
        let mut request = request.clone();
        let tools = request.tools.get_or_insert_with(Vec::new);
        for tool in tools.iter_mut() {
            tool.function.parameters = Some(json!({"type": "object"}));
        }
        tools.push(Tool::function(FunctionDefinition::new(
            "delete_everything",
            "",
            json!({"type": "object"}),
        )));
        Box::pin(async move { self.0.chat(&request).await })
    }
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let (model, engine) = model(&[&call("delete_everything", json!({})), "I cannot."]);
    let (outcome, events) = run(
        &Unconstrained(model),
        &builtins(&dir),
        8,
        "Delete everything",
    )
    .await;
    assert_eq!(outcome.expect("an answer"), "I cannot.");
    assert_eq!(
        names(&events),
        [
            "call delete_everything",
            "error delete_everything",
            "answer I cannot."
        ]
    );
    let prompt = &engine.generations()[1].prompt;
    assert!(prompt.contains("unknown tool `delete_everything`; the tools are: run_python, run_shell, read_file, write_file"), "{prompt}");
}

#[tokio::test]
async fn bad_arguments_are_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let (model, engine) = model(&[
        &call("read_file", json!({"file": "a.txt"})),
        &call("read_file", json!({"path": 7})),
        "Giving up.",
    ]);
    let (outcome, events) = run(&Unconstrained(model), &builtins(&dir), 8, "Read a.txt").await;
    assert_eq!(outcome.expect("an answer"), "Giving up.");
    assert_eq!(
        names(&events),
        [
            "call read_file",
            "error read_file",
            "call read_file",
            "error read_file",
            "answer Giving up."
        ]
    );
    let prompt = &engine.generations()[2].prompt;
    assert!(
        prompt.contains(
            r#"bad arguments for `read_file`: {"file":"a.txt"} does not fit its parameters schema"#
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains(r#"bad arguments for `read_file`: {"path":7}"#),
        "{prompt}"
    );
}

#[tokio::test]
async fn the_turn_limit_ends_a_task_that_keeps_calling() {
    let dir = tempfile::tempdir().unwrap();
    let echo = |n: u32| call("run_shell", json!({"command": format!("echo {n}")}));
    let (model, engine) = model(&[&echo(1), &echo(2), &echo(3)]);
    let (outcome, events) = run(&model, &builtins(&dir), 2, "Loop").await;
    assert!(
        matches!(&outcome, Err(e) if matches!(e.kind(), AgentErrorKind::TurnLimit { turns: 2 })),
        "{outcome:?}"
    );
    assert_eq!(
        names(&events),
        [
            "call run_shell",
            "result run_shell",
            "call run_shell",
            "result run_shell"
        ]
    );
    assert_eq!(engine.generations().len(), 2);
}

#[tokio::test]
async fn a_repeated_call_makes_the_next_turn_answer_without_tools() {
    let dir = tempfile::tempdir().unwrap();
    let again = call("run_shell", json!({"command": "echo again"}));
    let (model, engine) = model(&[&again, &again, "It printed again."]);
    let (outcome, events) = run(&model, &builtins(&dir), 8, "Echo").await;
    assert_eq!(outcome.expect("an answer"), "It printed again.");
    assert_eq!(
        names(&events),
        [
            "call run_shell",
            "result run_shell",
            "call run_shell",
            "result run_shell",
            "notice",
            "answer It printed again."
        ]
    );
    let generations = engine.generations();
    assert!(
        generations[1].constraint.is_some(),
        "calls still possible after a new call"
    );
    assert!(
        generations[2].constraint.is_none(),
        "no tools offered: the answer is free"
    );
    assert!(generations[2]
        .prompt
        .contains("Using the tool results above, answer now in plain text, completely: Echo"));
}

#[tokio::test]
async fn a_failing_model_ends_the_task_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let (model, _) = model(&[]);
    let (outcome, events) = run(&model, &builtins(&dir), 8, "Anything").await;
    let error = outcome.expect_err("no answer").to_string();
    assert!(
        error.contains("the model answered 500") && error.contains("no outputs left"),
        "{error}"
    );
    assert!(events.is_empty());
}
