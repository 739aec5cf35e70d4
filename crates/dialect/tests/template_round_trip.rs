//! Every corpus template that renders tool calls, round trip: a conversation whose last
//! assistant turn carries BFCL ground-truth calls is rendered by the template, the
//! assistant's text is cut out of it (the render without that turn, with the generation
//! prompt, is its prefix; the turn's closing tokens are its end), and the dialect detected
//! from the template reads the calls back, whole and cut in two at every char. Prints
//! `round trip: N/M templates` and each template that fails with its reason; the families
//! this crate has a dialect for (those that do not fall back to a prompt style) must all
//! pass. Ollama's Go templates go through the same trip, rendered as Ollama renders a chat
//! (`round trip (Ollama): N/M templates`), since a Modelfile can be served too.

use std::path::Path;

use serde_json::Value;
use toolbridge_chat::bfcl::{self, Answer, Question};
use toolbridge_dialect::{
    detect::{choose, resolve},
    proof::{calls_text, same_calls, Proof, Sample},
    ChatTemplate, Dialect, Registry,
};
use toolbridge_template::OllamaSource;
use toolbridge_template::TemplateCaps;

use crate::common::{corpus, split::message_of};

/// The files of `kind` (`jinja`, `gotmpl`) its manifest lists.
fn templates(corpus: &Path, kind: &str) -> Vec<String> {
    let text = std::fs::read_to_string(corpus.join(kind).join("MANIFEST.jsonl"))
        .unwrap_or_else(|error| panic!("cannot read the {kind} manifest: {error}"));
    let mut files: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| entry.get("file")?.as_str().map(str::to_string))
        .filter(|file| file.ends_with(&format!(".{kind}")))
        .collect();
    files.sort();
    files
}

/// A corpus template, compiled: Jinja with `<s>`/`</s>` as its tokens, or an Ollama Go
/// template with the stop strings beside it.
fn load(corpus: &Path, file: &str) -> Option<ChatTemplate> {
    let path = corpus.join(file);
    if file.ends_with(".gotmpl") {
        let source = OllamaSource::from_gotmpl(&path).ok()?;
        return ChatTemplate::ollama(&source).ok();
    }
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {file}: {error}"));
    ChatTemplate::new(&source, "<s>", "</s>").ok()
}

/// Questions to try, most calls first: a template that takes one call per turn gets the
/// next.
fn questions(corpus: &Path) -> Vec<(Question, Answer)> {
    let dir = corpus.join("bfcl");
    let mut picked = Vec::new();
    for (category, index) in [("parallel_multiple", 0), ("simple_python", 0)] {
        let all = bfcl::load(&dir, category).unwrap_or_else(|error| panic!("{error}"));
        picked.push(all[index].clone());
    }
    picked
}

/// The sample of `question` with `answer`'s calls.
fn sample(question: &Question, answer: &Answer) -> Result<Sample, String> {
    let tools = question.tools().map_err(|error| error.to_string())?;
    Ok(Sample::new(
        question.messages.clone(),
        tools,
        answer.expected_calls(),
    ))
}

/// One template's round trip: `Ok`, with a note when only a later (one-call) question
/// passed, or why not.
fn round_trip(
    template: &ChatTemplate,
    dialect: &dyn Dialect,
    questions: &[(Question, Answer)],
) -> Result<Option<String>, String> {
    // Why each question failed: a render error, or calls read wrong (the telling kind).
    let mut render_errors = Vec::new();
    let mut read_errors = Vec::new();
    for (question, answer) in questions {
        let sample = sample(question, answer)?;
        let text = match sample.render(template) {
            Ok(text) => text,
            Err(error) => {
                render_errors.push(error);
                continue;
            }
        };
        let reading = sample.read(dialect, template, &text)?;
        if !same_calls(reading.message.calls(), &sample.calls) {
            read_errors.push(format!(
                "{} read {} from {text:?}",
                dialect.name(),
                calls_text(reading.message.calls())
            ));
            continue;
        }
        for (at, _) in text.char_indices() {
            let mut parser = sample.parser(dialect, template, reading.prepared);
            let cut = message_of(parser.as_mut(), [&text[..at], &text[at..]]);
            if cut != reading.message {
                return Err(format!("cut at {at} reads differently: {text:?}"));
            }
        }
        return Ok(read_errors.into_iter().next());
    }
    Err(read_errors
        .into_iter()
        .chain(render_errors)
        .next()
        .unwrap_or_else(|| String::from("no question")))
}

#[test]
fn every_template_that_renders_calls_gives_them_back() {
    round_trip_all("jinja", "round trip");
}

#[test]
fn every_ollama_template_that_renders_calls_gives_them_back() {
    round_trip_all("gotmpl", "round trip (Ollama)");
}

/// Templates that write past calls in a syntax their model does not read, each with what
/// is wrong: they are listed, not required to pass.
const MISWRITTEN: &[(&str, &str)] = &[(
    "gotmpl/registry/phi4-mini.gotmpl",
    "writes each call without its closing brace (`{\"name\":…,\"arguments\":{…}` then `]`)",
)];

/// Templates that write some values so that no reader can get them back, each with how:
/// their proof fails and is listed, but is not required to pass.
const LOSSY: &[(&str, &str)] = &[
    (
        "jinja/hfjs-e2e/LiquidAI_LFM2.5-VL-450M.jinja",
        "quotes a string without escaping the quotes inside it (`note=\"Paris, \"the\" city\"`)",
    ),
    (
        "jinja/vllm/tool_chat_template_llama4_pythonic.jinja",
        "writes every value as a string (`days=\"3\"`, `metric=\"True\"`), quotes in it unescaped",
    ),
];

