//! `toolbridge render --request --style` and `toolbridge parse` end to end: the binary on
//! the default model's own template, a request file, model output on stdin.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{
    corpus, default_model, seed_000, stdout_of, toolbridge, workspace, write_temp,
};

const CALL: &str = "I will look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>";

/// The default model's path, as an argument.
fn model() -> String {
    default_model().display().to_string()
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

#[test]
fn the_prompt_describes_the_tools_and_ends_with_the_generation_prompt() {
    let prompt = stdout_of(&render_request(&request_file(), &[]));
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
    let text = stdout_of(&render_request(&request_file(), &["--show", "grammar"]));
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
    let text = stdout_of(&toolbridge(&["parse", "--style", "hermes"], CALL));
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
    let whole = stdout_of(&toolbridge(&["parse", "--style", "hermes"], CALL));
    for split in ["1", "3", "7"] {
        let pieces = stdout_of(&toolbridge(
            &["parse", "--style", "hermes", "--split", split],
            CALL,
        ));
        assert_eq!(pieces, whole, "--split {split}");
    }
}

/// The default model's template writes `<tool_call>` tags: its output is read as Hermes.
#[test]
fn parse_with_the_template_reads_the_detected_dialect() {
    let model = model();
    let detected = stdout_of(&toolbridge(&["parse", "--template", &model], CALL));
    let named = stdout_of(&toolbridge(&["parse", "--style", "hermes"], CALL));
    assert_eq!(detected, named);
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
    let model = model();
    let request = request_file();
    for args in [
        vec!["parse", "--style", "no-such-style"],
        vec![
            "render",
            "--template",
            &model,
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

/// The text of the first fenced block after the first line from `from` on equal to
/// `label` (its lines joined by newlines), and the index of its closing fence.
fn block_after(lines: &[&str], from: usize, label: &str) -> (String, usize) {
    let start = from
        + lines[from..]
            .iter()
            .position(|line| *line == label)
            .unwrap();
    let open = start
        + 1
        + lines[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .unwrap();
    let close = open
        + lines[open..]
            .iter()
            .position(|line| *line == "```")
            .unwrap();
    (lines[open..close].join("\n"), close)
}

/// The index of the line that is exactly `line`.
fn line_index(lines: &[&str], line: &str) -> usize {
    lines
        .iter()
        .position(|l| *l == line)
        .unwrap_or_else(|| panic!("seed 000 has no line {line:?}"))
}

/// One section of seed 000 as `render --request` needs it: template and request files,
/// and the two `Prompt` blocks it expects.
struct SeedSection {
    template: PathBuf,
    request: PathBuf,
    conversation: String,
    system: String,
}

/// The `hermes_2_pro_mistral / TOOLS_SHORT / with tools` section: its template, the
/// seed's messages with the tools of `examples/tools/seed-000.json`, and its blocks.
fn short_section() -> SeedSection {
    let text = seed_000();
    let lines: Vec<&str> = text.lines().collect();
    let messages: serde_json::Value =
        serde_json::from_str(&block_after(&lines, 0, "Messages:").0).unwrap();
    let tools: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("examples/tools/seed-000.json")).unwrap(),
    )
    .unwrap();
    let request = serde_json::json!({"messages": messages, "tools": tools["tools"]});
    let template = block_after(
        &lines,
        line_index(&lines, "# hermes_2_pro_mistral"),
        "Template:",
    );
    let section = line_index(
        &lines,
        "### hermes_2_pro_mistral / TOOLS_SHORT / with tools",
    );
    let (conversation, end) = block_after(&lines, section, "Prompt:");
    SeedSection {
        template: write_temp("hermes_2_pro_mistral.jinja", &template.0),
        request: write_temp("seed_000.json", &request.to_string()),
        conversation,
        system: block_after(&lines, end, "Prompt:").0,
    }
}

fn render_seed(section: &SeedSection, style: &str, show: &str) -> Output {
    toolbridge(
        &[
            "render",
            "--template",
            section.template.to_str().unwrap(),
            "--request",
            section.request.to_str().unwrap(),
            "--style",
            style,
            "--show",
            show,
        ],
        "",
    )
}

#[test]
fn show_conversation_is_the_seeds_first_prompt_block() {
    let section = short_section();
    let conversation = stdout_of(&render_seed(&section, "short", "conversation"));
    assert_eq!(conversation, section.conversation);
}

#[test]
fn show_system_is_the_seeds_second_prompt_block() {
    let section = short_section();
    let system = stdout_of(&render_seed(&section, "short", "system"));
    assert_eq!(system, section.system);
}

#[test]
fn the_full_prompt_holds_both_parts() {
    let section = short_section();
    let prompt = stdout_of(&render_seed(&section, "short", "prompt"));
    assert!(prompt.contains(&section.system), "{prompt}");
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
}

#[test]
fn every_prompt_style_shows_its_system_prompt_and_conversation() {
    let section = short_section();
    for style in [
        "short",
        "long",
        "thoughtful_steps",
        "hermes_2_pro",
        "mixtral",
        "functionary_v2",
    ] {
        let system = stdout_of(&render_seed(&section, style, "system"));
        assert!(system.contains("superSecretTool"), "{style}: {system}");
        let conversation = stdout_of(&render_seed(&section, style, "conversation"));
        assert!(
            !conversation.contains("Adds two numbers"),
            "{style}: {conversation}"
        );
        assert!(
            conversation.ends_with("<|im_start|>assistant\n"),
            "{style}: {conversation}"
        );
    }
}

#[test]
fn a_style_without_a_system_prompt_of_its_own_says_so() {
    let section = short_section();
    for show in ["system", "conversation"] {
        let output = render_seed(&section, "hermes", show);
        assert!(!output.status.success());
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(
                "style hermes renders tools through the template; it has no separate system prompt"
            ),
            "{stderr}"
        );
    }
}

#[test]
fn no_tools_and_no_schema_means_no_system_prompt() {
    let request = write_temp(
        "no_tools_short.json",
        r#"{"messages": [{"role": "user", "content": "Hi"}]}"#,
    );
    let section = SeedSection {
        request,
        ..short_section()
    };
    let output = render_seed(&section, "short", "system");
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no system prompt"), "{stderr}");
}

#[test]
fn now_dates_hermes_2_pro_in_the_prompt_and_the_system_prompt() {
    let section = short_section();
    for show in ["prompt", "system"] {
        let mut args = vec![
            "render",
            "--template",
            section.template.to_str().unwrap(),
            "--request",
            section.request.to_str().unwrap(),
            "--style",
            "hermes_2_pro",
            "--now",
            "2024-03-30T10:30:00",
            "--show",
        ];
        args.push(show);
        let text = stdout_of(&toolbridge(&args, ""));
        assert!(
            text.contains("The current date is: 2024-03-30."),
            "--show {show}: {text}"
        );
    }
}

#[test]
fn now_dates_firefunction_v2s_prompt() {
    let template = corpus("jinja/llama.cpp/fireworks-ai-llama-3-firefunction-v2.jinja");
    let request = request_file();
    let args = [
        "render",
        "--template",
        &template,
        "--request",
        request.to_str().unwrap(),
        "--style",
        "firefunction",
        "--now",
        "2024-07-26T10:30:00",
    ];
    let text = stdout_of(&toolbridge(&args, ""));
    assert!(
        text.contains("Today is Jul 26 2024 10:30:00 GMT."),
        "{text}"
    );
}
