//! Other engines' test vectors, run against our renderer: minja's syntax tests,
//! huggingface.js's template tests and llama.cpp's chat-template cases
//! (`corpus/render-goldens/`).
//!
//! Those goldens come from C++ minja and JavaScript engines, while we follow Python
//! jinja2 under `transformers`. Every case must pass, or be listed in
//! `render_goldens_skipped.txt` (`file<TAB>case<TAB>reason`) with what the other engine
//! does, what Python jinja2 3.1.6 does and what we do. A listed case that now passes, or
//! one that names no case, fails the test too, so the list cannot go stale.

use crate::common::{self, goldens::compare};

use std::collections::{BTreeMap, BTreeSet};
use toolbridge_template::{Clock, JinjaTemplate, RenderOptions};

const SKIPPED: &str = include_str!("render_goldens_skipped.txt");

const MINJA: &str = "minja_test_syntax_cases.jsonl";
const HFJS: &str = "hfjs_jinja_e2e_cases.jsonl";
const LLAMACPP: &str = "llamacpp_test_chat_template_cases.jsonl";

/// The skip list's cases for `file`, by case id, with their reasons.
fn skipped(file: &str) -> BTreeMap<String, String> {
    let mut cases = BTreeMap::new();
    for (n, line) in SKIPPED.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.splitn(3, '\t').collect();
        let [listed_file, case, reason] = fields[..] else {
            panic!(
                "render_goldens_skipped.txt line {}: want file<TAB>case<TAB>reason",
                n + 1
            );
        };
        assert!(
            [MINJA, HFJS, LLAMACPP].contains(&listed_file),
            "render_goldens_skipped.txt line {}: unknown file {listed_file:?}",
            n + 1
        );
        assert!(
            !reason.trim().is_empty(),
            "render_goldens_skipped.txt line {}: a skip needs a reason",
            n + 1
        );
        if listed_file == file {
            let previous = cases.insert(case.to_string(), reason.to_string());
            assert!(previous.is_none(), "{file}\t{case} is listed twice");
        }
    }
    cases
}

/// Renders `source` over `context`, or says why it could not.
fn render(
    source: &str,
    options: RenderOptions,
    context: &serde_json::Value,
) -> Result<String, String> {
    JinjaTemplate::with_options(source, options)
        .and_then(|template| template.render(context))
        .map_err(|err| err.to_string())
}

fn options(
    trim_blocks: bool,
    lstrip_blocks: bool,
    keep_trailing_newline: bool,
    now: &str,
) -> RenderOptions {
    RenderOptions {
        trim_blocks,
        lstrip_blocks,
        keep_trailing_newline,
        clock: Clock::fixed_from_str(now).unwrap(),
        ..RenderOptions::default()
    }
}

/// Scores one file's outcomes against its skip list, prints the score, and fails on any
/// case that neither passes nor is listed, on listed cases that pass, and on listed
/// cases that do not exist.
fn score(file: &str, label: &str, outcomes: Vec<(String, Result<(), String>)>) {
    let skips = skipped(file);
    let ids: BTreeSet<&str> = outcomes.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), outcomes.len(), "{file}: case ids are not unique");
    let (mut passed, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    let mut now_passing = Vec::new();
    for (id, outcome) in &outcomes {
        match (outcome, skips.contains_key(id)) {
            (Ok(()), false) => passed += 1,
            (Ok(()), true) => now_passing.push(format!("{file}\t{id}")),
            (Err(_), true) => skipped += 1,
            (Err(why), false) => failures.push(format!("{id}: {why}")),
        }
    }
    let unknown: Vec<&String> = skips
        .keys()
        .filter(|id| !ids.contains(id.as_str()))
        .collect();
    println!(
        "{label}: {passed}/{} passed, {skipped} skipped",
        outcomes.len()
    );
    assert!(
        failures.is_empty(),
        "{} {label} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        now_passing.is_empty(),
        "listed in render_goldens_skipped.txt but now pass (remove them):\n{}",
        now_passing.join("\n")
    );
    assert!(
        unknown.is_empty(),
        "render_goldens_skipped.txt lists {file} cases that do not exist: {unknown:?}"
    );
}

