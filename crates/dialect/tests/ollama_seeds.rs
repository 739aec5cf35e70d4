//! Seeds 001 and 003 are Ollama Go templates (FireFunction v2 and Command-R): detection
//! reads them as it reads Jinja, and calls in their syntax parse with the detected dialect.

use serde_json::{json, Value};
use toolbridge_dialect::{assemble, detect::resolve, parse_all, Registry, SequentialIds};

fn seed(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/seeds")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The calls `output` parses to with the dialect detected from `template`.
fn calls(template: &str, expected_dialect: &str, output: &str) -> Vec<(String, Value)> {
    let registry = Registry::default();
    let detected = resolve(template, &registry);
    assert_eq!(detected.dialect, expected_dialect);
    let dialect = registry.get(detected.dialect).expect("registered");
    let events = parse_all(&mut dialect.parser(), output);
    let message = assemble(events, SequentialIds::default()).expect("in order");
    message
        .calls()
        .iter()
        .map(|call| {
            let text = call.function.arguments.as_json_string();
            let arguments = serde_json::from_str(&text).expect("JSON arguments");
            (call.name().to_string(), arguments)
        })
        .collect()
}

#[test]
fn seed_001_is_firefunction_v2_and_its_calls_parse() {
    let output = r#" functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]"#;
    assert_eq!(
        calls(&seed("001_3a57a15fbc8ec78e.txt"), "firefunction_v2", output),
        [("get_weather".to_string(), json!({"city": "Paris"}))]
    );
}

#[test]
fn seed_003_is_command_r_and_its_calls_parse() {
    let output = "Action: ```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\"city\": \"Paris\"}\n    }\n]\n```";
    assert_eq!(
        calls(&seed("003_82a1b8ed65c3816b.txt"), "cohere", output),
        [("get_weather".to_string(), json!({"city": "Paris"}))]
    );
}
