//! `toolbridge detect`: the dialect a model's chat template speaks, as the server picks it
//! with no configuration.
//!
//! It prints the registry name of the dialect (`hermes`, `llama3`, `mistral`, …). With
//! `--explain` it prints the family the template's text shows too, and says when that
//! family has no dialect of its own yet and a prompt style stands in. Jinja templates are
//! read as `parse --template` reads them (`.jinja`, `tokenizer_config.json`, `.gguf`);
//! Ollama Go templates (`.gotmpl`) and Modelfiles are read as text, since detection only
//! looks for the tells a template's text carries.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use toolbridge_dialect::detect;
use toolbridge_dialect::registry::Registry;
use toolbridge_template::TemplateSource;

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
    let text = template_text(&args.template)?;
    let detection = detect::resolve(&text, &Registry::default());
    if !args.explain {
        println!("{}", detection.dialect);
        return Ok(());
    }
    println!("family: {}", detection.family.unwrap_or("none"));
    if detection.fallback() {
        println!(
            "dialect: {} (prompt style: no dialect for this family yet)",
            detection.dialect
        );
    } else {
        println!("dialect: {}", detection.dialect);
    }
    Ok(())
}

/// The template's text: an Ollama template or Modelfile as it is, anything else through
/// [`TemplateSource`] (the tool-use template where a model ships several).
fn template_text(path: &Path) -> Result<String> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    if name.ends_with(".gotmpl") || name == "Modelfile" || name.ends_with(".Modelfile") {
        return std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()));
    }
    let source = TemplateSource::from_path(path)?;
    Ok(source.select_for(None, true)?.to_string())
}
