//! Hostile chat templates: a GGUF or Modelfile from a stranger carries its template, so
//! any text must compile or fail, and render a chat or fail, within the production bounds
//! (`jinja::Limits`, `GoRenderOptions`' defaults). Errors are fine; a panic is not, even
//! one the renderer catches and reports as an internal error.

use std::sync::OnceLock;

use serde_json::{json, Value};
use toolbridge_template::{GoTemplate, JinjaTemplate, OllamaRequest, TemplateError};

pub fn jinja(data: &[u8]) {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let rendered = JinjaTemplate::new(source).and_then(|template| template.render(chat()));
    not_a_caught_panic(rendered, source);
}

pub fn go_template(data: &[u8]) {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let request = OllamaRequest::from_json(chat()).expect("the fixed chat reads");
    let rendered = GoTemplate::new(source).and_then(|template| template.render(&request));
    not_a_caught_panic(rendered, source);
}

/// Fails when the renderer caught a panic of its engine.
fn not_a_caught_panic(rendered: Result<String, TemplateError>, source: &str) {
    if let Err(error) = rendered {
        assert!(
            !error.detail().starts_with("internal error"),
            "{}: {source:?}",
            error.detail()
        );
    }
}

/// One chat with every kind of turn: a system prompt, tools, a call, its result, and the
/// variables templates read (`bos_token`, `add_generation_prompt`, …).
fn chat() -> &'static Value {
    static CHAT: OnceLock<Value> = OnceLock::new();
    CHAT.get_or_init(|| {
        json!({
            "messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}
                }]},
                {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temp\": 21}"},
                {"role": "assistant", "content": "21 degrees."},
                {"role": "user", "content": [{"type": "text", "text": "Thanks"}]}
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "description": "Current weather",
                "parameters": {"type": "object", "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "enum": [1, 2, 3]}
                }, "required": ["city"]}
            }}],
            "add_generation_prompt": true,
            "bos_token": "<s>",
            "eos_token": "</s>",
            "think": true
        })
    })
}
