//! `toolbridge grammar` end to end: the binary, real files, the exit status as the verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolbridge-grammar-cmd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("a scratch file");
    path
}

fn grammar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .arg("grammar")
        .args(args)
        .output()
        .expect("the toolbridge binary runs")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

const SCHEMA: &str = r#"{"type": "object", "properties": {"city": {"type": "string"},
  "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"],
  "additionalProperties": false}"#;

#[test]
fn prints_the_schema_as_gbnf_and_as_lark() {
    let schema = scratch("weather.json", SCHEMA);
    let gbnf = grammar(&["--schema", arg(&schema)]);
    assert!(
        gbnf.status.success(),
        "{}",
        String::from_utf8_lossy(&gbnf.stderr)
    );
    let gbnf = String::from_utf8_lossy(&gbnf.stdout);
    assert!(gbnf.contains("root ::= \"{\" space city-kv"), "{gbnf}");
    let lark = grammar(&["--schema", arg(&schema), "--format", "lark"]);
    assert!(
        lark.status.success(),
        "{}",
        String::from_utf8_lossy(&lark.stderr)
    );
    assert!(String::from_utf8_lossy(&lark.stdout).contains("start: root"));
}

#[test]
fn the_exit_status_is_the_verdict() {
    let schema = scratch("weather-v.json", SCHEMA);
    let good = scratch("good.json", "{\"city\": \"Paris\",\n \"days\": 3}");
    let bad = scratch("bad.json", r#"{"city": "Paris", "days": 15}"#);
    let extra = scratch("extra.json", r#"{"city": "Paris", "hours": 1}"#);
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
    let schema = scratch("broken.json", r#"{"type": "no-such-type"}"#);
    let data = scratch("any.json", "1");
    let out = grammar(&["--schema", arg(&schema), "--validate", arg(&data)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not compile"));
}

#[test]
fn strict_mode_refuses_what_it_cannot_enforce() {
    let schema = scratch("multiple.json", r#"{"type": "integer", "multipleOf": 3}"#);
    let lenient = grammar(&["--schema", arg(&schema)]);
    assert!(lenient.status.success());
    assert!(String::from_utf8_lossy(&lenient.stderr).contains("warning"));
    let strict = grammar(&["--schema", arg(&schema), "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
}

#[test]
fn a_gbnf_grammar_runs_in_process() {
    let gbnf = scratch("yesno.gbnf", "root ::= (\"yes\" | \"no\") \"!\"?\n");
    let yes = scratch("yes.txt", "yes!");
    let maybe = scratch("maybe.txt", "maybe");
    let lark = grammar(&["--gbnf", arg(&gbnf), "--format", "lark"]);
    assert!(
        lark.status.success(),
        "{}",
        String::from_utf8_lossy(&lark.stderr)
    );
    let status = |data: &Path| {
        grammar(&["--gbnf", arg(&gbnf), "--validate", arg(data)])
            .status
            .code()
    };
    assert_eq!(status(&yes), Some(0));
    assert_eq!(status(&maybe), Some(1));
}
