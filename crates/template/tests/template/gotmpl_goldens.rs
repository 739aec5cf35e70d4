//! Conformance with Ollama: every (template, context) row of `goldens/gotmpl.jsonl`
//! renders byte-identically to what Ollama's server rendered. Rows that differ for a
//! documented reason are listed in `gotmpl_known_differences.txt`; any other difference,
//! and any listed row that now matches, fails the test. The same requests in OpenAI's
//! shape must render the same, as Ollama's OpenAI layer maps them onto its own.

use crate::common;
use crate::common::goldens::{self, KnownDifferences, Tally, Verdict};
use std::collections::BTreeMap;
use toolbridge_template::gotmpl::{GoRenderOptions, GoTemplate, OllamaRequest};

const KNOWN_DIFFERENCES: &str = include_str!("gotmpl_known_differences.txt");

fn judge(row: &serde_json::Value, contexts: &BTreeMap<String, OllamaRequest>) -> Verdict {
    let source = common::read_corpus_file(row["template"].as_str().unwrap());
    let request = &contexts[row["context"].as_str().unwrap()];
    let options = GoRenderOptions {
        clock: goldens::clock(),
        ..GoRenderOptions::default()
    };
    let rendered = GoTemplate::with_options(&source, options).and_then(|t| t.render(request));
    goldens::compare(row["output"].as_str().unwrap(), rendered).into()
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
    let contexts = goldens::contexts(&rows, |name| {
        OllamaRequest::from_json(&openai_shaped(&common::ollama_context(name))).unwrap()
    });
    let known = KnownDifferences::parse(KNOWN_DIFFERENCES);
    let tally = Tally::of(&rows, &known, |row| judge(row, &contexts));
    println!(
        "gotmpl goldens, OpenAI-shaped requests: {}/{} identical",
        tally.identical,
        rows.len()
    );
    tally.assert_no_unknown_differences("Ollama");
}

#[test]
fn gotmpl_goldens_match_ollama() {
    let rows = common::read_jsonl("goldens/gotmpl.jsonl");
    assert!(
        rows.iter().all(|row| row["ok"] == true),
        "a golden row where Ollama failed: teach this test to expect errors"
    );
    let contexts = goldens::contexts(&rows, common::ollama_request);
    let known = KnownDifferences::parse(KNOWN_DIFFERENCES);
    let tally = Tally::of(&rows, &known, |row| judge(row, &contexts));
    println!(
        "gotmpl goldens: {}/{} identical, {} known differences",
        tally.identical,
        rows.len(),
        known.len()
    );
    tally.assert_conformance("Ollama");
}
