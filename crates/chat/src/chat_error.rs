//! The one Rust error of the crate: a conversation that cannot be converted to or from
//! ShareGPT, tool call arguments that cannot be read, a BFCL file that cannot be read.
//!
//! Not the OpenAI error body a server sends (`error.rs`: [`crate::ErrorResponse`]), which is
//! wire data; this is what the crate's fallible functions return.

use std::fmt;

/// Why a conversion or a read of this crate failed.
pub type ChatError = toolbridge_error::Error<ChatErrorKind>;

/// What kind of [`ChatError`] it is. The ShareGPT kinds carry `index`, the position of the
/// offending message in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatErrorKind {
    /// A turn's value is not of the JSON type its speaker (named as ShareGPT writes it)
    /// takes.
    ShareGptValue { index: usize, from: &'static str },
    /// A `human` turn's value is a list, but not of content parts.
    ShareGptParts { index: usize },
    /// A `function_call` turn's value is text that is not JSON.
    ShareGptCallJson { index: usize },
    /// A `function_call` turn's value is not a call or a list of calls.
    ShareGptCallShape { index: usize },
    /// An `observation` turn with no call left to answer.
    ShareGptUnanswered { index: usize },
    /// A message whose role has no ShareGPT speaker.
    ShareGptRole { index: usize },
    /// A message's content parts cannot be written as JSON.
    ShareGptPartsJson { index: usize },
    /// Tool call arguments that are not JSON.
    ArgumentsJson,
    /// Tool call arguments that are JSON, but not an object; the detail is what they are.
    ArgumentsNotObject,
    /// A BFCL line that is not JSON, or not the JSON of its type.
    BfclJson,
    /// A BFCL question or answer missing something it needs.
    BfclShape,
    /// A BFCL file that cannot be read; the detail is its path.
    BfclRead,
}

impl toolbridge_error::Kind for ChatErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChatErrorKind::ShareGptValue { index, from } => {
                write!(out, "message {index} ({from}): value must be ")
            }
            ChatErrorKind::ShareGptParts { index } => write!(out, "message {index} (human): "),
            ChatErrorKind::ShareGptCallJson { index }
            | ChatErrorKind::ShareGptCallShape { index } => {
                write!(out, "message {index} (function_call): ")
            }
            ChatErrorKind::ShareGptUnanswered { index } => write!(
                out,
                "message {index} (observation): no call left to answer; an observation \
                 answers the calls of the function_call before it, one each"
            ),
            ChatErrorKind::ShareGptRole { index } | ChatErrorKind::ShareGptPartsJson { index } => {
                write!(out, "message {index}: ")
            }
            ChatErrorKind::ArgumentsJson => {
                out.write_str("tool call arguments are not valid JSON: ")
            }
            ChatErrorKind::ArgumentsNotObject => {
                out.write_str("tool call arguments must be a JSON object, found ")
            }
            ChatErrorKind::BfclJson => out.write_str("not JSON: "),
            ChatErrorKind::BfclShape => Ok(()),
            ChatErrorKind::BfclRead => out.write_str("cannot read "),
        }
    }
}
