//! What the dialect tests share: files of the shared folder ([`shared`], [`corpus`]), seed
//! 000 read from it (its messages, its templates and its sections, each section's
//! conversation and injected system prompt), constraints compiled as an engine runs them
//! ([`validator`]), the split-invariance check every parser's tests make ([`split`]), tool
//! calls written in each dialect's syntax ([`written`]), and outputs read as the server
//! reads them ([`reading`]).

pub mod reading;
pub mod split;
pub mod written;

use std::fs;
use std::path::{Path, PathBuf};

use toolbridge_chat::Message;
use toolbridge_dialect::Constraint;
use toolbridge_grammar::check::Validator;

/// The text of `relative`, a file under `../shared/` beside the repository.
pub fn shared(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(relative);
    fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// `../shared/corpus/`, beside the repository, with its Jinja manifest.
pub fn corpus() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    assert!(
        path.join("jinja/MANIFEST.jsonl").is_file(),
        "corpus not found: looked at {}",
        path.display()
    );
    path
}

/// The constraint compiled as an engine runs it: lazy through its triggers.
pub fn validator(constraint: &Constraint) -> Validator {
    let text = constraint.lark();
    Validator::from_lark(text).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

pub fn seed_text() -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/seeds/000_8b0e678405ed2946.txt");
    fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("seed 000 not found: looked in {} ({err})", path.display()))
}

/// The fenced block after the first line from `from` on equal to `label`: its text (the
/// lines between the fences joined by newlines) and the index of its closing fence.
pub fn block_after(lines: &[&str], from: usize, label: &str) -> (String, usize) {
    let start = lines[from..]
        .iter()
        .position(|line| *line == label)
        .map(|at| from + at)
        .unwrap_or_else(|| panic!("no {label:?} after line {}", from + 1));
    let open = lines[start..]
        .iter()
        .position(|line| line.starts_with("```"))
        .map(|at| start + at + 1)
        .unwrap_or_else(|| panic!("no block after line {}", start + 1));
    let close = lines[open..]
        .iter()
        .position(|line| *line == "```")
        .map(|at| open + at)
        .unwrap_or_else(|| panic!("unclosed block at line {open}"));
    (lines[open..close].join("\n"), close)
}

pub struct Section {
    pub title: String,
    pub template: String,
    pub style: String,
    pub with_tools: bool,
    pub conversation: String,
    pub system: String,
}

pub struct Seed {
    pub messages: Vec<Message>,
    pub templates: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

pub fn parse_seed() -> Seed {
    let text = seed_text();
    let lines: Vec<&str> = text.lines().collect();
    let messages = serde_json::from_str(&block_after(&lines, 0, "Messages:").0)
        .unwrap_or_else(|err| panic!("seed 000's messages do not parse: {err}"));
    let mut templates = Vec::new();
    let mut sections = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("# ") {
            templates.push((name.to_string(), block_after(&lines, index, "Template:").0));
        } else if let Some(title) = line.strip_prefix("### ") {
            let parts: Vec<&str> = title.split(" / ").collect();
            assert_eq!(parts.len(), 3, "section title {title:?}");
            let (conversation, end) = block_after(&lines, index, "Prompt:");
            sections.push(Section {
                title: title.to_string(),
                template: parts[0].to_string(),
                style: parts[1].to_string(),
                with_tools: parts[2] == "with tools",
                conversation,
                system: block_after(&lines, end, "Prompt:").0,
            });
        }
    }
    Seed {
        messages,
        templates,
        sections,
    }
}
