//! Where a model's chat template comes from.
//!
//! A model ships its chat template in one of three places: inside its GGUF file, in the
//! `tokenizer_config.json` of its Hugging Face repository (newer `transformers` moves it to
//! a `chat_template.jinja` beside that file), or, when a user overrides it, as a bare
//! Jinja file. Some models ship several templates under names (`tool_use`, `rag`, …) next
//! to the default. A [`TemplateSource`] is that shipped set, plus the bos/eos token texts
//! that templates print, loaded the way `transformers` and llama.cpp load them so that a
//! prompt renders as the maker's own tooling would render it.
//!
//! Choosing among the templates follows `transformers`' `get_chat_template`: the default
//! unless a name is asked for, `tool_use` first when the request has tools (see
//! [`TemplateSource::select_for`]), and an error listing the names when a model ships
//! named templates but no default.
//!
//! Ollama models are the other kind of source: a Go template, from a Modelfile (with the
//! model's default system prompt, stop strings and example messages) or a bare
//! `.gotmpl` file (with the stop strings of a `<name>.json` beside it, as Ollama ships
//! its built-in templates). [`OllamaSource`] loads those; [`is_ollama_path`] tells the
//! two kinds of file apart by name, since both are plain text.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::gguf::{GgufError, GgufMetadata, ReadOptions, GGUF_MAGIC, TOKENS_KEY};
use crate::gotmpl::Message;
use crate::modelfile::Modelfile;
use crate::{TemplateError, TemplateErrorKind};

/// The largest template or `tokenizer_config.json` file read (64 MiB).
pub const MAX_TEXT_FILE_LEN: u64 = 64 << 20;

/// The name `transformers` gives the default template in a list of named templates.
const DEFAULT_NAME: &str = "default";
/// The name `transformers` prefers when the request has tools.
const TOOL_USE_NAME: &str = "tool_use";
const TOKENIZER_CONFIG: &str = "tokenizer_config.json";
/// Where `transformers` (4.50+) saves the default template, beside `tokenizer_config.json`.
const CHAT_TEMPLATE_FILE: &str = "chat_template.jinja";
/// Where `transformers` saves named templates, as `<name>.jinja`.
const ADDITIONAL_TEMPLATES_DIR: &str = "additional_chat_templates";

/// A model's chat templates as shipped, with the special tokens they print.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TemplateSource {
    /// The default template. `None` when a model ships only named templates, which
    /// `transformers` allows: a name must then be chosen.
    pub template: Option<String>,
    /// Named alternates (`tool_use`, `rag`, …) in file order, without the default.
    pub named: Vec<(String, String)>,
    /// The text of the beginning-of-sequence token, for `{{ bos_token }}`.
    pub bos_token: Option<String>,
    /// The text of the end-of-sequence token, for `{{ eos_token }}`.
    pub eos_token: Option<String>,
}

type Result<T, E = TemplateError> = std::result::Result<T, E>;

/// A template file at `path` that cannot be used, for `why`.
fn file_error(path: &Path, why: impl std::fmt::Display) -> TemplateError {
    TemplateError::new(
        TemplateErrorKind::File,
        format!("{}: {why}", path.display()),
    )
}

/// What reading `path` failed with.
fn cannot_read(path: &Path) -> impl Fn(io::Error) -> TemplateError + Copy + '_ {
    move |error| {
        let detail = format!("cannot read {}", path.display());
        TemplateError::new(TemplateErrorKind::File, detail).with_source(error)
    }
}

/// What reading `path` as JSON failed with.
pub(crate) fn not_json(path: &Path) -> impl Fn(serde_json::Error) -> TemplateError + Copy + '_ {
    move |error| file_error(path, "not valid JSON").with_source(error)
}

/// A GGUF file whose metadata cannot be read: its own error says where.
fn unreadable_gguf(error: GgufError) -> TemplateError {
    TemplateError::new(TemplateErrorKind::File, "").with_source(error)
}

/// `path` holds no chat template, for `reason`.
fn no_template_in(path: &Path, reason: impl std::fmt::Display) -> TemplateError {
    let detail = format!("{}: no chat template: {reason}", path.display());
    TemplateError::new(TemplateErrorKind::NoTemplate, detail)
}

