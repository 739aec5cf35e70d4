//! Cohere's two call syntaxes: Command-R / Command-R+ / Aya (`cohere`) and Command R7B /
//! Command A (`command_r7b`).
//!
//! Command-R's tool-use template shows the tools as Python `def`s and asks, after the last
//! user turn, for `Action:` followed by a JSON list of actions, which is how it writes past
//! calls too (seed 003, and llama.cpp's `CohereForAI-c4ai-command-r-plus-tool_use`):
//!
//! ```text
//! Action:
//! ```json
//! [
//!     {
//!         "tool_name": "get_weather",
//!         "parameters": {"city": "Paris"}
//!     }
//! ]```
//! ```
//!
//! The `directly-answer` tool means "no call": such an action is read as layout, not a
//! call, and the grammar admits it only while calling is optional.
//!
//! Command R7B writes `<|START_THINKING|>plan<|END_THINKING|>` and then either
//! `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": …}]<|END_ACTION|>`
//! or `<|START_RESPONSE|>answer<|END_RESPONSE|>`. The thinking is reasoning, the response
//! markers are layout, and the `tool_call_id`s (positions, `"0"`, `"1"`) are kept as the
//! calls' ids, as llama.cpp keeps them: the template writes them back into history, where
//! the model expects its own.
//!
//! Cohere2 (Command A Reasoning, llama.cpp's `Cohere2MoE`) is Command R7B with its answer
//! in `<|START_TEXT|>…<|END_TEXT|>` and the thinking opened by the prompt: the same
//! dialect, reading both wrappers and starting in reasoning when the prompt ends in
//! `<|START_THINKING|>`. Both dialects take the turn tokens a model may echo
//! (`<|CHATBOT_TOKEN|>`, `<|END_OF_TURN_TOKEN|>`) as layout.
//!
//! Both templates render the request's tools and history themselves (past calls'
//! `arguments` given as objects, since they print them with `tojson`).

use serde_json::json;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::call_json::{self, CallKeys};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{
    call_objects, forced_after_reasoning, grammar_of, one_or_more, words, ws,
};
use crate::toolkit::native::{after_open, Native, Start};
use crate::toolkit::pattern::{Pat, Region};

/// The tool Command-R calls when it needs none.
pub const DIRECTLY_ANSWER: &str = "directly-answer";

const ACTION: &str = "Action:";
const START_ACTION: &str = "<|START_ACTION|>";
const END_ACTION: &str = "<|END_ACTION|>";
const START_THINKING: &str = "<|START_THINKING|>";
const END_THINKING: &str = "<|END_THINKING|>";
/// What wraps Command R7B's answer (`<|START_RESPONSE|>`) and Command A Reasoning's
/// (Cohere2, `<|START_TEXT|>`): layout.
const TEXT_LAYOUT: [&str; 4] = [
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
];
/// The tokens that frame a turn, which a model may echo: layout in both dialects.
const TURN_LAYOUT: [&str; 3] = [
    "<|START_OF_TURN_TOKEN|>",
    "<|CHATBOT_TOKEN|>",
    "<|END_OF_TURN_TOKEN|>",
];

/// An action's name and arguments keys, as the grammar writes them.
const ACTION_KEYS: (&str, &str) = ("tool_name", "parameters");

const KEYS: CallKeys = CallKeys {
    name: "tool_name",
    arguments: &["parameters"],
    id: Some("tool_call_id"),
};

/// The Command-R / Aya dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cohere;

