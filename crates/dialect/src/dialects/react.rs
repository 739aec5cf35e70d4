//! ReAct over ShareGPT messages (seed 004): tools listed by the template, calls written as
//!
//! ```text
//! Action: get_weather
//! Action Input: {"city": "Paris"}
//! ```
//!
//! Templates of this family are written for LLaMA-Factory's ShareGPT data: they read
//! `messages` as `{"from": …, "value": …}` turns (`human`, `gpt`, `function_call`,
//! `observation`) and `tools` as bare function objects (`tool.name`, `tool.parameters`).
//! So the request's messages are converted with [`toolbridge_chat::sharegpt`] (calls as JSON
//! with string arguments, which seed 004 concatenates) and its tools unwrapped before the
//! template renders them.
//!
//! Each `Action:` / `Action Input:` pair is one call (several may follow each other); the
//! `Thought:` and `Final Answer:` lines around them are content, as written.

use std::sync::Arc;

use serde_json::{Map, Value};
use toolbridge_chat::sharegpt::{self, CallEncoding};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::ChatTemplate;
use crate::error::{json_error, template_error, template_refused, DialectError};
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{grammar_of, one_or_more, per_tool, words};
use crate::toolkit::native::Native;
use crate::toolkit::pattern::{Call, Pat, Region};

const ACTION: &str = "Action:";
const INPUT: &str = "Action Input:";

/// The ReAct dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct React;

impl Native for React {
    fn name(&self) -> &'static str {
        "react"
    }

    /// `Action: <name>\nAction Input: <arguments>`, more calls each on a new line.
    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![
                Expr::literal(format!("{ACTION} {}\n{INPUT} ", tool.name())),
                arguments,
            ])
        })?;
        Ok(grammar_of(one_or_more(call, Expr::literal("\n"), parallel)))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[ACTION])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![
            Pat::until("\n", 256),
            Pat::Ws,
            Pat::lit(INPUT),
            Pat::Json,
        ]);
        let region = Region {
            body,
            decode: Arc::new(|captures| {
                let [name, arguments] = captures else {
                    return None;
                };
                let name = name.trim();
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return None;
                }
                let arguments: Value = serde_json::from_str(arguments).ok()?;
                Some(vec![Call::new(name, arguments_text(&arguments)?)])
            }),
        };
        vec![(ACTION.into(), Action::Call(region))]
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let turns = sharegpt::from_openai(&request.messages, CallEncoding::Object)
            .map_err(|error| template_refused(format!("the conversation as ShareGPT: {error}")))?;
        turns
            .iter()
            .map(|turn| serde_json::to_value(turn).map_err(json_error("a ShareGPT turn")))
            .collect::<Result<Vec<_>, _>>()
            .map(|history| vec![history])
    }

    /// The template is given bare function objects as `tools`.
    fn render(
        &self,
        template: &ChatTemplate,
        messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        let mut context = Map::new();
        context.insert("messages".into(), Value::Array(messages));
        context.insert("add_generation_prompt".into(), true.into());
        if !tools.is_empty() {
            let functions = tools
                .iter()
                .map(|tool| serde_json::to_value(&tool.function))
                .collect::<Result<Vec<_>, _>>()
                .map_err(json_error("the tools"))?;
            context.insert("tools".into(), Value::Array(functions));
        }
        template.render_context(context).map_err(template_error)
    }
}
