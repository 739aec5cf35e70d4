//! The answer of a Messages request: the `message` object and its event stream.
//!
//! Both come from one fold of the parser's events into items
//! ([`toolbridge_dialect::Items`]), which are Anthropic's content blocks: reasoning a
//! `thinking` block, text a `text` block, each call a `tool_use` block whose `input` is
//! the call's arguments. The stream writes `message_start`, then per block
//! `content_block_start`, its `content_block_delta`s (`thinking_delta`, `text_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` with the
//! `stop_reason` (`tool_use`, `max_tokens` or `end_turn`) and the usage, and
//! `message_stop`; a failure under way is an `error` event in Anthropic's error shape.
//!
//! `stop_sequence` is always `null` and `stop_reason` is never `stop_sequence`: the engines
//! report that a stop string ended the text, not which one.

use axum::response::sse::Event as SseEvent;
use serde_json::{json, Map, Value};
use toolbridge_chat::FinishReason;
use toolbridge_dialect::{Change, Event, Item, ItemKind, Items};
use toolbridge_engine::Completion;

use super::error::AnthropicFailure;
use crate::answer::{finish_reason, random_id, AnswerMeta};
use crate::error::Failure;
use crate::items_answer::ItemsApi;
use crate::sse::named;

/// A message being built from events, and written as its stream.
pub struct MessageBuilder {
    id: String,
    model: String,
    items: Items,
}

impl MessageBuilder {
    /// An empty message from `meta`'s model.
    pub fn new(meta: AnswerMeta) -> Self {
        MessageBuilder {
            id: random_id("msg_"),
            model: meta.model,
            items: Items::default(),
        }
    }

    /// The message object: just started (no completion yet, no blocks) or finished.
    fn message(&self, completion: Option<&Completion>) -> Value {
        let content: Vec<Value> = match completion {
            Some(_) => self.items.items().iter().map(block).collect(),
            None => Vec::new(),
        };
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": completion.map(|done| self.stop_reason(done)),
            "stop_sequence": null,
            "usage": completion.map_or_else(|| usage_of(0, 0, 0), usage),
        })
    }

    fn stop_reason(&self, completion: &Completion) -> &'static str {
        match finish_reason(completion, self.items.has_calls()) {
            FinishReason::Length => "max_tokens",
            FinishReason::ToolCalls => "tool_use",
            _ => "end_turn",
        }
    }
}

/// An item as a content block, as it stands.
fn block(item: &Item) -> Value {
    match &item.kind {
        ItemKind::Reasoning => json!({"type": "thinking", "thinking": item.text, "signature": ""}),
        ItemKind::Text => json!({"type": "text", "text": item.text}),
        ItemKind::Call { id, name } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input(&item.text)})
        }
    }
}

/// A call's arguments as its `input` object; text that is no JSON object (a call cut off
/// by `max_tokens`) is kept under `"_raw"` rather than lost.
fn input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ if arguments.trim().is_empty() => json!({}),
        _ => json!({"_raw": arguments}),
    }
}

/// A block as `content_block_start` shows it: empty.
fn empty_block(item: &Item) -> Value {
    let empty = Item {
        text: String::new(),
        ..item.clone()
    };
    let mut block = block(&empty);
    if matches!(item.kind, ItemKind::Call { .. }) {
        block["input"] = json!({});
    }
    block
}

fn usage(completion: &Completion) -> Value {
    let counts = completion.usage;
    usage_of(
        counts.prompt_tokens,
        counts.completion_tokens,
        counts.cached_tokens,
    )
}

/// Anthropic's `usage`: `input_tokens` are those not read from the cache.
fn usage_of(prompt: u32, output: u32, cached: u32) -> Value {
    json!({
        "input_tokens": prompt.saturating_sub(cached),
        "output_tokens": output,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    })
}

/// An event of `kind`, its `type` first, then `fields`.
fn event(kind: &str, fields: Value) -> SseEvent {
    let mut body = Map::new();
    body.insert("type".into(), Value::String(kind.to_owned()));
    if let Value::Object(fields) = fields {
        body.extend(fields);
    }
    named(kind, &body)
}

impl ItemsApi for MessageBuilder {
    fn push(&mut self, event: Event) -> Result<Vec<Change>, Failure> {
        self.items.push(event).map_err(Failure::parser_bug)
    }

    fn finish(&mut self) -> Vec<Change> {
        self.items.finish()
    }

    /// `message_start`.
    fn opening(&mut self) -> Vec<SseEvent> {
        let message = self.message(None);
        vec![event("message_start", json!({"message": message}))]
    }

    fn changes(&mut self, changes: Vec<Change>) -> Vec<SseEvent> {
        let items = self.items.items();
        changes
            .into_iter()
            .filter_map(|change| match change {
                Change::Opened(n) => items.get(n).map(|item| {
                    event(
                        "content_block_start",
                        json!({"index": n, "content_block": empty_block(item)}),
                    )
                }),
                Change::Grew(n, piece) => items.get(n).map(|item| {
                    let delta = match item.kind {
                        ItemKind::Reasoning => json!({"type": "thinking_delta", "thinking": piece}),
                        ItemKind::Text => json!({"type": "text_delta", "text": piece}),
                        ItemKind::Call { .. } => {
                            json!({"type": "input_json_delta", "partial_json": piece})
                        }
                    };
                    event("content_block_delta", json!({"index": n, "delta": delta}))
                }),
                Change::Closed(n) => Some(event("content_block_stop", json!({"index": n}))),
            })
            .collect()
    }

    /// `message_delta` with the stop reason and the usage, then `message_stop`.
    fn closing(&mut self, completion: &Completion) -> Vec<SseEvent> {
        let message = self.message(Some(completion));
        let delta = json!({
            "stop_reason": message["stop_reason"],
            "stop_sequence": null,
            "stop_details": null,
            "container": null,
        });
        vec![
            event(
                "message_delta",
                json!({"delta": delta, "usage": message["usage"]}),
            ),
            event("message_stop", json!({})),
        ]
    }

    fn failure(&mut self, failure: &Failure) -> SseEvent {
        named("error", &AnthropicFailure(failure.clone()).body())
    }

    fn whole(&self, completion: &Completion) -> Value {
        self.message(Some(completion))
    }
}
