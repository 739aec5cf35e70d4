//! The JSON-list families on their corpus templates: Granite (`<|tool_call|>[…]`),
//! Phi-4-mini (`functools[…]`), xLAM (a bare list), Nemotron (`<TOOLCALL>[…]</TOOLCALL>`),
//! Apriel (`<tool_calls>[…]</tool_calls>` after its reasoning) and MiniMax M1 (`<tool_calls>`
//! with one object per line).

use serde_json::{json, Value};
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

fn granite_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_granite.jinja",
        "",
        "<|end_of_text|>",
    )
}

fn phi4_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_phi4_mini.jinja",
        "",
        "<|endoftext|>",
    )
}

fn list(text: &str, marker: &str, calls: &[Call]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect();
    format!("{text}{marker}{}", Value::Array(calls))
}

fn granite(text: &str, calls: &[Call]) -> String {
    list(text, "<|tool_call|>", calls)
}

fn phi4(text: &str, calls: &[Call]) -> String {
    list(text, "functools", calls)
}

#[test]
fn templates_render_calls_and_results() {
    let registry = registry();
    renders_history(
        registry.get("granite").expect("registered"),
        &granite_template(),
        &[
            "<|tool_call|>[\n    {\n        \"name\": \"get_weather\"",
            "sunny, 21C",
        ],
    );
    renders_history(
        registry.get("phi4_mini").expect("registered"),
        &phi4_template(),
        &["functools", "\"name\": \"get_weather\"", "sunny, 21C"],
    );
}

#[test]
fn outputs_parse_into_calls() {
    let registry = registry();
    let granite_dialect = registry.get("granite").expect("registered");
    // As Granite's template writes a past call (tojson with indent 4).
    let text = "<|tool_call|>[\n    {\n        \"name\": \"get_weather\",\n        \"arguments\": {\n            \"city\": \"Paris\"\n        }\n    }\n]";
    reads(
        granite_dialect,
        &granite_template(),
        text,
        &[call("get_weather", json!({"city": "Paris"}))],
    );
    let phi4_dialect = registry.get("phi4_mini").expect("registered");
    let text = "functools[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]";
    reads(
        phi4_dialect,
        &phi4_template(),
        text,
        &[
            call("add", json!({"a": 1, "b": 2})),
            call("get_weather", json!({"city": "Rome"})),
        ],
    );
    let prose = "Use functools wisely.";
    let message = reads(phi4_dialect, &phi4_template(), prose, &[]);
    assert_eq!(message.content_text(), prose);
}

#[test]
fn grammars_honour_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("granite").expect("registered"),
        &granite_template(),
        granite,
    );
    honours_tool_choice(
        registry.get("phi4_mini").expect("registered"),
        &phi4_template(),
        phi4,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let granite_dialect = registry.get("granite").expect("registered");
    random_calls_round_trip(granite_dialect, &granite_template(), granite, 16);
    let phi4_dialect = registry.get("phi4_mini").expect("registered");
    random_calls_round_trip(phi4_dialect, &phi4_template(), phi4, 16);
    random_bytes_are_safe(granite_dialect);
    random_bytes_are_safe(phi4_dialect);
}

fn xlam_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_xlam_llama.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
    )
}

fn nemotron_template() -> ChatTemplate {
    template("llama.cpp/NVIDIA-Nemotron-Nano-v2.jinja", "<s>", "</s>")
}

fn apriel_template() -> ChatTemplate {
    template(
        "llama.cpp/Apriel-1.6-15b-Thinker-fixed.jinja",
        "<s>",
        "</s>",
    )
}

fn minimax_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_minimax_m1.jinja",
        "<s>",
        "<end_of_sentence>",
    )
}

fn jamba_template() -> ChatTemplate {
    template(
        "hfjs-e2e/ai21labs_AI21-Jamba-Large-1.6.jinja",
        "<|startoftext|>",
        "<|endoftext|>",
    )
}

fn objects(calls: &[Call]) -> Vec<Value> {
    calls
        .iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect()
}

/// xLAM answers with the list alone, in the layout its grammar fixes.
fn xlam(_text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            format!("{{\"name\": {}, \"arguments\": {arguments}}}", json!(name))
        })
        .collect();
    format!("[{}]", calls.join(", "))
}

