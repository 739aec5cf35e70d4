//! ReAct over ShareGPT messages, on seed 004's template.

use std::path::Path;

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

/// Seed 004's template: the first column of its table.
fn seed_004() -> ChatTemplate {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/seeds/004_c0cda95d4f5b4e3e.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!("seed 004 not found: looked at {} ({error})", path.display())
    });
    let source: Vec<&str> = text
        .lines()
        .map(|line| {
            let line = line.strip_prefix("| ").unwrap_or(line);
            line.strip_suffix(" | |")
                .or_else(|| line.strip_suffix(" |"))
                .unwrap_or(line)
        })
        .collect();
    ChatTemplate::new(&source.join("\n"), "<bos>", "<eos>")
        .unwrap_or_else(|error| panic!("{error}"))
}

fn react(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| format!("Action: {name}\nAction Input: {arguments}"))
        .collect();
    if text.is_empty() {
        calls.join("\n")
    } else {
        format!("{text}\n{}", calls.join("\n"))
    }
}

#[test]
fn seed_004_renders_tools_calls_and_observations() {
    let registry = registry();
    let prompt = renders_history(
        registry.get("react").expect("registered"),
        &seed_004(),
        &[
            "> Tool Name: get_weather",
            "- city (string, required): The city.",
            "one of [get_weather, add]",
            "<start_of_turn>model\nAction:get_weather\nAction Input:{\"city\": \"Paris\"}<end_of_turn>",
            "<start_of_turn>tool\nsunny, 21C<end_of_turn>",
            "<start_of_turn>user\nAnd in Rome?<end_of_turn>",
        ],
    );
    assert!(prompt.starts_with("<bos>You have access"), "{prompt}");
    assert!(prompt.ends_with("<start_of_turn>model\n"), "{prompt}");
}

#[test]
fn outputs_parse_into_calls() {
    let registry = registry();
    let dialect = registry.get("react").expect("registered");
    // As seed 004's template writes a past call, and as ReAct prompts ask for it.
    let written = "Action:get_weather\nAction Input:{\"city\": \"Paris\"}";
    reads(
        dialect,
        &seed_004(),
        written,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    let text = "Thought: I need two things.\nAction: get_weather\nAction Input: {\"city\": \"Paris\"}\nAction: add\nAction Input: {\"a\": 1, \"b\": 2}";
    let message = reads(
        dialect,
        &seed_004(),
        text,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("add", json!({"a": 1, "b": 2})),
        ],
    );
    assert_eq!(message.content_text(), "Thought: I need two things.");
    let prose = "Final Answer: no Action: needed here.";
    let message = reads(dialect, &seed_004(), prose, &[]);
    assert_eq!(message.content_text(), prose);
}

#[test]
fn grammar_honours_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("react").expect("registered"),
        &seed_004(),
        react,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let dialect = registry.get("react").expect("registered");
    random_calls_round_trip(dialect, &seed_004(), react, 24);
    random_bytes_are_safe(dialect);
}
