//! Events as a list of output items: the shape of the agent APIs' answers.
//!
//! OpenAI's Responses API answers with `output` items (`reasoning`, `message`,
//! `function_call`) and Anthropic's Messages API with `content` blocks (`thinking`, `text`,
//! `tool_use`). Both are the same list: each item is one kind, grows by text pieces (the
//! reasoning, the answer's text, or a call's arguments) and is opened and closed once, and
//! both stream it as "item opened, item grew, item closed". [`Items`] folds the parser's
//! events into that list and says, for each event, what [`Change`]s it made, so an API's
//! stream writes those changes as its events and its whole answer is the list when the
//! fold ends — one fold, so the streamed answer and the whole one cannot differ.
//!
//! How events become items:
//! - reasoning grows the open reasoning item, or opens one;
//! - text closes the open reasoning item, then grows the open text item or opens one;
//! - a call closes the open reasoning and text items and opens an item of its own, which
//!   its argument fragments grow and its end closes;
//! - empty pieces change nothing, and [`Items::finish`] closes whatever is still open (a
//!   call cut off by the token limit keeps the arguments that arrived, and is marked
//!   [`Item::cut`]: OpenAI's `function_call` item with `status: "incomplete"`).
//!
//! Text written while a call is still open (no dialect's syntax does this, but the event
//! contract allows it) opens a text item beside the call; both APIs address an item by its
//! index, so the two grow side by side.
//!
//! ```
//! use toolbridge_dialect::Event;
//! use toolbridge_dialect::{Change, ItemKind, Items};
//! use toolbridge_dialect::SequentialIds;
//!
//! let mut items = Items::new(SequentialIds::default());
//! let changes = items.push(Event::Content("Hi".into()))?;
//! assert_eq!(changes, [Change::Opened(0), Change::Grew(0, "Hi".into())]);
//! let start = Event::ToolCallStart { index: 0, id: None, name: "f".into() };
//! assert_eq!(items.push(start)?, [Change::Closed(0), Change::Opened(1)]);
//! assert_eq!(items.finish(), [Change::Closed(1)]);
//! assert!(matches!(items.items()[1].kind, ItemKind::Call { .. }));
//! # Ok::<(), toolbridge_dialect::DialectError>(())
//! ```

use crate::error::DialectError;
use crate::events::{slot, Event, EventOrder};
use crate::tool_ids::{RandomIds, ToolIds};

/// What an item holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    /// The model's reasoning.
    Reasoning,
    /// The answer's text.
    Text,
    /// A tool call; its text is the arguments' JSON.
    Call { id: String, name: String },
}

/// One output item, as far as it has arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    /// The reasoning, the text, or the call's arguments.
    pub text: String,
    /// Whether the item has been closed.
    pub done: bool,
    /// Whether it is a call the output ended in before its end (the token limit cut it):
    /// closed by [`Items::finish`], with the arguments that arrived.
    pub cut: bool,
}

/// What one event did to the list, by item index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Item `n` was added, empty.
    Opened(usize),
    /// Item `n` grew by this piece.
    Grew(usize, String),
    /// Item `n` is complete.
    Closed(usize),
}

/// The fold of one answer's events into items.
#[derive(Debug, Clone)]
pub struct Items<I = RandomIds> {
    ids: I,
    order: EventOrder,
    items: Vec<Item>,
    open_reasoning: Option<usize>,
    open_text: Option<usize>,
    /// The item of each call, by call index.
    calls: Vec<usize>,
}

impl Default for Items<RandomIds> {
    /// A fold giving calls without an id a random OpenAI-style one.
    fn default() -> Self {
        Items::new(RandomIds::default())
    }
}

impl<I: ToolIds> Items<I> {
    /// No items yet, with ids from `ids` for calls that have none.
    pub fn new(ids: I) -> Self {
        Items {
            ids,
            order: EventOrder::new(),
            items: Vec::new(),
            open_reasoning: None,
            open_text: None,
            calls: Vec::new(),
        }
    }