fn nemotron(text: &str, calls: &[Call]) -> String {
    format!(
        "{text}</think>\n<TOOLCALL>{}</TOOLCALL>",
        Value::Array(objects(calls))
    )
}

fn apriel(text: &str, calls: &[Call]) -> String {
    format!(
        "{text}\n[BEGIN FINAL RESPONSE]\n<tool_calls>{}</tool_calls>",
        Value::Array(objects(calls))
    )
}

fn jamba(text: &str, calls: &[Call]) -> String {
    format!(
        "{text}<tool_calls>{}</tool_calls>",
        Value::Array(objects(calls))
    )
}

fn minimax(text: &str, calls: &[Call]) -> String {
    let lines: Vec<String> = objects(calls).iter().map(Value::to_string).collect();
    format!("{text}<tool_calls>\n{}\n</tool_calls>", lines.join("\n"))
}

#[test]
fn more_templates_render_calls_and_results() {
    let registry = registry();
    let get = |name: &str| registry.get(name).expect("registered");
    renders_history(
        get("xlam"),
        &xlam_template(),
        &[
            "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
            "sunny, 21C",
        ],
    );
    renders_history(
        get("nemotron"),
        &nemotron_template(),
        &["<TOOLCALL>[{\"name\": \"get_weather\"", "sunny, 21C"],
    );
    renders_history(
        get("apriel"),
        &apriel_template(),
        &["<tool_calls>[{\"name\": \"get_weather\"", "sunny, 21C"],
    );
    renders_history(
        get("minimax_m1"),
        &minimax_template(),
        &["<tool_calls>\n{\"name\": \"get_weather\"", "sunny, 21C"],
    );
}

#[test]
fn phi4_reads_calls_as_its_templates_write_them() {
    let registry = registry();
    let phi4_dialect = registry.get("phi4_mini").expect("registered");
    let expected = [
        call("add", json!({"a": 1, "b": 2.5})),
        call("get_weather", json!({"city": "Rome", "days": 2})),
    ];
    // vLLM's template: bare, comma-separated, arguments printed as Python dicts.
    let bare = "{\"name\": \"add\", \"arguments\": {'a': 1, 'b': 2.5}},{\"name\": \"get_weather\", \"arguments\": {'city': 'Rome', 'days': 2}}";
    reads(phi4_dialect, &phi4_template(), bare, &expected);
    // Ollama's template.
    let ollama = "<|tool_call|>[{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2.5}},{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\",\"days\":2}}]<|/tool_call|>";
    reads(phi4_dialect, &phi4_template(), ollama, &expected);
    for prose in ["{'a': 1} is a dict.", "[1] A note.", "  Hello"] {
        let message = reads(phi4_dialect, &phi4_template(), prose, &[]);
        assert_eq!(message.content_text(), prose);
    }
}

/// Python literals are read with a quote the model left unescaped taken for text where the
/// rest does not read otherwise, so a call read whole may read otherwise than while it was
/// written: with a comma dropped, the key `b` swallows the list sent as its value. So
/// Phi-4-mini's calls go out whole, and read streamed they are the calls read whole.
#[test]
fn phi4_calls_read_whole_are_the_calls_streamed() {
    let registry = registry();
    let phi4_dialect = registry.get("phi4_mini").expect("registered");
    let text = r#"functools[{"name": "f", "arguments": {"a": 1, "b": ["x"]"c": 2}}]"#;
    let message = parsed_however_cut(&|| phi4_dialect.parser(), text);
    assert_eq!(message.calls().len(), 1, "{message:?}");
}

