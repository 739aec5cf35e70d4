//! The parsers of the prompt styles that have their own syntax (`thoughtful_steps`,
//! `mixtral`, `functionary_v2`): a call written in the style's syntax comes back the same, whole and cut at every byte; the answer
//! comes back as content and the thought as reasoning; and garbage, however cut, comes
//! out as content without a panic.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolbridge_chat::{Arguments, Message, ToolCall};
use toolbridge_dialect::{
    dialects::styles::{functionary_v2, long, thoughtful_steps},
    rewrite::{CallWriter, ThoughtfulSteps, ToolCallTags},
    Dialect,
};

use crate::common::split::parsed_however_cut;

fn split_invariant(dialect: &dyn Dialect, text: &str) -> Message {
    parsed_however_cut(&|| dialect.parser(), text)
}

fn assert_split_invariant(text: &str) -> Message {
    split_invariant(&thoughtful_steps::dialect(), text)
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let value = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[ -~é\"\\\\\n]{0,12}".prop_map(Value::from),
    ];
    proptest::collection::btree_map("[a-z_]{1,8}", value, 0..4)
        .prop_map(|map| map.into_iter().collect())
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        "call_[0-9]{1,6}",
        "[A-Za-z_][A-Za-z0-9_]{0,12}",
        arguments(),
    )
        .prop_map(|(id, name, arguments)| ToolCall::new(id, name, Arguments::Object(arguments)))
}

fn call_value(call: &ToolCall) -> (Option<String>, String, Value) {
    let arguments = serde_json::to_value(&call.function.arguments).expect("arguments as JSON");
    let arguments = match arguments {
        Value::String(text) => serde_json::from_str(&text).expect("arguments are JSON text"),
        other => other,
    };
    (call.id.clone(), call.name().to_string(), arguments)
}

proptest! {
    #[test]
    fn thoughtful_steps_calls_come_back_however_cut(
        thought in "[ -~é\n]{0,16}",
        calls in proptest::collection::vec(tool_call(), 1..3),
    ) {
        let text = ThoughtfulSteps.write_calls(&thought, &calls);
        let message = assert_split_invariant(&text);
        let parsed: Vec<_> = message.calls().iter().map(call_value).collect();
        let written: Vec<_> = calls.iter().map(call_value).collect();
        prop_assert_eq!(parsed, written);
        let reasoning = message.reasoning_content.as_deref().unwrap_or_default();
        prop_assert_eq!(reasoning, thought.as_str());
    }

    #[test]
    fn thoughtful_steps_answers_come_back_however_cut(answer in "[ -~é\n]{0,16}") {
        let text = ThoughtfulSteps.write_answer(&answer).expect("a step");
        let message = assert_split_invariant(&text);
        prop_assert!(message.calls().is_empty());
        prop_assert_eq!(message.content_text(), answer);
    }

    #[test]
    fn thoughtful_steps_garbage_is_content(text in "[{}\\[\\]\":, a-z_0-9]{1,40}") {
        let message = assert_split_invariant(&text);
        if !message.calls().is_empty() || message.content_text() != text {
            // Only a well-formed step is read as one.
            let step: Value = serde_json::from_str(&text).expect("a step is JSON");
            prop_assert!(step.get("next_step").is_some());
        }
    }
}

proptest! {
    #[test]
    fn mixtral_calls_come_back_however_cut_and_escaped(
        calls in proptest::collection::vec(tool_call(), 1..3),
    ) {
        let plain = ToolCallTags.write_calls("", &calls);
        let escaped = plain.replace('_', "\\_");
        let dialect = long::mixtral();
        let message = split_invariant(&dialect, &plain);
        prop_assert_eq!(split_invariant(&dialect, &escaped), message.clone());
        // The Hermes parser takes no ids from the text: compare names and arguments.
        let without_id = |call: &ToolCall| {
            let (_, name, arguments) = call_value(call);
            (name, arguments)
        };
        let parsed: Vec<_> = message.calls().iter().map(without_id).collect();
        let written: Vec<_> = calls.iter().map(without_id).collect();
        prop_assert_eq!(parsed, written);
    }

    #[test]
    fn mixtral_never_panics(text in "(<tool\\\\?_call>|</tool\\\\?_call>|[{}\\\\_\":, a-z]){0,24}") {
        split_invariant(&long::mixtral(), &text);
    }
}

