//! Why a generation failed, in kinds the server maps to statuses: the client's prompt
//! (400), the constraint (400), the engine (500), or a remote engine (502, 503, 504).

use std::fmt;

/// Why a generation failed.
pub type EngineError = toolbridge_error::Error<EngineErrorKind>;

/// What kind of [`EngineError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineErrorKind {
    /// The prompt and the requested tokens do not fit the context.
    PromptTooLong {
        prompt_tokens: u32,
        context_length: u32,
    },
    /// The constraint cannot be enforced (a grammar the engine's matcher refuses).
    Constraint,
    /// The engine itself failed (decoding, the backend went away).
    Backend,
    /// A remote engine failed, or answered with something that cannot be read.
    Upstream,
    /// No remote engine can take the generation (every replica is down or unhealthy).
    Unavailable,
    /// A remote engine said nothing for longer than the configured timeout.
    Timeout,
}

impl toolbridge_error::Kind for EngineErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineErrorKind::PromptTooLong {
                prompt_tokens,
                context_length,
            } => write!(
                out,
                "the prompt is {prompt_tokens} tokens, more than the context of {context_length} allows"
            ),
            EngineErrorKind::Constraint => out.write_str("the constraint cannot be enforced: "),
            EngineErrorKind::Backend => out.write_str("engine: "),
            EngineErrorKind::Upstream => out.write_str("the upstream engine failed: "),
            EngineErrorKind::Unavailable => out.write_str("no upstream engine is available: "),
            EngineErrorKind::Timeout => out.write_str("the upstream engine timed out: "),
        }
    }
}

/// A remote engine failed, or answered with something that cannot be read, as `detail` says.
pub(crate) fn upstream_error(detail: impl fmt::Display) -> EngineError {
    EngineError::new(EngineErrorKind::Upstream, detail.to_string())
}

/// No remote engine can take the generation, as `detail` says.
pub(crate) fn unavailable_error(detail: impl fmt::Display) -> EngineError {
    EngineError::new(EngineErrorKind::Unavailable, detail.to_string())
}

/// The constraint cannot be enforced, as `detail` says.
pub(crate) fn constraint_error(detail: impl fmt::Display) -> EngineError {
    EngineError::new(EngineErrorKind::Constraint, detail.to_string())
}
