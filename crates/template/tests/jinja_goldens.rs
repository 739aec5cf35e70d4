//! Conformance with Python: every (template, context) row of `goldens/jinja.jsonl`
//! renders byte-identically, or fails where Python failed. Rows that differ for a
//! documented reason are listed in `jinja_known_differences.txt`; any other difference,
//! and any listed row that now matches, fails the test.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use toolbridge_template::{Clock, JinjaTemplate, RenderOptions};

const KNOWN_DIFFERENCES: &str = include_str!("jinja_known_differences.txt");

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

fn options() -> RenderOptions {
    RenderOptions {
        clock: Clock::fixed_from_str("2024-07-26T10:30:00").unwrap(),
        ..RenderOptions::default()
    }
}

/// What rendering one row produced, judged against Python.
enum Verdict {
    Identical,
    ErrorMatched,
    Differs(String),
}

fn judge(row: &serde_json::Value, contexts: &BTreeMap<String, serde_json::Value>) -> Verdict {
    let template_path = row["template"].as_str().unwrap();
    let source = common::read_corpus_file(template_path);
    let context = &contexts[row["context"].as_str().unwrap()];
    let rendered = JinjaTemplate::with_options(&source, options()).and_then(|t| t.render(context));
    match (row["ok"].as_bool().unwrap(), rendered) {
        (true, Ok(output)) if output == row["output"].as_str().unwrap() => Verdict::Identical,
        (true, Ok(output)) => Verdict::Differs(common::first_difference(
            row["output"].as_str().unwrap(),
            &output,
        )),
        (true, Err(err)) => Verdict::Differs(format!("we raised where Python rendered: {err}")),
        (false, Err(_)) => Verdict::ErrorMatched,
        (false, Ok(_)) => Verdict::Differs(format!(
            "we rendered where Python raised {}",
            row["error"].as_str().unwrap_or_default()
        )),
    }
}

fn load_contexts(rows: &[serde_json::Value]) -> BTreeMap<String, serde_json::Value> {
    rows.iter()
        .map(|row| row["context"].as_str().unwrap().to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|name| {
            let text = common::read_corpus_file(&format!("contexts/{name}.json"));
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

#[test]
fn jinja_goldens_match_python() {
    let rows = common::read_jsonl("goldens/jinja.jsonl");
    let contexts = load_contexts(&rows);
    let known = known_differences();
    let (mut identical, mut ok_rows, mut errors_matched, mut error_rows) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    let mut now_passing = Vec::new();
    for row in &rows {
        let key = (
            row["template"].as_str().unwrap().to_string(),
            row["context"].as_str().unwrap().to_string(),
        );
        if row["ok"].as_bool().unwrap() {
            ok_rows += 1;
        } else {
            error_rows += 1;
        }
        match judge(row, &contexts) {
            Verdict::Identical => identical += 1,
            Verdict::ErrorMatched => errors_matched += 1,
            Verdict::Differs(why) if !known.contains(&key) => {
                failures.push(format!("{} [{}]: {why}", key.0, key.1))
            }
            Verdict::Differs(_) => continue,
        }
        if known.contains(&key) {
            now_passing.push(format!("{}\t{}", key.0, key.1));
        }
    }
    println!(
        "jinja goldens: {identical}/{ok_rows} identical, {errors_matched}/{error_rows} errors matched, {} known differences",
        known.len()
    );
    assert!(
        known.len() * 100 <= rows.len(),
        "more than 1% of rows are listed as known differences"
    );
    assert!(
        failures.is_empty(),
        "{} rows differ from Python:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        now_passing.is_empty(),
        "listed as known differences but now match Python (remove them):\n{}",
        now_passing.join("\n")
    );
}