    /// Folds in one event; an event that breaks the order contract changes nothing.
    pub fn push(&mut self, event: Event) -> Result<Vec<Change>, DialectError> {
        self.order.check(&event)?;
        let mut changes = Vec::new();
        match event {
            Event::Reasoning(text) if !text.is_empty() => {
                let item = self.running(ItemKind::Reasoning, &mut changes);
                self.grow(item, text, &mut changes);
            }
            Event::Content(text) if !text.is_empty() => {
                self.close_reasoning(&mut changes);
                let item = self.running(ItemKind::Text, &mut changes);
                self.grow(item, text, &mut changes);
            }
            Event::ToolCallStart { id, name, .. } => {
                self.close_reasoning(&mut changes);
                self.close_text(&mut changes);
                let id = self.ids.id_or_next(id);
                let item = self.open(ItemKind::Call { id, name }, &mut changes);
                self.calls.push(item);
            }
            Event::ToolCallArguments { index, fragment } if !fragment.is_empty() => {
                if let Some(&item) = self.calls.get(slot(index)) {
                    self.grow(item, fragment, &mut changes);
                }
            }
            Event::ToolCallEnd { index } => {
                if let Some(&item) = self.calls.get(slot(index)) {
                    self.close(item, &mut changes);
                }
            }
            Event::Reasoning(_) | Event::Content(_) | Event::ToolCallArguments { .. } => {}
        }
        Ok(changes)
    }

    /// Closes every item still open, in order.
    pub fn finish(&mut self) -> Vec<Change> {
        let mut changes = Vec::new();
        for item in 0..self.items.len() {
            if let Some(open) = self.items.get_mut(item) {
                open.cut = !open.done && matches!(open.kind, ItemKind::Call { .. });
            }
            self.close(item, &mut changes);
        }
        self.open_reasoning = None;
        self.open_text = None;
        changes
    }

    /// The items so far.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The items, once the fold is over.
    pub fn into_items(self) -> Vec<Item> {
        self.items
    }

    /// Whether the model called a tool.
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// Which call item `item` is, counting calls from 0: the `index` a chat delta gives it.
    pub fn call_number(&self, item: usize) -> Option<u32> {
        let number = self.calls.binary_search(&item).ok()?;
        u32::try_from(number).ok()
    }

    /// The open reasoning or text item (`kind` says which), opened if there is none.
    fn running(&mut self, kind: ItemKind, changes: &mut Vec<Change>) -> usize {
        let reasoning = kind == ItemKind::Reasoning;
        let open = if reasoning {
            self.open_reasoning
        } else {
            self.open_text
        };
        if let Some(item) = open {
            return item;
        }
        let item = self.open(kind, changes);
        if reasoning {
            self.open_reasoning = Some(item);
        } else {
            self.open_text = Some(item);
        }
        item
    }

    fn open(&mut self, kind: ItemKind, changes: &mut Vec<Change>) -> usize {
        self.items.push(Item {
            kind,
            text: String::new(),
            done: false,
            cut: false,
        });
        let item = self.items.len() - 1;
        changes.push(Change::Opened(item));
        item
    }

    fn grow(&mut self, item: usize, piece: String, changes: &mut Vec<Change>) {
        if let Some(open) = self.items.get_mut(item).filter(|open| !open.done) {
            open.text.push_str(&piece);
            changes.push(Change::Grew(item, piece));
        }
    }

    fn close(&mut self, item: usize, changes: &mut Vec<Change>) {
        if let Some(open) = self.items.get_mut(item).filter(|open| !open.done) {
            open.done = true;
            changes.push(Change::Closed(item));
        }
    }

    fn close_reasoning(&mut self, changes: &mut Vec<Change>) {
        if let Some(item) = self.open_reasoning.take() {
            self.close(item, changes);
        }
    }

