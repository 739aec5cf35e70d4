//! The `/inspect` page of `toolbridge serve` on the real default model, in headless
//! Chromium (`inspect_page.py` beside this file drives it over the DevTools protocol):
//! it loads without the key and asks for it, prepares a request (its prompt with special
//! tokens marked, its grammar), runs it, and shows the parsed call.
//!
//! Needs Debian's `chromium` (`scripts/system-packages.sh` installs it) and
//! `websocket-client`, installed from PyPI into the tests' virtual environment. The
//! screenshot lands in the target directory (`inspect.png`); `docs/inspect.png` is one of
//! these. Built only with the `llama` feature, like the other tests on the real model.

#![cfg(feature = "llama")]

mod common;

use std::path::Path;
use std::process::Command;

use common::{test_python, ServeProcess};

#[test]
fn the_inspector_page_prepares_runs_and_shows_the_call() {
    let key = "sk-inspect-test";
    let server = ServeProcess::start(&["--api-key", key], &[]);
    let python = test_python(&[("websocket-client", "websocket")]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect_page.py");
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect.png");
    let status = Command::new(&python)
        .arg(&script)
        .arg(&server.base_url)
        .arg(key)
        .arg(&screenshot)
        .status()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    assert!(
        status.success(),
        "inspect_page.py: {status} (its output above says which step failed)"
    );
}
