//! The files tests read and write: the corpus in `../shared/corpus` beside the repository,
//! and a scratch directory per test. The golden runners' harness is `goldens`.

pub mod goldens;

use std::path::{Path, PathBuf};
use toolbridge_template::gotmpl::OllamaRequest;

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/corpus` beside the repository; panics with where it looked if missing.
pub fn corpus_dir() -> PathBuf {
    let corpus = repo_root().join("../shared/corpus");
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

/// Parses a corpus JSON file, naming the file when it cannot.
pub fn read_corpus_json(relative: &str) -> serde_json::Value {
    serde_json::from_str(&read_corpus_file(relative))
        .unwrap_or_else(|err| panic!("{relative}: {err}"))
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

/// The Jinja goldens' context `name`: `contexts/<name>.json`.
pub fn jinja_context(name: &str) -> serde_json::Value {
    read_corpus_json(&format!("contexts/{name}.json"))
}

/// The Go goldens' request `name` as JSON: `contexts/ollama/<name>.json`.
pub fn ollama_context(name: &str) -> serde_json::Value {
    read_corpus_json(&format!("contexts/ollama/{name}.json"))
}

/// The Go goldens' request `name` ([`ollama_context`]), read as Ollama reads it.
pub fn ollama_request(name: &str) -> OllamaRequest {
    OllamaRequest::from_json(&ollama_context(name)).unwrap_or_else(|err| panic!("{name}: {err}"))
}

/// A fresh, empty directory for the test `name` (unique in this binary).
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("template-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test directory");
    dir
}

/// Writes `contents` to `name` under `dir`, making the directories it names.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create test directory");
    }
    std::fs::write(&path, contents).expect("write test file");
    path
}
