//! GLM-4 9B chat (ChatGLM's format, before GLM-4.5's XML calls): every turn opens with
//! `<|role|>` and a metadata line, and an assistant turn that calls a tool has the tool's
//! name as its metadata and the JSON arguments as its text, one call per turn:
//!
//! ```text
//! <|assistant|>get_weather
//! {"city": "Paris"}
//! ```
//!
//! A plain answer has empty metadata, so it opens with the line break. This is how
//! THUDM's own server writes calls and reads them back, and how BFCL's GLM handler reads
//! the model's answers.
//!
//! The template knows nothing of OpenAI's tools, calls or results, so the history is
//! rewritten for it, as GLM-4's own API server does: the tools ride on a `system` message
//! of their own (`item['tools']`), printed as `# 可用工具`; a past call becomes an
//! assistant turn with the name as metadata and the arguments as content (after a turn
//! with the text said beside it, if any); a tool result becomes an `observation` turn.
//!
//! A call can only open the answer, where no trigger word can be anchored, so the grammar
//! is not lazy: it decides at the first byte between an answer (a line break, then any
//! text) and one call of a declared tool; a forced call admits the call alone. The parser
//! reads a name line and one JSON object at the start of the output as a call when the
//! name is a declared tool (any function-like name when no tools are known); the empty
//! metadata line of an answer is layout, and anything else is content as written.

use std::sync::Arc;

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, Message, Role, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::{messages_json, ChatTemplate, RenderInput};
use crate::error::{template_error, DialectError};
use crate::rewrite::arguments_text;
use crate::toolkit::call_json::object_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{grammar_of, per_tool};
use crate::toolkit::native::{Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};

/// The longest tool name read from a metadata line, in bytes.
const MAX_NAME: usize = 256;

/// The GLM-4 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glm4;

impl Native for Glm4 {
    fn name(&self) -> &'static str {
        "glm4"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        _parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let call = per_tool(tools, |tool, _, arguments| {
            Expr::Seq(vec![Expr::literal(format!("{}\n", tool.name())), arguments])
        })?;
        if forced {
            return Ok(grammar_of(call));
        }
        let answer = Expr::Seq(vec![
            Expr::literal("\n"),
            Expr::repeat(Expr::AnyChar, 0, None),
        ]);
        Ok(grammar_of(Expr::Alt(vec![answer, call])))
    }

    fn triggers(&self) -> Vec<Trigger> {
        Vec::new()
    }

    fn lazy(&self, _forced: bool) -> bool {
        false
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let declared: Arc<[String]> = tools.iter().map(|tool| tool.name().to_string()).collect();
        let region = Region {
            body: Pat::Alt(vec![
                Pat::lit("\n"),
                Pat::Seq(vec![Pat::name("\n", MAX_NAME), Pat::Json]),
            ]),
            decode: Arc::new(move |captures| decode(captures, &declared)),
        };
        vec![(String::new(), Action::Call(region))]
    }

    fn start(&self, _prompt: Option<&str>) -> Start {
        Start::AfterMarker("")
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        Ok(vec![messages_json(&turns(&request.messages))?])
    }

    fn render(
        &self,
        template: &ChatTemplate,
        mut messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        if !tools.is_empty() {
            messages.insert(
                0,
                json!({"role": "system", "content": null, "tools": tools}),
            );
        }
        template
            .render(&RenderInput {
                messages,
                tools: &[],
                add_generation_prompt: true,
            })
            .map_err(template_error)
    }
}

/// The call a region holds: none for the empty metadata line of an answer (layout), one
/// for a name line and a JSON object when the name is `declared` (or looks like a
/// function's when nothing is declared), else no call.
fn decode(captures: &[String], declared: &[String]) -> Option<Vec<Call>> {
    let [name, arguments] = captures else {
        return captures.is_empty().then(Vec::new);
    };
    if !declared.is_empty() && !declared.contains(name) {
        return None;
    }
    let Value::Object(members) = serde_json::from_str(arguments).ok()? else {
        return None;
    };
    Some(vec![Call::new(name.as_str(), object_text(members)?)])
}

/// The conversation as GLM-4's template can print it: each past call an assistant turn of
/// its own (the name as metadata, the arguments as content) after the text said beside
/// it, and tool results as `observation` turns.
fn turns(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .flat_map(|message| match message.role {
            Role::Assistant if !message.calls().is_empty() => call_turns(message),
            Role::Tool | Role::Function => {
                vec![Message::with_text(
                    Role::from("observation"),
                    message.content_text(),
                )]
            }
            _ => vec![message.clone()],
        })
        .collect()
}

fn call_turns(message: &Message) -> Vec<Message> {
    let content = message.content_text();
    let said = (!content.is_empty()).then(|| Message::assistant(content.into_owned()));
    let calls = message.calls().iter().map(|call| {
        let mut turn = Message::assistant(arguments_text(&call.function.arguments));
        turn.extra.insert("metadata".into(), call.name().into());
        turn
    });
    said.into_iter().chain(calls).collect()
}
