//! Checks a request must pass before anything renders or generates from it.
//!
//! Parsing accepts anything of the right shape; these are the checks across fields that
//! OpenAI makes and that, skipped, turn into silent misbehaviour later: a `tool_choice` that
//! names a tool the request does not declare would otherwise be ignored or force a call no
//! grammar can express.

use crate::error::ApiError;
use crate::request::ChatRequest;
use crate::tool_choice::ToolChoice;

impl ChatRequest {
    /// Checks the request as OpenAI does before generating; the error names the parameter
    /// at fault.
    pub fn validate(&self) -> Result<(), ApiError> {
        if self.messages.is_empty() {
            return Err(ApiError::invalid_request(
                "Invalid 'messages': empty array. Expected an array with at least one message.",
            )
            .with_param("messages")
            .with_code("empty_array"));
        }
        match &self.tool_choice {
            Some(choice) => self.check_tool_choice(choice),
            None => Ok(()),
        }
    }

    /// A choice that calls tools needs tools, and may only name declared ones.
    fn check_tool_choice(&self, choice: &ToolChoice) -> Result<(), ApiError> {
        let invalid =
            |message: String| Err(ApiError::invalid_request(message).with_param("tool_choice"));
        if self.tools().is_empty() && choice.requires_call() {
            return invalid(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
                    .to_owned(),
            );
        }
        let names = choice.allowed_names().unwrap_or_default();
        match names.into_iter().find(|name| self.tool(name).is_none()) {
            Some(unknown) => invalid(format!(
                "Invalid value for 'tool_choice': no function named '{unknown}' is declared in 'tools'."
            )),
            None => Ok(()),
        }
    }
}
