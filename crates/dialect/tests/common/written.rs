//! Tool calls written in each dialect's own syntax, as the dialect's grammar has the model
//! write them: the one writer of the style round trip (which checks each grammar admits
//! what it writes), the BFCL round trip and the parser benchmark, so a dialect added to one
//! is tested and benchmarked by all. [`Syntax`] writes a dialect's answer after some text;
//! [`written`] writes the syntaxes the BFCL round trip reads, a few of them variants a
//! dialect reads besides what its grammar writes (Llama 3's `<|python_tag|>`, Mistral v11's
//! `[ARGS]`, …).

use serde_json::{json, Value};
use toolbridge_chat::{Arguments, ToolCall};
use toolbridge_dialect::toolkit::gemma_notation::{Notation, FUNCTION_GEMMA, GEMMA4};
use toolbridge_pyrepr::python_repr;

/// Every syntax [`written`] knows, each read by the dialect [`dialect_of`] names.
pub const SYNTAXES: [&str; 62] = [
    "hermes",
    "longcat",
    "llama3",
    "llama3 (python tag)",
    "llama3_pythonic",
    "mistral",
    "mistral (v11)",
    "firefunction_v2",
    "seed_oss",
    "minimax_m2",
    "dots",
    "step3",
    "k2_horizon",
    "olmo3",
    "deepseek_v3_2",
    "muse_glimmer",
    "kimi_k3",
    "kimi_k3 (json block)",
    "lfm2",
    "gemma4",
    "functiongemma",
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
    "hy3",
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

/// How the model writes `calls` in `syntax`, one of [`SYNTAXES`]: a dialect's own syntax
/// after the text its models write before calls, or one of its variants.
pub fn written(syntax: &str, calls: &[ToolCall]) -> String {
    let list = || Syntax::BareList.write("", calls);
    match syntax {
        "llama3 (python tag)" => {
            format!("<|python_tag|>{}", Syntax::LlamaJson.write("", &calls[..1]))
        }
        "mistral (v11)" => calls_json(calls)
            .iter()
            .map(|(name, arguments)| format!("[TOOL_CALLS]{name}[ARGS]{arguments}"))
            .collect(),
        "kimi_k3 (json block)" => kimi_frames(before_calls("kimi_k3"), calls, |arguments| {
            format!("<|open|>json type=\"object\"<|sep|>{arguments}<|close|>json<|sep|>")
        }),
        "phi4_mini (as its history prints calls)" => calls_json(calls)
            .iter()
            .map(|(name, arguments)| {
                let name = Value::from(name.as_str());
                format!(
                    "{{\"name\": {name}, \"arguments\": {}}}",
                    python_repr(arguments)
                )
            })
            .collect::<Vec<_>>()
            .join(","),
        "xlam (tool_calls object)" => format!("{{\"tool_calls\": {}}}", list()),
        "xlam (fenced, as Hammer writes it)" => format!("```\n{}\n```", list()),
        "cogito" => {
            let items: Vec<Value> = calls_json(calls)
                .into_iter()
                .enumerate()
                .map(|(at, (name, arguments))| {
                    json!({"name": name, "arguments": arguments, "id": format!("call{at:05}")})
                })
                .collect();
            Value::Array(items).to_string()
        }
        other => Syntax::of(dialect_of(other)).write(before_calls(other), calls),
    }
}

/// The text a syntax's models write before calls, where BFCL's answers hold some: the
/// layout some formats open with, or reasoning.
fn before_calls(syntax: &str) -> &str {
    match syntax {
        "firefunction_v2" | "gigachat" | "jamba" => " ",
        "apriel" => "\n",
        "hunyuan" => "<think>\nWhich tools?\n</think>\n",
        "kimi_k3" => "Which tools?",
        _ => "",
    }
}

/// How a dialect's answer carries calls, as its grammar admits them.
#[derive(Clone, Copy, Debug)]
pub enum Syntax {
    /// Free text, then one `<tool_call>{"name", "arguments"}</tool_call>`.
    Tagged,
    LongCatTagged,
    /// The same, with markdown's `\_` in the tags.
    Escaped,
    /// A `thoughtful_steps` object; the text is its thought.
    Steps,
    /// `functionary_v2`: text to `all`, then each call routed to its tool.
    Routed,
    /// Llama 3.x: text, then `{"name", "parameters"}` calls separated by `; `.
    LlamaJson,
    /// Llama 3.x zero-shot: text, then a pythonic list `[f(a=1), g(b="x")]`.
    Pythonic,
    /// Mistral v3: text, then `[TOOL_CALLS][{"name", "arguments"}, …]`.
    MistralList,
    /// FireFunction v2: text, then `functools[{"name", "arguments"}, …]`.
    Functools,
    /// Command-R: text, then ``Action: ```json [{"tool_name", "parameters"}, …]``` ``.
    CohereAction,
    /// Command R7B: thinking, then `<|START_ACTION|>[…]<|END_ACTION|>`.
    R7bAction,
    /// ReAct: text, then `Action: name` / `Action Input: {…}` per call.
    ReAct,
    /// DeepSeek V3 / R1: `<｜tool▁calls▁begin｜>` and per call `function<｜tool▁sep｜>name` with fenced JSON.
    DeepSeekV3,
    /// DeepSeek V3.1: per call `name<｜tool▁sep｜>{…}`.
    DeepSeekV31,
    /// Granite: text, then `<|tool_call|>[{"name", "arguments"}, …]`.
    GraniteList,
    /// Kimi K2: a section of `<|tool_call_begin|>functions.name:n<|tool_call_argument_begin|>{…}<|tool_call_end|>`.
    KimiSection,
    /// Qwen3-Coder: `<tool_call><function=name><parameter=k>v</parameter>…`.
    Qwen3Xml,
    /// LFM2: text, then `<|tool_call_start|>[f(a=1), g(b="x")]<|tool_call_end|>`.
    Lfm2List,
    /// Gemma 4: text, then `<|tool_call>call:f{a:1,b:<|"|>x<|"|>}<tool_call|>` per call.
    Gemma4Calls,
    FunctionGemmaCalls,
    /// Solar Open: text, then `<|tool_calls|>` and per call
    /// `<|tool_call:begin|>id<|tool_call:name|>f<|tool_call:args|>{…}<|tool_call:end|>`.
    SolarCalls,
    /// GigaChat 3.1: text, then one `<|function_call|>{"name", "arguments"}`.
    GigaChatCall,
    /// GLM-4 9B: one call and no text, the name as the answer's metadata line, then the
    /// JSON arguments.
    Glm4Call,
    /// GLM 4.5+: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>…`.
    GlmXml,
    /// Tencent Hy3: text, then `<tool_calls>` holding per call `<tool_call>name<tool_sep>`
    /// and GLM's key and value pairs.
    Hy3Xml,
    /// Seed-OSS: `<seed:tool_call><function=name><parameter=k>v</parameter>…`.
    SeedXml,
    /// MiniMax M2: `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter>…`.
    MiniMaxXml,
    DotsXml,
    /// Step 3: `<｜tool_calls_begin｜>` and per call
    /// `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">…<｜tool_call_end｜>`.
    StepXml,
    /// K2 Horizon: `<ifm|tool_calls>` and per call `<ifm|tool_call>name\n` with `ifm|`
    /// key and value pairs.
    IfmXml,
    PythonLines,
    /// DeepSeek V3.2: `<｜DSML｜function_calls><｜DSML｜invoke name="f">` with
    /// `<｜DSML｜parameter name="k" string="true|false">v</｜DSML｜parameter>`.
    Dsml,
    /// DeepSeek V4: V3.2's DSML in a `tool_calls` block.
    Dsml4,
    /// MiniCPM5: `<function name=…><param name=…>` tags, no block.
    Cpm5,
    /// Kimi K3: the text as reasoning, then `<|open|>tools<|sep|>` and per call
    /// `<|open|>call tool="f" index="n"<|sep|>` with `<|open|>argument key="k"
    /// type="string|number|…"<|sep|>v<|close|>argument<|sep|>`.
    KimiFrames,
    /// GPT-OSS harmony: the text as analysis, then `<|channel|>commentary to=functions.name …<|call|>` per call.
    Harmony,
    /// LLM-jp 4.1: harmony with a space after every special token, parallel calls each
    /// closed by `<|end|>`, the last by `<|call|>`.
    SpacedHarmony,
    /// MuSE Glimmer: the text as a message to `self`, then one ATEM message per call.
    Atem,
    /// Functionary v3.1: text, then `<function=name>{…}</function>` per call.
    FunctionTags,
    /// Functionary v3.2: `all\n` and text, then `>>>name\n{…}` per call.
    Routes,
    /// xLAM: the list `[{"name", "arguments"}, …]` alone, no text.
    BareList,
    /// Nemotron: text, then `<TOOLCALL>[…]</TOOLCALL>`.
    ToolcallList,
    /// Apriel: text, then `<tool_calls>[…]</tool_calls>`.
    ToolCallsList,
    /// MiniMax M1: text, then `<tool_calls>` with one call object per line.
    ToolCallsLines,
    /// Apertus: text, then `<|tools_prefix|>[{"<name>": {…}}, …]<|tools_suffix|>`.
    KeyedList,
    /// Granite 20B FC: text, then `<function_call> {…}` per call.
    FunctionCallEach,
    /// FireFunction v1: text, then `<functioncall>{…}` per call.
    FunctioncallEach,
    /// InternLM2: text, then `<|action_start|><|plugin|>\n{…}<|action_end|>` per call.
    ActionEach,
    /// Nemotron Mini: text, then `<toolcall> {…} </toolcall>` per call.
    ToolcallEach,
    /// MiniCPM3: text, then a fenced block of Python calls, one per line.
    PythonBlock,
}

impl Syntax {
    /// The syntax of the registered dialect `name`.
    pub fn of(name: &str) -> Syntax {
        match name {
            "hermes" | "short" | "long" | "hermes_2_pro" => Syntax::Tagged,
            "longcat" => Syntax::LongCatTagged,
            "mixtral" => Syntax::Escaped,
            "thoughtful_steps" => Syntax::Steps,
            "functionary_v2" => Syntax::Routed,
            "llama3" => Syntax::LlamaJson,
            "llama3_pythonic" | "gemma3_pythonic" => Syntax::Pythonic,
            "mistral" => Syntax::MistralList,
            "firefunction_v2" | "phi4_mini" => Syntax::Functools,
            "xlam" | "cogito" => Syntax::BareList,
            "nemotron" => Syntax::ToolcallList,
            "apriel" | "jamba" | "hunyuan" => Syntax::ToolCallsList,
            "minimax_m1" => Syntax::ToolCallsLines,
            "apertus" => Syntax::KeyedList,
            "granite_20b_fc" => Syntax::FunctionCallEach,
            "firefunction_v1" => Syntax::FunctioncallEach,
            "internlm2" => Syntax::ActionEach,
            "nemotron_mini" => Syntax::ToolcallEach,
            "minicpm3" => Syntax::PythonBlock,
            "cohere" => Syntax::CohereAction,
            "command_r7b" => Syntax::R7bAction,
            "react" => Syntax::ReAct,
            "deepseek_r1" | "deepseek_v3" => Syntax::DeepSeekV3,
            "deepseek_v3_1" => Syntax::DeepSeekV31,
            "granite" => Syntax::GraniteList,
            "kimi_k2" => Syntax::KimiSection,
            "qwen3_coder" => Syntax::Qwen3Xml,
            "glm" => Syntax::GlmXml,
            "ling" => Syntax::GlmXml,
            "hy3" => Syntax::Hy3Xml,
            "lfm2" => Syntax::Lfm2List,
            "gemma4" => Syntax::Gemma4Calls,
            "functiongemma" => Syntax::FunctionGemmaCalls,
            "solar_open" => Syntax::SolarCalls,
            "gigachat" => Syntax::GigaChatCall,
            "glm4" => Syntax::Glm4Call,
            "seed_oss" => Syntax::SeedXml,
            "minimax_m2" => Syntax::MiniMaxXml,
            "dots" => Syntax::DotsXml,
            "step3" => Syntax::StepXml,
            "k2_horizon" => Syntax::IfmXml,
            "olmo3" => Syntax::PythonLines,
            "deepseek_v3_2" => Syntax::Dsml,
            "deepseek_v4" => Syntax::Dsml4,
            "minicpm5" => Syntax::Cpm5,
            "gpt_oss" => Syntax::Harmony,
            "llm_jp_harmony" => Syntax::SpacedHarmony,
            "muse_glimmer" => Syntax::Atem,
            "kimi_k3" => Syntax::KimiFrames,
            "functionary_v3_1" => Syntax::FunctionTags,
            "functionary_v3" => Syntax::Routes,
            other => panic!("no syntax known for dialect {other}: add it here"),
        }
    }

    /// `calls` after `text`, as the syntax writes them.
    pub fn write(self, text: &str, calls: &[ToolCall]) -> String {
        match self {
            Syntax::Tagged => tagged(text, calls),
            Syntax::LongCatTagged => tagged(text, calls)
                .replace("<tool_call>", "<longcat_tool_call>")
                .replace("</tool_call>", "</longcat_tool_call>"),
            Syntax::Escaped => tagged(text, calls).replace("tool_call>", "tool\\_call>"),
            Syntax::Steps => step(text, calls),
            Syntax::Routed => routed(text, calls),
            Syntax::LlamaJson => llama_json(text, calls),
            Syntax::Pythonic => pythonic(text, calls),
            Syntax::PythonLines => python_lines(text, calls),
            Syntax::MistralList => json_list(text, "[TOOL_CALLS][", calls),
            Syntax::Functools => json_list(text, "functools[", calls),
            Syntax::CohereAction => cohere_action(text, calls),
            Syntax::R7bAction => r7b_action(text, calls),
            Syntax::ReAct => react(text, calls),
            Syntax::DeepSeekV3 => deepseek_v3(text, calls),
            Syntax::DeepSeekV31 => deepseek_v3_1(text, calls),
            Syntax::GraniteList => granite(text, calls),
            Syntax::KimiSection => kimi_k2(text, calls),
            Syntax::Qwen3Xml => qwen3_coder(text, calls),
            Syntax::GlmXml => glm(text, calls),
            Syntax::Hy3Xml => hy3(text, calls),
            Syntax::SeedXml => seed_oss(text, calls),
            Syntax::MiniMaxXml => minimax_m2(text, calls),
            Syntax::StepXml => step3(text, calls),
            Syntax::IfmXml => k2_horizon(text, calls),
            Syntax::DotsXml => minimax_m2(text, calls).replace("minimax:tool_call>", "dots_function_call>"),
            Syntax::Dsml => dsml(text, calls, "function_calls"),
            Syntax::Dsml4 => dsml(text, calls, "tool_calls"),
            Syntax::Cpm5 => minicpm5(text, calls),
            Syntax::Gemma4Calls => google_calls(text, calls, GEMMA4, "<|tool_call>", "<tool_call|>"),
            Syntax::FunctionGemmaCalls => google_calls(
                text,
                calls,
                FUNCTION_GEMMA,
                "<start_function_call>",
                "<end_function_call>",
            ),
            Syntax::SolarCalls => solar_open(text, calls),
            Syntax::GigaChatCall => {
                calls_json(calls)
                    .iter()
                    .fold(text.to_string(), |answer, (name, arguments)| {
                        format!("{answer}<|function_call|>{{\"name\": \"{name}\", \"arguments\": {arguments}}}")
                    })
            }
            Syntax::Glm4Call => calls_json(calls)
                .iter()
                .map(|(name, arguments)| format!("{name}\n{arguments}"))
                .collect(),
            Syntax::Lfm2List => format!(
                "{text}<|tool_call_start|>{}<|tool_call_end|>",
                pythonic("", calls)
            ),
            Syntax::Harmony => harmony(text, calls, "", "<|call|>"),
            Syntax::SpacedHarmony => harmony(text, calls, " ", "<|end|>"),
            Syntax::Atem => atem(text, calls),
            Syntax::KimiFrames => kimi_k3(text, calls),
            Syntax::FunctionTags => function_tags(text, calls),
            Syntax::Routes => routes(text, calls),
            Syntax::BareList => json_list("", "[", calls),
            Syntax::ToolcallList => format!("{}</TOOLCALL>", json_list(text, "<TOOLCALL>[", calls)),
            Syntax::ToolCallsList => {
                format!("{}</tool_calls>", json_list(text, "<tool_calls>[", calls))
            }
            Syntax::ToolCallsLines => tool_calls_lines(text, calls),
            Syntax::KeyedList => keyed_list(text, calls),
            Syntax::FunctionCallEach => each_marked(text, "<function_call> ", "", calls),
            Syntax::FunctioncallEach => each_marked(text, "<functioncall>", "", calls),
            Syntax::PythonBlock => python_block(text, calls),
            Syntax::ToolcallEach => each_marked(text, "<toolcall> ", " </toolcall>", calls),
            Syntax::ActionEach => each_marked(
                text,
                "<|action_start|><|plugin|>\n",
                "<|action_end|>",
                calls,
            ),
        }
    }
}

/// Command-R's actions, laid out as its template writes past calls.
fn cohere_action(text: &str, calls: &[ToolCall]) -> String {
    let actions: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            let name = Value::from(name);
            format!("    {{\n        \"tool_name\": {name},\n        \"parameters\": {arguments}\n    }}")
        })
        .collect();
    format!("{text}\nAction:\n```json\n[\n{}\n]```", actions.join(",\n"))
}

