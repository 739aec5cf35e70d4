//! Every corpus template that renders tool calls, round trip: a conversation whose last
//! assistant turn carries BFCL ground-truth calls is rendered by the template, the
//! assistant's text is cut out of it (the render without that turn, with the generation
//! prompt, is its prefix; the turn's closing tokens are its end), and the dialect detected
//! from the template reads the calls back, whole and cut in two at every char. Prints
//! `round trip: N/M templates` and each template that fails with its reason; the families
//! this crate has a dialect for (those that do not fall back to a prompt style) must all
//! pass. Ollama's Go templates go through the same trip, rendered as Ollama renders a chat
//! (`round trip (Ollama): N/M templates`), since a Modelfile can be served too.

mod common;

use std::path::{Path, PathBuf};

use common::split::message_of;
use serde_json::{json, Map, Value};
use toolbridge_chat::bfcl::{self, Answer, Question};
use toolbridge_chat::{ChatRequest, Message, ToolCall};
use toolbridge_dialect::detect::resolve;
use toolbridge_dialect::dialect::{ChatTemplate, Dialect};
use toolbridge_dialect::parser::StreamParser;
use toolbridge_dialect::registry::Registry;
use toolbridge_template::OllamaSource;
use toolbridge_template::{ArgumentsForm, TemplateCaps};

fn corpus() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    assert!(
        path.join("jinja/MANIFEST.jsonl").is_file(),
        "corpus not found: looked at {}",
        path.display()
    );
    path
}

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

/// Ids the strictest templates take: 9 alphanumerics.
fn with_ids(calls: Vec<ToolCall>) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(at, mut call)| {
            call.id = Some(format!("call{at:05}"));
            call
        })
        .collect()
}

fn call_json(call: &ToolCall, form: ArgumentsForm) -> Value {
    let object = call.function.arguments.to_value().unwrap_or(Value::Null);
    let arguments = match form {
        ArgumentsForm::String => Value::String(object.to_string()),
        ArgumentsForm::Object | ArgumentsForm::Either => object,
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name(), "arguments": arguments},
    })
}

/// The two renders: the conversation up to the assistant turn with the generation prompt,
/// and with the turn.
fn renders(
    template: &ChatTemplate,
    question: &Question,
    calls: &[ToolCall],
    form: ArgumentsForm,
) -> Result<(String, String), String> {
    let tools = question.tools().map_err(|error| error.to_string())?;
    let tools = serde_json::to_value(&tools).map_err(|error| error.to_string())?;
    let messages = serde_json::to_value(&question.messages).map_err(|error| error.to_string())?;
    let context = |messages: &Value, generation: bool| {
        let mut context = Map::new();
        context.insert("messages".into(), messages.clone());
        context.insert("tools".into(), tools.clone());
        context.insert("add_generation_prompt".into(), generation.into());
        context
    };
    let before = template
        .render_context(context(&messages, true))
        .map_err(|error| format!("render without the turn: {error}"))?;
    let calls: Vec<Value> = calls.iter().map(|call| call_json(call, form)).collect();
    let mut last_error = String::new();
    // Content `""` first (many templates test or iterate it), then `null` as OpenAI sends.
    for content in [json!(""), Value::Null] {
        let mut with_turn = messages.clone();
        if let Value::Array(list) = &mut with_turn {
            list.push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
        }
        match template.render_context(context(&with_turn, false)) {
            Ok(after) => return Ok((before, after)),
            Err(error) => last_error = format!("render with the turn: {error}"),
        }
    }
    Err(last_error)
}

