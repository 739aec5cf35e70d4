//! A sample of MaskBench (every 10th schema) through the strict converter and llguidance:
//! a schema that compiles must not accept an instance JSON Schema rejects. The full run,
//! with the pass rate, is `toolbridge bench maskbench`; this guards the zero.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use serde_json::value::RawValue;
use serde_json::Value;
use toolbridge_grammar::check::{compact_json, Validator};
use toolbridge_grammar::schema::{compile, Options};

#[derive(serde::Deserialize)]
struct Case {
    file: String,
    schema: Value,
    tests: Vec<Instance>,
}

#[derive(serde::Deserialize)]
struct Instance {
    valid: bool,
    data: Box<RawValue>,
}

fn sample() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/maskbench/maskbench-shared.jsonl.gz");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("MaskBench is missing: looked for {}: {e}", path.display()));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .step_by(10)
        .map(|line| serde_json::from_str(&line.expect("readable")).expect("a MaskBench case"))
        .collect()
}

#[test]
fn strict_grammars_never_accept_an_invalid_instance() {
    let options = Options {
        strict: true,
        extra_properties_by_default: true,
        ..Options::default()
    };
    let cases = sample();
    let (mut compiled, mut passed) = (0, 0);
    let mut wrongly_accepted = Vec::new();
    for case in &cases {
        let Ok(validator) = compile(&case.schema, &options)
            .and_then(|compiled| Validator::from_grammar(&compiled.grammar))
        else {
            continue;
        };
        compiled += 1;
        let mut all_right = true;
        for test in &case.tests {
            let accepted = validator.accepts(&compact_json(test.data.get()));
            all_right &= accepted == test.valid;
            if accepted && !test.valid {
                wrongly_accepted.push(format!("{}: {}", case.file, test.data.get()));
            }
        }
        passed += usize::from(all_right);
    }
    let n = cases.len();
    println!(
        "maskbench sample: compiled {compiled}/{n}, passed {passed}/{n}, wrongly accepted {}",
        wrongly_accepted.len()
    );
    assert!(
        wrongly_accepted.is_empty(),
        "wrongly accepted:\n{}",
        wrongly_accepted.join("\n")
    );
}
