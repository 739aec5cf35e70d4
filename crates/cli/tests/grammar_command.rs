//! `toolbridge grammar` end to end: the binary, real files, the exit status as the verdict.

use std::path::Path;
use std::process::Output;

use crate::common::{stdout_of, toolbridge, write_temp};

fn grammar(args: &[&str]) -> Output {
    toolbridge(&[&["grammar"], args].concat(), "")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

const SCHEMA: &str = r#"{"type": "object", "properties": {"city": {"type": "string"},
  "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"],
  "additionalProperties": false}"#;

#[test]
fn prints_the_schema_as_gbnf_and_as_lark() {
    let schema = write_temp("weather.json", SCHEMA);
    let gbnf = stdout_of(&grammar(&["--schema", arg(&schema)]));
    assert!(gbnf.contains("root ::= \"{\" space city-kv"), "{gbnf}");
    let lark = stdout_of(&grammar(&["--schema", arg(&schema), "--format", "lark"]));
    assert!(lark.contains("start: root"));
}

#[test]
fn the_exit_status_is_the_verdict() {
    let schema = write_temp("weather-v.json", SCHEMA);
    let good = write_temp("good.json", "{\"city\": \"Paris\",\n \"days\": 3}");
    let bad = write_temp("bad.json", r#"{"city": "Paris", "days": 15}"#);
    let extra = write_temp("extra.json", r#"{"city": "Paris", "hours": 1}"#);
    let status = |data: &Path| {
        grammar(&["--schema", arg(&schema), "--validate", arg(data)])
            .status
            .code()
    };
    assert_eq!(status(&good), Some(0));
    assert_eq!(status(&bad), Some(1));
    assert_eq!(status(&extra), Some(1));
}

#[test]
fn a_schema_that_cannot_compile_exits_2_with_a_message() {
    let schema = write_temp("broken.json", r#"{"type": "no-such-type"}"#);
    let data = write_temp("any.json", "1");
    let out = grammar(&["--schema", arg(&schema), "--validate", arg(&data)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not compile"));
}

#[test]
fn strict_mode_refuses_what_it_cannot_enforce() {
    let schema = write_temp("multiple.json", r#"{"type": "integer", "multipleOf": 3}"#);
    let lenient = grammar(&["--schema", arg(&schema)]);
    assert!(lenient.status.success());
    assert!(String::from_utf8_lossy(&lenient.stderr).contains("warning"));
    let strict = grammar(&["--schema", arg(&schema), "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
}

#[test]
fn a_gbnf_grammar_runs_in_process() {
    let gbnf = write_temp("yesno.gbnf", "root ::= (\"yes\" | \"no\") \"!\"?\n");
    let yes = write_temp("yes.txt", "yes!");
    let maybe = write_temp("maybe.txt", "maybe");
    stdout_of(&grammar(&["--gbnf", arg(&gbnf), "--format", "lark"]));
    let status = |data: &Path| {
        grammar(&["--gbnf", arg(&gbnf), "--validate", arg(data)])
            .status
            .code()
    };
    assert_eq!(status(&yes), Some(0));
    assert_eq!(status(&maybe), Some(1));
}
