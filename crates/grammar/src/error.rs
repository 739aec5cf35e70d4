//! The one error type of the crate, so that callers (CLI, server) can map each kind to
//! an exit code or an HTTP status without string matching.

use std::fmt;

/// What the grammar crate's fallible steps return.
pub(crate) type Result<T> = std::result::Result<T, GrammarError>;

/// A grammar or schema that cannot be read, built, printed or run.
pub type GrammarError = toolbridge_error::Error<GrammarErrorKind>;

/// What kind of [`GrammarError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrammarErrorKind {
    /// GBNF text that does not parse, at a 1-based line and column (in characters).
    Syntax { line: usize, column: usize },
    /// A JSON Schema that cannot be turned into a grammar.
    Schema,
    /// A grammar that cannot be printed in the requested notation.
    Unprintable,
    /// A schema or grammar past a size, depth or count limit.
    Limit,
    /// llguidance refused the grammar or failed while running it.
    Engine,
}

impl toolbridge_error::Kind for GrammarErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrammarErrorKind::Syntax { line, column } => {
                write!(out, "GBNF syntax error at line {line}, column {column}: ")
            }
            GrammarErrorKind::Schema => out.write_str("JSON Schema: "),
            GrammarErrorKind::Unprintable => Ok(()),
            GrammarErrorKind::Limit => out.write_str("limit exceeded: "),
            GrammarErrorKind::Engine => out.write_str("llguidance: "),
        }
    }
}

/// A JSON Schema that cannot be turned into a grammar, as `detail` says.
pub(crate) fn schema_error(detail: impl Into<String>) -> GrammarError {
    GrammarError::new(GrammarErrorKind::Schema, detail)
}

/// A schema or grammar past a limit, as `detail` says.
pub(crate) fn limit_error(detail: impl Into<String>) -> GrammarError {
    GrammarError::new(GrammarErrorKind::Limit, detail)
}
