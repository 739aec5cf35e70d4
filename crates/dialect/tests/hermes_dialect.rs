//! The Hermes / Qwen dialect on Qwen 2.5's own template (from the default model's GGUF):
//! the prompt is the template's rendering of the request, the grammar admits exactly the
//! calls the request allows, `tool_choice` decides laziness and which tools, and the parser
//! that comes with the prompt reads a call back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolbridge_chat::{
    AllowedTools, AllowedToolsMode, Arguments, ChatRequest, FunctionDefinition, Message, NamedTool,
    Tool, ToolCall, ToolChoice, ToolChoiceMode,
};
use toolbridge_dialect::{
    assemble, dialects::hermes_dialect::Hermes, parse_all, toolkit::native::NativeDialect,
    ChatTemplate, Constraint, Dialect, DialectErrorKind, Prepared, Registry, SequentialIds,
};
use toolbridge_grammar::check::Validator;
use toolbridge_grammar::schema::{expand_embedded, Options};
use toolbridge_grammar::{gbnf, lark};
use toolbridge_template::{JinjaTemplate, TemplateErrorKind, TemplateSource};

const CALL: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn model_path() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "default model not found: looked at {}",
        path.display()
    );
    path
}

fn corpus_template(relative: &str, eos: &str) -> ChatTemplate {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/jinja")
        .join(relative);
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    ChatTemplate::new(&source, "", eos).unwrap_or_else(|error| panic!("{error}"))
}

fn qwen_source() -> TemplateSource {
    TemplateSource::from_path(model_path()).unwrap_or_else(|error| panic!("{error}"))
}

fn qwen() -> ChatTemplate {
    ChatTemplate::from_source(&qwen_source(), None, true).unwrap_or_else(|error| panic!("{error}"))
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::function(FunctionDefinition::new(
            "get_weather",
            "The weather in a city.",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"}
                },
                "required": ["city"]
            }),
        )),
        Tool::function(FunctionDefinition::new(
            "add",
            "Adds two numbers.",
            json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }),
        )),
    ]
}

fn request(choice: Option<ToolChoice>) -> ChatRequest {
    ChatRequest {
        tools: Some(tools()),
        tool_choice: choice,
        ..ChatRequest::new(
            "qwen",
            vec![
                Message::system("You are terse."),
                Message::user("Weather in Paris?"),
            ],
        )
    }
}

fn prepare(request: &ChatRequest) -> Prepared {
    NativeDialect(Hermes::Qwen)
        .prepare(request, &qwen())
        .unwrap_or_else(|error| panic!("{error}"))
}

fn constraint(prepared: &Prepared) -> &Constraint {
    prepared
        .constraint
        .as_ref()
        .unwrap_or_else(|| panic!("no constraint"))
}

/// The constraint compiled as the engine would run it: lazy through its triggers.
fn validator(constraint: &Constraint) -> Validator {
    let compiled = if constraint.is_lazy() {
        Validator::from_lark(&lark::print_lazy(
            constraint.grammar(),
            constraint.triggers(),
        ))
    } else {
        Validator::from_grammar(constraint.grammar())
    };
    compiled.unwrap_or_else(|error| panic!("{error}"))
}

fn call_text(name: &str, arguments: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>")
}

#[test]
fn prompt_is_the_template_rendered_with_the_tools() {
    let source = qwen_source();
    let text = source
        .select(None)
        .unwrap_or_else(|error| panic!("{error}"));
    let direct = JinjaTemplate::new(text)
        .unwrap_or_else(|error| panic!("{error}"))
        .render(&json!({
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Weather in Paris?"}
            ],
            "tools": serde_json::to_value(tools()).unwrap_or_else(|error| panic!("{error}")),
            "add_generation_prompt": true,
            "bos_token": source.bos_token.unwrap_or_default(),
            "eos_token": source.eos_token.unwrap_or_default(),
        }))
        .unwrap_or_else(|error| panic!("{error}"));
    let prompt = prepare(&request(None)).prompt;
    assert_eq!(prompt, direct);
    assert!(prompt
        .contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""));
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
}

