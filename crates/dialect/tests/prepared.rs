//! What the server sends for a request, one reviewed snapshot per case: each file in
//! `tests/prepared/` names a corpus template (Jinja under `corpus/jinja/`, an Ollama Go
//! template `….gotmpl` under `corpus/gotmpl/`, or, as `tests/…`, one of this crate's) and
//! holds an OpenAI request; its snapshot is the dialect chosen for the template (a family's,
//! or one learned from the template as the server learns it), the prompt, the grammar
//! (GBNF, with each schema expanded) and the stops that `answer_format::prepare` makes of
//! them, or the error the request is refused with. A change to any dialect's prompt or
//! grammar shows up here as a diff to review (`cargo insta review`). Templates and dialects
//! that print today's date see a fixed one.

use std::fmt::Write;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toolbridge_chat::{ChatRequest, Content, ContentPart, Message};
use toolbridge_dialect::{
    answer_format, detect, dialects::firefunction, dialects::styles::hermes_2_pro,
    toolkit::native::NativeDialect, ChatTemplate, Dialect, DialectError, Prepared, Registry,
};
use toolbridge_template::{Clock, JinjaTemplate, OllamaSource, RenderOptions};

/// One case: a template under `../shared/corpus/jinja/` (or this crate's `tests/`) and the
/// request prepared with it.
#[derive(Deserialize)]
struct Case {
    template: String,
    request: ChatRequest,
    #[serde(default)]
    bos_token: String,
    #[serde(default)]
    eos_token: String,
}

/// The shared corpus's folder `kind` (`jinja`, `gotmpl`).
fn corpus(kind: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(kind);
    assert!(
        path.is_dir(),
        "the shared corpus is missing: looked in {}",
        path.display()
    );
    path
}

/// The template `name`'s text and the template made of it: an Ollama Go template for a
/// `.gotmpl` file, else Jinja seeing `clock` and the case's special tokens.
fn load_template(case: &Case, clock: &Clock) -> (String, ChatTemplate) {
    let name = &case.template;
    let folder = if name.starts_with("tests/") {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    } else if name.ends_with(".gotmpl") {
        corpus("gotmpl")
    } else {
        corpus("jinja")
    };
    let path = folder.join(name);
    let source = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
    if name.ends_with(".gotmpl") {
        let ollama =
            OllamaSource::from_gotmpl(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
        let template =
            ChatTemplate::ollama(&ollama).unwrap_or_else(|error| panic!("{name}: {error}"));
        return (source, template);
    }
    let options = RenderOptions {
        clock: clock.clone(),
        ..RenderOptions::default()
    };
    let compiled = JinjaTemplate::with_options(&source, options)
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let template = ChatTemplate::jinja(compiled, &case.bos_token, &case.eos_token);
    (source, template)
}

/// The registry the server has, with the prompt styles that print today's date seeing
/// `clock`.
fn registry(clock: &Clock) -> Registry {
    let mut registry = Registry::default();
    registry.register(Arc::new(hermes_2_pro::dialect(clock.clone())), &[]);
    registry.register(Arc::new(firefunction::dialect(clock.clone())), &[]);
    registry
}

/// The case in `path`, the dialect chosen for its template (as the server chooses it) and
/// what `answer_format::prepare` makes of its request.
fn prepare_case(
    path: &Path,
    clock: &Clock,
    registry: &Registry,
) -> (Case, &'static str, Result<Prepared, DialectError>) {
    let case: Case = serde_json::from_str(&fs::read_to_string(path).expect("readable case"))
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let (source, template) = load_template(&case, clock);
    let learned = detect::choose(&source, &template, registry)
        .learned_dialect()
        .cloned()
        .map(NativeDialect);
    let (name, dialect): (&str, &dyn Dialect) = match &learned {
        Some(learned) => (learned.name(), learned),
        None => {
            let name = detect::dialect_name(&source);
            let dialect = registry
                .get(name)
                .expect("detection names a registered dialect");
            (name, dialect)
        }
    };
    let prepared = answer_format::prepare(dialect, &case.request, &template);
    (case, name, prepared)
}

#[test]
fn prepared_requests_match_their_snapshots() {
    let clock = Clock::fixed_from_str("2026-01-15T09:30:00").expect("a date");
    let registry = registry(&clock);
    insta::glob!("prepared/*.json", |path| {
        let (_, name, prepared) = prepare_case(path, &clock, &registry);
        let shown = match prepared {
            Ok(prepared) => shown(name, &prepared),
            Err(error) => format!("dialect: {name}\n\n--- refused\n{error}\n"),
        };
        insta::assert_snapshot!(shown);
    });
}

/// Whatever shape a message's content is sent in (a string, text parts, a `developer`
/// turn, a tool result as parts), its text reaches the prompt: checked on every case named
/// `*content_shapes*`, each on a template that takes fewer shapes than clients send.
#[test]
fn every_message_text_reaches_the_prompt() {
    let clock = Clock::fixed_from_str("2026-01-15T09:30:00").expect("a date");
    let registry = registry(&clock);
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prepared");
    let mut cases: Vec<PathBuf> = fs::read_dir(&folder)
        .expect("the cases' folder")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.to_string_lossy().contains("content_shapes"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 3,
        "content_shapes cases missing in {}",
        folder.display()
    );
    for path in cases {
        let (case, _, prepared) = prepare_case(&path, &clock, &registry);
        let prompt = prepared
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
            .prompt;
        for (at, message) in case.request.messages.iter().enumerate() {
            for text in message_texts(message) {
                assert!(
                    prompt.contains(text),
                    "{}: messages[{at}]'s text {text:?} is not in the prompt:\n{prompt}",
                    path.display()
                );
            }
        }
    }
}

/// The texts a message says: its string content, or each of its text parts.
fn message_texts(message: &Message) -> Vec<&str> {
    match &message.content {
        None => Vec::new(),
        Some(Content::Text(text)) => vec![text.as_str()],
        Some(Content::Parts(parts)) => parts.iter().filter_map(ContentPart::text).collect(),
    }
}

/// The snapshot's text: the dialect, the prompt, the constraint and the stops.
fn shown(dialect: &str, prepared: &Prepared) -> String {
    let mut text = format!("dialect: {dialect}\n\n--- prompt\n{}\n", prepared.prompt);
    match &prepared.constraint {
        None => text.push_str("\n--- no constraint\n"),
        Some(constraint) => {
            let gbnf = constraint.gbnf().expect("the grammar prints as GBNF");
            let _ = write!(
                text,
                "\n--- grammar (lazy: {}, triggers: {:?})\n{}\n",
                constraint.is_lazy(),
                constraint.triggers(),
                gbnf.text
            );
        }
    }
    let _ = write!(text, "\n--- stop: {:?}\n", prepared.stop);
    text
}
