//! vLLM's and SGLang's own tool-parser tests (vLLM `tests/tool_parsers/`, SGLang
//! `test/registered/unit/function_call/`: model outputs and the calls and content each
//! peer reads from them), run through toolbridge as the server runs a request: the dialect
//! detected from a template of the family the peer's parser serves (or named by `style`
//! where the corpus has none), the request prepared with the case's tools and
//! `tool_choice: auto`, and the output read by the prepared parser, whole and one char at a
//! time.
//!
//! The cases are extracted by `scripts/extract_peer_parser_tests.py` into
//! `tests/peer_parsers/<peer>.jsonl` (see `tests/peer_parsers/README.md`). Compared as the
//! peers compare them: content with surrounding whitespace stripped and a missing content
//! equal to an empty one, only where the peer's test checks content; call names, order and
//! count; arguments as JSON values (only the keys the test checks, where it checks some).
//!
//! A case toolbridge decides otherwise on purpose is listed, with the argument for our
//! decision, in `tests/peer_parsers/decided_differently.jsonl`; a listed case that passes,
//! or that no longer exists, fails this test, so the list stays true. Every other failing
//! case is a misread, printed; each peer's score may rise, never fall below its floor.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Message};
use toolbridge_dialect::{ChatTemplate, Registry};

use crate::common::reading::{corpus_dir, Model};

/// The score each peer's cases reached; it may rise, never fall.
const FLOORS: &[(&str, usize)] = &[("vllm", 278), ("sglang", 226)];

/// The template a case given by `style` alone is rendered with: plain ChatML, so the
/// dialect's own way of describing the tools is what the prompt carries.
const PLAIN_TEMPLATE: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}\
    <|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

#[derive(Deserialize)]
struct Case {
    id: String,
    parser: String,
    template: Option<String>,
    style: Option<String>,
    tools: Option<Vec<Value>>,
    output: String,
    expect: Expect,
}

#[derive(Deserialize)]
struct Expect {
    /// Checked only where the peer's test checks it.
    #[serde(default, deserialize_with = "present")]
    content: Option<Option<String>>,
    /// Checked only where the peer's test checks calls.
    #[serde(default)]
    tool_calls: Option<Vec<ExpectedCall>>,
    /// Set where the test asks for at least this many calls, not an exact count.
    min_tool_calls: Option<usize>,
}

#[derive(Deserialize)]
struct ExpectedCall {
    name: Option<String>,
    arguments: Option<Value>,
    /// Only the keys `arguments` names are checked.
    #[serde(default)]
    arguments_partial: bool,
}

/// A field that is there (even as `null`) is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
struct Decision {
    id: String,
    why: String,
}

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer_parsers")
}

fn lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Vec<T> {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{}: {error}: {line}", path.display()))
        })
        .collect()
}

/// Each peer's cases, by peer name (the file's stem).
fn peers() -> BTreeMap<String, Vec<Case>> {
    let mut peers = BTreeMap::new();
    for entry in fs::read_dir(here()).expect("tests/peer_parsers exists") {
        let path = entry.expect("a directory entry").path();
        let stem = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("");
        if path.extension().is_some_and(|ext| ext == "jsonl") && stem != "decided_differently" {
            peers.insert(stem.to_string(), lines(&path));
        }
    }
    peers
}

/// The tool a case that names none declares.
const PLACEHOLDER: &str = "get_weather";

/// The tools a case's request declares: the case's own, else one per expected call name
/// with the argument types the expected call shows (as a client declaring that tool would),
/// else one placeholder, so that the parser looks for calls at all. An expected call the
/// case does not name declares its arguments on the placeholder.
fn tools(case: &Case) -> Vec<Value> {
    if let Some(tools) = case.tools.as_ref().filter(|tools| !tools.is_empty()) {
        return tools.iter().cloned().map(described).collect();
    }
    let mut by_name: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    for call in case.expect.tool_calls.iter().flatten() {
        let name = call.name.as_deref().unwrap_or(PLACEHOLDER);
        let properties = by_name.entry(name).or_default();
        if let Some(Value::Object(arguments)) = &call.arguments {
            for (key, value) in arguments {
                let kind = match value {
                    Value::String(_) => "string",
                    Value::Bool(_) => "boolean",
                    Value::Number(number) if number.is_f64() => "number",
                    Value::Number(_) => "integer",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                    Value::Null => continue,
                };
                properties.insert(key.clone(), json!({ "type": kind }));
            }
        }
    }
    if by_name.is_empty() {
        by_name.insert(PLACEHOLDER, Map::new());
    }
    by_name
        .into_iter()
        .map(|(name, properties)| {
            described(json!({"type": "function", "function": {
                "name": name,
                "parameters": {"type": "object", "properties": properties},
            }}))
        })
        .collect()
}

