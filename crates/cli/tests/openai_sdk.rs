//! `toolbridge serve` on the real default model, checked end to end through the official
//! OpenAI Python SDK (`openai_e2e.py` beside this file: tool calls streamed and not,
//! every `tool_choice`, `response_format`, a tool result fed back, errors).
//!
//! The set-up makes a virtual environment under the target directory and installs
//! `openai` from PyPI into it once; later runs reuse it. The server is started with
//! `--port 0` and the address it prints is read back, so parallel runs never race for a
//! port. It needs the embedded engine, so it is built only with the `llama` feature.

#![cfg(feature = "llama")]

use crate::common::one_at_a_time;
use crate::common::serve::{assert_openai_checks_pass, ServeProcess};

#[test]
fn the_openai_python_sdk_gets_openai_answers() {
    let _turn = one_at_a_time();
    let server = ServeProcess::start(&[], &[]);
    assert_openai_checks_pass(&server);
}
