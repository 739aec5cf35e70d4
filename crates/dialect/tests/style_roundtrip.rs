//! Every dialect of the registry against random tool sets and random calls: a call
//! written as the dialect's grammar has the model write it is admitted by that grammar
//! (prepared for a request with those tools) and parsed back by that dialect's parser to
//! the same names and argument values, whole and cut at every byte; and no parser panics
//! or loses text on random bytes or on near misses of its syntax.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolbridge_chat::{Arguments, ChatRequest, Message, Tool, ToolCall};
use toolbridge_dialect::{ChatTemplate, Constraint, Dialect, Registry};

use crate::common::validator;
use crate::common::written::{name_and_arguments, Syntax};

impl Syntax {
    /// The most calls one answer may carry, as seed 000's grammars allow.
    fn most_calls(self) -> usize {
        match self {
            Syntax::Tagged
            | Syntax::LongCatTagged
            | Syntax::Escaped
            | Syntax::Steps
            | Syntax::GigaChatCall
            | Syntax::Glm4Call => 1,
            Syntax::Routed
            | Syntax::LlamaJson
            | Syntax::Pythonic
            | Syntax::MistralList
            | Syntax::Functools
            | Syntax::CohereAction
            | Syntax::R7bAction
            | Syntax::ReAct
            | Syntax::DeepSeekV3
            | Syntax::DeepSeekV31
            | Syntax::GraniteList
            | Syntax::KimiSection
            | Syntax::Qwen3Xml
            | Syntax::GlmXml
            | Syntax::Hy3Xml
            | Syntax::SeedXml
            | Syntax::MiniMaxXml
            | Syntax::DotsXml
            | Syntax::StepXml
            | Syntax::IfmXml
            | Syntax::PythonLines
            | Syntax::Dsml
            | Syntax::Dsml4
            | Syntax::Cpm5
            | Syntax::Lfm2List
            | Syntax::Gemma4Calls
            | Syntax::FunctionGemmaCalls
            | Syntax::SolarCalls
            | Syntax::Harmony
            | Syntax::SpacedHarmony
            | Syntax::Atem
            | Syntax::KimiFrames
            | Syntax::FunctionTags
            | Syntax::Routes
            | Syntax::BareList
            | Syntax::ToolcallList
            | Syntax::ToolCallsList
            | Syntax::ToolCallsLines
            | Syntax::KeyedList
            | Syntax::FunctionCallEach
            | Syntax::FunctioncallEach
            | Syntax::ActionEach
            | Syntax::ToolcallEach
            | Syntax::PythonBlock => 3,
        }
    }
}

/// Dialects random calls cannot be written in, and where they are tested instead.
const WRITTEN_ELSEWHERE: &[(&str, &str)] = &[(
    "minimax_m3",
    "a value cannot hold `]<`, the start of its tag prefix: fixed cases in tests/xml_calls.rs",
)];

/// The registered dialects this file writes random calls in.
fn written_here(registry: &Registry) -> impl Iterator<Item = &&'static str> {
    registry
        .names()
        .iter()
        .filter(|name| !WRITTEN_ELSEWHERE.iter().any(|(other, _)| other == *name))
}

/// A parameter's JSON type, with a strategy for its values.
#[derive(Clone, Copy, Debug)]
enum Kind {
    String,
    Integer,
    Number,
    Boolean,
    Enum,
    Strings,
}

const ENUM: [&str; 3] = ["low", "mid", "high"];

impl Kind {
    fn schema(self) -> Value {
        match self {
            Kind::String => json!({"type": "string"}),
            Kind::Integer => json!({"type": "integer"}),
            Kind::Number => json!({"type": "number"}),
            Kind::Boolean => json!({"type": "boolean"}),
            Kind::Enum => json!({"type": "string", "enum": ENUM}),
            Kind::Strings => json!({"type": "array", "items": {"type": "string"}}),
        }
    }

    fn value(self) -> BoxedStrategy<Value> {
        let text = "[ -~é€\"\\\\\n\t<>|]{0,10}";
        match self {
            Kind::String => text.prop_map(Value::from).boxed(),
            Kind::Integer => any::<i64>().prop_map(Value::from).boxed(),
            Kind::Number => (-1_000_000i64..1_000_000)
                .prop_map(|n| json!(n as f64 / 64.0))
                .boxed(),
            Kind::Boolean => any::<bool>().prop_map(Value::from).boxed(),
            Kind::Enum => proptest::sample::select(&ENUM[..])
                .prop_map(Value::from)
                .boxed(),
            Kind::Strings => proptest::collection::vec(text, 0..3)
                .prop_map(|items| json!(items))
                .boxed(),
        }
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::String),
        Just(Kind::Integer),
        Just(Kind::Number),
        Just(Kind::Boolean),
        Just(Kind::Enum),
        Just(Kind::Strings),
    ]
}

