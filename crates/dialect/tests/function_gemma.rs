//! FunctionGemma: Gemma 4's call notation in its own spelling, `<escape>` for the quote
//! token and `<start_function_call>` … `<end_function_call>` around a call:
//!
//! ```text
//! <start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call><start_function_response>
//! ```
//!
//! No FunctionGemma template is in the corpus, so the prompt of the grammar and round-trip
//! checks is rendered by Gemma 3 270M's (the model FunctionGemma is tuned from), a template
//! without tools; the dialect's grammar and parser are FunctionGemma's either way.

use serde_json::json;
use toolbridge_dialect::{detect, toolkit::gemma_notation::FUNCTION_GEMMA, ChatTemplate};

use crate::framed_common::*;

fn gemma3() -> ChatTemplate {
    template(
        "ollama-registry-gguf/gemma3_270m.jinja",
        "<bos>",
        "<end_of_turn>",
    )
}

fn function_gemma_calls(text: &str, calls: &[Call]) -> String {
    let calls: String = calls
        .iter()
        .map(|(name, arguments)| {
            let arguments = FUNCTION_GEMMA.write_value(arguments);
            format!("<start_function_call>call:{name}{arguments}<end_function_call>")
        })
        .collect();
    format!("{text}{calls}")
}

#[test]
fn function_gemma_reads_its_calls() {
    let registry = registry();
    let dialect = registry.get("functiongemma").expect("registered");
    let text = "Let me check. <start_function_call>call:get_weather{city:<escape>San Francisco, \"CA\"<escape>,days:2}<end_function_call><start_function_call>call:add{a:1,b:2.5}<end_function_call><start_function_response>";
    let message = reads(
        dialect,
        &gemma3(),
        text,
        &[
            call(
                "get_weather",
                json!({"city": "San Francisco, \"CA\"", "days": 2}),
            ),
            call("add", json!({"a": 1, "b": 2.5})),
        ],
    );
    assert_eq!(message.content_text(), "Let me check.");

    let no_commas = "<start_function_call>call:search{query:<escape>python<escape>limit:10,sort:<escape>relevance<escape>}<end_function_call>";
    let message = parsed_however_cut(&|| dialect.parser(), no_commas);
    assert_eq!(
        calls_of(&message),
        [call(
            "search",
            json!({"query": "python", "limit": 10, "sort": "relevance"})
        )]
    );

    let broken = "<start_function_call>call:add{a:1,b:}<end_function_call>";
    let message = parsed_however_cut(&|| dialect.parser(), broken);
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

#[test]
fn a_quoted_value_is_typed_by_its_schema() {
    let registry = registry();
    let dialect = registry.get("functiongemma").expect("registered");
    let text = "<start_function_call>call:get_weather{city:<escape>42<escape>,days:<escape>3<escape>}<end_function_call>";
    let prepared = parsed_however_cut(&|| prepare(dialect, &request(None), &gemma3()).parser, text);
    assert_eq!(
        calls_of(&prepared),
        [call("get_weather", json!({"city": "42", "days": 3}))]
    );
}

#[test]
fn function_gemma_grammar_honours_tool_choice_and_round_trips() {
    let registry = registry();
    let dialect = registry.get("functiongemma").expect("registered");
    honours_tool_choice(dialect, &gemma3(), function_gemma_calls);
    random_calls_round_trip(dialect, &gemma3(), function_gemma_calls, 24);
    random_bytes_are_safe(dialect);
    let prepared = prepare(dialect, &request(None), &gemma3());
    assert!(prepared
        .stop
        .contains(&"<start_function_response>".to_string()));
}

#[test]
fn its_call_marker_names_the_family() {
    let registry = registry();
    let source = "{%- for tool in tools -%}<start_function_declaration>declaration:{{ tool.function.name }}<end_function_declaration>{%- endfor -%}{%- for message in messages -%}{%- for call in message.tool_calls or [] -%}<start_function_call>call:{{ call.function.name }}{}<end_function_call>{%- endfor -%}{%- endfor -%}";
    assert_eq!(detect::resolve(source, &registry).dialect, "functiongemma");
}