/// Command R7B's thinking (the text) and actions, as its template writes past calls.
fn r7b_action(text: &str, calls: &[ToolCall]) -> String {
    let actions: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let (name, arguments) = name_and_arguments(call);
            let name = Value::from(name);
            format!("    {{\"tool_call_id\": \"{index}\", \"tool_name\": {name}, \"parameters\": {arguments}}}")
        })
        .collect();
    format!(
        "<|START_THINKING|>{text}<|END_THINKING|><|START_ACTION|>[\n{}\n]<|END_ACTION|>",
        actions.join(",\n")
    )
}

fn calls_json(calls: &[ToolCall]) -> Vec<(String, Value)> {
    calls.iter().map(name_and_arguments).collect()
}

/// ReAct: `Action:` / `Action Input:` per call.
fn react(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| format!("Action: {name}\nAction Input: {arguments}"))
        .collect();
    format!("{text}\n{}", calls.join("\n"))
}

/// DeepSeek V3 / R1 calls, as their templates write past calls.
fn deepseek_v3(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
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

/// DeepSeek V3.1 calls.
fn deepseek_v3_1(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            format!("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>")
        })
        .collect();
    format!("{text}<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}

fn json_call_list(text: &str, marker: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<Value> = calls_json(calls)
        .into_iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect();
    format!("{text}{marker}{}", Value::Array(calls))
}

fn granite(text: &str, calls: &[ToolCall]) -> String {
    json_call_list(text, "<|tool_call|>", calls)
}

/// Kimi K2's section of calls, numbered as its template numbers them.
fn kimi_k2(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            format!("<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>")
        })
        .collect();
    format!("{text}<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>")
}

