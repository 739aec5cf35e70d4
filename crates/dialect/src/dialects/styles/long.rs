//! The `long` style: the tools listed as JSON between a request to use them and an
//! example of the call syntax. Seed 000's `TOOLS_LONG`, word for word.

use serde_json::Value;

use super::tagged::TaggedCalls;
use super::{PromptStyle, ToolsPrompt};
use crate::toolkit::prompt_text::tools_block;

const INTRODUCTION: &str = "Call one or more functions to assist with the user query, every time this is possible. Don't make assumptions about what values to plug into functions. Here are the available tools:";

const HOW_TO_CALL: &str = "To call each function, give its name and arguments within <tool_call></tool_call> XML tags as follows:
<tool_call>
{\"name\": <function-name>, \"arguments\": <args-dict>}
</tool_call>";

/// The `long` style's system prompt.
#[derive(Debug, Clone, Copy, Default)]
pub struct Long;

impl ToolsPrompt for Long {
    fn name(&self) -> &'static str {
        "long"
    }

    fn describe(&self, tools: &[Value], _answer: Option<&Value>) -> String {
        format!("{INTRODUCTION}\n{}\n\n{HOW_TO_CALL}", tools_block(tools))
    }
}

/// The `long` dialect: its prompt, calls in `<tool_call>` tags.
pub fn dialect() -> PromptStyle<Long> {
    PromptStyle::new(Long, &TaggedCalls::PLAIN)
}
