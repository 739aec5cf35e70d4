//! `toolbridge serve` on the real default model, checked end to end through the official
//! OpenAI Python SDK (`openai_e2e.py` beside this file: tool calls streamed and not,
//! every `tool_choice`, `response_format`, a tool result fed back, errors).
//!
//! The set-up makes a virtual environment under the target directory and installs
//! `openai` from PyPI into it once; later runs reuse it. The server is started with
//! `--port 0` and the address it prints is read back, so parallel runs never race for a
//! port. It needs the embedded engine, so it is built only with the `llama` feature.

#![cfg(feature = "llama")]

mod common;

use std::path::Path;
use std::process::Command;

use common::{sdk_python, ServeProcess};

#[test]
fn the_openai_python_sdk_gets_openai_answers() {
    let python = sdk_python();
    let server = ServeProcess::start(&[], &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_e2e.py");
    let status = Command::new(&python)
        .arg(&script)
        .arg(format!("{}/v1", server.base_url))
        .status()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
    assert!(
        status.success(),
        "openai_e2e.py: {status} (its output above says which checks failed)"
    );
}
