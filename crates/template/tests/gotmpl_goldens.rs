//! Conformance with Ollama: every (template, context) row of `goldens/gotmpl.jsonl`
//! renders byte-identically to what Ollama's server rendered. Rows that differ for a
//! documented reason are listed in `gotmpl_known_differences.txt`; any other difference,
//! and any listed row that now matches, fails the test. The same requests in OpenAI's
//! shape must render the same, as Ollama's OpenAI layer maps them onto its own.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use toolbridge_template::gotmpl::{GoRenderOptions, GoTemplate, OllamaRequest};
use toolbridge_template::Clock;

const KNOWN_DIFFERENCES: &str = include_str!("gotmpl_known_differences.txt");

/// `template<TAB>context` of each known difference (the reason follows, for readers).
fn known_differences() -> BTreeSet<(String, String)> {
    KNOWN_DIFFERENCES
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut fields = line.split('\t');
            let template = fields.next().unwrap_or_default().to_string();
            let context = fields.next().unwrap_or_default().to_string();
            (template, context)
        })
        .collect()
}

/// The goldens' clock: `currentDate` is 2024-07-26.
fn options() -> GoRenderOptions {
    GoRenderOptions {
        clock: Clock::fixed_from_str("2024-07-26T10:30:00").unwrap(),
        ..GoRenderOptions::default()
    }
}

/// Why one row does not match, or `None` when it does.
fn difference(
    row: &serde_json::Value,
    contexts: &BTreeMap<String, OllamaRequest>,
) -> Option<String> {
    let source = common::read_corpus_file(row["template"].as_str().unwrap());
    let request = &contexts[row["context"].as_str().unwrap()];
    let rendered = GoTemplate::with_options(&source, options()).and_then(|t| t.render(request));
    let expected = row["output"].as_str().unwrap();
    match rendered {
        Ok(output) if output == expected => None,
        Ok(output) => Some(common::first_difference(expected, &output)),
        Err(err) => Some(format!("we failed where Ollama rendered: {err}")),
    }
}

fn load_contexts(rows: &[serde_json::Value]) -> BTreeMap<String, OllamaRequest> {
    rows.iter()
        .map(|row| row["context"].as_str().unwrap().to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|name| {
            let text = common::read_corpus_file(&format!("contexts/ollama/{name}.json"));
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            let request =
                OllamaRequest::from_json(&json).unwrap_or_else(|err| panic!("{name}: {err}"));
            (name, request)
        })
        .collect()
}

/// The same request as an OpenAI client sends it: arguments as a JSON string, no
/// `tool_name` (the result names its call by id), null content beside tool calls.
fn openai_shaped(request: &serde_json::Value) -> serde_json::Value {
    let mut request = request.clone();
    for message in request["messages"].as_array_mut().into_iter().flatten() {
        let object = message.as_object_mut().unwrap();
        object.remove("tool_name");
        if let Some(calls) = object.get_mut("tool_calls").and_then(|c| c.as_array_mut()) {
            for call in calls {
                let arguments = call["function"]["arguments"].to_string();
                call["function"]["arguments"] = serde_json::Value::String(arguments);
                call["type"] = "function".into();
            }
            object.insert("content".into(), serde_json::Value::Null);
        }
    }
    request
}

#[test]
fn openai_shaped_requests_render_as_ollamas_openai_layer_maps_them() {
    let rows = common::read_jsonl("goldens/gotmpl.jsonl");
    let mut contexts = BTreeMap::new();
    for row in &rows {
        let name = row["context"].as_str().unwrap();
        let text = common::read_corpus_file(&format!("contexts/ollama/{name}.json"));
        let openai = openai_shaped(&serde_json::from_str(&text).unwrap());
        contexts.insert(name.to_owned(), OllamaRequest::from_json(&openai).unwrap());
    }
    let known = known_differences();
    let mut identical = 0;
    let mut failures = Vec::new();
    for row in &rows {
        let key = (
            row["template"].as_str().unwrap().to_string(),
            row["context"].as_str().unwrap().to_string(),
        );
        match difference(row, &contexts) {
            None => identical += 1,
            Some(why) if !known.contains(&key) => {
                failures.push(format!("{} [{}]: {why}", key.0, key.1))
            }
            Some(_) => {}
        }
    }
    println!(
        "gotmpl goldens, OpenAI-shaped requests: {identical}/{} identical",
        rows.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gotmpl_goldens_match_ollama() {
    let rows = common::read_jsonl("goldens/gotmpl.jsonl");
    assert!(
        rows.iter().all(|row| row["ok"] == true),
        "a golden row where Ollama failed: teach this test to expect errors"
    );
    let contexts = load_contexts(&rows);
    let known = known_differences();
    let mut identical = 0;
    let mut failures = Vec::new();
    let mut now_passing = Vec::new();
    for row in &rows {
        let key = (
            row["template"].as_str().unwrap().to_string(),
            row["context"].as_str().unwrap().to_string(),
        );
        match difference(row, &contexts) {
            None if known.contains(&key) => now_passing.push(format!("{}\t{}", key.0, key.1)),
            None => identical += 1,
            Some(why) if !known.contains(&key) => {
                failures.push(format!("{} [{}]: {why}", key.0, key.1))
            }
            Some(_) => {}
        }
    }
    println!(
        "gotmpl goldens: {identical}/{} identical, {} known differences",
        rows.len(),
        known.len()
    );
    assert!(
        failures.is_empty(),
        "{} rows differ from Ollama:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        now_passing.is_empty(),
        "listed as known differences but now match Ollama (remove them):\n{}",
        now_passing.join("\n")
    );
}
