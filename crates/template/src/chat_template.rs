//! The chat template a dialect renders through: a model's Jinja template (run as
//! `transformers` runs it) or Ollama Go template (run as Ollama's server runs a chat), with
//! the texts of its special tokens, behind one `render` that takes a conversation in
//! OpenAI's shape. Dialects only ever hand it such a conversation, so every dialect works
//! over either kind of template.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use toolbridge_chat::Tool;

use crate::caps::{Probed, TemplateCaps};
use crate::error::in_chat_template;
use crate::gotmpl::Message as OllamaMessage;
use crate::{
    GoTemplate, JinjaTemplate, OllamaRequest, OllamaSource, TemplateError, TemplateErrorKind,
    TemplateSource,
};

/// What rendering a prompt needs: the model's compiled chat template and the texts of its
/// special tokens, which Jinja templates print as `{{ bos_token }}` and `{{ eos_token }}`.
///
/// A template is Jinja, run as `transformers` runs it, or an Ollama Go template, run as
/// Ollama's server runs a chat (with its Modelfile's `SYSTEM` and `MESSAGE`s added as
/// Ollama adds them). Dialects only hand it a conversation in OpenAI's shape, so they
/// work over either.
pub struct ChatTemplate {
    renderer: Arc<Renderer>,
    pub bos_token: String,
    pub eos_token: String,
    /// What the template can render, probed on first use (a dozen renders) and kept.
    caps: Arc<OnceLock<TemplateCaps>>,
    /// Variables the template sees beside `messages`, `tools` and the special tokens:
    /// a request's `chat_template_kwargs`.
    variables: Map<String, Value>,
}

enum Renderer {
    Jinja(JinjaTemplate),
    Ollama {
        template: GoTemplate,
        system: Option<String>,
        messages: Vec<OllamaMessage>,
    },
}

/// What a template is rendered with, as `transformers`' `apply_chat_template` passes it.
#[derive(Debug, Clone)]
pub struct RenderInput<'a> {
    /// The conversation, each message as JSON.
    pub messages: Vec<Value>,
    /// The tools as OpenAI sends them (`{"type": "function", "function": {…}}`); empty
    /// leaves `tools` undefined, as `transformers` does for `tools=None`.
    pub tools: &'a [Tool],
    pub add_generation_prompt: bool,
}

impl ChatTemplate {
    /// Compiles the Jinja `source`; `bos_token` and `eos_token` are what the template
    /// prints for them.
    pub fn new(
        source: &str,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> Result<ChatTemplate, TemplateError> {
        let template = JinjaTemplate::new(source).map_err(in_chat_template)?;
        Ok(ChatTemplate::jinja(template, bos_token, eos_token))
    }

    /// A compiled Jinja template with the texts of its special tokens.
    pub fn jinja(
        template: JinjaTemplate,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> ChatTemplate {
        ChatTemplate {
            renderer: Arc::new(Renderer::Jinja(template)),
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
            caps: Arc::default(),
            variables: Map::new(),
        }
    }

    /// An Ollama model's Go template, rendered with its Modelfile's default system
    /// prompt and example messages. Go templates print no special-token variables.
    pub fn ollama(source: &OllamaSource) -> Result<ChatTemplate, TemplateError> {
        let template = GoTemplate::new(&source.template).map_err(in_chat_template)?;
        Ok(ChatTemplate {
            renderer: Arc::new(Renderer::Ollama {
                template,
                system: source.system.clone(),
                messages: source.messages.clone(),
            }),
            bos_token: String::new(),
            eos_token: String::new(),
            caps: Arc::default(),
            variables: Map::new(),
        })
    }

    /// The template of a model as shipped: the one called `name`, else the default (or
    /// `tool_use` when `has_tools`, as `transformers` chooses), with the model's tokens;
    /// a token the model does not name is the empty string.
    pub fn from_source(
        source: &TemplateSource,
        name: Option<&str>,
        has_tools: bool,
    ) -> Result<ChatTemplate, TemplateError> {
        let text = source.select_for(name, has_tools)?;
        ChatTemplate::new(
            text,
            source.bos_token.clone().unwrap_or_default(),
            source.eos_token.clone().unwrap_or_default(),
        )
    }

    /// This template, its renders seeing `variables` too: a request's
    /// `chat_template_kwargs` (`enable_thinking`, `reasoning_effort`, any key), as vLLM and
    /// llama.cpp's server pass them. The compiled template and its probed caps are shared,
    /// not copied. A variable never replaces what the render itself passes (`messages`,
    /// `tools`, the special tokens). Ollama's Go templates read no such variables.
    pub fn with_variables(&self, variables: &Map<String, Value>) -> ChatTemplate {
        ChatTemplate {
            renderer: Arc::clone(&self.renderer),
            bos_token: self.bos_token.clone(),
            eos_token: self.eos_token.clone(),
            caps: Arc::clone(&self.caps),
            variables: variables.clone(),
        }
    }

    /// What the template can render ([`TemplateCaps::probe`]), probed once.
    pub fn caps(&self) -> &TemplateCaps {
        self.caps.get_or_init(|| TemplateCaps::probe(self))
    }

    /// Renders the template with `input` and the special tokens.
    pub fn render(&self, input: &RenderInput<'_>) -> Result<String, TemplateError> {
        let mut context = Map::new();
        context.insert("messages".into(), Value::Array(input.messages.clone()));
        if !input.tools.is_empty() {
            let tools = serde_json::to_value(input.tools).map_err(|error| {
                TemplateError::new(TemplateErrorKind::Json, "cannot write the tools as JSON")
                    .with_source(error)
            })?;
            context.insert("tools".into(), tools);
        }
        context.insert(
            "add_generation_prompt".into(),
            input.add_generation_prompt.into(),
        );
        self.render_context(context)
    }

    /// Renders a Jinja context (`messages`, `tools`, `add_generation_prompt`, …) with the
    /// special tokens added. An Ollama template reads its `messages` and `tools` as
    /// Ollama reads a chat request; Ollama always renders a chat to be continued by the
    /// assistant, so it has no `add_generation_prompt` to turn off.
    pub fn render_context(&self, mut context: Map<String, Value>) -> Result<String, TemplateError> {
        match self.renderer.as_ref() {
            Renderer::Jinja(template) => {
                context.insert("bos_token".into(), self.bos_token.clone().into());
                context.insert("eos_token".into(), self.eos_token.clone().into());
                for (name, value) in &self.variables {
                    context.entry(name.clone()).or_insert_with(|| value.clone());
                }
                template
                    .render(&Value::Object(context))
                    .map_err(in_chat_template)
            }
            Renderer::Ollama {
                template,
                system,
                messages,
            } => {
                let request = OllamaRequest::from_json(&Value::Object(context))
                    .map_err(in_chat_template)?
                    .with_model_defaults(system.as_deref(), messages);
                template.render(&request).map_err(in_chat_template)
            }
        }
    }
}

impl Probed for ChatTemplate {
    fn render_probe(&self, context: Map<String, Value>) -> Option<String> {
        self.render_context(context).ok()
    }
}
