//! What the tests share: the workspace's files, the `toolbridge` binary run on them,
//! files of their own, the tests' Python, and the turn the tests on the real model take
//! ([`one_at_a_time`]). `serve` is the harness of the tests on the real model, built with
//! the `llama` feature as they are.

#[cfg(feature = "llama")]
pub mod serve;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A script beside the tests (`tests/NAME`): the Python helpers they run.
pub fn test_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// The default model's sha256, as `scripts/fetch-model.sh` verifies it (the name of its
/// blob in Ollama's store and in the Hugging Face cache).
#[cfg(feature = "llama")]
pub const DEFAULT_MODEL_SHA256: &str =
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";

/// The default model, as `scripts/fetch-model.sh` leaves it.
pub fn default_model() -> PathBuf {
    let model = workspace().join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        model.is_file(),
        "default model not found (scripts/fetch-model.sh fetches it): looked at {}",
        model.display()
    );
    model
}

/// The path of `relative` in the shared corpus beside the repository, as an argument.
pub fn corpus(relative: &str) -> String {
    let path = workspace().join("../shared/corpus").join(relative);
    assert!(
        path.is_file(),
        "corpus file not found (the shared corpus is missing?): {}",
        path.display()
    );
    path.display().to_string()
}

/// Seed 000, read from the shared seeds beside the repository.
pub fn seed_000() -> String {
    let path = workspace().join("../shared/seeds/000_8b0e678405ed2946.txt");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("seed 000 not found: looked at {} ({err})", path.display()))
}

/// The `toolbridge` binary run in the workspace's root with `args`, `stdin` written to
/// it; what it printed and its exit status.
pub fn toolbridge(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolbridge binary runs");
    let written = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes());
    // A command that fails before reading stdin (an unknown style) closes the pipe early.
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().expect("the binary ends")
}

/// What a command that must succeed printed on stdout; its stderr where it failed.
pub fn stdout_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8 on stdout")
}

/// A new file named `name` holding `text`, in a folder of its own under this test
/// process's temporary folder: tests running at once never read a file another is
/// writing, and a file keeps the name a command may read it by.
pub fn write_temp(name: &str, text: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir()
        .join(format!("toolbridge-cli-tests-{}", std::process::id()))
        .join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    path
}

/// A fresh folder under the test target's scratch space; each test names its own.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
    dir
}

/// The turn of the tests that run the real default model or the tests' Python: whoever
/// holds it runs alone among them, for the whole test. The tests are one binary, so
/// tests of different files run at once on the harness's threads (each file was a binary
/// of its own, run one after another): two models would load twice and share the two
/// cores a generation needs, and a `pip install` into the tests' venv could change a
/// package under a script another test is running. A test that panicked passes it on.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The tests' Python, with each `(package, module)` of `packages` installed from PyPI
/// where its module does not import yet, in one virtual environment under the target
/// directory made on first use. Callers hold [`one_at_a_time`] while they use it; its
/// set-up is serialized on its own besides, so two callers never make the venv or
/// install into it at once.
pub fn test_python(packages: &[(&str, &str)]) -> PathBuf {
    static SETUP: Mutex<()> = Mutex::new(());
    let _setup = SETUP.lock().unwrap_or_else(PoisonError::into_inner);
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

/// Runs `command`, which must succeed.
pub fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert!(status.success(), "{command:?} failed: {status}");
}
