//! The answer of a Responses request: the `response` object and its event stream.
//!
//! Both are written from one fold of the parser's events into output items
//! ([`toolbridge_dialect::Items`]): reasoning becomes a `reasoning` item, text a `message`
//! with one `output_text` part, each call a `function_call` item (`call_id` is the call's
//! id, the one a `function_call_output` answers). The whole answer is that fold's last
//! state; the stream writes each change as it happens, in OpenAI's event order:
//! `response.created`, `response.in_progress`, then per item `response.output_item.added`
//! (and `response.content_part.added`), its deltas (`response.output_text.delta`,
//! `response.reasoning_text.delta`, `response.function_call_arguments.delta`), their
//! `.done` events and `response.output_item.done`, and last `response.completed` — or
//! `response.incomplete` when `max_output_tokens` cut the answer. Every event carries its
//! `sequence_number`. A failure under way is an `error` event.

use axum::response::sse::Event as SseEvent;
use serde_json::{json, Map, Value};
use toolbridge_chat::FinishReason;
use toolbridge_dialect::{Change, Event, Item, ItemKind, Items};
use toolbridge_engine::Completion;

use crate::answer::{finish_reason, random_id, AnswerMeta};
use crate::error::Failure;
use crate::items_answer::ItemsApi;
use crate::sse::named;

/// A response being built from events, and written as its stream.
pub struct ResponseBuilder {
    id: String,
    created_at: u64,
    model: String,
    echo: Map<String, Value>,
    /// The namespaces the request's functions were declared in: a call named
    /// `namespace.name` is written as `name` in `namespace`.
    namespaces: Vec<String>,
    items: Items,
    /// Each item's id (`rs_…`, `msg_…`, `fc_…`), by item index.
    item_ids: Vec<String>,
    /// The next stream event's `sequence_number`.
    sequence: u64,
}

impl ResponseBuilder {
    /// An empty response from `meta`'s model, repeating `echo` (the request's settings),
    /// with the functions of `namespaces` called by their bare names.
    pub fn new(meta: AnswerMeta, echo: Map<String, Value>, namespaces: Vec<String>) -> Self {
        ResponseBuilder {
            id: random_id("resp_"),
            created_at: meta.created,
            model: meta.model,
            echo,
            namespaces,
            items: Items::default(),
            item_ids: Vec::new(),
            sequence: 0,
        }
    }

    fn name_new_items(&mut self) {
        let items = self.items.items();
        for item in &items[self.item_ids.len()..] {
            let prefix = match item.kind {
                ItemKind::Reasoning => "rs_",
                ItemKind::Text => "msg_",
                ItemKind::Call { .. } => "fc_",
            };
            self.item_ids.push(random_id(prefix));
        }
    }

