//! `toolbridge serve`: the OpenAI-compatible server over the embedded llama.cpp engine,
//! or in front of remote engines (`--engine URL`, repeatable: llama.cpp servers, vLLM,
//! SGLang or Ollama, their kind detected from the endpoints they answer).
//!
//! Flags are named as llama.cpp's `llama-server` names them where it has them (`--model`,
//! `--host`, `--port`, `--api-key`, `--threads`, `--ctx-size`, `--parallel`,
//! `--n-gpu-layers`), so a command line moves between the two. With no `--model`, the
//! default model is served, fetched and verified on first use ([`crate::default_model`]).
//! `--port 0` lets the system pick a free port; the address actually bound is printed
//! first, on its own line, so scripts and tests can read it.
//!
//! An Ollama user's model is served as Ollama serves it, from a Modelfile or by its name
//! in Ollama's store ([`crate::model_source`]); `--template` takes a Modelfile or
//! `.gotmpl` file for any GGUF. A model on Hugging Face is named as llama-server names it,
//! `-hf owner/repo[:QUANT]` ([`crate::hf`]); clap takes one-letter short flags only, so
//! llama-server's `-hf`, `-hfr`, `-hff` and `-hft` are read as their long forms
//! ([`llama_server_flags`]).
//!
//! In front of remote engines, the template comes from the engine where it reports one
//! (llama-server's `/props`, Ollama's `/api/show`), else `--template` must name it (vLLM
//! and SGLang do not report theirs); everything else works as with the embedded engine.
//! Unless `--parallel` says otherwise, as many requests generate at once as the replicas
//! run together.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use toolbridge_engine::{Engine, EngineKind, RemoteEngine, RemoteOptions};
use toolbridge_server::{
    Budget, ModelfileDefaults, ServedModel, Server, ServerOptions, TemplateOverride,
};

use crate::model_source::{self, ModelSource};
use crate::{default_model, hf};

/// Requests the embedded engine generates at once unless `--parallel` says: llama-server's
/// default, since agents send several at once. Each slot has its own context
/// (`--ctx-size`, 8,192 tokens by default), so the KV cache is four contexts: 384 MB for
/// the default model. A prompt evaluated on one slot is copied, not evaluated again, on
/// another (the engine's `copy_prefix`), which is what a shared cache would save.
const EMBEDDED_SLOTS: usize = 4;