impl TemplateSource {
    /// Loads the templates at `path`, whatever it is:
    ///
    /// - a GGUF file (recognised by its magic bytes, whatever its name);
    /// - a `.json` file: a `tokenizer_config.json` (see [`Self::from_tokenizer_config`]);
    /// - a directory: its `tokenizer_config.json`, as a Hugging Face model folder;
    /// - any other file: a Jinja template, the whole text (see [`Self::from_jinja`]).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        if path.is_dir() {
            return Self::from_tokenizer_config(path.join(TOKENIZER_CONFIG));
        }
        if starts_with_gguf_magic(path)? {
            Self::from_gguf(path)
        } else if has_extension(path, "json") {
            Self::from_tokenizer_config(path)
        } else {
            Self::from_jinja(path)
        }
    }

    /// Loads a Jinja template file: its whole text is the default template, and it names
    /// no tokens.
    pub fn from_jinja(path: impl AsRef<Path>) -> Result<Self> {
        Ok(TemplateSource {
            template: Some(read_text(path.as_ref())?),
            ..Self::default()
        })
    }

    /// Loads a Hugging Face `tokenizer_config.json`, as `transformers` does.
    ///
    /// - `chat_template` is a string, or a list of `{"name", "template"}` objects in which
    ///   the one named `default` is the default (a later duplicate name replaces an
    ///   earlier one, as in the Python dict `transformers` builds).
    /// - `chat_template.jinja` and `additional_chat_templates/<name>.jinja` beside the
    ///   file, when either exists, take priority over `chat_template`, as in
    ///   `transformers` 4.50+, which saves templates there.
    /// - `bos_token` / `eos_token` are strings, `AddedToken` objects (their `content`), or
    ///   null or missing.
    pub fn from_tokenizer_config(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let config = read_json(path)?;
        let (template, named) = match sibling_templates(path)? {
            Some(templates) => templates,
            None => config_templates(path, &config)?,
        };
        Ok(TemplateSource {
            template,
            named,
            bos_token: special_token(path, &config, "bos_token")?,
            eos_token: special_token(path, &config, "eos_token")?,
        })
    }

    /// Loads the templates of a GGUF file: `tokenizer.chat_template` is the default,
    /// `tokenizer.chat_template.<name>` the named ones, and the bos/eos tokens are the
    /// entries of `tokenizer.ggml.tokens` that `tokenizer.ggml.bos_token_id` and
    /// `eos_token_id` name. Tensors and other big arrays are never read into memory.
    pub fn from_gguf(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let options = ReadOptions::keep_only_arrays([TOKENS_KEY]);
        let metadata = GgufMetadata::read_with(path, &options).map_err(unreadable_gguf)?;
        let templates = metadata.chat_templates();
        let named = templates
            .named
            .iter()
            .map(|&(name, text)| (name.to_owned(), text.to_owned()));
        let (default, named) = split_default(named);
        let source = TemplateSource {
            template: templates.default.map(str::to_owned).or(default),
            named,
            bos_token: metadata.bos_token().map(str::to_owned),
            eos_token: metadata.eos_token().map(str::to_owned),
        };
        if source.template.is_none() && source.named.is_empty() {
            return Err(no_template_in(
                path,
                "the GGUF metadata has no tokenizer.chat_template",
            ));
        }
        Ok(source)
    }

    /// The template called `name`, or the default when `name` is `None`. `"default"`
    /// names the default too.
    pub fn select(&self, name: Option<&str>) -> Result<&str> {
        match name {
            None => self.template.as_deref().ok_or_else(|| {
                let available = self.names_owned().join(", ");
                let detail =
                    format!("the model has no default chat template; choose one of: {available}");
                TemplateError::new(TemplateErrorKind::Choice, detail)
            }),
            Some(name) => self.named_template(name).ok_or_else(|| {
                let available = self.names_owned().join(", ");
                let detail =
                    format!("the model has no chat template named {name:?}; it has: {available}");
                TemplateError::new(TemplateErrorKind::Choice, detail)
            }),
        }
    }

    /// Like [`Self::select`], but when no name is given and the request has tools, a
    /// template named `tool_use` wins over the default, as in `transformers`.
    pub fn select_for(&self, name: Option<&str>, has_tools: bool) -> Result<&str> {
        if name.is_none() && has_tools {
            if let Some(template) = self.named_template(TOOL_USE_NAME) {
                return Ok(template);
            }
        }
        self.select(name)
    }

    /// The names that [`Self::select`] accepts: `default` when there is one, then the
    /// named templates in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let default = self.template.as_ref().map(|_| DEFAULT_NAME);
        default
            .into_iter()
            .chain(self.named.iter().map(|(name, _)| name.as_str()))
    }

    fn named_template(&self, name: &str) -> Option<&str> {
        if name == DEFAULT_NAME {
            if let Some(template) = &self.template {
                return Some(template);
            }
        }
        self.named
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, template)| template.as_str())
    }

    fn names_owned(&self) -> Vec<String> {
        self.names().map(str::to_owned).collect()
    }
}

