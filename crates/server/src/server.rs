//! The server: a [`ServedModel`] behind the routes of [`crate::routes`], with the limits
//! and the API key of [`ServerOptions`] ([`crate::state`]), listening until Ctrl-C or `SIGTERM`, then
//! draining the requests in flight for at most [`ServerOptions::drain_timeout`]. Every
//! accepted connection has `TCP_NODELAY` set ([`without_nagle`]).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::{Listener, ListenerExt};
use axum::Router;
use tokio::net::{TcpListener, TcpStream};

use crate::admission::Admission;
use crate::model::ServedModel;
use crate::routes;
use crate::state::{AppState, ServerOptions};

/// A model served with options, ready to listen.
#[derive(Clone)]
pub struct Server {
    state: Arc<AppState>,
}

impl Server {
    pub fn new(model: ServedModel, options: ServerOptions) -> Server {
        let admission =
            Admission::new(options.parallel, options.max_waiting, options.queue_timeout);
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
        self.serve_until(listener, shutdown_signal()).await
    }

    /// Serves on `listener` until `stop` completes; then takes no new connections and
    /// lets the requests in flight finish, for at most the drain timeout.
    pub async fn serve_until(
        self,
        listener: TcpListener,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
        let signal = async move {
            stop.await;
            let _ = stopping.send(());
        };
        let drain = self.state.options.drain_timeout;
        let serving =
            axum::serve(without_nagle(listener), self.router()).with_graceful_shutdown(signal);
        let deadline = async move {
            // Only a stop starts the clock; a dropped sender means serving ended first.
            if stopped.await.is_ok() {
                tokio::time::sleep(drain).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            served = serving => served,
            () = deadline => {
                tracing::warn!(
                    seconds = drain.as_secs_f64(),
                    "requests still in flight at the drain timeout: stopping anyway"
                );
                Ok(())
            }
        }
    }
}

/// `listener`, with `TCP_NODELAY` set on each connection it accepts.
///
/// Without it (axum's default), Nagle's algorithm holds a small write back while an
/// earlier one waits for its acknowledgement, and the client delays that acknowledgement
/// by up to 40 ms (Linux' delayed ACK): on a kept-alive connection, each streamed answer
/// after the first was held ~40 ms. A server that streams small events wants every write
/// sent at once.
fn without_nagle(listener: TcpListener) -> impl Listener<Io = TcpStream, Addr = SocketAddr> {
    listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY on an accepted connection");
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_have_nagle_off() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("an address");
        let mut listener = without_nagle(listener);
        let (accepted, client) = tokio::join!(listener.accept(), TcpStream::connect(address));
        let client = client.expect("connects");
        assert!(
            !client.nodelay().expect("readable"),
            "a fresh socket has Nagle on"
        );
        assert!(accepted.0.nodelay().expect("readable"));
    }
}
