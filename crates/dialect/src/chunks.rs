//! Events as OpenAI streaming deltas.
//!
//! A streamed answer is the same events as a non-streamed one, written as they arrive in the
//! shape OpenAI streams them, so that a client concatenating the deltas (as OpenAI's SDKs do,
//! per field and per tool-call `index`) ends with the message [`crate::assemble`] builds:
//! - the first delta carries `role: assistant`;
//! - text and reasoning go out as `content` and `reasoning_content` pieces;
//! - a call opens with a delta carrying its `index`, `id`, `type` and `name`, arguments `""`,
//!   and continues with deltas carrying only the `index` and an `arguments` fragment — never
//!   the id or name again, which a client would concatenate;
//! - nothing is sent for a call's end or for an empty piece;
//! - an answer with no text and no calls ends with an empty `content` piece, so the client
//!   reads `""` as a non-streaming client would.
//!
//! Ids are settled when a call opens, so the same [`ToolIds`] source gives the same ids here
//! as in [`crate::assemble`].

use toolbridge_chat::{Delta, Role, ToolCallDelta};

use crate::events::{Event, EventOrder, EventOrderError};
use crate::tool_ids::{RandomIds, ToolIds};

/// Turns the events of one choice into its deltas, one event at a time.
#[derive(Debug, Clone)]
pub struct DeltaWriter<I = RandomIds> {
    ids: I,
    order: EventOrder,
    wrote_anything: bool,
    wrote_content: bool,
}

impl Default for DeltaWriter<RandomIds> {
    /// A writer giving calls without an id a random OpenAI-style one.
    fn default() -> Self {
        DeltaWriter::new(RandomIds::default())
    }
}

impl<I: ToolIds> DeltaWriter<I> {
    /// A writer that has written nothing, with ids from `ids` for calls that have none.
    pub fn new(ids: I) -> Self {
        DeltaWriter {
            ids,
            order: EventOrder::new(),
            wrote_anything: false,
            wrote_content: false,
        }
    }

    /// The delta for `event`, or `None` when it adds nothing a client would see.
    pub fn push(&mut self, event: Event) -> Result<Option<Delta>, EventOrderError> {
        self.order.check(&event)?;
        let delta = match event {
            Event::Content(text) if !text.is_empty() => {
                self.wrote_content = true;
                Some(Delta::content(text))
            }
            Event::Reasoning(text) if !text.is_empty() => Some(Delta::reasoning(text)),
            Event::ToolCallStart { index, id, name } => {
                let id = self.ids.id_or_next(id);
                Some(Delta::tool_call(ToolCallDelta::start(index, id, name)))
            }
            Event::ToolCallArguments { index, fragment } if !fragment.is_empty() => {
                Some(Delta::tool_call(ToolCallDelta::arguments(index, fragment)))
            }
            _ => None,
        };
        Ok(delta.map(|delta| self.first_carries_role(delta)))
    }

    /// The delta that opens the answer, `role: assistant` alone, for when the model's first
    /// token is out before the parser has decided anything (a call is held until it is
    /// whole): a stream starts when generation does, as OpenAI's and llama-server's do.
    /// `None` once anything was written.
    pub fn open(&mut self) -> Option<Delta> {
        (!self.wrote_anything).then(|| self.first_carries_role(Delta::default()))
    }

    /// The last delta, when the answer needs one: an empty `content` piece for an answer
    /// with neither text nor calls.
    pub fn finish(mut self) -> Option<Delta> {
        let nothing_said = !self.wrote_content && self.order.calls_started() == 0;
        nothing_said.then(|| self.first_carries_role(Delta::content("")))
    }