/// A tool: its name and its parameters (name, kind, required).
#[derive(Clone, Debug)]
struct ToolSpec {
    name: String,
    parameters: Vec<(String, Kind, bool)>,
}

impl ToolSpec {
    fn tool(&self) -> Tool {
        let properties: Map<String, Value> = self
            .parameters
            .iter()
            .map(|(name, kind, _)| (name.clone(), kind.schema()))
            .collect();
        let required: Vec<&str> = self
            .parameters
            .iter()
            .filter(|(_, _, required)| *required)
            .map(|(name, _, _)| name.as_str())
            .collect();
        serde_json::from_value(json!({"type": "function", "function": {
            "name": self.name,
            "description": "A tool.",
            "parameters": {"type": "object", "properties": properties, "required": required},
        }}))
        .expect("a tool")
    }

    /// Calls of this tool: every required parameter, each optional one or not.
    fn call(&self) -> BoxedStrategy<ToolCall> {
        let name = self.name.clone();
        let values: Vec<_> = self
            .parameters
            .iter()
            .map(|(parameter, kind, required)| {
                let parameter = parameter.clone();
                let value = kind.value();
                let keep = if *required {
                    Just(true).boxed()
                } else {
                    any::<bool>().boxed()
                };
                (keep, value)
                    .prop_map(move |(keep, value)| keep.then(|| (parameter.clone(), value)))
            })
            .collect();
        values
            .prop_map(move |members| {
                let arguments: Map<String, Value> = members.into_iter().flatten().collect();
                ToolCall::new("call_0", name.clone(), Arguments::Object(arguments))
            })
            .boxed()
    }
}

fn tool_spec() -> impl Strategy<Value = ToolSpec> {
    let parameter = ("[a-z][a-z_]{0,7}", kind(), any::<bool>());
    (
        "[a-zA-Z][a-zA-Z0-9_]{0,12}",
        proptest::collection::vec(parameter, 0..4),
    )
        .prop_map(|(name, mut parameters)| {
            parameters.sort_by(|a, b| a.0.cmp(&b.0));
            parameters.dedup_by(|a, b| a.0 == b.0);
            ToolSpec { name, parameters }
        })
}

/// Random tools with distinct names (never `all`, which `functionary_v2` routes text to),
/// and up to three calls of them.
fn tools_and_calls() -> impl Strategy<Value = (Vec<ToolSpec>, Vec<ToolCall>)> {
    proptest::collection::vec(tool_spec(), 1..4)
        .prop_map(|mut tools| {
            tools.sort_by(|a, b| a.name.cmp(&b.name));
            tools.dedup_by(|a, b| a.name == b.name);
            tools.retain(|tool| tool.name != "all");
            tools
        })
        .prop_filter("at least one tool", |tools| !tools.is_empty())
        .prop_flat_map(|tools| {
            let calls: Vec<_> = tools.iter().map(ToolSpec::call).collect();
            let picks = proptest::collection::vec(proptest::sample::select(calls), 1..4);
            let picks = picks.prop_flat_map(|strategies| strategies);
            (Just(tools), picks)
        })
}

fn template() -> ChatTemplate {
    let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
                  {% if add_generation_prompt %}<|assistant|>{% endif %}";
    ChatTemplate::new(source, "", "").expect("compiles")
}

fn constraint(dialect: &dyn Dialect, tools: &[ToolSpec]) -> Constraint {
    constraint_of(dialect, tools.iter().map(ToolSpec::tool).collect())
}

fn constraint_of(dialect: &dyn Dialect, tools: Vec<Tool>) -> Constraint {
    let mut request = ChatRequest::new("m", vec![Message::user("Go.")]);
    request.tools = Some(tools);
    let prepared = dialect
        .prepare(&request, &template())
        .unwrap_or_else(|error| panic!("{}: {error}", dialect.name()));
    prepared.constraint.expect("tools make a constraint")
}

