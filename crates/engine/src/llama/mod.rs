//! The embedded engine: llama.cpp (through `llama-cpp-2`) with llguidance constraints
//! in-process.
//!
//! llama.cpp's context is not thread-safe, and batching several sequences into one decode
//! is what makes concurrent requests cheap, so one worker thread owns it ([`worker`]).
//! [`LlamaEngine::generate`] runs on the caller's thread: it tokenizes the prompt and
//! makes the constraint's matcher there (compiled once per grammar, [`constrain`]), so
//! the decode thread never waits for another request's preparation; then it queues a
//! job and hands the pieces the worker sends back to the caller's callback. Cancelling
//! sets a flag the worker reads before every decode step, so a cancelled sequence leaves
//! the batch at once and its slot is free for the next job.
//!
//! Each slot remembers the tokens in its part of the KV cache; a new prompt goes to the
//! free slot sharing the longest prefix with it and only the rest is evaluated, which is
//! what makes the second turn of a conversation start fast.

mod constrain;
mod sampler;
mod slot;
mod worker;

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llguidance::Matcher;
use toolbridge_grammar::Constraint;

use self::constrain::Constrainer;
use crate::{
    Completion, Engine, EngineError, EngineErrorKind, FinishReason, Flow, Generation, ModelInfo,
};

/// How to load a model. [`LlamaOptions::new`] gives the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaOptions {
    /// The GGUF file.
    pub model: PathBuf,
    /// CPU threads for decoding; `None` is the number of physical cores. On a machine
    /// other work keeps busy, fewer are faster: llama.cpp's threads wait for each other at
    /// every step (measured on 2 shared cores: 1 thread 11 tok/s, 2 threads 1.5 tok/s).
    pub threads: Option<usize>,
    /// The context of each sequence, in tokens; `None` is the model's training context,
    /// at most [`DEFAULT_CONTEXT_LENGTH`].
    pub context_length: Option<u32>,
    /// Layers offloaded to the GPU (0 on a CPU-only build).
    pub gpu_layers: u32,
    /// How many generations decode together (each one sequence in the shared batch).
    pub parallel: usize,
    /// Show a loading progress bar on stderr.
    pub progress: bool,
    /// Take the tokens a call grammar forces (the only way on, as llguidance computes them)
    /// in one batch instead of sampling them one by one ([`worker`]'s `advance`).
    pub forced_tokens_ahead: bool,
}

/// The context per sequence when none is asked for, unless the model was trained on less:
/// enough for a tool-calling conversation, small enough to fit beside the model.
pub const DEFAULT_CONTEXT_LENGTH: u32 = 8192;

/// Tokens evaluated in one decode step, across all sequences: llama-server's
/// `--ubatch-size`. Its `--batch-size` (2048, split into passes of 512) was measured here
/// too: prompts no faster, one stream's decoding 4% slower (`toolbridge bench serve`).
const BATCH_TOKENS: u32 = 512;

impl LlamaOptions {
    /// Defaults for `model`: physical cores, the default context, CPU only, one sequence,
    /// no progress bar.
    pub fn new(model: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            threads: None,
            context_length: None,
            gpu_layers: 0,
            parallel: 1,
            progress: false,
            forced_tokens_ahead: true,
        }
    }
}

