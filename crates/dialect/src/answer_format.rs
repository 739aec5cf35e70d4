//! `response_format`: the JSON an answer must be, and the one way every request is prepared
//! with it.
//!
//! The prompt styles carry the answer's schema in their own syntax (their grammar joins
//! the calls and the answer), so they read it here and do the rest themselves
//! ([`Dialect::formats_answers`]). A native dialect constrains only its tool calls; when no
//! call is possible (no tools, or `tool_choice: "none"`) and the request asks for JSON,
//! [`prepare`] makes the answer's schema the constraint, from the first byte. A model
//! forced into a schema it was never shown writes poorer values, so the schema is also put
//! in the system prompt, in the words the prompt styles use ("Please respond in JSON format
//! with the following schema: …"). A bare `json_object` has no schema to show: as with
//! OpenAI, asking for JSON in the prompt is then the client's part.
//!
//! When tools may be called, the dialect's call grammar wins and the answer text stays
//! free. The decision is made before the dialect prepares, so a request is prepared once,
//! and the server and `toolbridge render --request` both go through [`prepare`]: what the
//! command shows is what the server sends. It is also where every request's messages are
//! given the shapes the template takes (`crate::shapes`), before any dialect reads them.

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, ResponseFormat};
use toolbridge_grammar::schema::{self, Options};
use toolbridge_grammar::{check, Constraint, Expr, Grammar, GrammarError};

use crate::dialect::{ChatTemplate, Dialect, Prepared};
use crate::error::{DialectError, DialectErrorKind};
use crate::shapes::fit_request;
use crate::toolkit::choice::Choice;
use crate::toolkit::prompt_text::{pretty_json, with_system_prompt};

/// The JSON an answer must be, from `response_format`.
pub struct AnswerFormat {
    schema: Value,
    /// Whether the schema came from the client (and is worth showing the model).
    given: bool,
}

impl AnswerFormat {
    /// The request's JSON answer format; `None` for free text. `json_object` and a
    /// `json_schema` without a schema ask for any object. A schema either grammar cannot
    /// enforce (ours, or llguidance's as the in-process engine compiles it) is refused here.
    pub fn of(request: &ChatRequest) -> Result<Option<AnswerFormat>, DialectError> {
        let given = match request.response_format.as_ref() {
            None | Some(ResponseFormat::Text { .. }) => return Ok(None),
            Some(format) => format.schema().cloned(),
        };
        let format = AnswerFormat {
            given: given.is_some(),
            schema: given.unwrap_or_else(|| json!({"type": "object"})),
        };
        let refused = |error: GrammarError| {
            DialectError::new(DialectErrorKind::ResponseFormat, "").with_source(error)
        };
        schema::compile(&format.schema, &Options::default()).map_err(refused)?;
        check::engine_accepts_schema(&format.schema).map_err(refused)?;
        Ok(Some(format))
    }

    /// The schema the answer follows.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The instruction that shows the model the client's schema; `None` for a bare
    /// `json_object`.
    pub fn instruction(&self) -> Option<String> {
        self.given.then(|| schema_instruction(&self.schema))
    }

    /// One JSON value following the schema, from the first byte.
    pub fn constraint(&self) -> Constraint {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("root", Expr::Json(self.schema.clone()));
        Constraint::new(grammar, Vec::new(), false)
    }
}

/// The seed's instruction for a response schema, the schema printed as Python's
/// `json.dumps(schema, indent=2)`.
pub fn schema_instruction(schema: &Value) -> String {
    format!(
        "Please respond in JSON format with the following schema: {}",
        pretty_json(schema)
    )
}

/// `request` prepared by `dialect`: each message in the shape the template takes
/// ([`fit_request`]), the template sees the request's `chat_template_kwargs`, and the
/// answer follows its `response_format` where the dialect leaves the answer free and no
/// call is possible. The server and `render --request` prepare every request here.
pub fn prepare(
    dialect: &dyn Dialect,
    request: &ChatRequest,
    template: &ChatTemplate,
) -> Result<Prepared, DialectError> {
    let with_variables;
    let template = match request.chat_template_kwargs() {
        Some(variables) => {
            with_variables = template.with_variables(variables);
            &with_variables
        }
        None => template,
    };
    let fitted = fit_request(request, template.caps())?;
    let request = fitted.as_ref();
    let format = AnswerFormat::of(request)?;
    let Some(format) = format.filter(|_| !dialect.formats_answers()) else {
        return dialect.prepare(request, template);
    };
    if !Choice::of(request)?.callable.is_empty() {
        return dialect.prepare(request, template);
    }
    let mut prepared = match format.instruction() {
        Some(text) => {
            let instructed = ChatRequest {
                messages: with_system_prompt(&request.messages, &text),
                ..request.clone()
            };
            dialect.prepare(&instructed, template)?
        }
        None => dialect.prepare(request, template)?,
    };
    prepared.constraint = Some(format.constraint());
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(format: Value) -> ChatRequest {
        serde_json::from_value(json!({
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": format,
        }))
        .expect("a request")
    }

    #[test]
    fn text_is_free() {
        let format = AnswerFormat::of(&request(json!({"type": "text"}))).expect("fine");
        assert!(format.is_none());
    }

    #[test]
    fn a_bare_json_object_is_any_object_and_not_shown() {
        let request = request(json!({"type": "json_object"}));
        let format = AnswerFormat::of(&request).expect("fine").expect("json");
        assert!(format.instruction().is_none());
        let constraint = format.constraint();
        assert!(!constraint.is_lazy());
        assert_eq!(
            constraint.grammar().rule("root").map(|rule| &rule.body),
            Some(&Expr::Json(json!({"type": "object"})))
        );
    }

    #[test]
    fn a_schema_is_shown_in_the_instruction() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let request = request(json!({
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema},
        }));
        let format = AnswerFormat::of(&request).expect("fine").expect("json");
        let instruction = format.instruction().expect("a schema to show");
        assert!(instruction.starts_with("Please respond in JSON format"));
    }

    #[test]
    fn an_unenforceable_schema_is_refused() {
        for schema in [
            json!({"$ref": "#/nowhere"}),
            json!({"type": "no such type"}),
            json!({"type": "object", "properties": {"a": {"minimum": "zero"}}}),
        ] {
            let request = request(json!({
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": schema},
            }));
            let refused = AnswerFormat::of(&request).err().expect("refused");
            assert!(
                refused.kind() == &DialectErrorKind::ResponseFormat,
                "{schema}"
            );
        }
    }
}
