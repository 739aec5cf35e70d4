//! Failures as OpenAI error objects, each with the HTTP status OpenAI answers it with.
//!
//! Clients written against OpenAI branch on the status and on the error's `type`, `param`
//! and `code`, so every way a request can fail — before generation (bad JSON, a tool
//! choice naming no tool, a schema the grammar cannot enforce), at admission (too many
//! requests) or in the engine — ends up here, in that one shape, never as a bare status or
//! a panic.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use toolbridge_chat::{ApiError, ErrorResponse, ErrorType};
use toolbridge_dialect::{DialectError, DialectErrorKind};
use toolbridge_engine::{EngineError, EngineErrorKind};
use toolbridge_template::TemplateErrorKind;

/// An error answer: the status and the OpenAI error object.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: StatusCode,
    pub error: ApiError,
}

impl Failure {
    /// `error` with the status its type goes with.
    pub fn api(error: ApiError) -> Self {
        let status =
            StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Failure { status, error }
    }

    /// A 400 `invalid_request_error` about the request parameter `param`.
    pub fn invalid(param: &str, message: impl Into<String>) -> Self {
        Failure::api(ApiError::invalid_request(message).with_param(param))
    }

    /// 413: the body is larger than the server accepts.
    pub fn body_too_large(limit: usize) -> Self {
        Failure {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            error: ApiError::invalid_request(format!(
                "The request body is larger than the {limit}-byte limit of this server."
            ))
            .with_code("request_too_large"),
        }
    }

    /// 503: every generation slot is busy and the queue is full.
    pub fn overloaded() -> Self {
        Failure {
            status: StatusCode::SERVICE_UNAVAILABLE,
            error: ApiError::server("The server is overloaded; try again later.")
                .with_code("server_overloaded"),
        }
    }

    /// 400: a request's preparation ran past the server's limit. Real requests take
    /// milliseconds, so the request is at fault (a retry would fail the same way).
    pub fn prepare_timeout(limit: Duration) -> Self {
        Failure::api(
            ApiError::invalid_request(format!(
                "Preparing the request (its template render and tool grammars) took longer than the server's limit of {} s.",
                limit.as_secs_f64()
            ))
            .with_param("messages")
            .with_code("prepare_timeout"),
        )
    }

    /// 503: the request waited for a generation slot longer than the server's limit. A
    /// retry later may find one free.
    pub fn queue_timeout(limit: Duration) -> Self {
        Failure {
            status: StatusCode::SERVICE_UNAVAILABLE,
            error: ApiError::server(format!(
                "The request waited longer than the server's limit of {} s for a free generation slot; try again later.",
                limit.as_secs_f64()
            ))
            .with_code("queue_timeout"),
        }
    }

    /// 400: the call grammar of the request's tools (or `response_format`) is larger than
    /// the server compiles.
    pub fn grammar_too_large(bytes: usize, limit: usize) -> Self {
        Failure::api(
            ApiError::invalid_request(format!(
                "The grammar of the request's tools is {bytes} bytes, more than the server's limit of {limit} bytes; send fewer or simpler tool schemas."
            ))
            .with_param("tools")
            .with_code("grammar_too_large"),
        )
    }

    /// 400: compiling the request's call grammar ran past the server's limit. The same
    /// schemas would take as long again, so the request is at fault.
    pub fn grammar_timeout(limit: Duration) -> Self {
        Failure::api(
            ApiError::invalid_request(format!(
                "Compiling the grammar of the request's tools took longer than the server's limit of {} s; send fewer or simpler tool schemas.",
                limit.as_secs_f64()
            ))
            .with_param("tools")
            .with_code("grammar_timeout"),
        )
    }

    /// 400: the answer took longer to generate than the server allows. Not a 5xx: the
    /// OpenAI SDKs retry those, and the same request would run as long again.
    pub fn generation_timeout(limit: Duration, tokens: u32) -> Self {
        Failure::api(
            ApiError::invalid_request(format!(
                "The answer ran past the server's limit of {} s for one generation ({tokens} tokens generated); ask for fewer with max_tokens.",
                limit.as_secs_f64()
            ))
            .with_param("max_tokens")
            .with_code("generation_timeout"),
        )
    }

    /// 404 for a route this server does not have.
    pub fn no_route(method: &str, path: &str) -> Self {
        Failure::api(ApiError::not_found(format!(
            "Unknown route: {method} {path}"
        )))
    }

    /// 405 for a known route asked with the wrong method.
    pub fn wrong_method(method: &str, path: &str) -> Self {
        Failure {
            status: StatusCode::METHOD_NOT_ALLOWED,
            error: ApiError::invalid_request(format!("{path} does not accept {method}")),
        }
    }

    /// A remote engine's failure: 502, 503 or 504, a `server_error` with `code`.
    fn gateway(status: StatusCode, code: &str, message: String) -> Self {
        Failure {
            status,
            error: ApiError::server(message).with_code(code),
        }
    }

    /// 500: the engine ended without saying how (its thread panicked).
    pub fn engine_vanished() -> Self {
        Failure::api(ApiError::server(
            "The engine stopped without finishing the generation.",
        ))
    }

    /// 500: a dialect's parser broke its event contract (a bug, reported rather than
    /// answered with a half-built message).
    pub fn parser_bug(error: DialectError) -> Self {
        Failure::api(ApiError::server(format!(
            "The output parser failed: {error}"
        )))
    }

