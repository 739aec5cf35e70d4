//! The model a server serves: its engine, its chat templates and its dialect, put together
//! once at start-up, so that a misconfiguration (no template, an unknown dialect, a
//! template that does not compile) stops the server before it listens rather than failing
//! every request.
//!
//! The templates come from the engine's model (the GGUF's `tokenizer.chat_template` and
//! its BOS/EOS token texts) unless the caller gives a [`TemplateSource`] (`--template`);
//! tokens the override does not name are still the model's. When the source ships a
//! `tool_use` template, requests with tools render with it, as `transformers` chooses.
//!
//! The dialect is the one named (`--dialect`), else the one the dialect crate detects from
//! the default template's text ([`detect::dialect_name`]): the template's own family where
//! a dialect for it exists, else a prompt style that teaches the model a call syntax in its
//! system prompt.

use std::sync::Arc;

use toolbridge_chat::ChatRequest;
use toolbridge_dialect::detect;
use toolbridge_dialect::dialect::{ChatTemplate, Dialect, DialectError, Prepared};
use toolbridge_dialect::registry::Registry;
use toolbridge_engine::Engine;
use toolbridge_template::TemplateSource;

use crate::answer_format::AnswerFormat;
use crate::error::Failure;

/// Why a model cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the model has no chat template; give one with --template")]
    NoTemplate,
    #[error("the chat template: {0}")]
    Template(#[from] DialectError),
    #[error("unknown dialect {name:?}; known dialects: {}", known.join(", "))]
    UnknownDialect { name: String, known: Vec<String> },
}

/// An engine with the templates and dialect its requests are prepared with.
pub struct ServedModel {
    engine: Arc<dyn Engine>,
    templates: Templates,
    registry: Registry,
    dialect: &'static str,
}

/// The compiled templates: the default, and `tool_use` when the model ships one.
struct Templates {
    default: ChatTemplate,
    tool_use: Option<ChatTemplate>,
}

impl ServedModel {
    /// Serves `engine` with the templates of `template` (else the engine's model's) and
    /// the dialect called `dialect` (else [`choose_dialect`]'s).
    pub fn new(
        engine: Arc<dyn Engine>,
        template: Option<TemplateSource>,
        dialect: Option<&str>,
    ) -> Result<ServedModel, SetupError> {
        let source = with_model_tokens(template, engine.as_ref());
        let default_text = source.select(None).map_err(|_| SetupError::NoTemplate)?;
        let registry = Registry::default();
        let dialect = choose_dialect(&registry, dialect, default_text)?;
        let templates = Templates::compile(&source)?;
        Ok(ServedModel {
            engine,
            templates,
            registry,
            dialect,
        })
    }

    /// The id clients know the model by.
    pub fn id(&self) -> &str {
        &self.engine.model().id
    }

    /// The name of the dialect requests are prepared with.
    pub fn dialect_name(&self) -> &'static str {
        self.dialect
    }

    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// The prompt, constraint, stops and parser for `request`; when the dialect leaves the
    /// answer free and the request asks for JSON, the JSON's schema (see
    /// [`crate::answer_format`]).
    pub fn prepare(&self, request: &ChatRequest) -> Result<Prepared, Failure> {
        let template = self.templates.for_request(request);
        let dialect = self.dialect()?;
        let prepared = dialect.prepare(request, template)?;
        if prepared.constraint.is_some() {
            return Ok(prepared);
        }
        let Some(format) = AnswerFormat::of(request)? else {
            return Ok(prepared);
        };
        let mut prepared = match format.instructed(request) {
            Some(instructed) => dialect.prepare(&instructed, template)?,
            None => prepared,
        };
        prepared.constraint = Some(format.constraint());
        Ok(prepared)
    }

    /// The chosen dialect; it was found in this registry at set-up, so the error is
    /// unreachable, but answered rather than panicked on.
    fn dialect(&self) -> Result<&dyn Dialect, Failure> {
        self.registry.get(self.dialect).ok_or_else(|| {
            Failure::api(toolbridge_chat::ApiError::server(format!(
                "the dialect {:?} is missing from the registry",
                self.dialect
            )))
        })
    }
}

impl Templates {
    fn compile(source: &TemplateSource) -> Result<Templates, DialectError> {
        let default = ChatTemplate::from_source(source, None, false)?;
        let tool_use = source
            .named
            .iter()
            .any(|(name, _)| name == "tool_use")
            .then(|| ChatTemplate::from_source(source, None, true))
            .transpose()?;
        Ok(Templates { default, tool_use })
    }

    fn for_request(&self, request: &ChatRequest) -> &ChatTemplate {
        match &self.tool_use {
            Some(tool_use) if !request.tools().is_empty() => tool_use,
            _ => &self.default,
        }
    }
}

/// `template`, or the engine's model's template when `None`, with the model's tokens
/// wherever the source names none (a bare Jinja file names none).
fn with_model_tokens(template: Option<TemplateSource>, engine: &dyn Engine) -> TemplateSource {
    let model = engine.model();
    let mut source = template.unwrap_or_else(|| TemplateSource {
        template: model.chat_template.clone(),
        ..TemplateSource::default()
    });
    source.bos_token = source.bos_token.or_else(|| model.bos_token.clone());
    source.eos_token = source.eos_token.or_else(|| model.eos_token.clone());
    source
}

/// The dialect called `named`, else the one detected from `template` (see the module
/// docs).
pub fn choose_dialect(
    registry: &Registry,
    named: Option<&str>,
    template: &str,
) -> Result<&'static str, SetupError> {
    let name = named.unwrap_or_else(|| detect::dialect_name(template));
    registry
        .get(name)
        .map(|dialect| dialect.name())
        .ok_or_else(|| SetupError::UnknownDialect {
            name: name.to_owned(),
            known: registry
                .names()
                .iter()
                .map(|name| name.to_string())
                .collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_with_tool_call_tags_are_hermes() {
        let registry = Registry::default();
        let qwen = "{% if tools %}<tool_call>{% endif %}";
        assert_eq!(choose_dialect(&registry, None, qwen).ok(), Some("hermes"));
        let plain = "{{ messages[0].content }}";
        assert_eq!(
            choose_dialect(&registry, None, plain).ok(),
            Some("hermes_2_pro")
        );
    }

    #[test]
    fn a_named_dialect_wins_and_aliases_resolve() {
        let registry = Registry::default();
        assert_eq!(
            choose_dialect(&registry, Some("short"), "<tool_call>").ok(),
            Some("short")
        );
        assert_eq!(
            choose_dialect(&registry, Some("qwen2.5"), "").ok(),
            Some("hermes")
        );
        let unknown = choose_dialect(&registry, Some("nope"), "").expect_err("unknown");
        assert!(unknown.to_string().contains("hermes"), "{unknown}");
    }
}
