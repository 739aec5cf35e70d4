//! Calls written off-format — fenced or bare JSON naming a declared tool — through the
//! Hermes dialect's prepared parser and grammar: read as calls when they name a declared
//! tool and fit its schema, content exactly as written otherwise, the same however cut.

use proptest::prelude::*;
use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, Message, Tool};
use toolbridge_dialect::{
    dialects::hermes_dialect::Hermes, toolkit::native::NativeDialect, ChatTemplate, Dialect, Event,
    Pacing, Prepared,
};
use toolbridge_grammar::check::Validator;
use toolbridge_grammar::lark;

use crate::common::split::parsed_however_cut;

fn weather() -> Tool {
    serde_json::from_value(json!({"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]}}}))
    .expect("a tool")
}

fn prepared() -> Prepared {
    let template = ChatTemplate::new(
        "{% for m in messages %}{{ m.content }}\n{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}<tool_call>",
        "",
        "",
    )
    .expect("compiles");
    let mut request = ChatRequest::new("m", vec![Message::user("Weather in Paris?")]);
    request.tools = Some(vec![weather()]);
    NativeDialect(Hermes::Qwen)
        .prepare(&request, &template)
        .expect("prepares")
}

/// The message, the same however cut.
fn parsed(text: &str) -> Message {
    parsed_however_cut(&|| prepared().parser, text)
}

fn calls(message: &Message) -> Vec<(String, Value)> {
    message
        .calls()
        .iter()
        .map(|call| {
            let arguments = serde_json::to_value(&call.function.arguments).expect("JSON");
            let arguments = match arguments {
                Value::String(text) => serde_json::from_str(&text).expect("JSON arguments"),
                other => other,
            };
            (call.name().to_string(), arguments)
        })
        .collect()
}

#[test]
fn a_fenced_call_of_a_declared_tool_is_a_call() {
    let text = "Let me check.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";
    let message = parsed(text);
    assert_eq!(
        calls(&message),
        [("get_weather".to_string(), json!({"city": "Paris"}))]
    );
    assert_eq!(message.content_text(), "Let me check.\n");
}

#[test]
fn a_bare_call_is_a_call_and_text_around_it_stays() {
    let text =
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", \"days\": 2}} Done.";
    let message = parsed(text);
    assert_eq!(
        calls(&message),
        [(
            "get_weather".to_string(),
            json!({"city": "Oslo", "days": 2})
        )]
    );
    assert_eq!(message.content_text(), " Done.");
}

#[test]
fn objects_that_are_no_call_of_a_declared_tool_are_content_as_written() {
    for text in [
        "```json\n{\"name\": \"get_time\", \"arguments\": {}}\n```",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}",
        "{\"name\": \"get_weather\", \"arguments\": {\"days\": 3}}",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}, \"extra\": 1}",
        "{\"name\": \"John\", \"age\": 30}",
        "```python\nprint({\"name\": 1})\n```",
        "fn main() { let x = {1}; }",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": ",
        "``",
    ] {
        let message = parsed(text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
}

#[test]
fn a_call_inside_text_that_is_no_json_is_found() {
    let text = "{ return {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}} }";
    let message = parsed(text);
    assert_eq!(
        calls(&message),
        [("get_weather".to_string(), json!({"city": "Rome"}))]
    );
    assert_eq!(message.content_text(), "{ return  }");
}

#[test]
fn tagged_and_off_format_calls_are_numbered_together() {
    let text = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"A\"}}\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"B\"}}\n</tool_call>";
    let message = parsed(text);
    let cities: Vec<Value> = calls(&message)
        .into_iter()
        .map(|(_, a)| a["city"].clone())
        .collect();
    assert_eq!(cities, [json!("A"), json!("B")]);
}

/// Parallel calls as small models write them: one fenced block per call, or one object
/// per line in one block. The grammar admits both, and both come back as the calls.
#[test]
fn several_fenced_calls_are_several_calls() {
    let constraint = prepared().constraint.expect("a constraint");
    let validator = Validator::from_lark(&lark::print_lazy(
        constraint.grammar(),
        constraint.triggers(),
    ))
    .expect("compiles");
    let call = |city: &str| {
        format!("{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}")
    };
    for text in [
        format!("```json\n{}\n```\n```json\n{}\n```", call("A"), call("B")),
        format!("```json\n{}\n{}\n```", call("A"), call("B")),
    ] {
        assert!(validator.accepts(&text), "the grammar rejects {text}");
        let message = parsed(&text);
        let cities: Vec<Value> = calls(&message)
            .into_iter()
            .map(|(_, arguments)| arguments["city"].clone())
            .collect();
        assert_eq!(cities, [json!("A"), json!("B")], "{text}");
    }
}

/// Arguments fit their schema whatever the order of their members: an optional argument
/// before a required one (the grammar behind the check reads members in one order).
#[test]
fn arguments_fit_in_any_member_order() {
    for text in [
        "{\"name\": \"get_weather\", \"arguments\": {\"days\": 2, \"city\": \"Paris\"}}",
        "```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"days\": 2,\n    \"city\": \"Paris\"\n  }\n}\n```",
    ] {
        let message = parsed(text);
        assert_eq!(
            calls(&message),
            [("get_weather".to_string(), json!({"days": 2, "city": "Paris"}))],
            "{text}"
        );
    }
}

/// Blank lines between calls, and after the last, are the list's layout: an answer of
/// calls alone has no content; text after a call keeps the blank before it.
#[test]
fn blank_space_between_calls_is_layout() {
    let call = |city: &str| {
        format!("{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}")
    };
    let only_calls = parsed(&format!("{}\n\n{}\n", call("A"), call("B")));
    assert_eq!(calls(&only_calls).len(), 2);
    assert_eq!(only_calls.content_text(), "");
    let then_text = parsed(&format!("{}\n\nDone.", call("A")));
    assert_eq!(calls(&then_text).len(), 1);
    assert_eq!(then_text.content_text(), "\n\nDone.");
}

#[test]
fn the_grammar_constrains_a_bare_or_fenced_call_once_it_starts() {
    let constraint = prepared().constraint.expect("a constraint");
    let validator = Validator::from_lark(&lark::print_lazy(
        constraint.grammar(),
        constraint.triggers(),
    ))
    .expect("compiles");
    for good in [
        "Sure.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 1}}",
        "```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"city\": \"Paris\"\n  }\n}\n```",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        "No call needed.",
    ] {
        assert!(validator.accepts(good), "rejects {good}");
    }
    for bad in [
        "{\"name\": \"get_time\", \"arguments\": {}}",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": 1}}",
        "{\"name\": \"get_weather\", \"arguments\": {}}",
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"city2\": \"Rome\"}}",
        "```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"town\": \"Paris\"\n  }\n}",
    ] {
        assert!(!validator.accepts(bad), "accepts {bad}");
    }
}

/// The events of `text` read char by char, with the grammar enforced (calls streamed),
/// then finished (`cut`: by the token limit).
fn streamed_events(text: &str, cut: bool) -> Vec<Vec<Event>> {
    let mut parser = prepared().parser;
    parser.set_pacing(Pacing::EveryPiece);
    let mut events: Vec<Vec<Event>> = text
        .char_indices()
        .map(|(at, c)| parser.push(&text[at..at + c.len_utf8()]))
        .collect();
    events.push(if cut {
        parser.finish_cut()
    } else {
        parser.finish()
    });
    events
}

fn arguments_sent(events: &[Vec<Event>]) -> Vec<String> {
    events
        .iter()
        .flatten()
        .filter_map(|event| match event {
            Event::ToolCallArguments { fragment, .. } => Some(fragment.clone()),
            _ => None,
        })
        .collect()
}

/// A call opened the way the grammar's triggers open it is held to a call by the grammar,
/// so where it is enforced the call streams: its start with the name's closing quote, its
/// arguments as they come, as the model wrote them, compact or pretty-printed.
#[test]
fn a_call_held_to_the_grammar_streams_as_written() {
    for (text, arguments) in [
        (
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 12}}",
            "{\"city\": \"Paris\", \"days\": 12}",
        ),
        (
            "```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"city\": \"Oslo\"\n  }\n}\n```",
            "{\n    \"city\": \"Oslo\"\n  }",
        ),
    ] {
        let events = streamed_events(text, false);
        let name_end = text.find("get_weather").expect("a name") + "get_weather".len();
        let started = events
            .iter()
            .position(|step| step.iter().any(|e| matches!(e, Event::ToolCallStart { .. })));
        assert_eq!(started, Some(name_end), "the start comes with the name's quote: {text}");
        let sent = arguments_sent(&events);
        assert!(sent.len() >= 10, "{sent:?}");
        assert_eq!(sent.concat(), arguments);
        assert_eq!(calls(&parsed(text))[0].1, serde_json::from_str::<Value>(arguments).expect("JSON"));
        let whole: Vec<Event> = {
            let mut parser = prepared().parser;
            let mut events = parser.push(text);
            events.extend(parser.finish());
            events
        };
        assert_eq!(arguments_sent(&[whole]).concat(), arguments, "whole as streamed");
    }
}

/// A streamed call the token limit cuts ends with the arguments written so far, closed;
/// one the engine let break the grammar ends as sent, and the text after it is read afresh.
#[test]
fn a_streamed_call_cut_off_ends_with_its_arguments_so_far() {
    let cut = streamed_events(
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
        true,
    );
    assert_eq!(arguments_sent(&cut).concat(), "{\"city\": \"Par\"}");
    assert!(
        cut.iter()
            .flatten()
            .all(|e| !matches!(e, Event::Content(_))),
        "{cut:?}"
    );
    let broken = streamed_events(
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"]} Done.",
        false,
    );
    assert_eq!(arguments_sent(&broken).concat(), "{\"city\": \"Rome\"}");
    let content: String = broken
        .iter()
        .flatten()
        .filter_map(|e| match e {
            Event::Content(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(content, "]} Done.");
}

/// Without an enforced grammar nothing is sent before the object is decided: a near miss
/// stays content.
#[test]
fn a_call_is_streamed_only_where_the_grammar_is_enforced() {
    let text = "{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}";
    let mut parser = prepared().parser;
    let mut events: Vec<Event> = text
        .char_indices()
        .flat_map(|(at, c)| parser.push(&text[at..at + c.len_utf8()]))
        .collect();
    events.extend(parser.finish());
    let content: String = events
        .iter()
        .map(|e| match e {
            Event::Content(text) => text.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(content, text);
}

proptest! {
    // Each cut prepares a fresh parser, which compiles the tool's schema for its first
    // candidate: a few cases cover the alphabet.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn content_without_calls_comes_out_as_written(
        text in "([{}`\":, a-z_0-9\n]|```json\n|\\{\"name\": \"get_weather\"){0,16}",
    ) {
        let message = parsed(&text);
        if message.calls().is_empty() {
            prop_assert_eq!(message.content_text(), text);
        }
    }

    /// Calls the grammar admits, in each layout it admits, read the same streamed char by
    /// char as whole (the shared harness), with any city a JSON string can hold.
    #[test]
    fn calls_held_to_the_grammar_stream_as_they_read_whole(
        city in any::<String>(),
        days in proptest::option::of(0u32..400),
        layout in 0usize..3,
    ) {
        let city = serde_json::to_string(&city).expect("JSON");
        let days = days.map(|days| format!(", \"days\": {days}")).unwrap_or_default();
        let text = match layout {
            0 => format!("{{\"name\": \"get_weather\", \"arguments\": {{\"city\": {city}{days}}}}}"),
            1 => format!("```json\n{{\n  \"name\": \"get_weather\",\n  \"arguments\": {{\"city\": {city}{days}}}\n}}\n```"),
            _ => format!("Sure.\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": {city}{days}}}}}\n"),
        };
        let message = parsed(&text);
        prop_assert_eq!(message.calls().len(), 1);
    }
}
