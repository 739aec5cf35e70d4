//! The `long` style: the tools listed as JSON between a request to use them and an
//! example of the call syntax. Seed 000's `TOOLS_LONG`, word for word.
//!
//! The `mixtral` style is the same prompt, word for word as seed 000's `TOOLS_MIXTRAL`
//! shows it, with calls in `<tool_call>` tags that may be written with markdown's escaped
//! underscores (`<tool\_call>`, `super\_secret`), as Mixtral writes them; see
//! [`TaggedCalls::ESCAPED`].

use serde_json::Value;

use crate::toolkit::prompt_style::{PromptStyle, ToolsPrompt};
use crate::toolkit::prompt_text::tools_block;
use crate::toolkit::tagged_calls::TaggedCalls;

const INTRODUCTION: &str = "Call one or more functions to assist with the user query, every time this is possible. Don't make assumptions about what values to plug into functions. Here are the available tools:";

const HOW_TO_CALL: &str = "To call each function, give its name and arguments within <tool_call></tool_call> XML tags as follows:
<tool_call>
{\"name\": <function-name>, \"arguments\": <args-dict>}
</tool_call>";

/// The `long` style's system prompt, under the name of the style that shows it.
#[derive(Debug, Clone, Copy)]
pub struct Long {
    name: &'static str,
}

impl ToolsPrompt for Long {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self, tools: &[Value], _answer: Option<&Value>) -> String {
        format!("{INTRODUCTION}\n{}\n\n{HOW_TO_CALL}", tools_block(tools))
    }
}

/// The `long` dialect: its prompt, calls in `<tool_call>` tags.
pub fn dialect() -> PromptStyle<Long> {
    PromptStyle::new(Long { name: "long" }, &TaggedCalls::PLAIN)
}

/// The `mixtral` dialect: the `long` prompt, calls in tags with underscores maybe escaped.
pub fn mixtral() -> PromptStyle<Long> {
    PromptStyle::new(Long { name: "mixtral" }, &TaggedCalls::ESCAPED)
}
