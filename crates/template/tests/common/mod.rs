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