    /// The error object alone, as a stream sends it in a `data:` line.
    pub fn body(&self) -> ErrorResponse {
        ErrorResponse::from(self.error.clone())
    }
}

/// The error code of a failed response, for [`crate::metrics`] to count refusals by.
#[derive(Debug, Clone)]
pub struct FailureCode(pub String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.status, Json(body)).into_response();
        if let Some(code) = self.error.code {
            response.extensions_mut().insert(FailureCode(code));
        }
        response
    }
}

impl From<DialectError> for Failure {
    fn from(error: DialectError) -> Self {
        let message = error.to_string();
        match *error.kind() {
            DialectErrorKind::UnknownTool | DialectErrorKind::NoCallableTools => {
                Failure::invalid("tool_choice", message)
            }
            DialectErrorKind::ToolSchema => Failure::invalid("tools", message),
            DialectErrorKind::ResponseFormat => Failure::invalid("response_format", message),
            DialectErrorKind::Template(kind) if is_the_models_fault(&kind) => {
                Failure::api(ApiError::server(message))
            }
            // Our own faults, not the request's: a parser that broke its event contract,
            // a scanner built wrong, a template whose call syntax was not learned.
            DialectErrorKind::StartOutOfOrder { .. }
            | DialectErrorKind::CallNotOpen { .. }
            | DialectErrorKind::EmptyMarker { .. } => Failure::parser_bug(error),
            DialectErrorKind::NotLearned => Failure::api(ApiError::server(message)),
            // A template raises on histories it refuses (roles out of order, say): the
            // request is at fault, not the server.
            _ => Failure::invalid("messages", message),
        }
    }
}

/// A template the model's files do not give (unreadable, missing, not the one named):
/// nothing the request can change.
fn is_the_models_fault(kind: &TemplateErrorKind) -> bool {
    matches!(
        kind,
        TemplateErrorKind::File | TemplateErrorKind::NoTemplate | TemplateErrorKind::Choice
    )
}

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        let message = error.to_string();
        match error.kind() {
            EngineErrorKind::PromptTooLong { .. } => Failure::api(
                ApiError::invalid_request(message)
                    .with_param("messages")
                    .with_code("context_length_exceeded"),
            ),
            EngineErrorKind::Constraint => Failure::api(ApiError::invalid_request(message)),
            EngineErrorKind::Upstream => {
                Failure::gateway(StatusCode::BAD_GATEWAY, "upstream_error", message)
            }
            EngineErrorKind::Unavailable => Failure::gateway(
                StatusCode::SERVICE_UNAVAILABLE,
                "upstream_unavailable",
                message,
            ),
            EngineErrorKind::Timeout => {
                Failure::gateway(StatusCode::GATEWAY_TIMEOUT, "upstream_timeout", message)
            }
            // The engine itself failed, or a kind this server does not know yet.
            _ => Failure::api(ApiError::new(ErrorType::Server, message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_error_type() {
        assert_eq!(Failure::invalid("n", "no").status, StatusCode::BAD_REQUEST);
        assert_eq!(
            Failure::overloaded().status,
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(
            Failure::body_too_large(1).status,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(Failure::no_route("GET", "/x").status, StatusCode::NOT_FOUND);
        let backend = Failure::from(EngineError::new(EngineErrorKind::Backend, "decode failed"));
        assert_eq!(backend.status, StatusCode::INTERNAL_SERVER_ERROR);
        let upstream = [
            (
                EngineError::new(EngineErrorKind::Upstream, "500: boom"),
                StatusCode::BAD_GATEWAY,
            ),
            (
                EngineError::new(EngineErrorKind::Unavailable, "down"),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (
                EngineError::new(EngineErrorKind::Timeout, "quiet"),
                StatusCode::GATEWAY_TIMEOUT,
            ),
        ];
        for (error, status) in upstream {
            let failure = Failure::from(error);
            assert_eq!(failure.status, status);
            assert_eq!(failure.error.kind, ErrorType::Server);
        }
    }

    #[test]
    fn a_prompt_too_long_is_the_clients_fault() {
        let failure = Failure::from(EngineError::from(EngineErrorKind::PromptTooLong {
            prompt_tokens: 10,
            context_length: 5,
        }));
        assert_eq!(failure.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            failure.error.code.as_deref(),
            Some("context_length_exceeded")
        );
    }

    #[test]
    fn a_parser_that_broke_its_contract_is_the_servers_fault() {
        let kind = DialectErrorKind::CallNotOpen {
            index: 0,
            what: "arguments",
        };
        let failure = Failure::from(DialectError::from(kind));
        assert_eq!(failure.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(failure
            .error
            .message
            .starts_with("The output parser failed"));
    }

    #[test]
    fn dialect_errors_name_the_parameter_at_fault() {
        let unknown = Failure::from(DialectError::new(DialectErrorKind::UnknownTool, "f"));
        assert_eq!(unknown.error.param.as_deref(), Some("tool_choice"));
        let schema = Failure::from(DialectError::new(DialectErrorKind::ToolSchema, "f: bad"));
        assert_eq!(schema.error.param.as_deref(), Some("tools"));
        assert_eq!(schema.status, StatusCode::BAD_REQUEST);
    }
}
