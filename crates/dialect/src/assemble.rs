//! Folding events into the assistant message of a non-streaming answer.
//!
//! The non-streaming answer is the streaming parser fed everything, so the message is built
//! the same way a stream is consumed: one event at a time through an [`Assembler`]. The
//! message has the shape OpenAI returns: `content` is the text, or `None` when the model only
//! called tools (an answer with neither has `""`); `reasoning_content` holds the reasoning
//! when there was any; each call has its id (the model's, or a generated one), `type:
//! function`, and its arguments as the JSON text the fragments concatenate to.
//!
//! ```
//! use toolbridge_dialect::assemble::assemble;
//! use toolbridge_dialect::events::Event;
//! use toolbridge_dialect::tool_ids::SequentialIds;
//!
//! let events = [
//!     Event::ToolCallStart { index: 0, id: None, name: "get_weather".into() },
//!     Event::ToolCallArguments { index: 0, fragment: r#"{"city": "#.into() },
//!     Event::ToolCallArguments { index: 0, fragment: r#""Paris"}"#.into() },
//!     Event::ToolCallEnd { index: 0 },
//! ];
//! let message = assemble(events, SequentialIds::default())?;
//! assert_eq!(message.content, None);
//! let call = &message.calls()[0];
//! assert_eq!(call.id.as_deref(), Some("call_000000000000000000000000"));
//! assert_eq!(call.function.arguments.as_json_string(), r#"{"city": "Paris"}"#);
//! # Ok::<(), toolbridge_dialect::events::EventOrderError>(())
//! ```

use toolbridge_chat::{Arguments, Message, ResponseMessage, ToolCall};

use crate::events::{slot, Event, EventOrder, EventOrderError};
use crate::tool_ids::{RandomIds, ToolIds};

/// Folds `events` into an assistant message, with ids from `ids` for calls that have none.
pub fn assemble(
    events: impl IntoIterator<Item = Event>,
    ids: impl ToolIds,
) -> Result<Message, EventOrderError> {
    let mut assembler = Assembler::new(ids);
    events
        .into_iter()
        .try_for_each(|event| assembler.push(event))?;
    Ok(assembler.finish())
}

/// An assistant message being built from events as they arrive.
#[derive(Debug, Clone)]
pub struct Assembler<I = RandomIds> {
    ids: I,
    order: EventOrder,
    content: String,
    reasoning: String,
    calls: Vec<PendingCall>,
}

/// A call as far as it has arrived.
#[derive(Debug, Clone)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

impl Default for Assembler<RandomIds> {
    /// An assembler giving calls without an id a random OpenAI-style one.
    fn default() -> Self {
        Assembler::new(RandomIds::default())
    }
}

impl<I: ToolIds> Assembler<I> {
    /// An empty message, with ids from `ids` for calls that have none.
    pub fn new(ids: I) -> Self {
        Assembler {
            ids,
            order: EventOrder::new(),
            content: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
        }
    }

    /// Adds one event; an event that breaks the order contract changes nothing.
    pub fn push(&mut self, event: Event) -> Result<(), EventOrderError> {
        self.order.check(&event)?;
        match event {
            Event::Content(text) => self.content.push_str(&text),
            Event::Reasoning(text) => self.reasoning.push_str(&text),
            Event::ToolCallStart { id, name, .. } => {
                let id = self.ids.id_or_next(id);
                self.calls.push(PendingCall {
                    id,
                    name,
                    arguments: String::new(),
                });
            }
            Event::ToolCallArguments { index, fragment } => {
                // `order` has checked that call `index` was started, so it is in `calls`.
                if let Some(call) = self.calls.get_mut(slot(index)) {
                    call.arguments.push_str(&fragment);
                }
            }
            Event::ToolCallEnd { .. } => {}
        }
        Ok(())
    }

    /// The message so far, as it goes into a conversation's history.
    pub fn finish(self) -> Message {
        self.finish_response().into_message()
    }

