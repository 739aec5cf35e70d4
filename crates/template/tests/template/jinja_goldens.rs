//! Conformance with Python: every (template, context) row of `goldens/jinja.jsonl`
//! renders byte-identically, or fails where Python failed. Rows that differ for a
//! documented reason are listed in `jinja_known_differences.txt`; any other difference,
//! and any listed row that now matches, fails the test.

use crate::common;
use crate::common::goldens::{self, KnownDifferences, Tally, Verdict};
use std::collections::BTreeMap;
use toolbridge_template::{JinjaTemplate, RenderOptions};

const KNOWN_DIFFERENCES: &str = include_str!("jinja_known_differences.txt");

fn judge(row: &serde_json::Value, contexts: &BTreeMap<String, serde_json::Value>) -> Verdict {
    let source = common::read_corpus_file(row["template"].as_str().unwrap());
    let context = &contexts[row["context"].as_str().unwrap()];
    let options = RenderOptions {
        clock: goldens::clock(),
        ..RenderOptions::default()
    };
    let rendered = JinjaTemplate::with_options(&source, options).and_then(|t| t.render(context));
    match (row["ok"].as_bool().unwrap(), rendered) {
        (true, rendered) => goldens::compare(row["output"].as_str().unwrap(), rendered).into(),
        (false, Err(_)) => Verdict::ErrorMatched,
        (false, Ok(_)) => Verdict::Differs(format!(
            "we rendered where Python raised {}",
            row["error"].as_str().unwrap_or_default()
        )),
    }
}

#[test]
fn jinja_goldens_match_python() {
    let rows = common::read_jsonl("goldens/jinja.jsonl");
    let contexts = goldens::contexts(&rows, common::jinja_context);
    let known = KnownDifferences::parse(KNOWN_DIFFERENCES);
    let tally = Tally::of(&rows, &known, |row| judge(row, &contexts));
    let ok_rows = rows.iter().filter(|row| row["ok"] == true).count();
    println!(
        "jinja goldens: {}/{ok_rows} identical, {}/{} errors matched, {} known differences",
        tally.identical,
        tally.errors_matched,
        rows.len() - ok_rows,
        known.len()
    );
    assert!(
        known.len() * 100 <= rows.len(),
        "more than 1% of rows are listed as known differences"
    );
    tally.assert_conformance("Python");
}
