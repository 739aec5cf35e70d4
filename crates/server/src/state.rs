//! What every request handler reads: the model served, the server's limits
//! ([`ServerOptions`]), the admission queue and the metrics. It sits below the routes and
//! the handlers so that each of them can take it without importing the others.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;

use crate::admission::Admission;
use crate::generate::Budget;
use crate::metrics::Metrics;
use crate::model::ServedModel;

/// The state as a handler takes it.
pub(crate) type Shared = State<Arc<AppState>>;

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
    /// The longest a request may wait for a generation slot.
    pub queue_timeout: Duration,
    /// The longest a request's preparation (template render, tool grammars) may
    /// take before it is refused.
    pub prepare_timeout: Duration,
    /// The largest call grammar (as the engine's grammar text) compiled for a request.
    pub max_grammar_bytes: usize,
    /// The longest the engine may take to compile a request's call grammar.
    pub grammar_timeout: Duration,
    /// How long a generation may hold its slot, and wait for a client that stopped
    /// reading.
    pub budget: Budget,
    /// After Ctrl-C or `SIGTERM`, how long the requests in flight may take to finish.
    pub drain_timeout: Duration,
}

impl Default for ServerOptions {
    /// No key; 16 MiB bodies (a long conversation with many tools fits, a runaway upload
    /// does not); one generation at a time with 64 waiting, each at most 2 minutes; 10 s
    /// to prepare and 10 s to compile a grammar of at most 4 MiB (real requests take
    /// milliseconds and a few KiB); 10 minutes per generation (4,096 tokens at 7 a
    /// second); 30 s for a client that stopped reading; 30 s to drain.
    fn default() -> Self {
        ServerOptions {
            api_key: None,
            max_body_bytes: 16 << 20,
            parallel: 1,
            max_waiting: 64,
            queue_timeout: Duration::from_secs(120),
            prepare_timeout: Duration::from_secs(10),
            max_grammar_bytes: 4 << 20,
            grammar_timeout: Duration::from_secs(10),
            budget: Budget {
                generation: Duration::from_secs(600),
                stalled_client: Duration::from_secs(30),
            },
            drain_timeout: Duration::from_secs(30),
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
