//! `toolbridge render`: a chat template and a context in, the exact prompt out; or, with
//! `--request` and `--style`, an OpenAI request prepared by a dialect ([`crate::prepare`]).
//!
//! This is how anyone checks a template by hand, so stdout holds exactly the rendered
//! text (no added newline) and errors go to stderr with the template line they point at.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use toolbridge_template::source::{is_ollama_path, OllamaSource, TemplateSource};
use toolbridge_template::{
    Clock, GoRenderOptions, GoTemplate, JinjaTemplate, OllamaRequest, RenderOptions,
};

use crate::prepare::{self, RequestRender, Show};

#[derive(clap::Args)]
pub struct RenderArgs {
    /// A `.jinja` file, a `tokenizer_config.json`, a `.gguf` model file, or an Ollama
    /// `Modelfile` or `.gotmpl` Go template (rendered as Ollama renders a chat).
    #[arg(long)]
    template: PathBuf,
    /// A JSON object whose top-level keys become the template's variables
    /// (`messages`, `tools`, `add_generation_prompt`, …). They override what the
    /// template source defines, such as `bos_token`. For an Ollama template: a chat
    /// request, in Ollama's or OpenAI's shape (`messages`, `tools`, `think`, …).
    #[arg(long, required_unless_present = "request", conflicts_with = "request")]
    context: Option<PathBuf>,
    /// An OpenAI chat request (JSON) to prepare, as the server prepares it, instead of a
    /// raw context.
    #[arg(long)]
    request: Option<PathBuf>,
    /// The dialect that prepares `--request` (`hermes`, …); by default the one the server
    /// picks for the template.
    #[arg(long, requires = "request")]
    style: Option<String>,
    /// What to print of the prepared request.
    #[arg(long, value_enum, default_value_t, requires = "request")]
    show: Show,
    /// Which named template to use (`tool_use`, `rag`, …) when the source ships several.
    #[arg(long)]
    name: Option<String>,
    /// Render as if it were this local time (`2024-07-26T10:30:00`), for `strftime_now`
    /// (Jinja) or `currentDate` (Go).
    #[arg(long)]
    now: Option<String>,
}

pub fn run(args: &RenderArgs) -> Result<()> {
    let source = TemplateSource::from_path(&args.template)?;
    let options = RenderOptions {
        clock: clock(args.now.as_deref())?,
        ..RenderOptions::default()
    };
    let rendered = match (&args.request, &args.style, &args.context) {
        (Some(request), style, _) => prepare::render(RequestRender {
            source: &source,
            name: args.name.as_deref(),
            options,
            request,
            style: style.as_deref(),
            show: args.show,
        })?,
        (_, _, Some(context)) => render_context(args, &source, context, options)?,
        _ => bail!("give --context or --request"),
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(rendered.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// The template rendered with the context file's variables.
fn render_context(
    args: &RenderArgs,
    source: &TemplateSource,
    context: &Path,
    options: RenderOptions,
) -> Result<String> {
    if is_ollama_path(&args.template) {
        return render_ollama_context(args, context, options.clock);
    }
    let context = read_context(context)?;
    let has_tools = context.get("tools").is_some_and(|tools| !tools.is_null());
    let text = source.select_for(args.name.as_deref(), has_tools)?;
    let template = JinjaTemplate::with_options(text, options)
        .with_context(|| format!("{} does not compile", args.template.display()))?;
    let variables = with_source_defaults(source, context);
    template
        .render(&variables)
        .with_context(|| format!("rendering {} failed", args.template.display()))
}

/// An Ollama template rendered over the context as Ollama's server renders a chat
/// request (`messages`, `tools`, `think`, or `prompt`/`suffix`), with a Modelfile's
/// `SYSTEM` and `MESSAGE`s added as Ollama adds them.
fn render_ollama_context(args: &RenderArgs, context: &Path, clock: Clock) -> Result<String> {
    let source = OllamaSource::from_path(&args.template)?;
    let request = OllamaRequest::from_json(&serde_json::Value::Object(read_context(context)?))
        .with_context(|| format!("{} is not a chat request Ollama accepts", context.display()))?
        .with_model_defaults(source.system.as_deref(), &source.messages);
    let options = GoRenderOptions {
        clock,
        ..GoRenderOptions::default()
    };
    let template = GoTemplate::with_options(&source.template, options)
        .with_context(|| format!("{} does not compile", args.template.display()))?;
    template
        .render(&request)
        .with_context(|| format!("rendering {} failed", args.template.display()))
}

fn read_context(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the context {}", path.display()))?;
    match serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?
    {
        serde_json::Value::Object(map) => Ok(map),
        _ => bail!(
            "{} must hold a JSON object of template variables",
            path.display()
        ),
    }
}

/// The source's `bos_token`/`eos_token` as defaults under the context's own keys.
fn with_source_defaults(
    source: &TemplateSource,
    mut context: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let defaults = [
        ("bos_token", &source.bos_token),
        ("eos_token", &source.eos_token),
    ];
    for (key, value) in defaults {
        if let Some(value) = value {
            context
                .entry(key)
                .or_insert_with(|| serde_json::Value::String(value.clone()));
        }
    }
    serde_json::Value::Object(context)
}

fn clock(now: Option<&str>) -> Result<Clock> {
    match now {
        None => Ok(Clock::Local),
        Some(text) => Clock::fixed_from_str(text)
            .with_context(|| format!("--now {text:?} is not a time like 2024-07-26T10:30:00")),
    }
}
