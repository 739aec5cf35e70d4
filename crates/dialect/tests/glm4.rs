//! GLM-4 9B chat on its Ollama GGUF template: the tools ride on a system message of their
//! own, past calls are assistant turns with the tool's name as metadata, results are
//! `observation` turns; the grammar decides at the first byte between an answer and one
//! call, and the parser reads `name\n{…}` at the start of the answer.

use serde_json::json;
use toolbridge_chat::{Arguments, Message, ToolCall, ToolChoice, ToolChoiceMode};
use toolbridge_dialect::{ChatTemplate, Dialect};
use toolbridge_grammar::check::Validator;

use crate::framed_common::*;

fn glm4() -> ChatTemplate {
    template("ollama-registry-gguf/glm4_9b.jinja", "", "")
}

fn dialect(registry: &toolbridge_dialect::Registry) -> &dyn Dialect {
    registry.get("glm4").expect("registered")
}

/// One call as GLM-4 writes it: the name as the answer's metadata line, then the arguments.
fn written(name: &str, arguments: serde_json::Value) -> String {
    format!("{name}\n{arguments}")
}

/// The tools' system block, as the template prints [`tools`].
const TOOLS_BLOCK: &str = r#"[gMASK]<sop><|system|>
你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，你的任务是针对用户的问题和要求提供适当的答复和支持。

# 可用工具
## get_weather

{
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "description": "The city."
            },
            "days": {
                "type": "integer",
                "description": "How many days."
            }
        },
        "required": [
            "city"
        ]
    }
}
在调用上述函数时，请使用 Json 格式表示调用的参数。
## add

{
    "name": "add",
    "description": "Adds two numbers.",
    "parameters": {
        "type": "object",
        "properties": {
            "a": {
                "type": "number",
                "description": "One."
            },
            "b": {
                "type": "number",
                "description": "Two."
            }
        },
        "required": [
            "a",
            "b"
        ]
    }
}
在调用上述函数时，请使用 Json 格式表示调用的参数。"#;

#[test]
fn the_conversation_renders_byte_for_byte() {
    let registry = registry();
    let prompt = prepare(dialect(&registry), &conversation(), &glm4()).prompt;
    let turns = "<|system|>\nYou are terse.<|user|>\nWeather in Paris?\
                 <|assistant|>get_weather\n{\"city\": \"Paris\"}\
                 <|observation|>\nsunny, 21C<|assistant|>\nIt is sunny.\
                 <|user|>\nAnd in Rome?<|assistant|>";
    assert_eq!(prompt, format!("{TOOLS_BLOCK}{turns}"));
}

#[test]
fn a_past_call_reads_back_as_the_prompt_writes_it() {
    let registry = registry();
    let prompt = prepare(dialect(&registry), &conversation(), &glm4()).prompt;
    let turn = prompt
        .split("<|assistant|>")
        .nth(1)
        .and_then(|turn| turn.split("<|observation|>").next())
        .expect("a past call");
    reads(
        dialect(&registry),
        &glm4(),
        turn,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
}

#[test]
fn text_said_beside_a_call_is_a_turn_before_it() {
    let registry = registry();
    let mut request = conversation();
    request.messages[2].content = Some("Checking.".into());
    let prompt = prepare(dialect(&registry), &request, &glm4()).prompt;
    assert!(
        prompt.contains("<|assistant|>\nChecking.<|assistant|>get_weather\n{\"city\": \"Paris\"}"),
        "{prompt}"
    );
}

#[test]
fn each_of_several_past_calls_is_a_turn_of_its_own() {
    let registry = registry();
    let mut request = conversation();
    let mut calls = request.messages[2].calls().to_vec();
    calls.push(ToolCall::new(
        "call_2",
        "add",
        Arguments::Object(
            json!({"a": 1, "b": 2})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
    ));
    request.messages[2] = Message::assistant_calls(calls);
    let prompt = prepare(dialect(&registry), &request, &glm4()).prompt;
    assert!(
        prompt.contains(
            "<|assistant|>get_weather\n{\"city\": \"Paris\"}<|assistant|>add\n{\"a\": 1, \"b\": 2}<|observation|>"
        ),
        "{prompt}"
    );
}

#[test]
fn tool_choice_none_shows_no_tools_and_constrains_nothing() {
    let registry = registry();
    let request = request(Some(ToolChoiceMode::None.into()));
    let prepared = prepare(dialect(&registry), &request, &glm4());
    assert!(prepared.constraint.is_none());
    assert_eq!(
        prepared.prompt,
        "[gMASK]<sop><|system|>\nYou are terse.<|user|>\nWeather in Paris?<|assistant|>"
    );
}

fn grammar(choice: Option<ToolChoice>) -> Validator {
    let registry = registry();
    let prepared = prepare(dialect(&registry), &request(choice), &glm4());
    validator(
        prepared
            .constraint
            .as_ref()
            .expect("tools make a constraint"),
    )
}

#[test]
fn auto_admits_an_answer_or_one_right_call_from_the_first_byte() {
    let grammar = grammar(None);
    let weather = written("get_weather", json!({"city": "Paris", "days": 2}));
    assert!(grammar.accepts("\nIt is sunny."));
    assert!(grammar.accepts(&weather));
    assert!(grammar.accepts(&written("add", json!({"a": 1, "b": 2.5}))));
    assert!(
        !grammar.accepts("It is sunny."),
        "an answer opens with its metadata line"
    );
    assert!(!grammar.accepts(&written("get_wether", json!({"city": "Paris"}))));
    assert!(!grammar.accepts(&written("get_weather", json!({"days": 2}))));
    assert!(!grammar.accepts(&written(
        "get_weather",
        json!({"city": "Paris", "days": "two"})
    )));
    assert!(
        !grammar.accepts(&format!("{weather}\n{weather}")),
        "one call per answer"
    );
}

#[test]
fn a_required_or_named_call_is_forced() {
    let required = grammar(Some(ToolChoiceMode::Required.into()));
    assert!(required.accepts(&written("add", json!({"a": 1, "b": 2}))));
    assert!(!required.accepts("\nIt is sunny."));
    let named = grammar(Some(ToolChoice::function("add")));
    assert!(named.accepts(&written("add", json!({"a": 1, "b": 2}))));
    assert!(!named.accepts(&written("get_weather", json!({"city": "Paris"}))));
}

#[test]
fn a_call_is_read_however_cut() {
    let registry = registry();
    let text = "get_weather\n{\"city\": \"Paris\", \"days\": 2}";
    let message = reads(
        dialect(&registry),
        &glm4(),
        text,
        &[call("get_weather", json!({"city": "Paris", "days": 2}))],
    );
    assert_eq!(message.content_text(), "");
}

#[test]
fn an_answer_drops_only_its_empty_metadata_line() {
    let registry = registry();
    let message = reads(dialect(&registry), &glm4(), "\nIt is sunny.\n", &[]);
    assert_eq!(message.content_text(), "It is sunny.\n");
}

#[test]
fn near_misses_stay_content_as_written() {
    let registry = registry();
    let glm = dialect(&registry);
    let request = request(None);
    let prepared = || prepare(glm, &request, &glm4()).parser;
    for text in [
        "Sure\n{\"city\": \"Paris\"}",
        "get_weather\n{\"city\": ",
        "get_weather\n[\"Paris\"]",
        "get_weather {\"city\": \"Paris\"}",
        "Hello there.\nget_weather\n{\"city\": \"Paris\"}",
        "get_weather",
    ] {
        let message = parsed_however_cut(&prepared, text);
        assert!(message.calls().is_empty(), "{text:?}");
        assert_eq!(message.content_text(), text);
    }
}
