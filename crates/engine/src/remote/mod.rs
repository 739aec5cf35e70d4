//! Remote engines: toolbridge in front of llama.cpp servers, vLLM, SGLang or Ollama.
//!
//! toolbridge renders the prompt and builds the constraint itself, as for the embedded
//! engine; a remote engine only completes raw text. Each kind's wire protocol is one
//! module ([`llama_server`], [`vllm`], [`sglang`], [`ollama`]), a `Backend` that
//! [`EngineKind`] chooses, all over one HTTP layer ([`http`]) and one set of replicas
//! ([`replicas`]).
//!
//! The [`Engine`] trait is blocking; the HTTP is async. A generation runs as a task on the
//! engine's own small runtime and hands what it reads to the caller's thread over a
//! channel, so the caller's callback (which may block on a slow client) never runs
//! inside the runtime. The caller's thread polls its callback with an empty piece while
//! the upstream is quiet (evaluating a long prompt), so a client that went away cancels
//! the upstream request before its first token too: dropping the task drops the
//! connection, and llama-server, vLLM, SGLang and Ollama all stop a generation whose
//! client has gone.
//!
//! A generation that fails before its first piece (a replica that refuses connections
//! or answers 5xx) is retried once on another healthy replica; after its first piece, a
//! failure ends it with an error.

pub mod affinity;
mod http;
mod kind;
mod llama_server;
mod ollama;
mod protocol;
mod replicas;
mod sglang;
mod vllm;
mod xgrammar;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use kind::EngineKind;

use self::http::{Failure, Http};
use self::protocol::{Backend, Description, Ending, Target, Update, WireRequest};
use self::replicas::{Pool, Replica};
use crate::{
    Completion, Engine, EngineError, FinishReason, Flow, Generation, ModelInfo, Timings, Usage,
};

/// How to reach the remote engine.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteOptions {
    /// The replicas' base URLs (`http://host:port`), one kind of server all.
    pub urls: Vec<String>,
    /// The kind, when not detected from the endpoints the first replica answers.
    pub kind: Option<EngineKind>,
    /// The upstream's name of the model, when it serves several (vLLM, SGLang, Ollama).
    pub model: Option<String>,
    /// The longest an upstream may stay silent: before its answer, or between two pieces.
    pub timeout: Duration,
    /// Generations each replica runs at once, when not what it reports.
    pub capacity: Option<usize>,
    /// How often each replica's health is checked.
    pub health_interval: Duration,
    /// Sent as `Authorization: Bearer …` to every replica (vLLM's and SGLang's
    /// `--api-key`, llama-server's).
    pub api_key: Option<String>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            urls: Vec::new(),
            kind: None,
            model: None,
            timeout: Duration::from_secs(300),
            capacity: None,
            health_interval: Duration::from_secs(5),
            api_key: None,
        }
    }
}

/// How often the caller's callback is polled while the upstream is quiet.
const QUIET_POLL: Duration = Duration::from_millis(250);

/// An [`Engine`] whose generations run on remote servers. See the module docs.
pub struct RemoteEngine {
    /// `None` only while dropping: a runtime is shut down without blocking, so the engine
    /// may be dropped anywhere, an async context included.
    runtime: Option<tokio::runtime::Runtime>,
    kind: EngineKind,
    target: Target,
    pool: Arc<Pool>,
    http: Http,
    model: ModelInfo,
    special: llama_server::SpecialTokens,
}

