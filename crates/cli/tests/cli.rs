//! The CLI crate's tests, one binary: each file beside this one is a module of it, so the
//! tests link once, not once per file. The files stay where they are, with the Python
//! scripts they run beside them; `common` is what they share. The tests on the real
//! model are built with the `llama` feature (a `#![cfg(feature = "llama")]` at the top of
//! their file, or on the test), and take turns with each other and with the tests that
//! use the tests' Python (`common::one_at_a_time`): in one binary, tests of different
//! files run at once.

mod common;

mod agent_clients;
mod agent_command;
mod agent_mcp;
mod agent_sdks;
mod detect_command;
mod dialect_commands;
mod grammar_command;
mod hf_models;
mod inspect_page;
mod openai_sdk;
mod render_command;
mod serve_ollama;
mod serve_remote;
mod serve_vllm;
