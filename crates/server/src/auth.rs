//! The API key: when the server has one, a request carries it as `Authorization: Bearer`
//! (OpenAI's clients) or as `x-api-key` (Anthropic's), on every route that needs it.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use toolbridge_chat::ApiError;

use crate::error::Failure;
use crate::state::{AppState, Shared};

/// Lets a request through when no key is set or it carries the key.
pub(crate) async fn require_api_key(
    State(state): Shared,
    request: Request,
    next: Next,
) -> Result<Response, Failure> {
    check_api_key(&state, request.headers())?;
    Ok(next.run(request).await)
}

/// Whether `headers` carry the server's key, when it has one: as `Authorization: Bearer`
/// (OpenAI's clients) or as `x-api-key` (Anthropic's), on every route.
pub(crate) fn check_api_key(state: &AppState, headers: &HeaderMap) -> Result<(), Failure> {
    let Some(expected) = state.options.api_key.as_deref() else {
        return Ok(());
    };
    match bearer_token(headers).or_else(|| x_api_key(headers)) {
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(Failure::api(ApiError::authentication(
            "Incorrect API key provided.",
        ))),
        None => Err(Failure::api(ApiError::authentication(
            "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY' or 'x-api-key: YOUR_KEY'.",
        ))),
    }
}

/// The token of an `Authorization: Bearer …` header.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The key of an `x-api-key` header, as Anthropic's clients send it.
fn x_api_key(headers: &HeaderMap) -> Option<&str> {
    headers.get("x-api-key")?.to_str().ok().map(str::trim)
}

/// Compares without stopping at the first difference, so timing does not reveal how much
/// of a guessed key was right.
fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differs, (a, b)| differs | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_case_insensitively() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            "bearer  sk-1 ".parse().expect("a header"),
        );
        assert_eq!(bearer_token(&headers), Some("sk-1"));
        headers.insert(
            header::AUTHORIZATION,
            "Basic abc".parse().expect("a header"),
        );
        assert_eq!(bearer_token(&headers), None);
    }

    #[test]
    fn keys_compare_whole() {
        assert!(constant_time_eq(b"key", b"key"));
        assert!(!constant_time_eq(b"kez", b"key"));
        assert!(!constant_time_eq(b"ke", b"key"));
    }
}