/// Every template of `kind` in the corpus that renders calls, round trip; prints the score
/// under `title`.
fn round_trip_all(kind: &str, title: &str) {
    let corpus = corpus();
    let registry = Registry::default();
    let questions = questions(&corpus);
    let mut total = 0;
    let mut passed = 0;
    let mut failures = Vec::new();
    let mut must_pass = Vec::new();
    let mut notes = Vec::new();
    for file in templates(&corpus, kind) {
        let Some(template) = load(&corpus, &file) else {
            continue;
        };
        if !TemplateCaps::probe(&template).renders_tool_calls() {
            continue;
        }
        total += 1;
        if let Some((_, why)) = MISWRITTEN.iter().find(|(name, _)| *name == file) {
            failures.push(format!("  {file}: the template {why}"));
            continue;
        }
        let source = std::fs::read_to_string(corpus.join(&file))
            .unwrap_or_else(|error| panic!("cannot read {file}: {error}"));
        let detection = resolve(&source, &registry);
        let dialect = registry
            .get(detection.dialect)
            .unwrap_or_else(|| panic!("{} is not registered", detection.dialect));
        match round_trip(&template, dialect, &questions) {
            Ok(None) => passed += 1,
            Ok(Some(note)) => {
                passed += 1;
                notes.push(format!(
                    "  {file}: one call per turn only; with two: {note}"
                ));
            }
            Err(reason) => {
                let family = detection.family.unwrap_or("-");
                let line = format!("  {file} ({family} → {}): {reason}", detection.dialect);
                if !detection.fallback() {
                    must_pass.push(line.clone());
                }
                failures.push(line);
            }
        }
    }
    println!("{title}: {passed}/{total} templates");
    for failure in &failures {
        println!("{failure}");
    }
    for note in &notes {
        println!("{note}");
    }
    assert!(
        must_pass.is_empty(),
        "templates whose family has a dialect fail the round trip:\n{}",
        must_pass.join("\n")
    );
}

#[test]
fn every_jinja_template_is_proven_or_its_failure_named() {
    prove_all("jinja", "proof");
}

#[test]
fn every_ollama_template_is_proven_or_its_failure_named() {
    prove_all("gotmpl", "proof (Ollama)");
}

/// The dialect [`choose`] picks for every template of `kind`, with its proof (see
/// `toolbridge_dialect::proof`): it must run on every template without a panic. Prints
/// `{title}: N/M templates read back` over the templates that render calls and the list of
/// those whose proof fails. A template whose family has a hand-written dialect and which
/// passes the round trip above must pass its proof too, with that dialect.
fn prove_all(kind: &str, title: &str) {
    let corpus = corpus();
    let registry = Registry::default();
    let questions = questions(&corpus);
    let (mut provable, mut proven, mut not_provable) = (0, 0, 0);
    let mut learned_instead = Vec::new();
    let mut failures = Vec::new();
    let mut must_pass = Vec::new();
    for file in templates(&corpus, kind) {
        let Some(template) = load(&corpus, &file) else {
            continue;
        };
        let source = std::fs::read_to_string(corpus.join(&file))
            .unwrap_or_else(|error| panic!("cannot read {file}: {error}"));
        let choice = choose(&source, &template, &registry);
        let detection = choice.detection;
        if choice.proof == Proof::NotProvable {
            not_provable += 1;
            continue;
        }
        provable += 1;
        let chosen = if choice.uses_learned() {
            "learned"
        } else {
            detection.dialect
        };
        if let Some(family) = choice
            .family_proof
            .as_ref()
            .filter(|_| choice.uses_learned())
        {
            learned_instead.push(format!(
                "  {file}: learned: {}; {}: {family}",
                choice.proof, detection.dialect
            ));
        }
        if choice.proof.holds() {
            proven += 1;
            continue;
        }
        let family = detection.family.unwrap_or("-");
        let line = format!("  {file} ({family} → {chosen}): {}", choice.proof);
        // What the round trip showed before: two calls read back, or one only (a template
        // that takes one call per turn, or writes two wrong).
        let before = (detection.native && !MISWRITTEN.iter().any(|(name, _)| *name == file))
            .then(|| registry.get(detection.dialect))
            .flatten()
            .and_then(|dialect| round_trip(&template, dialect, &questions).ok());
        let one_call_reads = choice
            .proof
            .failure()
            .is_none_or(|failure| failure.rendering != "one call");
        let lossy = LOSSY.iter().any(|(name, _)| *name == file);
        let still = lossy
            || match before {
                None => true,
                Some(None) => false,
                Some(Some(_)) => choice.proof.score() > 0 && one_call_reads,
            };
        if !still {
            must_pass.push(line.clone());
        }
        failures.push(line);
    }
    println!("{title}: {proven}/{provable} templates read back ({not_provable} not provable: they render no calls)");
    println!(
        "{title}: the learned dialect replaced the family's: {}",
        learned_instead.len()
    );
    for line in &learned_instead {
        println!("{line}");
    }
    println!("{title}: failing: {}", failures.len());
    for failure in &failures {
        println!("{failure}");
    }
    assert!(
        must_pass.is_empty(),
        "templates of a family with a dialect that pass the round trip fail the proof:\n{}",
        must_pass.join("\n")
    );
}