fn xml_arguments(arguments: &Value) -> Vec<(String, String)> {
    arguments
        .as_object()
        .map(|members| {
            members
                .iter()
                .map(|(key, value)| (key.clone(), text_of(value)))
                .collect()
        })
        .unwrap_or_default()
}

/// Qwen3-Coder's calls, as its template writes past calls.
fn qwen3_coder(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| format!("<parameter={key}>\n{value}\n</parameter>\n"))
                .collect();
            format!("<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>")
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

/// Seed-OSS's calls, as its template writes past calls.
fn seed_oss(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| format!("<parameter={key}>{value}</parameter>\n"))
                .collect();
            format!(
                "<seed:tool_call>\n<function={name}>\n{parameters}</function>\n</seed:tool_call>"
            )
        })
        .collect();
    format!("{text}{}", calls.join("\n"))
}

/// MiniMax M2's calls, one block holding them all, as its template writes past calls.
fn minimax_m2(text: &str, calls: &[ToolCall]) -> String {
    let invokes: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| format!("<parameter name=\"{key}\">{value}</parameter>\n"))
                .collect();
            format!("<invoke name=\"{name}\">\n{parameters}</invoke>\n")
        })
        .collect();
    format!("{text}<minimax:tool_call>\n{invokes}</minimax:tool_call>")
}

