//! Tool calls written in each dialect's own syntax, as the dialect has the model write them:
//! the texts the BFCL round trip reads back and the parser benchmark feeds. One writer, so
//! a dialect added to the round trip is benchmarked too.
#![allow(dead_code)] // each test crate uses part of it

use serde_json::{Map, Value};
use toolbridge_chat::ToolCall;
use toolbridge_dialect::toolkit::gemma_notation::write_value;
use toolbridge_dialect::toolkit::pycall::{write_call, write_list};
use toolbridge_grammar::render::pyliteral::python_repr;

/// Every syntax [`written`] knows, each read by the dialect [`dialect_of`] names.
pub const SYNTAXES: [&str; 55] = [
    "hermes",
    "llama3",
    "llama3 (python tag)",
    "llama3_pythonic",
    "mistral",
    "mistral (v11)",
    "firefunction_v2",
    "seed_oss",
    "minimax_m2",
    "deepseek_v3_2",
    "muse_glimmer",
    "kimi_k3",
    "kimi_k3 (json block)",
    "lfm2",
    "gemma4",
    "gemma3_pythonic",
    "solar_open",
    "gigachat",
    "glm4",
    "granite",
    "phi4_mini",
    "phi4_mini (as its history prints calls)",
    "xlam",
    "xlam (tool_calls object)",
    "nemotron",
    "apriel",
    "minimax_m1",
    "apertus",
    "granite_20b_fc",
    "internlm2",
    "nemotron_mini",
    "xlam (fenced, as Hammer writes it)",
    "minicpm3",
    "jamba",
    "cogito",
    "hunyuan",
    "firefunction_v1",
    "cohere",
    "command_r7b",
    "react",
    "deepseek_r1",
    "deepseek_v3",
    "deepseek_v3_1",
    "kimi_k2",
    "qwen3_coder",
    "glm",
    "gpt_oss",
    "functionary_v3_1",
    "functionary_v3",
    "hermes_2_pro",
    "mixtral",
    "functionary_v2",
    "thoughtful_steps",
    "short",
    "long",
];

/// Syntaxes whose format carries one call per answer: they take the first expected call.
pub const ONE_CALL: [&str; 8] = [
    "llama3 (python tag)",
    "gigachat",
    "glm4",
    "hermes_2_pro",
    "short",
    "long",
    "mixtral",
    "thoughtful_steps",
];

pub fn arguments(call: &ToolCall) -> Map<String, Value> {
    call.function.arguments.to_object().unwrap_or_default()
}

