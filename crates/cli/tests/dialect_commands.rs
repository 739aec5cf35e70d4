//! `toolbridge render --request --style` and `toolbridge parse` end to end: the binary on
//! the default model's own template, a request file, model output on stdin.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const MODEL: &str = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

const CALL: &str = "I will look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model() -> String {
    let path = repo_root().join(MODEL);
    assert!(
        path.is_file(),
        "default model not found: looked at {} (scripts/fetch-model.sh fetches it)",
        path.display()
    );
    MODEL.to_string()
}

/// A file named `name` holding `text`, in a directory of this test process.
fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolbridge-dialect-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn request_file() -> PathBuf {
    write_temp(
        "request.json",
        r#"{
  "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
  "tools": [{"type": "function", "function": {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                   "required": ["city"]}}}]
}"#,
    )
}

fn toolbridge(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolbridge binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn render_request(request: &Path, extra: &[&str]) -> Output {
    let model = model();
    let mut args = vec![
        "render",
        "--template",
        &model,
        "--request",
        request.to_str().unwrap(),
        "--style",
        "hermes",
    ];
    args.extend_from_slice(extra);
    toolbridge(&args, "")
}

fn stdout_of(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_prompt_describes_the_tools_and_ends_with_the_generation_prompt() {
    let prompt = stdout_of(render_request(&request_file(), &[]));
    assert!(
        prompt
            .contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""),
        "{prompt}"
    );
    assert!(prompt.contains("What is the weather in Paris?"), "{prompt}");
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
}

#[test]
fn the_grammar_is_gbnf_that_parses_back() {
    let text = stdout_of(render_request(&request_file(), &["--show", "grammar"]));
    assert!(text.contains("\"\\\"get_weather\\\"\""), "{text}");
    toolbridge_grammar::gbnf::parse(&text).unwrap_or_else(|error| panic!("{error}\n{text}"));
}

#[test]
fn no_tools_means_no_grammar() {
    let request = write_temp(
        "no_tools.json",
        r#"{"messages": [{"role": "user", "content": "Hi"}]}"#,
    );
    let output = render_request(&request, &["--show", "grammar"]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no constraint"));
}

#[test]
fn parse_reads_the_call() {
    let text = stdout_of(toolbridge(&["parse", "--style", "hermes"], CALL));
    let message: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], "I will look.");
    let call = &message["tool_calls"][0];
    assert_eq!(call["id"], "call_000000000000000000000000");
    assert_eq!(call["function"]["name"], "get_weather");
    let arguments: serde_json::Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, serde_json::json!({"city": "Paris", "days": 2}));
}

#[test]
fn parse_prints_the_same_bytes_however_the_output_is_split() {
    let whole = stdout_of(toolbridge(&["parse", "--style", "hermes"], CALL));
    for split in ["1", "3", "7"] {
        let pieces = stdout_of(toolbridge(
            &["parse", "--style", "hermes", "--split", split],
            CALL,
        ));
        assert_eq!(pieces, whole, "--split {split}");
    }
}

#[test]
fn a_bad_request_is_a_readable_error() {
    let request = write_temp("bad.json", r#"{"messages": "#);
    let output = render_request(&request, &[]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not an OpenAI chat request"), "{stderr}");
}

#[test]
fn an_unknown_style_lists_the_known_ones() {
    let request = request_file();
    for args in [
        vec!["parse", "--style", "no-such-style"],
        vec![
            "render",
            "--template",
            MODEL,
            "--request",
            request.to_str().unwrap(),
            "--style",
            "no-such-style",
        ],
    ] {
        let output = toolbridge(&args, CALL);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("unknown style \"no-such-style\""),
            "{stderr}"
        );
        assert!(stderr.contains("hermes"), "{stderr}");
    }
}
