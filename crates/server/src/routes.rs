//! The routes and what guards them.
//!
//! `/health` answers without a key so that load balancers and scripts can poll it, and so
//! does `/` (`HEAD /` is how Claude Code checks that a server is there);
//! everything under `/v1/`, and `/metrics`, needs the API key when one is set ([`auth`]).
//! Every answer is counted for `/metrics` and logged in one line ([`status::observe`]).
//! CORS is open to every origin (browser clients such as chat UIs call local servers), as
//! llama.cpp's server is; the API key, not the origin, is what protects a server. Unknown
//! routes, wrong methods and bodies over the limit are answered as OpenAI errors like
//! everything else, or as Anthropic's under `/v1/messages`.

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::middleware;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use tower_http::cors::{Any, CorsLayer};

use crate::error::Failure;
use crate::state::AppState;
use crate::{auth, chat, inspect, messages, responses, status};

/// Every route, with its guards.
pub fn router(state: Arc<AppState>) -> Router {
    let v1 = Router::new()
        .route("/v1/chat/completions", post(chat::create))
        .route("/v1/models", get(status::models))
        .route("/v1/models/{id}", get(status::model))
        .route("/metrics", get(status::metrics))
        .route("/v1/responses", post(responses::create))
        .merge(inspect::api())
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::require_api_key,
        ));
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods(Any)
        .allow_headers(Any);
    Router::new()
        .route("/", get(status::root))
        .route("/health", get(status::health))
        .merge(inspect::page())
        .merge(v1)
        .route("/v1/messages", messages::route(&state))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(state.options.max_body_bytes))
        .layer(cors)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            status::observe,
        ))
        .with_state(state)
}

async fn no_route(method: Method, uri: Uri) -> Response {
    messages::in_its_shape(uri.path(), Failure::no_route(method.as_str(), uri.path()))
}

async fn wrong_method(method: Method, uri: Uri) -> Response {
    messages::in_its_shape(
        uri.path(),
        Failure::wrong_method(method.as_str(), uri.path()),
    )
}