    fn first_carries_role(&mut self, mut delta: Delta) -> Delta {
        if !self.wrote_anything {
            delta.role = Some(Role::Assistant);
            self.wrote_anything = true;
        }
        delta
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::*;
    use crate::assemble::assemble;
    use crate::tool_ids::SequentialIds;

    /// Deltas for `events`, with sequential ids, as the JSON a client receives.
    fn stream(events: Vec<Event>) -> Vec<Value> {
        let mut writer = DeltaWriter::new(SequentialIds::default());
        let mut deltas: Vec<Delta> = events
            .into_iter()
            .filter_map(|event| writer.push(event).expect("events in order"))
            .collect();
        deltas.extend(writer.finish());
        deltas
            .iter()
            .map(|delta| serde_json::to_value(delta).expect("a delta serializes"))
            .collect()
    }

    #[test]
    fn an_opened_answer_carries_the_role_once() {
        let mut writer = DeltaWriter::new(SequentialIds::default());
        let opening = writer.open().expect("an opening delta");
        assert_eq!(
            serde_json::to_value(&opening).unwrap(),
            json!({"role": "assistant"})
        );
        assert!(writer.open().is_none());
        let delta = writer.push(Event::Content("Hi".into())).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&delta).unwrap(),
            json!({"content": "Hi"})
        );
    }

    /// The OpenAI Python SDK's `accumulate_delta` (`openai/lib/streaming/chat/_completions.py`):
    /// strings concatenate, `index` and `type` are replaced, objects merge key by key, and
    /// lists of objects merge entry by entry at each entry's `index`.
    fn accumulate(into: &mut Map<String, Value>, delta: &Map<String, Value>) {
        for (key, value) in delta {
            match (into.get_mut(key), value) {
                (None | Some(Value::Null), _) => {
                    into.insert(key.clone(), value.clone());
                }
                (Some(slot), _) if key == "index" || key == "type" => *slot = value.clone(),
                (Some(Value::String(text)), Value::String(piece)) => text.push_str(piece),
                (Some(Value::Object(object)), Value::Object(piece)) => accumulate(object, piece),
                (Some(Value::Array(entries)), Value::Array(pieces)) => {
                    accumulate_entries(entries, pieces)
                }
                (Some(slot), _) => *slot = value.clone(),
            }
        }
    }

    fn accumulate_entries(entries: &mut Vec<Value>, pieces: &[Value]) {
        for piece in pieces {
            let index = piece["index"].as_u64().expect("list entries have an index") as usize;
            match (entries.get_mut(index), piece) {
                (Some(Value::Object(entry)), Value::Object(piece)) => accumulate(entry, piece),
                _ => entries.insert(index.min(entries.len()), piece.clone()),
            }
        }
    }

    /// The message a client reassembles from `deltas`, without the `index` the SDK keeps on
    /// each call (its message type has no such field).
    fn reassemble(deltas: &[Value]) -> Value {
        let mut message = Map::new();
        for delta in deltas {
            accumulate(
                &mut message,
                delta.as_object().expect("a delta is an object"),
            );
        }
        if let Some(Value::Array(calls)) = message.get_mut("tool_calls") {
            for call in calls {
                call.as_object_mut().map(|call| call.remove("index"));
            }
        }
        Value::Object(message)
    }

    fn assembled(events: Vec<Event>) -> Value {
        let message = assemble(events, SequentialIds::default()).expect("events in order");
        serde_json::to_value(message).expect("a message serializes")
    }

    #[test]
    fn a_call_opens_with_its_name_and_continues_with_fragments() {
        let events = vec![
            Event::ToolCallStart {
                index: 0,
                id: None,
                name: "f".into(),
            },
            Event::ToolCallArguments {
                index: 0,
                fragment: r#"{"a":"#.into(),
            },
            Event::ToolCallArguments {
                index: 0,
                fragment: "1}".into(),
            },
            Event::ToolCallEnd { index: 0 },
        ];
        assert_eq!(
            stream(events),
            vec![
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_000000000000000000000000", "type": "function", "function": {"name": "f", "arguments": ""}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": r#"{"a":"#}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            ]
        );
    }

    #[test]
    fn text_and_reasoning_are_pieces() {
        let events = vec![
            Event::Reasoning("hm".into()),
            Event::Content(String::new()),
            Event::Content("Hi".into()),
        ];
        assert_eq!(
            stream(events),
            vec![
                json!({"role": "assistant", "reasoning_content": "hm"}),
                json!({"content": "Hi"}),
            ]
        );
    }

    #[test]
    fn an_empty_answer_ends_with_empty_content() {
        assert_eq!(
            stream(vec![]),
            vec![json!({"role": "assistant", "content": ""})]
        );
        assert_eq!(
            reassemble(&stream(vec![])),
            assembled(vec![]),
            "an empty answer reads the same either way"
        );
    }

    #[test]
    fn out_of_order_events_are_refused() {
        let mut writer = DeltaWriter::new(SequentialIds::default());
        assert_eq!(
            writer.push(Event::ToolCallEnd { index: 0 }),
            Err(EventOrderError::CallNotOpen {
                index: 0,
                what: "an end"
            })
        );
    }

    /// What a random event sequence is made of, before it is put in contract order.
    #[derive(Debug, Clone)]
    enum Step {
        Content(String),
        Reasoning(String),
        Start {
            id: Option<String>,
            name: String,
        },
        /// Arguments for the `n`th open call (modulo how many are open), if any is.
        Arguments {
            n: usize,
            fragment: String,
        },
        /// The end of the `n`th open call, if any is.
        End {
            n: usize,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        let text = "(.|\n){0,6}";
        prop_oneof![
            text.prop_map(Step::Content),
            text.prop_map(Step::Reasoning),
            (proptest::option::of("[a-zA-Z0-9_]{0,5}"), "[a-z_]{1,8}")
                .prop_map(|(id, name)| Step::Start { id, name }),
            (any::<usize>(), text).prop_map(|(n, fragment)| Step::Arguments { n, fragment }),
            any::<usize>().prop_map(|n| Step::End { n }),
        ]
    }

    /// Events that keep the contract: calls numbered in order, arguments and ends only for
    /// open calls (steps that name no open call are dropped).
    fn in_contract_order(steps: Vec<Step>) -> Vec<Event> {
        let mut started = 0;
        let mut open: Vec<u32> = Vec::new();
        let mut events = Vec::new();
        for step in steps {
            match step {
                Step::Content(text) => events.push(Event::Content(text)),
                Step::Reasoning(text) => events.push(Event::Reasoning(text)),
                Step::Start { id, name } => {
                    events.push(Event::ToolCallStart {
                        index: started,
                        id,
                        name,
                    });
                    open.push(started);
                    started += 1;
                }
                Step::Arguments { n, fragment } if !open.is_empty() => {
                    let index = open[n % open.len()];
                    events.push(Event::ToolCallArguments { index, fragment });
                }
                Step::End { n } if !open.is_empty() => {
                    let index = open.remove(n % open.len());
                    events.push(Event::ToolCallEnd { index });
                }
                Step::Arguments { .. } | Step::End { .. } => {}
            }
        }
        events
    }

    proptest! {
        #[test]
        fn reassembled_deltas_are_the_assembled_message(
            steps in proptest::collection::vec(step(), 0..24)
        ) {
            let events = in_contract_order(steps);
            let reassembled = reassemble(&stream(events.clone()));
            prop_assert_eq!(reassembled, assembled(events));
        }
    }
}