/// Step 3's calls, each in its frame of special tokens, one block holding them all.
fn step3(text: &str, calls: &[ToolCall]) -> String {
    let invokes: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| {
                    format!("<steptml:parameter name=\"{key}\">{value}</steptml:parameter>\n")
                })
                .collect();
            format!(
                "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{name}\">\n{parameters}</steptml:invoke><｜tool_call_end｜>\n"
            )
        })
        .collect();
    format!("{text}<｜tool_calls_begin｜>\n{invokes}<｜tool_calls_end｜>")
}

/// K2 Horizon's calls, one block holding them all, as its template writes past calls.
fn k2_horizon(text: &str, calls: &[ToolCall]) -> String {
    let invokes: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| {
                    format!("<ifm|arg_key>{key}</ifm|arg_key>\n<ifm|arg_value>{value}</ifm|arg_value>\n")
                })
                .collect();
            format!("<ifm|tool_call>{name}\n{parameters}</ifm|tool_call>")
        })
        .collect();
    format!(
        "{text}<ifm|tool_calls>\n{}\n</ifm|tool_calls>",
        invokes.join("\n")
    )
}

/// DeepSeek V3.2's (`function_calls`) and V4's (`tool_calls`) DSML calls: each argument
/// says whether it is a string.
fn dsml(text: &str, calls: &[ToolCall], block: &str) -> String {
    let invokes: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = arguments
                .as_object()
                .into_iter()
                .flatten()
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
            format!("<｜DSML｜invoke name=\"{name}\">\n{parameters}</｜DSML｜invoke>\n")
        })
        .collect();
    format!("{text}<｜DSML｜{block}>\n{invokes}</｜DSML｜{block}>")
}

