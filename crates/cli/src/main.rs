//! The `toolbridge` command: a thin layer over the library crates.

mod agent;
mod bench;
mod chain;
mod default_model;
mod detect;
mod grammar;
mod hf;
mod model_source;
mod parse;
mod prepare;
mod render;
mod serve;
mod styles;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// OpenAI-compatible tool calling for open-weight chat models.
#[derive(Parser)]
#[command(name = "toolbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a chat template with a context, exactly as transformers would; or, with
    /// `--request` and `--style`, the prompt (or grammar) a dialect prepares for a request.
    Render(render::RenderArgs),
    /// Read model output on stdin with a dialect's parser and print the OpenAI assistant
    /// message it makes.
    Parse(parse::ParseArgs),
    /// Print the dialect a chat template speaks, detected from its text as the server
    /// detects it.
    Detect(detect::DetectArgs),
    /// Convert a JSON Schema (or read a GBNF grammar) and print it as GBNF or Lark, or
    /// check a document against it (exit 0 accepted, 1 rejected, 2 no verdict).
    Grammar(grammar::GrammarArgs),
    /// Measurements on real data.
    Bench(bench::BenchArgs),
    /// Serve the OpenAI-compatible API (`/v1/chat/completions` with tool calls) over a
    /// GGUF model; with no `--model`, the default model, fetched on first use.
    Serve(serve::ServeArgs),
    /// Run a task with a model and tools (MCP servers, sandboxed built-ins) until it is
    /// answered; with no task, read tasks from stdin.
    Agent(agent::AgentArgs),
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|command| command == "serve") {
        args = serve::llama_server_flags(args);
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Render(args) => render::run(&args),
        Command::Grammar(args) => return grammar::run(&args),
        Command::Parse(args) => parse::run(&args),
        Command::Detect(args) => detect::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Agent(args) => agent::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", chain::Chain(&err));
            ExitCode::FAILURE
        }
    }
}
