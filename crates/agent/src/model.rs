//! The model the agent talks to, behind one small trait: a chat-completions request in,
//! the response out.
//!
//! Two implementations:
//! - [`HttpModel`]: any OpenAI-compatible URL (a `toolbridge serve`, vLLM, llama.cpp's
//!   server, OpenAI itself), with an optional API key;
//! - [`RouterModel`]: toolbridge's own server (`toolbridge_server::Server::router`) called
//!   in-process, without a socket. The embedded engine then prepares requests exactly as
//!   `toolbridge serve` does (template, dialect, grammar, parser, limits): there is no
//!   second preparation path to drift from the first, and the scripted engine drives the
//!   loop's tests through the same router.

use std::future::Future;
use std::pin::Pin;

use axum::body::Body;
use axum::http::{header, Request};
use axum::Router;
use http_body_util::BodyExt;
use toolbridge_chat::{ChatRequest, ChatResponse};
use tower::ServiceExt;

use crate::error::{AgentError, AgentErrorKind};

/// A boxed future, so the trait can be used as `dyn ChatModel`.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ChatResponse, AgentError>> + Send + 'a>>;

/// Something that answers chat-completions requests.
pub trait ChatModel: Send + Sync {
    /// Answers `request` (not streamed).
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> ModelFuture<'a>;
}

/// An OpenAI-compatible server at a URL.
pub struct HttpModel {
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
}

impl HttpModel {
    /// The server at `base_url` (`http://host:8080` or `…/v1`), with a bearer `api_key`
    /// when it needs one.
    pub fn new(base_url: &str, api_key: Option<String>) -> HttpModel {
        let base = base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        HttpModel {
            client: reqwest::Client::new(),
            url: format!("{base}/v1/chat/completions"),
            api_key,
        }
    }
}

impl ChatModel for HttpModel {
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let mut post = self.client.post(&self.url).json(request);
            if let Some(key) = &self.api_key {
                post = post.bearer_auth(key);
            }
            let unreachable = |error: reqwest::Error| {
                AgentError::new(AgentErrorKind::ModelUnreachable, self.url.clone())
                    .with_source(error)
            };
            let response = post.send().await.map_err(unreachable)?;
            let status = response.status().as_u16();
            let body = response.text().await.map_err(unreachable)?;
            decode(status, &body)
        })
    }
}

/// toolbridge's server, called in-process.
pub struct RouterModel {
    router: Router,
}

impl RouterModel {
    /// Calls `router` (what `toolbridge_server::Server::router` returns).
    pub fn new(router: Router) -> RouterModel {
        RouterModel { router }
    }
}

impl ChatModel for RouterModel {
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let body = serde_json::to_vec(request).map_err(malformed)?;
            let request = Request::post("/v1/chat/completions")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body))
                .map_err(malformed)?;
            let response = self
                .router
                .clone()
                .oneshot(request)
                .await
                .unwrap_or_else(|never| match never {});
            let status = response.status().as_u16();
            let bytes = response
                .into_body()
                .collect()
                .await
                .map_err(malformed)?
                .to_bytes();
            decode(status, &String::from_utf8_lossy(&bytes))
        })
    }
}

/// A response body, or the error it carries.
fn decode(status: u16, body: &str) -> Result<ChatResponse, AgentError> {
    if !(200..300).contains(&status) {
        return Err(AgentError::new(
            AgentErrorKind::ModelStatus { status },
            body,
        ));
    }
    // The body follows the cause's words, so they stay in the detail, as before.
    serde_json::from_str(body)
        .map_err(|e| AgentError::new(AgentErrorKind::ModelMalformed, format!("{e}: {body}")))
}

/// An answer that cannot be read, because of `error`.
fn malformed(error: impl std::error::Error + Send + Sync + 'static) -> AgentError {
    AgentError::new(AgentErrorKind::ModelMalformed, "").with_source(error)
}