/// A tool with a description, as clients send them: some templates (Hermes 2 Pro,
/// Apertus) fail on a tool without one.
fn described(mut tool: Value) -> Value {
    if let Some(function) = tool.get_mut("function").and_then(Value::as_object_mut) {
        let name = function.get("name").cloned().unwrap_or_default();
        function.entry("description").or_insert(name);
    }
    tool
}

fn request(case: &Case) -> ChatRequest {
    let body = json!({
        "model": "m",
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": tools(case),
        "tool_choice": "auto",
        // the peers read answers with the reasoning already taken out: no thinking here
        "chat_template_kwargs": {"enable_thinking": false, "thinking": false},
    });
    serde_json::from_value(body).unwrap_or_else(|error| panic!("{}: {error}", case.id))
}

/// The model a case runs on: its template's (detected), or its style's on plain ChatML.
fn model(case: &Case) -> Result<Model, String> {
    if let Some(name) = &case.template {
        let path = match name.split_once(':') {
            Some(("corpus", relative)) => corpus_dir().join(relative),
            Some(("tests", relative)) => Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(relative),
            _ => return Err(format!("template {name:?} names no place")),
        };
        return Model::from_template_file(&path);
    }
    let style = case.style.as_deref().ok_or("neither template nor style")?;
    let registry = Registry::default();
    let dialect = registry
        .names()
        .iter()
        .copied()
        .find(|name| registry.get(name).is_some() && *name == style)
        .or_else(|| registry.get(style).map(|dialect| dialect.name()))
        .ok_or("no dialect")?;
    Ok(Model {
        template: ChatTemplate::new(PLAIN_TEMPLATE, "", "").map_err(|error| error.to_string())?,
        registry,
        dialect,
    })
}

/// Equal as Python compares decoded JSON: numbers by value (`3 == 3.0`).
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| same(a, b)))
        }
        _ => ours == theirs,
    }
}

/// `theirs` names only some keys: those must be there and equal.
fn contains(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Object(ours), Value::Object(theirs)) => theirs
            .iter()
            .all(|(key, theirs)| ours.get(key).is_some_and(|ours| contains(ours, theirs))),
        _ => same(ours, theirs),
    }
}

