//! `toolbridge detect`: the dialect a model's chat template speaks, as the server picks it
//! with no configuration.
//!
//! It prints the registry name of the dialect (`hermes`, `llama3`, `mistral`, …). With
//! `--explain` it prints the family the template's text shows too, and says when that
//! family has no dialect of its own yet. A template whose text shows no family with a
//! dialect but which renders tool calls gets a dialect learned from its renders
//! ([`detect::choose`]), and `--explain` prints the tell that named the family
//! ([`detect::Chosen::explain`]), what was learned (markers, call shape, key
//! names, separator, reasoning) or why learning was refused, in which case a prompt style
//! stands in. Its last line is the proof ([`toolbridge_dialect::proof`]): how many of the
//! template's own renderings of calls the chosen dialect reads back (`proof: 2/2 renderings
//! read back (by hermes)`), or the first that did not, with the text the template wrote and
//! what was read; a template that renders no calls is `not provable`. Jinja templates are read as `parse --template` reads them (`.jinja`,
//! `tokenizer_config.json`, `.gguf`); Ollama Go templates (`.gotmpl`) and Modelfiles as
//! Ollama renders them.

use anyhow::Result;
use std::path::{Path, PathBuf};
use toolbridge_dialect::{detect, ChatTemplate, Registry};
use toolbridge_template::{OllamaSource, TemplateSource};

#[derive(clap::Args)]
pub struct DetectArgs {
    /// The model's chat template: `.jinja`, `tokenizer_config.json`, `.gguf`, an Ollama
    /// `.gotmpl` or a `Modelfile`.
    #[arg(long)]
    template: PathBuf,
    /// Print the detected family as well, and whether a prompt style stands in for it.
    #[arg(long)]
    explain: bool,
}

pub fn run(args: &DetectArgs) -> Result<()> {
    let (text, template) = template_text(&args.template)?;
    let registry = Registry::default();
    let choice = detect::choose(&text, &template, &registry);
    if args.explain {
        for line in choice.explain(&text) {
            println!("{line}");
        }
    } else if choice.uses_learned() {
        println!("learned");
    } else {
        println!("{}", choice.detection.dialect);
    }
    Ok(())
}

/// The template's text and the template compiled: an Ollama template or Modelfile as
/// Ollama reads it, anything else through [`TemplateSource`] (the tool-use template where a
/// model ships several).
fn template_text(path: &Path) -> Result<(String, ChatTemplate)> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if name.ends_with(".gotmpl") || name == "Modelfile" || name.ends_with(".Modelfile") {
        let source = OllamaSource::from_path(path)?;
        return Ok((source.template.clone(), ChatTemplate::ollama(&source)?));
    }
    let source = TemplateSource::from_path(path)?;
    let text = source.select_for(None, true)?.to_string();
    Ok((text, ChatTemplate::from_source(&source, None, true)?))
}
