//! What the native dialects (those whose template renders tools itself) share: the history
//! with past calls' arguments as objects (templates print `arguments | tojson`, and
//! OpenAI's string form would come out quoted twice), rendering
//! with variables a family's template reads beyond `transformers`' own, and the grammar
//! pieces every call syntax is made of.

use serde_json::{Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::Expr;

use crate::dialect::{messages_json, ChatTemplate, DialectError};
use crate::dialects::framed_native::{per_tool, with_object_arguments};

/// The messages as templates read them, past calls' arguments as objects, and `content`
/// left out where the client left it out: unlike
/// [`history_with_object_arguments`](crate::dialects::framed_native::history_with_object_arguments),
/// no `null` is written for a turn that only calls, on which Gemma 3's template raises
/// "Invalid content type".
pub fn history(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_object_arguments(messages_json(&request.messages)?))
}

/// Renders `template` with `transformers`' variables and `extra` ones on top.
pub fn render(
    template: &ChatTemplate,
    messages: &[Value],
    tools: &[Tool],
    extra: Map<String, Value>,
) -> Result<String, DialectError> {
    let mut context = Map::new();
    context.insert("messages".into(), Value::Array(messages.to_vec()));
    if !tools.is_empty() {
        let tools = serde_json::to_value(tools).map_err(|source| DialectError::Json {
            what: "the tools",
            source,
        })?;
        context.insert("tools".into(), tools);
    }
    context.insert("add_generation_prompt".into(), true.into());
    context.extend(extra);
    template.render_context(context).map_err(DialectError::from)
}

/// An assistant message with several calls split into one message per call, for templates
/// that take one call per turn (Llama 3.1 raises on more).
pub fn one_call_per_message(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message.get("tool_calls").and_then(Value::as_array) {
            Some(calls) if calls.len() > 1 => {
                for (at, call) in calls.iter().enumerate() {
                    let mut single = message.clone();
                    if let Some(members) = single.as_object_mut() {
                        members.insert("tool_calls".into(), Value::Array(vec![call.clone()]));
                        if at > 0 {
                            members.insert("content".into(), Value::Null);
                        }
                    }
                    out.push(single);
                }
            }
            _ => out.push(message.clone()),
        }
    }
    out
}

/// One alternative per tool: `<name>{middle}<arguments>`, where the name is as it sits in
/// a JSON string and the arguments follow the tool's schema.
pub fn named_alternatives(tools: &[&Tool], middle: &str) -> Result<Expr, DialectError> {
    per_tool(tools, |_, name, arguments| {
        Expr::Seq(vec![Expr::literal(format!("{name}{middle}")), arguments])
    })
}