/// MiniCPM5's calls: one `<function>` element each, a line between them.
fn minicpm5(text: &str, calls: &[ToolCall]) -> String {
    let functions: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| format!("<param name=\"{key}\">{value}</param>"))
                .collect();
            format!("<function name=\"{name}\">{parameters}</function>")
        })
        .collect();
    format!("{text}{}", functions.join("\n"))
}

/// Google's calls (Gemma 4, FunctionGemma), in the notation, as the templates write past
/// calls.
fn google_calls(
    text: &str,
    calls: &[ToolCall],
    notation: Notation,
    open: &str,
    close: &str,
) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            format!(
                "{open}call:{name}{}{close}",
                notation.write_value(arguments)
            )
        })
        .collect();
    format!("{text}{calls}")
}

/// Solar Open's calls message, as its template writes past calls.
fn solar_open(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .enumerate()
        .map(|(at, (name, arguments))| {
            format!("<|tool_call:begin|>call_{at}<|tool_call:name|>{name}<|tool_call:args|>{arguments}<|tool_call:end|>")
        })
        .collect();
    format!("{text}<|tool_calls|>{calls}<|calls|>")
}

/// GLM's calls, as its template writes past calls.
fn glm(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| format!("<tool_call>{name}\n{}</tool_call>", arg_pairs(arguments)))
        .collect();
    format!("{text}{}", calls.join("\n"))
}

