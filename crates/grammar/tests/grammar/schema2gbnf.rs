//! llama.cpp's json-schema-to-grammar test cases: every SUCCESS case must print
//! byte-identical GBNF (after the corpus's own trimming: the whole string, and the
//! leading blanks of every line), every FAILURE case must be refused.
//!
//! Run with `--nocapture` to see the score.

use std::path::PathBuf;

use serde_json::Value;
use toolbridge_grammar::gbnf;
use toolbridge_grammar::schema::{compile_str, Options};

fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/schema2gbnf/cases.jsonl")
}

/// The corpus's comparison: trim the whole text and the leading blanks of each line.
fn trim(text: &str) -> String {
    text.trim()
        .lines()
        .map(|line| line.trim_start_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

fn diff(expected: &str, actual: &str) -> String {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    for line in &expected {
        if !actual.contains(line) {
            out.push_str(&format!("  - {line}\n"));
        }
    }
    for line in &actual {
        if !expected.contains(line) {
            out.push_str(&format!("  + {line}\n"));
        }
    }
    out
}

#[test]
fn llama_cpp_cases_print_identical_gbnf() {
    let path = corpus_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "schema2gbnf corpus not found at {} ({e}); it lives in ../shared/corpus relative to the repository root",
            path.display()
        )
    });
    let options = Options::default();
    let (mut identical, mut successes, mut refused, mut failures) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("a JSON line");
        let name = case["name"].as_str().unwrap_or("?");
        let schema = case["schema"].as_str().unwrap_or("");
        let result = compile_str(schema, &options);
        if case["status"] == "SUCCESS" {
            successes += 1;
            let expected = trim(case["expected_grammar"].as_str().unwrap_or(""));
            match result.and_then(|c| gbnf::print(&c.grammar)) {
                Ok(printed) => {
                    let actual = trim(&printed);
                    if actual == expected {
                        identical += 1;
                    } else {
                        problems.push(format!("{name}: differs\n{}", diff(&expected, &actual)));
                    }
                }
                Err(e) => problems.push(format!("{name}: failed: {e}")),
            }
        } else {
            failures += 1;
            match result {
                Err(_) => refused += 1,
                Ok(c) => problems.push(format!(
                    "{name}: expected an error, got\n{}",
                    gbnf::print(&c.grammar).unwrap_or_default()
                )),
            }
        }
    }
    println!("schema2gbnf: {identical}/{successes} identical, {refused}/{failures} failures");
    for problem in &problems {
        println!("{problem}");
    }
    assert!(
        successes > 0 && failures > 0,
        "no cases read from {}",
        path.display()
    );
    assert!(
        problems.is_empty(),
        "{} of {} cases differ",
        problems.len(),
        successes + failures
    );
}
