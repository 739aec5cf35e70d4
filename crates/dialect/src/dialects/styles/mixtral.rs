//! The `mixtral` style: the `long` style's prompt, word for word as seed 000's
//! `TOOLS_MIXTRAL` shows it, with calls in `<tool_call>` tags that may be written with
//! markdown's escaped underscores (`<tool\_call>`, `super\_secret`), as Mixtral writes
//! them; see [`TaggedCalls::ESCAPED`].

use serde_json::Value;

use super::long::Long;
use super::tagged::TaggedCalls;
use super::{PromptStyle, ToolsPrompt};

/// The `mixtral` style's system prompt: the `long` one under its own name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mixtral;

impl ToolsPrompt for Mixtral {
    fn name(&self) -> &'static str {
        "mixtral"
    }

    fn describe(&self, tools: &[Value], answer: Option<&Value>) -> String {
        Long.describe(tools, answer)
    }
}

/// The `mixtral` dialect: the `long` prompt, calls in tags with underscores maybe escaped.
pub fn dialect() -> PromptStyle<Mixtral> {
    PromptStyle::new(Mixtral, &TaggedCalls::ESCAPED)
}