/// Tools whose parameters refer to their own definitions, as vLLM users write them: a
/// recursive `$defs` node, draft 7's `definitions`, a pointer into a definition, and a
/// property named `1st` (a rule name xgrammar's EBNF refuses to begin with a digit).
fn self_referring_tools() -> (Vec<Tool>, Vec<ToolCall>) {
    let tool = |name: &str, parameters: Value| -> Tool {
        serde_json::from_value(json!({"type": "function", "function": {
            "name": name, "description": "A tool.", "parameters": parameters,
        }}))
        .expect("a tool")
    };
    let tools = vec![
        tool(
            "build_tree",
            json!({
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/node"}, "1st": {"type": "integer"}},
                "required": ["tree"],
                "$defs": {"node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                    "required": ["value"],
                    "additionalProperties": false
                }}
            }),
        ),
        tool(
            "paint",
            json!({
                "type": "object",
                "properties": {
                    "color": {"$ref": "#/definitions/color"},
                    "shade": {"$ref": "#/definitions/tone/properties/shade"}
                },
                "required": ["color", "shade"],
                "definitions": {
                    "color": {"enum": ["red", "green"]},
                    "tone": {"properties": {"shade": {"type": "integer"}}}
                }
            }),
        ),
    ];
    let call = |name: &str, arguments: Value| {
        let arguments = arguments.as_object().cloned().expect("an object");
        ToolCall::new("call_0", name, Arguments::Object(arguments))
    };
    let calls = vec![
        call(
            "build_tree",
            json!({"tree": {"value": 1, "children": [{"value": 2, "children": []}]}, "1st": 3}),
        ),
        call("paint", json!({"color": "green", "shade": 4})),
    ];
    (tools, calls)
}

#[test]
fn every_dialect_admits_calls_of_tools_whose_schemas_refer_to_themselves() {
    let (tools, calls) = self_referring_tools();
    let registry = Registry::default();
    for name in written_here(&registry) {
        let dialect = registry.get(name).expect("registered");
        let syntax = Syntax::of(name);
        let calls = &calls[..calls.len().min(syntax.most_calls())];
        let answer = syntax.write("", calls);
        let constraint = constraint_of(dialect, tools.clone());
        assert!(
            validator(&constraint).accepts(&answer),
            "{name}: the grammar rejects {answer}"
        );
        let gbnf = constraint
            .gbnf()
            .unwrap_or_else(|error| panic!("{name}: no GBNF: {error}"));
        for line in gbnf.text.lines() {
            let Some((rule, _)) = line.split_once(" ::= ") else {
                continue;
            };
            assert!(
                rule.starts_with(|c: char| c.is_ascii_alphabetic()),
                "{name}: rule {rule:?} in\n{}",
                gbnf.text
            );
        }
    }
}

fn parsed_however_cut(dialect: &dyn Dialect, text: &str) -> Message {
    crate::common::split::parsed_however_cut(&|| dialect.parser(), text)
}

fn names_and_arguments(message: &Message) -> Vec<(String, Value)> {
    message.calls().iter().map(name_and_arguments).collect()
}

/// All the text a message carries, content and reasoning.
fn text_of(message: &Message) -> String {
    let reasoning = message.reasoning_content.clone().unwrap_or_default();
    reasoning + &message.content_text()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn every_dialect_reads_back_the_calls_its_grammar_admits(
        (tools, calls) in tools_and_calls(),
        text in "[ -~é\n]{0,12}",
    ) {
        prop_assume!(!text.contains('<') && !text.contains('\\'));
        let registry = Registry::default();
        for name in written_here(&registry) {
            let dialect = registry.get(name).expect("registered");
            let syntax = Syntax::of(name);
            let calls = &calls[..calls.len().min(syntax.most_calls())];
            let answer = syntax.write(&text, calls);
            let message = parsed_however_cut(dialect, &answer);
            let expected: Vec<_> = calls.iter().map(name_and_arguments).collect();
            prop_assert_eq!(names_and_arguments(&message), expected, "{}: {}", name, answer);
            prop_assert_eq!(text_of(&message), syntax.text_kept(&text), "{}: {}", name, answer);
            let validator = validator(&constraint(dialect, &tools));
            prop_assert!(validator.accepts(&answer), "{}: the grammar rejects {}", name, answer);
        }
    }

    #[test]
    fn no_parser_panics_or_loses_text_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let text = String::from_utf8_lossy(&bytes);
        let registry = Registry::default();
        for name in written_here(&registry) {
            let message = parsed_however_cut(registry.get(name).expect("registered"), &text);
            if message.calls().is_empty() && Syntax::of(name).carries_text_verbatim() {
                prop_assert_eq!(text_of(&message), text.to_string(), "{}", name);
            }
        }
    }

    /// A call with one byte of its syntax dropped is not a call with garbled arguments:
    /// either the text comes out as written, or the calls that come out have arguments
    /// that are JSON objects.
    #[test]
    fn near_misses_are_content_or_whole_calls(
        (_tools, calls) in tools_and_calls(),
        drop_at in any::<prop::sample::Index>(),
    ) {
        let registry = Registry::default();
        for name in written_here(&registry) {
            let dialect = registry.get(name).expect("registered");
            let syntax = Syntax::of(name);
            let answer = syntax.write("", &calls[..1]);
            let syntax_chars: Vec<usize> = answer
                .char_indices()
                .filter(|(_, c)| "{}[]\":<>|_,".contains(*c))
                .map(|(at, _)| at)
                .collect();
            let at = syntax_chars[drop_at.index(syntax_chars.len())];
            let near_miss = format!("{}{}", &answer[..at], &answer[at + 1..]);
            let message = parsed_however_cut(dialect, &near_miss);
            for call in message.calls() {
                let arguments = serde_json::to_value(&call.function.arguments).expect("JSON");
                let object = match arguments {
                    Value::String(text) => serde_json::from_str::<Value>(&text).ok(),
                    other => Some(other),
                };
                prop_assert!(
                    object.is_some_and(|value| value.is_object()),
                    "{}: {:?} gave {:?}", name, near_miss, call
                );
            }
            if message.calls().is_empty() && syntax.carries_text_verbatim() {
                prop_assert_eq!(text_of(&message), near_miss.clone(), "{}", name);
            }
        }
    }
}

