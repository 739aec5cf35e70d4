//! `toolbridge serve` on the real default model, checked end to end through the agent
//! APIs' official Python SDKs: OpenAI's Responses API (`responses_e2e.py`:
//! `client.responses.create` and `client.responses.stream`, forced and automatic calls, a
//! second turn with `function_call_output`) and Anthropic's Messages API
//! (`anthropic_e2e.py`: `client.messages.create` and `client.messages.stream`, `tool_use`
//! then `tool_result`), streamed and whole answers carrying the same calls, and each API's
//! errors.
//!
//! The SDKs are installed from PyPI once into the virtual environment the OpenAI SDK test
//! uses (`common::serve::sdk_python`). It needs the embedded engine, so it is built only
//! with the `llama` feature.

#![cfg(feature = "llama")]

use crate::common::one_at_a_time;
use crate::common::serve::{assert_sdk_checks_pass, ServeProcess};

#[test]
fn the_agent_sdks_get_their_own_apis_answers() {
    let _turn = one_at_a_time();
    let server = ServeProcess::start(&["--api-key", "sk-e2e"], &[]);
    assert_sdk_checks_pass(&server, "responses_e2e.py");
    assert_sdk_checks_pass(&server, "anthropic_e2e.py");
}
