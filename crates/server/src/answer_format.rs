//! `response_format` for dialects that leave the answer free.
//!
//! Dialects own their constraint: the prompt styles already turn a `response_format`
//! schema into their grammar. A native dialect such as Hermes constrains only its tool
//! calls, so when it prepares no constraint at all (no tools, or `tool_choice: "none"`)
//! and the request asks for JSON, the answer's schema becomes the constraint, from the
//! first byte. A model that is forced into a schema it was never shown writes poorer
//! values, so the schema is also put in the system prompt, in the words the prompt styles
//! use ("Please respond in JSON format with the following schema: …"). A bare
//! `json_object` has no schema to show: as with OpenAI, asking for JSON in the prompt is
//! then the client's part.
//!
//! When tools may be called, the dialect's call grammar wins and the answer text stays
//! free: joining the two grammars is the dialect's business, not the server's.

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, ResponseFormat};
use toolbridge_dialect::dialects::styles::{schema_instruction, with_system_prompt};
use toolbridge_grammar::schema::{self, Options};
use toolbridge_grammar::{Constraint, Expr, Grammar};

use crate::error::Failure;

/// The JSON an answer must be, from `response_format`.
pub struct AnswerFormat {
    schema: Value,
    /// Whether the schema came from the client (and is worth showing the model).
    given: bool,
}

impl AnswerFormat {
    /// The request's JSON answer format; `None` for free text. A schema the grammar
    /// cannot enforce is refused here, naming `response_format`.
    pub fn of(request: &ChatRequest) -> Result<Option<AnswerFormat>, Failure> {
        let given = match request.response_format.as_ref() {
            None | Some(ResponseFormat::Text { .. }) => return Ok(None),
            Some(format) => format.schema().cloned(),
        };
        let format = AnswerFormat {
            given: given.is_some(),
            schema: given.unwrap_or_else(|| json!({"type": "object"})),
        };
        schema::compile(&format.schema, &Options::default()).map_err(|error| {
            Failure::invalid(
                "response_format",
                format!("Invalid 'response_format': the schema cannot be enforced: {error}"),
            )
        })?;
        Ok(Some(format))
    }

    /// `request` with the schema in its system prompt, when there is a schema to show.
    pub fn instructed(&self, request: &ChatRequest) -> Option<ChatRequest> {
        self.given.then(|| ChatRequest {
            messages: with_system_prompt(&request.messages, &schema_instruction(&self.schema)),
            ..request.clone()
        })
    }

    /// One JSON value following the schema, from the first byte.
    pub fn constraint(self) -> Constraint {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("root", Expr::Json(self.schema));
        Constraint {
            grammar,
            triggers: Vec::new(),
            lazy: false,
        }
    }
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
        assert!(format.instructed(&request).is_none());
        let constraint = format.constraint();
        assert!(!constraint.lazy);
        assert_eq!(
            constraint.grammar.rule("root").map(|rule| &rule.body),
            Some(&Expr::Json(json!({"type": "object"})))
        );
    }

    #[test]
    fn a_schema_is_shown_in_the_system_prompt() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let request = request(json!({
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema},
        }));
        let format = AnswerFormat::of(&request).expect("fine").expect("json");
        let instructed = format.instructed(&request).expect("a schema to show");
        assert_eq!(instructed.messages.len(), 2);
        assert!(instructed.messages[0]
            .content_text()
            .starts_with("Please respond in JSON format"));
    }

    #[test]
    fn an_unenforceable_schema_is_refused() {
        let request = request(json!({
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": {"$ref": "#/nowhere"}},
        }));
        let failure = AnswerFormat::of(&request).err().expect("refused");
        assert_eq!(failure.error.param.as_deref(), Some("response_format"));
    }
}
