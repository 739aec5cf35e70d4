//! Failures in Anthropic's shape: `{"type": "error", "error": {"type", "message"}}`.
//!
//! Anthropic's SDKs branch on the status and the error's `type`, so every [`Failure`] —
//! the same ones chat completions answers, decided in one place — is written here with
//! Anthropic's status and type: 400 `invalid_request_error`, 401 `authentication_error`,
//! 403 `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429
//! `rate_limit_error`, 529 `overloaded_error` for a full server or queue, and `api_error` for the
//! server's and the engine's faults (keeping their 5xx status, which the SDKs retry).
//! The parameter at fault leads the message, as Anthropic writes it (`tools.0: …`). A
//! failure that is one of Anthropic's own coded errors carries its code as Anthropic's
//! body does, in `error.details.error_code`, where the SDKs look for it to choose the
//! exception and what to do next (a refused `thread` makes a tool runner send the whole
//! conversation again).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::request::THREAD_UNSUPPORTED;
use crate::error::{Failure, FailureCode};

/// The codes of a server too busy to take the request ([`Failure::overloaded`],
/// [`Failure::queue_timeout`]): Anthropic's 529.
const OVERLOADED: [&str; 2] = ["server_overloaded", "queue_timeout"];

/// The codes of failures that are Anthropic's own errors, written as Anthropic writes them.
const ANTHROPIC_CODES: [&str; 1] = [THREAD_UNSUPPORTED];

/// A failure answered in Anthropic's shape.
#[derive(Debug)]
pub struct AnthropicFailure(pub Failure);

impl From<Failure> for AnthropicFailure {
    fn from(failure: Failure) -> Self {
        AnthropicFailure(failure)
    }
}

impl AnthropicFailure {
    /// Anthropic's status and error type for this failure.
    fn status_and_type(&self) -> (StatusCode, &'static str) {
        let Failure { status, error } = &self.0;
        if OVERLOADED.contains(&error.code.as_deref().unwrap_or_default()) {
            let overloaded = StatusCode::from_u16(529).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return (overloaded, "overloaded_error");
        }
        let kind = match status.as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            400..=499 => "invalid_request_error",
            _ => "api_error",
        };
        (*status, kind)
    }

    /// The error body: `{"type": "error", "error": {…}}`.
    pub fn body(&self) -> Value {
        let (_, kind) = self.status_and_type();
        let error = &self.0.error;
        let message = match &error.param {
            Some(param) => format!("{param}: {}", error.message),
            None => error.message.clone(),
        };
        let mut body = json!({"type": "error", "error": {"type": kind, "message": message}});
        if let Some(code) = error
            .code
            .as_deref()
            .filter(|code| ANTHROPIC_CODES.contains(code))
        {
            body["error"]["details"] = json!({"error_code": code});
        }
        body
    }
}

impl IntoResponse for AnthropicFailure {
    fn into_response(self) -> Response {
        let (status, _) = self.status_and_type();
        let mut response = (status, Json(self.body())).into_response();
        if let Some(code) = self.0.error.code {
            response.extensions_mut().insert(FailureCode(code));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbridge_chat::ApiError;
    use toolbridge_engine::{EngineError, EngineErrorKind};

    fn answered(failure: Failure) -> (u16, Value) {
        let failure = AnthropicFailure(failure);
        (failure.status_and_type().0.as_u16(), failure.body())
    }

    #[test]
    fn each_failure_gets_anthropics_status_and_type() {
        let cases = [
            (
                Failure::invalid("tools", "bad"),
                400,
                "invalid_request_error",
            ),
            (
                Failure::api(ApiError::authentication("no key")),
                401,
                "authentication_error",
            ),
            (Failure::no_route("GET", "/x"), 404, "not_found_error"),
            (Failure::body_too_large(1), 413, "request_too_large"),
            (Failure::overloaded(), 529, "overloaded_error"),
            (
                Failure::queue_timeout(std::time::Duration::from_secs(1)),
                529,
                "overloaded_error",
            ),
            (Failure::engine_vanished(), 500, "api_error"),
            (
                Failure::from(EngineError::new(EngineErrorKind::Timeout, "quiet")),
                504,
                "api_error",
            ),
        ];
        for (failure, status, kind) in cases {
            let (answered_status, body) = answered(failure);
            assert_eq!(
                (answered_status, body["error"]["type"].as_str()),
                (status, Some(kind))
            );
            assert_eq!(body["type"], "error");
        }
    }

    #[test]
    fn the_parameter_at_fault_leads_the_message() {
        let (_, body) = answered(Failure::invalid("tool_choice", "no such tool"));
        assert_eq!(body["error"]["message"], "tool_choice: no such tool");
    }
}
