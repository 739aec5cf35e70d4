//! A tool schema that an engine cannot enforce fails the request when it is prepared,
//! naming the tool, in every kind of dialect: here llguidance (the in-process engine)
//! refuses `uniqueItems` and look-arounds, which our GBNF converter accepts.

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, FunctionDefinition, Tool};
use toolbridge_dialect::{ChatTemplate, DialectErrorKind};

use crate::framed_common::*;

fn with_tool(parameters: Value) -> ChatRequest {
    let mut request = request(None);
    request.tools = Some(vec![Tool::function(FunctionDefinition::new(
        "tag", "", parameters,
    ))]);
    request
}

#[test]
fn schemas_the_engine_refuses_name_their_tool() {
    let registry = registry();
    let templates: [(&str, ChatTemplate); 3] = [
        (
            "qwen3_coder",
            template("llama.cpp/Qwen3-Coder.jinja", "", "<|im_end|>"),
        ),
        (
            "gemma3_pythonic",
            template(
                "vllm/tool_chat_template_gemma3_pythonic.jinja",
                "<bos>",
                "<end_of_turn>",
            ),
        ),
        (
            "hermes_2_pro",
            template("llama.cpp/Qwen3-Coder.jinja", "", "<|im_end|>"),
        ),
    ];
    let refused = [
        json!({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true}}}),
        json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^(?!x)"}}}),
    ];
    for (name, template) in &templates {
        let dialect = registry.get(name).expect("registered");
        for parameters in &refused {
            let error = dialect
                .prepare(&with_tool(parameters.clone()), template)
                .err();
            assert!(
                matches!(&error, Some(e) if e.kind() == &DialectErrorKind::ToolSchema && e.detail().starts_with("tool \"tag\":")),
                "{name}: {parameters}: {error:?}"
            );
        }
        let fine = json!({"type": "object", "properties": {"tags": {"type": "array"}}});
        let prepared = dialect.prepare(&with_tool(fine), template);
        assert!(prepared.is_ok(), "{name}: {:?}", prepared.err());
    }
}
