//! `toolbridge render --request`: an OpenAI request prepared by a dialect, shown as the
//! model would receive it.
//!
//! The server prepares every request this way; this mode lets a user see the result
//! without a model or an engine: the full prompt (tools described, history rewritten,
//! generation prompt added) or the grammar that constrains the output, printed as GBNF
//! with each tool's schema expanded into rules so llama.cpp could load it as is.
//!
//! A prompt style's prompt is two parts joined: the system prompt it injects and the
//! conversation the template renders. Seed 000 prints them apart, so `--show system` and
//! `--show conversation` do too, for comparing a style with the seed part by part.

use anyhow::{Context, Result};
use std::path::Path;
use toolbridge_chat::ChatRequest;
use toolbridge_dialect::{answer_format, ChatTemplate, Constraint, Prepared, Registry};
use toolbridge_template::{JinjaTemplate, RenderOptions, TemplateSource};

use crate::styles;

/// What `render --request` prints.
#[derive(Clone, Copy, Default, clap::ValueEnum)]
pub enum Show {
    /// The full prompt text.
    #[default]
    Prompt,
    /// The constraint's grammar as GBNF (nothing when the output is free).
    Grammar,
    /// A prompt style's rendered conversation, without the system prompt it injects.
    Conversation,
    /// A prompt style's injected system prompt alone (nothing when it injects none).
    System,
}

/// One `render --request` invocation.
pub struct RequestRender<'a> {
    pub source: &'a TemplateSource,
    /// The template's name when the source ships several.
    pub name: Option<&'a str>,
    pub options: RenderOptions,
    pub request: &'a Path,
    /// The dialect that prepares it; `None` is the one the server picks for the template.
    pub style: Option<&'a str>,
    pub show: Show,
}

/// The text to print: the prompt, the grammar (empty when there is no constraint), or one
/// part of a prompt style's prompt.
pub fn render(job: RequestRender<'_>) -> Result<String> {
    let mut registry = styles::registry(&job.options.clock);
    let style = match job.style {
        Some(style) => style,
        None => styles::detected(job.source, &mut registry)?,
    };
    let job = RequestRender {
        style: Some(style),
        ..job
    };
    match job.show {
        Show::Prompt => Ok(prepare(&job, style, &registry)?.prompt),
        Show::Grammar => grammar_text(&prepare(&job, style, &registry)?),
        Show::Conversation => conversation_text(&job, style, &registry),
        Show::System => system_text(&job, style, &registry),
    }
}

/// The request prepared by the dialect the job names.
fn prepare(job: &RequestRender<'_>, style: &str, registry: &Registry) -> Result<Prepared> {
    let dialect = styles::dialect(registry, style)?;
    let request = read_request(job.request)?;
    let template = chat_template(job, !request.tools().is_empty())?;
    answer_format::prepare(dialect, &request, &template)
        .with_context(|| format!("style {style} cannot prepare this request"))
}

/// The conversation as the job's prompt style renders it, without its system prompt.
fn conversation_text(job: &RequestRender<'_>, name: &str, registry: &Registry) -> Result<String> {
    let style = styles::prompt_parts(registry, name)?;
    let request = read_request(job.request)?;
    let template = chat_template(job, !request.tools().is_empty())?;
    style
        .conversation(&request, &template)
        .with_context(|| format!("style {name} cannot render this conversation"))
}

/// The system prompt the job's prompt style injects; with none, a note on stderr and
/// nothing to print.
fn system_text(job: &RequestRender<'_>, name: &str, registry: &Registry) -> Result<String> {
    let style = styles::prompt_parts(registry, name)?;
    let request = read_request(job.request)?;
    let text = style
        .system_prompt(&request)
        .with_context(|| format!("style {name} cannot describe this request"))?;
    Ok(text.unwrap_or_else(|| {
        eprintln!("note: this request gets no system prompt (no tools shown, no response schema)");
        String::new()
    }))
}

/// The request file, parsed and checked as the server checks it.
pub fn read_request(path: &Path) -> Result<ChatRequest> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the request {}", path.display()))?;
    let request: ChatRequest = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an OpenAI chat request", path.display()))?;
    request
        .validate()
        .with_context(|| format!("{} is not a valid request", path.display()))?;
    Ok(request)
}

/// The model's template compiled with the user's render options (`--now`), with its
/// special tokens; a token the source does not name renders as the empty string.
fn chat_template(job: &RequestRender<'_>, has_tools: bool) -> Result<ChatTemplate> {
    let text = job.source.select_for(job.name, has_tools)?;
    let template = JinjaTemplate::with_options(text, job.options.clone())
        .context("the chat template does not compile")?;
    Ok(ChatTemplate::jinja(
        template,
        job.source.bos_token.clone().unwrap_or_default(),
        job.source.eos_token.clone().unwrap_or_default(),
    ))
}

/// The constraint as GBNF; with none, a note on stderr and nothing to print.
fn grammar_text(prepared: &Prepared) -> Result<String> {
    let Some(constraint) = &prepared.constraint else {
        eprintln!("note: this request has no constraint (no tools, or tool_choice \"none\")");
        return Ok(String::new());
    };
    gbnf_of(constraint)
}

/// The grammar with every embedded schema expanded into rules, printed as GBNF; what the
/// conversion cannot enforce is warned about on stderr.
fn gbnf_of(constraint: &Constraint) -> Result<String> {
    let gbnf = constraint
        .gbnf()
        .context("a tool's schema does not convert")?;
    for warning in gbnf.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(gbnf.text)
}
