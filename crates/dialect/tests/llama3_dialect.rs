//! The Llama 3.x dialects: seed 002's zero-shot prompts come out byte for byte and its
//! model outputs parse into the right calls; Llama 3.1's own template gets the tools, the
//! built-in tools and one call per past turn; `tool_choice` shapes the grammar; the parser
//! reads every call form and never panics.

use proptest::prelude::*;
use serde_json::{json, Value};
use toolbridge_chat::{
    Arguments, ChatRequest, FunctionDefinition, Message, Tool, ToolCall, ToolChoice, ToolChoiceMode,
};
use toolbridge_dialect::{
    assemble,
    detect::resolve,
    dialects::llama3::{Llama3Json, Llama3Pythonic},
    parse_all,
    toolkit::native::NativeDialect,
    ChatTemplate, Dialect, Registry, SequentialIds,
};

use crate::common::split::{message_of, parsed_however_cut};
use crate::common::{shared, validator};

const LLAMA3: NativeDialect<Llama3Json> = NativeDialect(Llama3Json);
const LLAMA3_PYTHONIC: NativeDialect<Llama3Pythonic> = NativeDialect(Llama3Pythonic::Llama3);

fn template(relative: &str) -> ChatTemplate {
    let source = shared(&format!("corpus/jinja/{relative}"));
    ChatTemplate::new(&source, "<|begin_of_text|>", "<|eot_id|>")
        .unwrap_or_else(|error| panic!("{error}"))
}

/// The code blocks of seed 002, in order, without the line breaks after the opening fence
/// and before the closing one.
fn seed_blocks() -> Vec<String> {
    let seed = shared("seeds/002_08e7d4b79899ee3a.txt");
    seed.split("```")
        .skip(1)
        .step_by(2)
        .map(|block| {
            let block = block.strip_prefix('\n').unwrap_or(block);
            block.strip_suffix('\n').unwrap_or(block).to_string()
        })
        .collect()
}

