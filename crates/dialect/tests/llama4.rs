//! Llama 4 with pythonic calls on vLLM's template (corpus `vllm/`): the model writes its
//! list between `<|python_start|>` and `<|python_end|>`, tokens that are the region's
//! markers and never content.

use serde_json::json;
use toolbridge_dialect::{detect, ChatTemplate};

use crate::framed_common::*;

const TEMPLATE: &str = "vllm/tool_chat_template_llama4_pythonic.jinja";

fn llama4() -> ChatTemplate {
    template(TEMPLATE, "<|begin_of_text|>", "<|eot|>")
}

#[test]
fn the_python_tokens_frame_the_calls_and_are_not_content() {
    assert_eq!(
        detect::dialect_name(&corpus_text(TEMPLATE)),
        "llama3_pythonic"
    );
    let registry = registry();
    let dialect = registry.get("llama4_pythonic").expect("registered");
    let both = [
        call("get_weather", json!({"city": "Paris", "days": 2})),
        call("add", json!({"a": 1, "b": 2.5})),
    ];
    let text =
        "<|python_start|>[get_weather(city=\"Paris\", days=2), add(a=1, b=2.5)]<|python_end|>";
    let message = reads(dialect, &llama4(), text, &both);
    assert_eq!(message.content_text(), "");
    // Text before, JSON calls inside, or no closing token (the output ended first).
    for text in [
        "Checking.<|python_start|>[get_weather(city=\"Paris\", days=2), add(a=1, b=2.5)]<|python_end|>",
        "Checking.<|python_start|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 2}}; {\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2.5}}<|python_end|>",
        "Checking. <|python_start|>[get_weather(city=\"Paris\", days=2), add(a=1, b=2.5)]",
    ] {
        let message = reads(dialect, &llama4(), text, &both);
        assert_eq!(message.content_text(), "Checking.", "{text}");
    }
    // Values the template writes as text come back typed from the schemas.
    let request = request(None);
    let message = parsed_however_cut(
        &|| prepare(dialect, &request, &llama4()).parser,
        "<|python_start|>[add(a=\"1\", b=\"2.5\")]<|python_end|>",
    );
    assert_eq!(calls_of(&message), [call("add", json!({"a": 1, "b": 2.5}))]);
}

#[test]
fn a_region_that_is_no_call_stays_content_as_written() {
    let registry = registry();
    let dialect = registry.get("llama4_pythonic").expect("registered");
    for text in [
        "<|python_start|>print(1)<|python_end|>",
        "<|python_start|>[get_weather(city=)]<|python_end|>",
    ] {
        let message = parsed_however_cut(&|| dialect.parser(), text);
        assert!(message.calls().is_empty(), "{text}");
        assert_eq!(message.content_text(), text);
    }
    random_bytes_are_safe(dialect);
}
