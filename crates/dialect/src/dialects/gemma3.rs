//! Gemma 3 with vLLM's pythonic tool template: the template shows the tools and asks for
//! "a python list of the function calls", and the model answers with a bare list in its
//! content, `[get_weather(city="Paris")]`, read as Llama 3.2's zero-shot lists are
//! ([`llama3::markers`], argument types restored from the schemas) with the same grammar
//! ([`list_grammar`]). Results go back as the template writes them (`<tool_response>` in a
//! user turn).
//!
//! The template writes a past call's arguments without commas between them (its `first`
//! flag is reset in every loop iteration): [`crate::toolkit::pycall`] reads those too.

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Grammar, Trigger};

use crate::dialect::DialectError;
use crate::dialects::framed_native::Native;
use crate::dialects::llama3;
use crate::dialects::prep::history;
use crate::dialects::pythonic::{list_grammar, list_triggers};
use crate::toolkit::framed::Action;
use crate::toolkit::typed_args::ParameterTypes;

/// The Gemma 3 pythonic dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemma3Pythonic;

impl Native for Gemma3Pythonic {
    fn name(&self) -> &'static str {
        "gemma3_pythonic"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        list_grammar(tools, parallel)
    }

    fn triggers(&self) -> Vec<Trigger> {
        self.triggers_for(&[])
    }

    fn triggers_for(&self, tools: &[&Tool]) -> Vec<Trigger> {
        list_triggers(tools)
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        llama3::markers(ParameterTypes::new(tools))
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        Ok(vec![history(request)?])
    }
}
