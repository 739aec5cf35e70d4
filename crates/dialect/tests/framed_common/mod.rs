//! Checks every native dialect built on `toolkit::framed` gets: its corpus template renders a
//! conversation with calls and results, outputs in its syntax parse to the right calls however
//! cut, its grammar honours each `tool_choice`, random calls written in its syntax come back
//! whole, and random bytes never panic.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};
use toolbridge_chat::{
    AllowedTools, AllowedToolsMode, Arguments, ChatRequest, FunctionDefinition, Message, NamedTool,
    Tool, ToolCall, ToolChoice, ToolChoiceMode,
};
use toolbridge_dialect::{ChatTemplate, Dialect, DialectErrorKind, Prepared, Registry};

pub use crate::common::split::{self, parsed_however_cut};
pub use crate::common::validator;

/// A call as the tests write and read them: a name and its arguments object.
pub type Call = (String, Value);

/// Writes calls in a dialect's syntax, after `text` (content or reasoning, as the syntax has
/// it), as its grammar has the model write them.
pub type Writer = fn(text: &str, calls: &[Call]) -> String;

/// The registry every test reads its dialect from.
pub fn registry() -> Registry {
    Registry::default()
}

/// A template's text: one under `../shared/corpus/jinja/`, or as `tests/…` one this crate
/// keeps (those llama.cpp's tests ship, the learned fixtures).
pub fn corpus_text(relative: &str) -> String {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = if relative.starts_with("tests/") {
        crate_dir.join(relative)
    } else {
        crate_dir
            .join("../../../shared/corpus/jinja")
            .join(relative)
    };
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!("template not found: looked at {} ({error})", path.display())
    })
}

pub fn template(relative: &str, bos: &str, eos: &str) -> ChatTemplate {
    ChatTemplate::new(&corpus_text(relative), bos, eos).unwrap_or_else(|error| panic!("{error}"))
}

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::function(FunctionDefinition::new(
            "get_weather",
            "The weather in a city.",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city."},
                    "days": {"type": "integer", "description": "How many days."}
                },
                "required": ["city"]
            }),
        )),
        Tool::function(FunctionDefinition::new(
            "add",
            "Adds two numbers.",
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "One."},
                    "b": {"type": "number", "description": "Two."}
                },
                "required": ["a", "b"]
            }),
        )),
    ]
}

pub fn request(choice: Option<ToolChoice>) -> ChatRequest {
    ChatRequest {
        tools: Some(tools()),
        tool_choice: choice,
        ..ChatRequest::new(
            "m",
            vec![
                Message::system("You are terse."),
                Message::user("Weather in Paris?"),
            ],
        )
    }
}

/// A conversation whose assistant called `get_weather` and got a result, then a user turn.
pub fn conversation() -> ChatRequest {
    let mut request = request(None);
    request
        .messages
        .push(Message::assistant_calls(vec![ToolCall::new(
            "call_1",
            "get_weather",
            Arguments::Text(r#"{"city": "Paris"}"#.into()),
        )]));
    request.messages.push(Message::tool("call_1", "sunny, 21C"));
    request.messages.push(Message::assistant("It is sunny."));
    request.messages.push(Message::user("And in Rome?"));
    request
}

pub fn prepare(dialect: &dyn Dialect, request: &ChatRequest, template: &ChatTemplate) -> Prepared {
    dialect
        .prepare(request, template)
        .unwrap_or_else(|error| panic!("{}: {error}", dialect.name()))
}

/// The prompt for [`conversation`]: it must hold each of `expected`.
pub fn renders_history(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    expected: &[&str],
) -> String {
    let prompt = prepare(dialect, &conversation(), template).prompt;
    for part in expected {
        assert!(
            prompt.contains(part),
            "{}: no {part:?} in\n{prompt}",
            dialect.name()
        );
    }
    prompt
}

pub fn calls_of(message: &Message) -> Vec<Call> {
    message
        .calls()
        .iter()
        .map(|call| {
            let arguments = call
                .function
                .arguments
                .to_value()
                .unwrap_or_else(|error| panic!("{error}"));
            (call.name().to_string(), arguments)
        })
        .collect()
}

pub fn call(name: &str, arguments: Value) -> Call {
    (name.to_string(), arguments)
}

/// A call as the pythonic grammars write it: `name(key=value, …)`, values as JSON but
/// booleans as Python's.
pub fn python_call((name, arguments): &Call) -> String {
    let arguments: Vec<String> = arguments
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| match value {
            Value::Bool(true) => format!("{key}=True"),
            Value::Bool(false) => format!("{key}=False"),
            other => format!("{key}={other}"),
        })
        .collect();
    format!("{name}({})", arguments.join(", "))
}