/// How each dialect has the model write `calls`.
pub fn written(syntax: &str, calls: &[ToolCall]) -> String {
    let json = |call: &ToolCall, key: &str| {
        let mut object = Map::new();
        object.insert("name".into(), call.name().into());
        object.insert(key.into(), Value::Object(arguments(call)));
        Value::Object(object).to_string()
    };
    let list = |key: &str| {
        let items: Vec<String> = calls.iter().map(|call| json(call, key)).collect();
        format!("[{}]", items.join(", "))
    };
    match syntax {
        "hermes" => calls
            .iter()
            .map(|call| format!("<tool_call>\n{}\n</tool_call>", json(call, "arguments")))
            .collect::<Vec<_>>()
            .join("\n"),
        "llama3" => calls
            .iter()
            .map(|call| json(call, "parameters"))
            .collect::<Vec<_>>()
            .join("; "),
        "llama3 (python tag)" => format!("<|python_tag|>{}", json(&calls[0], "parameters")),
        "llama3_pythonic" | "gemma3_pythonic" => {
            let arguments: Vec<(String, Map<String, Value>)> = calls
                .iter()
                .map(|call| (call.name().to_string(), arguments(call)))
                .collect();
            write_list(arguments.iter().map(|(name, map)| (name.as_str(), map)))
        }
        "gemma4" => calls
            .iter()
            .map(|call| {
                let arguments = write_value(&Value::Object(arguments(call)));
                format!("<|tool_call>call:{}{arguments}<tool_call|>", call.name())
            })
            .collect::<String>(),
        "solar_open" => {
            let calls: String = calls
                .iter()
                .enumerate()
                .map(|(at, call)| {
                    format!(
                        "<|tool_call:begin|>call_{at}<|tool_call:name|>{}<|tool_call:args|>{}<|tool_call:end|>",
                        call.name(),
                        Value::Object(arguments(call))
                    )
                })
                .collect();
            format!("<|tool_calls|>{calls}<|calls|>")
        }
        "gigachat" => format!(" <|function_call|>{}", json(&calls[0], "arguments")),
        "glm4" => format!(
            "{}\n{}",
            calls[0].name(),
            Value::Object(arguments(&calls[0]))
        ),
        "lfm2" => format!(
            "<|tool_call_start|>{}<|tool_call_end|>",
            written("llama3_pythonic", calls)
        ),
        "mistral" => format!("[TOOL_CALLS]{}", list("arguments")),
        "mistral (v11)" => calls
            .iter()
            .map(|call| {
                format!(
                    "[TOOL_CALLS]{}[ARGS]{}",
                    call.name(),
                    Value::Object(arguments(call))
                )
            })
            .collect(),
        "firefunction_v2" => format!(" functools{}", list("arguments")),
        "seed_oss" => calls
            .iter()
            .map(|call| {
                let parameters: String = arguments(call)
                    .iter()
                    .map(|(key, value)| {
                        format!("<parameter={key}>{}</parameter>\n", text_of(value))
                    })
                    .collect();
                format!(
                    "<seed:tool_call>\n<function={}>\n{parameters}</function>\n</seed:tool_call>",
                    call.name()
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "minimax_m2" => {
            let invokes: String = calls
                .iter()
                .map(|call| {
                    let parameters: String = arguments(call)
                        .iter()
                        .map(|(key, value)| {
                            format!("<parameter name=\"{key}\">{}</parameter>\n", text_of(value))
                        })
                        .collect();
                    format!("<invoke name=\"{}\">\n{parameters}</invoke>\n", call.name())
                })
                .collect();
            format!("<minimax:tool_call>\n{invokes}</minimax:tool_call>")
        }
        "muse_glimmer" => calls
            .iter()
            .map(|call| {
                let parameters: String = arguments(call)
                    .iter()
                    .map(|(key, value)| {
                        format!(
                            "<atem:parameter name=\"{key}\">{}</atem:parameter>\n",
                            text_of(value)
                        )
                    })
                    .collect();
                format!(
                    " to={name}<|message|><atem:function_calls>\n<atem:invoke name=\"{name}\">\n{parameters}</atem:invoke>\n</atem:function_calls>",
                    name = call.name()
                )
            })
            .collect::<Vec<_>>()
            .join("<|eom|><|start|>assistant")
            + "<|eot|>",
        "deepseek_v3_2" => {
            let invokes: String = calls
                .iter()
                .map(|call| {
                    let parameters: String = arguments(call)
                        .iter()
                        .map(|(key, value)| {
                            let text = match value {
                                Value::String(text) => text.clone(),
                                other => other.to_string(),
                            };
                            format!(
                                "<｜DSML｜parameter name=\"{key}\" string=\"{}\">{text}</｜DSML｜parameter>\n",
                                value.is_string()
                            )
                        })
                        .collect();
                    format!("<｜DSML｜invoke name=\"{}\">\n{parameters}</｜DSML｜invoke>\n", call.name())
                })
                .collect();
            format!("<｜DSML｜function_calls>\n{invokes}</｜DSML｜function_calls>")
        }
        "kimi_k3" | "kimi_k3 (json block)" => {
            let json_block = syntax != "kimi_k3";
            let invokes: String = calls
                .iter()
                .enumerate()
                .map(|(at, call)| {
                    let arguments = if json_block {
                        format!(
                            "<|open|>json type=\"object\"<|sep|>{}<|close|>json<|sep|>",
                            Value::Object(arguments(call))
                        )
                    } else {
                        arguments(call).iter().map(kimi_argument).collect()
                    };
                    format!(
                        "<|open|>call tool=\"{}\" index=\"{}\"<|sep|>{arguments}<|close|>call<|sep|>",
                        attribute(call.name()),
                        at + 1
                    )
                })
                .collect();
            format!("<|open|>think<|sep|>Which tools?<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|>{invokes}<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>")
        }
        "granite" => format!("<|tool_call|>{}", list("arguments")),
        "phi4_mini" => format!("functools{}", list("arguments")),
        "phi4_mini (as its history prints calls)" => calls
            .iter()
            .map(|call| {
                let name = Value::from(call.name()).to_string();
                let arguments = python_repr(&Value::Object(arguments(call)));
                format!("{{\"name\": {name}, \"arguments\": {arguments}}}")
            })
            .collect::<Vec<_>>()
            .join(","),
        "xlam" => list("arguments"),
        "xlam (tool_calls object)" => format!("{{\"tool_calls\": {}}}", list("arguments")),
        "nemotron" => format!("<TOOLCALL>{}</TOOLCALL>", list("arguments")),
        "jamba" => format!(" <tool_calls>{}</tool_calls>", list("arguments")),
        "hunyuan" => format!(
            "<think>\nWhich tools?\n</think>\n<tool_calls>{}</tool_calls>",
            list("arguments")
        ),
        "cogito" => {
            let items: Vec<String> = calls
                .iter()
                .enumerate()
                .map(|(at, call)| {
                    let mut object = Map::new();
                    object.insert("name".into(), call.name().into());
                    object.insert("arguments".into(), Value::Object(arguments(call)));
                    object.insert("id".into(), format!("call{at:05}").into());
                    Value::Object(object).to_string()
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
        "firefunction_v1" => calls
            .iter()
            .map(|call| format!("<functioncall>{}", json(call, "arguments")))
            .collect(),
        "apriel" => format!("\n<tool_calls>{}</tool_calls>", list("arguments")),
        "minimax_m1" => format!(
            "<tool_calls>\n{}\n</tool_calls>",
            calls
                .iter()
                .map(|call| json(call, "arguments"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        "apertus" => {
            let items: Vec<String> = calls
                .iter()
                .map(|call| {
                    let mut object = Map::new();
                    object.insert(call.name().into(), Value::Object(arguments(call)));
                    Value::Object(object).to_string()
                })
                .collect();
            format!("<|tools_prefix|>[{}]<|tools_suffix|>", items.join(", "))
        }
        "granite_20b_fc" => calls
            .iter()
            .map(|call| format!("<function_call> {}", json(call, "arguments")))
            .collect::<Vec<_>>()
            .join("\n"),
        "internlm2" => calls
            .iter()
            .map(|call| {
                format!(
                    "<|action_start|><|plugin|>\n{}<|action_end|>",
                    json(call, "arguments")
                )
            })
            .collect(),
        "nemotron_mini" => calls
            .iter()
            .map(|call| format!("<toolcall> {} </toolcall>", json(call, "arguments")))
            .collect::<Vec<_>>()
            .join("\n"),
        "xlam (fenced, as Hammer writes it)" => format!("```\n{}\n```", list("arguments")),
        "minicpm3" => {
            let lines: Vec<String> = calls
                .iter()
                .map(|call| write_call(call.name(), &arguments(call)))
                .collect();
            format!(
                "<|tool_call_start|>\n```python\n{}\n```\n<|tool_call_end|>",
                lines.join("\n")
            )
        }
        "cohere" => {
            let actions: Vec<String> = calls
                .iter()
                .map(|call| {
                    let name = Value::from(call.name());
                    let arguments = Value::Object(arguments(call));
                    format!("    {{\n        \"tool_name\": {name},\n        \"parameters\": {arguments}\n    }}")
                })
                .collect();
            format!("\nAction:\n```json\n[\n{}\n]```", actions.join(",\n"))
        }
        "command_r7b" => {
            let actions: Vec<String> = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let name = Value::from(call.name());
                    let arguments = Value::Object(arguments(call));
                    format!("    {{\"tool_call_id\": \"{index}\", \"tool_name\": {name}, \"parameters\": {arguments}}}")
                })
                .collect();
            format!(
                "<|START_THINKING|><|END_THINKING|><|START_ACTION|>[\n{}\n]<|END_ACTION|>",
                actions.join(",\n")
            )
        }
        "react" => calls
            .iter()
            .map(|call| {
                format!(
                    "Action: {}\nAction Input: {}",
                    call.name(),
                    Value::Object(arguments(call))
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "deepseek_r1" | "deepseek_v3" => {
            let calls: Vec<String> = calls
                .iter()
                .map(|call| {
                    format!(
                        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{}\n```json\n{}\n```<｜tool▁call▁end｜>",
                        call.name(),
                        Value::Object(arguments(call))
                    )
                })
                .collect();
            format!("<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>", calls.join("\n"))
        }
        "deepseek_v3_1" => {
            let calls: String = calls
                .iter()
                .map(|call| {
                    format!(
                        "<｜tool▁call▁begin｜>{}<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
                        call.name(),
                        Value::Object(arguments(call))
                    )
                })
                .collect();
            format!("<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
        }
        "kimi_k2" => {
            let calls: String = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    format!(
                        "<|tool_call_begin|>functions.{}:{index}<|tool_call_argument_begin|>{}<|tool_call_end|>",
                        call.name(),
                        Value::Object(arguments(call))
                    )
                })
                .collect();
            format!("<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>")
        }
        "qwen3_coder" => calls
            .iter()
            .map(|call| {
                let parameters: String = arguments(call)
                    .iter()
                    .map(|(key, value)| {
                        format!("<parameter={key}>\n{}\n</parameter>\n", text_of(value))
                    })
                    .collect();
                format!(
                    "<tool_call>\n<function={}>\n{parameters}</function>\n</tool_call>",
                    call.name()
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "glm" => calls
            .iter()
            .map(|call| {
                let parameters: String = arguments(call)
                    .iter()
                    .map(|(key, value)| {
                        format!(
                            "<arg_key>{key}</arg_key>\n<arg_value>{}</arg_value>\n",
                            text_of(value)
                        )
                    })
                    .collect();
                format!("<tool_call>{}\n{parameters}</tool_call>", call.name())
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "gpt_oss" => calls
            .iter()
            .map(|call| {
                format!(
                    "<|start|>assistant<|channel|>commentary to=functions.{} <|constrain|>json<|message|>{}<|call|>",
                    call.name(),
                    Value::Object(arguments(call))
                )
            })
            .collect(),
        "functionary_v3_1" => calls
            .iter()
            .map(|call| {
                format!(
                    "<function={}>{}</function>",
                    call.name(),
                    Value::Object(arguments(call))
                )
            })
            .collect(),
        "functionary_v3" => {
            let routes: String = calls
                .iter()
                .map(|call| format!(">>>{}\n{}", call.name(), Value::Object(arguments(call))))
                .collect();
            format!("all\n\n{routes}")
        }
        "hermes_2_pro" | "short" | "long" => {
            format!("<tool_call>\n{}\n</tool_call>", json(&calls[0], "arguments"))
        }
        "mixtral" => format!(
            "<tool\\_call>\n{}\n</tool\\_call>",
            json(&calls[0], "arguments")
        ),
        "thoughtful_steps" => {
            let mut call = Map::new();
            call.insert("name".into(), calls[0].name().into());
            call.insert("arguments".into(), Value::Object(arguments(&calls[0])));
            let step = serde_json::json!({
                "thought_about_next_step_only": "",
                "next_step": {"tool_calls": [Value::Object(call)]},
            });
            format!("{step:#}")
        }
        "functionary_v2" => {
            let mut answer = "all\n<|content|>".to_string();
            for call in calls {
                answer.push_str(&format!(
                    "<|from|>assistant\n<|recipient|>{}\n<|content|>\n{}\n",
                    call.name(),
                    Value::Object(arguments(call))
                ));
            }
            answer
        }
        other => panic!("no writer for {other}"),
    }
}

/// A value as XML-style formats write it for a parser that knows no schema: a string as
/// its text, unless that text reads as JSON (then quoted), anything else as JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) if serde_json::from_str::<Value>(text.trim()).is_err() => text.clone(),
        other => other.to_string(),
    }
}

/// An attribute value as Kimi K3's template escapes it.
pub fn attribute(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// One Kimi K3 argument, its JSON type declared: a string as its text, anything else as
/// JSON.
pub fn kimi_argument((key, value): (&String, &Value)) -> String {
    let (kind, text) = match value {
        Value::String(text) => ("string", text.clone()),
        Value::Number(_) => ("number", value.to_string()),
        Value::Bool(_) => ("boolean", value.to_string()),
        Value::Null => ("null", value.to_string()),
        Value::Object(_) => ("object", value.to_string()),
        Value::Array(_) => ("array", value.to_string()),
    };
    format!(
        "<|open|>argument key=\"{}\" type=\"{kind}\"<|sep|>{text}<|close|>argument<|sep|>",
        attribute(key)
    )
}

/// The dialect a syntax is read by.
pub fn dialect_of(syntax: &str) -> &str {
    syntax.split(' ').next().unwrap_or(syntax)
}
