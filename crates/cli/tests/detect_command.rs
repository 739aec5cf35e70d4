//! `toolbridge detect --template T` end to end: the binary on corpus templates, Jinja and
//! Ollama Go alike, prints the dialect (and with `--explain`, the family and whether a
//! prompt style stands in); `parse --template` reads output in the same dialect.

use crate::common::{corpus, stdout_of, toolbridge, workspace, write_temp};

#[test]
fn detect_prints_the_dialect_of_each_family() {
    for (template, dialect) in [
        (
            "jinja/llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja",
            "llama3",
        ),
        (
            "jinja/llama.cpp/mistralai-Mistral-Nemo-Instruct-2407.jinja",
            "mistral",
        ),
        (
            "jinja/llama.cpp/fireworks-ai-llama-3-firefunction-v2.jinja",
            "firefunction_v2",
        ),
        ("jinja/llama.cpp/Qwen-Qwen2.5-7B-Instruct.jinja", "hermes"),
        ("gotmpl/registry/firefunction-v2.gotmpl", "firefunction_v2"),
        ("jinja/hfjs-e2e/llama.jinja", "hermes_2_pro"),
    ] {
        let output = toolbridge(&["detect", "--template", &corpus(template)], "");
        assert_eq!(stdout_of(&output), format!("{dialect}\n"), "{template}");
    }
}

#[test]
fn explain_says_when_a_prompt_style_stands_in() {
    let template = corpus("jinja/llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja");
    let output = toolbridge(&["detect", "--template", &template, "--explain"], "");
    // Llama 3.1's template raises on two calls in a turn: the one call reads back.
    assert_eq!(
        stdout_of(&output),
        "family: llama3\nbecause: the template contains `<|python_tag|>`, \
         `\"parameters\": dictionary of argument name` (the llama3 rule)\ndialect: llama3\n\
         proof: 1/1 renderings read back (by llama3); not written: two calls: the template \
         raised: render with the turn: chat template: invalid operation: TemplateError: This \
         model only supports single tool-calls at once!\n"
    );
    let template = corpus("jinja/hfjs-e2e/llama.jinja");
    let output = toolbridge(&["detect", "--template", &template, "--explain"], "");
    let explained = stdout_of(&output);
    assert!(explained.starts_with("family: none\ndialect: hermes_2_pro (prompt style"));
    assert!(
        explained.ends_with("proof: not provable: the template renders no calls\n"),
        "{explained}"
    );
}

#[test]
fn explain_prints_the_proof_and_the_text_it_failed_on() {
    let template = corpus("jinja/llama.cpp/Qwen-Qwen2.5-7B-Instruct.jinja");
    let output = toolbridge(&["detect", "--template", &template, "--explain"], "");
    assert!(
        stdout_of(&output).ends_with("\nproof: 2/2 renderings read back (by hermes)\n"),
        "{}",
        stdout_of(&output)
    );
    // Ollama's Command R template writes two calls' objects without a comma between them.
    let template = corpus("gotmpl/builtin/command-r.gotmpl");
    let output = toolbridge(&["detect", "--template", &template, "--explain"], "");
    let explained = stdout_of(&output);
    let proof = explained
        .lines()
        .find(|line| line.starts_with("proof: "))
        .unwrap_or_else(|| panic!("no proof line in\n{explained}"));
    assert!(
        proof.starts_with(
            "proof: 1/2 renderings read back (by cohere); two calls: the template wrote \
             \"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>\\nAction: ```json"
        ),
        "{proof}"
    );
    assert!(proof.ends_with(", read 0 calls []"), "{proof}");
}

#[test]
fn parse_reads_output_in_the_detected_dialect() {
    let template = corpus("jinja/llama.cpp/mistralai-Mistral-Nemo-Instruct-2407.jinja");
    let output = toolbridge(
        &["parse", "--template", &template],
        r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]"#,
    );
    let message: serde_json::Value =
        serde_json::from_str(&stdout_of(&output)).expect("a JSON message");
    assert_eq!(message["tool_calls"][0]["id"], "a1B2c3D4e");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
}

#[test]
fn a_missing_template_is_a_readable_error() {
    let output = toolbridge(&["detect", "--template", "/nonexistent.jinja"], "");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("error:"));
}

#[test]
fn explain_prints_what_was_learned_from_a_template_of_no_family() {
    let template = workspace()
        .join("crates/dialect/tests/learned/templates/tool_chat_template_qwen2_5_coder.jinja");
    let template = template.to_string_lossy();
    let output = toolbridge(&["detect", "--template", &template], "");
    assert_eq!(stdout_of(&output), "learned\n");
    let output = toolbridge(&["detect", "--template", &template, "--explain"], "");
    let explained = stdout_of(&output);
    for line in [
        "dialect: learned",
        "opening marker: \"<tools>\\n\"",
        "closing marker: \"\\n</tools>\"",
        "call shape: Json { name: \"name\", arguments: \"arguments\", list: false }",
        "separator: \"\\n\" (each call framed alone)",
    ] {
        assert!(explained.contains(line), "no {line:?} in\n{explained}");
    }
}

/// Qwen 3.5's generation prompt opens `<think>`: read as the server reads an answer to the
/// request, the output starts inside the reasoning; with `enable_thinking: false` the
/// prompt closes it, and the same text is content.
#[test]
fn parse_with_the_request_reads_as_the_server_would() {
    let template = corpus("jinja/llama.cpp/Qwen3.5-4B.jinja");
    let output = "Paris is close.\n</think>\n\nIt is sunny.";
    let request = |kwargs: &str| {
        let body = format!(
            r#"{{"model": "m", "messages": [{{"role": "user", "content": "Weather?"}}]{kwargs}}}"#
        );
        write_temp("request.json", &body)
            .to_string_lossy()
            .into_owned()
    };
    let thinking = request("");
    let read = toolbridge(
        &["parse", "--template", &template, "--request", &thinking],
        output,
    );
    let message: serde_json::Value = serde_json::from_str(&stdout_of(&read)).expect("a message");
    assert_eq!(message["reasoning_content"], "Paris is close.\n");
    assert_eq!(message["content"], "It is sunny.");
    let no_thinking = request(r#", "chat_template_kwargs": {"enable_thinking": false}"#);
    let read = toolbridge(
        &["parse", "--template", &template, "--request", &no_thinking],
        output,
    );
    let message: serde_json::Value = serde_json::from_str(&stdout_of(&read)).expect("a message");
    assert!(message.get("reasoning_content").is_none(), "{message}");
}