impl RemoteEngine {
    /// Connects to the replicas: finds their kind (unless given), what they serve, and how
    /// many generations each runs. Every replica that answers must be of the same kind; a
    /// replica that does not answer yet starts ejected, for the health checks to admit.
    /// Call it outside an async runtime (it runs one of its own).
    pub fn connect(options: RemoteOptions) -> Result<RemoteEngine, EngineError> {
        if options.urls.is_empty() {
            return Err(EngineError::Unavailable("no --engine URL given".into()));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("remote-engine")
            .enable_all()
            .build()
            .map_err(|error| EngineError::Backend(format!("cannot start a runtime: {error}")))?;
        let http = Http::new(options.timeout, options.api_key.as_deref())?;
        let urls: Vec<String> = options
            .urls
            .iter()
            .map(|url| url.trim_end_matches('/').to_owned())
            .collect();
        let (kind, described) = runtime.block_on(describe_all(&http, &urls, &options))?;
        let backend = kind.backend();
        let first = same_model(&urls, &described)?;
        let replicas = urls
            .iter()
            .zip(&described)
            .map(|(url, description)| {
                let capacity = options
                    .capacity
                    .or(description.as_ref().and_then(|d| d.capacity))
                    .unwrap_or_else(|| backend.default_capacity());
                Replica::new(url.clone(), capacity, description.is_some())
            })
            .collect();
        let pool = Arc::new(Pool::new(replicas));
        {
            let _entered = runtime.enter();
            Pool::watch(&pool, &http, backend.health_path(), options.health_interval);
        }
        Ok(RemoteEngine {
            runtime: Some(runtime),
            kind,
            target: first.target,
            pool,
            http,
            model: first.info,
            special: llama_server::SpecialTokens::default(),
        })
    }

    pub fn kind(&self) -> EngineKind {
        self.kind
    }

    /// Generations the replicas run at once, together: what the server should admit.
    pub fn capacity(&self) -> usize {
        self.pool.capacity()
    }

    /// The replicas' base URLs with whether each is healthy now.
    pub fn replicas(&self) -> Vec<(String, bool)> {
        self.pool
            .replicas
            .iter()
            .map(|replica| (replica.base.clone(), replica.is_healthy()))
            .collect()
    }

    /// The path and JSON body `generation` is sent as to a replica: what
    /// [`Engine::generate`] posts, for tools that show it or replay it directly.
    pub fn wire_request(
        &self,
        generation: &Generation,
    ) -> Result<(&'static str, serde_json::Value), EngineError> {
        let request = self.request(generation)?;
        Ok((request.path, request.body))
    }

    fn request(&self, generation: &Generation) -> Result<WireRequest, EngineError> {
        let special = self.special_tokens(generation)?;
        self.kind
            .backend()
            .request(generation, &self.target, &special)
    }

    /// The grammar's markers the model has as single tokens, for kinds that must know.
    fn special_tokens(&self, generation: &Generation) -> Result<Vec<String>, EngineError> {
        let Some(constraint) = &generation.constraint else {
            return Ok(Vec::new());
        };
        if self.kind != EngineKind::LlamaServer {
            return Ok(Vec::new());
        }
        let Some(base) = self.pool.any_healthy() else {
            return Ok(Vec::new());
        };
        let candidates = constraint.marker_candidates();
        Ok(self
            .runtime()?
            .block_on(self.special.resolve(&self.http, &base, &candidates)))
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime, EngineError> {
        self.runtime
            .as_ref()
            .ok_or_else(|| EngineError::Backend("the remote engine is shutting down".into()))
    }
}

impl Drop for RemoteEngine {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Each replica's description, `None` for one that does not answer; the kind is the one
/// given, else the first answering replica's, and every answering replica must be of it.
async fn describe_all(
    http: &Http,
    urls: &[String],
    options: &RemoteOptions,
) -> Result<(EngineKind, Vec<Option<Description>>), EngineError> {
    let mut kind = options.kind;
    let mut described = Vec::with_capacity(urls.len());
    let mut first_error = None;
    for url in urls {
        let found = match kind {
            Some(kind) => Ok(kind),
            None => EngineKind::detect(http, url).await,
        };
        let description = match found {
            Ok(found) => {
                if let Some(known) = kind.filter(|known| *known != found) {
                    return Err(EngineError::Upstream(format!(
                        "{url} is {found}, but the other replicas are {known}: replicas must be one kind of server"
                    )));
                }
                kind = Some(found);
                found
                    .backend()
                    .describe(http, url, options.model.as_deref())
                    .await
            }
            Err(error) => Err(error),
        };
        match description {
            Ok(description) => described.push(Some(description)),
            Err(error) => {
                tracing::warn!(replica = %url, %error, "replica not answering at start-up");
                first_error.get_or_insert(error);
                described.push(None);
            }
        }
    }
    match kind {
        Some(kind) if described.iter().any(Option::is_some) => Ok((kind, described)),
        _ => {
            Err(first_error
                .unwrap_or_else(|| EngineError::Unavailable("no replica answers".into())))
        }
    }
}

/// The description of the first answering replica, once every answering replica is
/// found to serve the same model with the same template: a prompt rendered for one must
/// be right for all.
fn same_model(
    urls: &[String],
    described: &[Option<Description>],
) -> Result<Description, EngineError> {
    let mut answering = urls
        .iter()
        .zip(described)
        .filter_map(|(url, d)| Some((url, d.as_ref()?)));
    let Some((first_url, first)) = answering.next() else {
        return Err(EngineError::Unavailable(format!(
            "no replica answers ({})",
            urls.join(", ")
        )));
    };
    let identity = |info: &ModelInfo| {
        (
            info.id.clone(),
            info.chat_template.clone(),
            info.bos_token.clone(),
            info.eos_token.clone(),
            info.ollama_modelfile.clone(),
        )
    };
    for (url, other) in answering {
        if identity(&other.info) != identity(&first.info) {
            return Err(EngineError::Upstream(format!(
                "{url} serves {} but {first_url} serves {} (or their templates differ): replicas must serve one model",
                other.info.id, first.info.id
            )));
        }
    }
    Ok(first.clone())
}

impl Engine for RemoteEngine {
    fn model(&self) -> &ModelInfo {
        &self.model
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        let started = Instant::now();
        let request = self.request(generation)?;
        let (sender, receiver) = mpsc::channel();
        let run = Run {
            backend: self.kind.backend(),
            pool: Arc::clone(&self.pool),
            http: self.http.clone(),
            request,
            prompt: generation.prompt.clone(),
        };
        let task = self.runtime()?.spawn(run.run(sender));
        let outcome = hand_over(&receiver, on_piece, started);
        task.abort();
        outcome
    }

    fn unenforced(&self, generation: &Generation) -> Option<&'static str> {
        self.kind.backend().unenforced(generation)
    }
}

/// Passes what the generation's task reads to `on_piece`, on the caller's thread, until
/// the end; the caller's [`Flow::Stop`] ends it as cancelled.
fn hand_over(
    receiver: &mpsc::Receiver<Result<Update, EngineError>>,
    on_piece: &mut dyn FnMut(&str) -> Flow,
    started: Instant,
) -> Result<Completion, EngineError> {
    let mut first_piece = None;
    let mut usage = Usage::default();
    loop {
        let update = match receiver.recv_timeout(QUIET_POLL) {
            Ok(update) => update?,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if on_piece("") == Flow::Stop {
                    return Ok(cancelled(started, first_piece, usage));
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(EngineError::Upstream(
                    "the generation ended without a word".into(),
                ))
            }
        };
        match update {
            Update::Text(text) => {
                first_piece.get_or_insert_with(|| started.elapsed());
                if on_piece(&text) == Flow::Stop {
                    return Ok(cancelled(started, first_piece, usage));
                }
            }
            Update::Usage(so_far) => usage = so_far,
            Update::Done(ending) => return Ok(completion(ending, started, first_piece)),
        }
    }
}

/// A generation the caller ended, with the last counts the server gave.
fn cancelled(started: Instant, first_piece: Option<Duration>, usage: Usage) -> Completion {
    let ending = Ending {
        finish: FinishReason::Cancelled,
        usage,
        ..Ending::stopped()
    };
    completion(ending, started, first_piece)
}

fn completion(ending: Ending, started: Instant, first_piece: Option<Duration>) -> Completion {
    let first_piece_ms = first_piece
        .unwrap_or_else(|| started.elapsed())
        .as_secs_f64()
        * 1e3;
    let total_ms = started.elapsed().as_secs_f64() * 1e3;
    Completion {
        finish_reason: ending.finish,
        usage: ending.usage,
        timings: Timings {
            first_piece_ms,
            prompt_ms: ending.prompt_ms.unwrap_or(first_piece_ms),
            generation_ms: ending.generation_ms.unwrap_or(total_ms - first_piece_ms),
            ..Timings::default()
        },
    }
}

/// One generation's task on the engine's runtime.
struct Run {
    backend: &'static dyn Backend,
    pool: Arc<Pool>,
    http: Http,
    request: WireRequest,
    prompt: String,
}

type Sender = mpsc::Sender<Result<Update, EngineError>>;

impl Run {
    async fn run(self, sender: Sender) {
        let mut tried = Vec::new();
        loop {
            let (n, place) = match self.pool.place(&self.prompt, &tried).await {
                Ok(placed) => placed,
                Err(error) => {
                    let _ = sender.send(Err(error));
                    return;
                }
            };
            let (failure, sent_text) = match self.attempt(&place.replica.base, &sender).await {
                Ok(()) => return,
                Err(failed) => failed,
            };
            if failure.ejects() {
                place.replica.set_healthy(false, &failure.to_string());
            }
            tried.push(n);
            drop(place);
            let retry =
                !sent_text && failure.ejects() && tried.len() < 2 && self.pool.replicas.len() > 1;
            if !retry {
                let _ = sender.send(Err(self.backend.error(failure)));
                return;
            }
        }
    }

    /// Streams the answer of one replica into `sender`: `Ok` once it is done (or nobody
    /// listens any more), else the failure and whether any text was sent before it.
    async fn attempt(&self, base: &str, sender: &Sender) -> Result<(), (Failure, bool)> {
        let url = format!("{base}{}", self.request.path);
        let mut frames = self
            .http
            .post_stream(&url, &self.request.body, self.request.framing)
            .await
            .map_err(|failure| (failure, false))?;
        let mut reader = self.backend.reader();
        let mut sent_text = false;
        loop {
            let updates = match frames.next().await {
                Some(Ok(frame)) => reader.frame(&frame),
                Some(Err(failure)) => return Err((failure, sent_text)),
                None => reader.closed().map(|ending| vec![Update::Done(ending)]),
            };
            let updates = match updates {
                Ok(updates) => updates,
                Err(error) => {
                    // A frame the server sent as an error, or could not be read: the
                    // server's word stands, it is not retried.
                    let _ = sender.send(Err(error));
                    return Ok(());
                }
            };
            for update in updates {
                let done = matches!(update, Update::Done(_));
                if matches!(&update, Update::Text(text) if text.is_empty()) {
                    continue;
                }
                sent_text |= matches!(update, Update::Text(_));
                if sender.send(Ok(update)).is_err() || done {
                    return Ok(());
                }
            }
        }
    }
}
