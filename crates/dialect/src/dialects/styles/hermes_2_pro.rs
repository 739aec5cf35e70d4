//! The `hermes_2_pro` style: NousResearch's Hermes 2 Pro system prompt, as seed 000's
//! `TOOLS_HERMES_2_PRO` shows it: the tools as a Python list of compact JSON strings, the
//! call schema as a Python dict, and today's date. Its words (typos included: "doulbe",
//! "anlysis") are the prompt the model was trained on, so they are kept as they are.
//!
//! The date is read from a [`Clock`]: the local clock when serving, a fixed day for
//! reproducible prompts (the seed pins 2024-03-30).

use serde_json::Value;
use toolbridge_pyrepr::python_repr;
use toolbridge_template::Clock;

use crate::toolkit::prompt_style::{PromptStyle, ToolsPrompt};
use crate::toolkit::tagged_calls::TaggedCalls;

/// What comes before the date.
const BEFORE_DATE: &str = r#"You are a function calling AI agent with self-recursion. You can call only one function at a time and analyse data you get from function response. You are provided with function signatures within <tools></tools> XML tags. "#;

/// What comes between the date and the tools.
const BEFORE_TOOLS: &str = r#" You may use agentic frameworks for reasoning and planning to help with user query. Please call a function and wait for function results to be provided to you in the next iteration. Don't make assumptions about what values to plug into function arguments. Once you have called a function, results will be fed back to you within <tool_response></tool_response> XML tags. Don't make assumptions about tool results if <tool_response> XML tags are not present since function hasn't been executed yet. Analyze the data once you get the results and call another function. At each iteration please continue adding the your analysis to previous summary. Your final response should directly answer the user query with an anlysis or summary of the results of function calls. Here are the available tools: <tools> "#;

/// What follows the tools.
const AFTER_TOOLS: &str = r#" </tools> If the provided function signatures doesn't have the function you must call, you may write executable python code in markdown syntax and call code_interpreter() function as follows: <tool_call> {"arguments": {"code_markdown": <python-code>, "name": "code_interpreter"}} </tool_call> Make sure that the json object above with code markdown block is parseable with json.loads() and the XML block with XML ElementTree. Use the following pydantic model json schema for each tool call you will make: {'properties': {'arguments': {'title': 'Arguments', 'type': 'object'}, 'name': {'title': 'Name', 'type': 'string'}}, 'required': ['arguments', 'name'], 'title': 'FunctionCall', 'type': 'object'} At the very first turn you don't have <tool_results> so you shouldn't not make up the results.
Please keep a running summary with analysis of previous function results and summaries from previous iterations.
Do not stop calling functions until the task has been accomplished or you've reached max iteration of 10.
Calling multiple functions at once can overload the system and increase cost so call one function at a time please.
If you plan to continue with analysis, always call another function.
For each function call return a valid json object (using doulbe quotes) with function name and arguments within <tool_call></tool_call> XML tags as follows:
<tool_call>
{"arguments": <args-dict>, "name": <function-name>}
</tool_call>
"#;

/// The `hermes_2_pro` style's system prompt, dated by its clock.
#[derive(Debug, Clone, Default)]
pub struct Hermes2Pro {
    pub clock: Clock,
}

impl ToolsPrompt for Hermes2Pro {
    fn name(&self) -> &'static str {
        "hermes_2_pro"
    }

    fn describe(&self, tools: &[Value], _answer: Option<&Value>) -> String {
        format!(
            "{BEFORE_DATE}The current date is: {}.{BEFORE_TOOLS}{}{AFTER_TOOLS}",
            self.today(),
            tools_repr(tools)
        )
    }
}

impl Hermes2Pro {
    /// Today as `YYYY-MM-DD`, by the clock.
    fn today(&self) -> String {
        self.clock
            .strftime_now("%Y-%m-%d")
            .expect("%Y-%m-%d is a valid strftime format")
    }
}

/// The tools as Python prints a list of their compact JSON texts: `['{"type":…}', …]`.
fn tools_repr(tools: &[Value]) -> String {
    let texts = tools.iter().map(|tool| Value::String(tool.to_string()));
    python_repr(&Value::Array(texts.collect()))
}

/// The `hermes_2_pro` dialect dated by `clock`: its prompt, calls in `<tool_call>` tags.
pub fn dialect(clock: Clock) -> PromptStyle<Hermes2Pro> {
    PromptStyle::new(Hermes2Pro { clock }, &TaggedCalls::PLAIN)
}
