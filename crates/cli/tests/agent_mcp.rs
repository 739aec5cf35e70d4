//! `toolbridge agent` on the real default model with a real MCP server from PyPI,
//! `mcp-server-time` (the MCP project's reference time server, installed into a venv
//! under the target directory on first use), over stdio: a question that needs two
//! calls, one per time zone, answered from their results. It needs the embedded engine,
//! so it is built only with the `llama` feature.

#![cfg(feature = "llama")]

mod common;

use std::process::Command;

use common::{default_model, venv_python};

#[test]
fn the_agent_answers_from_two_calls_to_a_real_mcp_server() {
    let python = venv_python("mcp-time-venv", "mcp-server-time", "mcp_server_time");
    let server = python.with_file_name("mcp-server-time");
    let config = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-mcp-time.json");
    let servers = serde_json::json!({"mcpServers": {"time": {
        "command": server,
        "args": ["--local-timezone", "UTC"],
        "includeTools": ["get_current_time"]
    }}});
    std::fs::write(&config, servers.to_string()).expect("the config is written");
    let output = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .arg("agent")
        .arg("--model")
        .arg(default_model())
        .arg("--mcp-config")
        .arg(&config)
        .args(["--no-builtins", "--max-tokens", "200", "--max-turns", "4"])
        .args(["--temperature", "0"])
        .arg("What time is it now in Asia/Tokyo and in Europe/Paris?")
        .output()
        .expect("toolbridge runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    for zone in ["Asia/Tokyo", "Europe/Paris"] {
        let call = format!("→ time__get_current_time({{\"timezone\":\"{zone}\"}})");
        assert!(stdout.contains(&call), "no call for {zone}:\n{stdout}");
        assert!(
            stdout.contains(&format!("\"timezone\": \"{zone}\"")),
            "no result for {zone}"
        );
    }
    let answer = stdout.lines().last().unwrap_or_default();
    assert!(
        answer.contains("Tokyo") && answer.contains("Paris") && !answer.starts_with('{'),
        "the answer: {answer}"
    );
}
