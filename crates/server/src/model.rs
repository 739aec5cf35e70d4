//! The model a server serves: its engine, its chat templates and its dialect, put together
//! once at start-up, so that a misconfiguration (no template, an unknown dialect, a
//! template that does not compile) stops the server before it listens rather than failing
//! every request.
//!
//! The templates come from the engine's model (the GGUF's `tokenizer.chat_template` and
//! its BOS/EOS token texts) unless the caller gives a [`TemplateSource`] (`--template`);
//! tokens the override does not name are still the model's. When the source ships a
//! `tool_use` template, requests with tools render with it, as `transformers` chooses.
//! An Ollama model's Go template ([`OllamaSource`], from a Modelfile) renders as Ollama
//! renders it, with the Modelfile's system prompt and example messages; its stop strings
//! end every answer and its parameters are the sampling defaults
//! ([`crate::modelfile`]).
//!
//! The dialect is the one named (`--dialect`), else the one the dialect crate detects from
//! the default template's text ([`detect::dialect_name`]): the template's own family where
//! a dialect for it exists, else one learned from the template's own renders of past calls
//! ([`LearnedDialect`]), else a prompt style that teaches the model a call syntax in its
//! system prompt.

use std::sync::Arc;

use toolbridge_chat::ChatRequest;
use toolbridge_dialect::{
    answer_format, detect, ChatTemplate, Dialect, Prepared, Registry, StreamParser,
};
use toolbridge_engine::{Engine, Generation, Sampling};
use toolbridge_template::{OllamaSource, TemplateError, TemplateSource};

use crate::error::Failure;
use crate::modelfile::ModelfileDefaults;
use crate::sampling::sampling;
use crate::server_error::{ServerError, ServerErrorKind};

/// A chat template given instead of the model's own.
pub enum TemplateOverride {
    /// Jinja, from a template file, a `tokenizer_config.json`, a model folder or a GGUF.
    HuggingFace(TemplateSource),
    /// An Ollama Go template, from a Modelfile or a `.gotmpl` file.
    Ollama(OllamaSource),
}

/// An engine with the templates and dialect its requests are prepared with.
pub struct ServedModel {
    engine: Arc<dyn Engine>,
    templates: Templates,
    registry: Registry,
    dialect: &'static str,
    /// Why the dialect was chosen, a line each ([`detect::Chosen::explain`]).
    why: Vec<String>,
    /// Stop strings of the template's source (a Modelfile's `PARAMETER stop`), added to
    /// every request's.
    stop: Vec<String>,
    /// Sampling settings of the template's source (a Modelfile's parameters), for what a
    /// request leaves unset.
    sampling: Sampling,
    /// The id clients know the model by, when not the engine's.
    alias: Option<String>,
}

/// The compiled templates: the default, and `tool_use` when the model ships one.
struct Templates {
    default: ChatTemplate,
    tool_use: Option<ChatTemplate>,
    /// The default template's text, which detection reads.
    text: String,
}

impl ServedModel {
    /// Serves `engine` with the templates of `template` (else the engine's model's) and
    /// the dialect called `dialect` (else [`choose_dialect`]'s).
    pub fn new(
        engine: Arc<dyn Engine>,
        template: Option<TemplateOverride>,
        dialect: Option<&str>,
    ) -> Result<ServedModel, ServerError> {
        let mut registry = Registry::default();
        let template = match template {
            Some(template) => Some(template),
            None => engine_modelfile(engine.as_ref())?.map(TemplateOverride::Ollama),
        };
        let mut stop = Vec::new();
        let mut sampling = Sampling::default();
        let (templates, mut dialect_name) = match template {
            Some(TemplateOverride::Ollama(source)) => {
                let dialect = choose_dialect(&registry, dialect, &source.template)?;
                sampling = ModelfileDefaults::read(&source.parameters)?.sampling;
                stop = source.stop.clone();
                (Templates::ollama(&source).map_err(template_error)?, dialect)
            }
            Some(TemplateOverride::HuggingFace(source)) => {
                Templates::hugging_face(source, engine.as_ref(), &registry, dialect)?
            }
            None => Templates::hugging_face(
                TemplateSource::default(),
                engine.as_ref(),
                &registry,
                dialect,
            )?,
        };
        let why = match dialect {
            Some(named) => vec![format!("dialect: {dialect_name} (named: {named})")],
            None => {
                let (detected, why) = detected(&mut registry, &templates);
                dialect_name = detected;
                why
            }
        };
        Ok(ServedModel {
            engine,
            templates,
            registry,
            dialect: dialect_name,
            why,
            stop,
            sampling,
            alias: None,
        })
    }

    /// Known to clients as `alias` (`--alias`, or an Ollama model's name) rather than by
    /// the engine's id; `None` keeps the engine's.
    pub fn with_alias(mut self, alias: Option<String>) -> ServedModel {
        self.alias = alias;
        self
    }

