//! The `toolbridge` command: a thin layer over the library crates.

mod render;

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
    /// Render a chat template with a context, exactly as transformers would.
    Render(render::RenderArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Render(args) => render::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
