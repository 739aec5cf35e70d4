//! OpenAI error objects: `{"error": {"message", "type", "param", "code"}}`.
//!
//! Clients show `message` and branch on `type` and `code`, so errors are written in exactly
//! this shape, `param` and `code` included as `null` when unset. Remote engines do not all
//! agree on it (llama.cpp and vLLM send a numeric `code`), so reading is lenient.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::open_enum::open_enum;

open_enum! {
    /// An error's `type`.
    pub enum ErrorType {
        /// The request is malformed or asks for something impossible (HTTP 400).
        InvalidRequest => "invalid_request_error",
        /// Missing or wrong API key (HTTP 401).
        Authentication => "authentication_error",
        /// The key may not do this (HTTP 403).
        Permission => "permission_error",
        /// No such model or route (HTTP 404).
        NotFound => "not_found_error",
        /// Too many requests (HTTP 429).
        RateLimit => "rate_limit_error",
        /// Our fault (HTTP 500).
        Server => "server_error",
    }
}

impl ErrorType {
    /// The HTTP status that goes with an error of this type (500 for types we do not know).
    pub fn http_status(&self) -> u16 {
        match self {
            ErrorType::InvalidRequest => 400,
            ErrorType::Authentication => 401,
            ErrorType::Permission => 403,
            ErrorType::NotFound => 404,
            ErrorType::RateLimit => 429,
            ErrorType::Server | ErrorType::Other(_) => 500,
        }
    }
}

/// The body of an error response: `{"error": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{error}")]
pub struct ErrorResponse {
    pub error: ApiError,
}

impl From<ApiError> for ErrorResponse {
    fn from(error: ApiError) -> Self {
        ErrorResponse { error }
    }
}

/// An OpenAI error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ApiError {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: ErrorType,
    /// The request parameter at fault, such as `"messages"` or `"tool_choice"`.
    #[serde(default)]
    pub param: Option<String>,
    /// A machine-readable code, such as `"model_not_found"`.
    #[serde(default, deserialize_with = "code_text")]
    pub code: Option<String>,
}

/// Reads `code` as text whether it was sent as a string or as a number.
fn code_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => None,
        Some(Value::String(code)) => Some(code),
        Some(other) => Some(other.to_string()),
    })
}

impl ApiError {
    /// An error of `kind` with no `param` and no `code`.
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        ApiError {
            message: message.into(),
            kind,
            param: None,
            code: None,
        }
    }

    /// An `invalid_request_error`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::InvalidRequest, message)
    }

    /// An `authentication_error`, coded `invalid_api_key`.
    pub fn authentication(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::Authentication, message).with_code("invalid_api_key")
    }

    /// A `permission_error`.
    pub fn permission(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::Permission, message)
    }

    /// A `not_found_error`.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::NotFound, message)
    }

    /// A `rate_limit_error`, coded `rate_limit_exceeded`.
    pub fn rate_limit(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::RateLimit, message).with_code("rate_limit_exceeded")
    }

    /// A `server_error`.
    pub fn server(message: impl Into<String>) -> Self {
        ApiError::new(ErrorType::Server, message)
    }

    /// The error OpenAI gives for an unknown model: `invalid_request_error`, param `model`,
    /// code `model_not_found`.
    pub fn model_not_found(model: &str) -> Self {
        ApiError::invalid_request(format!("The model `{model}` does not exist."))
            .with_param("model")
            .with_code("model_not_found")
    }

    /// The error for a request that does not parse: `invalid_request_error` with serde's
    /// message.
    pub fn unparsable(error: &serde_json::Error) -> Self {
        ApiError::invalid_request(format!(
            "The request body is not a valid chat request: {error}"
        ))
    }

    /// Names the request parameter at fault.
    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Sets the machine-readable code.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The HTTP status that goes with this error.
    pub fn http_status(&self) -> u16 {
        self.kind.http_status()
    }
}