/// An Ollama model's Go template with what its Modelfile adds to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OllamaSource {
    pub template: String,
    /// `SYSTEM`: the system prompt Ollama adds when a request has none.
    pub system: Option<String>,
    /// `PARAMETER stop` strings.
    pub stop: Vec<String>,
    /// Every other `PARAMETER`, name and value as written (`temperature`, `num_ctx`, …).
    pub parameters: Vec<(String, String)>,
    /// `MESSAGE` turns Ollama puts before every conversation.
    pub messages: Vec<Message>,
    /// A Modelfile's `FROM`: the weights, as a path (resolved against the Modelfile's
    /// folder when relative) or an Ollama model name. `None` for a `.gotmpl` file.
    pub from: Option<PathBuf>,
}

/// Whether `path` names an Ollama template source: a `Modelfile` (any case, or a
/// `.modelfile` extension) or a `.gotmpl` file.
pub fn is_ollama_path(path: &Path) -> bool {
    is_modelfile(path) || has_extension(path, "gotmpl")
}

fn is_modelfile(path: &Path) -> bool {
    let named_modelfile = path
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.eq_ignore_ascii_case("modelfile"));
    named_modelfile || has_extension(path, "modelfile")
}

impl OllamaSource {
    /// Loads a Modelfile, or a `.gotmpl` file (any other name is read as one too).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        if is_modelfile(path) {
            Self::from_modelfile(path)
        } else {
            Self::from_gotmpl(path)
        }
    }

    /// A Modelfile's `TEMPLATE`, `SYSTEM`, `PARAMETER stop` and `MESSAGE`s.
    pub fn from_modelfile(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = read_text(path)?;
        let (source, from) = Self::parse_modelfile(&text, path)?;
        Ok(OllamaSource {
            from: Some(resolve_from(path, &from)),
            ..source
        })
    }

    /// A Modelfile's text as an Ollama server reports it for a model it serves
    /// (`/api/show`): `FROM` names the server's own weights and is left out. `origin`
    /// names the text in errors.
    pub fn from_modelfile_text(text: &str, origin: &Path) -> Result<Self> {
        Self::parse_modelfile(text, origin).map(|(source, _)| source)
    }

    /// The source a Modelfile's text gives, and its `FROM` as written.
    fn parse_modelfile(text: &str, origin: &Path) -> Result<(Self, String)> {
        let modelfile = Modelfile::parse(text).map_err(|err| invalid(origin, err.to_string()))?;
        let stop = modelfile.stop();
        let parameters = modelfile
            .parameters
            .iter()
            .filter(|(name, _)| !name.eq_ignore_ascii_case("stop"))
            .cloned()
            .collect();
        let template = modelfile.template.ok_or_else(|| {
            no_template_in(
                origin,
                "the Modelfile has no TEMPLATE (Ollama would take the one of its FROM \
                     model, which is not read here)",
            )
        })?;
        let source = OllamaSource {
            template,
            system: modelfile.system,
            stop,
            parameters,
            messages: modelfile.messages,
            from: None,
        };
        Ok((source, modelfile.from))
    }

    /// A Go template file; its stop strings come from `<name>.json` beside it
    /// (`{"stop": [...]}`), when there is one.
    pub fn from_gotmpl(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let parameters = path.with_extension("json");
        let stop = if parameters.is_file() {
            stop_strings(&parameters, &read_json(&parameters)?)?
        } else {
            Vec::new()
        };
        Ok(OllamaSource {
            template: read_text(path)?,
            stop,
            ..Self::default()
        })
    }
}

/// A Modelfile's `FROM` as Ollama reads a path: `~/` is the home folder, and a relative
/// path starts at the Modelfile's folder.
fn resolve_from(modelfile: &Path, from: &str) -> PathBuf {
    if let (Some(rest), Some(home)) = (from.strip_prefix("~/"), std::env::var_os("HOME")) {
        return PathBuf::from(home).join(rest);
    }
    modelfile
        .parent()
        .unwrap_or_else(|| Path::new(""))
        .join(from)
}

/// The `stop` list of an Ollama template parameters file.
pub(crate) fn stop_strings(path: &Path, parameters: &Value) -> Result<Vec<String>> {
    match parameters.get("stop") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                other => Err(invalid(
                    path,
                    format!("stop strings must be strings, not {}", json_type(other)),
                )),
            })
            .collect(),
        Some(other) => Err(invalid(
            path,
            format!("stop must be a list of strings, not {}", json_type(other)),
        )),
    }
}

/// Default and named templates.
type Templates = (Option<String>, Vec<(String, String)>);

/// Builds the template set from `(name, template)` pairs the way `transformers` builds its
/// dict: a repeated name replaces the earlier template in place, and `default` is the
/// default rather than a named template.
fn split_default(pairs: impl IntoIterator<Item = (String, String)>) -> Templates {
    let mut named: Vec<(String, String)> = Vec::new();
    for (name, template) in pairs {
        match named.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = template,
            None => named.push((name, template)),
        }
    }
    let default = named
        .iter()
        .position(|(name, _)| name == DEFAULT_NAME)
        .map(|i| named.remove(i).1);
    (default, named)
}

