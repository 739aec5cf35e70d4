//! `toolbridge render` end to end: the binary, real files, exact bytes on stdout.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn render(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .arg("render")
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("the toolbridge binary runs")
}

/// The first prompt of a section of seed 000: the conversation as the template renders it.
fn seed_prompt(section: &str) -> String {
    let path = repo_root().join("../shared/seeds/000_8b0e678405ed2946.txt");
    let seed = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read seed 000 at {}: {err}", path.display()));
    let at = seed
        .find(section)
        .unwrap_or_else(|| panic!("seed 000 has no section {section:?}"));
    let block = &seed[at..];
    let start = block.find("```js\n").expect("the section has a prompt") + "```js\n".len();
    let length = block[start..]
        .find("\n```")
        .expect("the prompt block closes");
    block[start..start + length].to_string()
}

#[test]
fn renders_the_seed_hermes_conversation_byte_for_byte() {
    let output = render(&[
        "--template",
        "examples/seed-hermes/template.jinja",
        "--context",
        "examples/seed-hermes/context.json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = seed_prompt("### hermes_2_pro_mistral / TOOLS_HERMES_2_PRO / with tools");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

#[test]
fn template_errors_go_to_stderr_with_the_line() {
    let dir = std::env::temp_dir().join(format!("toolbridge-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let template = dir.join("broken.jinja");
    std::fs::write(
        &template,
        "line one\n{{ raise_exception('no system role') }}\n",
    )
    .unwrap();
    let context = dir.join("context.json");
    std::fs::write(&context, r#"{"messages": []}"#).unwrap();
    let output = render(&[
        "--template",
        template.to_str().unwrap(),
        "--context",
        context.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no system role"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
}

#[test]
fn a_missing_context_file_is_a_readable_error() {
    let output = render(&[
        "--template",
        "examples/seed-hermes/template.jinja",
        "--context",
        "does/not/exist.json",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("does/not/exist.json"), "{stderr}");
}

#[test]
fn the_context_overrides_what_the_source_defines() {
    let dir = std::env::temp_dir().join(format!("toolbridge-tokcfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tokenizer_config.json");
    std::fs::write(
        &config,
        r#"{"chat_template": "{{ bos_token }}|{{ eos_token }}|{{ strftime_now('%d %b %Y') }}", "bos_token": "<s>", "eos_token": {"content": "</s>"}}"#,
    )
    .unwrap();
    let context = dir.join("context.json");
    std::fs::write(&context, r#"{"messages": [], "eos_token": "<|end|>"}"#).unwrap();
    let output = render(&[
        "--template",
        config.to_str().unwrap(),
        "--context",
        context.to_str().unwrap(),
        "--now",
        "2024-07-26T10:30:00",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "<s>|<|end|>|26 Jul 2024"
    );
}

/// With no `--style`, `render --request` prepares the request as the server does: its
/// prompt is the one the dialect crate's snapshot of the same case holds.
#[test]
fn a_request_renders_as_the_server_prepares_it() {
    let case_path = repo_root().join("crates/dialect/tests/prepared/qwen3_5_thinking_off.json");
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&case_path).expect("the case"))
            .expect("a JSON case");
    let request =
        std::env::temp_dir().join(format!("toolbridge-render-{}.json", std::process::id()));
    std::fs::write(&request, case["request"].to_string()).expect("a request file");
    let template = repo_root().join("../shared/corpus/jinja/llama.cpp/Qwen3.5-4B.jinja");
    let output = render(&[
        "--template",
        &template.to_string_lossy(),
        "--request",
        &request.to_string_lossy(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let snapshot = std::fs::read_to_string(repo_root().join(
        "crates/dialect/tests/snapshots/dialect__prepared__prepared_requests_match_their_snapshots@qwen3_5_thinking_off.json.snap",
    ))
    .expect("the snapshot");
    let prompt = snapshot
        .split_once("--- prompt\n")
        .and_then(|(_, rest)| rest.split_once("\n\n--- grammar"))
        .map(|(prompt, _)| prompt)
        .expect("the snapshot holds a prompt");
    assert_eq!(String::from_utf8_lossy(&output.stdout), prompt);
}