/// Tencent Hy3's calls, as its template writes past calls: GLM's pairs in a block.
fn hy3(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            format!(
                "<tool_call>{name}<tool_sep>\n{}</tool_call>\n",
                arg_pairs(arguments)
            )
        })
        .collect();
    format!("{text}<tool_calls>\n{calls}</tool_calls>")
}

/// A call's arguments as GLM's and Hy3's key and value pairs, a line each.
fn arg_pairs(arguments: &Value) -> String {
    xml_arguments(arguments)
        .iter()
        .map(|(key, value)| format!("<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n"))
        .collect()
}

/// GPT-OSS: the text as an analysis message, then one commentary message per call; `gap`
/// after each special token and `call_end` between calls as LLM-jp writes them.
fn harmony(text: &str, calls: &[ToolCall], gap: &str, call_end: &str) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            format!("<|channel|>{gap}commentary to=functions.{name} <|constrain|>{gap}json<|message|>{gap}{arguments}")
        })
        .collect();
    let start = format!("<|start|>{gap}assistant");
    format!(
        "<|channel|>{gap}analysis<|message|>{gap}{text}<|end|>{start}{}<|call|>",
        calls.join(&format!("{call_end}{start}"))
    )
}

/// MuSE Glimmer: the text as a message to `self`, then one message per call, addressed to
/// its tool, as its template writes past calls.
fn atem(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls_json(calls)
        .iter()
        .map(|(name, arguments)| {
            let parameters: String = xml_arguments(arguments)
                .iter()
                .map(|(key, value)| {
                    format!("<atem:parameter name=\"{key}\">{value}</atem:parameter>\n")
                })
                .collect();
            format!(
                " to={name}<|message|><atem:function_calls>\n<atem:invoke name=\"{name}\">\n{parameters}</atem:invoke>\n</atem:function_calls>"
            )
        })
        .collect();
    format!(
        " to=self<|message|>{text}<|eom|><|start|>assistant{}",
        calls.join("<|eom|><|start|>assistant")
    )
}

