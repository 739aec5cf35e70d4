//! Ollama's own goldens, rebuilt from what their names say.
//!
//! `gotmpl/testdata/<name>.gotmpl/<roles>` is what Ollama's `template_test.go` renders
//! for its built-in template `<name>` (here `gotmpl/builtin/<name>.gotmpl`) over the
//! conversation whose roles the file name lists, with that test's fixed texts.
//! `tools-testdata/<name>.out` is `<name>.gotmpl` rendered over `messages.json` with
//! `tools.json`.

use crate::common::{self, goldens::compare};
use toolbridge_template::gotmpl::{GoTemplate, Message, OllamaRequest};

/// The texts of Ollama's `template_test.go` conversation, by role and position.
fn message(role: &str, user_turn: usize) -> Message {
    let content = match (role, user_turn) {
        ("system", _) => "You are a helpful assistant.",
        ("user", 0) => "Hello, how are you?",
        ("assistant", _) => "I'm doing great. How can I help you today?",
        ("user", _) => "I'd like to show off how chat templating works!",
        _ => panic!("unexpected role {role} in a golden's name"),
    };
    Message::new(role, content)
}

/// The conversation a golden's file name spells: `system-user-assistant-user`.
fn conversation(name: &str) -> Vec<Message> {
    let mut users = 0;
    name.split('-')
        .map(|role| {
            let built = message(role, users);
            users += usize::from(role == "user");
            built
        })
        .collect()
}

#[test]
fn ollama_builtin_template_goldens() {
    let testdata = common::corpus_dir().join("gotmpl/testdata");
    let (mut total, mut identical) = (0, 0);
    let mut failures = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&testdata)
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", testdata.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let source = common::read_corpus_file(&format!("gotmpl/builtin/{name}"));
        let template = GoTemplate::new(&source).unwrap_or_else(|err| panic!("{name}: {err}"));
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let case = file.file_name().unwrap().to_str().unwrap().to_owned();
            let expected = std::fs::read_to_string(&file).unwrap();
            let request = OllamaRequest {
                messages: conversation(&case),
                ..OllamaRequest::default()
            };
            total += 1;
            match compare(&expected, template.render(&request)) {
                Ok(()) => identical += 1,
                Err(why) => failures.push(format!("{name}/{case}: {why}")),
            }
        }
    }
    println!("ollama testdata goldens: {identical}/{total} identical");
    assert!(total > 0, "no goldens found in {}", testdata.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ollama_tools_goldens() {
    let request = OllamaRequest::from_json(&serde_json::json!({
        "messages": common::read_corpus_json("gotmpl/tools-testdata/messages.json"),
        "tools": common::read_corpus_json("gotmpl/tools-testdata/tools.json"),
    }))
    .unwrap();
    let dir = common::corpus_dir().join("gotmpl/tools-testdata");
    let mut outs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "out"))
        .collect();
    outs.sort();
    let (mut identical, mut without_template) = (0, Vec::new());
    let mut failures = Vec::new();
    for out in &outs {
        let template_path = out.with_extension("gotmpl");
        let name = out.file_stem().unwrap().to_str().unwrap().to_owned();
        if !template_path.exists() {
            without_template.push(name);
            continue;
        }
        let source = std::fs::read_to_string(&template_path).unwrap();
        let expected = std::fs::read_to_string(out).unwrap();
        match compare(
            &expected,
            GoTemplate::new(&source).and_then(|t| t.render(&request)),
        ) {
            Ok(()) => identical += 1,
            Err(why) => failures.push(format!("{name}: {why}")),
        }
    }
    println!(
        "ollama tools goldens: {identical}/{} identical ({} without their template: {})",
        outs.len() - without_template.len(),
        without_template.len(),
        without_template.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