#[test]
fn mixtral_reads_escaped_tags_and_names() {
    let text =
        r#"<tool\_call>{"name": "super\_secret", "arguments": {"a_b": "x\\_y"}}</tool\_call>"#;
    let message = split_invariant(&long::mixtral(), text);
    assert_eq!(message.calls().len(), 1);
    assert_eq!(message.calls()[0].name(), "super_secret");
    let arguments = serde_json::to_value(&message.calls()[0].function.arguments).expect("JSON");
    assert_eq!(arguments, json!(r#"{"a_b": "x\\_y"}"#));
}

#[test]
fn thoughtful_steps_reads_the_grammar_shape_and_typed_results() {
    let call = r#"{"thought_about_next_step_only": "Add them.", "next_step": {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}}"#;
    let message = assert_split_invariant(call);
    assert_eq!(message.calls().len(), 1);
    assert_eq!(message.calls()[0].name(), "add");
    let result = json!({"thought_about_next_step_only": "", "next_step": {"result": 42}});
    assert_eq!(
        assert_split_invariant(&result.to_string()).content_text(),
        "42"
    );
}

#[test]
fn thoughtful_steps_near_misses_are_content() {
    for text in [
        r#"{"thought_about_next_step_only": "x", "next_step": {"tool_calls": [{"arguments": {}}]}}"#,
        r#"{"thought_about_next_step_only": 3, "next_step": {"result": "x"}}"#,
        r#"{"next_step": {"tool_calls": "add"}}"#,
        r#"{"thought_about_next_step_only": "x", "next_step": {"tool_calls": [{"name": "add""#,
        "The answer is 42.",
    ] {
        let message = assert_split_invariant(text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
}

/// What opens each `functionary_v2` message after the first.
const START: &str = "<|from|>assistant\n<|recipient|>";

/// `calls` as a `functionary_v2` answer: `content` for the user, then each call routed to
/// its tool, as the style's grammar writes them.
fn routed(content: &str, calls: &[ToolCall]) -> String {
    let mut text = format!("all\n<|content|>{content}");
    for call in calls {
        let (_, name, arguments) = call_value(call);
        text.push_str(&format!("{START}{name}\n<|content|>\n{arguments}\n"));
    }
    text
}

proptest! {
    #[test]
    fn functionary_v2_calls_come_back_however_cut(
        content in "[ -~é\n]{0,16}",
        calls in proptest::collection::vec(tool_call(), 1..3),
    ) {
        prop_assume!(!content.contains("<|from|>"));
        prop_assume!(calls.iter().all(|call| call.name() != "all"));
        let text = routed(&content, &calls);
        let message = split_invariant(&functionary_v2::dialect(), &text);
        // Routed calls carry no ids: compare names and arguments.
        let without_id = |call: &ToolCall| {
            let (_, name, arguments) = call_value(call);
            (name, arguments)
        };
        let parsed: Vec<_> = message.calls().iter().map(without_id).collect();
        let written: Vec<_> = calls.iter().map(without_id).collect();
        prop_assert_eq!(parsed, written);
        prop_assert_eq!(message.content_text(), content);
    }

    #[test]
    fn functionary_v2_never_panics(
        text in "(<\\|from\\|>assistant\n<\\|recipient\\|>|\n<\\|content\\|>|all|f|[{}\":, a-z0-9\n]){0,24}",
    ) {
        split_invariant(&functionary_v2::dialect(), &text);
    }
}

#[test]
fn functionary_v2_near_misses_are_content() {
    for text in [
        "Hello, I am not routed.",
        "all\n<|content",
        "say\n<|content|>\n{\"text\": ",
        "say\n<|content|>\n[1, 2]\n",
        "say <|content|>{}",
    ] {
        let message = split_invariant(&functionary_v2::dialect(), text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
}

#[test]
fn functionary_v2_garbage_after_a_call_keeps_its_opening() {
    let text = format!("say\n<|content|>{{\"text\": \"hi\"}}{START}oops");
    let message = split_invariant(&functionary_v2::dialect(), &text);
    assert_eq!(message.calls().len(), 1);
    assert_eq!(message.calls()[0].name(), "say");
    assert_eq!(message.content_text(), format!("{START}oops"));
}