fn flag(options: &serde_json::Value, name: &str) -> bool {
    options[name]
        .as_bool()
        .unwrap_or_else(|| panic!("options.{name} is not a boolean"))
}

/// minja's `tests/test-syntax.cpp`: `render` cases must print `expected`; `error` cases
/// must raise (at compile or render time; minja's message wording is its own).
/// Cases have no names, so a case is `line N` of the file.
#[test]
fn minja_syntax_cases() {
    let rows = common::read_jsonl(&format!("render-goldens/{MINJA}"));
    let outcomes = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let o = &row["options"];
            let options = options(
                flag(o, "trim_blocks"),
                flag(o, "lstrip_blocks"),
                flag(o, "keep_trailing_newline"),
                "2024-07-26T10:30:00",
            );
            let source = row["template"].as_str().unwrap();
            let rendered = render(source, options, &row["bindings"]);
            let outcome = match row["kind"].as_str().unwrap() {
                "render" => compare(row["expected"].as_str().unwrap(), rendered),
                "error" => match rendered {
                    Err(_) => Ok(()),
                    Ok(output) => Err(format!(
                        "rendered {output:?} where minja raised {:?}",
                        row["expected_error_substring"].as_str().unwrap_or_default()
                    )),
                },
                kind => panic!("{MINJA} line {}: unknown kind {kind:?}", i + 1),
            };
            let outcome = outcome.map_err(|why| format!("{source:?}\n      {why}"));
            (format!("line {}", i + 1), outcome)
        })
        .collect();
    score(MINJA, "minja syntax cases", outcomes);
}

/// huggingface.js `packages/jinja/test/e2e.test.js`: `chat_template` rendered over
/// `data` must print `target`, with transformers' whitespace settings. The tests pin
/// the date `strftime_now` sees to 2025-07-10. A case is `group/name`.
#[test]
fn hfjs_e2e_cases() {
    let rows = common::read_jsonl(&format!("render-goldens/{HFJS}"));
    let outcomes = rows
        .iter()
        .map(|row| {
            let id = format!(
                "{}/{}",
                row["group"].as_str().unwrap(),
                row["name"].as_str().unwrap()
            );
            let empty = serde_json::json!({});
            let context = row.get("data").unwrap_or(&empty);
            let options = options(true, true, false, "2025-07-10T00:00:00");
            let rendered = render(row["chat_template"].as_str().unwrap(), options, context);
            (id, compare(row["target"].as_str().unwrap(), rendered))
        })
        .collect();
    score(HFJS, "huggingface.js e2e cases", outcomes);
}

/// llama.cpp `tests/test-chat-template.cpp`: `template` rendered over the case's
/// messages, tokens and `add_generation_prompt` must print `expected_output_jinja`.
/// A case is its `name`.
#[test]
fn llamacpp_chat_template_cases() {
    let rows = common::read_jsonl(&format!("render-goldens/{LLAMACPP}"));
    let outcomes = rows
        .iter()
        .map(|row| {
            let context = serde_json::json!({
                "messages": row["messages"],
                "bos_token": row["bos_token"],
                "eos_token": row["eos_token"],
                "add_generation_prompt": row["add_generation_prompt"],
            });
            let options = options(true, true, false, "2024-07-26T10:30:00");
            let rendered = render(row["template"].as_str().unwrap(), options, &context);
            let outcome = compare(row["expected_output_jinja"].as_str().unwrap(), rendered);
            (row["name"].as_str().unwrap().to_string(), outcome)
        })
        .collect();
    score(LLAMACPP, "llama.cpp chat-template cases", outcomes);
}
