//! Reading a model's output as the server reads it: the dialect detected from the model's
//! template (or learned from it, where its family has none), the request prepared with
//! that dialect, and the output read by the prepared parser, whole and one char at a time
//! (both must give the same message). llama.cpp's and the peer parsers' case suites share it.

use std::fs;
use std::path::{Path, PathBuf};

use toolbridge_chat::{ChatRequest, Message};
use toolbridge_dialect::{answer_format, assemble, detect, ChatTemplate, Registry, SequentialIds};

/// `shared/corpus/jinja/`, beside the repository.
pub fn corpus_dir() -> PathBuf {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/jinja");
    assert!(
        corpus.is_dir(),
        "the shared corpus is missing: looked in {}",
        corpus.display()
    );
    corpus
}

/// A template, the registry that knows its dialect, and that dialect's name.
pub struct Model {
    pub template: ChatTemplate,
    pub registry: Registry,
    pub dialect: &'static str,
}

impl Model {
    /// The model whose template is the file at `path`, its dialect detected as the server
    /// detects it.
    pub fn from_template_file(path: &Path) -> Result<Model, String> {
        let source =
            fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        let template = ChatTemplate::new(&source, "", "").map_err(|error| error.to_string())?;
        let mut registry = Registry::default();
        let detection = detect::resolve(&source, &registry);
        let learned = detection
            .fallback()
            .then(|| detect::learn_into(&template, &mut registry).ok())
            .flatten();
        let dialect = learned.unwrap_or(detection.dialect);
        Ok(Model {
            template,
            registry,
            dialect,
        })
    }

    /// The message the prepared parser reads from `text`, read whole; an error when
    /// reading it one char at a time gives another.
    pub fn read(&self, request: &ChatRequest, text: &str) -> Result<Message, String> {
        let dialect = self
            .registry
            .get(self.dialect)
            .ok_or("detection names no registered dialect")?;
        let read_with = |pieces: Vec<&str>| -> Result<Message, String> {
            let mut prepared = answer_format::prepare(dialect, request, &self.template)
                .map_err(|error| format!("prepare: {error}"))?;
            let mut events = Vec::new();
            for piece in pieces {
                events.extend(prepared.parser.push(piece));
            }
            events.extend(prepared.parser.finish());
            assemble(events, SequentialIds::default()).map_err(|error| error.to_string())
        };
        let whole = read_with(vec![text])?;
        let chars = text
            .char_indices()
            .map(|(at, c)| &text[at..at + c.len_utf8()])
            .collect();
        if read_with(chars)? != whole {
            return Err("read one char at a time, the message differs".into());
        }
        Ok(whole)
    }
}
