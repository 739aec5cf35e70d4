//! The one error of the crate: a template that does not compile or render, a request
//! Ollama would refuse, a Modelfile or template file that cannot be read.
//!
//! Callers act on the kind: the server answers 400 for what the request's messages made
//! the template do ([`TemplateErrorKind::Render`], `Request`, `Json`) and 500 for a
//! template it could not load, the CLI says which file is at fault.

use std::fmt;

/// Why a chat template, or what it is read from, failed.
pub type TemplateError = toolbridge_error::Error<TemplateErrorKind>;

/// What kind of [`TemplateError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateErrorKind {
    /// The template does not compile.
    Syntax,
    /// The template raised or failed while rendering this input.
    Render,
    /// The template ran past a bound of [`crate::Limits`].
    Limit,
    /// A chat request Ollama would refuse before rendering.
    Request,
    /// A Modelfile that does not parse, at a 1-based line, in Ollama's words.
    Modelfile { line: usize },
    /// A template file that cannot be read (the detail names it; the I/O, JSON or GGUF
    /// reader's error is the cause).
    File,
    /// A model file that holds no chat template.
    NoTemplate,
    /// No template of the model's answers to the name asked for, or none is the default.
    Choice,
    /// A value of the chat that cannot be written as JSON for the template.
    Json,
}

impl toolbridge_error::Kind for TemplateErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateErrorKind::Request => out.write_str("invalid chat request: "),
            TemplateErrorKind::Modelfile { line } => write!(out, "line {line}: "),
            _ => Ok(()),
        }
    }
}

/// The same error, said of a chat template (`chat template: …`), its kind kept: how a
/// `ChatTemplate` reports what its template raised, and how a dialect reports what it
/// refuses as a template would have.
pub fn in_chat_template(error: TemplateError) -> TemplateError {
    TemplateError::new(*error.kind(), "chat template").with_source(error)
}

/// An error of a template's own text, pointing at its 1-based `line` (when known) and
/// showing the text there: someone checking a template by hand needs both, not just
/// "invalid operation".
pub(crate) fn at_line(
    kind: TemplateErrorKind,
    message: String,
    line: Option<usize>,
    source: &str,
) -> TemplateError {
    let mut detail = message;
    if let Some(line) = line.filter(|&line| line > 0) {
        detail.push_str(&format!("\n  --> template line {line}"));
        if let Some(text) = source.lines().nth(line - 1) {
            let shown: String = text.chars().take(200).collect();
            detail.push_str(&format!("\n   | {shown}"));
        }
    }
    TemplateError::new(kind, detail)
}

/// The engine itself failed on this input (a bug there, not in the template); the
/// caller gets an error instead of a crash.
pub(crate) fn engine_panicked() -> TemplateError {
    TemplateError::new(
        TemplateErrorKind::Render,
        "internal error: the template engine failed on this input",
    )
}

/// The template wrote more than its output may hold.
pub(crate) fn output_too_large(limits: &crate::Limits) -> TemplateError {
    let max = limits.max_output_bytes;
    let detail = format!("the template wrote more than {max} bytes");
    TemplateError::new(TemplateErrorKind::Limit, detail)
}
