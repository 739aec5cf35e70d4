//! What reading calls written inline in content, with no marker, takes beside the
//! parser ([`crate::toolkit::framed`]'s inline regions): a JSON call object read strictly
//! ([`json_call`]: `{"name": "Bob"}` with other keys is data), and the layout around
//! calls kept out of the content ([`Layout`]), for Mistral's and FireFunction's parsers.

use serde_json::{Map, Value};

use crate::events::Event;

/// One call found: its name and its arguments as JSON text.
pub type FoundCall = (String, String);

/// `{"name": …, "parameters" | "arguments": {…}}` as a call; the arguments may be missing
/// or `null` (`{}`) or a string holding an object. No other members but `"type": "function"`
/// and an `id`.
pub fn json_call(value: &Value) -> Option<FoundCall> {
    let Value::Object(members) = value else {
        return None;
    };
    let known = ["name", "arguments", "parameters", "type", "id"];
    if members.keys().any(|key| !known.contains(&key.as_str())) {
        return None;
    }
    if members.get("type").is_some_and(|kind| kind != "function") {
        return None;
    }
    let name = members.get("name")?.as_str()?;
    if name.is_empty() {
        return None;
    }
    let arguments = match members.get("parameters").or(members.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(object @ Value::Object(_)) => object.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text).ok()? {
            object @ Value::Object(_) => object,
            _ => return None,
        },
        Some(_) => return None,
    };
    Some((name.to_string(), serde_json::to_string(&arguments).ok()?))
}

/// Content with the layout around calls kept out of it: trailing whitespace is held until
/// text follows it (then it is content) or a call comes (then it is dropped); after a call,
/// whitespace, `;` and `,` are held the same way, and dropped if the output ends there.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Whitespace (and, after a call, separators) not yet decided.
    held: String,
    after_call: bool,
}

impl Layout {
    /// A call comes: the held layout before it is dropped.
    pub fn before_call(&mut self) {
        self.held.clear();
    }

    /// A call has ended: what follows is layout until text comes.
    pub fn after_call(&mut self) {
        self.held.clear();
        self.after_call = true;
    }

    /// The output ended: held whitespace is content unless a call came last.
    pub fn finish(&mut self, events: &mut Vec<Event>) {
        let held = std::mem::take(&mut self.held);
        if !self.after_call && !held.is_empty() {
            events.push(Event::Content(held));
        }
    }

    /// Writes content.
    pub fn write(&mut self, text: &str, events: &mut Vec<Event>) {
        let mut text = text;
        if self.after_call {
            let end = text
                .find(|c: char| !(c.is_whitespace() || c == ';' || c == ','))
                .unwrap_or(text.len());
            self.held.push_str(&text[..end]);
            text = &text[end..];
            if text.is_empty() {
                return;
            }
            self.after_call = false;
        }
        let body = text.trim_end();
        if body.is_empty() {
            self.held.push_str(text);
            return;
        }
        let mut content = std::mem::take(&mut self.held);
        content.push_str(body);
        self.held.push_str(&text[body.len()..]);
        events.push(Event::Content(content));
    }
}
