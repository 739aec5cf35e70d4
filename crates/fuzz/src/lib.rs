//! Fuzz targets as plain functions: each turns arbitrary bytes into input for one part of
//! toolbridge and asserts what must hold for every input. A broken invariant panics, which
//! a fuzzer records as a crash.
//!
//! The functions are the targets, not a fuzzer's harness, so one body serves two drivers:
//! the AFL binaries of `fuzz/` (outside the workspace; `scripts/fuzz.sh` builds and runs
//! them) and `tests/regressions.rs`, which replays every crash ever found
//! (`regressions/<target>/`) with stable `cargo test` and no fuzzer installed.
//!
//! Inputs reach the code under test the way users' do: a request body, a template, a
//! model file, a schema, a grammar are the bytes themselves; a stream parser gets a
//! dialect chosen by the first byte and its text cut where the next bytes say.

mod gguf;
mod grammar;
mod parsers;
mod request;
mod templates;

pub use gguf::gguf;
pub use grammar::{gbnf, schema};
pub use parsers::stream_parser;
pub use request::request;
pub use templates::{go_template, jinja};

/// A fuzz target: panics when `data` breaks one of its invariants.
pub type Target = fn(&[u8]);

/// Every target by name; the name is its folder under `regressions/` and its AFL binary.
pub const TARGETS: &[(&str, Target)] = &[
    ("stream_parser", stream_parser),
    ("gbnf", gbnf),
    ("schema", schema),
    ("jinja", jinja),
    ("go_template", go_template),
    ("gguf", gguf),
    ("request", request),
];
