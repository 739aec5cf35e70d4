//! Shared test data: the corpus in `../shared/corpus`, found from the repository root.

use std::path::PathBuf;

/// `../shared/corpus` beside the repository; panics with where it looked if missing.
pub fn corpus_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = root.join("../shared/corpus");
    match corpus.canonicalize() {
        Ok(path) => path,
        Err(_) => panic!(
            "test corpus not found: looked for {} (expected ../shared/corpus beside the repository root)",
            corpus.display()
        ),
    }
}

/// Reads a corpus file as text, naming the file when it cannot.
pub fn read_corpus_file(relative: &str) -> String {
    let path = corpus_dir().join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// Parses every line of a corpus JSON-lines file.
pub fn read_jsonl(relative: &str) -> Vec<serde_json::Value> {
    read_corpus_file(relative)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("{relative} line {}: {err}", i + 1))
        })
        .collect()
}

/// Where `actual` first departs from `expected`, with 40 bytes of lead-in on each side.
// Each test binary uses a different part of this module.
#[allow(dead_code)]
pub fn first_difference(expected: &str, actual: &str) -> String {
    let at = expected
        .char_indices()
        .zip(actual.chars())
        .find(|((_, e), a)| e != a)
        .map(|((i, _), _)| i)
        .unwrap_or(expected.len().min(actual.len()));
    let mut start = at.saturating_sub(40);
    while !expected.is_char_boundary(start) {
        start -= 1;
    }
    let snippet = |s: &str| -> String { s.get(start..).unwrap_or("").chars().take(120).collect() };
    format!(
        "output differs at byte {at}:\n      expected: {:?}\n      ours:     {:?}",
        snippet(expected),
        snippet(actual)
    )
}
