//! The dialect crate's tests, one binary: each file beside this one is a module of it, so
//! the tests link once, not once per file. The files stay where they are, with the data
//! they read by path and their proptest regressions beside them; this file is not called
//! `main.rs`, since proptest keeps a file's regressions beside it only where no `main.rs`
//! or `lib.rs` is in its folder. `common` and `framed_common` are what the modules share.

mod common;
mod framed_common;

mod bfcl_dialects;
mod cohere;
mod deepseek;
mod detect_table;
mod function_gemma;
mod functionary;
mod gemma4;
mod glm4;
mod gpt_oss;
mod hermes_dialect;
mod hermes_parser;
mod hy3;
mod json_list;
mod kimi;
mod kimi_k3;
mod learned;
mod llama3_2;
mod llama3_dialect;
mod llama4;
mod llama_cpp_test_chat;
mod minicpm3;
mod mistral_firefunction;
mod off_format;
mod ollama_seeds;
mod olmo3;
mod peer_parsers;
mod prepared;
mod pythonic_families;
mod react;
mod rewrite;
mod seed_styles;
mod special_token_families;
mod style_parsers;
mod style_roundtrip;
mod template_round_trip;
mod tool_schemas;
mod xml_calls;
