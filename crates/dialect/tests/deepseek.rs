//! DeepSeek R1 / V3 / V3.1 on their corpus templates.

use serde_json::json;
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::*;

const BOS: &str = "<｜begin▁of▁sentence｜>";
const EOS: &str = "<｜end▁of▁sentence｜>";

fn r1() -> ChatTemplate {
    template(
        "llama.cpp/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        BOS,
        EOS,
    )
}

fn v3() -> ChatTemplate {
    template("vllm/tool_chat_template_deepseekv3.jinja", BOS, EOS)
}

fn v3_1() -> ChatTemplate {
    template("ollama-registry-gguf/deepseek-v3.1_latest.jinja", BOS, EOS)
}

fn v3_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{arguments}\n```<｜tool▁call▁end｜>")
        })
        .collect();
    format!(
        "{text}<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
        calls.join("\n")
    )
}

fn v3_1_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| {
            format!("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>")
        })
        .collect();
    format!("{text}<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}

#[test]
fn templates_render_calls_and_results() {
    let registry = registry();
    let past = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>";
    let r1 = renders_history(
        registry.get("deepseek_r1").expect("registered"),
        &r1(),
        &[
            past,
            "<｜tool▁output▁begin｜>sunny, 21C<｜tool▁output▁end｜>",
        ],
    );
    assert!(r1.ends_with("<｜Assistant｜><think>\n</think>"), "{r1}");
    renders_history(
        registry.get("deepseek_v3").expect("registered"),
        &v3(),
        &[past, "sunny, 21C"],
    );
    renders_history(
        registry.get("deepseek_v3_1").expect("registered"),
        &v3_1(),
        &[
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            "<｜tool▁output▁begin｜>sunny, 21C<｜tool▁output▁end｜>",
        ],
    );
}

#[test]
fn one_parser_reads_both_shapes_and_the_reasoning() {
    let registry = registry();
    let weather = call("get_weather", json!({"city": "Paris"}));
    let add = call("add", json!({"a": 1, "b": 2}));
    for name in ["deepseek_r1", "deepseek_v3", "deepseek_v3_1"] {
        let dialect = registry.get(name).expect("registered");
        let template = v3();
        // As llama.cpp's DeepSeek R1 tests write the output.
        let text = "<think>I need the weather. <｜tool▁calls▁begin｜></think>\n\nChecking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1, \"b\": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let message = reads(dialect, &template, text, &[weather.clone(), add.clone()]);
        assert_eq!(
            message.reasoning_content.as_deref(),
            Some("I need the weather. <｜tool▁calls▁begin｜>")
        );
        assert_eq!(message.content_text(), "Checking.");
        let bare = "<｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1, \"b\": 2}<｜tool▁call▁end｜>";
        reads(dialect, &template, bare, std::slice::from_ref(&add));
        let broken = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 1,<｜tool▁call▁end｜>";
        let message = reads(dialect, &template, broken, &[]);
        assert_eq!(message.content_text(), broken);
    }
}

#[test]
fn r1_prompt_that_opens_think_starts_in_reasoning() {
    let registry = registry();
    let dialect = registry.get("deepseek_r1").expect("registered");
    let source = corpus_text("llama.cpp/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja").replace(
        "{% if not enable_thinking %}{{- '</think>' -}}{% endif %}",
        "",
    );
    let template = ChatTemplate::new(&source, BOS, EOS).expect("compiles");
    let mut prepared = prepare(dialect, &request(None), &template);
    assert!(
        prepared.prompt.ends_with("<think>\n"),
        "{}",
        prepared.prompt
    );
    let events =
        toolbridge_dialect::parse_all(prepared.parser.as_mut(), "Paris.\n</think>\n\nIt is sunny.");
    let message =
        toolbridge_dialect::assemble(events, toolbridge_dialect::SequentialIds::default())
            .expect("assembles");
    assert_eq!(message.reasoning_content.as_deref(), Some("Paris.\n"));
    assert_eq!(message.content_text(), "It is sunny.");
}

#[test]
fn grammars_honour_tool_choice() {
    let registry = registry();
    honours_tool_choice(
        registry.get("deepseek_r1").expect("registered"),
        &r1(),
        v3_calls,
    );
    honours_tool_choice(
        registry.get("deepseek_v3").expect("registered"),
        &v3(),
        v3_calls,
    );
    honours_tool_choice(
        registry.get("deepseek_v3_1").expect("registered"),
        &v3_1(),
        v3_1_calls,
    );
}

#[test]
fn random_calls_come_back_whole() {
    let registry = registry();
    let r1_dialect = registry.get("deepseek_r1").expect("registered");
    random_calls_round_trip(r1_dialect, &r1(), v3_calls, 16);
    random_calls_round_trip(
        registry.get("deepseek_v3").expect("registered"),
        &v3(),
        v3_calls,
        16,
    );
    let v3_1_dialect = registry.get("deepseek_v3_1").expect("registered");
    random_calls_round_trip(v3_1_dialect, &v3_1(), v3_1_calls, 16);
    random_bytes_are_safe(r1_dialect);
}