    fn close_text(&mut self, changes: &mut Vec<Change>) {
        if let Some(item) = self.open_text.take() {
            self.close(item, changes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::assemble;
    use crate::tool_ids::SequentialIds;

    fn start(index: u32) -> Event {
        Event::ToolCallStart {
            index,
            id: None,
            name: "f".into(),
        }
    }

    fn arguments(index: u32, fragment: &str) -> Event {
        Event::ToolCallArguments {
            index,
            fragment: fragment.into(),
        }
    }

    fn fold(events: &[Event]) -> (Vec<Change>, Vec<Item>) {
        let mut items = Items::new(SequentialIds::default());
        let mut changes = Vec::new();
        for event in events {
            changes.extend(items.push(event.clone()).expect("events in order"));
        }
        changes.extend(items.finish());
        (changes, items.items().to_vec())
    }

    #[test]
    fn reasoning_then_text_then_calls_are_items_in_order() {
        let events = [
            Event::Reasoning("think".into()),
            Event::Content("Let me ".into()),
            Event::Content("look.".into()),
            start(0),
            arguments(0, "{\"a\":"),
            arguments(0, " 1}"),
            Event::ToolCallEnd { index: 0 },
            start(1),
            arguments(1, "{}"),
            Event::ToolCallEnd { index: 1 },
        ];
        let (changes, items) = fold(&events);
        let kinds: Vec<&ItemKind> = items.iter().map(|item| &item.kind).collect();
        assert_eq!(kinds.len(), 4);
        assert_eq!(kinds[0], &ItemKind::Reasoning);
        assert_eq!(items[1].text, "Let me look.");
        assert_eq!(items[2].text, "{\"a\": 1}");
        assert!(items.iter().all(|item| item.done && !item.cut));
        let opened = changes
            .iter()
            .filter(|change| matches!(change, Change::Opened(_)))
            .count();
        let closed = changes
            .iter()
            .filter(|change| matches!(change, Change::Closed(_)))
            .count();
        assert_eq!((opened, closed), (4, 4));
    }

    #[test]
    fn a_call_cut_off_is_closed_at_the_end_with_what_arrived() {
        let (changes, items) = fold(&[start(0), arguments(0, "{\"a\"")]);
        assert_eq!(
            changes,
            [
                Change::Opened(0),
                Change::Grew(0, "{\"a\"".into()),
                Change::Closed(0)
            ]
        );
        assert_eq!(items[0].text, "{\"a\"");
        assert!(items[0].cut);
    }

    #[test]
    fn empty_pieces_change_nothing() {
        let (changes, items) = fold(&[Event::Content(String::new()), Event::Reasoning("".into())]);
        assert!(changes.is_empty());
        assert!(items.is_empty());
    }

    #[test]
    fn text_during_an_open_call_grows_beside_it() {
        let events = [
            start(0),
            Event::Content("aside".into()),
            arguments(0, "{}"),
            Event::ToolCallEnd { index: 0 },
        ];
        let (_, items) = fold(&events);
        assert_eq!(items[0].text, "{}");
        assert_eq!(items[1].text, "aside");
    }

    #[test]
    fn items_hold_what_the_assembled_message_holds() {
        let events = vec![
            Event::Reasoning("r".into()),
            Event::Content("t".into()),
            start(0),
            arguments(0, "{\"x\": 2}"),
            Event::ToolCallEnd { index: 0 },
        ];
        let (_, items) = fold(&events);
        let message = assemble(events, SequentialIds::default()).expect("in order");
        assert_eq!(
            message.reasoning_content.as_deref(),
            Some(items[0].text.as_str())
        );
        assert_eq!(message.content_text(), items[1].text);
        let call = &message.calls()[0];
        assert_eq!(
            items[2].kind,
            ItemKind::Call {
                id: call.id.clone().expect("an id"),
                name: call.name().to_owned()
            }
        );
        assert_eq!(call.function.arguments.as_json_string(), items[2].text);
    }

    #[test]
    fn events_out_of_order_are_refused() {
        let mut items = Items::new(SequentialIds::default());
        assert!(items.push(arguments(0, "{}")).is_err());
        assert!(items.items().is_empty());
    }
}