/// The templates in `chat_template.jinja` and `additional_chat_templates/*.jinja` beside
/// `config_path`, or `None` when there are none. Named ones come sorted by name: their
/// order on disk means nothing.
fn sibling_templates(config_path: &Path) -> Result<Option<Templates>> {
    let dir = config_path.parent().unwrap_or(Path::new(""));
    let default_path = dir.join(CHAT_TEMPLATE_FILE);
    let default = if default_path.is_file() {
        Some(read_text(&default_path)?)
    } else {
        None
    };
    let mut named = additional_templates(&dir.join(ADDITIONAL_TEMPLATES_DIR))?;
    if default.is_none() && named.is_empty() {
        return Ok(None);
    }
    named.sort();
    let (named_default, named) = split_default(named);
    Ok(Some((default.or(named_default), named)))
}

/// `(name, template)` for each `<name>.jinja` in `dir`, which need not exist.
fn additional_templates(dir: &Path) -> Result<Vec<(String, String)>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let io_error = cannot_read(dir);
    let mut templates = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        let name = path.file_stem().and_then(|s| s.to_str());
        if let (Some(name), true) = (name, has_extension(&path, "jinja")) {
            templates.push((name.to_owned(), read_text(&path)?));
        }
    }
    Ok(templates)
}

/// The templates in a `tokenizer_config.json`'s `chat_template` field.
fn config_templates(path: &Path, config: &Value) -> Result<Templates> {
    match config.get("chat_template") {
        Some(Value::String(template)) => Ok((Some(template.clone()), Vec::new())),
        Some(Value::Array(items)) => {
            let pairs = items
                .iter()
                .enumerate()
                .map(|(i, item)| named_entry(path, i, item))
                .collect::<Result<Vec<_>>>()?;
            let (default, named) = split_default(pairs);
            if default.is_none() && named.is_empty() {
                return Err(no_template(path, "an empty chat_template list"));
            }
            Ok((default, named))
        }
        None | Some(Value::Null) => Err(no_template(path, "no chat_template field")),
        Some(other) => Err(invalid(
            path,
            format!(
                "chat_template must be a string or a list of {{\"name\", \"template\"}} \
                 objects, not {}",
                json_type(other)
            ),
        )),
    }
}

fn no_template(path: &Path, what: &str) -> TemplateError {
    no_template_in(
        path,
        format!("{what}, and no {CHAT_TEMPLATE_FILE} beside it"),
    )
}

/// One `{"name": …, "template": …}` entry of a `chat_template` list.
fn named_entry(path: &Path, i: usize, item: &Value) -> Result<(String, String)> {
    let field = |name: &str| match item.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(invalid(
            path,
            format!("chat_template[{i}] has no string \"{name}\""),
        )),
    };
    Ok((field("name")?, field("template")?))
}

/// A special token's text: a string, an `AddedToken` object's `content`, or none.
fn special_token(path: &Path, config: &Value, field: &str) -> Result<Option<String>> {
    match config.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(Value::Object(token)) => match token.get("content") {
            Some(Value::String(text)) => Ok(Some(text.clone())),
            _ => Err(invalid(
                path,
                format!("{field} is an object without a string \"content\""),
            )),
        },
        Some(other) => Err(invalid(
            path,
            format!(
                "{field} must be a string, an AddedToken object or null, not {}",
                json_type(other)
            ),
        )),
    }
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn invalid(path: &Path, message: String) -> TemplateError {
    file_error(path, message)
}

pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = read_text(path)?;
    let value: Value = serde_json::from_str(&text).map_err(not_json(path))?;
    match value {
        Value::Object(_) => Ok(value),
        other => Err(invalid(
            path,
            format!("expected a JSON object, found {}", json_type(&other)),
        )),
    }
}

/// Reads a UTF-8 text file of at most [`MAX_TEXT_FILE_LEN`] bytes.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let io_error = cannot_read(path);
    let file = File::open(path).map_err(io_error)?;
    let mut bytes = Vec::new();
    // Reading one byte past the limit tells a file at the limit from one over it, without
    // trusting the size the file system reports.
    file.take(MAX_TEXT_FILE_LEN + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > MAX_TEXT_FILE_LEN {
        return Err(file_error(
            path,
            format!("larger than the {MAX_TEXT_FILE_LEN}-byte limit for a template file"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        file_error(
            path,
            format!("not UTF-8 text (bad byte at offset {offset})"),
        )
    })
}

fn starts_with_gguf_magic(path: &Path) -> Result<bool> {
    let io_error = cannot_read(path);
    let mut magic = Vec::with_capacity(4);
    File::open(path)
        .map_err(io_error)?
        .take(4)
        .read_to_end(&mut magic)
        .map_err(io_error)?;
    Ok(magic == GGUF_MAGIC)
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}
