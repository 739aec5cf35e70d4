//! The chat crate's tests, one binary: each module tests one part of the OpenAI wire
//! types (requests, responses, `tool_choice`, validation, ShareGPT, BFCL's checker)
//! against real bodies and the shared corpus.

mod common;

mod bfcl;
mod corpus;
mod garbage;
mod request;
mod response;
mod sharegpt;
mod tool_choice;
mod validate;
