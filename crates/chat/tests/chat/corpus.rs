//! Every conversation of the shared render corpus parses and serializes back unchanged.
//!
//! These are the contexts the template goldens were rendered from, so what a template sees
//! after a round trip through these types is exactly what Python saw.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolbridge_chat::{Message, Tool};

/// `../shared/corpus/contexts` relative to the repository root.
fn contexts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/contexts")
}

/// The JSON files of `dir` and of its subfolders, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|error| {
        panic!(
            "cannot read the corpus contexts at {}: {error}",
            dir.display()
        )
    });
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files.extend(json_files(&path));
        } else if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Checks that `value` parses as `T` and serializes back to the same JSON, key order included.
fn assert_round_trip<T>(value: &Value, what: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let parsed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|error| panic!("{what} does not parse: {error}\n{value}"));
    let output = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(&output, value, "{what} changed in a round trip");
    assert_eq!(
        output.to_string(),
        value.to_string(),
        "{what} changed key order in a round trip"
    );
}

#[test]
fn every_corpus_message_round_trips() {
    let dir = contexts_dir();
    let files = json_files(&dir);
    assert!(
        !files.is_empty(),
        "no context files found in {}",
        dir.display()
    );
    let mut messages = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable context");
        let context: Value = serde_json::from_str(&text).expect("context is JSON");
        let name = file.display();
        let Some(Value::Array(list)) = context.get("messages") else {
            panic!("{name} has no messages array");
        };
        for (index, message) in list.iter().enumerate() {
            assert_round_trip::<Message>(message, &format!("{name}: message {index}"));
            messages += 1;
        }
        if let Some(Value::Array(tools)) = context.get("tools") {
            for (index, tool) in tools.iter().enumerate() {
                assert_round_trip::<Tool>(tool, &format!("{name}: tool {index}"));
            }
        }
    }
    assert!(
        messages >= 20,
        "only {messages} messages found under {}",
        dir.display()
    );
}
