//! Checks a request must pass before anything renders or generates from it, as OpenAI
//! makes them and with its wording ([`refusal`]).
//!
//! Parsing accepts anything of the right shape; these are the checks on values and across
//! fields that, skipped, turn into silent misbehaviour or wasted work later: a role the
//! template does not know, a tool result with no call before it, a `tool_choice` naming a
//! tool the request does not declare, a tool name no grammar should have to force. Where
//! toolbridge is deliberately more lenient than OpenAI, the module that makes the check
//! says so (and the README lists it).

mod fields;
mod messages;
mod refusal;
mod tools;

use crate::error::ApiError;
use crate::request::ChatRequest;
use crate::tool_choice::ToolChoice;

impl ChatRequest {
    /// Checks the request as OpenAI does before generating; the error names the parameter
    /// at fault.
    pub fn validate(&self) -> Result<(), ApiError> {
        messages::check(&self.messages)?;
        tools::check(self.tools())?;
        if let Some(choice) = &self.tool_choice {
            self.check_tool_choice(choice)?;
        }
        fields::check(self)
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
