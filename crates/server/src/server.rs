//! The server: a [`ServedModel`] behind the routes of [`crate::routes`], with the limits
//! and the API key of [`ServerOptions`], listening until Ctrl-C.

use std::io;
use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;

use crate::admission::Admission;
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
}

impl Default for ServerOptions {
    /// No key; 16 MiB bodies (a long conversation with many tools fits, a runaway upload
    /// does not); one generation at a time with 64 waiting.
    fn default() -> Self {
        ServerOptions {
            api_key: None,
            max_body_bytes: 16 << 20,
            parallel: 1,
            max_waiting: 64,
        }
    }
}

/// What every request handler reads.
pub struct AppState {
    pub model: ServedModel,
    pub options: ServerOptions,
    pub admission: Admission,
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
            }),
        }
    }

    /// The routes, for serving or for calling in tests without a socket.
    pub fn router(&self) -> Router {
        routes::router(Arc::clone(&self.state))
    }

    /// Serves on `listener` until Ctrl-C, letting requests in flight finish.
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        axum::serve(listener, self.router())
            .with_graceful_shutdown(async {
                // Without a Ctrl-C handler, serve until the process is killed.
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
    }
}
