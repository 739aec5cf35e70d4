//! Python's `repr(str)` against CPython itself: `fixtures/pyrepr/cases.jsonl` holds what
//! CPython printed for each text (quote choice, escapes, and every edge of the table of
//! characters `str.isprintable` rejects), written by `fixtures/pyrepr/generate.py`.

use std::path::PathBuf;

use serde_json::Value;
use toolbridge_pyrepr::python_repr;

#[test]
fn strings_print_as_cpython_prints_them() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyrepr/cases.jsonl");
    let cases = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()));
    let mut total = 0;
    let mut failures = Vec::new();
    for line in cases.lines() {
        let case: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let (Some(text), Some(expected)) = (case["text"].as_str(), case["repr"].as_str()) else {
            panic!("a case without text and repr: {line}");
        };
        total += 1;
        let got = python_repr(&Value::String(text.to_string()));
        if got != expected {
            failures.push(format!("{text:?}: got {got}, CPython {expected}"));
        }
    }
    println!("repr(str) as CPython: {}/{total}", total - failures.len());
    assert!(total > 90, "only {total} cases in {}", path.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
