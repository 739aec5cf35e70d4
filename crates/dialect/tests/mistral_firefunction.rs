//! The Mistral and FireFunction v2 dialects on their own templates from the corpus: the
//! prompt, the history they accept (Mistral's 9-character ids), the grammar each
//! `tool_choice` gives, and the parsers on both call syntaxes, near misses and random text.

use proptest::prelude::*;
use serde_json::{json, Value};
use toolbridge_chat::{
    Arguments, ChatRequest, FunctionDefinition, Message, Tool, ToolCall, ToolChoice, ToolChoiceMode,
};
use toolbridge_dialect::{
    detect::resolve,
    dialects::firefunction,
    dialects::mistral::{mistral_id, Mistral},
    toolkit::native::NativeDialect,
    ChatTemplate, Constraint, Dialect, IdFormat, Registry,
};
use toolbridge_grammar::check::Validator;
use toolbridge_template::Clock;

use crate::common::split::parsed_however_cut;
use crate::common::{shared, validator};

/// The Mistral dialect as the registry has it.
const MISTRAL: NativeDialect<Mistral> = NativeDialect(Mistral::V3);

fn template(relative: &str, bos: &str, eos: &str) -> ChatTemplate {
    let source = shared(&format!("corpus/jinja/{relative}"));
    ChatTemplate::new(&source, bos, eos).unwrap_or_else(|error| panic!("{error}"))
}

fn weather() -> Tool {
    Tool::function(FunctionDefinition::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    ))
}

fn add() -> Tool {
    Tool::function(FunctionDefinition::new(
        "add",
        "Adds.",
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
    ))
}

fn request(messages: Vec<Message>, choice: Option<ToolChoice>) -> ChatRequest {
    let mut request = ChatRequest::new("m", messages);
    request.tools = Some(vec![weather(), add()]);
    request.tool_choice = choice;
    request
}

fn history() -> Vec<Message> {
    let Value::Object(arguments) = json!({"city": "Paris"}) else {
        unreachable!()
    };
    vec![
        Message::user("Weather in Paris?"),
        Message::assistant_calls(vec![ToolCall::new(
            "call_8f3kq0vWmY2pLx7Tz1bN4cRd",
            "get_weather",
            Arguments::Object(arguments),
        )]),
        Message::tool("call_8f3kq0vWmY2pLx7Tz1bN4cRd", "18 C"),
    ]
}

/// The message `text` parses to, the same however cut.
fn parsed(dialect: &dyn Dialect, text: &str) -> Message {
    parsed_however_cut(&|| dialect.parser(), text)
}

