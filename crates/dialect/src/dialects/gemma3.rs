//! Gemma 3 with vLLM's pythonic tool template: the template shows the tools and asks for
//! "a python list of the function calls", and the model answers with a bare list in its
//! content, `[get_weather(city="Paris")]`, read as Llama 3.2's zero-shot lists are
//! ([`Llama3Parser`]) with the same grammar ([`pythonic::prepared`]). Results go back as
//! the template writes them (`<tool_response>` in a user turn).
//!
//! The template writes a past call's arguments without commas between them (its `first`
//! flag is reset in every loop iteration): [`crate::toolkit::pycall`] reads those too.

use serde_json::Map;
use toolbridge_chat::ChatRequest;

use crate::dialect::{ChatTemplate, Dialect, DialectError, Prepared};
use crate::dialects::llama3_parser::Llama3Parser;
use crate::dialects::prep::{history, render};
use crate::dialects::pythonic;
use crate::parser::StreamParser;
use crate::toolkit::choice::Choice;

/// The Gemma 3 pythonic dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemma3Pythonic;

impl Dialect for Gemma3Pythonic {
    fn name(&self) -> &'static str {
        "gemma3_pythonic"
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let messages = history(request)?;
        let prompt = render(template, &messages, choice.shown, Map::new())?;
        pythonic::prepared(request, &choice, prompt)
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(Llama3Parser::new())
    }
}