/// Kimi K3's answer: the text as reasoning, an empty response, then the calls numbered
/// from 1, each argument's JSON type declared, names and keys escaped.
fn kimi_k3(text: &str, calls: &[ToolCall]) -> String {
    kimi_frames(text, calls, |arguments| {
        let arguments = arguments.as_object().into_iter().flatten();
        arguments.map(kimi_argument).collect()
    })
}

/// Kimi K3's answer with each call's arguments as `arguments` writes them.
fn kimi_frames(text: &str, calls: &[ToolCall], arguments: impl Fn(&Value) -> String) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .enumerate()
        .map(|(at, (name, values))| {
            format!(
                "<|open|>call tool=\"{}\" index=\"{}\"<|sep|>{}<|close|>call<|sep|>",
                attribute(name),
                at + 1,
                arguments(values)
            )
        })
        .collect();
    format!("<|open|>think<|sep|>{text}<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|>{calls}<|close|>tools<|sep|>")
}

/// Functionary v3.1: `<function=name>{…}</function>` per call.
fn function_tags(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| format!("<function={name}>{arguments}</function>"))
        .collect();
    format!("{text}{calls}")
}

/// Functionary v3.2 after its prompt's `>>>`: the text to `all` (a newline after it, so
/// a `>` ending the text stays apart from the route), then `>>>name` per call.
fn routes(text: &str, calls: &[ToolCall]) -> String {
    let calls: String = calls_json(calls)
        .iter()
        .map(|(name, arguments)| format!(">>>{name}\n{arguments}"))
        .collect();
    format!("all\n{text}\n{calls}")
}

/// Llama 3.x JSON calls, as its grammar has the model write them.
fn llama_json(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            let name = Value::from(name);
            format!("{{\"name\": {name}, \"parameters\": {arguments}}}")
        })
        .collect();
    format!("{text}{}", calls.join("; "))
}

/// `{"name", "arguments"}` calls as a JSON list after `open`.
fn json_list(text: &str, open: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            let name = Value::from(name);
            format!("{{\"name\": {name}, \"arguments\": {arguments}}}")
        })
        .collect();
    format!("{text}{open}{}]", calls.join(", "))
}

