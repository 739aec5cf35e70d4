//! The Cohere dialects on their corpus templates: Command-R+ (`cohere`) and Command R7B
//! (`command_r7b`), with seed 003's call syntax.

use serde_json::{json, Value};
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

const COMMAND_R: &str = "llama.cpp/CohereForAI-c4ai-command-r-plus-tool_use.jinja";
const R7B: &str = "llama.cpp/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja";

fn command_r() -> ChatTemplate {
    template(COMMAND_R, "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>")
}

fn r7b() -> ChatTemplate {
    template(R7B, "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>")
}

/// Command-R's actions, laid out as its template writes past calls.
fn cohere_action(text: &str, calls: &[Call]) -> String {
    let actions: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let name = Value::from(name.as_str());
            format!("    {{\n        \"tool_name\": {name},\n        \"parameters\": {arguments}\n    }}")
        })
        .collect();
    let before = if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    };
    format!("{before}Action:\n```json\n[\n{}\n]```", actions.join(",\n"))
}

/// R7B's thinking (the text) and actions, as its template writes past calls.
fn r7b_action(text: &str, calls: &[Call]) -> String {
    let actions: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            let name = Value::from(name.as_str());
            format!("    {{\"tool_call_id\": \"{index}\", \"tool_name\": {name}, \"parameters\": {arguments}}}")
        })
        .collect();
    format!(
        "<|START_THINKING|>{text}<|END_THINKING|><|START_ACTION|>[\n{}\n]<|END_ACTION|>",
        actions.join(",\n")
    )
}

#[test]
fn command_r_renders_tools_calls_and_results() {
    let registry = registry();
    let dialect = registry.get("cohere").expect("registered");
    let prompt = renders_history(
        dialect,
        &command_r(),
        &[
            "def get_weather(city: str, days: Optional[int] = None) -> List[Dict]:",
            "Action:\n```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\n            \"city\": \"Paris\"\n        }\n    }\n]```",
            "<results>\nsunny, 21C</results>",
            "directly-answer",
        ],
    );
    assert!(
        prompt.ends_with("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"),
        "{prompt}"
    );
}

#[test]
fn command_r_reads_its_actions_and_drops_directly_answer() {
    let registry = registry();
    let dialect = registry.get("cohere").expect("registered");
    let template = command_r();
    // As the template writes a past call, and as seed 003 shows the format.
    let text = "I will check.\nAction:\n```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\n            \"city\": \"Paris\"\n        }\n    },\n    {\"tool_name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}\n]```";
    let message = reads(
        dialect,
        &template,
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2})),
        ],
    );
    assert_eq!(message.content_text(), "I will check.");
    let direct = "Action: ```json\n[{\"tool_name\": \"directly-answer\", \"parameters\": {}}]\n```";
    let message = reads(dialect, &template, direct, &[]);
    assert_eq!(message.content_text(), "");
    let prose = "Action: none needed, the answer is 4.";
    let message = reads(dialect, &template, prose, &[]);
    assert_eq!(message.content_text(), prose);
}

#[test]
fn command_r_honours_tool_choice() {
    let registry = registry();
    let dialect = registry.get("cohere").expect("registered");
    honours_tool_choice(dialect, &command_r(), cohere_action);
    let grammar = validator(
        prepare(dialect, &request(None), &command_r())
            .constraint
            .as_ref()
            .expect("constraint"),
    );
    let direct = "Action: ```json\n[{\"tool_name\": \"directly-answer\", \"parameters\": {}}]```";
    assert!(grammar.accepts(direct));
}

#[test]
fn command_r_random_calls_round_trip() {
    let registry = registry();
    let dialect = registry.get("cohere").expect("registered");
    random_calls_round_trip(dialect, &command_r(), cohere_action, 24);
    random_bytes_are_safe(dialect);
}

#[test]
fn r7b_renders_tools_calls_and_results() {
    let registry = registry();
    let dialect = registry.get("command_r7b").expect("registered");
    renders_history(
        dialect,
        &r7b(),
        &[
            "\"name\": \"get_weather\"",
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
            "<|START_TOOL_RESULT|>",
            "sunny, 21C",
            "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>",
        ],
    );
}

#[test]
fn r7b_reads_thinking_actions_and_responses() {
    let registry = registry();
    let dialect = registry.get("command_r7b").expect("registered");
    let template = r7b();
    let text = "<|START_THINKING|>I will look up the weather. <|START_ACTION|>[]<|END_ACTION|><|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>";
    let message = reads(
        dialect,
        &template,
        text,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    assert_eq!(
        message.reasoning_content.as_deref(),
        Some("I will look up the weather. <|START_ACTION|>[]<|END_ACTION|>")
    );
    let answer =
        "<|START_THINKING|>Done.<|END_THINKING|><|START_RESPONSE|>It is sunny.<|END_RESPONSE|>";
    let message = reads(dialect, &template, answer, &[]);
    assert_eq!(message.content_text(), "It is sunny.");
}

#[test]
fn r7b_honours_tool_choice() {
    let registry = registry();
    let dialect = registry.get("command_r7b").expect("registered");
    honours_tool_choice(dialect, &r7b(), r7b_action);
    let required = prepare(
        dialect,
        &request(Some(toolbridge_chat::ToolChoiceMode::Required.into())),
        &r7b(),
    );
    let grammar = validator(required.constraint.as_ref().expect("constraint"));
    let text = r7b_action(
        "Paris, so get_weather.",
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    assert!(
        grammar.accepts(&text),
        "thinking first is allowed when forced: {text}"
    );
}

#[test]
fn r7b_random_calls_round_trip() {
    let registry = registry();
    let dialect = registry.get("command_r7b").expect("registered");
    random_calls_round_trip(dialect, &r7b(), r7b_action, 24);
    random_bytes_are_safe(dialect);
}
