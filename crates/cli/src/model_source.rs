//! Where the served weights and template come from, as `--model` and `--template` name
//! them: a GGUF file (its own template), an Ollama Modelfile, or the name of a model an
//! Ollama user has pulled (`qwen2.5:7b`), so that a model is served with the Go template,
//! system prompt, stop strings and parameters Ollama would serve it with. A Modelfile's
//! `FROM` may itself name a pulled model, as in Ollama.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toolbridge_server::TemplateOverride;
use toolbridge_template::ollama_store::{self, OllamaModel};
use toolbridge_template::source::{is_ollama_path, OllamaSource};
use toolbridge_template::TemplateSource;

/// The weights to load, and the Ollama template and defaults that come with them.
pub struct ModelSource {
    pub weights: PathBuf,
    pub ollama: Option<OllamaSource>,
    /// The name the model is known by in Ollama's store, for clients to know it by.
    pub name: Option<String>,
}

impl ModelSource {
    /// A GGUF file served with its own template.
    pub fn gguf(weights: PathBuf) -> ModelSource {
        ModelSource {
            weights,
            ollama: None,
            name: None,
        }
    }
}

/// What `--model` names: a Modelfile, a GGUF file, else a model in Ollama's store.
pub fn resolve(model: &Path) -> Result<ModelSource> {
    if is_ollama_path(model) {
        let source = load_ollama(model)?;
        let weights = modelfile_weights(model, &source)?;
        return Ok(ModelSource {
            weights,
            ollama: Some(source),
            name: None,
        });
    }
    if model.is_file() {
        return Ok(ModelSource::gguf(model.to_owned()));
    }
    if model
        .extension()
        .is_some_and(|extension| extension == "gguf")
    {
        anyhow::bail!("{}: no such model file", model.display());
    }
    let name = model.to_string_lossy();
    let pulled = pulled(&name)
        .with_context(|| format!("{name} is neither a model file nor a model in Ollama's store"))?;
    Ok(ModelSource {
        weights: pulled.weights,
        ollama: pulled.source,
        name: Some(name.into_owned()),
    })
}

/// The template at `path`: Jinja in any of its sources, or an Ollama Go template.
pub fn load_template(path: &Path) -> Result<TemplateOverride> {
    if is_ollama_path(path) {
        return load_ollama(path).map(TemplateOverride::Ollama);
    }
    TemplateSource::from_path(path)
        .map(TemplateOverride::HuggingFace)
        .with_context(|| format!("cannot load the template {}", path.display()))
}

fn load_ollama(path: &Path) -> Result<OllamaSource> {
    OllamaSource::from_path(path)
        .with_context(|| format!("cannot load the Ollama template {}", path.display()))
}

/// The model called `name` in Ollama's store.
fn pulled(name: &str) -> Result<OllamaModel> {
    let store = ollama_store::models_dir()
        .context("no Ollama store: neither OLLAMA_MODELS nor HOME is set")?;
    Ok(ollama_store::find(&store, name)?)
}

/// The weights a Modelfile's `FROM` names: a GGUF file, else a pulled model.
fn modelfile_weights(modelfile: &Path, source: &OllamaSource) -> Result<PathBuf> {
    let Some(from) = &source.from else {
        anyhow::bail!(
            "{} is a Go template without weights; give the model with --model FILE.gguf \
             and the template with --template",
            modelfile.display()
        );
    };
    if from.is_file() {
        return Ok(from.clone());
    }
    // `from` is FROM resolved against the Modelfile's folder; as written, it may be a name.
    let written = modelfile
        .parent()
        .and_then(|dir| from.strip_prefix(dir).ok())
        .unwrap_or(from);
    let pulled = pulled(&written.to_string_lossy()).with_context(|| {
        format!(
            "{}: FROM {} is neither a file nor a model in Ollama's store",
            modelfile.display(),
            written.display()
        )
    })?;
    Ok(pulled.weights)
}
