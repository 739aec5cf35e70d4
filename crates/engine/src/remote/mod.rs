//! Remote engines: toolbridge in front of llama.cpp servers, vLLM, SGLang or Ollama.
//!
//! toolbridge renders the prompt and builds the constraint itself, as for the embedded
//! engine; a remote engine only completes raw text. Each kind's wire protocol is one
//! module ([`llama_server`], [`vllm`], [`sglang`], [`ollama`]), a `Backend` that
//! [`EngineKind`] chooses, all over one HTTP layer ([`http`]) and one set of replicas
//! ([`replicas`]).
//!
//! A generation is a stream ([`Engine::stream`]): a task on the caller's runtime reads the
//! upstream's answer and feeds it to the caller, one crossing per piece. A caller that
//! stops (its client went away) ends the task at once, before the first token too: the
//! connection is dropped, and llama-server, vLLM, SGLang and Ollama all stop a generation
//! whose client has gone. The blocking [`Engine::generate`] reads the same stream on the
//! engine's own small runtime (the one its health checks run on), asking its callback with
//! an empty piece whether to go on while the upstream is quiet.
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

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use kind::EngineKind;

use self::http::{Failure, Http};
use self::protocol::{Description, Ending, Target, Update, WireRequest};
use self::replicas::{Pool, Replica};
use crate::error::{unavailable_error, upstream_error};
use crate::streamed::{Feed, Pieces, Streamed};
use crate::{
    Completion, Engine, EngineError, EngineErrorKind, FinishReason, Flow, Generation, ModelInfo,
    Timings, Usage,
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
    upstream: Arc<Upstream>,
    model: ModelInfo,
}

/// What every generation reads: the replicas, and how to speak to them.
struct Upstream {
    kind: EngineKind,
    target: Target,
    pool: Arc<Pool>,
    http: Http,
    special: llama_server::SpecialTokens,
}