impl Syntax {
    /// Whether text that is no call comes out exactly as written. `mixtral` unescapes
    /// markdown's `\\_` everywhere, a `thoughtful_steps` answer is JSON whose `result` is
    /// the content, `functionary_v2` drops the `all\n<|content|>` routing of its text,
    /// Solar Open drops the tokens that frame its messages, GLM-4 the line break that
    /// ends an answer's empty metadata, and Kimi K2 its section and call markers left
    /// without a call (markers are never content).
    fn carries_text_verbatim(self) -> bool {
        matches!(
            self,
            Syntax::Tagged
                | Syntax::LongCatTagged
                | Syntax::FunctionTags
                | Syntax::Qwen3Xml
                | Syntax::GlmXml
                | Syntax::Hy3Xml
                | Syntax::SeedXml
                | Syntax::MiniMaxXml
                | Syntax::DotsXml
                | Syntax::StepXml
                | Syntax::IfmXml
                | Syntax::PythonLines
                | Syntax::Dsml
                | Syntax::Dsml4
                | Syntax::Cpm5
                | Syntax::Lfm2List
                | Syntax::Gemma4Calls
                | Syntax::FunctionGemmaCalls
                | Syntax::GigaChatCall
                | Syntax::ReAct
                | Syntax::DeepSeekV3
                | Syntax::DeepSeekV31
                | Syntax::GraniteList
                | Syntax::CohereAction
                | Syntax::LlamaJson
                | Syntax::Pythonic
                | Syntax::MistralList
                | Syntax::Functools
                | Syntax::BareList
                | Syntax::ToolcallList
                | Syntax::ToolCallsList
                | Syntax::ToolCallsLines
                | Syntax::KeyedList
                | Syntax::FunctionCallEach
                | Syntax::FunctioncallEach
                | Syntax::ActionEach
                | Syntax::ToolcallEach
                | Syntax::PythonBlock
        )
    }

    /// The text before a call as it comes back: the whitespace before a `<tool_call>` tag
    /// is layout, not content.
    fn text_kept(self, text: &str) -> String {
        match self {
            Syntax::Tagged
            | Syntax::LongCatTagged
            | Syntax::Routes
            | Syntax::FunctionTags
            | Syntax::Qwen3Xml
            | Syntax::GlmXml
            | Syntax::Hy3Xml
            | Syntax::SeedXml
            | Syntax::MiniMaxXml
            | Syntax::DotsXml
            | Syntax::StepXml
            | Syntax::IfmXml
            | Syntax::PythonLines
            | Syntax::Dsml
            | Syntax::Dsml4
            | Syntax::Cpm5
            | Syntax::Lfm2List
            | Syntax::Gemma4Calls
            | Syntax::FunctionGemmaCalls
            | Syntax::SolarCalls
            | Syntax::GigaChatCall
            | Syntax::ReAct
            | Syntax::DeepSeekV3
            | Syntax::DeepSeekV31
            | Syntax::GraniteList
            | Syntax::KimiSection
            | Syntax::Escaped
            | Syntax::CohereAction
            | Syntax::LlamaJson
            | Syntax::Pythonic
            | Syntax::MistralList
            | Syntax::Functools
            | Syntax::ToolcallList
            | Syntax::ToolCallsList
            | Syntax::ToolCallsLines
            | Syntax::KeyedList
            | Syntax::FunctionCallEach
            | Syntax::FunctioncallEach
            | Syntax::ActionEach
            | Syntax::ToolcallEach
            | Syntax::PythonBlock => text.trim_end().to_string(),
            Syntax::BareList | Syntax::Glm4Call => String::new(),
            Syntax::Steps
            | Syntax::Routed
            | Syntax::Harmony
            | Syntax::SpacedHarmony
            | Syntax::Atem
            | Syntax::KimiFrames
            | Syntax::R7bAction => text.to_string(),
        }
    }
}
