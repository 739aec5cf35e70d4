//! Qwen3-Coder, Seed-OSS, MiniMax M2 and M3, DeepSeek V3.2 and V4 (DSML), MiniCPM5 and GLM
//! on their templates (the corpus's, or those llama.cpp's tests ship): XML-style calls whose
//! argument types come back from the tools' schemas (or, in DSML, from the call itself).

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, FunctionDefinition, Tool};
use toolbridge_dialect::ChatTemplate;

use crate::framed_common::split::parsed_in_pieces;
use crate::framed_common::*;

/// A family tested here: its dialect; its template (a corpus path, or as `tests/…` one
/// llama.cpp's tests ship) with its tokens; how its models write calls; what its template
/// writes of [`conversation`]'s past call and result; and how many random calls round
/// trip (none where a random value may hold its tags: MiniMax M3's `]<`).
struct Family {
    name: &'static str,
    template: (&'static str, &'static str, &'static str),
    write: Writer,
    history: &'static [&'static str],
    random_calls: u32,
}

const DEEPSEEK_TOKENS: (&str, &str) = ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>");

const FAMILIES: [Family; 8] = [
    Family {
        name: "qwen3_coder",
        template: ("llama.cpp/Qwen3-Coder.jinja", "", "<|im_end|>"),
        write: qwen3_calls,
        history: &[
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
            "sunny, 21C",
        ],
        random_calls: 24,
    },
    Family {
        name: "glm",
        template: ("llama.cpp/GLM-4.6.jinja", "[gMASK]<sop>", "<|endoftext|>"),
        write: glm_calls,
        history: &[
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
            "sunny, 21C",
        ],
        random_calls: 24,
    },
    Family {
        name: "seed_oss",
        template: ("llama.cpp/ByteDance-Seed-OSS.jinja", "<seed:bos>", "<seed:eos>"),
        write: seed_calls,
        history: &[
            "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
            "sunny, 21C",
        ],
        random_calls: 16,
    },
    Family {
        name: "minimax_m2",
        template: ("llama.cpp/MiniMax-M2.jinja", "", "[e~["),
        write: minimax_calls,
        history: &[
            "<minimax:tool_call>\n<invoke name=\"get_weather\">",
            "<parameter name=\"city\">Paris</parameter>",
            "<response>sunny, 21C</response>",
        ],
        random_calls: 16,
    },
    Family {
        name: "deepseek_v3_2",
        template: ("llama.cpp/DeepSeek-V3.2.jinja", DEEPSEEK_TOKENS.0, DEEPSEEK_TOKENS.1),
        write: dsml_calls,
        history: &[
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>",
            "<result>sunny, 21C</result>",
        ],
        random_calls: 16,
    },
    Family {
        name: "deepseek_v4",
        template: (
            "tests/llama_cpp/templates/deepseek-ai-DeepSeek-V4.jinja",
            DEEPSEEK_TOKENS.0,
            DEEPSEEK_TOKENS.1,
        ),
        write: dsml_v4_calls,
        history: &[
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>",
            "sunny, 21C",
        ],
        random_calls: 16,
    },
    Family {
        name: "minimax_m3",
        template: ("tests/llama_cpp/templates/MiniMax-M3.jinja", "]~!b[", "[e~["),
        write: minimax_m3_calls,
        history: &[
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            "sunny, 21C",
        ],
        random_calls: 0,
    },
    Family {
        name: "minicpm5",
        template: ("tests/llama_cpp/templates/openbmb-MiniCPM5-1B.jinja", "<s>", "<|im_end|>"),
        write: minicpm5_calls,
        history: &[
            "<function name=\"get_weather\"><param name=\"city\">Paris</param></function>",
            "sunny, 21C",
        ],
        random_calls: 16,
    },
];

/// The template of the family `name`.
fn template_of(name: &str) -> ChatTemplate {
    let family = FAMILIES.iter().find(|family| family.name == name);
    let (path, bos, eos) = family.expect("a family of this file").template;
    template(path, bos, eos)
}

