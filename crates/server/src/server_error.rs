//! The one Rust error of the crate: why a model cannot be served, found at start-up
//! before the server listens (a request's failure is a [`crate::Failure`], the HTTP
//! answer, instead).

use std::fmt;

/// Why a model cannot be served.
pub type ServerError = toolbridge_error::Error<ServerErrorKind>;

/// What kind of [`ServerError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerErrorKind {
    /// Neither the model nor `--template` gives a chat template.
    NoTemplate,
    /// A chat template that cannot be compiled or read by a dialect.
    Template,
    /// `--dialect` names no dialect of the registry; the detail names the known ones.
    UnknownDialect,
    /// The Modelfile an Ollama server reports for its model cannot be read.
    EngineModelfile,
    /// A Modelfile's `PARAMETER` whose value is not the number its name takes.
    Parameter,
}

impl toolbridge_error::Kind for ServerErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerErrorKind::NoTemplate => {
                out.write_str("the model has no chat template; give one with --template")
            }
            ServerErrorKind::Template => out.write_str("the chat template: "),
            ServerErrorKind::UnknownDialect => out.write_str("unknown dialect "),
            ServerErrorKind::EngineModelfile => {
                out.write_str("the Ollama server's Modelfile for the model: ")
            }
            ServerErrorKind::Parameter => out.write_str("the Modelfile's PARAMETER "),
        }
    }
}
