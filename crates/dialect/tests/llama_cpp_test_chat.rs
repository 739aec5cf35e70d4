//! llama.cpp's own chat parser tests (`tests/test-chat.cpp`: real templates, each with model
//! outputs and the message llama.cpp reads from them), run through toolbridge as the server
//! runs a request: the dialect detected from the template (or learned from it, where its
//! family has none), the request prepared with its
//! tools, `tool_choice`, `parallel_tool_calls`, `chat_template_kwargs` and response format,
//! and the output read by the prepared parser, whole and one char at a time.
//!
//! The cases are extracted by `scripts/extract_llama_cpp_test_chat.py` into
//! `tests/llama_cpp/test_chat_cases.jsonl`. Compared as llama.cpp compares them: content and
//! reasoning with surrounding whitespace stripped, arguments as JSON values, a call's id only
//! where the case expects one. Cases of options toolbridge does not share are skipped, each
//! with its reason (see [`not_applicable`]).

use std::collections::BTreeMap;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Message};

use crate::common::reading::{corpus_dir, Model};

/// The score this suite reached; it may rise, never fall.
const FLOOR: usize = 371;

#[derive(Deserialize)]
struct Case {
    template: String,
    line: u32,
    input: String,
    tools: Option<Vec<Value>>,
    tool_choice: u8,
    parallel_tool_calls: bool,
    reasoning_format: u8,
    enable_thinking: bool,
    json_schema: String,
    add_generation_prompt: bool,
    continue_final_message: u8,
    messages: Vec<Value>,
    chat_template_kwargs: Map<String, Value>,
    is_partial: bool,
    expect: Value,
}

/// llama.cpp's `COMMON_REASONING_FORMAT_NONE`: reasoning left in the content.
const REASONING_INLINE: u8 = 0;

enum Verdict {
    Pass,
    Fail(String),
    Skip(&'static str),
}

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cases() -> Vec<Case> {
    let path = here().join("tests/llama_cpp/test_chat_cases.jsonl");
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

/// A case's template: `corpus:…` in the shared corpus, `repo:…` beside the cases.
fn template_path(name: &str) -> PathBuf {
    if let Some(relative) = name.strip_prefix("corpus:") {
        return corpus_dir().join(relative);
    }
    let relative = name.strip_prefix("repo:").unwrap_or(name);
    here().join("tests/llama_cpp/templates").join(relative)
}

/// Why a case tests what toolbridge deliberately does otherwise, if it does.
fn not_applicable(case: &Case) -> Option<&'static str> {
    if case.is_partial {
        return Some("a partial message: llama.cpp shows a call before it is whole; toolbridge holds it until it is");
    }
    if case.continue_final_message != 0 || !case.add_generation_prompt {
        return Some(
            "continuing the last assistant message (continue_final_message), a llama.cpp option",
        );
    }
    None
}

/// The request as a client would send the case.
fn request(case: &Case) -> ChatRequest {
    let messages = if case.messages.is_empty() {
        vec![json!({"role": "user", "content": "Hey there!"})]
    } else {
        case.messages.clone()
    };
    let mut kwargs = Map::new();
    kwargs.insert("enable_thinking".into(), case.enable_thinking.into());
    for (name, value) in &case.chat_template_kwargs {
        let value = match value {
            Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
            other => other.clone(),
        };
        kwargs.insert(name.clone(), value);
    }
    let mut body = json!({
        "model": "m",
        "messages": messages,
        "parallel_tool_calls": case.parallel_tool_calls,
        "chat_template_kwargs": kwargs,
    });
    if let Some(tools) = case.tools.as_ref().filter(|tools| !tools.is_empty()) {
        body["tools"] = Value::Array(tools.clone());
        body["tool_choice"] = match case.tool_choice {
            1 => "required",
            2 => "none",
            _ => "auto",
        }
        .into();
    }
    if !case.json_schema.is_empty() {
        let schema: Value = serde_json::from_str(&case.json_schema).unwrap_or(json!({}));
        body["response_format"] =
            json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}});
    }
    serde_json::from_value(body).unwrap_or_else(|error| panic!("line {}: {error}", case.line))
}

