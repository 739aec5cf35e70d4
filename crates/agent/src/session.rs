//! The loop: the model answers, its calls run, their results go back, until it answers
//! without calling or the turn limit is reached.
//!
//! Nothing a tool or the model does ends the loop early with an error the model cannot
//! see: an unknown tool, bad arguments or a failing tool become a `tool` message saying
//! so, and the model gets the next turn to correct itself. Only the model itself failing
//! (unreachable, an HTTP error) ends a task with an error. Each call and result is
//! reported as it happens, through [`Event`]s, before the next step starts.
//!
//! Small models often call the same tool with the same arguments again instead of
//! answering from the results they have. When every call of a reply repeats one made
//! earlier in the task, the calls still run (their results may have changed), and the
//! next request offers no tools and ends with a user line asking for the answer from the
//! results (kept out of the conversation). With the tools listed and `tool_choice:
//! "none"`, or with no tools but no such line, the default model wrote a call as text.
//!
//! A [`Session`] keeps the conversation, so an interactive user's next task sees what was
//! done before.

use std::fmt;

use std::collections::HashSet;

use toolbridge_chat::{ChatRequest, Message, ResponseMessage, ToolCall};

use crate::error::{AgentError, AgentErrorKind};
use crate::model::ChatModel;
use crate::tools::{ToolResult, Toolbox};

/// How a session runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Model answers per task (each answer may make several calls).
    pub max_turns: usize,
    /// `max_tokens` of each answer.
    pub max_tokens: Option<u32>,
    /// The model's name in requests (`None`: the server's only model).
    pub model: Option<String>,
    /// A system message first in the conversation.
    pub system: Option<String>,
    /// Sampling temperature (`None`: the server's default).
    pub temperature: Option<f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_turns: 8,
            max_tokens: None,
            model: None,
            system: None,
            temperature: None,
        }
    }
}

/// What happens, in order, as a task runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The model calls `name` with `arguments` (as it wrote them).
    Call { name: String, arguments: String },
    /// The result of that call.
    Result { name: String, result: ToolResult },
    /// Text the model wrote beside its calls.
    Remark(String),
    /// What the loop itself decided.
    Notice(String),
    /// The final answer.
    Answer(String),
}

/// How many characters of a result an [`Event`]'s display shows.
const SHOWN_CHARS: usize = 400;

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Call { name, arguments } => write!(f, "→ {name}({})", compact(arguments)),
            Event::Result { name, result } => {
                let mark = if result.is_error { "✗" } else { "←" };
                write!(
                    f,
                    "{mark} {name}: {}",
                    truncate(result.text.trim_end(), SHOWN_CHARS)
                )
            }
            Event::Remark(text) => write!(f, "· {text}"),
            Event::Notice(text) => write!(f, "! {text}"),
            Event::Answer(text) => write!(f, "{text}"),
        }
    }
}

fn truncate(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}… [{} more bytes]", &text[..end], text.len() - end),
        None => text.to_owned(),
    }
}

/// A conversation with the model and its tools.
pub struct Session<'a> {
    model: &'a dyn ChatModel,
    tools: &'a Toolbox,
    options: Options,
    messages: Vec<Message>,
}

impl<'a> Session<'a> {
    pub fn new(model: &'a dyn ChatModel, tools: &'a Toolbox, options: Options) -> Session<'a> {
        let messages = options.system.iter().map(Message::system).collect();
        Session {
            model,
            tools,
            options,
            messages,
        }
    }

    /// Runs `task` to its answer, reporting each step to `on_event`.
    pub async fn run(
        &mut self,
        task: &str,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<String, AgentError> {
        self.messages.push(Message::user(task));
        let mut made = HashSet::new();
        let mut answer_now = false;
        for _ in 0..self.options.max_turns {
            let reply = self.ask(task, answer_now).await?;
            let calls = reply.tool_calls.clone().unwrap_or_default();
            let text = reply.content.clone().unwrap_or_default();
            self.messages.push(history_message(&reply));
            if calls.is_empty() {
                on_event(&Event::Answer(text.clone()));
                return Ok(text);
            }
            if !text.trim().is_empty() {
                on_event(&Event::Remark(text));
            }
            let mut repeated = true;
            for (index, call) in calls.iter().enumerate() {
                repeated &= !made.insert(call_key(call));
                self.run_call(call, index, on_event).await;
            }
            if repeated {
                on_event(&Event::Notice(REPEAT_NOTICE.to_owned()));
            }
            answer_now = repeated;
        }
        Err(AgentError::from(AgentErrorKind::TurnLimit {
            turns: self.options.max_turns,
        }))
    }

    /// The model's next reply; with `answer_now`, one it must give to `task` without
    /// tools.
    async fn ask(&self, task: &str, answer_now: bool) -> Result<ResponseMessage, AgentError> {
        let mut request = ChatRequest {
            model: self.options.model.clone(),
            messages: self.messages.clone(),
            max_tokens: self.options.max_tokens,
            temperature: self.options.temperature,
            ..ChatRequest::default()
        };
        let tools = self.tools.definitions();
        if answer_now {
            request.messages.push(Message::user(answer_now_line(task)));
        } else if !tools.is_empty() {
            request.tools = Some(tools);
        }
        let response = self.model.chat(&request).await?;
        response
            .choices
            .into_iter()
            .next()
            .map(|choice| choice.message)
            .ok_or_else(|| AgentError::from(AgentErrorKind::NoChoice))
    }

    async fn run_call(&mut self, call: &ToolCall, index: usize, on_event: &mut dyn FnMut(&Event)) {
        let name = call.name().to_owned();
        let arguments = call.function.arguments.as_json_string().into_owned();
        on_event(&Event::Call {
            name: name.clone(),
            arguments: arguments.clone(),
        });
        let result = self.tools.call(&name, &arguments).await;
        let id = call.id.clone().unwrap_or_else(|| format!("call_{index}"));
        let mut message = Message::tool(id, &result.text);
        message.name = Some(name.clone());
        self.messages.push(message);
        on_event(&Event::Result { name, result });
    }
}

/// What the loop says when the model only repeats calls it has made.
const REPEAT_NOTICE: &str =
    "every call repeats one already made; the next answer is asked for without tools";

/// What the model is told, in that request only, when it must answer: the task again,
/// as a small model forgets its second half after many results.
fn answer_now_line(task: &str) -> String {
    format!("Using the tool results above, answer now in plain text, completely: {task}")
}

/// A call's identity: its name and its arguments as JSON (so spacing does not count).
fn call_key(call: &ToolCall) -> (String, String) {
    let arguments = call.function.arguments.as_json_string();
    (call.name().to_owned(), compact(&arguments))
}

/// Arguments printed compactly where they are JSON (a model may spread them over lines),
/// as they are otherwise.
fn compact(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map_or_else(|_| arguments.to_owned(), |value| value.to_string())
}

/// The assistant's reply as it goes back into the conversation.
fn history_message(reply: &ResponseMessage) -> Message {
    let mut message = Message::assistant_calls(reply.tool_calls.clone().unwrap_or_default());
    if reply.tool_calls.is_none() {
        message.tool_calls = None;
    }
    message.content = reply.content.clone().map(Into::into);
    message
}
