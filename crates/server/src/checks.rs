//! What a request body must be before anything is prepared from it.
//!
//! Parsing accepts any JSON of the right shape and [`ChatRequest::validate`] makes
//! OpenAI's checks across fields. Added here is what this server cannot do and says so
//! rather than silently doing something else: several choices (`n` > 1) and log
//! probabilities.

use toolbridge_chat::{ApiError, ChatRequest};

use crate::error::Failure;

/// The request in `body`, parsed and checked.
pub fn parse_request(body: &[u8]) -> Result<ChatRequest, Failure> {
    let request: ChatRequest =
        serde_json::from_slice(body).map_err(|error| Failure::api(ApiError::unparsable(&error)))?;
    check_request(&request)?;
    Ok(request)
}

/// OpenAI's checks and this server's refusals, for a request parsed here or mapped from
/// another API's.
pub fn check_request(request: &ChatRequest) -> Result<(), Failure> {
    request.validate().map_err(Failure::api)?;
    refuse_unsupported(request)
}

/// Refuses what this server does not implement.
fn refuse_unsupported(request: &ChatRequest) -> Result<(), Failure> {
    if request.n.is_some_and(|n| n != 1) {
        return Err(Failure::invalid(
            "n",
            "Only one choice per request is supported ('n' must be 1).",
        ));
    }
    if request.logprobs == Some(true) {
        return Err(Failure::invalid(
            "logprobs",
            "Log probabilities are not supported by this server.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(body: &str) -> ApiError {
        parse_request(body.as_bytes()).expect_err("refused").error
    }

    #[test]
    fn garbage_is_an_invalid_request() {
        for body in ["", "{", "[]", "null", "{\"messages\": 3}", "\u{0}"] {
            let error = error_of(body);
            assert_eq!(
                error.kind,
                toolbridge_chat::ErrorType::InvalidRequest,
                "{body}"
            );
        }
    }

    #[test]
    fn unsupported_options_are_refused_by_name() {
        let base = r#""messages": [{"role": "user", "content": "hi"}]"#;
        assert_eq!(
            error_of(&format!("{{{base}, \"n\": 2}}")).param.as_deref(),
            Some("n")
        );
        let logprobs = format!("{{{base}, \"logprobs\": true}}");
        assert_eq!(error_of(&logprobs).param.as_deref(), Some("logprobs"));
        let fine = format!("{{{base}, \"n\": 1, \"logprobs\": false}}");
        assert!(parse_request(fine.as_bytes()).is_ok());
    }

    #[test]
    fn empty_messages_are_refused() {
        assert_eq!(
            error_of(r#"{"messages": []}"#).param.as_deref(),
            Some("messages")
        );
    }
}