/// The message the server's parser reads from the case's output, whole and one char at a
/// time.
fn read(case: &Case) -> Result<Message, String> {
    Model::from_template_file(&template_path(&case.template))?.read(&request(case), &case.input)
}

/// The difference between what the case expects and `message`, if any.
fn difference(expect: &Value, message: &Message) -> Option<String> {
    let text = |value: &Value| value.as_str().unwrap_or("").trim().to_string();
    let content = message.content_text().trim().to_string();
    if text(&expect["content"]) != content {
        return Some(format!(
            "content {:?}, expected {:?}",
            content,
            text(&expect["content"])
        ));
    }
    let reasoning = message.reasoning_content.as_deref().unwrap_or("").trim();
    if text(&expect["reasoning_content"]) != reasoning {
        return Some(format!(
            "reasoning {reasoning:?}, expected {:?}",
            text(&expect["reasoning_content"])
        ));
    }
    let expected_calls = expect["tool_calls"].as_array().cloned().unwrap_or_default();
    let calls = message.calls();
    if expected_calls.len() != calls.len() {
        return Some(format!(
            "{} calls, expected {}: {calls:?}",
            calls.len(),
            expected_calls.len()
        ));
    }
    for (expected, call) in expected_calls.iter().zip(calls) {
        let arguments = call.function.arguments.as_json_string();
        let expected_arguments = text(&expected["function"]["arguments"]);
        let same_arguments = match (
            serde_json::from_str::<Value>(&arguments),
            serde_json::from_str::<Value>(&expected_arguments),
        ) {
            (Ok(ours), Ok(theirs)) => ours == theirs,
            _ => arguments.trim() == expected_arguments,
        };
        let expected_name = text(&expected["function"]["name"]);
        let expected_id = text(&expected["id"]);
        let id = call.id.as_deref().unwrap_or("");
        if call.function.name != expected_name
            || !same_arguments
            || (!expected_id.is_empty() && id != expected_id)
        {
            return Some(format!(
                "call {}({arguments}) id {id:?}, expected {expected_name}({expected_arguments}) id {expected_id:?}",
                call.function.name
            ));
        }
    }
    None
}

fn verdict(case: &Case) -> Verdict {
    if let Some(reason) = not_applicable(case) {
        return Verdict::Skip(reason);
    }
    let message = match read(case) {
        Ok(message) => message,
        Err(error) => return Verdict::Fail(error),
    };
    let Some(difference) = difference(&case.expect, &message) else {
        return Verdict::Pass;
    };
    let kept_inline = text_of(&case.expect["reasoning_content"]).is_empty()
        && !message
            .reasoning_content
            .as_deref()
            .unwrap_or("")
            .trim()
            .is_empty();
    if case.reasoning_format == REASONING_INLINE && kept_inline {
        return Verdict::Skip(
            "reasoning kept in the content (reasoning_format none), a llama.cpp option",
        );
    }
    Verdict::Fail(difference)
}

fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or("").trim()
}

#[test]
fn llama_cpp_parser_cases_read_the_same() {
    let cases = cases();
    let mut passed = 0;
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in &cases {
        let verdict = catch_unwind(AssertUnwindSafe(|| verdict(case)))
            .unwrap_or_else(|_| Verdict::Fail("panicked".into()));
        match verdict {
            Verdict::Pass => passed += 1,
            Verdict::Skip(reason) => *skipped.entry(reason).or_default() += 1,
            Verdict::Fail(why) => failures
                .entry(case.template.clone())
                .or_default()
                .push(format!("line {}: {why}", case.line)),
        }
    }
    let skipped_count: usize = skipped.values().sum();
    let applicable = cases.len() - skipped_count;
    for (template, lines) in &failures {
        println!("{template}: {} failing", lines.len());
        for line in lines {
            let short: String = line.chars().take(240).collect();
            println!("  {short}");
        }
    }
    for (reason, count) in &skipped {
        println!("skipped {count}: {reason}");
    }
    println!(
        "llama.cpp test-chat: {passed}/{applicable} applicable passed ({skipped_count} skipped, {} total)",
        cases.len()
    );
    assert!(
        passed >= FLOOR,
        "llama.cpp test-chat fell to {passed}, below {FLOOR}"
    );
}