/// Seed 002's tool, its keys in the seed's order.
fn get_weather() -> Tool {
    Tool::function(FunctionDefinition::new(
        "get_weather",
        "Get the current_weather",
        json!({"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        }, "required": ["location"]}),
    ))
}

fn seed_request(messages: Vec<Message>) -> ChatRequest {
    let mut request = ChatRequest::new("m", messages);
    request.tools = Some(vec![get_weather()]);
    request
}

fn call(id: &str, city: &str) -> ToolCall {
    let Value::Object(arguments) = json!({"city": city, "metric": "celsius"}) else {
        unreachable!()
    };
    ToolCall::new(id, "get_weather", Arguments::Object(arguments))
}

fn calls_of(dialect: &dyn Dialect, text: &str) -> Vec<(String, Value)> {
    let mut parser = dialect.parser();
    let message = assemble(parse_all(&mut parser, text), SequentialIds::default())
        .unwrap_or_else(|error| panic!("{error}"));
    message
        .calls()
        .iter()
        .map(|call| {
            let arguments = call.function.arguments.to_value().unwrap_or(Value::Null);
            (call.name().to_string(), arguments)
        })
        .collect()
}

#[test]
fn seed_002_zero_shot_prompt_byte_for_byte() {
    let blocks = seed_blocks();
    let expected = blocks
        .iter()
        .find(|block| block.contains("Customized Functions") && !block.contains("ipython"))
        .expect("the zero-shot prompt");
    let request = seed_request(vec![
        Message::system("You are a helpful assistant."),
        Message::user("What is the weather in SF and Seattle?"),
    ]);
    let prepared = LLAMA3_PYTHONIC
        .prepare(&request, &template("mistral.rs/llama3.jinja"))
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(&prepared.prompt, expected);
    println!("seed 002: zero-shot prompt identical");
}

#[test]
fn seed_002_e2e_prompt_byte_for_byte() {
    let blocks = seed_blocks();
    let expected = blocks
        .iter()
        .find(|block| block.contains("Customized Functions") && block.contains("ipython"))
        .expect("the e2e prompt");
    let mut result_1 = Message::tool("call_1", r#"{"temperature": "25 celsius"}"#);
    result_1.name = Some("get_weather".into());
    let result_2 = Message::tool("call_2", r#"{"temperature": "21 celsius"}"#);
    let request = seed_request(vec![
        Message::system("You are a helpful assistant."),
        Message::user("What is the weather in SF and Seattle?"),
        Message::assistant_calls(vec![
            call("call_1", "San Francisco"),
            call("call_2", "Seattle"),
        ]),
        result_1,
        result_2,
    ]);
    let prepared = LLAMA3_PYTHONIC
        .prepare(&request, &template("mistral.rs/llama3.jinja"))
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(&prepared.prompt, expected);
}

#[test]
fn seed_002_outputs_parse_into_the_right_calls() {
    let blocks = seed_blocks();
    let output = blocks
        .iter()
        .find(|block| block.starts_with("[get_weather("))
        .expect("the zero-shot output");
    let output = output.trim_end().trim_end_matches("<|eot_id|>");
    let expected = vec![
        (
            "get_weather".to_string(),
            json!({"city": "San Francisco", "metric": "celsius"}),
        ),
        (
            "get_weather".to_string(),
            json!({"city": "Seattle", "metric": "celsius"}),
        ),
    ];
    for dialect in [&LLAMA3_PYTHONIC as &dyn Dialect, &LLAMA3] {
        assert_eq!(calls_of(dialect, output), expected);
        let tagged = format!("<|python_tag|>{output}");
        assert_eq!(calls_of(dialect, &tagged), expected);
    }
    let answer = "The weather is 25 C in San Francisco and 21 C in Seattle.";
    assert!(calls_of(&LLAMA3_PYTHONIC, answer).is_empty());
    println!("seed 002: outputs parse into 2 calls and 1 answer");
}

#[test]
fn llama_3_1s_template_is_detected_and_shows_the_tools() {
    let source = shared("corpus/jinja/llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    assert_eq!(resolve(&source, &Registry::default()).dialect, "llama3");
    let template = template("llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    let request = seed_request(vec![Message::user("Weather in Paris?")]);
    let prepared = LLAMA3
        .prepare(&request, &template)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(prepared.prompt.contains("\"name\": \"get_weather\""));
    assert!(prepared.prompt.contains("Environment: ipython"));
    assert!(!prepared.prompt.contains("Tools: "));
    let constraint = prepared.constraint.expect("a constraint");
    assert!(constraint.is_lazy());
    let call = r#"{"name": "get_weather", "parameters": {"location": "Paris"}}"#;
    assert!(validator(&constraint).accepts(call));
    assert!(validator(&constraint).accepts(&format!("Let me look. {call}")));
    assert!(!validator(&constraint).accepts(r#"{"name": "other", "parameters": {}}"#));
}

#[test]
fn built_in_tools_go_to_the_template_and_come_back_after_the_python_tag() {
    let template = template("llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    let brave = Tool::function(FunctionDefinition::new(
        "brave_search",
        "Search the web.",
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ));
    let mut request = ChatRequest::new("m", vec![Message::user("News?")]);
    request.tools = Some(vec![brave, get_weather()]);
    let prepared = LLAMA3
        .prepare(&request, &template)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(prepared.prompt.contains("Tools: brave_search\n"));
    let calls = calls_of(
        &LLAMA3,
        "<|python_tag|>brave_search.call(query=\"latest news\")",
    );
    assert_eq!(
        calls,
        vec![("brave_search".to_string(), json!({"query": "latest news"}))]
    );
    let code = calls_of(&LLAMA3, "<|python_tag|>print(1 + 1)");
    assert_eq!(
        code,
        vec![(
            "code_interpreter".to_string(),
            json!({"code": "print(1 + 1)"})
        )]
    );
}

#[test]
fn a_past_turn_with_two_calls_becomes_two_turns_for_llama_3_1() {
    let template = template("llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    let request = seed_request(vec![
        Message::user("Weather in SF and Seattle?"),
        Message::assistant_calls(vec![call("a", "San Francisco"), call("b", "Seattle")]),
        Message::tool("a", "25"),
        Message::tool("b", "21"),
    ]);
    let prepared = LLAMA3
        .prepare(&request, &template)
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        prepared
            .prompt
            .matches(r#"{"name": "get_weather", "parameters": "#)
            .count(),
        2
    );
    assert_eq!(
        prepared.prompt.matches("ipython<|end_header_id|>").count(),
        2
    );
}

fn add() -> Tool {
    Tool::function(FunctionDefinition::new(
        "add",
        "Adds.",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "boolean"}}, "required": ["a"]}),
    ))
}

fn choice_request(choice: ToolChoice, parallel: Option<bool>) -> ChatRequest {
    let mut request = ChatRequest::new("m", vec![Message::user("Go.")]);
    request.tools = Some(vec![get_weather(), add()]);
    request.tool_choice = Some(choice);
    request.parallel_tool_calls = parallel;
    request
}

#[test]
fn tool_choice_shapes_the_json_grammar() {
    let template = template("llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    let weather = r#"{"name": "get_weather", "parameters": {"location": "Paris"}}"#;
    let add = r#"{"name": "add", "parameters": {"a": 1}}"#;
    let prepare = |choice, parallel| {
        LLAMA3
            .prepare(&choice_request(choice, parallel), &template)
            .unwrap_or_else(|error| panic!("{error}"))
    };
    let none = prepare(ToolChoice::Mode(ToolChoiceMode::None), None);
    assert!(none.constraint.is_none());
    assert!(!none.prompt.contains("get_weather"));
    let required = prepare(ToolChoice::Mode(ToolChoiceMode::Required), None);
    let required = validator(&required.constraint.expect("constraint"));
    assert!(required.accepts(weather) && required.accepts(add));
    assert!(!required.accepts(&format!("Sure. {add}")));
    assert!(required.accepts(&format!("{weather}; {add}")));
    let named = prepare(ToolChoice::function("add"), Some(false));
    let named = validator(&named.constraint.expect("constraint"));
    assert!(named.accepts(add) && !named.accepts(weather));
    assert!(!named.accepts(&format!("{add}; {add}")));
}

#[test]
fn tool_choice_shapes_the_pythonic_grammar() {
    let template = template("mistral.rs/llama3.jinja");
    let prepare = |choice, parallel| {
        LLAMA3_PYTHONIC
            .prepare(&choice_request(choice, parallel), &template)
            .unwrap_or_else(|error| panic!("{error}"))
    };
    let auto = prepare(ToolChoice::Mode(ToolChoiceMode::Auto), None);
    assert!(auto
        .prompt
        .contains("Customized Functions: [{'name': 'get_weather'"));
    let auto = validator(&auto.constraint.expect("constraint"));
    assert!(auto.accepts("Let me see [a] link. [add(a=1, b=True)]"));
    assert!(!auto.accepts("[add(b=False, a=2.5), get_weather(location=\"Paris\")]"));
    assert!(auto.accepts("[add(a=2.5, b=False), get_weather(location=\"Paris\")]"));
    assert!(!auto.accepts("[add(b=True)]"));
    let named = prepare(ToolChoice::function("get_weather"), Some(false));
    let named = validator(&named.constraint.expect("constraint"));
    assert!(named.accepts("[get_weather(location=\"Paris\", unit=\"celsius\")]"));
    assert!(!named.accepts("[add(a=1)]"));
    assert!(!named.accepts("[get_weather(location=\"a\"), get_weather(location=\"b\")]"));
}

proptest! {
    #[test]
    fn the_parser_never_panics_and_keeps_every_split_alike(text in "[\\[\\]{}()\"':=,;. a-z0-9<|>_\n]{0,60}") {
        parsed_however_cut(&|| LLAMA3.parser(), &text);
    }
}

#[test]
fn the_pythonic_dialect_keeps_pythonic_templates_and_replaces_json_ones() {
    let request = seed_request(vec![Message::user("Weather in Paris?")]);
    let pythonic = LLAMA3_PYTHONIC
        .prepare(
            &request,
            &template("vllm/tool_chat_template_llama3.2_pythonic.jinja"),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(pythonic.prompt.contains("python list"));
    assert!(!pythonic.prompt.contains("Customized Functions"));
    let official = LLAMA3_PYTHONIC
        .prepare(
            &request,
            &template("llama.cpp/meta-llama-Llama-3.2-3B-Instruct.jinja"),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(official
        .prompt
        .contains("Customized Functions: [{'name': 'get_weather'"));
    assert!(!official.prompt.contains("\"parameters\": dictionary"));
}

/// `text` in pieces of `size` bytes (it is ASCII).
fn pieces(text: &str, size: usize) -> impl Iterator<Item = &str> {
    (0..text.len())
        .step_by(size)
        .map(move |at| &text[at..(at + size).min(text.len())])
}

/// A long call reads the same whole and in 1- and 16-byte pieces, in each way Llama 3
/// writes one (a streamed candidate over 32 KB was once content while the same text whole
/// was a call). Bare calls are regions bounded at 8 MiB, so 300 KB is still a call.
#[test]
fn a_long_call_reads_the_same_however_it_is_cut() {
    let json = r#"{"name": "write_file", "parameters": {"path": "a.txt", "content": "LONG"}}"#;
    let pythonic = "[write_file(path='a.txt', content='LONG')]";
    let tagged = r#"<|python_tag|>{"name": "write_file", "parameters": {"content": "LONG"}}"#;
    let cases = [
        (json, 40 << 10, 1),
        (json, 300 << 10, 1),
        (pythonic, 40 << 10, 1),
        (pythonic, 300 << 10, 1),
        (tagged, 40 << 10, 1),
    ];
    for (form, len, calls) in cases {
        let text = format!("Saving it. {}", form.replace("LONG", &"x".repeat(len)));
        let whole = message_of(LLAMA3_PYTHONIC.parser().as_mut(), [text.as_str()]);
        for size in [1, 16] {
            let cut = message_of(LLAMA3_PYTHONIC.parser().as_mut(), pieces(&text, size));
            assert_eq!(cut, whole, "{size}-byte pieces of {len} bytes: {form}");
        }
        assert_eq!(whole.calls().len(), calls, "{len} bytes: {form}");
    }
    println!("long calls: the same whole and in 1- and 16-byte pieces, in 3 forms");
}