    /// The id clients know the model by.
    pub fn id(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.engine.model().id)
    }

    /// The name of the dialect requests are prepared with.
    pub fn dialect_name(&self) -> &'static str {
        self.dialect
    }

    /// Why the dialect was chosen, a line each: the tell the template showed, or that it
    /// was named, what was learned from the template, and the proof (`proof: …`).
    pub fn why(&self) -> &[String] {
        &self.why
    }

    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// The prompt, constraint, stops and parser for `request`; when the dialect leaves the
    /// answer free and the request asks for JSON, the JSON's schema (see
    /// [`answer_format`]).
    pub fn prepare(&self, request: &ChatRequest) -> Result<Prepared, Failure> {
        let mut prepared = self.prepare_in_dialect(request)?;
        prepared.stop.extend(self.stop.iter().cloned());
        Ok(prepared)
    }

    /// What the engine is asked to generate for `request` (the prepared prompt, constraint
    /// and stops, the request's sampling over the model's defaults), and the parser for
    /// its output.
    pub fn generation(
        &self,
        request: &ChatRequest,
    ) -> Result<(Generation, Box<dyn StreamParser + Send>), Failure> {
        let sampling = sampling(request).or(&self.sampling);
        let prepared = self.prepare(request)?;
        let generation = Generation {
            prompt: prepared.prompt,
            constraint: prepared.constraint,
            stop: prepared.stop,
            sampling,
        };
        Ok((generation, prepared.parser))
    }

    /// [`Self::prepare`] before the model's own stop strings.
    fn prepare_in_dialect(&self, request: &ChatRequest) -> Result<Prepared, Failure> {
        let template = self.templates.for_request(request);
        Ok(answer_format::prepare(self.dialect()?, request, template)?)
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
    /// The Jinja templates of `source` (the engine's model's where it names none) and the
    /// dialect for them.
    fn hugging_face(
        source: TemplateSource,
        engine: &dyn Engine,
        registry: &Registry,
        dialect: Option<&str>,
    ) -> Result<(Templates, &'static str), ServerError> {
        let source = with_model_tokens(source, engine);
        let default_text = source
            .select(None)
            .map_err(|_| ServerError::from(ServerErrorKind::NoTemplate))?;
        let dialect = choose_dialect(registry, dialect, default_text)?;
        let templates = Templates::compile(&source).map_err(template_error)?;
        Ok((templates, dialect))
    }

    fn ollama(source: &OllamaSource) -> Result<Templates, TemplateError> {
        Ok(Templates {
            default: ChatTemplate::ollama(source)?,
            tool_use: None,
            text: source.template.clone(),
        })
    }

    fn compile(source: &TemplateSource) -> Result<Templates, TemplateError> {
        let default = ChatTemplate::from_source(source, None, false)?;
        let tool_use = source
            .named
            .iter()
            .any(|(name, _)| name == "tool_use")
            .then(|| ChatTemplate::from_source(source, None, true))
            .transpose()?;
        let text = source.select(None).unwrap_or_default().to_owned();
        Ok(Templates {
            default,
            tool_use,
            text,
        })
    }

    fn for_request(&self, request: &ChatRequest) -> &ChatTemplate {
        match &self.tool_use {
            Some(tool_use) if !request.tools().is_empty() => tool_use,
            _ => &self.default,
        }
    }
}

/// The Ollama template of an engine that serves an Ollama model (its server's Modelfile).
fn engine_modelfile(engine: &dyn Engine) -> Result<Option<OllamaSource>, ServerError> {
    let Some(text) = &engine.model().ollama_modelfile else {
        return Ok(None);
    };
    let origin = std::path::Path::new("/api/show");
    OllamaSource::from_modelfile_text(text, origin)
        .map(Some)
        .map_err(|error| ServerError::new(ServerErrorKind::EngineModelfile, "").with_source(error))
}

/// A chat template that cannot be compiled, because of `error`.
fn template_error(error: TemplateError) -> ServerError {
    ServerError::new(ServerErrorKind::Template, "").with_source(error)
}

/// `source`, with the engine's model's template when it has none at all and the model's
/// tokens wherever it names none (a bare Jinja file names none).
fn with_model_tokens(mut source: TemplateSource, engine: &dyn Engine) -> TemplateSource {
    let model = engine.model();
    if source.template.is_none() && source.named.is_empty() {
        source.template = model.chat_template.clone();
    }
    source.bos_token = source.bos_token.or_else(|| model.bos_token.clone());
    source.eos_token = source.eos_token.or_else(|| model.eos_token.clone());
    source
}

/// The dialect detected for `templates` (learned from them and added to `registry` where
/// their family has none), and why.
fn detected(registry: &mut Registry, templates: &Templates) -> (&'static str, Vec<String>) {
    let template = templates.tool_use.as_ref().unwrap_or(&templates.default);
    let chosen = detect::choose(&templates.text, template, registry);
    let why = chosen.explain(&templates.text);
    (chosen.register_into(registry), why)
}

/// The dialect called `named`, else the one detected from `template` (see the module
/// docs).
pub fn choose_dialect(
    registry: &Registry,
    named: Option<&str>,
    template: &str,
) -> Result<&'static str, ServerError> {
    let name = named.unwrap_or_else(|| detect::dialect_name(template));
    registry
        .get(name)
        .map(|dialect| dialect.name())
        .ok_or_else(|| {
            let known = registry.names().join(", ");
            let detail = format!("{name:?}; known dialects: {known}");
            ServerError::new(ServerErrorKind::UnknownDialect, detail)
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
    fn a_template_that_calls_in_an_unknown_syntax_gets_a_learned_dialect() {
        // HyperCLOVA X SEED Think's vLLM template: no hand-written family writes its calls.
        let unknown = include_str!(
            "../../dialect/tests/learned/templates/tool_chat_template_hyperclovax_seed_think_14b.jinja"
        );
        let templates = Templates {
            default: ChatTemplate::new(unknown, "", "").expect("compiles"),
            tool_use: None,
            text: unknown.to_owned(),
        };
        let mut registry = Registry::default();
        assert_eq!(
            choose_dialect(&registry, None, unknown).ok(),
            Some(detect::FALLBACK)
        );
        let (name, why) = detected(&mut registry, &templates);
        assert_eq!(name, "learned");
        assert!(registry.get("learned").is_some());
        assert!(
            why.iter().any(|line| line.starts_with("opening marker: ")),
            "{why:?}"
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