/// `text` read by the dialect's own parser and by the parser `prepare` makes for a request
/// with [`tools`]: both give `expected` calls, and the message is returned.
pub fn reads(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    text: &str,
    expected: &[Call],
) -> Message {
    let plain = parsed_however_cut(&|| dialect.parser(), text);
    assert_eq!(calls_of(&plain), expected, "{}: {text:?}", dialect.name());
    let request = request(None);
    let prepared = parsed_however_cut(&|| prepare(dialect, &request, template).parser, text);
    assert_eq!(
        calls_of(&prepared),
        expected,
        "{} prepared: {text:?}",
        dialect.name()
    );
    plain
}

/// Every `tool_choice`, in prompt and grammar, for calls written by `write`.
pub fn honours_tool_choice(dialect: &dyn Dialect, template: &ChatTemplate, write: Writer) {
    let weather = vec![call("get_weather", json!({"city": "Paris"}))];
    let add = vec![call("add", json!({"a": 1, "b": 2.5}))];
    let both = vec![weather[0].clone(), add[0].clone()];
    let wrong_type = vec![call("get_weather", json!({"city": "Paris", "days": "two"}))];
    let unknown = vec![call("get_wether", json!({"city": "Paris"}))];
    let name = dialect.name();

    let auto = prepare(dialect, &request(None), template);
    let constraint = auto.constraint.as_ref().expect("tools make a constraint");
    assert!(constraint.is_lazy(), "{name}: auto is lazy");
    let grammar = validator(constraint);
    assert!(grammar.accepts("It is sunny."), "{name}");
    for calls in [&weather, &add, &both] {
        let text = write("", calls);
        assert!(grammar.accepts(&text), "{name}: auto rejects {text}");
    }
    for calls in [&wrong_type, &unknown] {
        let text = write("", calls);
        assert!(!grammar.accepts(&text), "{name}: auto accepts {text}");
    }

    let mut single = request(None);
    single.parallel_tool_calls = Some(false);
    let grammar = validator(
        prepare(dialect, &single, template)
            .constraint
            .as_ref()
            .expect("constraint"),
    );
    assert!(grammar.accepts(&write("", &weather)), "{name}");
    assert!(!grammar.accepts(&write("", &both)), "{name}: one call only");

    let required = prepare(
        dialect,
        &request(Some(ToolChoiceMode::Required.into())),
        template,
    );
    let constraint = required.constraint.as_ref().expect("constraint");
    assert!(!constraint.is_lazy(), "{name}: required is forced");
    let grammar = validator(constraint);
    assert!(grammar.accepts(&write("", &add)), "{name}");
    assert!(!grammar.accepts("It is sunny."), "{name}");

    let named = prepare(
        dialect,
        &request(Some(ToolChoice::function("add"))),
        template,
    );
    let grammar = validator(named.constraint.as_ref().expect("constraint"));
    assert!(grammar.accepts(&write("", &add)), "{name}");
    assert!(
        !grammar.accepts(&write("", &weather)),
        "{name}: only the named tool"
    );
    assert!(
        named.prompt.contains("get_weather"),
        "{name}: the prompt shows every tool"
    );

    let allowed = ToolChoice::AllowedTools {
        allowed_tools: AllowedTools {
            mode: AllowedToolsMode::Auto,
            tools: vec![NamedTool::function("add")],
        },
    };
    let allowed = prepare(dialect, &request(Some(allowed)), template);
    let constraint = allowed.constraint.as_ref().expect("constraint");
    assert!(constraint.is_lazy(), "{name}");
    let grammar = validator(constraint);
    assert!(grammar.accepts(&write("", &add)), "{name}");
    assert!(
        !grammar.accepts(&write("", &weather)),
        "{name}: only allowed tools"
    );

    let none = prepare(
        dialect,
        &request(Some(ToolChoiceMode::None.into())),
        template,
    );
    assert!(none.constraint.is_none(), "{name}: none has no constraint");
    assert!(
        !none.prompt.contains("get_weather"),
        "{name}: none shows no tools"
    );

    let mut no_tools = request(Some(ToolChoiceMode::Required.into()));
    no_tools.tools = None;
    let refused = dialect.prepare(&no_tools, template).err();
    assert_eq!(
        refused.map(|error| *error.kind()),
        Some(DialectErrorKind::NoCallableTools)
    );
}

