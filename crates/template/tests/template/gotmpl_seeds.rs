//! Seeds 001 (FireFunction v2) and 003 (Cohere Command-R) are Ollama templates as
//! ollama.com shows them: the page lost the template's blank lines and indentation, and
//! shows no rendered prompt. Rendered over the seed conversation (seed 000's, in
//! `contexts/ollama/seed.json`), each must give Ollama's golden render of the same
//! template from the registry, line for line once blank lines and indentation are set
//! aside, with the calls and tools written as the seed's template writes them.

use crate::common;

use std::path::PathBuf;
use toolbridge_template::gotmpl::GoTemplate;

/// The template in a seed: everything from its first line that starts with `{{`.
fn seed_template(file: &str) -> String {
    let path: PathBuf = common::corpus_dir().join("../seeds").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("seed not found: looked for {} ({err})", path.display()));
    let start = text
        .lines()
        .position(|line| line.starts_with("{{"))
        .unwrap_or_else(|| panic!("{} holds no Go template", path.display()));
    text.lines().skip(start).collect::<Vec<_>>().join("\n")
}

fn golden(template: &str) -> String {
    common::read_jsonl("goldens/gotmpl.jsonl")
        .into_iter()
        .find(|row| row["template"] == template && row["context"] == "seed")
        .and_then(|row| row["output"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no golden for {template} [seed]"))
}

/// The lines of a prompt without blank lines and leading blanks: what the seed's copy of
/// a template still determines.
fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_start)
        .filter(|line| !line.is_empty())
        .collect()
}

fn render_seed(file: &str) -> String {
    GoTemplate::new(&seed_template(file))
        .and_then(|template| template.render(&common::ollama_request("seed")))
        .unwrap_or_else(|err| panic!("{file}: {err}"))
}

#[test]
fn seed_001_firefunction_renders_the_seed_conversation() {
    let prompt = render_seed("001_3a57a15fbc8ec78e.txt");
    assert_eq!(
        lines(&prompt),
        lines(&golden("gotmpl/registry/firefunction-v2.gotmpl"))
    );
    assert!(prompt.contains(
        "functools[{\"name\": \"superSecretTool\", \"arguments\": {\"a\":2535,\"b\":32222000403}}]<|eot_id|>"
    ));
    assert!(prompt.contains(
        "\n[{\"type\":\"function\",\"function\":{\"name\":\"superSecretTool\",\"description\":\"Adds two numbers\""
    ));
    assert!(prompt.ends_with("Thanks<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"));
    println!("seed 001: renders the seed conversation as Ollama does (line for line)");
}

#[test]
fn seed_003_command_r_renders_the_seed_conversation() {
    let prompt = render_seed("003_82a1b8ed65c3816b.txt");
    assert_eq!(
        lines(&prompt),
        lines(&golden("gotmpl/registry/command-r.gotmpl"))
    );
    assert!(prompt.contains("def superSecretTool(a: integer, b: integer, ) -> List[Dict]:"));
    assert!(prompt.contains(
        "Action: ```json\n[\n{\n\"tool_name\": \"superSecretTool\",\n\"parameters\": {\"a\":2535,\"b\":32222000403}\n}\n]```"
    ));
    assert!(prompt.contains("<results>\nconsole_output: 32222002938\n</results>"));
    println!("seed 003: renders the seed conversation as Ollama does (line for line)");
}
