//! Template errors that point at the template line.
//!
//! Someone checking a template by hand needs the line and the text there, not just
//! "invalid operation". Errors keep the kind (syntax, render, limit), the message, and
//! the line with its source text when minijinja knows it.

use std::fmt;

use super::Limits;

/// What went wrong, broadly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateErrorKind {
    /// The template does not compile.
    Syntax,
    /// The template raised or failed while rendering this input.
    Render,
    /// The template ran past a bound of [`Limits`].
    Limit,
}

/// A compile or render failure of a chat template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    pub kind: TemplateErrorKind,
    pub message: String,
    /// 1-based line in the template, when known.
    pub line: Option<usize>,
    /// The text of that line.
    pub source_line: Option<String>,
}

impl TemplateError {
    pub(crate) fn from_minijinja(err: &minijinja::Error, source: &str) -> TemplateError {
        let kind = match err.kind() {
            minijinja::ErrorKind::SyntaxError | minijinja::ErrorKind::BadEscape => {
                TemplateErrorKind::Syntax
            }
            minijinja::ErrorKind::OutOfFuel | minijinja::ErrorKind::ValueLimit => {
                TemplateErrorKind::Limit
            }
            minijinja::ErrorKind::InvalidOperation if is_recursion_error(err) => {
                TemplateErrorKind::Limit
            }
            _ => TemplateErrorKind::Render,
        };
        let line = err.line();
        TemplateError {
            kind,
            message: describe(err),
            line,
            source_line: line
                .and_then(|n| source.lines().nth(n.saturating_sub(1)).map(str::to_string)),
        }
    }

    /// The engine itself failed on this input (a bug there, not in the template); the
    /// caller gets an error instead of a crash.
    pub(crate) fn engine_panicked() -> TemplateError {
        TemplateError {
            kind: TemplateErrorKind::Render,
            message: "internal error: the template engine failed on this input".into(),
            line: None,
            source_line: None,
        }
    }

    pub(crate) fn output_too_large(limits: &Limits) -> TemplateError {
        TemplateError {
            kind: TemplateErrorKind::Limit,
            message: format!(
                "the template wrote more than {} bytes",
                limits.max_output_bytes
            ),
            line: None,
            source_line: None,
        }
    }
}

fn is_recursion_error(err: &minijinja::Error) -> bool {
    err.detail().is_some_and(|d| d.contains("recursion"))
}

/// The error's own words, followed by those of its causes.
fn describe(err: &minijinja::Error) -> String {
    let mut message = match err.detail() {
        Some(detail) => format!("{}: {detail}", err.kind()),
        None => err.kind().to_string(),
    };
    let mut cause = std::error::Error::source(err);
    while let Some(inner) = cause {
        message.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    message
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(line) = self.line {
            write!(f, "\n  --> template line {line}")?;
            if let Some(text) = &self.source_line {
                let shown: String = text.chars().take(200).collect();
                write!(f, "\n   | {shown}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for TemplateError {}
