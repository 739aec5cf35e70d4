//! `toolbridge agent` as a user runs it, against a URL: toolbridge's server with the
//! default model's template and a scripted engine, on a free local port. Two tasks on
//! stdin (interactive mode, one conversation), each needing a built-in tool; every call,
//! result and answer printed in order.

use std::sync::Arc;

use toolbridge_engine::{Engine, ModelInfo, ScriptedEngine};
use toolbridge_server::{ServedModel, Server, ServerOptions, TemplateOverride};
use toolbridge_template::TemplateSource;

use crate::common::{default_model, scratch, stdout_of, toolbridge};

/// The server over `outputs` on a free port, running on its own thread; its base URL.
fn start_server(outputs: &[&str]) -> String {
    let info = ModelInfo {
        id: "qwen-test".into(),
        context_length: 32768,
        ..ModelInfo::default()
    };
    let engine: Arc<dyn Engine> = Arc::new(ScriptedEngine::new(info, outputs.iter().copied()));
    let template = TemplateSource::from_path(default_model()).expect("the template");
    let model = ServedModel::new(engine, Some(TemplateOverride::HuggingFace(template)), None)
        .expect("a served model");
    let server = Server::new(model, ServerOptions::default());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a free port");
    let url = format!("http://{}/v1", listener.local_addr().expect("an address"));
    std::thread::spawn(move || runtime.block_on(server.serve(listener)));
    url
}

fn call(name: &str, arguments: serde_json::Value) -> String {
    let call = serde_json::json!({"name": name, "arguments": arguments});
    format!("<tool_call>\n{call}\n</tool_call>")
}

#[test]
fn interactive_tasks_print_each_call_result_and_answer() {
    let write = call(
        "write_file",
        serde_json::json!({"path": "n.txt", "content": "hi"}),
    );
    let read = call("read_file", serde_json::json!({"path": "n.txt"}));
    let url = start_server(&[&write, "Wrote it.", &read, "It says hi."]);
    let workspace = scratch("agent-command");
    let folder = workspace.to_str().expect("a UTF-8 path");
    let output = toolbridge(
        &["agent", "--url", &url, "--workspace", folder],
        "Write hi to n.txt\nWhat does n.txt say?\n",
    );
    assert_eq!(
        stdout_of(&output).lines().collect::<Vec<_>>(),
        [
            r#"→ write_file({"path":"n.txt","content":"hi"})"#,
            "← write_file: wrote n.txt",
            "Wrote it.",
            r#"→ read_file({"path":"n.txt"})"#,
            "← read_file: hi",
            "It says hi.",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("n.txt")).unwrap(),
        "hi"
    );
    std::fs::remove_dir_all(&workspace).expect("the workspace is removed");
}