/// A GGUF model served by llama.cpp on a worker thread. See the module docs.
pub struct LlamaEngine {
    info: ModelInfo,
    model: Arc<LlamaModel>,
    /// The texts of the vocabulary's control tokens ([`control_tokens`]).
    special: Vec<String>,
    constrainer: Constrainer,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LlamaEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaEngine")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// One generation on its way through the worker, prepared by the caller.
struct Job {
    generation: Generation,
    /// The prompt's tokens.
    prompt: Vec<LlamaToken>,
    /// The constraint's matcher at its start.
    matcher: Option<Matcher>,
    events: mpsc::Sender<Event>,
    cancelled: Arc<AtomicBool>,
    queued: Instant,
}

/// What the worker sends back for a job.
enum Event {
    Piece(String),
    Done(Result<Completion, EngineError>),
}

impl LlamaEngine {
    /// Loads the model and starts the worker. Fails if the file cannot be loaded or the
    /// context cannot be allocated.
    pub fn load(options: LlamaOptions) -> Result<Self, EngineError> {
        let model = Arc::new(load_model(&options)?);
        let constrainer = Constrainer::new(&model)?;
        let (ready_tx, ready_rx) = mpsc::channel();
        let (jobs_tx, jobs_rx) = mpsc::channel();
        let worker_model = Arc::clone(&model);
        let worker = std::thread::Builder::new()
            .name("llama-worker".into())
            .spawn(move || worker::run(&options, &worker_model, &ready_tx, jobs_rx))
            .map_err(|error| backend("cannot start the worker thread").with_source(error))?;
        let info = ready_rx
            .recv()
            .map_err(|_| backend("the worker stopped while loading the model"))??;
        let special = control_tokens(&model);
        Ok(Self {
            info,
            special,
            model,
            constrainer,
            jobs: Mutex::new(Some(jobs_tx)),
            worker: Some(worker),
        })
    }

    /// The prompt's tokens, checked against the context.
    fn prompt_tokens(&self, prompt: &str) -> Result<Vec<LlamaToken>, EngineError> {
        let prompt = tokenize(&self.model, prompt)?;
        if prompt.len() >= self.info.context_length as usize {
            return Err(EngineError::from(EngineErrorKind::PromptTooLong {
                prompt_tokens: u32::try_from(prompt.len()).unwrap_or(u32::MAX),
                context_length: self.info.context_length,
            }));
        }
        Ok(prompt)
    }

    /// Whether `prompt` surely overflows the context, read from at most
    /// [`CHECKED_BYTES_PER_TOKEN`] bytes per token of context: a prompt shorter than the
    /// context in bytes fits (a token is at least a byte), and a prefix that alone has
    /// more tokens than the context overflows it. Neither case tokenizes megabytes.
    fn overflows(&self, prompt: &str) -> Result<Option<u32>, EngineError> {
        let context = self.info.context_length as usize;
        if prompt.len() < context.saturating_sub(1) {
            return Ok(None);
        }
        let mut end = prompt
            .len()
            .min(context.saturating_mul(CHECKED_BYTES_PER_TOKEN));
        while !prompt.is_char_boundary(end) {
            end -= 1;
        }
        let tokens = tokenize(&self.model, &prompt[..end])?.len();
        // A prefix's last token may merge with what follows it: one token of margin.
        Ok((tokens > context).then(|| u32::try_from(tokens).unwrap_or(u32::MAX)))
    }

