//! Text a dialect adds to a prompt: its own system prompt put in front of the request's,
//! and tools listed as JSON. Shared by the prompt styles, the families that describe tools
//! themselves and the answer format's instruction, so none of them imports another.

use serde_json::Value;
use toolbridge_chat::{Message, Role};
use toolbridge_pyrepr::{json_dumps_with, JsonLayout};

/// `messages` with `text` as their system prompt: written before the first system turn's
/// text (joined by a newline) when there is one, else a system turn put first, as the
/// seed's system added its prompts.
pub fn with_system_prompt(messages: &[Message], text: &str) -> Vec<Message> {
    let mut messages = messages.to_vec();
    match messages.iter().position(|m| m.role == Role::System) {
        Some(at) => {
            let joined = format!("{text}\n{}", messages[at].content_text());
            messages[at] = Message::system(joined);
        }
        None => messages.insert(0, Message::system(text)),
    }
    messages
}

/// `value` as Python's `json.dumps(value, indent=2)` prints it (two-space indent, `": "`,
/// escapes outside printable ASCII).
pub fn pretty_json(value: &Value) -> String {
    json_dumps_with(value, &JsonLayout::indented(2))
}

/// The tools between `<tools>` lines, each as [`pretty_json`], as the `short` and `long`
/// styles list them.
pub fn tools_block(tools: &[Value]) -> String {
    format!("<tools>\n{}\n</tools>", tools_listing(tools))
}

/// The tools one after another, each as [`pretty_json`], a newline between them.
pub fn tools_listing(tools: &[Value]) -> String {
    let listed: Vec<String> = tools.iter().map(pretty_json).collect();
    listed.join("\n")
}
