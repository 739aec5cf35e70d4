//! Ling 3 (inclusionAI): GLM's calls (`<tool_call>name<arg_key>k</arg_key><arg_value>v
//! </arg_value></tool_call>`) in turns of its own, `<role>ASSISTANT</role>…<|role_end|>`.
//!
//! Two things set it apart from [`XmlCalls::Glm`], whose grammar, markers and prompt it
//! otherwise takes whole:
//! - a turn ends with `<|role_end|>`, which a model may write: layout;
//! - its generation prompt leaves `<think>` open, and the model may call without closing
//!   it (`I need the time.\n<tool_call>get_time…`): as llama.cpp reads it, a call's
//!   marker ends that reasoning too, and the call is read.

use toolbridge_chat::Tool;
use toolbridge_grammar::{Grammar, Trigger};

use crate::dialect::DialectError;
use crate::dialects::framed_native::{Native, Start};
use crate::dialects::xml_calls::XmlCalls;
use crate::toolkit::framed::Action;

const ROLE_END: &str = "<|role_end|>";

/// The Ling 3 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ling;

impl Native for Ling {
    fn name(&self) -> &'static str {
        "ling"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        XmlCalls::Glm.grammar(tools, parallel, forced)
    }

    fn triggers(&self) -> Vec<Trigger> {
        XmlCalls::Glm.triggers()
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let mut markers = XmlCalls::Glm.markers(tools);
        markers.push((ROLE_END.into(), Action::Layout));
        markers
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        XmlCalls::Glm.start(prompt)
    }

    /// Ling calls before it closes the reasoning its prompt left open (`plan\n<tool_call>…`).
    fn calls_end_reasoning(&self) -> bool {
        true
    }

    fn call_example(&self) -> Option<&'static str> {
        XmlCalls::Glm.call_example()
    }

    fn stops(&self) -> Vec<String> {
        vec![ROLE_END.into()]
    }
}