    fn submit(&self, job: Job) -> Result<(), EngineError> {
        let jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        jobs.as_ref()
            .and_then(|jobs| jobs.send(job).ok())
            .ok_or_else(|| backend("the engine's worker has stopped"))
    }
}

impl Drop for LlamaEngine {
    fn drop(&mut self) {
        // Closing the queue ends the worker once its sequences are done.
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Engine for LlamaEngine {
    fn model(&self) -> &ModelInfo {
        &self.info
    }

    fn special_tokens(&self) -> &[String] {
        &self.special
    }

    /// `PromptTooLong` names at least as many tokens as the prompt's prefix was read to.
    fn check_prompt(&self, prompt: &str) -> Result<(), EngineError> {
        match self.overflows(prompt)? {
            Some(prompt_tokens) => Err(EngineError::from(EngineErrorKind::PromptTooLong {
                prompt_tokens,
                context_length: self.info.context_length,
            })),
            None => Ok(()),
        }
    }

    /// Compiles the constraint into the cache, off the decode thread and before the
    /// request takes a slot.
    fn prepare_constraint(&self, constraint: &Constraint) -> Result<(), EngineError> {
        self.constrainer.prepare(constraint)
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        let started = Instant::now();
        let prompt = self.prompt_tokens(&generation.prompt)?;
        let ready = generation
            .constraint
            .as_ref()
            .map(|constraint| self.constrainer.matcher(constraint))
            .transpose()?;
        let (events, received) = mpsc::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let grammar_ms = ready.as_ref().map_or(0.0, |ready| ready.millis);
        let grammar_cached = ready.as_ref().is_some_and(|ready| ready.cached);
        self.submit(Job {
            generation: generation.clone(),
            prompt,
            matcher: ready.map(|ready| ready.matcher),
            events,
            cancelled: Arc::clone(&cancelled),
            queued: Instant::now(),
        })?;
        let mut first_piece_ms = None;
        for event in received {
            match event {
                Event::Piece(text) => {
                    if cancelled.load(Ordering::Relaxed) {
                        continue;
                    }
                    if !text.is_empty() {
                        first_piece_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1e3);
                    }
                    if on_piece(&text) == Flow::Stop {
                        cancelled.store(true, Ordering::Relaxed);
                    }
                }
                Event::Done(result) => {
                    let mut completion = result?;
                    completion.timings.first_piece_ms = first_piece_ms.unwrap_or_default();
                    completion.timings.grammar_ms = grammar_ms;
                    completion.timings.grammar_cached = grammar_cached;
                    if cancelled.load(Ordering::Relaxed) {
                        completion.finish_reason = FinishReason::Cancelled;
                    }
                    return Ok(completion);
                }
            }
        }
        Err(backend("the engine's worker stopped during the generation"))
    }
}

/// Bytes of a prompt read per token of context to decide early that it cannot fit: prose
/// and code run 3–5 bytes a token, so a prompt whose first `8 × context` bytes already
/// hold more tokens than the context is refused after tokenizing at most that much.
const CHECKED_BYTES_PER_TOKEN: usize = 8;

/// The prompt's tokens, special tokens parsed from their text. BOS is added when the model
/// wants one and the prompt (rendered by a template) does not start with it.
fn tokenize(model: &LlamaModel, prompt: &str) -> Result<Vec<LlamaToken>, EngineError> {
    let vocab = model.vocab();
    let mut tokens = vocab.tokenize(prompt.as_bytes(), false, true);
    let bos = vocab.bos();
    if vocab.should_add_bos() && bos.0 >= 0 && tokens.first() != Some(&bos) {
        tokens.insert(0, bos);
    }
    if tokens.is_empty() {
        return Err(backend(
            "the prompt is empty and the model has no BOS token",
        ));
    }
    Ok(tokens)
}

fn load_model(options: &LlamaOptions) -> Result<LlamaModel, EngineError> {
    if !options.model.is_file() {
        return Err(backend(format!(
            "no model file at {}",
            options.model.display()
        )));
    }
    LlamaModel::load_from_file(shared_backend()?, &options.model, &model_params(options))
        .map_err(|error| backend(format!("cannot load {}: {error}", options.model.display())))
}

/// The kernels llama.cpp runs on: each backend with the CPU features it was built for
/// (`CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | …`). Shows whether a build got the SIMD the
/// machine has.
pub fn system_info() -> String {
    // SAFETY: returns a pointer to a static, NUL-terminated buffer llama.cpp fills.
    let info = unsafe { std::ffi::CStr::from_ptr(llama_cpp_sys_2::llama_print_system_info()) };
    info.to_string_lossy().trim().to_owned()
}

/// llama.cpp's backend may be initialised once per process; every engine shares it.
fn shared_backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // Route llama.cpp's own logging through `tracing` rather than raw stderr.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            #[cfg(feature = "cpu-variants")]
            load_cpu_variants();
            LlamaBackend::init().map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|error| backend(format!("cannot start llama.cpp: {error}")))
}