/// MiniMax M1's calls, one JSON object per line, as its template writes past calls.
fn tool_calls_lines(text: &str, calls: &[ToolCall]) -> String {
    let lines: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            json!({"name": name, "arguments": arguments}).to_string()
        })
        .collect();
    format!("{text}<tool_calls>\n{}\n</tool_calls>", lines.join("\n"))
}

/// Apertus' calls, each keyed by its tool's name.
fn keyed_list(text: &str, calls: &[ToolCall]) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            format!("{{{}: {arguments}}}", Value::from(name))
        })
        .collect();
    format!(
        "{text}<|tools_prefix|>[{}]<|tools_suffix|>",
        items.join(", ")
    )
}

/// Each call after its own marker, as Granite 20B FC and InternLM2 write them.
fn each_marked(text: &str, open: &str, close: &str, calls: &[ToolCall]) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            let body = json!({"name": name, "arguments": arguments});
            format!("{open}{body}{close}")
        })
        .collect();
    format!("{text}{}", items.join("\n"))
}

/// A pythonic call list, values as JSON but booleans as Python's, as the grammar has it.
fn pythonic(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls.iter().map(python_call).collect();
    format!("{text}[{}]", calls.join(", "))
}

/// OLMo 3's calls: one per line between `<function_calls>` tags.
fn python_lines(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls.iter().map(python_call).collect();
    format!(
        "{text}<function_calls>\n{}\n</function_calls>",
        calls.join("\n")
    )
}

/// One call in Python syntax, values as JSON but booleans as Python's.
fn python_call(call: &ToolCall) -> String {
    let (name, arguments) = name_and_arguments(call);
    let arguments: Vec<String> = arguments
        .as_object()
        .map(|members| {
            members
                .iter()
                .map(|(key, value)| match value {
                    Value::Bool(true) => format!("{key}=True"),
                    Value::Bool(false) => format!("{key}=False"),
                    other => format!("{key}={other}"),
                })
                .collect()
        })
        .unwrap_or_default();
    format!("{name}({})", arguments.join(", "))
}

/// MiniCPM3's fenced block of Python calls, one per line.
fn python_block(text: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<String> = calls.iter().map(python_call).collect();
    format!(
        "{text}<|tool_call_start|>\n```python\n{}\n```\n<|tool_call_end|>",
        calls.join("\n")
    )
}

fn tagged(text: &str, calls: &[ToolCall]) -> String {
    let mut answer = text.to_string();
    for call in calls {
        let (name, arguments) = name_and_arguments(call);
        let body = json!({"name": name, "arguments": arguments});
        answer.push_str(&format!("<tool_call>\n{body}\n</tool_call>"));
    }
    answer
}

/// A `thoughtful_steps` step calling `calls`, as its grammar has the model write it.
fn step(thought: &str, calls: &[ToolCall]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|call| {
            let (name, arguments) = name_and_arguments(call);
            json!({"name": name, "arguments": arguments})
        })
        .collect();
    let step = json!({
        "thought_about_next_step_only": thought,
        "next_step": {"tool_calls": calls},
    });
    format!("{step:#}")
}

/// What opens each `functionary_v2` message after the first.
const START: &str = "<|from|>assistant\n<|recipient|>";

fn routed(text: &str, calls: &[ToolCall]) -> String {
    let mut answer = format!("all\n<|content|>{text}");
    for call in calls {
        let (name, arguments) = name_and_arguments(call);
        answer.push_str(&format!("{START}{name}\n<|content|>\n{arguments}\n"));
    }
    answer
}

pub fn name_and_arguments(call: &ToolCall) -> (String, Value) {
    let arguments = match &call.function.arguments {
        Arguments::Object(map) => Value::Object(map.clone()),
        Arguments::Text(text) => serde_json::from_str(text).expect("arguments are JSON"),
    };
    (call.name().to_string(), arguments)
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
