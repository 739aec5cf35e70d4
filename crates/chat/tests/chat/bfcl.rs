//! BFCL's own ground truth, written out as calls, passes BFCL's AST rules as `bfcl::check`
//! applies them; and a call that changes one value, drops one or calls another function
//! does not. This is the yardstick the benchmarks and the dialect round trips rely on.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolbridge_chat::bfcl::{self, Answer, Question};
use toolbridge_chat::{Arguments, ToolCall};

const CATEGORIES: [&str; 4] = ["simple_python", "multiple", "parallel", "parallel_multiple"];

fn bfcl_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/bfcl");
    assert!(
        dir.is_dir(),
        "BFCL corpus not found: looked in {}",
        dir.display()
    );
    dir
}

fn questions(category: &str) -> Vec<(Question, Answer)> {
    bfcl::load(&bfcl_dir(), category).unwrap_or_else(|error| panic!("{category}: {error}"))
}

/// The ground truth written out passes, except where BFCL's own data contradicts its
/// declarations (listed, with the reason, in `bfcl_known_inconsistent.txt`).
#[test]
fn the_ground_truth_passes_and_every_question_is_a_request() {
    let known = include_str!("bfcl_known_inconsistent.txt");
    let known: Vec<&str> = known
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    let mut total = 0;
    for category in CATEGORIES {
        let questions = questions(category);
        let mut passed = 0;
        for (question, answer) in &questions {
            question
                .tools()
                .unwrap_or_else(|error| panic!("{}: {error}", question.id));
            match bfcl::check(question, answer, &answer.expected_calls()) {
                Ok(()) => passed += 1,
                Err(_) if known.contains(&question.id.as_str()) => {}
                Err(error) => panic!("{}: {error}", question.id),
            }
        }
        println!(
            "bfcl ground truth {category}: {passed}/{} pass",
            questions.len()
        );
        total += questions.len();
    }
    assert!(total >= 1000, "only {total} questions");
}

#[test]
fn wrong_calls_fail() {
    for (question, answer) in questions("simple_python").iter().take(50) {
        let calls = answer.expected_calls();
        let renamed = vec![ToolCall::new(
            "c",
            "not_a_function",
            calls[0].function.arguments.clone(),
        )];
        assert!(
            bfcl::check(question, answer, &renamed).is_err(),
            "{}",
            question.id
        );
        let Arguments::Object(arguments) = &calls[0].function.arguments else {
            panic!("objects")
        };
        if let Some((key, _)) = arguments.iter().next() {
            let mut changed = arguments.clone();
            changed.insert(key.clone(), Value::from("a value no answer has 7"));
            let changed = vec![ToolCall::new(
                "c",
                calls[0].name(),
                Arguments::Object(changed),
            )];
            assert!(
                bfcl::check(question, answer, &changed).is_err(),
                "{}",
                question.id
            );
        }
        assert!(bfcl::check(question, answer, &[]).is_err());
    }
}