impl RemoteEngine {
    /// Connects to the replicas: finds their kind (unless given), what they serve, and how
    /// many generations each runs. Every replica that answers must be of the same kind; a
    /// replica that does not answer yet starts ejected, for the health checks to admit.
    /// Call it outside an async runtime (it runs one of its own).
    pub fn connect(options: RemoteOptions) -> Result<RemoteEngine, EngineError> {
        if options.urls.is_empty() {
            return Err(unavailable_error("no --engine URL given"));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("remote-engine")
            .enable_all()
            .build()
            .map_err(|error| {
                EngineError::new(EngineErrorKind::Backend, "cannot start a runtime")
                    .with_source(error)
            })?;
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
        let upstream = Upstream {
            kind,
            target: first.target,
            pool,
            http,
            special: llama_server::SpecialTokens::default(),
        };
        Ok(RemoteEngine {
            runtime: Some(runtime),
            upstream: Arc::new(upstream),
            model: first.info,
        })
    }

    pub fn kind(&self) -> EngineKind {
        self.upstream.kind
    }

    /// Generations the replicas run at once, together: what the server should admit.
    pub fn capacity(&self) -> usize {
        self.upstream.pool.capacity()
    }

    /// The replicas' base URLs with whether each is healthy now.
    pub fn replicas(&self) -> Vec<(String, bool)> {
        self.upstream
            .pool
            .replicas
            .iter()
            .map(|replica| (replica.base.clone(), replica.is_healthy()))
            .collect()
    }

    /// The path and JSON body `generation` is sent as to a replica: what a generation
    /// posts, for tools that show it or replay it directly.
    pub fn wire_request(
        &self,
        generation: &Generation,
    ) -> Result<(&'static str, serde_json::Value), EngineError> {
        let request = self
            .runtime()?
            .block_on(self.upstream.request(generation))?;
        Ok((request.path, request.body))
    }

    /// `generation` streamed from a replica by a task on the current runtime, else on the
    /// engine's own.
    fn pieces(&self, generation: &Generation) -> Pieces {
        let (pieces, feed) = Pieces::channel();
        let run = Run {
            upstream: Arc::clone(&self.upstream),
            generation: generation.clone(),
            started: Instant::now(),
        };
        match (tokio::runtime::Handle::try_current(), self.runtime()) {
            (Ok(current), _) => drop(current.spawn(run.run(feed))),
            (Err(_), Ok(own)) => drop(own.spawn(run.run(feed))),
            (Err(_), Err(error)) => return Pieces::failed(error),
        }
        pieces
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime, EngineError> {
        self.runtime.as_ref().ok_or_else(|| {
            EngineError::new(
                EngineErrorKind::Backend,
                "the remote engine is shutting down",
            )
        })
    }
}

impl Upstream {
    async fn request(&self, generation: &Generation) -> Result<WireRequest, EngineError> {
        let special = self.special_tokens(generation).await;
        self.kind
            .backend()
            .request(generation, &self.target, &special)
    }

    /// The grammar's markers the model has as single tokens, for kinds that must know.
    async fn special_tokens(&self, generation: &Generation) -> Vec<String> {
        let Some(constraint) = &generation.constraint else {
            return Vec::new();
        };
        if self.kind != EngineKind::LlamaServer {
            return Vec::new();
        }
        let Some(base) = self.pool.any_healthy() else {
            return Vec::new();
        };
        let candidates = constraint.marker_candidates();
        self.special.resolve(&self.http, &base, &candidates).await
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
                    return Err(upstream_error(format!(
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
        _ => Err(first_error.unwrap_or_else(|| unavailable_error("no replica answers"))),
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
        return Err(unavailable_error(format!(
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
            return Err(upstream_error(format!(
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

    /// The stream ([`Engine::stream`]) read on the engine's own runtime, each piece handed
    /// to `on_piece` on the caller's thread.
    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        let pieces = self.pieces(generation);
        self.runtime()?.block_on(hand_over(pieces, on_piece))
    }

    fn stream(&self, generation: &Generation) -> Option<Pieces> {
        Some(self.pieces(generation))
    }

    fn unenforced(&self, generation: &Generation) -> Option<&'static str> {
        self.upstream.kind.backend().unenforced(generation)
    }
}

/// Passes the stream's pieces to `on_piece` until its end, asking `on_piece` with an empty
/// piece whether to go on while the upstream is quiet; its [`Flow::Stop`] stops the
/// stream, which then ends with the cancelled completion.
async fn hand_over(
    mut pieces: Pieces,
    on_piece: &mut dyn FnMut(&str) -> Flow,
) -> Result<Completion, EngineError> {
    let mut stopped = false;
    let mut ask = |piece: &str, pieces: &Pieces| {
        if !stopped && on_piece(piece) == Flow::Stop {
            stopped = true;
            pieces.stop();
        }
    };
    loop {
        match tokio::time::timeout(QUIET_POLL, pieces.next()).await {
            Err(_quiet) => ask("", &pieces),
            Ok(Some(Ok(Streamed::Piece(text)))) => ask(&text, &pieces),
            Ok(Some(Ok(Streamed::Done(completion)))) => return Ok(completion),
            Ok(Some(Err(error))) => return Err(error),
            Ok(None) => return Err(upstream_error("the generation ended without a word")),
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

/// One generation's task: placed on a replica, its answer read and fed to the caller.
struct Run {
    upstream: Arc<Upstream>,
    generation: Generation,
    started: Instant,
}

/// What a generation has said so far, for the completion it ends with.
#[derive(Default)]
struct Said {
    first_piece: Option<Duration>,
    usage: Usage,
    text: bool,
}

impl Run {
    async fn run(self, mut feed: Feed) {
        let request = match self.upstream.request(&self.generation).await {
            Ok(request) => request,
            Err(error) => {
                feed.send(Err(error)).await;
                return;
            }
        };
        let (pool, backend) = (&self.upstream.pool, self.upstream.kind.backend());
        let mut tried = Vec::new();
        loop {
            let (n, place) = match pool.place(&self.generation.prompt, &tried).await {
                Ok(placed) => placed,
                Err(error) => {
                    feed.send(Err(error)).await;
                    return;
                }
            };
            let base = &place.replica.base;
            let (failure, sent_text) = match self.attempt(base, &request, &mut feed).await {
                Ok(()) => return,
                Err(failed) => failed,
            };
            if failure.ejects() {
                place.replica.set_healthy(false, &failure.to_string());
            }
            tried.push(n);
            drop(place);
            let retry =
                !sent_text && failure.ejects() && tried.len() < 2 && pool.replicas.len() > 1;
            if !retry {
                feed.send(Err(backend.error(failure))).await;
                return;
            }
        }
    }

    /// Streams the answer of one replica into `feed`: `Ok` once it is done (or the caller
    /// stopped it, or went away), else the failure and whether any text was sent before it.
    async fn attempt(
        &self,
        base: &str,
        request: &WireRequest,
        feed: &mut Feed,
    ) -> Result<(), (Failure, bool)> {
        let url = format!("{base}{}", request.path);
        let posted = self
            .upstream
            .http
            .post_stream(&url, &request.body, request.framing);
        let mut said = Said::default();
        let mut frames = tokio::select! {
            posted = posted => posted.map_err(|failure| (failure, false))?,
            () = feed.stop_asked() => {
                self.cancelled(feed, &said).await;
                return Ok(());
            }
        };
        let mut reader = self.upstream.kind.backend().reader();
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                () = feed.stop_asked() => {
                    self.cancelled(feed, &said).await;
                    return Ok(());
                }
            };
            let updates = match frame {
                Some(Ok(frame)) => reader.frame(&frame),
                Some(Err(failure)) => return Err((failure, said.text)),
                None => reader.closed().map(|ending| vec![Update::Done(ending)]),
            };
            let updates = match updates {
                Ok(updates) => updates,
                Err(error) => {
                    // A frame the server sent as an error, or could not be read: the
                    // server's word stands, it is not retried.
                    feed.send(Err(error)).await;
                    return Ok(());
                }
            };
            for update in updates {
                let item = match update {
                    Update::Text(text) if text.is_empty() => continue,
                    Update::Text(text) => {
                        said.first_piece
                            .get_or_insert_with(|| self.started.elapsed());
                        said.text = true;
                        Streamed::Piece(text)
                    }
                    Update::Usage(so_far) => {
                        said.usage = so_far;
                        continue;
                    }
                    Update::Done(ending) => {
                        let done = completion(ending, self.started, said.first_piece);
                        feed.send(Ok(Streamed::Done(done))).await;
                        return Ok(());
                    }
                };
                if !feed.send(Ok(item)).await {
                    return Ok(());
                }
            }
        }
    }

    /// Ends a generation the caller stopped: the cancelled completion, with the last
    /// counts the server gave.
    async fn cancelled(&self, feed: &Feed, said: &Said) {
        let done = cancelled(self.started, said.first_piece, said.usage);
        feed.send(Ok(Streamed::Done(done))).await;
    }
}
