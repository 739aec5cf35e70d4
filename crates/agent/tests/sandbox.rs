//! The built-in tools' sandbox, tested through the tools themselves: no network, no file
//! outside the workspace, and the CPU, memory, time and output limits stop a program.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbridge_agent::{Builtins, Policy, ToolResult, Toolbox};

/// The built-ins over a fresh workspace, with `policy` adjusted by `grant`.
fn toolbox(workspace: &tempfile::TempDir, grant: impl FnOnce(&mut Policy)) -> Toolbox {
    let mut policy = Policy::new(workspace.path());
    policy.timeout = Duration::from_secs(20);
    grant(&mut policy);
    Toolbox::new().with_builtins(Builtins::new(policy).expect("python3 is on PATH"))
}

fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

async fn call(tools: &Toolbox, name: &str, arguments: serde_json::Value) -> ToolResult {
    tools.call(name, &arguments.to_string()).await
}

/// A Python program that connects to `port` on the loopback and says whether it could.
fn connect_program(port: u16) -> serde_json::Value {
    json!({"code": format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('connected')\nexcept OSError as e:\n    print('refused', e)\n"
    )})
}

#[tokio::test]
async fn the_network_is_unreachable_unless_granted() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
    let port = listener.local_addr().expect("its address").port();
    let dir = workspace();

    let confined = call(&toolbox(&dir, |_| {}), "run_python", connect_program(port)).await;
    assert!(confined.text.starts_with("refused"), "{confined:?}");

    let granted = toolbox(&dir, |policy| policy.allow_network = true);
    let open = call(&granted, "run_python", connect_program(port)).await;
    assert_eq!(open.text.trim(), "connected", "{open:?}");

    let interfaces =
        json!({"code": "import socket; print([name for _, name in socket.if_nameindex()])"});
    let only = call(&toolbox(&dir, |_| {}), "run_python", interfaces).await;
    assert_eq!(
        only.text.trim(),
        "['lo']",
        "only a loopback interface: {only:?}"
    );
}

#[tokio::test]
async fn files_inside_the_workspace_are_read_and_written() {
    let dir = workspace();
    let tools = toolbox(&dir, |_| {});
    let wrote = call(
        &tools,
        "write_file",
        json!({"path": "notes/a.txt", "content": "hello"}),
    )
    .await;
    assert!(!wrote.is_error, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes/a.txt")).unwrap(),
        "hello"
    );
    let read = call(&tools, "read_file", json!({"path": "notes/a.txt"})).await;
    assert_eq!(
        read,
        ToolResult {
            text: "hello".into(),
            is_error: false
        }
    );
    let python = call(
        &tools,
        "run_python",
        json!({"code": "print(open('notes/a.txt').read().upper())"}),
    )
    .await;
    assert_eq!(python.text.trim(), "HELLO", "{python:?}");
}

#[tokio::test]
async fn files_outside_the_workspace_are_refused() {
    let outside = workspace();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "do not read").unwrap();
    let dir = workspace();
    std::os::unix::fs::symlink(&secret, dir.path().join("link.txt")).unwrap();
    let tools = toolbox(&dir, |_| {});

    for path in [
        secret.display().to_string(),
        "link.txt".into(),
        format!(
            "../{}/secret.txt",
            outside.path().file_name().unwrap().to_string_lossy()
        ),
    ] {
        let read = call(&tools, "read_file", json!({"path": path})).await;
        assert!(
            read.is_error && read.text.contains("Permission denied"),
            "{path}: {read:?}"
        );
        assert!(!read.text.contains("do not read"));
    }
    let write = call(
        &tools,
        "write_file",
        json!({"path": outside.path().join("new.txt"), "content": "x"}),
    )
    .await;
    assert!(write.is_error, "{write:?}");
    assert!(!outside.path().join("new.txt").exists());
    let shell = call(
        &tools,
        "run_shell",
        json!({"command": format!("echo x > {}/shell.txt", outside.path().display())}),
    )
    .await;
    assert!(shell.is_error, "{shell:?}");
    assert!(!outside.path().join("shell.txt").exists());
    let home = call(
        &tools,
        "run_python",
        json!({"code": "import os; print(os.listdir('/root'))"}),
    )
    .await;
    assert!(
        home.is_error && home.text.contains("PermissionError"),
        "{home:?}"
    );

    let granted = toolbox(&dir, |policy| {
        policy.allow_read.push(outside.path().to_owned())
    });
    let read = call(&granted, "read_file", json!({"path": secret})).await;
    assert_eq!(read.text, "do not read", "--allow-read grants it: {read:?}");
}

#[tokio::test]
async fn processes_outside_the_sandbox_cannot_be_signalled() {
    let dir = workspace();
    let tools = toolbox(&dir, |_| {});
    let command = format!("kill -0 {}", std::process::id());
    let result = call(&tools, "run_shell", json!({ "command": command })).await;
    assert!(
        result.is_error && result.text.contains("Operation not permitted"),
        "{result:?}"
    );
    let own = call(
        &tools,
        "run_shell",
        json!({"command": "sleep 5 & kill $! && echo killed"}),
    )
    .await;
    assert_eq!(
        own.text.trim(),
        "killed",
        "its own children it may signal: {own:?}"
    );
}

#[tokio::test]
async fn a_busy_loop_is_stopped_at_its_cpu_time() {
    let dir = workspace();
    let tools = toolbox(&dir, |policy| policy.cpu_seconds = 1);
    let started = Instant::now();
    let result = call(&tools, "run_python", json!({"code": "while True: pass"})).await;
    assert!(
        result.is_error && result.text.contains("CPU time limit"),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_sleeper_is_stopped_at_its_wall_clock_time() {
    let dir = workspace();
    let tools = toolbox(&dir, |policy| policy.timeout = Duration::from_millis(500));
    let started = Instant::now();
    let result = call(
        &tools,
        "run_shell",
        json!({"command": "sleep 30 & sleep 30"}),
    )
    .await;
    assert!(
        result.is_error && result.text.contains("[stopped: time limit]"),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_big_allocation_fails_at_the_memory_limit() {
    let dir = workspace();
    let tools = toolbox(&dir, |policy| policy.memory_bytes = 256 << 20);
    let result = call(
        &tools,
        "run_python",
        json!({"code": "x = bytearray(512 * 1024 * 1024)\nprint('allocated')"}),
    )
    .await;
    assert!(
        result.is_error && result.text.contains("MemoryError"),
        "{result:?}"
    );
    let small = call(
        &tools,
        "run_python",
        json!({"code": "x = bytearray(64 * 1024 * 1024)\nprint('allocated')"}),
    )
    .await;
    assert_eq!(small.text.trim(), "allocated", "{small:?}");
}

#[tokio::test]
async fn output_is_cut_at_its_cap() {
    let dir = workspace();
    let tools = toolbox(&dir, |policy| policy.output_bytes = 1000);
    let result = call(&tools, "run_python", json!({"code": "print('a' * 100000)"})).await;
    assert!(!result.is_error, "{result:?}");
    assert!(result.text.starts_with(&"a".repeat(1000)), "{result:?}");
    assert!(
        result.text.contains("[output cut: 99001 more bytes]"),
        "{}",
        &result.text[1000..]
    );
}