#[derive(Args)]
pub struct ServeArgs {
    /// The model to serve: a GGUF file, an Ollama Modelfile, or the name of a model in
    /// Ollama's store (`qwen2.5:7b`; `$OLLAMA_MODELS`, else `~/.ollama/models`); without
    /// it, the default model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M), fetched and verified on
    /// first use.
    #[arg(
        short,
        long,
        value_name = "FILE.gguf|Modelfile|NAME",
        conflicts_with = "engine"
    )]
    model: Option<PathBuf>,
    /// A model on Hugging Face (`-hf`, as llama-server takes it): the GGUF file of the
    /// repository its quant tag names (case ignored; without one Q4_K_M, else Q8_0, else
    /// the first), all parts of a split model, downloaded into the Hugging Face cache
    /// (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`) unless it is
    /// there; from the cache alone with `HF_HUB_OFFLINE=1` or when the hub is unreachable.
    #[arg(
        long = "hf-repo",
        visible_alias = "hf",
        value_name = "OWNER/REPO[:QUANT]",
        conflicts_with_all = ["model", "engine"]
    )]
    hf_repo: Option<String>,
    /// The file of `--hf-repo` to serve (`-hff`), instead of the one its quant tag picks.
    #[arg(long = "hf-file", value_name = "FILE", requires = "hf_repo")]
    hf_file: Option<String>,
    /// A Hugging Face token for gated and private repositories (`-hft`); by default the
    /// one `huggingface-cli login` saved.
    #[arg(long = "hf-token", env = "HF_TOKEN", hide_env_values = true)]
    hf_token: Option<String>,
    /// Serve in front of a remote engine at this base URL (`http://host:8000`) instead of
    /// the embedded one; repeat it for replicas of one kind.
    #[arg(long, value_name = "URL")]
    engine: Vec<String>,
    /// The remote engine's kind (llama-server, vllm, sglang, ollama); by default detected
    /// from the endpoints it answers.
    #[arg(long, value_name = "KIND", requires = "engine")]
    engine_kind: Option<EngineKind>,
    /// The remote engine's name of the model, when it serves several; by default the
    /// first of its model list.
    #[arg(long, value_name = "NAME", requires = "engine")]
    engine_model: Option<String>,
    /// Seconds a remote engine may stay silent (before its answer, or between two pieces)
    /// before the request fails with 504.
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "engine")]
    engine_timeout: u64,
    /// Generations each replica runs at once; by default what it reports (llama-server's
    /// slots), else 64 for vLLM and SGLang and 4 for Ollama.
    #[arg(long, value_name = "N", requires = "engine")]
    engine_capacity: Option<usize>,
    /// An API key the remote engine requires, sent as a bearer token.
    #[arg(
        long,
        env = "TOOLBRIDGE_ENGINE_API_KEY",
        hide_env_values = true,
        requires = "engine"
    )]
    engine_api_key: Option<String>,
    /// A chat template to use instead of the model's: a Jinja file, a
    /// `tokenizer_config.json`, a model folder, another GGUF, or an Ollama Modelfile or
    /// `.gotmpl` Go template.
    #[arg(long, alias = "chat-template-file", value_name = "FILE")]
    template: Option<PathBuf>,
    /// The dialect requests are prepared in (`hermes`, `short`, `long`, `hermes_2_pro`, …);
    /// by default chosen from the chat template.
    #[arg(long, value_name = "NAME")]
    dialect: Option<String>,
    /// The id clients know the model by (`/v1/models`, answers' `model`); by default an
    /// Ollama model's name, else the GGUF's file name.
    #[arg(short, long)]
    alias: Option<String>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Require `Authorization: Bearer KEY` on every /v1/ request.
    #[arg(long, env = "TOOLBRIDGE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// CPU threads for generation (default: the engine's choice from the cores available).
    #[arg(short, long, conflicts_with = "engine")]
    threads: Option<usize>,
    /// Context size in tokens (default: a Modelfile's `num_ctx`, else the model's training
    /// context, capped by the engine).
    #[arg(short = 'c', long = "ctx-size", conflicts_with = "engine")]
    ctx_size: Option<u32>,
    /// Requests generated at once, each its own sequence in shared batches (default 4, as
    /// llama-server's; in front of remote engines, as many as the replicas run together).
    #[arg(long)]
    parallel: Option<usize>,
    /// Seconds a request may wait for a generation slot before it is answered 503
    /// (`queue_timeout`).
    #[arg(long = "queue-timeout", default_value_t = 120.0)]
    queue_timeout: f64,
    /// Seconds a request's preparation (template render, tool grammars) may take before it
    /// is refused with a 400 (`prepare_timeout`).
    #[arg(long = "prepare-timeout", default_value_t = 10.0)]
    prepare_timeout: f64,
    /// The largest call grammar compiled for a request, in bytes of grammar text; a larger
    /// one is refused with a 400 (`grammar_too_large`).
    #[arg(long = "max-grammar-bytes", default_value_t = 4 << 20)]
    max_grammar_bytes: usize,
    /// Seconds the engine may take to compile a request's call grammar before the request
    /// is refused with a 400 (`grammar_timeout`).
    #[arg(long = "grammar-timeout", default_value_t = 10.0)]
    grammar_timeout: f64,
    /// Seconds one generation may run; past them it ends with a 400 (`generation_timeout`),
    /// or that error as a stream's last event.
    #[arg(long = "generation-timeout", default_value_t = 600.0)]
    generation_timeout: f64,
    /// Seconds a generation waits for a streaming client that stopped reading before it is
    /// stopped as if the client had gone.
    #[arg(long = "stalled-client-timeout", default_value_t = 30.0)]
    stalled_client_timeout: f64,
    /// Seconds the requests in flight may take to finish after Ctrl-C or SIGTERM.
    #[arg(long = "drain-timeout", default_value_t = 30.0)]
    drain_timeout: f64,
    /// Model layers to offload to the GPU (a GPU build only).
    #[arg(
        long = "n-gpu-layers",
        visible_alias = "gpu-layers",
        default_value_t = 0,
        conflicts_with = "engine"
    )]
    n_gpu_layers: u32,
    /// Sample every token, even where a call grammar leaves one way on; by default those
    /// tokens are taken in one batch (under greedy decoding the answer is the same).
    #[arg(long = "no-forced-tokens-ahead", conflicts_with = "engine")]
    no_forced_tokens_ahead: bool,
}

impl ServeArgs {
    /// The settings `serve` has with `flags` on its command line and defaults for the
    /// rest, for commands that run the server in-process (`agent`).
    pub fn from_flags(flags: &[String]) -> Result<ServeArgs> {
        use clap::{Args, FromArgMatches};
        let command = ServeArgs::augment_args(clap::Command::new("serve"));
        let argv =
            std::iter::once("serve".to_owned()).chain(llama_server_flags(flags.iter().cloned()));
        let matches = command.try_get_matches_from(argv)?;
        Ok(ServeArgs::from_arg_matches(&matches)?)
    }
}

