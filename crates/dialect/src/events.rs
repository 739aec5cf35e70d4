//! What a stream parser says about the model's text, and the order it must say it in.
//!
//! Every dialect's parser turns text pieces into the same few [`Event`]s, and everything
//! downstream — the items every API's answer is written from ([`crate::Items`]), whole or
//! as streamed deltas — reads only events. That is what makes a streamed answer and a
//! non-streamed one the same answer: they are one fold of one event sequence.
//!
//! The contract a parser keeps, which [`EventOrder`] checks:
//! - tool calls are numbered by their [`Event::ToolCallStart`]: the first call started is
//!   index 0, the next 1, and so on, with no gaps and no repeats;
//! - a call's [`Event::ToolCallArguments`] and its [`Event::ToolCallEnd`] come after its
//!   start, and nothing of a call comes after its end;
//! - the fragments of a call, concatenated in order, are its arguments as JSON text
//!   (`{"a": 1}`), exactly as the model wrote them or as the dialect translated them;
//! - content and reasoning may come at any point; their pieces concatenate.
//!
//! A call may be left open when the text ends (the model hit its token limit); folding
//! keeps what arrived.

use crate::error::{DialectError, DialectErrorKind};

/// One thing a stream parser found in the model's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A piece of the answer's text.
    Content(String),
    /// A piece of the model's reasoning ("thinking"), kept apart from the answer.
    Reasoning(String),
    /// A tool call begins. `id` is the model's own id for it, if its syntax carries one;
    /// an id is generated for calls without one (see [`crate::tool_ids`]).
    ToolCallStart {
        index: u32,
        id: Option<String>,
        name: String,
    },
    /// A piece of the arguments text of call `index`.
    ToolCallArguments { index: u32, fragment: String },
    /// Call `index` is complete.
    ToolCallEnd { index: u32 },
}

/// Checks events against the contract, one at a time, as they arrive.
#[derive(Debug, Clone, Default)]
pub struct EventOrder {
    /// Whether each started call has ended, by index.
    ended: Vec<bool>,
}

impl EventOrder {
    /// A checker that has seen no events.
    pub fn new() -> Self {
        EventOrder::default()
    }

    /// Accepts `event` if it may come next, and remembers it.
    pub fn check(&mut self, event: &Event) -> Result<(), DialectError> {
        match event {
            Event::Content(_) | Event::Reasoning(_) => Ok(()),
            Event::ToolCallStart { index, .. } => self.start(*index),
            Event::ToolCallArguments { index, .. } => self.require_open(*index, "arguments"),
            Event::ToolCallEnd { index } => {
                self.require_open(*index, "an end")?;
                self.ended[slot(*index)] = true;
                Ok(())
            }
        }
    }

    /// How many calls have started so far.
    pub fn calls_started(&self) -> u32 {
        // Saturates: four billion calls exhaust memory long before the count overflows.
        u32::try_from(self.ended.len()).unwrap_or(u32::MAX)
    }

    fn start(&mut self, index: u32) -> Result<(), DialectError> {
        let expected = self.calls_started();
        if index != expected {
            return Err(DialectError::from(DialectErrorKind::StartOutOfOrder {
                expected,
                found: index,
            }));
        }
        self.ended.push(false);
        Ok(())
    }

    fn require_open(&self, index: u32, what: &'static str) -> Result<(), DialectError> {
        match self.ended.get(slot(index)) {
            Some(false) => Ok(()),
            _ => Err(DialectError::from(DialectErrorKind::CallNotOpen {
                index,
                what,
            })),
        }
    }
}

/// Where call `index` sits in a list of calls.
pub(crate) fn slot(index: u32) -> usize {
    // A `u32` always fits a `usize` on the platforms Rust's std supports for us (32/64-bit).
    index as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(index: u32) -> Event {
        Event::ToolCallStart {
            index,
            id: None,
            name: "f".into(),
        }
    }

    fn arguments(index: u32) -> Event {
        Event::ToolCallArguments {
            index,
            fragment: "{}".into(),
        }
    }

    fn check_all(events: &[Event]) -> Result<(), DialectError> {
        let mut order = EventOrder::new();
        events.iter().try_for_each(|event| order.check(event))
    }

    #[test]
    fn calls_in_order_with_text_anywhere_are_accepted() {
        let events = [
            Event::Reasoning("think".into()),
            start(0),
            Event::Content("text".into()),
            arguments(0),
            Event::ToolCallEnd { index: 0 },
            start(1),
            arguments(1),
        ];
        assert_eq!(check_all(&events), Ok(()));
    }

    #[test]
    fn first_call_must_be_index_zero() {
        assert_eq!(
            check_all(&[start(1)]),
            Err(DialectError::from(DialectErrorKind::StartOutOfOrder {
                expected: 0,
                found: 1
            }))
        );
    }

    #[test]
    fn an_index_cannot_start_twice() {
        assert_eq!(
            check_all(&[start(0), start(0)]),
            Err(DialectError::from(DialectErrorKind::StartOutOfOrder {
                expected: 1,
                found: 0
            }))
        );
    }

    #[test]
    fn arguments_need_an_open_call() {
        assert_eq!(
            check_all(&[arguments(0)]),
            Err(DialectError::from(DialectErrorKind::CallNotOpen {
                index: 0,
                what: "arguments"
            }))
        );
        let after_end = [start(0), Event::ToolCallEnd { index: 0 }, arguments(0)];
        assert_eq!(
            check_all(&after_end),
            Err(DialectError::from(DialectErrorKind::CallNotOpen {
                index: 0,
                what: "arguments"
            }))
        );
    }

    #[test]
    fn a_call_ends_once() {
        let events = [
            start(0),
            Event::ToolCallEnd { index: 0 },
            Event::ToolCallEnd { index: 0 },
        ];
        assert_eq!(
            check_all(&events),
            Err(DialectError::from(DialectErrorKind::CallNotOpen {
                index: 0,
                what: "an end"
            }))
        );
    }
}
