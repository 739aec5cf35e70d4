//! Chat templates rendered exactly as their makers render them: Hugging Face Jinja as
//! Python jinja2 renders it under `transformers`, loaded from a `.jinja` file, a
//! `tokenizer_config.json` or a GGUF file's metadata; and Ollama's Go templates as
//! Ollama's server renders them, loaded from a Modelfile or a `.gotmpl` file.

mod caps;
mod chat_template;
mod error;
pub mod gguf;
pub mod gotmpl;
pub mod jinja;
pub mod modelfile;
pub mod ollama_store;
pub mod source;

pub use caps::{ArgumentsForm, TemplateCaps};
pub use chat_template::{ChatTemplate, RenderInput};
pub use error::{in_chat_template, TemplateError, TemplateErrorKind};
pub use gotmpl::{GoRenderOptions, GoTemplate, OllamaRequest};
pub use jinja::{Clock, JinjaTemplate, Limits, RenderOptions};
pub use source::{OllamaSource, TemplateSource};