/// `args` with llama-server's multi-letter short flags (`-hf`, `-hfr`, `-hff`, `-hft`),
/// which clap cannot take, written as the long flags they stand for.
pub fn llama_server_flags<A>(args: impl IntoIterator<Item = A>) -> Vec<A>
where
    A: AsRef<std::ffi::OsStr> + From<&'static str>,
{
    args.into_iter()
        .map(|arg| match arg.as_ref().to_str() {
            Some("-hf" | "-hfr") => A::from("--hf-repo"),
            Some("-hff") => A::from("--hf-file"),
            Some("-hft") => A::from("--hf-token"),
            _ => arg,
        })
        .collect()
}

/// A flag's seconds as a duration, or why they are not one.
fn seconds(value: f64, flag: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .with_context(|| format!("{flag} must be a positive number of seconds"))
}

pub fn run(args: &ServeArgs) -> Result<()> {
    init_logging();
    let (model, options, notes) = served_model(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        let address = listener.local_addr()?;
        print_banner(address, &model, options.api_key.is_some(), &notes);
        Server::new(model, options)
            .serve(listener)
            .await
            .context("the server failed")
    })
}

/// The model the flags name, loaded, with the server's options and the banner's notes.
pub fn served_model(args: &ServeArgs) -> Result<(ServedModel, ServerOptions, Vec<String>)> {
    let served = if args.engine.is_empty() {
        embedded(args)?
    } else {
        remote(args)?
    };
    let model = ServedModel::new(served.engine, served.template, args.dialect.as_deref())?
        .with_alias(args.alias.clone().or(served.alias));
    let options = ServerOptions {
        api_key: args.api_key.clone(),
        parallel: args.parallel.unwrap_or(served.parallel),
        queue_timeout: seconds(args.queue_timeout, "--queue-timeout")?,
        prepare_timeout: seconds(args.prepare_timeout, "--prepare-timeout")?,
        max_grammar_bytes: args.max_grammar_bytes,
        grammar_timeout: seconds(args.grammar_timeout, "--grammar-timeout")?,
        budget: Budget {
            generation: seconds(args.generation_timeout, "--generation-timeout")?,
            stalled_client: seconds(args.stalled_client_timeout, "--stalled-client-timeout")?,
        },
        drain_timeout: seconds(args.drain_timeout, "--drain-timeout")?,
        ..ServerOptions::default()
    };
    Ok((model, options, served.notes))
}

/// An engine ready to serve, with what comes with it.
struct Served {
    engine: Arc<dyn Engine>,
    template: Option<TemplateOverride>,
    /// The model's name, when it has one clients should know it by.
    alias: Option<String>,
    /// Generations at once, unless `--parallel` says.
    parallel: usize,
    /// Lines for the banner: where generation happens, and what is not enforced there.
    notes: Vec<String>,
}

/// The embedded engine on `--model` (or the default model).
fn embedded(args: &ServeArgs) -> Result<Served> {
    let model = match (&args.model, &args.hf_repo) {
        (Some(path), _) => model_source::resolve(path)?,
        (None, Some(spec)) => {
            let hub = hf::Hub::from_env(args.hf_token.clone())?;
            hf::resolve(&hub, spec, args.hf_file.as_deref())?
        }
        (None, None) => ModelSource::gguf(default_model::ensure()?),
    };
    let template = match &args.template {
        Some(path) => Some(model_source::load_template(path)?),
        None => model.ollama.map(TemplateOverride::Ollama),
    };
    let context_length = match (&template, args.ctx_size) {
        (Some(TemplateOverride::Ollama(source)), None) => {
            ModelfileDefaults::read(&source.parameters)?.context_length
        }
        (_, flag) => flag,
    };
    let engine = load_engine(args, &model.weights, context_length)?;
    Ok(Served {
        engine,
        template,
        alias: model.name,
        parallel: EMBEDDED_SLOTS,
        notes: Vec::new(),
    })
}