impl Native for Cohere {
    fn name(&self) -> &'static str {
        "cohere"
    }

    /// `Action:` ws "```json" ws `[` action (`,` action)* `]` ws "```", an action being one
    /// tool's `{"tool_name", "parameters"}` object (or, unless forced, `directly-answer`).
    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut actions = call_objects(tools, ACTION_KEYS, None)?;
        if !forced {
            actions.push(Expr::Json(json!({
                "type": "object",
                "properties": {
                    "tool_name": {"const": DIRECTLY_ANSWER},
                    "parameters": {"type": "object", "properties": {}, "additionalProperties": false},
                },
                "required": ["tool_name", "parameters"],
                "additionalProperties": false,
            })));
        }
        let list = action_list(Expr::group(Expr::Alt(actions)), parallel);
        Ok(grammar_of(Expr::Seq(vec![
            Expr::literal(ACTION),
            ws(),
            Expr::literal("```json"),
            ws(),
            list,
            ws(),
            Expr::literal("```"),
        ])))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[ACTION])
    }

    /// Command-R's template prints each parameter's `description` and fails on one
    /// without: a missing description is given as empty.
    fn shown_tools(&self, tools: &[Tool]) -> Vec<Tool> {
        tools.iter().map(with_parameter_descriptions).collect()
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![
            Pat::Ws,
            Pat::opt("```json"),
            Pat::opt("```"),
            Pat::Json,
            Pat::Ws,
            Pat::opt("```"),
        ]);
        let mut markers = vec![(ACTION.into(), Action::Call(action_region(body)))];
        markers.extend(layout(&TURN_LAYOUT));
        markers
    }
}

/// The Command R7B dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CommandR7b;

impl Native for CommandR7b {
    fn name(&self) -> &'static str {
        "command_r7b"
    }

    /// `<|START_ACTION|>` `[` action (`,` action)* `]` `<|END_ACTION|>`; forced, the
    /// thinking may come first.
    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let actions = Expr::group(Expr::Alt(call_objects(tools, ACTION_KEYS, KEYS.id)?));
        let action = Expr::Seq(vec![
            Expr::literal(START_ACTION),
            ws(),
            action_list(actions, parallel),
            ws(),
            Expr::literal(END_ACTION),
        ]);
        let thinking = (START_THINKING, END_THINKING);
        Ok(grammar_of(forced_after_reasoning(forced, thinking, action)))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[START_ACTION])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt(END_ACTION)]);
        vec![
            (START_ACTION.into(), Action::Call(action_region(body))),
            (
                START_THINKING.into(),
                Action::Reasoning {
                    close: END_THINKING.into(),
                    at_start_only: true,
                },
            ),
        ]
        .into_iter()
        .chain(layout(&TEXT_LAYOUT))
        .chain(layout(&TURN_LAYOUT))
        .collect()
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_open(prompt, START_THINKING, END_THINKING)
    }
}

fn with_parameter_descriptions(tool: &Tool) -> Tool {
    let mut tool = tool.clone();
    let properties = tool
        .function
        .parameters
        .as_mut()
        .and_then(|parameters| parameters.get_mut("properties"))
        .and_then(|properties| properties.as_object_mut());
    for property in properties.into_iter().flat_map(|map| map.values_mut()) {
        if let Some(property) = property.as_object_mut() {
            property
                .entry("description")
                .or_insert_with(|| serde_json::Value::from(""));
        }
    }
    tool
}

/// Each of `markers` as layout.
fn layout(markers: &[&str]) -> Vec<(String, Action)> {
    markers
        .iter()
        .map(|marker| (marker.to_string(), Action::Layout))
        .collect()
}

/// A region whose one capture is the JSON list of actions; `directly-answer` is dropped.
fn action_region(body: Pat) -> Region {
    Region {
        body,
        decode: std::sync::Arc::new(|captures| {
            let calls = call_json::calls(captures.first()?, KEYS)?;
            Some(
                calls
                    .into_iter()
                    .filter(|call| call.name != DIRECTLY_ANSWER)
                    .collect(),
            )
        }),
    }
}

/// `[` action (`,` action)* `]`, one action unless `parallel`.
fn action_list(action: Expr, parallel: bool) -> Expr {
    Expr::Seq(vec![
        Expr::literal("["),
        ws(),
        one_or_more(
            action,
            Expr::Seq(vec![ws(), Expr::literal(","), ws()]),
            parallel,
        ),
        ws(),
        Expr::literal("]"),
    ])
}
