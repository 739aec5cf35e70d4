//! Detection over every template of the corpus, checked against a reviewed table.
//!
//! Each Jinja template under `../shared/corpus/jinja` (as its `MANIFEST.jsonl` lists them)
//! and each Ollama Go template under `../shared/corpus/gotmpl` gets one line in
//! `tests/detect_table.txt`: its path, the family its text shows (`-` for none) and the
//! dialect that serves it, marked `(fallback)` where the family has no dialect of its own
//! yet and a prompt style stands in. A change to the rules or to the registry that moves
//! any template shows up as a diff of that table; run with `UPDATE_DETECT_TABLE=1` to
//! write the new table, and review it.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use toolbridge_dialect::{detect::resolve, Registry};

use crate::common::corpus;

/// The templates a manifest lists: files with one of `extensions`.
fn listed(corpus: &Path, manifest: &str, extensions: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(corpus.join(manifest))
        .unwrap_or_else(|error| panic!("cannot read {manifest}: {error}"));
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| entry.get("file")?.as_str().map(str::to_string))
        .filter(|file| extensions.iter().any(|extension| file.ends_with(extension)))
        .collect()
}

fn table() -> (String, usize, BTreeSet<&'static str>) {
    let corpus = corpus();
    let registry = Registry::default();
    let mut files = listed(&corpus, "jinja/MANIFEST.jsonl", &[".jinja"]);
    files.extend(listed(&corpus, "gotmpl/MANIFEST.jsonl", &[".gotmpl"]));
    files.sort();
    let mut families = BTreeSet::new();
    let mut out = String::new();
    for file in &files {
        let source = std::fs::read_to_string(corpus.join(file))
            .unwrap_or_else(|error| panic!("cannot read {file}: {error}"));
        let detection = resolve(&source, &registry);
        families.extend(detection.family);
        let fallback = if detection.fallback() {
            " (fallback)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{file}\t{}\t{}{fallback}\n",
            detection.family.unwrap_or("-"),
            detection.dialect
        ));
    }
    (out, files.len(), families)
}

#[test]
fn every_corpus_template_gets_the_dialect_the_table_says() {
    let (table, templates, families) = table();
    println!(
        "detection: {templates} templates, {} families",
        families.len()
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/detect_table.txt");
    if std::env::var_os("UPDATE_DETECT_TABLE").is_some() {
        std::fs::write(&path, &table).unwrap_or_else(|error| panic!("{error}"));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != table {
        let old: BTreeSet<&str> = expected.lines().collect();
        let new: BTreeSet<&str> = table.lines().collect();
        let mut diff = String::new();
        for line in old.difference(&new) {
            diff.push_str(&format!("- {line}\n"));
        }
        for line in new.difference(&old) {
            diff.push_str(&format!("+ {line}\n"));
        }
        panic!(
            "detection differs from {} (UPDATE_DETECT_TABLE=1 rewrites it):\n{diff}",
            path.display()
        );
    }
}