/// The assistant's text: `after` past what it shares with `before`, without the turn's
/// closing tokens.
fn assistant_text(before: &str, after: &str, caps: &TemplateCaps) -> String {
    let shared = before
        .char_indices()
        .zip(after.chars())
        .find(|((_, a), b)| a != b)
        .map_or(before.len().min(after.len()), |((at, _), _)| at);
    // A generation prompt that opens more than the finished turn has (`<think>`) shares a
    // few bytes with the turn's first marker (`<t` of `<tool_call>`): back off to the end
    // of the last marker or line they share.
    let shared = if shared < before.len() {
        after[..shared].rfind(['\n', '>']).map_or(0, |at| at + 1)
    } else {
        shared
    };
    let mut text = after.get(shared..).unwrap_or("").to_string();
    let closers = [
        "</s>",
        "<|eot_id|>",
        "<|eom_id|>",
        "<|im_end|>",
        "<|end|>",
        "<|END_OF_TURN_TOKEN|>",
        "<|endoftext|>",
        "<end_of_turn>",
        "<|end_of_text|>",
    ];
    loop {
        let trimmed = text.trim_end().to_string();
        let suffix = caps
            .assistant_suffix
            .as_deref()
            .map(str::trim)
            .filter(|suffix| !suffix.is_empty() && trimmed.ends_with(suffix));
        let closer = suffix.or_else(|| closers.iter().copied().find(|c| trimmed.ends_with(c)));
        match closer {
            Some(closer) => text = trimmed[..trimmed.len() - closer.len()].to_string(),
            None => return trimmed,
        }
    }
}

/// The dialect's plain parser, or with `prepared` the one it prepares for `question` on
/// this template (which knows the request's tools: a template that writes every value as
/// text needs them), or the plain one where it cannot prepare one.
fn parser(
    dialect: &dyn Dialect,
    template: &ChatTemplate,
    question: &Question,
    prepared: bool,
) -> Box<dyn StreamParser + Send> {
    if !prepared {
        return dialect.parser();
    }
    let mut request = ChatRequest::new("m", question.messages.clone());
    request.tools = question.tools().ok();
    dialect
        .prepare(&request, template)
        .map_or_else(|_| dialect.parser(), |prepared| prepared.parser)
}

fn parse(
    dialect: &dyn Dialect,
    (template, question, prepared): (&ChatTemplate, &Question, bool),
    pieces: &[&str],
) -> Message {
    let mut parser = parser(dialect, template, question, prepared);
    message_of(parser.as_mut(), pieces.iter().copied())
}

/// Numbers compared as numbers (`5` and `5.0` are the same argument).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_calls(found: &[ToolCall], expected: &[ToolCall]) -> bool {
    found.len() == expected.len()
        && found.iter().zip(expected).all(|(a, b)| {
            a.name() == b.name()
                && same(
                    &a.function.arguments.to_value().unwrap_or(Value::Null),
                    &b.function.arguments.to_value().unwrap_or(Value::Null),
                )
        })
}

/// One template's round trip: `Ok`, with a note when only a later (one-call) question
/// passed, or why not.
fn round_trip(
    template: &ChatTemplate,
    dialect: &dyn Dialect,
    questions: &[(Question, Answer)],
) -> Result<Option<String>, String> {
    let caps = TemplateCaps::probe(template);
    let form = caps.tool_call_arguments.unwrap_or(ArgumentsForm::Object);
    // Why each question failed: a render error, or calls read wrong (the telling kind).
    let mut render_errors = Vec::new();
    let mut read_errors = Vec::new();
    for (question, answer) in questions {
        let calls = with_ids(answer.expected_calls());
        let (before, after) = match renders(template, question, &calls, form) {
            Ok(renders) => renders,
            Err(error) => {
                render_errors.push(error);
                continue;
            }
        };
        let text = assistant_text(&before, &after, &caps);
        let mut how = (template, question, false);
        let mut whole = parse(dialect, how, &[&text]);
        if !same_calls(whole.calls(), &calls) {
            how.2 = true;
            whole = parse(dialect, how, &[&text]);
        }
        if !same_calls(whole.calls(), &calls) {
            let found: Vec<String> = whole
                .calls()
                .iter()
                .map(|call| {
                    format!(
                        "{}{}",
                        call.name(),
                        call.function.arguments.as_json_string()
                    )
                })
                .collect();
            read_errors.push(format!(
                "{} read {} calls {found:?} from {text:?}",
                dialect.name(),
                found.len()
            ));
            continue;
        }
        for (at, _) in text.char_indices() {
            if parse(dialect, how, &[&text[..at], &text[at..]]) != whole {
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