/// A random tool: its name and parameters (each a JSON type, all required).
fn arb_tool() -> impl Strategy<Value = (String, Vec<(String, &'static str)>)> {
    let kind = prop::sample::select(vec!["string", "integer", "number", "boolean", "array"]);
    (
        "[a-z][a-zA-Z0-9_]{0,11}",
        prop::collection::btree_map("[a-z][a-z0-9_]{0,7}", kind, 0..4)
            .prop_map(|map| map.into_iter().collect()),
    )
}

fn arb_value(kind: &str) -> BoxedStrategy<Value> {
    let text = "[ -~é€\"\\\\\n\t<>|{}\\[\\]]{0,12}";
    match kind {
        "string" => text.prop_map(Value::from).boxed(),
        "integer" => any::<i32>().prop_map(Value::from).boxed(),
        "number" => (-4_000_000i32..4_000_000)
            .prop_map(|n| Value::from(f64::from(n) / 4.0))
            .boxed(),
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        _ => prop::collection::vec(text, 0..3)
            .prop_map(|items| json!(items))
            .boxed(),
    }
}

fn schema_of(kind: &str) -> Value {
    match kind {
        "array" => json!({"type": "array", "items": {"type": "string"}}),
        kind => json!({ "type": kind }),
    }
}

/// Random tools with distinct names, and one to three calls of them.
pub fn arb_tools_and_calls() -> impl Strategy<Value = (Vec<Tool>, Vec<Call>)> {
    prop::collection::vec(arb_tool(), 1..4).prop_flat_map(|mut specs| {
        specs.sort_by(|a, b| a.0.cmp(&b.0));
        specs.dedup_by(|a, b| a.0 == b.0);
        let tools: Vec<Tool> = specs
            .iter()
            .map(|(name, params)| {
                let properties: Map<String, Value> = params
                    .iter()
                    .map(|(key, kind)| {
                        let mut schema = schema_of(kind);
                        schema["description"] = Value::from("A parameter.");
                        (key.clone(), schema)
                    })
                    .collect();
                let required: Vec<&String> = params.iter().map(|(key, _)| key).collect();
                Tool::function(FunctionDefinition::new(
                    name,
                    "A tool.",
                    json!({"type": "object", "properties": properties, "required": required}),
                ))
            })
            .collect();
        let calls: Vec<BoxedStrategy<Call>> = specs
            .iter()
            .map(|(name, params)| {
                let name = name.clone();
                let keys: Vec<String> = params.iter().map(|(key, _)| key.clone()).collect();
                let values: Vec<_> = params.iter().map(|(_, kind)| arb_value(kind)).collect();
                values
                    .prop_map(move |values| {
                        let arguments: Map<String, Value> =
                            keys.iter().cloned().zip(values).collect();
                        (name.clone(), Value::Object(arguments))
                    })
                    .boxed()
            })
            .collect();
        let picks = prop::collection::vec(prop::sample::select(calls), 1..4)
            .prop_flat_map(|strategies| strategies);
        (Just(tools), picks)
    })
}

/// Families whose reading of a call cut by the token limit is known to differ from the
/// call's start, all of them families that write arguments in a notation of their own,
/// not JSON. Their whole and streamed answers are still checked.
/// - Gemma 4, FunctionGemma and Kimi K3: a cut inside a string delimiter (`<|"|>`,
///   `<escape>`) or a typed value
///   (`true`, `type="boolean"`) reads as a string's text, its type being chosen once the
///   value is whole.
/// - The pythonic families: a region of Python call syntax is not completed where it was
///   cut, so a cut call stays text, as an output that ends inside a call does.
const CUT_READING_GAPS: &[&str] = &[
    "gemma4",
    "functiongemma",
    "kimi_k3",
    "gemma3_pythonic",
    "lfm2",
    "llama3_pythonic",
    "olmo3",
];

/// Random calls written by `write` are admitted by the grammar prepared for their tools
/// (lazy and forced) and read back whole by the prepared parser and the plain one, however
/// cut; the text before them comes back as `kept(text)`.
pub fn random_calls_round_trip(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    write: Writer,
    cases: u32,
) {
    round_trip(dialect, template, write, cases, true);
}

/// [`random_calls_round_trip`] for formats that write values as text, whose types only
/// the prepared parser (which knows the schemas) gives back; strings holding `</` are
/// left out, as a text value may not hold its closing tag.
pub fn random_calls_round_trip_typed(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    write: Writer,
    cases: u32,
) {
    round_trip(dialect, template, write, cases, false);
}

fn round_trip(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    write: Writer,
    cases: u32,
    plain: bool,
) {
    let mut runner = TestRunner::new(Config::with_cases(cases));
    let strategy = (arb_tools_and_calls(), "[ -~é\n]{0,12}");
    runner
        .run(&strategy, |((tools, calls), text)| {
            prop_assume!(!text.contains(['<', '>', '[', '`', '|', '{']));
            prop_assume!(!text.contains("Action") && !text.contains("functools"));
            prop_assume!(
                plain
                    || !serde_json::to_string(&calls)
                        .unwrap_or_default()
                        .contains("</")
            );
            let answer = write(&text, &calls);
            for choice in [None, Some(ToolChoiceMode::Required.into())] {
                let forced = choice.is_some();
                let request = ChatRequest {
                    tools: Some(tools.clone()),
                    ..request(choice)
                };
                let prepared = prepare(dialect, &request, template);
                let grammar = validator(prepared.constraint.as_ref().expect("constraint"));
                let written = if forced {
                    write("", &calls)
                } else {
                    answer.clone()
                };
                prop_assert!(
                    grammar.accepts(&written),
                    "{}: rejects {}",
                    dialect.name(),
                    written
                );
            }
            if plain {
                let plain = parsed_however_cut(&|| dialect.parser(), &answer);
                prop_assert_eq!(
                    calls_of(&plain),
                    calls.clone(),
                    "{}: {}",
                    dialect.name(),
                    answer
                );
                if !CUT_READING_GAPS.contains(&dialect.name()) {
                    split::cut_answers_read_as_far_as_written(
                        &|| dialect.parser(),
                        &answer,
                        &plain,
                    );
                }
            }
            let request = ChatRequest {
                tools: Some(tools.clone()),
                ..request(None)
            };
            let prepared =
                parsed_however_cut(&|| prepare(dialect, &request, template).parser, &answer);
            prop_assert_eq!(
                calls_of(&prepared),
                calls,
                "{} prepared: {}",
                dialect.name(),
                answer
            );
            Ok(())
        })
        .unwrap_or_else(|error| panic!("{error}"));
}

/// Random bytes never panic the parser, and come back as text when they hold no call.
pub fn random_bytes_are_safe(dialect: &dyn Dialect) {
    let mut runner = TestRunner::new(Config::with_cases(64));
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..96), |bytes| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let message = parsed_however_cut(&|| dialect.parser(), &text);
            if message.calls().is_empty() {
                let all =
                    message.reasoning_content.clone().unwrap_or_default() + &message.content_text();
                prop_assert_eq!(all, text);
            }
            Ok(())
        })
        .unwrap_or_else(|error| panic!("{error}"));
}

/// A request with one tool whose parameters take enums and unions, as text-typed formats
/// must read them: `pick(level: "1"|"2", rank: 1|2, note: string|null, count: int|null)`.
pub fn union_request() -> ChatRequest {
    let pick = Tool::function(FunctionDefinition::new(
        "pick",
        "Picks a level.",
        json!({
            "type": "object",
            "$defs": {"count": {"type": "integer"}},
            "properties": {
                "level": {"enum": ["1", "2"]},
                "rank": {"enum": [1, 2]},
                "note": {"type": ["string", "null"]},
                "count": {"anyOf": [{"$ref": "#/$defs/count"}, {"type": "null"}]}
            }
        }),
    ));
    ChatRequest {
        tools: Some(vec![pick]),
        ..request(None)
    }
}
