//! The `short` style: the tools listed as JSON, with one line of introduction and no word
//! on how to call them (the grammar and the calls in the history show that). Seed 000's
//! `TOOLS_SHORT`.

use serde_json::Value;

use crate::toolkit::prompt_style::{PromptStyle, ToolsPrompt};
use crate::toolkit::prompt_text::tools_block;
use crate::toolkit::tagged_calls::TaggedCalls;

/// The `short` style's system prompt.
#[derive(Debug, Clone, Copy, Default)]
pub struct Short;

impl ToolsPrompt for Short {
    fn name(&self) -> &'static str {
        "short"
    }

    fn describe(&self, tools: &[Value], _answer: Option<&Value>) -> String {
        format!("Here are the tools available:\n{}", tools_block(tools))
    }
}

/// The `short` dialect: its prompt, calls in `<tool_call>` tags.
pub fn dialect() -> PromptStyle<Short> {
    PromptStyle::new(Short, &TaggedCalls::PLAIN)
}
