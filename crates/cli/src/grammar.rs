//! `toolbridge grammar`: a JSON Schema or a GBNF file in, the grammar out as GBNF or Lark,
//! or a verdict on one document with `--validate`.
//!
//! The verdict is the exit status, so scripts can use it: 0 accepted, 1 rejected, 2 when
//! no verdict can be given (the schema or grammar does not compile, a file is unreadable).

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toolbridge_grammar::check::{compact_json, Validator};
use toolbridge_grammar::schema::{self, Options};
use toolbridge_grammar::{gbnf, lark, Grammar};

use crate::chain::Chain;

#[derive(clap::Args)]
pub struct GrammarArgs {
    /// A JSON Schema to convert.
    #[arg(long, required_unless_present = "gbnf", conflicts_with = "gbnf")]
    schema: Option<PathBuf>,
    /// A grammar in llama.cpp's GBNF notation, to print as Lark or to run.
    #[arg(long)]
    gbnf: Option<PathBuf>,
    /// The notation to print.
    #[arg(long, value_enum, default_value_t = Format::Gbnf)]
    format: Format,
    /// Refuse a schema with a keyword the grammar cannot enforce, instead of warning.
    #[arg(long)]
    strict: bool,
    /// Allow properties a schema does not list unless it says `additionalProperties: false`,
    /// as JSON Schema does (llama.cpp's converter forbids them).
    #[arg(long)]
    allow_additional_properties: bool,
    /// Check this document instead of printing: a JSON file for `--schema` (whitespace
    /// between tokens is ignored), any text for `--gbnf`.
    #[arg(long)]
    validate: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Gbnf,
    Lark,
}

pub fn run(args: &GrammarArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", Chain(&err));
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &GrammarArgs) -> Result<ExitCode> {
    let grammar = load_grammar(args)?;
    let Some(data) = &args.validate else {
        let printed = match args.format {
            Format::Gbnf => gbnf::print(&grammar)?,
            Format::Lark => lark::print(&grammar),
        };
        print!("{printed}");
        return Ok(ExitCode::SUCCESS);
    };
    let validator = Validator::from_grammar(&grammar)?;
    let text = read(data)?;
    let text = if args.schema.is_some() {
        compact_json(&text)
    } else {
        text
    };
    Ok(if validator.accepts(&text) {
        println!("accepted");
        ExitCode::SUCCESS
    } else {
        println!("rejected");
        ExitCode::FAILURE
    })
}

fn load_grammar(args: &GrammarArgs) -> Result<Grammar> {
    if let Some(path) = &args.gbnf {
        let text = read(path)?;
        return gbnf::parse(&text).with_context(|| format!("{} does not parse", path.display()));
    }
    let path = args
        .schema
        .as_deref()
        .context("--schema or --gbnf is required")?;
    let schema: serde_json::Value = serde_json::from_str(&read(path)?)
        .with_context(|| format!("{} is not JSON", path.display()))?;
    let options = Options {
        strict: args.strict,
        extra_properties_by_default: args.allow_additional_properties,
        ..Options::default()
    };
    let compiled = schema::compile(&schema, &options)
        .with_context(|| format!("{} does not compile", path.display()))?;
    for warning in &compiled.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(compiled.grammar)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}