/// Calls as tags: each in its own block (`open` … `close`) or, with `many`, all in one;
/// `parameter` writes one argument's tag and value.
fn tagged_calls(
    text: &str,
    calls: &[Call],
    (open, close, many): (&str, &str, bool),
    invoke: (&str, &str, &str),
    parameter: fn(&str, &Value) -> String,
) -> String {
    let invokes: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| parameter(key, value))
                .collect();
            format!("{}{name}{}\n{parameters}{}", invoke.0, invoke.1, invoke.2)
        })
        .collect();
    let blocks = if many {
        format!("{open}\n{}\n{close}", invokes.join("\n"))
    } else {
        invokes
            .iter()
            .map(|invoke| format!("{open}\n{invoke}\n{close}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!("{text}{blocks}")
}

fn seed_calls(text: &str, calls: &[Call]) -> String {
    tagged_calls(
        text,
        calls,
        ("<seed:tool_call>", "</seed:tool_call>", false),
        ("<function=", ">", "</function>"),
        |key, value| format!("<parameter={key}>{}</parameter>\n", value_text(value)),
    )
}

/// MiniMax M2's and DeepSeek V3.2's prompts open `<think>`: the model closes it first.
fn minimax_calls(text: &str, calls: &[Call]) -> String {
    tagged_calls(
        &format!("{text}</think>\n\n"),
        calls,
        ("<minimax:tool_call>", "</minimax:tool_call>", true),
        ("<invoke name=\"", "\">", "</invoke>"),
        |key, value| {
            format!(
                "<parameter name=\"{key}\">{}</parameter>\n",
                value_text(value)
            )
        },
    )
}

fn dsml_calls(text: &str, calls: &[Call]) -> String {
    tagged_calls(
        &format!("{text}</think>\n\n"),
        calls,
        (
            "<｜DSML｜function_calls>",
            "</｜DSML｜function_calls>",
            true,
        ),
        ("<｜DSML｜invoke name=\"", "\">", "</｜DSML｜invoke>"),
        |key, value| {
            format!(
                "<｜DSML｜parameter name=\"{key}\" string=\"{}\">{}</｜DSML｜parameter>\n",
                value.is_string(),
                value_text(value)
            )
        },
    )
}

fn dsml_v4_calls(text: &str, calls: &[Call]) -> String {
    tagged_calls(
        text,
        calls,
        ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", true),
        ("<｜DSML｜invoke name=\"", "\">", "</｜DSML｜invoke>"),
        |key, value| {
            format!(
                "<｜DSML｜parameter name=\"{key}\" string=\"{}\">{}</｜DSML｜parameter>\n",
                value.is_string(),
                value_text(value)
            )
        },
    )
}

/// MiniCPM5: each call alone, no block and no layout inside.
fn minicpm5_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| format!("<param name=\"{key}\">{}</param>", value_text(value)))
                .collect();
            format!("<function name=\"{name}\">{parameters}</function>")
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

/// MiniMax M3's token before every tag.
const NS: &str = "]<]minimax[>[";

/// MiniMax M3: arguments as elements, as the template's `to_xml` writes them.
fn minimax_m3_calls(text: &str, calls: &[Call]) -> String {
    fn xml(value: &Value) -> String {
        match value {
            Value::Object(members) => members
                .iter()
                .map(|(key, value)| format!("{NS}<{key}>{}{NS}</{key}>", xml(value)))
                .collect(),
            Value::Array(items) => items
                .iter()
                .map(|item| format!("{NS}<item>{}{NS}</item>", xml(item)))
                .collect(),
            other => value_text(other),
        }
    }
    let invokes: String = calls
        .iter()
        .map(|(name, arguments)| {
            format!(
                "{NS}<invoke name=\"{name}\">{}{NS}</invoke>\n",
                xml(arguments)
            )
        })
        .collect();
    format!("{text}{NS}<tool_call>\n{invokes}{NS}</tool_call>")
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn qwen3_calls(text: &str, calls: &[Call]) -> String {
    tagged_calls(
        text,
        calls,
        ("<tool_call>", "</tool_call>", false),
        ("<function=", ">", "</function>"),
        |key, value| format!("<parameter={key}>\n{}\n</parameter>\n", value_text(value)),
    )
}

fn glm_calls(text: &str, calls: &[Call]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| {
                    format!(
                        "<arg_key>{key}</arg_key>\n<arg_value>{}</arg_value>\n",
                        value_text(value)
                    )
                })
                .collect();
            format!("<tool_call>{name}\n{parameters}</tool_call>")
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

#[test]
fn templates_render_calls_and_results() {
    let registry = registry();
    for family in &FAMILIES {
        let dialect = registry.get(family.name).expect("registered");
        renders_history(dialect, &template_of(family.name), family.history);
    }
}

#[test]
fn families_honour_tool_choice_and_round_trip() {
    let registry = registry();
    for family in &FAMILIES {
        let dialect = registry.get(family.name).expect("registered");
        let template = template_of(family.name);
        honours_tool_choice(dialect, &template, family.write);
        if family.random_calls > 0 {
            random_calls_round_trip_typed(dialect, &template, family.write, family.random_calls);
        }
        random_bytes_are_safe(dialect);
    }
}

#[test]
fn argument_types_come_back_from_the_schema() {
    let registry = registry();
    let dialect = registry.get("qwen3_coder").expect("registered");
    // As Qwen3-Coder's template writes a past call, and as vLLM's parser tests write output.
    let text = "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\n12\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=add>\n<parameter=a>\n1.5\n</parameter>\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>";
    let request = request(None);
    let message = parsed_however_cut(
        &|| prepare(dialect, &request, &template_of("qwen3_coder")).parser,
        text,
    );
    assert_eq!(
        calls_of(&message),
        [
            call("get_weather", json!({"city": "12", "days": 3})),
            call("add", json!({"a": 1.5, "b": 2}))
        ]
    );
    assert_eq!(message.content_text(), "Let me check.");
    let glm_dialect = registry.get("glm").expect("registered");
    let text = "<think>Rome.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rome</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";
    let message = parsed_however_cut(
        &|| prepare(glm_dialect, &request, &template_of("glm")).parser,
        text,
    );
    assert_eq!(
        calls_of(&message),
        [call("get_weather", json!({"city": "Rome", "days": 2}))]
    );
    assert_eq!(message.reasoning_content.as_deref(), Some("Rome."));
    let broken = "<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter";
    let message = parsed_however_cut(
        &|| prepare(dialect, &request, &template_of("qwen3_coder")).parser,
        broken,
    );
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

/// (family, output, calls as (name, arguments JSON), content).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// A value whose closing tag the model left out ends at the next argument's tag, or at the
/// call's closing tag on a line of its own; the argument after it is not swallowed into it.
/// (family, output, calls, content); the first cases as SGLang's and the AI SDK tool-call
/// middleware's tests write them.
const LEFT_OUT_CLOSE: &[Case] = &[
    (
        "qwen3_coder",
        "<tool_call><function=add><parameter=a>1<parameter=b>2</parameter></function></tool_call>",
        &[("add", r#"{"a": 1, "b": 2}"#)],
        "",
    ),
    (
        "qwen3_coder",
        "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis, France\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", r#"{"city": "Paris, France", "days": 3}"#)],
        "Sure.",
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\n2\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>",
        &[("add", r#"{"a": 1, "b": 2}"#), ("get_weather", r#"{"city": "Rome"}"#)],
        "",
    ),
    // The call's end with no `</tool_call>` after it (read as content before).
    (
        "qwen3_coder",
        "<tool_call>\n<function=add>\n<parameter=a>\n1\n</function>",
        &[("add", r#"{"a": 1}"#)],
        "",
    ),
    // A closing tag misspelled on a line of its own, then the next argument's tag: that
    // line is the closing tag, read whole and streamed (the streamed reading holds the
    // line until the next one shows what it is).
    (
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter_city>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", r#"{"city": "Paris", "days": 3}"#)],
        "",
    ),
    // A line that only begins like the closing tag, with more of the value after it.
    (
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter_city>\nFrance\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", r#"{"city": "Paris\n</parameter_city>\nFrance", "days": 3}"#)],
        "",
    ),
    // `</function>` inside a line is the value's text.
    (
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nx </function> y\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", r#"{"city": "x </function> y"}"#)],
        "",
    ),
    (
        "seed_oss",
        "<seed:tool_call>\n<function=add>\n<parameter=a>1\n<parameter=b>2</parameter>\n</function>\n</seed:tool_call>",
        &[("add", r#"{"a": 1, "b": 2}"#)],
        "",
    ),
    // MiniMax M2's prompt leaves the output inside `<think>`.
    (
        "minimax_m2",
        "Hm.</think>\n<minimax:tool_call>\n<invoke name=\"add\">\n<parameter name=\"a\">1\n<parameter name=\"b\">2</parameter>\n</invoke>\n</minimax:tool_call>",
        &[("add", r#"{"a": 1, "b": 2}"#)],
        "",
    ),
    // Still no call: the value never ends.
    (
        "qwen3_coder",
        "<tool_call>\n<function=add>\n<parameter=a>\n1",
        &[],
        "<tool_call>\n<function=add>\n<parameter=a>\n1",
    ),
];

#[test]
fn a_value_whose_closing_tag_is_left_out_ends_at_the_next_tag() {
    let registry = registry();
    let request = request(None);
    for (name, text, calls, content) in LEFT_OUT_CLOSE {
        let dialect = registry.get(name).expect("registered");
        let message = parsed_however_cut(
            &|| prepare(dialect, &request, &template_of(name)).parser,
            text,
        );
        let expected: Vec<Call> = calls
            .iter()
            .map(|(tool, arguments)| call(tool, serde_json::from_str(arguments).unwrap()))
            .collect();
        assert_eq!(calls_of(&message), expected, "{name}: {text:?}");
        assert_eq!(message.content_text(), *content, "{name}: {text:?}");
    }
}

/// A string value that held the next argument's tag would be read as two arguments, so the
/// grammar keeps that tag out of it, as it does the value's closing tag: what it lets a
/// model write is read as written, whole or streamed. Text that only looks like a tag stays.
#[test]
fn the_grammar_keeps_the_next_arguments_tag_out_of_a_string_value() {
    let registry = registry();
    let dialect = registry.get("qwen3_coder").expect("registered");
    let prepared = prepare(dialect, &request(None), &template_of("qwen3_coder"));
    let validator = validator(prepared.constraint.as_ref().expect("a grammar"));
    let call = |city: &str| {
        format!("<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n</function>\n</tool_call>")
    };
    for city in [
        "Paris",
        "Paris\n</parameter_city>\nFrance",
        "a <param b",
        "x <parameter y",
    ] {
        assert!(validator.accepts(&call(city)), "{city:?}");
    }
    for city in ["Paris\n<parameter=unit>\ncelsius", "a </parameter> b"] {
        assert!(!validator.accepts(&call(city)), "{city:?}");
    }
}

/// A parameter's value is as long as the file an agent writes: 300 KB of it (far past the
/// 64 KB a region was once bounded by) is one call, whole and streamed byte by byte.
#[test]
fn a_300_kb_parameter_is_one_call() {
    let registry = registry();
    let dialect = registry.get("qwen3_coder").expect("registered");
    let request = request(None);
    let city = "Paris </function> <tool_call> ".repeat(300 * 1024 / 30);
    let text = format!(
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n</function>\n</tool_call>"
    );
    let message = parsed_in_pieces(
        &|| prepare(dialect, &request, &template_of("qwen3_coder")).parser,
        &text,
        &[1, 16],
    );
    assert!(message.content_text().is_empty());
    let calls = calls_of(&message);
    assert!(calls == [call("get_weather", json!({ "city": city }))]);
}

#[test]
fn enums_and_unions_are_read_as_json_schema_reads_them() {
    let registry = registry();
    let dialect = registry.get("qwen3_coder").expect("registered");
    let request = union_request();
    let parameter = |key: &str, value: &str| format!("<parameter={key}>\n{value}\n</parameter>\n");
    let text = format!(
        "<tool_call>\n<function=pick>\n{}{}{}{}</function>\n</tool_call>",
        parameter("level", "1"),
        parameter("rank", "2"),
        parameter("note", "null"),
        parameter("count", "4"),
    );
    let message = parsed_however_cut(
        &|| prepare(dialect, &request, &template_of("qwen3_coder")).parser,
        &text,
    );
    assert_eq!(
        calls_of(&message),
        [call(
            "pick",
            json!({"level": "1", "rank": 2, "note": null, "count": 4})
        )]
    );
}

#[test]
fn families_that_differ_only_in_tags_read_their_own() {
    let registry = registry();
    let expected = [
        call("get_weather", json!({"city": "12", "days": 3})),
        call("add", json!({"a": 1.5, "b": 2})),
    ];
    let minimax = registry.get("minimax_m2").expect("registered");
    let text = "Paris?\n</think>\n\nLet me check.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">12</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n<invoke name=\"add\">\n<parameter name=\"a\">1.5</parameter>\n<parameter name=\"b\">2</parameter>\n</invoke>\n</minimax:tool_call>";
    let request = request(None);
    let message = parsed_however_cut(
        &|| prepare(minimax, &request, &template_of("minimax_m2")).parser,
        text,
    );
    assert_eq!(calls_of(&message), expected);
    assert_eq!(message.content_text(), "Let me check.");
    assert_eq!(message.reasoning_content.as_deref(), Some("Paris?\n"));

    // DeepSeek V3.2 says which values are strings; the prompt leaves it inside `<think>`.
    let dsml = registry.get("deepseek_v3_2").expect("registered");
    let text = "Rome?</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">12</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
    let message = parsed_however_cut(
        &|| prepare(dsml, &request, &template_of("deepseek_v3_2")).parser,
        text,
    );
    assert_eq!(calls_of(&message), [expected[0].clone()]);
    assert_eq!(message.reasoning_content.as_deref(), Some("Rome?"));
    assert_eq!(
        calls_of(&parsed_however_cut(&|| dsml.parser(), text)),
        [expected[0].clone()]
    );

    let seed = registry.get("seed_oss").expect("registered");
    let text = "<seed:think>Rome.</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>12</parameter>\n<parameter=days>3</parameter>\n</function>\n</seed:tool_call>";
    let message = parsed_however_cut(
        &|| prepare(seed, &request, &template_of("seed_oss")).parser,
        text,
    );
    assert_eq!(calls_of(&message), [expected[0].clone()]);
    assert_eq!(message.reasoning_content.as_deref(), Some("Rome."));

    let broken = "<minimax:tool_call>\n<invoke name=\"add\">\n<parameter name=\"a\">1</invoke>";
    let message = parsed_however_cut(&|| minimax.parser(), broken);
    assert!(message.calls().is_empty());
    assert_eq!(message.content_text(), broken);
}

/// MiniMax M3 nests objects and arrays as elements; a union that allows a string keeps its
/// text.
#[test]
fn minimax_m3_reads_nested_arguments() {
    let registry = registry();
    let dialect = registry.get("minimax_m3").expect("registered");
    let route = Tool::function(FunctionDefinition::new(
        "route",
        "A route through points.",
        json!({
            "type": "object",
            "properties": {
                "points": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "tag": {"type": "string"}}
                }},
                "label": {"anyOf": [{"type": "string"}, {"type": "object"}]},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"max": {"type": "integer"}}}]}
            },
            "required": ["points"]
        }),
    ));
    let routes = ChatRequest {
        tools: Some(vec![route]),
        ..request(None)
    };
    let prepared = prepare(dialect, &routes, &template_of("minimax_m3"));
    let grammar = validator(prepared.constraint.as_ref().expect("constraint"));
    let expected = [call(
        "route",
        json!({"points": [{"x": -1.5, "tag": "12"}, {"x": 2}], "limit": {"max": 3}}),
    )];
    let text = minimax_m3_calls("<mm:think>Paris?</mm:think>Let me check.", &expected);
    let message = parsed_however_cut(
        &|| prepare(dialect, &routes, &template_of("minimax_m3")).parser,
        &text,
    );
    assert_eq!(calls_of(&message), expected);
    assert!(grammar.accepts(&minimax_m3_calls("", &expected)));
    let label = format!("{NS}<tool_call>\n{NS}<invoke name=\"route\">{NS}<points>{NS}</points>{NS}<label>{NS}<b>hi{NS}</b>{NS}</label>{NS}</invoke>\n{NS}</tool_call>");
    let message = parsed_however_cut(
        &|| prepare(dialect, &routes, &template_of("minimax_m3")).parser,
        &label,
    );
    assert_eq!(
        calls_of(&message),
        [call(
            "route",
            json!({"points": [], "label": format!("{NS}<b>hi{NS}</b>")})
        )]
    );
    let text = minimax_m3_calls(
        "<mm:think>Paris?</mm:think>Let me check.",
        &[call("get_weather", json!({"city": "Rome"}))],
    );
    let message = parsed_however_cut(
        &|| prepare(dialect, &request(None), &template_of("minimax_m3")).parser,
        &text,
    );
    assert_eq!(message.content_text(), "Let me check.");
    assert_eq!(message.reasoning_content.as_deref(), Some("Paris?"));

    let broken = format!("{NS}<tool_call>\n{NS}<invoke name=\"add\">{NS}<a>1{NS}</invoke>");
    let message = parsed_however_cut(&|| dialect.parser(), &broken);
    assert!(message.calls().is_empty(), "{broken}");
}

/// MiniCPM5 writes a value holding its closing tag in CDATA.
#[test]
fn minicpm5_reads_cdata_values() {
    let registry = registry();
    let dialect = registry.get("minicpm5").expect("registered");
    let text = "<function name=\"get_weather\"><param name=\"city\"><![CDATA[a</param>b]]></param><param name=\"days\">3</param></function>";
    let message = parsed_however_cut(
        &|| prepare(dialect, &request(None), &template_of("minicpm5")).parser,
        text,
    );
    assert_eq!(
        calls_of(&message),
        [call(
            "get_weather",
            json!({"city": "a</param>b", "days": 3})
        )]
    );
}

/// K2 Horizon's three call formats (`xml`, `xml_typed`, `json`) as vLLM's k2_horizon tests
/// write them, read with its tools: values typed by the schema, the text around kept.
#[test]
fn k2_horizon_reads_each_of_its_formats() {
    let registry = registry();
    let dialect = registry.get("k2_horizon").expect("registered");
    let tools = vec![
        Tool::function(FunctionDefinition::new(
            "lookup",
            "Looks a query up.",
            json!({"type": "object", "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "enabled": {"type": "boolean"},
                "big": {"type": "number"}
            }}),
        )),
        Tool::function(FunctionDefinition::new(
            "ping",
            "Pings.",
            json!({"type": "object", "properties": {}}),
        )),
    ];
    let request = ChatRequest {
        tools: Some(tools),
        ..request(None)
    };
    let plain = "{% for m in messages %}{{ m.content }}{% endfor %}";
    let template = ChatTemplate::new(plain, "", "").expect("template");
    let cases = [
        (
            "Before <ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>123</ifm|arg_value><ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>\n<ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls> after.",
            vec![
                call("lookup", json!({"query": "123", "limit": 3})),
                call("ping", json!({})),
            ],
            "Before after.",
        ),
        (
            "<ifm|tool_calls><ifm|tool_call>lookup\n<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>\"x y\"</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
            vec![call("lookup", json!({"query": "x y"}))],
            "",
        ),
        (
            "<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>weather</ifm|arg_value><ifm|arg_key>limit</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>2</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
            vec![call("lookup", json!({"query": "weather", "limit": 2}))],
            "",
        ),
        (
            "<ifm|tool_calls><ifm|tool_call>{\"name\": \"lookup\", \"arguments\": {\"limit\": \"2\", \"enabled\": \"true\"}}</ifm|tool_call></ifm|tool_calls>",
            vec![call("lookup", json!({"limit": 2, "enabled": true}))],
            "",
        ),
        (
            "<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>big</ifm|arg_key><ifm|arg_value>9223372036854775807</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
            vec![call("lookup", json!({"big": 9223372036854775807_i64}))],
            "",
        ),
    ];
    for (text, expected, content) in cases {
        let message = parsed_however_cut(&|| prepare(dialect, &request, &template).parser, text);
        assert_eq!(calls_of(&message), expected, "{text}");
        assert_eq!(message.content_text(), content, "{text}");
    }
}
