//! The crate's one error. Why a request could not be prepared, in kinds the server maps
//! to the parameter at fault: `tool_choice`, `tools`, `response_format`, or the
//! `messages` the template refused (unless the model's own template files are at fault,
//! a 500). Also why a template's call syntax was not learned, and a parser's events out
//! of their contract (a parser bug, which the server answers as its own fault).

use std::fmt;

use toolbridge_template::{in_chat_template, TemplateError, TemplateErrorKind};

/// Why a request could not be prepared.
pub type DialectError = toolbridge_error::Error<DialectErrorKind>;

/// What kind of [`DialectError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DialectErrorKind {
    /// The chat template failed, of its own kind; its error is the cause.
    Template(TemplateErrorKind),
    /// A tool's parameters schema cannot be enforced (the detail names the tool).
    ToolSchema,
    /// The `response_format` schema cannot be enforced.
    ResponseFormat,
    /// `tool_choice` names a tool the request does not have.
    UnknownTool,
    /// `tool_choice` requires a call, but no tool may be called.
    NoCallableTools,
    /// A part of the request cannot be written as JSON for the template.
    Json,
    /// A template whose call syntax could not be learned (the detail says why).
    NotLearned,
    /// A parser's events broke their contract (a parser bug): a call started with an
    /// index other than the next one.
    StartOutOfOrder { expected: u32, found: u32 },
    /// A parser's events broke their contract (a parser bug): arguments or an end for a
    /// call that was never started or has already ended.
    CallNotOpen { index: u32, what: &'static str },
    /// A tag scanner given an empty marker, which would match at every position.
    EmptyMarker { index: usize },
}

impl toolbridge_error::Kind for DialectErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DialectErrorKind::ResponseFormat => {
                out.write_str("Invalid 'response_format': the schema cannot be enforced")
            }
            DialectErrorKind::NoCallableTools => {
                out.write_str("tool_choice requires a call, but the request has no tools it allows")
            }
            _ => Ok(()),
        }
    }
}

/// The template's error, the same whichever layer finds it.
pub(crate) fn template_error(error: TemplateError) -> DialectError {
    DialectError::new(DialectErrorKind::Template(*error.kind()), "").with_source(error)
}

/// The chat template refuses what the request asks of it, for `why`, as a template
/// would have raised it.
pub(crate) fn template_refused(why: String) -> DialectError {
    let refused = TemplateError::new(TemplateErrorKind::Render, why);
    template_error(in_chat_template(refused))
}

/// What writing `what` as JSON failed with.
pub(crate) fn json_error(what: &'static str) -> impl Fn(serde_json::Error) -> DialectError {
    move |error| {
        let detail = format!("cannot write {what} as JSON");
        DialectError::new(DialectErrorKind::Json, detail).with_source(error)
    }
}

/// `tool_choice` names `name`, which the request does not have.
pub(crate) fn unknown_tool(name: &str) -> DialectError {
    let detail = format!("tool_choice names {name:?}, which is not among the request's tools");
    DialectError::new(DialectErrorKind::UnknownTool, detail)
}
