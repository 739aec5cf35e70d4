//! An answer ends at a call that repeats an earlier call of the same answer.
//!
//! A small model decoding greedily can fall into a loop of calls — measured with
//! Qwen2.5-Coder-0.5B after a tool result: the same two calls over and over until
//! `max_tokens`, which turns a good answer into a cut one (`finish_reason: "length"`).
//! Once parallel calls are allowed the grammar cannot end the loop, since any number of
//! calls is valid. [`RepeatGuard`] watches the parser's events instead: a call with the
//! same name and the same argument text as an earlier call of the answer is dropped, with
//! everything after it, and the generation is told to stop. The answer keeps the calls
//! before the repeat and ends as a tool-call answer. Argument texts are compared without
//! the whitespace outside their strings: the model repeats a call laid out anew
//! (`{"city": "Paris"}`, then `{\n    "city": "Paris"\n  }`), measured on the default
//! model on llama-server.
//!
//! A call is held back only while it may still turn out a repeat — while an earlier call
//! has its name and its argument text so far is a prefix of that call's — so calls that
//! differ stream as they are parsed.

use toolbridge_dialect::Event;
use toolbridge_grammar::check::CompactJson;

/// Filters a generation's events; see the module docs.
#[derive(Debug, Default)]
pub struct RepeatGuard {
    /// The answer's finished calls: name and argument text, compact ([`CompactJson`]).
    done: Vec<(String, String)>,
    /// The call being parsed.
    current: Option<Current>,
    /// A repeat was found: the answer ends there.
    tripped: bool,
}

#[derive(Debug)]
struct Current {
    name: String,
    arguments: CompactJson,
    /// Its events, while it may still be a repeat; `None` once it is known not to be.
    held: Option<Vec<Event>>,
}

impl RepeatGuard {
    /// The events that go on, in order; nothing once a repeat was found.
    pub fn pass(&mut self, events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            if self.tripped {
                break;
            }
            self.take(event, &mut out);
        }
        out
    }

    /// Whether the answer ended at a repeated call.
    pub fn tripped(&self) -> bool {
        self.tripped
    }

    fn take(&mut self, event: Event, out: &mut Vec<Event>) {
        match &event {
            Event::ToolCallStart { name, .. } => {
                let name = name.clone();
                self.current = Some(Current {
                    arguments: CompactJson::default(),
                    held: Some(Vec::new()),
                    name,
                });
                self.keep(event, out);
            }
            Event::ToolCallArguments { fragment, .. } => {
                if let Some(current) = &mut self.current {
                    current.arguments.push(fragment);
                }
                self.keep(event, out);
            }
            Event::ToolCallEnd { .. } => self.end_call(event, out),
            _ => self.keep(event, out),
        }
    }

    /// Holds `event` with the current call while it may be a repeat, else passes it on.
    fn keep(&mut self, event: Event, out: &mut Vec<Event>) {
        let may_repeat = self.current.as_ref().is_some_and(|current| {
            self.done.iter().any(|(name, arguments)| {
                *name == current.name && arguments.starts_with(&current.arguments.text)
            })
        });
        match self
            .current
            .as_mut()
            .and_then(|current| current.held.as_mut())
        {
            Some(held) if may_repeat => held.push(event),
            Some(held) => {
                out.append(held);
                out.push(event);
                if let Some(current) = &mut self.current {
                    current.held = None;
                }
            }
            None => out.push(event),
        }
    }

    fn end_call(&mut self, event: Event, out: &mut Vec<Event>) {
        let Some(current) = self.current.take() else {
            out.push(event);
            return;
        };
        let repeat = current.held.is_some()
            && self.done.iter().any(|(name, arguments)| {
                *name == current.name && *arguments == current.arguments.text
            });
        if repeat {
            self.tripped = true;
            return;
        }
        out.extend(current.held.into_iter().flatten());
        out.push(event);
        self.done.push((current.name, current.arguments.text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(index: u32, name: &str, arguments: &[&str]) -> Vec<Event> {
        let mut events = vec![Event::ToolCallStart {
            index,
            id: None,
            name: name.to_string(),
        }];
        events.extend(arguments.iter().map(|fragment| Event::ToolCallArguments {
            index,
            fragment: fragment.to_string(),
        }));
        events.push(Event::ToolCallEnd { index });
        events
    }

    #[test]
    fn different_calls_pass_as_they_come() {
        let mut guard = RepeatGuard::default();
        let first = call(0, "add", &["{\"a\":", "1}"]);
        assert_eq!(guard.pass(first.clone()), first);
        let other_name = call(1, "sub", &["{\"a\":", "1}"]);
        assert_eq!(guard.pass(other_name.clone()), other_name);
        let other_arguments = call(2, "add", &["{\"a\":", "2}"]);
        assert_eq!(guard.pass(other_arguments.clone()), other_arguments);
        assert!(!guard.tripped());
    }

    #[test]
    fn a_call_is_held_only_while_it_may_repeat() {
        let mut guard = RepeatGuard::default();
        guard.pass(call(0, "add", &["{\"a\":1}"]));
        let start = guard.pass(call(1, "add", &[])[..1].to_vec());
        assert!(start.is_empty(), "held: same name as an earlier call");
        let differing = guard.pass(vec![Event::ToolCallArguments {
            index: 1,
            fragment: "{\"a\":2".into(),
        }]);
        assert_eq!(
            differing.len(),
            2,
            "start and fragment released: {differing:?}"
        );
    }

    #[test]
    fn a_repeated_call_ends_the_answer() {
        let mut guard = RepeatGuard::default();
        let mut events = call(0, "get_weather", &["{\"city\":\"Paris\"}"]);
        events.push(Event::Content("\n".into()));
        events.extend(call(1, "add", &["{\"a\":1}"]));
        let kept = events.clone();
        events.extend(call(2, "get_weather", &["{\"city\":", "\"Paris\"}"]));
        events.extend(call(3, "add", &["{\"a\":2}"]));
        assert_eq!(guard.pass(events), kept);
        assert!(guard.tripped());
        assert!(guard.pass(vec![Event::Content("more".into())]).is_empty());
    }

    #[test]
    fn a_call_laid_out_anew_is_a_repeat() {
        let mut guard = RepeatGuard::default();
        let first = call(0, "get_weather", &["{\"city\": \"Paris\"}"]);
        assert_eq!(guard.pass(first.clone()), first);
        let again = call(1, "get_weather", &["{\n    \"city\"", ": \"Paris\"\n  }"]);
        assert!(guard.pass(again).is_empty());
        assert!(guard.tripped());
    }

    #[test]
    fn blanks_inside_strings_still_differ() {
        let mut guard = RepeatGuard::default();
        guard.pass(call(0, "say", &["{\"text\": \"a b\"}"]));
        let other = call(1, "say", &["{\"text\": \"ab\"}"]);
        assert_eq!(guard.pass(other.clone()), other);
        let quoted = call(2, "say", &["{\"text\": \"\\\" a\"}"]);
        assert_eq!(guard.pass(quoted.clone()), quoted);
        assert!(!guard.tripped());
    }
}
