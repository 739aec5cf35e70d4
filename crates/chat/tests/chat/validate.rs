//! `ChatRequest::validate` against requests OpenAI refuses and requests it (or we,
//! deliberately) accept: `tests/validate/refused.jsonl` gives each refused request with
//! the `param` and `code` OpenAI answers with, `accepted.jsonl` the ones that must pass.
//! The messages themselves are a reviewed snapshot.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, ErrorType};

/// The cases of one file, as `(kind, line)` pairs.
fn cases(file: &str) -> Vec<(String, Value)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/validate")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).expect("a JSON case");
            (case["kind"].as_str().expect("a kind").to_owned(), case)
        })
        .collect()
}

fn request(kind: &str, case: &Value) -> ChatRequest {
    serde_json::from_value(case["body"].clone())
        .unwrap_or_else(|error| panic!("{kind}: the body does not parse: {error}"))
}

#[test]
fn refused_as_openai_refuses() {
    let cases = cases("refused.jsonl");
    let mut messages = String::new();
    for (kind, case) in &cases {
        let error = request(kind, case)
            .validate()
            .expect_err(&format!("{kind}: refused"));
        assert_eq!(error.kind, ErrorType::InvalidRequest, "{kind}");
        assert_eq!(error.param.as_deref(), case["param"].as_str(), "{kind}");
        assert_eq!(error.code.as_deref(), case["code"].as_str(), "{kind}");
        writeln!(messages, "{kind}: {}", error.message).expect("a string");
    }
    println!("refused as OpenAI refuses: {} kinds", cases.len());
    insta::assert_snapshot!(messages);
}

#[test]
fn accepted_as_documented() {
    for (kind, case) in cases("accepted.jsonl") {
        if let Err(error) = request(&kind, &case).validate() {
            panic!("{kind}: refused with {error:?}");
        }
    }
}
