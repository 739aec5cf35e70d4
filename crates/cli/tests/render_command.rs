//! `toolbridge render` end to end: the binary, real files, exact bytes on stdout.

use std::process::Output;

use crate::common::{corpus, seed_000, stdout_of, toolbridge, workspace, write_temp};

fn render(args: &[&str]) -> Output {
    toolbridge(&[&["render"], args].concat(), "")
}

/// The first prompt of a section of seed 000: the conversation as the template renders it.
fn seed_prompt(section: &str) -> String {
    let seed = seed_000();
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
    let expected = seed_prompt("### hermes_2_pro_mistral / TOOLS_HERMES_2_PRO / with tools");
    assert_eq!(stdout_of(&output), expected);
}

#[test]
fn template_errors_go_to_stderr_with_the_line() {
    let template = write_temp(
        "broken.jinja",
        "line one\n{{ raise_exception('no system role') }}\n",
    );
    let context = write_temp("context.json", r#"{"messages": []}"#);
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
    let config = write_temp(
        "tokenizer_config.json",
        r#"{"chat_template": "{{ bos_token }}|{{ eos_token }}|{{ strftime_now('%d %b %Y') }}", "bos_token": "<s>", "eos_token": {"content": "</s>"}}"#,
    );
    let context = write_temp(
        "context.json",
        r#"{"messages": [], "eos_token": "<|end|>"}"#,
    );
    let output = render(&[
        "--template",
        config.to_str().unwrap(),
        "--context",
        context.to_str().unwrap(),
        "--now",
        "2024-07-26T10:30:00",
    ]);
    assert_eq!(stdout_of(&output), "<s>|<|end|>|26 Jul 2024");
}

/// With no `--style`, `render --request` prepares the request as the server does: its
/// prompt is the one the dialect crate's snapshot of the same case holds.
#[test]
fn a_request_renders_as_the_server_prepares_it() {
    let case_path = workspace().join("crates/dialect/tests/prepared/qwen3_5_thinking_off.json");
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&case_path).expect("the case"))
            .expect("a JSON case");
    let request = write_temp("request.json", &case["request"].to_string());
    let template = corpus("jinja/llama.cpp/Qwen3.5-4B.jinja");
    let output = render(&[
        "--template",
        &template,
        "--request",
        &request.to_string_lossy(),
    ]);
    let rendered = stdout_of(&output);
    let snapshot = std::fs::read_to_string(workspace().join(
        "crates/dialect/tests/snapshots/dialect__prepared__prepared_requests_match_their_snapshots@qwen3_5_thinking_off.json.snap",
    ))
    .expect("the snapshot");
    let prompt = snapshot
        .split_once("--- prompt\n")
        .and_then(|(_, rest)| rest.split_once("\n\n--- grammar"))
        .map(|(prompt, _)| prompt)
        .expect("the snapshot holds a prompt");
    assert_eq!(rendered, prompt);
}
