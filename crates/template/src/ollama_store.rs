//! Models an Ollama user already has: `ollama pull` keeps each model in a local store,
//! a manifest per name (`manifests/<host>/<namespace>/<model>/<tag>`) listing layers by
//! digest, and each layer a file in `blobs/` (`sha256-<hex>`). The layers that matter
//! here are the weights (a GGUF file, served as it is), the Go template, the default
//! system prompt, the parameters (stop strings and sampling defaults) and the example
//! messages: together, what a Modelfile gives ([`OllamaSource`]).
//!
//! Names are read as Ollama reads them: `qwen2.5` is
//! `registry.ollama.ai/library/qwen2.5:latest`, `user/model:tag` names a namespace and
//! `hf.co/user/repo:tag` a host. The store is `$OLLAMA_MODELS`, else `~/.ollama/models`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::gotmpl::Message;
use crate::source::{
    invalid, json_type, not_json, read_json, read_text, stop_strings, OllamaSource,
};
use crate::TemplateError;

type Result<T> = std::result::Result<T, TemplateError>;

const DEFAULT_HOST: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";
const MEDIA_PREFIX: &str = "application/vnd.ollama.image.";

/// A model found in Ollama's store.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaModel {
    /// The GGUF file of its weights.
    pub weights: PathBuf,
    /// Its template and defaults; `None` when the model has no template layer, and so
    /// renders with the GGUF's own.
    pub source: Option<OllamaSource>,
}

/// Where Ollama keeps its models: `$OLLAMA_MODELS`, else `~/.ollama/models`.
pub fn models_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("OLLAMA_MODELS").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".ollama/models"))
}

/// The manifest file of `name` in the store at `models`, or `None` when `name` is not a
/// model name Ollama would accept.
pub fn manifest_path(models: &Path, name: &str) -> Option<PathBuf> {
    let (path, tag) = match name.rsplit_once(':') {
        Some((path, tag)) if !tag.contains('/') => (path, tag),
        _ => (name, DEFAULT_TAG),
    };
    let parts: Vec<&str> = path.split('/').collect();
    let (host, namespace, model) = match parts.as_slice() {
        [model] => (DEFAULT_HOST, DEFAULT_NAMESPACE, *model),
        [namespace, model] => (DEFAULT_HOST, *namespace, *model),
        [host, namespace, model] => (*host, *namespace, *model),
        _ => return None,
    };
    let parts = [host, namespace, model, tag];
    if !parts.iter().all(|part| is_name_part(part)) {
        return None;
    }
    Some(
        parts
            .iter()
            .fold(models.join("manifests"), |dir, part| dir.join(part)),
    )
}

/// A part of a model name: letters, digits, `_`, `-`, `.`, not empty, never `.` or `..`
/// (so a name cannot leave the store).
fn is_name_part(part: &str) -> bool {
    !part.is_empty()
        && part != "."
        && part != ".."
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The model called `name` in the store at `models`.
pub fn find(models: &Path, name: &str) -> Result<OllamaModel> {
    let manifest = manifest_path(models, name)
        .ok_or_else(|| invalid(Path::new(name), "not an Ollama model name".into()))?;
    if !manifest.is_file() {
        return Err(invalid(
            &manifest,
            format!(
                "no Ollama model {name:?} in {} (`ollama pull {name}` fetches it)",
                models.display()
            ),
        ));
    }
    let layers = Layers::read(models, &manifest)?;
    let weights = layers
        .blob("model")
        .ok_or_else(|| invalid(&manifest, "the manifest has no model layer".into()))?;
    let source = layers.source(weights.clone())?;
    Ok(OllamaModel { weights, source })
}

/// A manifest's layers: media type (without Ollama's prefix) and blob path.
struct Layers {
    layers: Vec<(String, PathBuf)>,
}

impl Layers {
    fn read(models: &Path, manifest: &Path) -> Result<Layers> {
        let json = read_json(manifest)?;
        let entries = json
            .get("layers")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid(manifest, "the manifest has no list of layers".into()))?;
        let layers = entries
            .iter()
            .map(|layer| layer_blob(models, manifest, layer))
            .collect::<Result<_>>()?;
        Ok(Layers { layers })
    }

    /// The blob of the first layer of `kind` (`model`, `template`, …).
    fn blob(&self, kind: &str) -> Option<PathBuf> {
        self.layers
            .iter()
            .find(|(media, _)| media.split(';').next().map(str::trim) == Some(kind))
            .map(|(_, blob)| blob.clone())
    }

    fn text(&self, kind: &str) -> Result<Option<String>> {
        self.blob(kind).map(|blob| read_text(&blob)).transpose()
    }

    /// The template and defaults, as a Modelfile would give them.
    fn source(&self, weights: PathBuf) -> Result<Option<OllamaSource>> {
        let Some(template) = self.text("template")? else {
            return Ok(None);
        };
        let (stop, parameters) = match self.blob("params") {
            Some(blob) => read_params(&blob)?,
            None => (Vec::new(), Vec::new()),
        };
        let messages = match self.blob("messages") {
            Some(blob) => read_messages(&blob)?,
            None => Vec::new(),
        };
        Ok(Some(OllamaSource {
            template,
            system: self.text("system")?,
            stop,
            parameters,
            messages,
            from: Some(weights),
        }))
    }
}

fn layer_blob(models: &Path, manifest: &Path, layer: &Value) -> Result<(String, PathBuf)> {
    let field = |name: &str| layer.get(name).and_then(Value::as_str);
    let (Some(media), Some(digest)) = (field("mediaType"), field("digest")) else {
        return Err(invalid(
            manifest,
            "a layer lacks its mediaType or digest".into(),
        ));
    };
    let hex = digest
        .strip_prefix("sha256:")
        .filter(|hex| hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| invalid(manifest, format!("{digest:?} is not a sha256 digest")))?;
    let kind = media.strip_prefix(MEDIA_PREFIX).unwrap_or(media);
    Ok((
        kind.to_owned(),
        models.join("blobs").join(format!("sha256-{hex}")),
    ))
}

/// A parameter's name and value, as a Modelfile writes it.
type Parameter = (String, String);

/// A params layer: its `stop` list, and every other parameter as a Modelfile would write
/// it (a number or word as it is, a list as one entry per item).
fn read_params(blob: &Path) -> Result<(Vec<String>, Vec<Parameter>)> {
    let json = read_json(blob)?;
    let stop = stop_strings(blob, &json)?;
    let mut parameters = Vec::new();
    for (name, value) in json.as_object().into_iter().flatten() {
        if name == "stop" {
            continue;
        }
        let items = match value {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        };
        for item in items {
            let text = match item {
                Value::String(text) => text,
                Value::Number(_) | Value::Bool(_) => item.to_string(),
                other => {
                    return Err(invalid(
                        blob,
                        format!("parameter {name} is {}", json_type(&other)),
                    ))
                }
            };
            parameters.push((name.clone(), text));
        }
    }
    Ok((stop, parameters))
}

/// A messages layer: `[{"role": …, "content": …}, …]`.
fn read_messages(blob: &Path) -> Result<Vec<Message>> {
    let text = read_text(blob)?;
    let items: Vec<Value> = serde_json::from_str(&text).map_err(not_json(blob))?;
    items
        .iter()
        .map(|item| {
            let field = |name: &str| item.get(name).and_then(Value::as_str);
            match (field("role"), field("content")) {
                (Some(role), Some(content)) => Ok(Message::new(role, content)),
                _ => Err(invalid(blob, "a message lacks its role or content".into())),
            }
        })
        .collect()
}