/// The difference between what the case expects and `message`, if any.
fn difference(expect: &Expect, message: &Message) -> Option<String> {
    let content = message.content_text().trim().to_string();
    if let Some(expected) = &expect.content {
        let expected = expected.as_deref().unwrap_or("").trim();
        if content != expected {
            return Some(format!("content {content:?}, expected {expected:?}"));
        }
    }
    let Some(expected_calls) = &expect.tool_calls else {
        return None;
    };
    let calls = message.calls();
    let count_ok = match expect.min_tool_calls {
        Some(minimum) => calls.len() >= minimum.max(expected_calls.len()),
        None => calls.len() == expected_calls.len(),
    };
    let shown = || {
        calls
            .iter()
            .map(|call| {
                format!(
                    "{}({})",
                    call.function.name,
                    call.function.arguments.as_json_string()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !count_ok {
        return Some(format!(
            "{} calls [{}], expected {}{} (content {content:?})",
            calls.len(),
            shown(),
            if expect.min_tool_calls.is_some() {
                "at least "
            } else {
                ""
            },
            expected_calls.len().max(expect.min_tool_calls.unwrap_or(0)),
        ));
    }
    for (index, (expected, call)) in expected_calls.iter().zip(calls).enumerate() {
        if let Some(name) = &expected.name {
            if &call.function.name != name {
                return Some(format!(
                    "call {index} is {}, expected {name}: [{}]",
                    call.function.name,
                    shown()
                ));
            }
        }
        if let Some(theirs) = &expected.arguments {
            let text = call.function.arguments.as_json_string();
            let ours: Value = match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(_) if text.trim().is_empty() => json!({}),
                Err(error) => return Some(format!("call {index}'s arguments {text:?}: {error}")),
            };
            let ok = if expected.arguments_partial {
                contains(&ours, theirs)
            } else {
                same(&ours, theirs)
            };
            if !ok {
                return Some(format!(
                    "call {index} {}({ours}), expected arguments {theirs}",
                    call.function.name
                ));
            }
        }
    }
    None
}

fn model_key(case: &Case) -> String {
    format!("{:?}/{:?}", case.template, case.style)
}

fn verdict(case: &Case, models: &mut HashMap<String, Result<Model, String>>) -> Result<(), String> {
    let model = models.entry(model_key(case)).or_insert_with(|| model(case));
    let model = model.as_ref().map_err(Clone::clone)?;
    let message = model.read(&request(case), &case.output)?;
    difference(&case.expect, &message).map_or(Ok(()), Err)
}

#[test]
fn peer_parser_cases_read_the_same() {
    let peers = peers();
    let decisions: Vec<Decision> = lines(&here().join("decided_differently.jsonl"));
    let decided: BTreeMap<&str, &str> = decisions
        .iter()
        .map(|decision| (decision.id.as_str(), decision.why.as_str()))
        .collect();
    assert_eq!(decided.len(), decisions.len(), "an id is listed twice");
    let mut known = BTreeSet::new();
    let mut models = HashMap::new();
    let mut problems = Vec::new();
    let mut scores = Vec::new();
    for (peer, cases) in &peers {
        let mut by_parser: BTreeMap<&str, (usize, usize, String)> = BTreeMap::new();
        let mut misreads = Vec::new();
        let mut passed = 0;
        for case in cases {
            assert!(known.insert(case.id.as_str()), "{} is twice", case.id);
            let result = catch_unwind(AssertUnwindSafe(|| verdict(case, &mut models)))
                .unwrap_or_else(|_| Err("panicked".into()));
            let entry = by_parser.entry(case.parser.as_str()).or_default();
            entry.1 += 1;
            entry.2 = models
                .get(&model_key(case))
                .map_or("?", |model| {
                    model.as_ref().map_or("no dialect", |model| model.dialect)
                })
                .to_string();
            match (result, decided.get(case.id.as_str())) {
                (Ok(()), None) => {
                    passed += 1;
                    entry.0 += 1;
                }
                (Ok(()), Some(_)) => problems.push(format!(
                    "{} passes now: take it off decided_differently.jsonl",
                    case.id
                )),
                (Err(_), Some(_)) => {}
                (Err(why), None) => misreads.push(format!("{}: {why}", case.id)),
            }
        }
        let listed = cases
            .iter()
            .filter(|case| decided.contains_key(case.id.as_str()))
            .count();
        println!("{peer} misreads ({}):", misreads.len());
        for line in &misreads {
            let short: String = line.chars().take(400).collect();
            println!("  {short}");
        }
        for (parser, (pass, total, dialect)) in &by_parser {
            println!("  {peer} {parser} (as {dialect}): {pass}/{total}");
        }
        println!(
            "{peer} tool parser cases: {passed}/{} ({listed} decided differently, {} misread)",
            cases.len(),
            misreads.len()
        );
        scores.push((peer.clone(), passed));
    }
    for id in decided.keys() {
        if !known.contains(id) {
            problems.push(format!(
                "{id} is in decided_differently.jsonl but no case has that id"
            ));
        }
    }
    for (peer, passed) in &scores {
        let floor = FLOORS
            .iter()
            .find(|(name, _)| name == peer)
            .map_or(0, |(_, floor)| *floor);
        if *passed < floor {
            problems.push(format!(
                "{peer} tool parser cases fell to {passed}, below {floor}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