    /// The message so far, as it goes into a response's `choices`.
    pub fn finish_response(self) -> ResponseMessage {
        let calls: Vec<ToolCall> = self.calls.into_iter().map(PendingCall::into_call).collect();
        let content = text_content(self.content, !calls.is_empty());
        let reasoning = (!self.reasoning.is_empty()).then_some(self.reasoning);
        ResponseMessage::assistant(content, reasoning, calls)
    }
}

impl PendingCall {
    fn into_call(self) -> ToolCall {
        ToolCall::new(self.id, self.name, Arguments::Text(self.arguments))
    }
}

/// OpenAI's `content`: the text, but `None` rather than `""` beside tool calls.
fn text_content(text: String, has_calls: bool) -> Option<String> {
    (!text.is_empty() || !has_calls).then_some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool_ids::SequentialIds;

    fn start(index: u32, id: Option<&str>, name: &str) -> Event {
        Event::ToolCallStart {
            index,
            id: id.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    fn arguments(index: u32, fragment: &str) -> Event {
        Event::ToolCallArguments {
            index,
            fragment: fragment.to_owned(),
        }
    }

    fn assemble_json(events: Vec<Event>) -> serde_json::Value {
        let message = assemble(events, SequentialIds::default()).expect("events in order");
        serde_json::to_value(message).expect("a message serializes")
    }

    #[test]
    fn text_only_is_content() {
        let events = vec![Event::Content("Hel".into()), Event::Content("lo".into())];
        assert_eq!(
            assemble_json(events),
            json!({"role": "assistant", "content": "Hello"})
        );
    }

    #[test]
    fn nothing_at_all_is_empty_content() {
        assert_eq!(
            assemble_json(vec![]),
            json!({"role": "assistant", "content": ""})
        );
    }

    #[test]
    fn calls_without_text_have_no_content_and_get_ids() {
        let events = vec![
            Event::Reasoning("need the weather".into()),
            start(0, None, "get_weather"),
            arguments(0, r#"{"city": "#),
            arguments(0, r#""Paris"}"#),
            Event::ToolCallEnd { index: 0 },
            start(1, Some("model_id"), "get_time"),
            arguments(1, "{}"),
            Event::ToolCallEnd { index: 1 },
        ];
        assert_eq!(
            assemble_json(events),
            json!({
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_000000000000000000000000",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": r#"{"city": "Paris"}"#}
                    },
                    {
                        "id": "model_id",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": "{}"}
                    }
                ],
                "reasoning_content": "need the weather"
            })
        );
    }

    #[test]
    fn text_beside_calls_is_kept() {
        let events = vec![
            Event::Content("Let me check.".into()),
            start(0, None, "f"),
            arguments(0, "{}"),
        ];
        let message = assemble(events, SequentialIds::default()).expect("events in order");
        assert_eq!(message.content_text(), "Let me check.");
        assert_eq!(message.calls().len(), 1);
    }

    #[test]
    fn an_open_call_keeps_what_arrived() {
        let events = vec![start(0, None, "f"), arguments(0, r#"{"a": 1"#)];
        let message = assemble(events, SequentialIds::default()).expect("events in order");
        assert_eq!(
            message.calls()[0].function.arguments.as_json_string(),
            r#"{"a": 1"#
        );
    }

    #[test]
    fn out_of_order_events_are_refused() {
        let mut assembler = Assembler::new(SequentialIds::default());
        assert_eq!(
            assembler.push(arguments(0, "{}")),
            Err(EventOrderError::CallNotOpen {
                index: 0,
                what: "arguments"
            })
        );
        assert_eq!(assembler.push(Event::Content("still fine".into())), Ok(()));
        assert_eq!(assembler.finish().content_text(), "still fine");
    }

    #[test]
    fn the_response_message_writes_null_content_beside_calls() {
        let mut assembler = Assembler::new(SequentialIds::default());
        for event in [start(0, None, "f"), Event::ToolCallEnd { index: 0 }] {
            assembler.push(event).expect("events in order");
        }
        let response = serde_json::to_value(assembler.finish_response()).expect("serializes");
        assert_eq!(response["content"], serde_json::Value::Null);
        assert_eq!(response["tool_calls"][0]["function"]["arguments"], "");
    }
}
