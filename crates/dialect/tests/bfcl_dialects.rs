//! BFCL's ground truth through each dialect's own syntax: every expected call of
//! simple_python, multiple, parallel and parallel_multiple, written as the dialect has the
//! model write it and read back by that dialect's parser (whole, and cut in two at every
//! char), answers its question under BFCL's AST rules whenever the ground truth written
//! out answers it (BFCL's data contradicts its own declarations in a handful of questions,
//! which no dialect can fix). Prints `bfcl through <dialect>: N/N`.

use std::path::PathBuf;

use toolbridge_chat::bfcl::{self, Answer, Question};
use toolbridge_chat::{Message, ToolCall};
use toolbridge_dialect::{Dialect, Registry};

use crate::common::split::message_of;
use crate::common::written::{dialect_of, written, ONE_CALL, SYNTAXES};

const CATEGORIES: [&str; 4] = ["simple_python", "multiple", "parallel", "parallel_multiple"];

fn bfcl_dir() -> PathBuf {
    let path = crate::common::corpus().join("bfcl");
    assert!(
        path.join("BFCL_v4_simple_python.json").is_file(),
        "BFCL not found: looked at {}",
        path.display()
    );
    path
}

fn parse(dialect: &dyn Dialect, pieces: &[&str]) -> Message {
    message_of(dialect.parser().as_mut(), pieces.iter().copied())
}

fn through(
    dialect: &dyn Dialect,
    syntax: &str,
    question: &Question,
    answer: &Answer,
) -> Result<(), String> {
    let expected = answer.expected_calls();
    let calls = if ONE_CALL.contains(&syntax) {
        &expected[..1]
    } else {
        &expected[..]
    };
    let text = written(syntax, calls);
    let whole = parse(dialect, &[&text]);
    for (at, _) in text.char_indices().step_by(7) {
        let cut = parse(dialect, &[&text[..at], &text[at..]]);
        if cut != whole {
            return Err(format!("cut at {at} differs: {text}"));
        }
    }
    if calls.len() < expected.len() {
        let names: Vec<&str> = whole.calls().iter().map(ToolCall::name).collect();
        return match names.as_slice() {
            [name] if *name == calls[0].name() => Ok(()),
            _ => Err(format!("{text} read as {names:?}")),
        };
    }
    bfcl::check(question, answer, whole.calls()).map_err(|error| format!("{error}: {text}"))
}

#[test]
fn bfcl_ground_truth_survives_every_dialect() {
    let dir = bfcl_dir();
    let registry = Registry::default();
    let mut questions = Vec::new();
    for category in CATEGORIES {
        questions.extend(bfcl::load(&dir, category).unwrap_or_else(|error| panic!("{error}")));
    }
    let answerable: Vec<&(Question, Answer)> = questions
        .iter()
        .filter(|(question, answer)| {
            bfcl::check(question, answer, &answer.expected_calls()).is_ok()
        })
        .collect();
    let mut failures = Vec::new();
    for syntax in SYNTAXES {
        let dialect = registry
            .get(dialect_of(syntax))
            .unwrap_or_else(|| panic!("{syntax} is not registered"));
        let mut passed = 0;
        for (question, answer) in &answerable {
            match through(dialect, syntax, question, answer) {
                Ok(()) => passed += 1,
                Err(error) => failures.push(format!("{syntax} {}: {error}", question.id)),
            }
        }
        println!(
            "bfcl through {syntax}: {passed}/{} ({} questions, {} whose ground truth BFCL itself rejects)",
            answerable.len(),
            questions.len(),
            questions.len() - answerable.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
