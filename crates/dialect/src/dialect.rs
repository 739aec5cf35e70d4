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

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, Message, Tool};
use toolbridge_grammar::schema::{self, Options};
pub use toolbridge_grammar::Constraint;
use toolbridge_grammar::{check, GrammarError};
pub use toolbridge_template::{ChatTemplate, RenderInput};

use crate::error::{json_error, DialectError, DialectErrorKind};
use crate::parser::StreamParser;
use crate::toolkit::typed_args;

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

/// `{"name": <this tool's name>, "arguments": <its parameters>}`, nothing else.
pub fn call_schema(tool: &Tool) -> Result<Value, DialectError> {
    call_object(tool, ("name", "arguments"), None)
}

/// One call as a JSON object: the tool's name (a constant) under `name_key` and its
/// parameters under `arguments_key`, both required, after an optional string `id`. The
/// parameters' `$ref`s are re-rooted under `arguments_key` ([`schema::nest`]), so
/// `$defs`, draft 7's `definitions` and recursive schemas still resolve.
pub fn call_object(
    tool: &Tool,
    (name_key, arguments_key): (&str, &str),
    id: Option<&str>,
) -> Result<Value, DialectError> {
    let mut properties = serde_json::Map::new();
    if let Some(id) = id {
        properties.insert(id.into(), json!({"type": "string"}));
    }
    properties.insert(name_key.into(), json!({"const": tool.name()}));
    let at = format!("/properties/{}", pointer_token(arguments_key));
    properties.insert(
        arguments_key.into(),
        schema::nest(&checked_parameters(tool)?, &at),
    );
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": [name_key, arguments_key],
        "additionalProperties": false,
    }))
}

/// `key` as one token of a JSON pointer.
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A tool's `parameters`, checked to compile both ways a call grammar is enforced: to our
/// grammar (printed as GBNF for llama.cpp servers) and by llguidance as the in-process
/// engine compiles it, so a schema either cannot enforce fails the request with the tool's
/// name rather than in the engine. A tool without parameters takes the empty object.
pub fn checked_parameters(tool: &Tool) -> Result<Value, DialectError> {
    let parameters = tool.function.parameters.clone().unwrap_or_else(
        || json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    let refused = |error: GrammarError| {
        let detail = format!(
            "tool {:?}: its parameters schema cannot be enforced",
            tool.name()
        );
        DialectError::new(DialectErrorKind::ToolSchema, detail).with_source(error)
    };
    schema::compile(&parameters, &Options::default()).map_err(refused)?;
    check::engine_accepts_schema(&parameters).map_err(refused)?;
    Ok(parameters)
}

/// A tool's declared parameters in schema order, each with its schema and whether it is
/// required: what a grammar that writes arguments one by one walks. A `$ref` is replaced
/// by its target, as the parser reads the value (`toolkit::typed_args`), and each schema
/// stands alone: one that still refers into the parameters (a recursive node) carries
/// them ([`schema::detached`]).
pub fn declared_parameters(tool: &Tool) -> Result<Vec<(String, Value, bool)>, DialectError> {
    let parameters = checked_parameters(tool)?;
    let required = |key: &str| {
        parameters
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|name| name == key))
    };
    let properties = parameters.get("properties").and_then(Value::as_object);
    Ok(properties
        .into_iter()
        .flatten()
        .map(|(key, schema)| {
            let target = typed_args::resolved(schema, &parameters, 0);
            let alone = schema::detached(&parameters, &target);
            (key.clone(), alone, required(key))
        })
        .collect())
}

/// The strings `schema`'s `enum` allows, where it allows only strings.
pub fn string_enum(schema: &Value) -> Option<Vec<&str>> {
    schema
        .get("enum")?
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect()
}

/// The messages as JSON, as templates read them.
pub fn messages_json(messages: &[Message]) -> Result<Vec<Value>, DialectError> {
    messages
        .iter()
        .map(|message| serde_json::to_value(message).map_err(json_error("a message")))
        .collect()
}

/// The tools as JSON, as OpenAI sends them.
pub fn tools_json(tools: &[Tool]) -> Result<Value, DialectError> {
    serde_json::to_value(tools).map_err(json_error("the tools"))
}