#[test]
fn past_calls_render_with_object_arguments() {
    let mut request = request(None);
    request
        .messages
        .push(Message::assistant_calls(vec![ToolCall::new(
            "call_1",
            "get_weather",
            Arguments::Text(r#"{"city": "Paris"}"#.into()),
        )]));
    request.messages.push(Message::tool("call_1", "sunny"));
    let prompt = prepare(&request).prompt;
    assert!(prompt.contains(CALL), "{prompt}");
    assert!(
        prompt.contains("<tool_response>\nsunny\n</tool_response>"),
        "{prompt}"
    );
}

#[test]
fn auto_is_lazy_and_admits_only_valid_calls() {
    let prepared = prepare(&request(None));
    let constraint = constraint(&prepared);
    assert!(constraint.is_lazy());
    let grammar = validator(constraint);
    assert!(grammar.accepts("It is sunny."));
    assert!(grammar.accepts(CALL));
    assert!(grammar.accepts(&format!("Let me look.\n{CALL}")));
    assert!(grammar.accepts(&format!(
        "{CALL}\n{}",
        call_text("add", r#"{"a": 1, "b": 2.5}"#)
    )));
    let wrong_name = call_text("get_wether", r#"{"city": "Paris"}"#);
    let missing = call_text("add", r#"{"a": 1}"#);
    assert!(grammar.accepts(&call_text("get_weather", r#"{"city": "Paris", "days": 2}"#)));
    let wrong_type = call_text("get_weather", r#"{"city": "Paris", "days": "two"}"#);
    let extra_key = "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}, \"x\": 1}\n</tool_call>";
    for bad in [wrong_name.as_str(), &missing, &wrong_type, extra_key] {
        assert!(!grammar.accepts(bad), "accepted {bad}");
    }
}

#[test]
fn no_parallel_calls_admits_one_call() {
    let mut request = request(None);
    request.parallel_tool_calls = Some(false);
    let grammar = validator(constraint(&prepare(&request)));
    assert!(grammar.accepts(CALL));
    assert!(!grammar.accepts(&format!("{CALL}\n{CALL}")));
}

#[test]
fn required_forces_a_call_from_the_first_byte() {
    let prepared = prepare(&request(Some(ToolChoiceMode::Required.into())));
    let constraint = constraint(&prepared);
    assert!(!constraint.is_lazy());
    let grammar = validator(constraint);
    assert!(grammar.accepts(CALL));
    assert!(grammar.accepts(&call_text("add", r#"{"a": 1, "b": 2}"#)));
    assert!(!grammar.accepts("It is sunny."));
    assert!(!grammar.accepts(&format!("Let me look.\n{CALL}")));
}

#[test]
fn a_named_function_is_the_only_call() {
    let prepared = prepare(&request(Some(ToolChoice::function("add"))));
    let constraint = constraint(&prepared);
    assert!(!constraint.is_lazy());
    let grammar = validator(constraint);
    assert!(grammar.accepts(&call_text("add", r#"{"a": 1, "b": 2}"#)));
    assert!(!grammar.accepts(CALL));
    assert!(prepared.prompt.contains("\"name\": \"get_weather\""));
}

#[test]
fn allowed_tools_restrict_the_calls_and_keep_auto_lazy() {
    let choice = ToolChoice::AllowedTools {
        allowed_tools: AllowedTools {
            mode: AllowedToolsMode::Auto,
            tools: vec![NamedTool::function("add")],
        },
    };
    let prepared = prepare(&request(Some(choice)));
    let constraint = constraint(&prepared);
    assert!(constraint.is_lazy());
    let grammar = validator(constraint);
    assert!(grammar.accepts("No call."));
    assert!(grammar.accepts(&call_text("add", r#"{"a": 1, "b": 2}"#)));
    assert!(!grammar.accepts(CALL));
}

#[test]
fn required_without_tools_is_an_error() {
    let mut request = request(Some(ToolChoiceMode::Required.into()));
    request.tools = None;
    let error = NativeDialect(Hermes::Qwen).prepare(&request, &qwen()).err();
    assert!(
        matches!(
            error.as_ref().map(|e| *e.kind()),
            Some(DialectErrorKind::NoCallableTools)
        ),
        "{error:?}"
    );
}

#[test]
fn none_has_no_constraint_and_shows_no_tools() {
    let prepared = prepare(&request(Some(ToolChoiceMode::None.into())));
    assert!(prepared.constraint.is_none());
    assert!(!prepared.prompt.contains("<tools>"), "{}", prepared.prompt);
}

#[test]
fn no_tools_has_no_constraint() {
    let mut request = request(None);
    request.tools = None;
    assert!(prepare(&request).constraint.is_none());
}

#[test]
fn stops_are_the_requests() {
    let mut request = request(None);
    request.stop = serde_json::from_value(json!(["END"])).ok();
    assert_eq!(prepare(&request).stop, ["END"]);
}

#[test]
fn the_parser_reads_the_call_back() {
    let mut prepared = prepare(&request(None));
    let events = parse_all(prepared.parser.as_mut(), &format!("Checking.\n{CALL}"));
    let message = assemble(events, SequentialIds::default()).unwrap_or_else(|e| panic!("{e}"));
    let call = &message.calls()[0];
    assert_eq!(call.function.name, "get_weather");
    let arguments: Value = call
        .function
        .arguments
        .to_value()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(arguments, json!({"city": "Paris"}));
}

#[test]
fn a_prompt_that_opens_think_gets_a_parser_inside_the_reasoning() {
    let template = corpus_template("ollama-registry-gguf/qwq_32b__v2.jinja", "<|im_end|>");
    let mut prepared = NativeDialect(Hermes::Qwen)
        .prepare(&request(None), &template)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        prepared.prompt.ends_with("<think>\n"),
        "{}",
        prepared.prompt
    );
    let output = format!("Paris, so get_weather.\n</think>\n\n{CALL}");
    let events = parse_all(prepared.parser.as_mut(), &output);
    let message = assemble(events, SequentialIds::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        message.reasoning_content.as_deref(),
        Some("Paris, so get_weather.\n")
    );
    assert_eq!(message.calls()[0].function.name, "get_weather");
}

#[test]
fn the_grammar_prints_as_gbnf_for_llama_cpp_servers() {
    let prepared = prepare(&request(Some(ToolChoice::function("add"))));
    let (expanded, warnings) =
        expand_embedded(constraint(&prepared).grammar(), &Options::default())
            .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(warnings, Vec::<String>::new());
    let text = gbnf::print(&expanded).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        text.starts_with("root ::= \"<tool_call>\\n\" call \"\\n</tool_call>\""),
        "{text}"
    );
    let reparsed = gbnf::parse(&text).unwrap_or_else(|error| panic!("{error}"));
    let grammar = Validator::from_grammar(&reparsed).unwrap_or_else(|error| panic!("{error}"));
    assert!(grammar.accepts(&call_text("add", r#"{"a":1,"b":2}"#)));
    assert!(!grammar.accepts(CALL));
}

#[test]
fn a_named_tool_the_request_lacks_is_an_error() {
    let error = NativeDialect(Hermes::Qwen)
        .prepare(&request(Some(ToolChoice::function("nope"))), &qwen())
        .err();
    assert!(
        matches!(&error, Some(e) if e.kind() == &DialectErrorKind::UnknownTool && e.detail().contains("\"nope\"")),
        "{error:?}"
    );
}

#[test]
fn a_schema_that_cannot_compile_names_its_tool() {
    let mut request = request(None);
    request.tools = Some(vec![Tool::function(FunctionDefinition::new(
        "broken",
        "",
        json!({"type": "object", "properties": {"a": {"$ref": "#/definitions/missing"}}}),
    ))]);
    let error = NativeDialect(Hermes::Qwen).prepare(&request, &qwen()).err();
    assert!(
        matches!(&error, Some(e) if e.kind() == &DialectErrorKind::ToolSchema && e.detail().starts_with("tool \"broken\":")),
        "{error:?}"
    );
}

#[test]
fn an_unknown_template_name_is_an_error() {
    let error = ChatTemplate::from_source(&qwen_source(), Some("rag"), true).err();
    assert_eq!(error.map(|e| *e.kind()), Some(TemplateErrorKind::Choice));
}

#[test]
fn the_registry_knows_hermes_by_name_and_alias() {
    let registry = Registry::default();
    assert_eq!(registry.names().first(), Some(&"hermes"));
    for name in ["hermes", "qwen2.5"] {
        let dialect = registry.get(name).unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(dialect.name(), "hermes");
    }
    assert!(registry.get("nope").is_none());
}

/// A random tool: its name and its parameters, each a JSON type, all required.
fn arb_tool() -> impl Strategy<Value = (String, BTreeMap<String, &'static str>)> {
    let kind = prop::sample::select(vec!["string", "integer", "number", "boolean"]);
    (
        "[a-z][a-z_]{0,11}",
        prop::collection::btree_map("[a-z][a-z0-9_]{0,7}", kind, 0..4),
    )
}

fn arb_value(kind: &str) -> BoxedStrategy<Value> {
    match kind {
        "string" => any::<String>().prop_map(Value::from).boxed(),
        "integer" => any::<i32>().prop_map(Value::from).boxed(),
        // Quarters: exact in binary and short in decimal, so the value compared is the one
        // written whatever the JSON reader's float rounding.
        "number" => (-4_000_000i32..4_000_000)
            .prop_map(|n| Value::from(f64::from(n) / 4.0))
            .boxed(),
        _ => any::<bool>().prop_map(Value::from).boxed(),
    }
}

/// Random tools (distinct names), the index of the one called, and its arguments.
fn arb_call() -> impl Strategy<Value = (Vec<Tool>, String, Value)> {
    prop::collection::vec(arb_tool(), 1..4).prop_flat_map(|mut specs| {
        specs.sort_by(|a, b| a.0.cmp(&b.0));
        specs.dedup_by(|a, b| a.0 == b.0);
        let tools = specs
            .iter()
            .map(|(name, params)| tool(name, params))
            .collect();
        (Just(tools), prop::sample::select(specs)).prop_flat_map(|(tools, (name, params))| {
            let values: Vec<_> = params.values().map(|kind| arb_value(kind)).collect();
            let keys: Vec<String> = params.keys().cloned().collect();
            (Just(tools), Just(name), values).prop_map(move |(tools, name, values)| {
                let arguments = keys.iter().cloned().zip(values).collect();
                (tools, name, Value::Object(arguments))
            })
        })
    })
}

fn tool(name: &str, params: &BTreeMap<String, &'static str>) -> Tool {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|(key, kind)| (key.clone(), json!({ "type": kind })))
        .collect();
    let required: Vec<&String> = params.keys().collect();
    Tool::function(FunctionDefinition::new(
        name,
        "",
        json!({"type": "object", "properties": properties, "required": required}),
    ))
}

/// The call as Qwen's template writes a past call: the assistant turn of a rendering.
fn as_template_writes_it(template: &ChatTemplate, name: &str, arguments: &Value) -> String {
    let Value::Object(object) = arguments else {
        panic!("arguments must be an object");
    };
    let call = ToolCall::new("call_0", name, Arguments::Object(object.clone()));
    let messages = json!([{"role": "user", "content": "go"}, Message::assistant_calls(vec![call])]);
    let mut context = Map::new();
    context.insert("messages".into(), messages);
    context.insert("add_generation_prompt".into(), false.into());
    let rendered = template
        .render_context(context)
        .unwrap_or_else(|error| panic!("{error}"));
    let turn = rendered
        .rsplit("<|im_start|>assistant\n")
        .next()
        .and_then(|turn| turn.strip_suffix("<|im_end|>\n"))
        .unwrap_or_else(|| panic!("no assistant turn in {rendered}"));
    turn.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// For random tools and a random call: the call as the template writes it is in the
    /// grammar (lazy and forced), and the prepared parser reads back the same name and
    /// argument values, whole or cut at any byte.
    #[test]
    fn calls_round_trip_through_grammar_and_parser(
        (tools, name, arguments) in arb_call(),
        cut in any::<prop::sample::Index>(),
    ) {
        let template = qwen();
        let text = as_template_writes_it(&template, &name, &arguments);
        for choice in [None, Some(ToolChoiceMode::Required.into())] {
            let request = ChatRequest { tools: Some(tools.clone()), ..request(choice) };
            let mut prepared = NativeDialect(Hermes::Qwen).prepare(&request, &template)
                .unwrap_or_else(|error| panic!("{error}"));
            prop_assert!(validator(constraint(&prepared)).accepts(&text), "rejected {}", text);
            let at = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect::<Vec<_>>();
            let (head, tail) = text.split_at(at[cut.index(at.len())]);
            let mut events = prepared.parser.push(head);
            events.extend(parse_all(prepared.parser.as_mut(), tail));
            let message = assemble(events, SequentialIds::default())
                .unwrap_or_else(|error| panic!("{error}"));
            prop_assert_eq!(message.calls().len(), 1);
            let call = &message.calls()[0];
            prop_assert_eq!(&call.function.name, &name);
            let read = call.function.arguments.to_value().unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(read, arguments.clone());
        }
    }
}