#[test]
fn more_outputs_parse_into_calls() {
    let registry = registry();
    let get = |name: &str| registry.get(name).expect("registered");
    let add = call("add", json!({"a": 1, "b": 2}));
    let weather = call("get_weather", json!({"city": "Rome"}));
    let list = "[{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]";
    let both = [add.clone(), weather.clone()];
    for text in [
        list.to_string(),
        format!("{{\"tool_calls\": {list}}}"),
        format!("```json\n{list}\n```"),
        format!("```\n{list}\n```"),
    ] {
        reads(get("xlam"), &xlam_template(), &text, &both);
    }
    let prose = "[1] is a citation, {x} a set.";
    let message = reads(get("xlam"), &xlam_template(), prose, &[]);
    assert_eq!(message.content_text(), prose);

    let text = format!("<think>Both.</think>\n<TOOLCALL>{list}</TOOLCALL>");
    let message = reads(get("nemotron"), &nemotron_template(), &text, &both);
    assert_eq!(message.reasoning_content.as_deref(), Some("Both."));

    let text =
        format!("Sum first.\n[BEGIN FINAL RESPONSE]\n<tool_calls>{list}</tool_calls>\n<|end|>");
    let message = reads(get("apriel"), &apriel_template(), &text, &both);
    assert_eq!(message.content_text(), "Sum first.");

    let text = format!(
        " <tool_calls>[\n    {}\n]</tool_calls>",
        &list[1..list.len() - 1]
    );
    reads(get("jamba"), &jamba_template(), &text, &both);

    let text = "<tool_calls>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_calls>";
    reads(get("minimax_m1"), &minimax_template(), text, &both);
}

const ADD_LINE: &str = "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}";
const WEATHER_LINE: &str = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}";

/// MiniMax M1 output with lines that are no call: (output, the calls' names, content).
/// Each line is its own call: a bad line is content in its place, and the calls around it
/// stand.
const MINIMAX_BAD_LINES: &[(&str, &[&str], &str)] = &[
    (
        "<tool_calls>\n{ADD}\n{\"name\": \"oops\", \"arguments\": {\"x\": }\n{WEATHER}\n</tool_calls>",
        &["add", "get_weather"],
        "{\"name\": \"oops\", \"arguments\": {\"x\": }",
    ),
    (
        "Sure.\n<tool_calls>\n{not json}\n{WEATHER}\n</tool_calls>",
        &["get_weather"],
        "Sure.\n{not json}",
    ),
    (
        "<tool_calls>\n{\"city\": \"Rome\"}\n[1, 2]\n{ADD}\n</tool_calls>",
        &["add"],
        "{\"city\": \"Rome\"}\n[1, 2]",
    ),
    (
        "<tool_calls>\n{ADD}\n{\"name\": \"get_weather\", \"arg",
        &["add"],
        "{\"name\": \"get_weather\", \"arg",
    ),
    // No call at all: content as written.
    (
        "<tool_calls>\n{bad}\n</tool_calls>",
        &[],
        "<tool_calls>\n{bad}\n</tool_calls>",
    ),
    // Prose after the marker ends the calls.
    (
        "<tool_calls>\n{ADD}\nDone.",
        &["add"],
        "Done.",
    ),
];

#[test]
fn minimax_m1_reads_each_line_alone() {
    let registry = registry();
    let dialect = registry.get("minimax_m1").expect("registered");
    let add = call("add", json!({"a": 1, "b": 2}));
    let weather = call("get_weather", json!({"city": "Rome"}));
    for (text, names, content) in MINIMAX_BAD_LINES {
        let text = text
            .replace("{ADD}", ADD_LINE)
            .replace("{WEATHER}", WEATHER_LINE);
        let expected: Vec<Call> = names
            .iter()
            .map(|name| {
                if *name == "add" {
                    add.clone()
                } else {
                    weather.clone()
                }
            })
            .collect();
        let message = reads(dialect, &minimax_template(), &text, &expected);
        assert_eq!(message.content_text(), *content, "{text}");
    }
}

#[test]
fn more_grammars_honour_tool_choice() {
    let registry = registry();
    let get = |name: &str| registry.get(name).expect("registered");
    honours_tool_choice(get("xlam"), &xlam_template(), xlam);
    honours_tool_choice(get("nemotron"), &nemotron_template(), nemotron);
    honours_tool_choice(get("apriel"), &apriel_template(), apriel);
    honours_tool_choice(get("minimax_m1"), &minimax_template(), minimax);
    honours_tool_choice(get("jamba"), &jamba_template(), jamba);
}

#[test]
fn more_random_calls_come_back_whole() {
    let registry = registry();
    let families: [(&str, ChatTemplate, Writer); 5] = [
        ("jamba", jamba_template(), jamba),
        ("xlam", xlam_template(), xlam),
        ("nemotron", nemotron_template(), nemotron),
        ("apriel", apriel_template(), apriel),
        ("minimax_m1", minimax_template(), minimax),
    ];
    for (name, template, write) in families {
        let dialect = registry.get(name).expect("registered");
        random_calls_round_trip(dialect, &template, write, 16);
        random_bytes_are_safe(dialect);
    }
}