fn calls(message: &Message) -> Vec<(String, Option<String>, Value)> {
    message
        .calls()
        .iter()
        .map(|call| {
            (
                call.name().to_string(),
                call.id.clone().filter(|id| !id.starts_with("call_")),
                call.function.arguments.to_value().unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[test]
fn mistral_templates_are_detected() {
    let registry = Registry::default();
    for file in [
        "hfjs-e2e/mistralai_Mistral-7B-Instruct-v0.3.jinja",
        "llama.cpp/mistralai-Mistral-Nemo-Instruct-2407.jinja",
        "llama.cpp/Mistral-Small-3.2-24B-Instruct-2506.jinja",
        "llama.cpp/mistralai-Ministral-3-14B-Reasoning-2512.jinja",
    ] {
        let source = shared(&format!("corpus/jinja/{file}"));
        assert_eq!(resolve(&source, &registry).dialect, "mistral", "{file}");
    }
}

#[test]
fn mistral_history_ids_become_nine_alphanumerics() {
    let id = mistral_id("call_8f3kq0vWmY2pLx7Tz1bN4cRd");
    assert!(IdFormat::Mistral.accepts(&id), "{id}");
    assert_eq!(mistral_id("a1B2c3D4e"), "a1B2c3D4e");
    let nemo = template(
        "llama.cpp/mistralai-Mistral-Nemo-Instruct-2407.jinja",
        "<s>",
        "</s>",
    );
    let prepared = MISTRAL
        .prepare(&request(history(), None), &nemo)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(prepared.prompt.contains("[AVAILABLE_TOOLS]"));
    assert!(prepared.prompt.contains(&format!("\"id\": \"{id}\"")));
    assert!(prepared.prompt.contains(&format!("\"call_id\": \"{id}\"")));
    let constraint = prepared.constraint.expect("a constraint");
    let validator = validator(&constraint);
    assert!(validator
        .accepts(r#"Sure.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Rome"}}]"#));
    assert!(!validator.accepts(r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}"#));
}

#[test]
fn mistral_v11_templates_get_the_args_grammar() {
    let small = template(
        "llama.cpp/Mistral-Small-3.2-24B-Instruct-2506.jinja",
        "<s>",
        "</s>",
    );
    let prepared = MISTRAL
        .prepare(
            &request(history(), Some(ToolChoice::Mode(ToolChoiceMode::Required))),
            &small,
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let constraint = prepared.constraint.expect("a constraint");
    assert!(!constraint.is_lazy());
    let validator = validator(&constraint);
    assert!(validator.accepts(r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}"#));
    assert!(validator
        .accepts(r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}[TOOL_CALLS]add[ARGS]{"a": 1}"#));
    assert!(validator.accepts(r#"[TOOL_CALLS]add[CALL_ID]a1B2c3D4e[ARGS]{"a": 1}"#));
    assert!(!validator.accepts(r#"[TOOL_CALLS]add[CALL_ID]a1B2[ARGS]{"a": 1}"#));
    assert!(!validator.accepts(r#"Sure. [TOOL_CALLS]add[ARGS]{"a": 1}"#));
    let named = MISTRAL
        .prepare(
            &request(history(), Some(ToolChoice::function("add"))),
            &small,
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let named = validator_of(named.constraint);
    assert!(named.accepts(r#"[TOOL_CALLS]add[ARGS]{"a": 1}"#));
    assert!(!named.accepts(r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}"#));
    let none = MISTRAL
        .prepare(
            &request(history(), Some(ToolChoice::Mode(ToolChoiceMode::None))),
            &small,
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(none.constraint.is_none());
    assert!(!none.prompt.contains("[AVAILABLE_TOOLS]"));
}

fn validator_of(constraint: Option<Constraint>) -> Validator {
    validator(&constraint.expect("a constraint"))
}

#[test]
fn the_mistral_parser_reads_both_syntaxes() {
    let v3 = parsed(
        &MISTRAL,
        r#"[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Rome"}, "id": "a1B2c3D4e"}, {"name": "add", "arguments": "{\"a\": 1}"}]"#,
    );
    assert_eq!(
        calls(&v3),
        vec![
            (
                "get_weather".into(),
                Some("a1B2c3D4e".into()),
                json!({"city": "Rome"})
            ),
            ("add".into(), None, json!({"a": 1})),
        ]
    );
    assert_eq!(v3.content, None);
    let v11 = parsed(
        &MISTRAL,
        r#"Let me check.[TOOL_CALLS]get_weather[CALL_ID]x9Y8z7W6v[ARGS]{"city": "[ARGS]"}[TOOL_CALLS]add[ARGS]{"a": 2}"#,
    );
    assert_eq!(
        calls(&v11),
        vec![
            (
                "get_weather".into(),
                Some("x9Y8z7W6v".into()),
                json!({"city": "[ARGS]"})
            ),
            ("add".into(), None, json!({"a": 2})),
        ]
    );
    assert_eq!(v11.content_text(), "Let me check.");
    let thinking = parsed(&MISTRAL, "[THINK]hmm[/THINK]Hello");
    assert_eq!(thinking.reasoning_content.as_deref(), Some("hmm"));
    assert_eq!(thinking.content_text(), "Hello");
}

#[test]
fn mistral_near_misses_are_content_as_written() {
    for text in [
        r#"[TOOL_CALLS][{"name": "add", "arguments": {"a": 1}"#,
        r#"[TOOL_CALLS]add {"a": 1}"#,
        r#"[TOOL_CALLS]add[ARGS]{"a": 1"#,
        r#"[TOOL_CALLS][]"#,
        "[ARGS] alone",
    ] {
        let message = parsed(&MISTRAL, text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
}

#[test]
fn firefunction_v2s_template_gets_functions_and_the_date() {
    let file = "llama.cpp/fireworks-ai-llama-3-firefunction-v2.jinja";
    let source = shared(&format!("corpus/jinja/{file}"));
    assert_eq!(
        resolve(&source, &Registry::default()).dialect,
        "firefunction_v2"
    );
    let seed = shared("seeds/001_3a57a15fbc8ec78e.txt");
    assert_eq!(
        resolve(&seed, &Registry::default()).dialect,
        "firefunction_v2"
    );
    let dialect =
        firefunction::dialect(Clock::fixed_from_str("2024-07-26T10:30:00").expect("a date"));
    let template = template(file, "<|begin_of_text|>", "<|eot_id|>");
    let prepared = dialect
        .prepare(&request(history(), None), &template)
        .unwrap_or_else(|error| panic!("{error}"));
    // The instructions seed 001's Ollama template shows, and the tools as JSON.
    for line in seed
        .lines()
        .filter(|line| line.starts_with("* ") || line.starts_with("In addition"))
    {
        assert!(
            prepared.prompt.contains(line.trim_start_matches("* ")),
            "{line}"
        );
    }
    assert!(prepared
        .prompt
        .contains("Available functions as JSON spec:\n[\n  {\n    \"type\": \"function\""));
    assert!(prepared
        .prompt
        .contains("Today is Jul 26 2024 10:30:00 GMT."));
    assert!(prepared.prompt.contains(
        r#" functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|eot_id|>"#
    ));
    assert!(prepared
        .prompt
        .ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n"));
    let validator = validator_of(prepared.constraint);
    assert!(validator.accepts(r#" functools[{"name": "get_weather", "arguments": {"city": "Rome"}}, {"name": "add", "arguments": {"a": 1}}]"#));
    assert!(!validator.accepts(r#" functools[{"name": "nope", "arguments": {}}]"#));
    let required = dialect
        .prepare(
            &request(history(), Some(ToolChoice::Mode(ToolChoiceMode::Required))),
            &template,
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let required = validator_of(required.constraint);
    assert!(required.accepts(r#"functools[{"name": "add", "arguments": {"a": 1}}]"#));
    assert!(!required.accepts(r#"Hi functools[{"name": "add", "arguments": {"a": 1}}]"#));
}

#[test]
fn the_functools_parser_reads_lists_and_leaves_the_rest() {
    let dialect = firefunction::dialect(Clock::default());
    let message = parsed(
        &dialect,
        r#"Checking. functools[{"name": "get_weather", "arguments": {"city": "]"}}, {"name": "add", "arguments": {"a": 1}}]"#,
    );
    assert_eq!(
        calls(&message),
        vec![
            ("get_weather".into(), None, json!({"city": "]"})),
            ("add".into(), None, json!({"a": 1})),
        ]
    );
    assert_eq!(message.content_text(), "Checking.");
    for text in [
        r#"functools[{"name": "add", "arguments": {"a": 1}}"#,
        "functools[1, 2]",
        "the functools module",
        "functools[]",
    ] {
        let message = parsed(&dialect, text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
}

proptest! {
    #[test]
    fn no_parser_panics_or_splits_differently(
        text in "(\\[TOOL_CALLS\\]|\\[ARGS\\]|\\[CALL_ID\\]|\\[THINK\\]|\\[/THINK\\]|functools\\[|[\\[\\]{}\":, a-z0-9])*"
    ) {
        for dialect in [&MISTRAL as &dyn Dialect, &firefunction::dialect(Clock::default())] {
            let whole = parsed(dialect, &text);
            if whole.calls().is_empty() && !text.trim_start().starts_with("[THINK]") {
                prop_assert_eq!(whole.content_text(), text.as_str());
            }
        }
    }
}