    /// The response object: in progress (no completion yet) or finished.
    fn response(&self, completion: Option<&Completion>) -> Value {
        let reason = completion.map(|done| finish_reason(done, self.items.has_calls()));
        let (status, incomplete) = match reason {
            None => ("in_progress", Value::Null),
            Some(FinishReason::Length) => ("incomplete", json!({"reason": "max_output_tokens"})),
            Some(_) => ("completed", Value::Null),
        };
        let output: Vec<Value> = (0..self.items.items().len())
            .map(|n| self.item(n, false))
            .collect();
        let mut response = json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "background": false,
            "error": null,
            "incomplete_details": incomplete,
            "model": self.model,
            "output": output,
            "previous_response_id": null,
            "reasoning": {"effort": null, "summary": null},
            "store": false,
            "truncation": "disabled",
            "usage": completion.map(usage),
            "user": null,
        });
        if let Value::Object(fields) = &mut response {
            fields.extend(self.echo.clone());
        }
        response
    }

    /// Item `n` as it stands, or as it was opened (empty) when `fresh`.
    fn item(&self, n: usize, fresh: bool) -> Value {
        let (Some(item), Some(id)) = (self.items.items().get(n), self.item_ids.get(n)) else {
            return Value::Null;
        };
        let opened;
        let item = if fresh {
            opened = Item {
                text: String::new(),
                done: false,
                ..item.clone()
            };
            &opened
        } else {
            item
        };
        let status = match (item.done, item.cut) {
            (true, true) => "incomplete",
            (true, false) => "completed",
            (false, _) => "in_progress",
        };
        match &item.kind {
            ItemKind::Reasoning => json!({
                "id": id, "type": "reasoning", "status": status, "summary": [],
                "content": parts(item),
            }),
            ItemKind::Text => json!({
                "id": id, "type": "message", "status": status, "role": "assistant",
                "content": parts(item),
            }),
            ItemKind::Call { id: call_id, name } => {
                let mut call = json!({
                    "id": id, "type": "function_call", "status": status,
                    "call_id": call_id, "name": name, "arguments": item.text,
                });
                if let Some((namespace, bare)) = self.namespaced(name) {
                    call["namespace"] = json!(namespace);
                    call["name"] = json!(bare);
                }
                call
            }
        }
    }

    /// The namespace and bare name of a call named `namespace.name`, when that namespace
    /// was declared.
    fn namespaced<'a>(&self, name: &'a str) -> Option<(&'a str, &'a str)> {
        self.namespaces.iter().find_map(|namespace| {
            let bare = name.strip_prefix(namespace.as_str())?.strip_prefix('.')?;
            Some((&name[..namespace.len()], bare))
        })
    }

    /// An event of `kind` with `fields` and the next sequence number.
    fn event(&mut self, kind: &str, fields: Value) -> SseEvent {
        let mut body = json!({"type": kind, "sequence_number": self.sequence});
        self.sequence += 1;
        if let (Value::Object(body), Value::Object(fields)) = (&mut body, fields) {
            body.extend(fields);
        }
        named(kind, &body)
    }

    fn added(&mut self, n: usize, events: &mut Vec<SseEvent>) {
        let item = self.item(n, true);
        events.push(self.event(
            "response.output_item.added",
            json!({"output_index": n, "item": item}),
        ));
        if let Some((id, kind)) = self.text_item(n) {
            let part = part(&kind, "");
            events.push(self.event(
                "response.content_part.added",
                json!({"item_id": id, "output_index": n, "content_index": 0, "part": part}),
            ));
        }
    }

    fn delta(&mut self, n: usize, delta: String) -> SseEvent {
        let id = self.item_ids.get(n).cloned().unwrap_or_default();
        match self.text_item(n) {
            Some((_, ItemKind::Reasoning)) => self.event(
                "response.reasoning_text.delta",
                json!({"item_id": id, "output_index": n, "content_index": 0, "delta": delta}),
            ),
            Some(_) => self.event(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": n, "content_index": 0, "delta": delta, "logprobs": []}),
            ),
            None => self.event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": n, "delta": delta}),
            ),
        }
    }

    fn done(&mut self, n: usize, events: &mut Vec<SseEvent>) {
        let item = self.item(n, false);
        let id = item["id"].clone();
        match self.text_item(n) {
            Some((_, kind)) => {
                let text = self.items.items()[n].text.clone();
                let name = if kind == ItemKind::Reasoning {
                    "response.reasoning_text.done"
                } else {
                    "response.output_text.done"
                };
                let mut fields =
                    json!({"item_id": id, "output_index": n, "content_index": 0, "text": text});
                if kind == ItemKind::Text {
                    fields["logprobs"] = json!([]);
                }
                events.push(self.event(name, fields));
                let part = part(&kind, &text);
                events.push(self.event(
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": n, "content_index": 0, "part": part}),
                ));
            }
            None => events.push(self.event(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": n, "name": item["name"], "arguments": item["arguments"]}),
            )),
        }
        events.push(self.event(
            "response.output_item.done",
            json!({"output_index": n, "item": item}),
        ));
    }

    /// The id and kind of item `n` when it holds text or reasoning (not a call).
    fn text_item(&self, n: usize) -> Option<(String, ItemKind)> {
        let item = self.items.items().get(n)?;
        let id = self.item_ids.get(n)?.clone();
        (!matches!(item.kind, ItemKind::Call { .. })).then(|| (id, item.kind.clone()))
    }
}

impl ItemsApi for ResponseBuilder {
    fn push(&mut self, event: Event) -> Result<Vec<Change>, Failure> {
        let changes = self.items.push(event).map_err(Failure::parser_bug)?;
        self.name_new_items();
        Ok(changes)
    }

    fn finish(&mut self) -> Vec<Change> {
        self.items.finish()
    }

    /// `response.created` and `response.in_progress`.
    fn opening(&mut self) -> Vec<SseEvent> {
        let response = self.response(None);
        vec![
            self.event("response.created", json!({"response": response})),
            self.event("response.in_progress", json!({"response": response})),
        ]
    }

    fn changes(&mut self, changes: Vec<Change>) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for change in changes {
            match change {
                Change::Opened(n) => self.added(n, &mut events),
                Change::Grew(n, piece) => events.push(self.delta(n, piece)),
                Change::Closed(n) => self.done(n, &mut events),
            }
        }
        events
    }

    /// `response.completed`, or `response.incomplete` when the limit cut the answer.
    fn closing(&mut self, completion: &Completion) -> Vec<SseEvent> {
        let response = self.response(Some(completion));
        let kind = if response["status"] == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        vec![self.event(kind, json!({"response": response}))]
    }

    fn failure(&mut self, failure: &Failure) -> SseEvent {
        let error = &failure.error;
        let fields = json!({"code": error.code, "message": error.message, "param": error.param});
        self.event("error", fields)
    }

    fn whole(&self, completion: &Completion) -> Value {
        self.response(Some(completion))
    }
}

/// An item's content parts: none while it is empty and open, else its one part.
fn parts(item: &Item) -> Vec<Value> {
    if item.text.is_empty() && !item.done {
        return Vec::new();
    }
    vec![part(&item.kind, &item.text)]
}

/// The one content part of a text or reasoning item.
fn part(kind: &ItemKind, text: &str) -> Value {
    match kind {
        ItemKind::Reasoning => json!({"type": "reasoning_text", "text": text}),
        _ => json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []}),
    }
}

/// The engine's token counts as the Responses API's `usage`.
fn usage(completion: &Completion) -> Value {
    let counts = completion.usage;
    json!({
        "input_tokens": counts.prompt_tokens,
        "input_tokens_details": {"cached_tokens": counts.cached_tokens},
        "output_tokens": counts.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": counts.prompt_tokens + counts.completion_tokens,
    })
}
