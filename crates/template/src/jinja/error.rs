//! minijinja's errors as the crate's: the kind (syntax, render, limit), minijinja's own
//! words and those of its causes, and the template line they point at.

use crate::error::{at_line, TemplateError, TemplateErrorKind};

/// `err`, raised while compiling or rendering `source` (empty when rendering: minijinja
/// keeps the template's text, but the line number is all it reports).
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
    at_line(kind, describe(err), err.line(), source)
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
