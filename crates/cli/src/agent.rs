//! `toolbridge agent`: a task, a model and tools, until the model answers
//! (`toolbridge_agent` does the work; this is flags and printing).
//!
//! The model is any OpenAI-compatible server (`--url`), or, by default, the server
//! `toolbridge serve` would run (the same `--model`, `--engine`, `--dialect`, …), called
//! in-process: requests are prepared by the one path every request takes. Tools come
//! from MCP servers (`--mcp-config`) and the sandboxed built-ins (unless `--no-builtins`).
//! Each call and its result are printed as they happen, the answer last; with no task
//! on the command line, tasks are read from stdin, one a line, in one conversation.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use toolbridge_agent::{
    Builtins, ChatModel, Event, HttpModel, McpConfig, Options, Policy, RouterModel, Session,
    Toolbox,
};
use toolbridge_server::Server;

use crate::serve::{served_model, ServeArgs};

#[derive(Args)]
pub struct AgentArgs {
    /// The task; without it, tasks are read from stdin, one a line.
    task: Option<String>,
    /// An OpenAI-compatible server's base URL (`http://host:8080/v1`) instead of the
    /// embedded engine.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The API key the `--url` server requires (unused without `--url`).
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// With `--url`, the model to ask for; otherwise the model to run, as `serve --model`
    /// takes it (a GGUF, a Modelfile, an Ollama name; default: the default model).
    #[arg(short, long, value_name = "NAME|FILE")]
    model: Option<String>,
    /// A flag for the in-process server, as `toolbridge serve` takes it (repeatable:
    /// `--serve-flag=--ctx-size=4096 --serve-flag=--engine=http://…`).
    #[arg(
        long,
        value_name = "FLAG",
        conflicts_with = "url",
        allow_hyphen_values = true
    )]
    serve_flag: Vec<String>,
    /// MCP servers, in the `{"mcpServers": {…}}` format MCP clients share.
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// Offer no built-in tools (run_python, run_shell, read_file, write_file).
    #[arg(long)]
    no_builtins: bool,
    /// The folder built-in tools work in (read-write); default: the current folder.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Model answers per task before giving up.
    #[arg(long, default_value_t = 8)]
    max_turns: usize,
    /// Tokens per model answer.
    #[arg(long, default_value_t = 512)]
    max_tokens: u32,
    /// A system message to start the conversation with.
    #[arg(long)]
    system: Option<String>,
    /// Sampling temperature (default: the server's).
    #[arg(long)]
    temperature: Option<f64>,
    /// Let built-in tools use the network.
    #[arg(long)]
    allow_network: bool,
    /// Let built-in tools read (and execute) under PATH too (repeatable).
    #[arg(long, value_name = "PATH")]
    allow_read: Vec<PathBuf>,
    /// Let built-in tools write under PATH too (repeatable).
    #[arg(long, value_name = "PATH")]
    allow_write: Vec<PathBuf>,
    /// Run built-in tools without Landlock or namespaces (where the kernel lacks them);
    /// the limits still apply.
    #[arg(long)]
    unsandboxed: bool,
    /// CPU seconds per built-in call.
    #[arg(long, default_value_t = 10)]
    cpu_seconds: u64,
    /// Memory (address space) per built-in call, in MiB.
    #[arg(long, default_value_t = 1024)]
    memory_mb: u64,
    /// Wall-clock seconds per built-in call.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Bytes of output kept per built-in call (stdout and stderr each).
    #[arg(long, default_value_t = 16384)]
    output_bytes: usize,
}

pub fn run(args: &AgentArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(args))
}

async fn run_async(args: &AgentArgs) -> Result<()> {
    let model = model(args)?;
    let tools = toolbox(args).await?;
    let options = Options {
        max_turns: args.max_turns,
        max_tokens: Some(args.max_tokens),
        model: args.url.as_ref().and(args.model.clone()),
        system: args.system.clone(),
        temperature: args.temperature,
    };
    let mut session = Session::new(model.as_ref(), &tools, options);
    match &args.task {
        Some(task) => one_task(&mut session, task).await,
        None => interactive(&mut session).await,
    }
}

/// The model: the `--url` server, or `serve`'s in-process.
fn model(args: &AgentArgs) -> Result<Box<dyn ChatModel>> {
    if let Some(url) = &args.url {
        return Ok(Box::new(HttpModel::new(url, args.api_key.clone())));
    }
    let mut flags = args.serve_flag.clone();
    if let Some(model) = &args.model {
        flags.extend(["--model".to_owned(), model.clone()]);
    }
    let serve = ServeArgs::from_flags(&flags).context("bad --serve-flag")?;
    let (model, options, notes) = served_model(&serve)?;
    for note in notes {
        eprintln!("{note}");
    }
    eprintln!("model: {} (dialect {})", model.id(), model.dialect_name());
    Ok(Box::new(RouterModel::new(
        Server::new(model, options).router(),
    )))
}

async fn toolbox(args: &AgentArgs) -> Result<Toolbox> {
    let mut tools = Toolbox::new();
    if !args.no_builtins {
        tools = tools.with_builtins(Builtins::new(policy(args)?)?);
    }
    if let Some(path) = &args.mcp_config {
        tools = tools.with_mcp(&McpConfig::read(path)?).await?;
    }
    let names: Vec<String> = tools
        .definitions()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    eprintln!("tools: {}", names.join(", "));
    Ok(tools)
}

fn policy(args: &AgentArgs) -> Result<Policy> {
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("no current folder")?,
    };
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("the workspace {} is not there", workspace.display()))?;
    Ok(Policy {
        allow_read: args.allow_read.clone(),
        allow_write: args.allow_write.clone(),
        allow_network: args.allow_network,
        unsandboxed: args.unsandboxed,
        cpu_seconds: args.cpu_seconds,
        memory_bytes: args.memory_mb.saturating_mul(1 << 20),
        timeout: Duration::from_secs(args.timeout),
        output_bytes: args.output_bytes,
        ..Policy::new(workspace)
    })
}

async fn one_task(session: &mut Session<'_>, task: &str) -> Result<()> {
    session.run(task, &mut print_event).await?;
    Ok(())
}

/// Tasks from stdin until it ends; a task that fails is reported and the next one read.
async fn interactive(session: &mut Session<'_>) -> Result<()> {
    let stdin = std::io::stdin();
    loop {
        eprint!("> ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            return Ok(());
        }
        let task = line.trim();
        if task.is_empty() {
            continue;
        }
        if let Err(error) = session.run(task, &mut print_event).await {
            eprintln!("error: {error}");
        }
    }
}

fn print_event(event: &Event) {
    println!("{event}");
}
