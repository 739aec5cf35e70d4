//! The `thoughtful_steps` style: the model answers with one JSON object, a thought about
//! its next step and the step itself, either tool calls or the result. Seed 000's
//! `TOOLS_THOUGHTFUL_STEPS`.
//!
//! The prompt lists the tools and shows the step's schema with a generic call (any name,
//! any arguments object), word for word as the seed prints it; the grammar is stricter, as
//! the seed's is: `tool_calls` holds exactly one call, one alternative per tool with its
//! own parameters, and `result` follows the `response_format` schema (any string when
//! there is none, the schema the seed's system used then). The whole answer is the
//! object, so the grammar holds from the first byte (there is no trigger).
//!
//! Past turns are written as steps ([`ThoughtfulSteps`]), so the model sees its own
//! history in the shape it is asked for. The parser reads the step back: calls from
//! `next_step.tool_calls` (in the grammar's `{"name", "arguments"}` shape, or OpenAI's
//! `{"id", "function": {…}}` that the history shows), `next_step.result` as content, and
//! the thought as reasoning: it is the model thinking aloud, not the answer, and dropping
//! it would hide why a call was made. An answer is only known to be a step when it is
//! complete, so the parser holds the text until the end; text that is not a step comes
//! out as content, unchanged.

use serde_json::{json, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::schema;
use toolbridge_grammar::{Expr, Grammar};

use crate::answer_format::schema_instruction;
use crate::dialect::call_schema;
use crate::error::DialectError;
use crate::events::Event;
use crate::parser::StreamParser;
use crate::rewrite::{CallWriter, ThoughtfulSteps};
use crate::toolkit::prompt_style::{CallSyntax, PromptStyle, ToolsPrompt};
use crate::toolkit::prompt_text::tools_listing;

/// The `thoughtful_steps` style's system prompt.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepsPrompt;

impl ToolsPrompt for StepsPrompt {
    fn name(&self) -> &'static str {
        "thoughtful_steps"
    }

    fn describe(&self, tools: &[Value], answer: Option<&Value>) -> String {
        format!(
            "You are a function calling AI model.\nHere are the tools available:\n{}\n{}",
            tools_listing(tools),
            schema_instruction(&shown_schema(answer_schema(answer)))
        )
    }
}

/// One JSON step object per answer; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepCalls;

impl CallSyntax for StepCalls {
    fn writer(&self) -> &dyn CallWriter {
        &ThoughtfulSteps
    }

    fn trigger(&self) -> Option<&'static str> {
        None
    }

    fn grammar(&self, tools: &[&Tool], answer: Option<&Value>) -> Result<Grammar, DialectError> {
        let calls = tools
            .iter()
            .map(|tool| call_schema(tool))
            .collect::<Result<Vec<_>, _>>()?;
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Json(step_schema(calls, answer_schema(answer))),
        );
        Ok(grammar)
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(StepParser::default())
    }
}

/// The `thoughtful_steps` dialect: its prompt, answers as step objects.
pub fn dialect() -> PromptStyle<StepsPrompt> {
    PromptStyle::new(StepsPrompt, &StepCalls)
}

/// The schema of `result`: the `response_format` schema, else any string.
fn answer_schema(answer: Option<&Value>) -> Value {
    answer.cloned().unwrap_or_else(|| json!({"type": "string"}))
}

/// The step's schema as the prompt shows it, key for key as the seed prints it (its
/// `original_goal` is required but never defined: the seed's text, kept as it is).
fn shown_schema(answer: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "thought_about_next_step_only": {
                "title": "Thought about next step",
                "type": "string"
            },
            "next_step": {
                "title": "Next Step: either a result or one or more tool calls to achieve the original goal",
                "oneOf": [
                    {
                        "properties": {
                            "tool_calls": {
                                "prefixItems": [{
                                    "properties": {
                                        "name": {"title": "Name of the tool to call", "type": "string"},
                                        "arguments": {"title": "Arguments to pass to the tool", "type": "object"}
                                    },
                                    "required": ["name", "arguments"]
                                }]
                            }
                        },
                        "required": ["tool_calls"]
                    },
                    {
                        "title": "Result (achieving original goal)",
                        "properties": {"result": answer},
                        "required": ["result"]
                    }
                ]
            }
        },
        "required": ["original_goal", "thought_about_next_step_only", "next_step"]
    })
}

/// The step's schema the grammar enforces: the thought, then exactly one of `calls` or
/// the result, nothing else.
fn step_schema(calls: Vec<Value>, answer: Value) -> Value {
    // Where each schema lands below, for its `$ref`s to be re-rooted there.
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(at, call)| {
            let at = format!(
                "/properties/next_step/oneOf/0/properties/tool_calls/prefixItems/0/oneOf/{at}"
            );
            schema::nest(call, &at)
        })
        .collect();
    let answer = schema::nest(&answer, "/properties/next_step/oneOf/1/properties/result");
    let only = |key: &str, schema: Value| {
        json!({
            "type": "object",
            "properties": {key: schema},
            "required": [key],
            "additionalProperties": false,
        })
    };
    let tool_calls =
        json!({"type": "array", "prefixItems": [{"oneOf": calls}], "minItems": 1, "items": false});
    json!({
        "type": "object",
        "properties": {
            "thought_about_next_step_only": {"type": "string"},
            "next_step": {"oneOf": [only("tool_calls", tool_calls), only("result", answer)]},
        },
        "required": ["thought_about_next_step_only", "next_step"],
        "additionalProperties": false,
    })
}

/// Reads one step object; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct StepParser {
    text: String,
}

impl StreamParser for StepParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        self.text.push_str(piece);
        Vec::new()
    }

    fn finish(&mut self) -> Vec<Event> {
        let text = std::mem::take(&mut self.text);
        let step = serde_json::from_str::<Value>(&text).ok();
        match step.as_ref().and_then(step_events) {
            Some(events) => events,
            None if text.is_empty() => Vec::new(),
            None => vec![Event::Content(text)],
        }
    }
}

/// The events of a step: the thought as reasoning, then the calls or the result; `None`
/// when `step` is not a step.
fn step_events(step: &Value) -> Option<Vec<Event>> {
    let mut events = Vec::new();
    match step.get("thought_about_next_step_only") {
        None => {}
        Some(Value::String(thought)) if thought.is_empty() => {}
        Some(Value::String(thought)) => events.push(Event::Reasoning(thought.clone())),
        Some(_) => return None,
    }
    let next_step = step.get("next_step")?;
    if let Some(result) = next_step.get("result") {
        events.push(Event::Content(text_of(result)));
        return Some(events);
    }
    let calls = next_step.get("tool_calls")?.as_array()?;
    for (index, call) in (0u32..).zip(calls) {
        events.extend(call_events(index, call)?);
    }
    Some(events)
}

/// One call, in the grammar's `{"name", "arguments"}` shape or in OpenAI's
/// `{"id", "function": {"name", "arguments"}}`, which the history shows.
fn call_events(index: u32, call: &Value) -> Option<[Event; 3]> {
    let id = call.get("id").and_then(Value::as_str).map(str::to_string);
    let function = call.get("function").unwrap_or(call);
    let name = function.get("name")?.as_str()?.to_string();
    let fragment = function
        .get("arguments")
        .map_or_else(|| "{}".to_string(), text_of);
    Some([
        Event::ToolCallStart { index, id, name },
        Event::ToolCallArguments { index, fragment },
        Event::ToolCallEnd { index },
    ])
}

/// A string as it is, any other value as JSON: the result's text, and the arguments'
/// (an object printed, or OpenAI's encoded string as it is).
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