fn apertus_template() -> ChatTemplate {
    template("vllm/tool_chat_template_apertus.jinja", "<s>", "</s>")
}

/// vLLM's Granite 20B FC template loops over every message, the system one too, and raises
/// on it; so the tests that send a system prompt run on a plain template (the tools come in
/// the dialect's own system prompt then), and its own is checked on one without.
fn granite_20b_template() -> ChatTemplate {
    let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
                  {% if add_generation_prompt %}<|assistant|>{% endif %}";
    ChatTemplate::new(source, "", "").expect("compiles")
}

fn internlm2_template() -> ChatTemplate {
    template(
        "vllm/tool_chat_template_internlm2_tool.jinja",
        "<s>",
        "</s>",
    )
}

/// Its template writes no past calls, only their results.
fn nemotron_mini_template() -> ChatTemplate {
    template("ollama-registry-gguf/nemotron-mini_4b.jinja", "", "</s>")
}

fn nemotron_mini(text: &str, calls: &[Call]) -> String {
    let items: Vec<String> = objects(calls)
        .iter()
        .map(|call| format!("<toolcall> {call} </toolcall>"))
        .collect();
    format!("{text}{}", items.join("\n"))
}

/// Apertus keys each call by its tool's name.
fn apertus(text: &str, calls: &[Call]) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| json!({ name: arguments }).to_string())
        .collect();
    format!(
        "{text}<|tools_prefix|>[{}]<|tools_suffix|>",
        items.join(", ")
    )
}

fn granite_20b(text: &str, calls: &[Call]) -> String {
    let items: Vec<String> = objects(calls)
        .iter()
        .map(|call| format!("<function_call> {call}"))
        .collect();
    format!("{text}{}", items.join("\n"))
}

fn internlm2(text: &str, calls: &[Call]) -> String {
    let items: String = objects(calls)
        .iter()
        .map(|call| format!("<|action_start|><|plugin|>\n{call}<|action_end|>"))
        .collect();
    format!("{text}{items}")
}

#[test]
fn marked_and_keyed_calls_render_parse_and_honour_tool_choice() {
    let registry = registry();
    let get = |name: &str| registry.get(name).expect("registered");
    let families: [(&str, ChatTemplate, Writer, &str); 4] = [
        (
            "apertus",
            apertus_template(),
            apertus,
            "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}]<|tools_suffix|>",
        ),
        (
            "granite_20b_fc",
            granite_20b_template(),
            granite_20b,
            "To call tools, write:\n<function_call> {\"name\": \"NAME\"",
        ),
        (
            "internlm2",
            internlm2_template(),
            internlm2,
            "<|action_start|><|plugin|>\n{\"name\": \"get_weather\"",
        ),
        (
            "nemotron_mini",
            nemotron_mini_template(),
            nemotron_mini,
            "<extra_id_1>Tool\nsunny, 21C",
        ),
    ];
    let both = [
        call("add", json!({"a": 1, "b": 2})),
        call("get_weather", json!({"city": "Rome"})),
    ];
    for (name, template, write, past_call) in families {
        let dialect = get(name);
        renders_history(dialect, &template, &[past_call, "sunny, 21C"]);
        let message = reads(dialect, &template, &write("Both. ", &both), &both);
        assert_eq!(message.content_text(), "Both.", "{name}");
        honours_tool_choice(dialect, &template, write);
        random_calls_round_trip(dialect, &template, write, 16);
        random_bytes_are_safe(dialect);
    }
    let thought = "<|inner_prefix|>Both.<|inner_suffix|>";
    let message = reads(
        get("apertus"),
        &apertus_template(),
        &apertus(thought, &both),
        &both,
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Both."));
}

#[test]
fn granite_20b_fc_renders_its_history_without_a_system_prompt() {
    let registry = registry();
    let dialect = registry.get("granite_20b_fc").expect("registered");
    let template = template(
        "vllm/tool_chat_template_granite_20b_fc.jinja",
        "",
        "<|endoftext|>",
    );
    let mut request = conversation();
    request.messages.remove(0);
    let prompt = prepare(dialect, &request, &template).prompt;
    for part in [
        "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
        "<function_response> sunny, 21C",
    ] {
        assert!(prompt.contains(part), "no {part:?} in\n{prompt}");
    }
}