/// The remote engines of `--engine`, with the template they report unless `--template`
/// names one.
fn remote(args: &ServeArgs) -> Result<Served> {
    let engine = RemoteEngine::connect(RemoteOptions {
        urls: args.engine.clone(),
        kind: args.engine_kind,
        model: args.engine_model.clone(),
        timeout: Duration::from_secs(args.engine_timeout.max(1)),
        capacity: args.engine_capacity,
        api_key: args.engine_api_key.clone(),
        ..RemoteOptions::default()
    })
    .with_context(|| format!("cannot use the engine at {}", args.engine.join(", ")))?;
    let template = args
        .template
        .as_deref()
        .map(model_source::load_template)
        .transpose()?;
    let info = engine.model();
    if template.is_none() && info.chat_template.is_none() && info.ollama_modelfile.is_none() {
        anyhow::bail!(
            "{} does not report its model's chat template; give it with --template \
             (a tokenizer_config.json, a .jinja file, a model folder or a GGUF)",
            engine.kind()
        );
    }
    let mut notes = vec![remote_note(&engine)];
    notes.extend(
        engine
            .kind()
            .limitation()
            .map(|text| format!("note: {text}")),
    );
    Ok(Served {
        parallel: engine.capacity(),
        template,
        alias: None,
        notes,
        engine: Arc::new(engine),
    })
}

/// "generating on llama-server at URL, URL (2 replicas, 8 at once)".
fn remote_note(engine: &RemoteEngine) -> String {
    let replicas: Vec<String> = engine
        .replicas()
        .into_iter()
        .map(|(url, healthy)| {
            if healthy {
                url
            } else {
                format!("{url} (not answering yet)")
            }
        })
        .collect();
    format!(
        "generating on {} at {} ({} at once)",
        engine.kind(),
        replicas.join(", "),
        engine.capacity()
    )
}

/// Loads `model` into the embedded llama.cpp engine with the flags' settings and a
/// context of `context_length` tokens (`None`: the engine's choice).
#[cfg(feature = "llama")]
fn load_engine(
    args: &ServeArgs,
    model: &Path,
    context_length: Option<u32>,
) -> Result<Arc<dyn Engine>> {
    use toolbridge_engine::llama::{LlamaEngine, LlamaOptions};
    let engine = LlamaEngine::load(LlamaOptions {
        model: model.to_owned(),
        threads: args.threads,
        context_length,
        gpu_layers: args.n_gpu_layers,
        parallel: args.parallel.unwrap_or(EMBEDDED_SLOTS),
        progress: true,
        forced_tokens_ahead: !args.no_forced_tokens_ahead,
    })
    .with_context(|| format!("cannot load {}", model.display()))?;
    println!(
        "llama.cpp kernels: {}",
        toolbridge_engine::llama::system_info()
    );
    Ok(Arc::new(engine))
}

/// Without the `llama` feature there is no engine to serve with.
#[cfg(not(feature = "llama"))]
fn load_engine(
    _args: &ServeArgs,
    model: &Path,
    _context_length: Option<u32>,
) -> Result<Arc<dyn Engine>> {
    anyhow::bail!(
        "cannot serve {}: this toolbridge was built without the embedded engine (cargo feature `llama`)",
        model.display()
    )
}

/// Log lines on stderr: the server's at `info` (one per generation), everything else
/// (llama.cpp's loading chatter) only from `warn` up; `RUST_LOG` (targets and levels,
/// `toolbridge_server=debug` for each answer's raw text) replaces that.
fn init_logging() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let default = || {
        Targets::new()
            .with_target("toolbridge_server", LevelFilter::INFO)
            .with_default(LevelFilter::WARN)
    };
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) => spec.parse::<Targets>().unwrap_or_else(|error| {
            eprintln!("RUST_LOG={spec:?} is not a log filter ({error}); logging as by default");
            default()
        }),
        Err(_) => default(),
    };
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    // A second subscriber (the command run twice in one process) is refused, harmlessly.
    let _ = tracing_subscriber::registry()
        .with(layer)
        .with(filter)
        .try_init();
}

/// The address first, alone on its line (scripts read it), then how to try the server.
fn print_banner(address: SocketAddr, model: &ServedModel, needs_key: bool, notes: &[String]) {
    let base = format!("http://{address}");
    println!("listening on {base}");
    println!(
        "serving {} (dialect {}); OpenAI base URL: {base}/v1",
        model.id(),
        model.dialect_name()
    );
    // Whether the dialect reads back the calls the template itself writes.
    for proof in model
        .why()
        .iter()
        .filter(|line| line.starts_with("proof: "))
    {
        println!("{proof}");
    }
    for note in notes {
        println!("{note}");
    }
    let auth = if needs_key {
        " -H 'Authorization: Bearer YOUR_API_KEY'"
    } else {
        ""
    };
    println!("try a tool call:");
    println!(
        "  curl {base}/v1/chat/completions -H 'Content-Type: application/json'{auth} -d '{}'",
        example_request()
    );
    println!("or follow one through the inspector: {base}/inspect");
}

/// A tool-call request for the banner's `curl` example.
fn example_request() -> &'static str {
    r#"{"messages":[{"role":"user","content":"What is the weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}"#
}
