//! The `Dialect` trait: what turns an OpenAI request and a model's chat template into the
//! prompt, the constraint and the parser of one generation.
//!
//! Every dialect answers the same three questions, so the server never needs to know which
//! family it is talking to: what text does the model see ([`Prepared::prompt`]), which
//! outputs may it produce ([`Prepared::constraint`]: a grammar of the family's call syntax
//! over the tools' schemas, lazy until a trigger unless `tool_choice` forces a call), and
//! how is its output read back ([`Prepared::parser`], a fresh [`StreamParser`]). Keeping
//! the three in one value keeps them consistent: the grammar admits exactly what the parser
//! reads, and the parser knows how the prompt ended (inside `<think>`, say).

use std::sync::OnceLock;

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Message, Tool};
use toolbridge_grammar::schema::{self, Options};
pub use toolbridge_grammar::Constraint;
use toolbridge_grammar::{check, GrammarError};
use toolbridge_template::gotmpl::{Message as OllamaMessage, RequestError};
use toolbridge_template::{
    GoTemplate, JinjaTemplate, OllamaRequest, OllamaSource, SourceError, TemplateError,
    TemplateSource,
};

use crate::parser::StreamParser;
use crate::probe::TemplateCaps;

/// What rendering a prompt needs: the model's compiled chat template and the texts of its
/// special tokens, which Jinja templates print as `{{ bos_token }}` and `{{ eos_token }}`.
///
/// A template is Jinja, run as `transformers` runs it, or an Ollama Go template, run as
/// Ollama's server runs a chat (with its Modelfile's `SYSTEM` and `MESSAGE`s added as
/// Ollama adds them). Dialects only hand it a conversation in OpenAI's shape, so they
/// work over either.
pub struct ChatTemplate {
    renderer: Renderer,
    pub bos_token: String,
    pub eos_token: String,
    /// What the template can render, probed on first use (a dozen renders) and kept.
    caps: OnceLock<TemplateCaps>,
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
    ) -> Result<ChatTemplate, DialectError> {
        let template = JinjaTemplate::new(source).map_err(DialectError::Template)?;
        Ok(ChatTemplate::jinja(template, bos_token, eos_token))
    }

    /// A compiled Jinja template with the texts of its special tokens.
    pub fn jinja(
        template: JinjaTemplate,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> ChatTemplate {
        ChatTemplate {
            renderer: Renderer::Jinja(template),
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
            caps: OnceLock::new(),
        }
    }

    /// An Ollama model's Go template, rendered with its Modelfile's default system
    /// prompt and example messages. Go templates print no special-token variables.
    pub fn ollama(source: &OllamaSource) -> Result<ChatTemplate, DialectError> {
        let template = GoTemplate::new(&source.template).map_err(DialectError::Template)?;
        Ok(ChatTemplate {
            renderer: Renderer::Ollama {
                template,
                system: source.system.clone(),
                messages: source.messages.clone(),
            },
            bos_token: String::new(),
            eos_token: String::new(),
            caps: OnceLock::new(),
        })
    }

    /// The template of a model as shipped: the one called `name`, else the default (or
    /// `tool_use` when `has_tools`, as `transformers` chooses), with the model's tokens;
    /// a token the model does not name is the empty string.
    pub fn from_source(
        source: &TemplateSource,
        name: Option<&str>,
        has_tools: bool,
    ) -> Result<ChatTemplate, DialectError> {
        let text = source
            .select_for(name, has_tools)
            .map_err(DialectError::Source)?;
        ChatTemplate::new(
            text,
            source.bos_token.clone().unwrap_or_default(),
            source.eos_token.clone().unwrap_or_default(),
        )
    }

    /// What the template can render ([`TemplateCaps::probe`]), probed once.
    pub fn caps(&self) -> &TemplateCaps {
        self.caps.get_or_init(|| TemplateCaps::probe(self))
    }

    /// Renders the template with `input` and the special tokens.
    pub fn render(&self, input: &RenderInput<'_>) -> Result<String, DialectError> {
        let mut context = Map::new();
        context.insert("messages".into(), Value::Array(input.messages.clone()));
        if !input.tools.is_empty() {
            let tools = serde_json::to_value(input.tools).map_err(json_error("the tools"))?;
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
    pub fn render_context(&self, mut context: Map<String, Value>) -> Result<String, DialectError> {
        match &self.renderer {
            Renderer::Jinja(template) => {
                context.insert("bos_token".into(), self.bos_token.clone().into());
                context.insert("eos_token".into(), self.eos_token.clone().into());
                template
                    .render(&Value::Object(context))
                    .map_err(DialectError::Template)
            }
            Renderer::Ollama {
                template,
                system,
                messages,
            } => {
                let request = OllamaRequest::from_json(&Value::Object(context))
                    .map_err(DialectError::OllamaRequest)?
                    .with_model_defaults(system.as_deref(), messages);
                template.render(&request).map_err(DialectError::Template)
            }
        }
    }
}

/// Everything one generation needs, made by [`Dialect::prepare`].
pub struct Prepared {
    /// The full prompt text, special tokens written as text.
    pub prompt: String,
    /// `None` when the output is free (no tools, or `tool_choice: "none"`).
    pub constraint: Option<Constraint>,
    /// Stop strings: the request's, and any the dialect needs beyond the model's
    /// end-of-generation tokens.
    pub stop: Vec<String>,
    /// A fresh parser for this generation's output.
    pub parser: Box<dyn StreamParser + Send>,
}

/// One family of models: how its prompt is made and its output read.
pub trait Dialect: Send + Sync {
    /// The name the registry knows it by.
    fn name(&self) -> &'static str;

    /// The prompt, constraint, stops and parser for `request` on a model with `template`.
    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError>;

    /// A fresh parser for output that was generated without [`Dialect::prepare`] (parsing
    /// stored output, say).
    fn parser(&self) -> Box<dyn StreamParser + Send>;

    /// The two parts of the prompt, for dialects that describe tools in a system prompt of
    /// their own (the prompt styles); `None` where the template describes them itself.
    fn prompt_parts(&self) -> Option<&dyn PromptParts> {
        None
    }

    /// Whether the dialect carries `response_format` in its own prompt and grammar (the
    /// prompt styles do); otherwise [`crate::answer_format::prepare`] adds it where the
    /// answer is free.
    fn formats_answers(&self) -> bool {
        false
    }
}

/// A prompt made of two parts, as seed 000 prints them apart: the system prompt a dialect
/// injects, and the conversation the template renders without it.
pub trait PromptParts {
    /// The system prompt injected for `request`, if any.
    fn system_prompt(&self, request: &ChatRequest) -> Result<Option<String>, DialectError>;

    /// The conversation rendered without the injected system prompt.
    fn conversation(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<String, DialectError>;
}

/// Why a request could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum DialectError {
    #[error("chat template: {0}")]
    Template(TemplateError),
    #[error(transparent)]
    Source(SourceError),
    #[error("chat template: {0}")]
    OllamaRequest(RequestError),
    #[error("tool {name:?}: its parameters schema cannot be enforced: {message}")]
    ToolSchema { name: String, message: String },
    #[error("Invalid 'response_format': the schema cannot be enforced: {message}")]
    ResponseFormat { message: String },
    #[error("tool_choice names {name:?}, which is not among the request's tools")]
    UnknownTool { name: String },
    #[error("tool_choice requires a call, but the request has no tools it allows")]
    NoCallableTools,
    #[error("cannot write {what} as JSON: {source}")]
    Json {
        what: &'static str,
        source: serde_json::Error,
    },
}

/// `{"name": <this tool's name>, "arguments": <its parameters>}`, nothing else.
pub fn call_schema(tool: &Tool) -> Result<Value, DialectError> {
    Ok(json!({
        "type": "object",
        "properties": {
            "name": {"const": tool.name()},
            "arguments": checked_parameters(tool)?,
        },
        "required": ["name", "arguments"],
        "additionalProperties": false,
    }))
}

/// A tool's `parameters`, checked to compile both ways a call grammar is enforced: to our
/// grammar (printed as GBNF for llama.cpp servers) and by llguidance as the in-process
/// engine compiles it, so a schema either cannot enforce fails the request with the tool's
/// name rather than in the engine. A tool without parameters takes the empty object.
pub fn checked_parameters(tool: &Tool) -> Result<Value, DialectError> {
    let parameters = tool.function.parameters.clone().unwrap_or_else(
        || json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    let refused = |error: GrammarError| DialectError::ToolSchema {
        name: tool.name().to_string(),
        message: error.to_string(),
    };
    schema::compile(&parameters, &Options::default()).map_err(refused)?;
    check::engine_accepts_schema(&parameters).map_err(refused)?;
    Ok(parameters)
}

/// The messages as JSON, as templates read them.
pub fn messages_json(messages: &[Message]) -> Result<Vec<Value>, DialectError> {
    messages
        .iter()
        .map(|message| serde_json::to_value(message).map_err(json_error("a message")))
        .collect()
}

fn json_error(what: &'static str) -> impl Fn(serde_json::Error) -> DialectError {
    move |source| DialectError::Json { what, source }
}