/// A build for distribution (feature `cpu-variants`) carries llama.cpp's CPU backend once
/// per CPU generation, as shared libraries; llama.cpp scores each against the CPU and
/// loads the best. They are looked for beside the executable (where `scripts/build-dist.sh`
/// puts them), then where the build left them.
#[cfg(feature = "cpu-variants")]
fn load_cpu_variants() {
    let beside_executable = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(std::path::Path::to_path_buf))
        .filter(|dir| has_cpu_variant(dir));
    match beside_executable {
        Some(dir) => llama_cpp_2::llama_backend::load_backends_from_path(&dir),
        None => llama_cpp_2::llama_backend::load_backends(),
    }
}

#[cfg(feature = "cpu-variants")]
fn has_cpu_variant(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("libggml-cpu")
        })
    })
}

fn model_params(options: &LlamaOptions) -> LlamaModelParams {
    let params = LlamaModelParams::default().with_n_gpu_layers(options.gpu_layers);
    if !options.progress {
        return params;
    }
    let bar = indicatif::ProgressBar::new(100).with_style(
        indicatif::ProgressStyle::with_template("loading {msg} {wide_bar} {percent}%")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(model_id(options));
    params.with_progress_callback(move |fraction| {
        bar.set_position((fraction * 100.0) as u64);
        if fraction >= 1.0 {
            bar.finish();
        }
        true
    })
}

fn context_params(options: &LlamaOptions, model: &LlamaModel) -> LlamaContextParams {
    let parallel = sequences(options);
    let threads = i32::try_from(threads(options)).unwrap_or(i32::MAX);
    let total = context_per_sequence(options, model).saturating_mul(parallel);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(total))
        .with_n_batch(BATCH_TOKENS)
        .with_n_ubatch(BATCH_TOKENS)
        .with_n_seq_max(parallel)
        .with_kv_unified(false)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
}

/// The CPU threads that decode: as asked, or one per physical core (as llama-server).
fn threads(options: &LlamaOptions) -> usize {
    options
        .threads
        .unwrap_or_else(num_cpus::get_physical)
        .max(1)
}

fn sequences(options: &LlamaOptions) -> u32 {
    u32::try_from(options.parallel.max(1)).unwrap_or(u32::MAX)
}

fn context_per_sequence(options: &LlamaOptions, model: &LlamaModel) -> u32 {
    let trained = model.n_ctx_train().max(1);
    options
        .context_length
        .unwrap_or(DEFAULT_CONTEXT_LENGTH.min(trained))
        .max(1)
}

/// The texts of the vocabulary's control tokens (`<|im_start|>`, `<|eot_id|>`, …), as the
/// prompt writes them. One pass over the vocabulary at load, one attribute lookup a token
/// and text only for the control ones: Qwen 2.5's 151,936 tokens give 21 in 7.3 ms (debug
/// build, 2 cores).
fn control_tokens(model: &LlamaModel) -> Vec<String> {
    let vocab = model.vocab();
    (0..model.n_vocab())
        .map(LlamaToken)
        .filter(|token| vocab.is_control(*token))
        .map(|token| String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned())
        .filter(|text| !text.is_empty())
        .collect()
}

/// What the engine serves, read from the loaded model.
fn model_info(options: &LlamaOptions, model: &LlamaModel, context_length: u32) -> ModelInfo {
    let vocab = model.vocab();
    let token_text = |token: LlamaToken| {
        (token.0 >= 0)
            .then(|| String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned())
    };
    ModelInfo {
        id: model_id(options),
        chat_template: model
            .chat_template(None)
            .ok()
            .and_then(|template| template.to_string().ok()),
        bos_token: token_text(vocab.bos()),
        eos_token: token_text(vocab.eos()),
        context_length,
        ollama_modelfile: None,
    }
}

fn model_id(options: &LlamaOptions) -> String {
    options
        .model
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| options.model.display().to_string())
}

fn backend(message: impl Into<String>) -> EngineError {
    EngineError::new(EngineErrorKind::Backend, message.into())
}
