//! The one error type of the crate, so that callers (CLI, server) can map each kind to
//! an exit code or an HTTP status without string matching.

use thiserror::Error;

/// What the grammar crate's fallible steps return.
pub(crate) type Result<T> = std::result::Result<T, GrammarError>;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GrammarError {
    /// GBNF text that does not parse.
    #[error("GBNF syntax error at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// A JSON Schema that cannot be turned into a grammar.
    #[error("JSON Schema: {0}")]
    Schema(String),
    /// A grammar that cannot be printed in the requested notation.
    #[error("{0}")]
    Unprintable(String),
    /// A schema or grammar past a size, depth or count limit.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// llguidance refused the grammar or failed while running it.
    #[error("llguidance: {0}")]
    Engine(String),
}
