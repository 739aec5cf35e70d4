//! The server: a [`ServedModel`] behind the routes of [`crate::routes`], with the limits
//! and the API key of [`ServerOptions`], listening until Ctrl-C or `SIGTERM`.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

use crate::admission::Admission;
use crate::metrics::Metrics;
use crate::model::ServedModel;
use crate::routes;

/// How the server guards itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// When set, every `/v1/` request must carry `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Generations run at once (the engine's sequences, llama.cpp's `--parallel`).
    pub parallel: usize,
    /// Requests that may wait for a generation slot before new ones get 503.
    pub max_waiting: usize,
    /// The longest a request's preparation (template render, tool grammar, parser) may
    /// take before it is refused.
    pub prepare_timeout: Duration,
}

impl Default for ServerOptions {
    /// No key; 16 MiB bodies (a long conversation with many tools fits, a runaway upload
    /// does not); one generation at a time with 64 waiting; 10 s to prepare (real
    /// requests take milliseconds).
    fn default() -> Self {
        ServerOptions {
            api_key: None,
            max_body_bytes: 16 << 20,
            parallel: 1,
            max_waiting: 64,
            prepare_timeout: Duration::from_secs(10),
        }
    }
}

/// What every request handler reads.
pub struct AppState {
    pub model: ServedModel,
    pub options: ServerOptions,
    pub admission: Admission,
    pub metrics: Arc<Metrics>,
}

/// A model served with options, ready to listen.
#[derive(Clone)]
pub struct Server {
    state: Arc<AppState>,
}

impl Server {
    pub fn new(model: ServedModel, options: ServerOptions) -> Server {
        let admission = Admission::new(options.parallel, options.max_waiting);
        Server {
            state: Arc::new(AppState {
                model,
                options,
                admission,
                metrics: Arc::default(),
            }),
        }
    }

    /// The routes, for serving or for calling in tests without a socket.
    pub fn router(&self) -> Router {
        routes::router(Arc::clone(&self.state))
    }

    /// Serves on `listener` until Ctrl-C or `SIGTERM`, letting requests in flight finish.
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown_signal())
            .await
    }
}

/// Ctrl-C, or `SIGTERM` (what service managers and container runtimes send) on Unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        // Without a Ctrl-C handler, wait for the other signal.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
