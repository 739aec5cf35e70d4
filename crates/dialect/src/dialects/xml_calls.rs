//! Calls written as XML-style tags with one tag per argument, values as text: Qwen3-Coder
//! (also Qwen 3.5, Nemotron 3 and Step 3.5 templates), ByteDance Seed-OSS, MiniMax M2,
//! DeepSeek V3.2's and V4's DSML, MiniCPM5, MuSE Glimmer's ATEM, Kimi K3, Tencent Hy3,
//! StepFun Step 3, IFM's K2 Horizon, GLM 4.5 / 4.6 / 4.7 and Ling 3.
//!
//! ```text
//! <tool_call>                          <minimax:tool_call>
//! <function=get_weather>               <invoke name="get_weather">
//! <parameter=city>                     <parameter name="city">Paris</parameter>
//! Paris                                </invoke>
//! </parameter>                         </minimax:tool_call>
//! </function>
//! </tool_call>
//! ```
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Paris</arg_value>
//! </tool_call>
//! ```
//!
//! ```text
//! <tool_calls>
//! <tool_call>get_weather<tool_sep>
//! <arg_key>city</arg_key>
//! <arg_value>Paris</arg_value>
//! </tool_call>
//! </tool_calls>
//! ```
//!
//! All but GLM differ only in their tags ([`Tags`]): a block that holds one call
//! (Qwen3-Coder's `<tool_call>`, Seed's `<seed:tool_call>`) or several (MiniMax's
//! `<minimax:tool_call>`, DSML's `<｜DSML｜function_calls>`) or none (MiniCPM5's
//! `<function name="f">` stands alone), a call's tag around its name,
//! an argument's tag around its key; so one grammar writer and one parser serve them all.
//!
//! A string argument is written as it is and anything else as JSON, so the parser gives
//! each value its type back from the tool's schema ([`crate::toolkit::typed_args`]); DSML
//! and Kimi K3 declare it instead (`string="true|false"`, `type="string|number|…"` on each
//! argument, [`Declared`]), and their word is taken where the schema allows it
//! ([`declared_value`]). The grammar writes each declared
//! parameter in schema order, required ones always, a string as text without its closing
//! tag (an enum of strings as one of them) and anything else as JSON of its schema.
//! Qwen3-Coder's value sits between newlines, which are layout: one newline on each side
//! is dropped. A model that leaves a value's closing tag out (`<parameter=a>\n1\n<parameter=b>`)
//! has the value end at the next argument's tag, or at the call's closing tag on a line of
//! its own (either anywhere where tags are tokens: Kimi K3), as SGLang and vLLM read
//! Qwen3-Coder: otherwise the next argument is swallowed into the value (or the value runs
//! on into the next call). A closing tag inside a line stays the value's text. So a
//! string value that holds its family's argument tag is read as two arguments, and the
//! grammar keeps a string value from holding one (with its closing tag, and the call's
//! closing tag where tags are tokens): what it lets a model write is read as written,
//! whole or streamed. The call's closing tag on a line of its own it does not yet keep
//! out. MiniCPM5 may wrap a string in `<![CDATA[…]]>`, whose text is the value as
//! it is, its closing tag and all (the grammar allows either). Reasoning (`<think>`,
//! Seed's `<seed:think>`) at the start is reasoning, and a prompt that opened it leaves
//! the output inside it.
//!
//! MuSE Glimmer writes MiniMax's layout under `atem:` tags, but as harmony does
//! ([`super::gpt_oss`]) every part of an answer is a message with a recipient, one call
//! per message ([`Recipient`]); its generation prompt leaves `<|start|>assistant`:
//!
//! ```text
//!  to=self<|message|>The user wants the weather.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>
//! <atem:invoke name="get_weather">
//! <atem:parameter name="city">Paris</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls><|eom|>
//! ```
//!
//! A message to `self` is reasoning (anywhere: the model reasons again between calls), one
//! to `user` content; a message to a tool is read from its block, the header's name being
//! the invoke's. The lazy grammar starts at the block (the header before it is free), and
//! each further call writes its own message; forced, the grammar writes the header too,
//! after an optional reasoning message.
//!
//! Kimi K3 writes every part of a message as a frame of special tokens, attributes in its
//! opening (escaped: `&amp;`, `&quot;`, [`crate::toolkit::attributes`]); its generation
//! prompt leaves `<|open|>message role="assistant"<|sep|><|open|>think<|sep|>`:
//!
//! ```text
//! The user wants the weather.<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
//! ```
//!
//! Its frames are MiniMax's block, invoke and parameter with no newlines between, a call's
//! number (from 1) after its name, and a declared type; a call may instead hold its
//! arguments as one `<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>` (as the
//! template writes arguments given as a string). The response, think and message frames
//! are layout around the content and reasoning; a forced grammar writes the (maybe empty)
//! response frame before the calls, the lazy one starts at `<|open|>tools<|sep|>`. The
//! frames are special tokens, never text ([`Tags::tokens`]): a tools frame with no call in
//! it, or a closing frame alone, is dropped, not shown as content. A model with nothing to
//! reason about goes straight to its response frame without closing `think`: the response
//! frame ends the reasoning ([`Action::Answer`]), or the answer and calls were read as
//! reasoning.
//!
//! Tencent Hy3 writes GLM's key and value pairs, but as a tagged family does: its name
//! ends at `<tool_sep>` and its calls sit in one `<tool_calls>` block, so it is [`Tags`]
//! with a value's own opening tag ([`Tags::value_open`]), not GLM's reader (which read
//! `get_weather<tool_sep>` as the name and no call came back). Its template builds every
//! tag from a suffix (`HYTK`); llama.cpp's copy sets it to `:opensource`, so a template
//! that writes `<tool_call:opensource>` gets those tags ([`Native::as_written_by`]).
//!
//! StepFun Step 3 writes MiniMax's layout under `steptml:` tags in a block of DeepSeek-style
//! special tokens, each call in a frame of its own ([`CallFrame`]):
//!
//! ```text
//! <｜tool_calls_begin｜>
//! <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
//! <steptml:parameter name="city">Paris</steptml:parameter>
//! </steptml:invoke><｜tool_call_end｜>
//! <｜tool_calls_end｜>
//! ```
//!
//! A model may leave the frame's `function<｜tool_sep｜>` out, or write a `<｜tool_sep｜>`
//! between two calls' frames, as the peers' parsers read it.
//!
//! IFM's K2 Horizon writes Hy3's pairs under `ifm|` tags, its name on a line of its own
//! (`<ifm|tool_calls>\n<ifm|tool_call>f\n<ifm|arg_key>k</ifm|arg_key>\n<ifm|arg_value>v…`),
//! a string bare and other values as JSON, though a model may quote a string; as a request's `tool_call_format` asks, its template may instead
//! declare each value's type (`<ifm|arg_type>integer</ifm|arg_type>` before the value) or
//! write the whole call as `{"name", "arguments"}`. All three are read.
//!
//! Ling 3 (inclusionAI) writes GLM's calls in turns of its own,
//! `<role>ASSISTANT</role>…<|role_end|>`: a turn's end, which a model may write, is layout
//! (and a stop); its generation prompt leaves `<think>` open, and the model may call
//! without closing it (`I need the time.\n<tool_call>get_time…`): as llama.cpp reads it,
//! a call's marker ends that reasoning too, and the call is read.

use std::sync::Arc;

use serde_json::{Map, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{declared_parameters, string_enum, ChatTemplate};
use crate::error::DialectError;
use crate::toolkit::attributes::{escape_attribute, unescape_attribute};
use crate::toolkit::call_json::{self, NAME_ARGUMENTS};
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::grammar_parts::{
    free_text, grammar_of, one_or_more, reasoning_then, text_value, text_without_any, words, ws,
};
use crate::toolkit::native::{after_open, reasoning_tags, rendered_past_call, Native, Start};
use crate::toolkit::pattern::{checked_name, drifted_close, Call, Pat, Region};
use crate::toolkit::typed_args::{declared_value, typed_value, ParameterTypes};

const MAX_NAME: usize = 256;

/// Which XML-style family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XmlCalls {
    /// `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`.
    Qwen3Coder,
    /// `<seed:tool_call><function=name><parameter=k>v</parameter></function></seed:tool_call>`.
    SeedOss,
    /// `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke>…`.
    MiniMaxM2,
    /// MiniMax M2's calls in a `<dots_function_call>` block (rednote's dots models).
    Dots,
    /// `<｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k"
    /// string="true">v</｜DSML｜parameter>…`.
    DeepSeekV32,
    /// DeepSeek V4: V3.2's DSML in a `<｜DSML｜tool_calls>` block.
    DeepSeekV4,
    /// `<function name="f"><param name="k">v</param></function>`, a value maybe in CDATA.
    MiniCpm5,
    /// `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.
    Glm,
    /// GLM's calls in Ling's `…<|role_end|>` turns.
    Ling,
    /// ` to=f<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter
    /// name="k">v</atem:parameter>…`, one call per message.
    MuseGlimmer,
    /// `<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument key="k"
    /// type="string"<|sep|>v<|close|>argument<|sep|>…`.
    KimiK3,
    /// `<tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value>
    /// </tool_call></tool_calls>`.
    Hy3,
    /// Hy3 with every tag as `<tool_call:opensource>`, as its template may write them.
    Hy3OpenSource,
    /// `<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke
    /// name="f"><steptml:parameter name="k">v</steptml:parameter></steptml:invoke>
    /// <｜tool_call_end｜><｜tool_calls_end｜>`.
    Step3,
    /// `<ifm|tool_calls><ifm|tool_call>f\n<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v
    /// </ifm|arg_value></ifm|tool_call></ifm|tool_calls>`, or the call as one JSON object.
    K2Horizon,
}

/// The message header of a family that addresses each call to its tool, as harmony does.
#[derive(Debug, Clone, Copy)]
pub struct Recipient {
    /// Before and after the tool's name, ahead of the call's block.
    pub open: &'static str,
    pub message: &'static str,
    /// Between one call's message and the next one's header.
    pub next: &'static str,
}

/// The tags of a family that writes a call as an element and each argument as a child.
#[derive(Debug, Clone, Copy)]
pub struct Tags {
    /// The block around the calls, or none (empty).
    pub open: &'static str,
    pub close: &'static str,
    /// Whether one block holds several calls, or each call has its own.
    pub many: bool,
    /// A call's opening tag, before and after its name, and its closing tag.
    pub invoke: (&'static str, &'static str),
    /// The call's number among the calls, from 1, between these after its name, or none.
    pub index: Option<(&'static str, &'static str)>,
    pub invoke_close: &'static str,
    /// An argument's opening tag, before and after its key, and its closing tag.
    pub parameter: (&'static str, &'static str),
    /// The tag that opens an argument's value after its key's (Hy3's `<arg_value>`), the
    /// layout between them aside, or none: the value follows the key's tag.
    pub value_open: Option<&'static str>,
    pub parameter_close: &'static str,
    /// The argument's tag then declares its value's type ([`Declared`]), up to this.
    pub declared: Option<(Declared, &'static str)>,
    /// A call's arguments may instead be one JSON object between these (maybe nothing).
    pub json_block: Option<(&'static str, &'static str)>,
    /// Names and keys are attribute values with `&` and `"` escaped.
    pub escaped: bool,
    /// The layout between tags: a newline, or nothing.
    pub gap: &'static str,
    /// Each value sits between newlines, which are layout.
    pub value_newlines: bool,
    /// A string value may be wrapped in these (`<![CDATA[`, `]]>`), its text then read as
    /// it is, closing tag and all.
    pub cdata: Option<(&'static str, &'static str)>,
    /// The reasoning tags.
    pub think: (&'static str, &'static str),
    /// The frame around the answer's content, which a forced grammar writes before the
    /// calls (empty or not); its opening ends reasoning left open ([`Action::Answer`]).
    pub response: Option<(&'static str, &'static str)>,
    /// The tags are special tokens, never text: a block with no call in it (or none after
    /// its opening) is dropped, and so is its closing tag standing alone. (A block whose
    /// calls do not read is still content as written, its closing tag aside.)
    pub tokens: bool,
    /// Headers and frames that carry no calls (around the answer, the ends).
    pub layout: &'static [&'static str],
    /// Each call is its own message with this header, or the calls stand alone.
    pub recipient: Option<Recipient>,
    /// The frame around each call inside the block, or none.
    pub frame: Option<CallFrame>,
    /// An opening tag's head is a token (`<function`, `<param`), and the space after it
    /// may come out of a detokenizer as `Ġ` or not at all: both are read as the space.
    pub head_tokens: bool,
    /// A tag between an argument's key and its value that declares the value's type,
    /// read past (the tool's schema gives the type), or none.
    pub value_type: Option<(&'static str, &'static str)>,
    /// A value may be written as JSON, a string quoted (as a model may write it), or bare:
    /// read as JSON where it is, typed by the schema ([`declared_value`]).
    pub json_values: bool,
    /// A call may instead be one JSON object, `{"name": …, "arguments": {…}}`, in the
    /// call's tags.
    pub json_calls: bool,
}

/// The special tokens around each call in a block of several, as Step 3 writes them:
/// `<｜tool_call_begin｜>function<｜tool_sep｜>` before the call's element,
/// `<｜tool_call_end｜>` after it.
#[derive(Debug, Clone, Copy)]
pub struct CallFrame {
    pub open: &'static str,
    /// The call's kind after the opening, which a model may leave out.
    pub kind: &'static str,
    pub close: &'static str,
    /// What a model may write between one call's frame and the next (`<｜tool_sep｜>`).
    pub between: &'static str,
}

/// How an argument's tag declares its value's type after its key: a string's value is its
/// text, anything else's is JSON, and the declaration is taken over the tool's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declared {
    /// `string="true"` or `string="false"` (DSML).
    StringFlag,
    /// `type="string"`, or `number`, `boolean`, `null`, `object`, `array` (Kimi K3).
    JsonType,
}

/// The JSON types Kimi K3 declares for a value that is not a string.
const JSON_TYPES: [&str; 5] = ["number", "boolean", "null", "object", "array"];

impl Declared {
    /// The words the grammar may declare for `parameter`.
    fn words(self, parameter: &Parameter) -> Vec<&'static str> {
        match (self, parameter.json_type) {
            (Declared::StringFlag, _) if parameter.is_string => vec!["true"],
            (Declared::StringFlag, _) => vec!["false"],
            (Declared::JsonType, _) if parameter.is_string => vec!["string"],
            (Declared::JsonType, Some(word)) => vec![word],
            (Declared::JsonType, None) => JSON_TYPES.to_vec(),
        }
    }

    /// Whether `word` declares a string (`Some(true)`), JSON (`Some(false)`) or neither.
    fn says_string(self, word: &str) -> Option<bool> {
        match (self, word) {
            (Declared::StringFlag, "true") | (Declared::JsonType, "string") => Some(true),
            (Declared::StringFlag, "false") => Some(false),
            (Declared::JsonType, word) if JSON_TYPES.contains(&word) => Some(false),
            _ => None,
        }
    }
}

const QWEN3_CODER: Tags = Tags {
    open: "<tool_call>",
    close: "</tool_call>",
    many: false,
    invoke: ("<function=", ">"),
    index: None,
    invoke_close: "</function>",
    parameter: ("<parameter=", ">"),
    value_open: None,
    parameter_close: "</parameter>",
    declared: None,
    json_block: None,
    escaped: false,
    gap: "\n",
    value_newlines: true,
    cdata: None,
    think: ("<think>", "</think>"),
    response: None,
    tokens: false,
    layout: &[],
    recipient: None,
    frame: None,
    head_tokens: false,
    value_type: None,
    json_values: false,
    json_calls: false,
};

const SEED_OSS: Tags = Tags {
    open: "<seed:tool_call>",
    close: "</seed:tool_call>",
    value_newlines: false,
    think: ("<seed:think>", "</seed:think>"),
    ..QWEN3_CODER
};

const MINIMAX_M2: Tags = Tags {
    open: "<minimax:tool_call>",
    close: "</minimax:tool_call>",
    many: true,
    invoke: ("<invoke name=\"", "\">"),
    invoke_close: "</invoke>",
    parameter: ("<parameter name=\"", "\">"),
    parameter_close: "</parameter>",
    value_newlines: false,
    ..QWEN3_CODER
};

const DOTS: Tags = Tags {
    open: "<dots_function_call>",
    close: "</dots_function_call>",
    ..MINIMAX_M2
};

const DSML: Tags = Tags {
    open: "<｜DSML｜function_calls>",
    close: "</｜DSML｜function_calls>",
    invoke: ("<｜DSML｜invoke name=\"", "\">"),
    invoke_close: "</｜DSML｜invoke>",
    parameter: ("<｜DSML｜parameter name=\"", "\" string=\""),
    parameter_close: "</｜DSML｜parameter>",
    declared: Some((Declared::StringFlag, "\">")),
    // SGLang reads an invoke that holds a JSON object as the call's arguments.
    json_block: Some(("", "")),
    ..MINIMAX_M2
};

const DSML_V4: Tags = Tags {
    open: "<｜DSML｜tool_calls>",
    close: "</｜DSML｜tool_calls>",
    ..DSML
};

const MINICPM5: Tags = Tags {
    open: "",
    close: "",
    invoke: ("<function name=\"", "\">"),
    invoke_close: "</function>",
    parameter: ("<param name=\"", "\">"),
    parameter_close: "</param>",
    gap: "",
    value_newlines: false,
    cdata: Some(("<![CDATA[", "]]>")),
    head_tokens: true,
    ..QWEN3_CODER
};

const MUSE_GLIMMER: Tags = Tags {
    open: "<atem:function_calls>",
    close: "</atem:function_calls>",
    invoke: ("<atem:invoke name=\"", "\">"),
    invoke_close: "</atem:invoke>",
    parameter: ("<atem:parameter name=\"", "\">"),
    parameter_close: "</atem:parameter>",
    think: (" to=self<|message|>", "<|eom|>"),
    recipient: Some(Recipient {
        open: " to=",
        message: "<|message|>",
        next: "<|eom|><|start|>assistant",
    }),
    layout: &[
        " to=user<|message|>",
        "<|start|>assistant",
        "<|eom|>",
        "<|eot|>",
    ],
    ..MINIMAX_M2
};

const KIMI_K3: Tags = Tags {
    open: "<|open|>tools<|sep|>",
    close: "<|close|>tools<|sep|>",
    many: true,
    invoke: ("<|open|>call tool=\"", "\""),
    index: Some((" index=\"", "\"<|sep|>")),
    invoke_close: "<|close|>call<|sep|>",
    parameter: ("<|open|>argument key=\"", "\" type=\""),
    value_open: None,
    parameter_close: "<|close|>argument<|sep|>",
    declared: Some((Declared::JsonType, "\"<|sep|>")),
    json_block: Some((
        "<|open|>json type=\"object\"<|sep|>",
        "<|close|>json<|sep|>",
    )),
    escaped: true,
    gap: "",
    value_newlines: false,
    cdata: None,
    think: ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
    response: Some(("<|open|>response<|sep|>", "<|close|>response<|sep|>")),
    tokens: true,
    layout: &[
        "<|close|>think<|sep|>",
        "<|close|>response<|sep|>",
        "<|close|>message<|sep|>",
        "<|end_of_msg|>",
    ],
    recipient: None,
    frame: None,
    head_tokens: false,
    value_type: None,
    json_values: false,
    json_calls: false,
};

/// Tencent Hy3: GLM's argument pairs in MiniMax's block, the name ended by `<tool_sep>`.
const HY3: Tags = Tags {
    open: "<tool_calls>",
    close: "</tool_calls>",
    many: true,
    invoke: ("<tool_call>", "<tool_sep>"),
    invoke_close: "</tool_call>",
    parameter: ("<arg_key>", "</arg_key>"),
    value_open: Some("<arg_value>"),
    parameter_close: "</arg_value>",
    value_newlines: false,
    ..QWEN3_CODER
};

/// Hy3 as llama.cpp's copy of its template writes it: every tag with `:opensource` in it
/// (`<tool_call:opensource>`), the suffix its template's `HYTK` adds.
const HY3_OPENSOURCE: Tags = Tags {
    open: "<tool_calls:opensource>",
    close: "</tool_calls:opensource>",
    invoke: ("<tool_call:opensource>", "<tool_sep:opensource>"),
    invoke_close: "</tool_call:opensource>",
    parameter: ("<arg_key:opensource>", "</arg_key:opensource>"),
    value_open: Some("<arg_value:opensource>"),
    parameter_close: "</arg_value:opensource>",
    think: ("<think:opensource>", "</think:opensource>"),
    ..HY3
};

/// StepFun Step 3: MiniMax's layout under `steptml:` tags, each call in DeepSeek-style
/// special tokens.
const STEP3: Tags = Tags {
    open: "<｜tool_calls_begin｜>",
    close: "<｜tool_calls_end｜>",
    invoke: ("<steptml:invoke name=\"", "\">"),
    invoke_close: "</steptml:invoke>",
    parameter: ("<steptml:parameter name=\"", "\">"),
    parameter_close: "</steptml:parameter>",
    frame: Some(CallFrame {
        open: "<｜tool_call_begin｜>",
        kind: "function<｜tool_sep｜>",
        close: "<｜tool_call_end｜>",
        between: "<｜tool_sep｜>",
    }),
    ..MINIMAX_M2
};

/// IFM's K2 Horizon: Hy3's argument pairs under `ifm|` tags, the name on a line of its own;
/// its template may instead write each value's type (`xml_typed`) or each call as JSON
/// (`json`), as a request's `tool_call_format` asks.
const K2_HORIZON: Tags = Tags {
    open: "<ifm|tool_calls>",
    close: "</ifm|tool_calls>",
    invoke: ("<ifm|tool_call>", "\n"),
    invoke_close: "</ifm|tool_call>",
    parameter: ("<ifm|arg_key>", "</ifm|arg_key>"),
    value_open: Some("<ifm|arg_value>"),
    parameter_close: "</ifm|arg_value>",
    think: ("<ifm|think>", "</ifm|think>"),
    value_type: Some(("<ifm|arg_type>", "</ifm|arg_type>")),
    json_values: true,
    json_calls: true,
    ..HY3
};

const GLM_THINK: (&str, &str) = ("<think>", "</think>");
/// The end of a Ling turn.
const ROLE_END: &str = "<|role_end|>";

impl XmlCalls {
    fn tags(self) -> Option<Tags> {
        match self {
            XmlCalls::Qwen3Coder => Some(QWEN3_CODER),
            XmlCalls::SeedOss => Some(SEED_OSS),
            XmlCalls::MiniMaxM2 => Some(MINIMAX_M2),
            XmlCalls::Dots => Some(DOTS),
            XmlCalls::DeepSeekV32 => Some(DSML),
            XmlCalls::DeepSeekV4 => Some(DSML_V4),
            XmlCalls::MiniCpm5 => Some(MINICPM5),
            XmlCalls::MuseGlimmer => Some(MUSE_GLIMMER),
            XmlCalls::KimiK3 => Some(KIMI_K3),
            XmlCalls::Hy3 => Some(HY3),
            XmlCalls::Hy3OpenSource => Some(HY3_OPENSOURCE),
            XmlCalls::Step3 => Some(STEP3),
            XmlCalls::K2Horizon => Some(K2_HORIZON),
            XmlCalls::Glm | XmlCalls::Ling => None,
        }
    }

    fn think(self) -> (&'static str, &'static str) {
        self.tags().map_or(GLM_THINK, |tags| tags.think)
    }
}

impl Native for XmlCalls {
    fn name(&self) -> &'static str {
        match self {
            XmlCalls::Qwen3Coder => "qwen3_coder",
            XmlCalls::SeedOss => "seed_oss",
            XmlCalls::MiniMaxM2 => "minimax_m2",
            XmlCalls::Dots => "dots",
            XmlCalls::DeepSeekV32 => "deepseek_v3_2",
            XmlCalls::DeepSeekV4 => "deepseek_v4",
            XmlCalls::MiniCpm5 => "minicpm5",
            XmlCalls::Glm => "glm",
            XmlCalls::Ling => "ling",
            XmlCalls::MuseGlimmer => "muse_glimmer",
            XmlCalls::KimiK3 => "kimi_k3",
            XmlCalls::Hy3 | XmlCalls::Hy3OpenSource => "hy3",
            XmlCalls::Step3 => "step3",
            XmlCalls::K2Horizon => "k2_horizon",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let calls = match self.tags() {
            Some(
                tags @ Tags {
                    recipient: Some(recipient),
                    ..
                },
            ) => return tags.addressed_grammar(&recipient, tools, parallel, forced),
            Some(tags) => tags.grammar(tools, parallel)?,
            None => {
                let calls = tools
                    .iter()
                    .map(|tool| glm_call(tool))
                    .collect::<Result<Vec<_>, DialectError>>()?;
                one_or_more(Expr::group(Expr::Alt(calls)), ws(), parallel)
            }
        };
        let (open, close) = self.think();
        let root = match self.tags().and_then(|tags| tags.response) {
            _ if !forced => calls,
            Some(response) => reasoning_then(open, close, answer_then(response, calls)),
            None => reasoning_then(open, close, calls),
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[self.tags().map_or("<tool_call>", |tags| tags.trigger())])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let types = Arc::new(ParameterTypes::new(tools));
        let (open, close) = self.think();
        let mut markers = match self.tags() {
            Some(tags) => tags.markers(&types),
            None => glm_markers(&types),
        };
        let layout = match self.tags() {
            Some(tags) => tags.layout,
            None if *self == XmlCalls::Ling => &[ROLE_END],
            None => &[],
        };
        markers.extend(layout.iter().map(|word| (word.to_string(), Action::Layout)));
        if let Some(tags) = self.tags() {
            if let Some((answer, _)) = tags.response {
                markers.push((answer.into(), Action::Answer));
            }
            if tags.tokens {
                markers.push((tags.close.to_string(), Action::Layout));
            }
        }
        // A family that addresses its messages reasons again between calls.
        let addressed = self.tags().is_some_and(|tags| tags.recipient.is_some());
        markers.push(if addressed {
            (
                open.into(),
                Action::Reasoning {
                    close: close.into(),
                    at_start_only: false,
                },
            )
        } else {
            reasoning_tags(open, close)
        });
        markers
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        let (open, close) = self.think();
        after_open(prompt, open, close)
    }

    /// Qwen 3.5 (Qwen3-Coder's syntax), DeepSeek V4 and Ling may open a call before they
    /// close their reasoning.
    fn calls_end_reasoning(&self) -> bool {
        matches!(
            self,
            XmlCalls::Qwen3Coder | XmlCalls::DeepSeekV4 | XmlCalls::Ling
        )
    }

    /// Hy3's template may write its tags with `:opensource` in them ([`HY3_OPENSOURCE`]).
    fn as_written_by(&self, template: &ChatTemplate) -> Option<XmlCalls> {
        let suffixed = || {
            rendered_past_call(template)
                .is_some_and(|text| text.contains("<tool_call:opensource>probe_fn"))
        };
        (*self == XmlCalls::Hy3 && suffixed()).then_some(XmlCalls::Hy3OpenSource)
    }

    fn stops(&self) -> Vec<String> {
        match self {
            XmlCalls::Ling => vec![ROLE_END.into()],
            _ => Vec::new(),
        }
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(match self {
            XmlCalls::Qwen3Coder => "<tool_call>\n<function=NAME>\n<parameter=PARAMETER>\nVALUE\n</parameter>\n</function>\n</tool_call>",
            XmlCalls::SeedOss => "<seed:tool_call>\n<function=NAME>\n<parameter=PARAMETER>VALUE</parameter>\n</function>\n</seed:tool_call>",
            XmlCalls::MiniMaxM2 => "<minimax:tool_call>\n<invoke name=\"NAME\">\n<parameter name=\"PARAMETER\">VALUE</parameter>\n</invoke>\n</minimax:tool_call>",
            XmlCalls::Dots => "<dots_function_call>\n<invoke name=\"NAME\">\n<parameter name=\"PARAMETER\">VALUE</parameter>\n</invoke>\n</dots_function_call>",
            XmlCalls::DeepSeekV32 => "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"NAME\">\n<｜DSML｜parameter name=\"PARAMETER\" string=\"true|false\">VALUE</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
            XmlCalls::DeepSeekV4 => "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"NAME\">\n<｜DSML｜parameter name=\"PARAMETER\" string=\"true|false\">VALUE</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            XmlCalls::MiniCpm5 => "<function name=\"NAME\"><param name=\"PARAMETER\">VALUE</param></function>",
            XmlCalls::Glm | XmlCalls::Ling => "<tool_call>NAME\n<arg_key>PARAMETER</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>",
            XmlCalls::MuseGlimmer => "<|start|>assistant to=NAME<|message|><atem:function_calls>\n<atem:invoke name=\"NAME\">\n<atem:parameter name=\"PARAMETER\">VALUE</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
            XmlCalls::Hy3 => "<tool_calls>\n<tool_call>NAME<tool_sep>\n<arg_key>PARAMETER</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>\n</tool_calls>",
            XmlCalls::Hy3OpenSource => "<tool_calls:opensource>\n<tool_call:opensource>NAME<tool_sep:opensource>\n<arg_key:opensource>PARAMETER</arg_key:opensource>\n<arg_value:opensource>VALUE</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
            XmlCalls::Step3 => "<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"NAME\">\n<steptml:parameter name=\"PARAMETER\">VALUE</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
            XmlCalls::K2Horizon => "<ifm|tool_calls>\n<ifm|tool_call>NAME\n<ifm|arg_key>PARAMETER</ifm|arg_key>\n<ifm|arg_value>VALUE</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
            XmlCalls::KimiK3 => "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"1\"<|sep|><|open|>argument key=\"PARAMETER\" type=\"string|number|boolean|null|object|array\"<|sep|>VALUE<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        })
    }
}

/// One declared parameter as the grammar writes it.
struct Parameter {
    key: String,
    /// Its value as text (a string, or an enum of strings) or as JSON.
    value: Expr,
    is_string: bool,
    /// The JSON type its schema declares, where it declares one.
    json_type: Option<&'static str>,
    required: bool,
}

/// The one JSON type `schema` declares (`integer` is a `number`).
fn json_type(schema: &Value) -> Option<&'static str> {
    match schema.get("type")?.as_str()? {
        "integer" | "number" => Some("number"),
        "string" => Some("string"),
        other => JSON_TYPES.iter().copied().find(|word| *word == other),
    }
}

/// `tool`'s declared parameters in schema order; a string's text holds none of `ends`, its
/// closing tag (or the start of it) first ([`text_without_any`]).
fn parameters(tool: &Tool, ends: &[&str]) -> Result<Vec<Parameter>, DialectError> {
    Ok(declared_parameters(tool)?
        .into_iter()
        .map(|(key, schema, required)| {
            let strings = string_enum(&schema);
            let (value, is_string) = if let Some(strings) = strings {
                let values = strings.into_iter().map(Expr::literal).collect();
                (Expr::group(Expr::Alt(values)), true)
            } else if schema.get("type").and_then(Value::as_str) == Some("string") {
                (text_without_any(ends), true)
            } else {
                (Expr::Json(schema.clone()), false)
            };
            Parameter {
                json_type: json_type(&schema),
                key,
                value,
                is_string,
                required,
            }
        })
        .collect())
}

/// A parameter written when required, maybe otherwise.
fn maybe(parameter: &Parameter, written: Expr) -> Expr {
    if parameter.required {
        written
    } else {
        Expr::optional(Expr::group(written))
    }
}

/// `calls` after the answer's content, for a forced grammar: the frame around it (whose
/// opening the prompt may have written) with text without `<` inside.
fn answer_then((open, close): (&str, &str), calls: Expr) -> Expr {
    let answer = Expr::Seq(vec![
        Expr::optional(Expr::literal(open)),
        free_text(),
        Expr::literal(close),
    ]);
    Expr::Seq(vec![Expr::optional(Expr::group(answer)), calls])
}

impl Tags {
    /// The calls: each in its own block, or all in one.
    fn grammar(&self, tools: &[&Tool], parallel: bool) -> Result<Expr, DialectError> {
        let invokes = tools
            .iter()
            .map(|tool| self.invoke_grammar(tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let invokes = Expr::group(Expr::Alt(invokes));
        Ok(if self.many {
            self.block(self.repeated(invokes, parallel))
        } else {
            one_or_more(Expr::group(self.block(invokes)), ws(), parallel)
        })
    }

    /// Where calls start: the block, or the first call where there is none.
    fn trigger(&self) -> &'static str {
        if self.open.is_empty() {
            self.invoke.0
        } else {
            self.open
        }
    }

    /// `calls` in the block, if there is one.
    fn block(&self, calls: Expr) -> Expr {
        if self.open.is_empty() {
            return calls;
        }
        Expr::Seq(vec![
            Expr::literal(format!("{}{}", self.open, self.gap)),
            calls,
            Expr::literal(format!("{}{}", self.gap, self.close)),
        ])
    }

    /// `item`, then with `parallel` any number more, each after the gap.
    fn repeated(&self, item: Expr, parallel: bool) -> Expr {
        match (parallel, self.gap) {
            (true, "") => Expr::repeat(item, 1, None),
            _ => one_or_more(item, Expr::literal(self.gap), parallel),
        }
    }

    /// The calls of a family whose calls are messages to their tools: lazily the first
    /// from its block (the trigger), forced from its header after optional reasoning; each
    /// further call as a message of its own.
    fn addressed_grammar(
        &self,
        recipient: &Recipient,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut blocks = Vec::new();
        let mut messages = Vec::new();
        for tool in tools {
            let block = self.block(self.invoke_grammar(tool)?);
            let header = format!("{}{}{}", recipient.open, tool.name(), recipient.message);
            messages.push(Expr::Seq(vec![Expr::literal(header), block.clone()]));
            blocks.push(block);
        }
        let messages = Expr::group(Expr::Alt(messages));
        let first = if forced {
            messages.clone()
        } else {
            Expr::group(Expr::Alt(blocks))
        };
        let mut root = vec![first];
        if parallel {
            let next = Expr::Seq(vec![Expr::literal(recipient.next), messages]);
            root.push(Expr::repeat(Expr::group(next), 0, None));
        }
        if forced {
            let (open, close) = self.think;
            let reasoning = Expr::Seq(vec![
                Expr::literal(open),
                free_text(),
                Expr::literal(format!("{close}{}", recipient.next)),
            ]);
            root.insert(0, Expr::optional(Expr::group(reasoning)));
        }
        Ok(grammar_of(Expr::Seq(root)))
    }

    /// One call of `tool`: its declared parameters in schema order.
    fn invoke_grammar(&self, tool: &Tool) -> Result<Expr, DialectError> {
        let (before, after) = self.invoke;
        let gap = self.gap;
        let frame_open = self.frame.map_or(String::new(), |frame| {
            format!("{}{}", frame.open, frame.kind)
        });
        let opening = format!("{frame_open}{before}{}{after}", self.written(tool.name()));
        let mut items = match self.index {
            Some((before, after)) => vec![
                Expr::literal(format!("{opening}{before}")),
                index_number(),
                Expr::literal(format!("{after}{gap}")),
            ],
            // A name on a line of its own (K2 Horizon) is followed by its newline only.
            None if after.ends_with(gap) => vec![Expr::literal(opening)],
            None => vec![Expr::literal(format!("{opening}{gap}"))],
        };
        let newline = if self.value_newlines { "\n" } else { "" };
        let value_ends = self.value_ends();
        let ends: Vec<&str> = [self.value_end()]
            .into_iter()
            .chain(value_ends.iter().map(String::as_str))
            .collect();
        for parameter in parameters(tool, &ends)? {
            let (before, after) = self.parameter;
            let open = format!("{before}{}{after}", self.written(&parameter.key));
            let mut written = match self.declared {
                Some((declared, end)) => {
                    let words = declared.words(&parameter);
                    vec![
                        Expr::literal(open),
                        Expr::group(Expr::Alt(words.into_iter().map(Expr::literal).collect())),
                        Expr::literal(format!("{end}{newline}")),
                    ]
                }
                None => {
                    let value_open = self
                        .value_open
                        .map_or(String::new(), |tag| format!("{gap}{tag}"));
                    vec![Expr::literal(format!("{open}{value_open}{newline}"))]
                }
            };
            written.push(match self.cdata {
                Some((open, close)) if parameter.is_string => Expr::group(Expr::Alt(vec![
                    parameter.value.clone(),
                    Expr::Seq(vec![
                        Expr::literal(open),
                        text_value(close),
                        Expr::literal(close),
                    ]),
                ])),
                _ => parameter.value.clone(),
            });
            written.push(Expr::literal(format!(
                "{newline}{}{gap}",
                self.parameter_close
            )));
            items.push(maybe(&parameter, Expr::Seq(written)));
        }
        let frame_close = self.frame.map_or("", |frame| frame.close);
        items.push(Expr::literal(format!("{}{frame_close}", self.invoke_close)));
        Ok(Expr::Seq(items))
    }

    /// What a string value may not hold: its closing tag, up to where the tag's first
    /// character comes again (`</parameter>`, `<|close|>argument`), as [`text_value`]
    /// needs.
    fn value_end(&self) -> &'static str {
        let close = self.parameter_close;
        let first = close.chars().next().unwrap_or('<');
        close[first.len_utf8()..]
            .find(first)
            .map_or(close, |at| &close[..first.len_utf8() + at])
    }

    /// Where a value whose closing tag the model left out ends, at the value's level: the
    /// next argument's tag (`<parameter=`, which only a writer of this very format puts in
    /// a value), or the call's closing tag on a line of its own, as after a value (a file
    /// an agent writes may hold `</function>` inside a line). Where the tags are tokens,
    /// which no text holds, either anywhere. Not consumed, they are read as what they
    /// are. A family whose tags neither are tokens nor stand on lines of their own
    /// (MiniCPM5) has no such end.
    fn value_ends(&self) -> Vec<String> {
        if self.tokens {
            return vec![self.parameter.0.into(), self.invoke_close.into()];
        }
        if self.gap.is_empty() {
            return Vec::new();
        }
        vec![
            self.parameter.0.into(),
            format!("{}{}", self.gap, self.invoke_close),
        ]
    }

    /// A value (`text`, in the call's `span`) without the closing tag the model misspelled
    /// on a line of its own ([`drifted_close`]) where the next argument's tag, not its
    /// closing tag, ended it.
    fn without_drifted_close<'t>(&self, span: &str, text: &'t str) -> &'t str {
        let close = self.parameter_close;
        match drifted_close(text, close) {
            Some(at) if !span.contains(&format!("{text}{close}")) => &text[..at],
            _ => text,
        }
    }

    /// A name or key as the tag writes it.
    fn written(&self, text: &str) -> String {
        if self.escaped {
            escape_attribute(text)
        } else {
            text.to_string()
        }
    }

    /// A name or key as the tag wrote it, read back.
    fn read(&self, text: &str) -> String {
        if self.escaped {
            unescape_attribute(text)
        } else {
            text.to_string()
        }
    }

    /// A call after its opening tag's first part: its name (and number), arguments (or
    /// their JSON object) and closing tag.
    fn invoke_pattern(&self) -> Pat {
        let mut parameter = vec![
            Pat::Ws,
            self.opening(self.parameter.0),
            Pat::until(self.parameter.1, MAX_NAME),
        ];
        if let Some((_, end)) = self.declared {
            parameter.push(Pat::until(end, 8));
        }
        if let Some(open) = self.value_open {
            if let Some((type_open, type_close)) = self.value_type {
                let declared = Pat::Seq(vec![
                    Pat::Ws,
                    Pat::lit(type_open),
                    Pat::until(type_close, MAX_NAME),
                ]);
                parameter.push(Pat::Alt(vec![Pat::skip(declared), Pat::Seq(Vec::new())]));
            }
            parameter.extend([Pat::Ws, Pat::lit(open)]);
        }
        let value = Pat::value_until(self.parameter_close, self.value_ends(), MAX_REGION);
        parameter.push(match self.cdata {
            Some((open, close)) => Pat::Alt(vec![
                Pat::Seq(vec![
                    Pat::lit(open),
                    Pat::until(close, MAX_REGION),
                    Pat::lit(self.parameter_close),
                ]),
                value,
            ]),
            None => value,
        });
        let mut arguments = Pat::repeat(Pat::Seq(parameter));
        if let Some((open, close)) = self.json_block {
            let object = Pat::Seq(vec![
                Pat::Ws,
                Pat::lit(open),
                Pat::Json,
                Pat::Ws,
                Pat::lit(close),
            ]);
            arguments = Pat::Alt(vec![object, arguments]);
        }
        // A model may leave out what ends the name (Hy3's `<tool_sep>`), going straight to
        // its first argument or to the call's end.
        let name_ends = vec![self.parameter.0.to_string(), self.invoke_close.to_string()];
        let mut items = vec![Pat::until_or(self.invoke.1, name_ends, MAX_NAME)];
        if let Some((before, after)) = self.index {
            items.extend([Pat::lit(before), Pat::until(after, 8)]);
        }
        items.extend([arguments, Pat::Ws, Pat::lit(self.invoke_close)]);
        if self.json_calls {
            let object = Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::lit(self.invoke_close)]);
            return Pat::Alt(vec![object, Pat::Seq(items)]);
        }
        if self.invoke.1 != "\">" {
            return Pat::Seq(items);
        }
        // A call without arguments written as an empty element (`<invoke name="f"/>`), as
        // SGLang reads DSML's.
        Pat::Alt(vec![Pat::name("\"/>", MAX_NAME), Pat::Seq(items)])
    }

    /// The block's marker, and where each block holds one call the call's own tag too (a
    /// model may leave the block out).
    fn markers(&self, types: &Arc<ParameterTypes>) -> Vec<(String, Action)> {
        let invoke = || Pat::span(self.invoke_pattern());
        let tagged = || match self.frame {
            Some(frame) => Pat::Seq(vec![
                Pat::Ws,
                Pat::lit(frame.open),
                Pat::opt(frame.kind),
                self.opening(self.invoke.0),
                invoke(),
                Pat::Ws,
                Pat::lit(frame.close),
                Pat::opt(frame.between),
            ]),
            None => Pat::Seq(vec![Pat::Ws, self.opening(self.invoke.0), invoke()]),
        };
        let mut block = vec![tagged()];
        if self.many {
            block.push(Pat::repeat(tagged()));
        }
        block.extend([Pat::Ws, Pat::opt(self.close)]);
        let mut markers = Vec::new();
        if let Some(recipient) = self.recipient {
            let mut addressed = vec![
                Pat::until(recipient.message, MAX_NAME),
                Pat::Ws,
                Pat::lit(self.open),
            ];
            addressed.extend(block.iter().cloned());
            markers.push((
                recipient.open.to_string(),
                Action::Call(self.region(Pat::Seq(addressed), 1, types)),
            ));
        }
        if !self.open.is_empty() {
            let mut body = Pat::Seq(block);
            if self.tokens {
                body = Pat::Alt(vec![body, Pat::Seq(vec![Pat::Ws, Pat::opt(self.close)])]);
            }
            markers.push((
                self.open.to_string(),
                Action::Call(self.region(body, 0, types)),
            ));
        }
        if !self.many {
            let bare = Pat::Seq(vec![invoke(), Pat::Ws, Pat::opt(self.close)]);
            let region = self.region(bare, 0, types);
            for spelling in self.spellings(self.invoke.0) {
                markers.push((spelling, Action::Call(region.clone())));
            }
        }
        markers
    }

    /// `tag` as the model writes it, and as a detokenizer may spell it ([`Tags::head_tokens`]):
    /// its first space as `Ġ`, or left out.
    fn spellings(&self, tag: &str) -> Vec<String> {
        let mut spellings = vec![tag.to_string()];
        if self.head_tokens && tag.contains(' ') {
            spellings.push(tag.replacen(' ', "Ġ", 1));
            spellings.push(tag.replacen(' ', "", 1));
        }
        spellings
    }

    /// An opening tag read in each of its [`Tags::spellings`].
    fn opening(&self, tag: &str) -> Pat {
        let mut spellings: Vec<Pat> = self.spellings(tag).into_iter().map(Pat::lit).collect();
        match spellings.len() {
            1 => spellings.remove(0),
            _ => Pat::Alt(spellings),
        }
    }

    /// A region whose captures, past the first `skip` (a message header), are its calls'
    /// text, each read by [`Tags::invoke_pattern`].
    fn region(&self, body: Pat, skip: usize, types: &Arc<ParameterTypes>) -> Region {
        let types = Arc::clone(types);
        let tags = *self;
        let invoke = self.invoke_pattern();
        Region {
            body,
            decode: Arc::new(move |spans| {
                spans
                    .get(skip..)?
                    .iter()
                    .map(|span| tags.call(span, &invoke.captures_of(span)?, &types))
                    .collect()
            }),
        }
    }

    /// A call from its captures: its name, number, then each argument's key, declared
    /// type and value, or its arguments' JSON object (the one capture left: an argument
    /// takes two or three).
    fn call(&self, span: &str, captures: &[String], types: &ParameterTypes) -> Option<Call> {
        let (name, mut arguments) = captures.split_first()?;
        if self.json_calls && arguments.is_empty() && name.trim_start().starts_with('{') {
            return json_call(name, types);
        }
        let name = self.read(checked_name(name)?);
        if self.index.is_some() {
            let (index, rest) = arguments.split_first()?;
            if index.is_empty() || !index.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            arguments = rest;
        }
        if let (Some(_), [object]) = (self.json_block, arguments) {
            let object = serde_json::from_str::<Value>(object).ok()?;
            return object
                .is_object()
                .then(|| Call::new(name, object.to_string()));
        }
        let stride = if self.declared.is_some() { 3 } else { 2 };
        if arguments.len() % stride != 0 {
            return None;
        }
        let properties = types.properties(&name);
        let object: Map<String, Value> = arguments
            .chunks(stride)
            .map(|argument| {
                let key = self.read(argument[0].trim());
                let text = self.without_drifted_close(span, argument[stride - 1].as_str());
                let text = if self.value_newlines {
                    let text = text.strip_prefix('\n').unwrap_or(text);
                    text.strip_suffix('\n').unwrap_or(text)
                } else {
                    text
                };
                let schema = properties.and_then(|properties| properties.get(&key));
                let declared = self
                    .declared
                    .and_then(|(declared, _)| declared.says_string(argument[1].trim()));
                let value = match declared {
                    Some(string) => declared_value(text, string, schema),
                    None if self.json_values => declared_value(text, false, schema),
                    None => typed_value(text, schema),
                };
                (key, value)
            })
            .collect();
        let object = types.unwrapped(&name, object);
        let arguments = serde_json::to_string(&Value::Object(object)).ok()?;
        Some(Call::new(name, arguments))
    }
}

/// A call written as one JSON object, its arguments typed by the tool's schema.
fn json_call(text: &str, types: &ParameterTypes) -> Option<Call> {
    let mut call = call_json::calls(text.trim(), NAME_ARGUMENTS)?.pop()?;
    call.arguments = types.retyped(&call.name, std::mem::take(&mut call.arguments));
    Some(call)
}

/// A call's number among the calls: `1`, `2`, ….
fn index_number() -> Expr {
    Expr::Seq(vec![
        Expr::Class(CharClass::new(false, vec![ClassItem::Range('1', '9')])),
        Expr::repeat(
            Expr::Class(CharClass::new(false, vec![ClassItem::Range('0', '9')])),
            0,
            Some(5),
        ),
    ])
}

/// One GLM call of `tool`: its declared parameters in schema order.
fn glm_call(tool: &Tool) -> Result<Expr, DialectError> {
    let mut items = vec![Expr::literal(format!("<tool_call>{}\n", tool.name()))];
    for parameter in parameters(tool, &["</arg_value>"])? {
        let written = Expr::Seq(vec![
            Expr::literal(format!("<arg_key>{}</arg_key>\n<arg_value>", parameter.key)),
            parameter.value.clone(),
            Expr::literal("</arg_value>\n"),
        ]);
        items.push(maybe(&parameter, written));
    }
    items.push(Expr::literal("</tool_call>"));
    Ok(Expr::Seq(items))
}

/// GLM's call marker: the name up to a newline (or straight to its first key), then the
/// arguments.
fn glm_markers(types: &Arc<ParameterTypes>) -> Vec<(String, Action)> {
    let argument = || {
        Pat::Seq(vec![
            Pat::Ws,
            Pat::lit("<arg_key>"),
            Pat::until("</arg_key>", MAX_NAME),
            Pat::Ws,
            Pat::lit("<arg_value>"),
            Pat::until("</arg_value>", MAX_REGION),
        ])
    };
    let body = Pat::Alt(vec![
        Pat::Seq(vec![
            Pat::until("\n", MAX_NAME),
            Pat::repeat(argument()),
            Pat::Ws,
            Pat::lit("</tool_call>"),
        ]),
        Pat::Seq(vec![
            Pat::until("<arg_key>", MAX_NAME),
            Pat::until("</arg_key>", MAX_NAME),
            Pat::Ws,
            Pat::lit("<arg_value>"),
            Pat::until("</arg_value>", MAX_REGION),
            Pat::repeat(argument()),
            Pat::Ws,
            Pat::lit("</tool_call>"),
        ]),
        Pat::Seq(vec![Pat::until("</tool_call>", MAX_NAME)]),
    ]);
    let types = Arc::clone(types);
    let region = Region {
        body,
        decode: Arc::new(move |captures| {
            let (name, pairs) = captures.split_first()?;
            let name = checked_name(name)?;
            if pairs.len() % 2 != 0 {
                return None;
            }
            let pairs: Vec<(String, String)> = pairs
                .chunks(2)
                .map(|pair| (pair[0].trim().to_string(), pair[1].clone()))
                .collect();
            let arguments = types.arguments(name, &pairs)?;
            Some(vec![Call::new(name, arguments)])
        }),
    };
    vec![("<tool_call>".into(), Action::Call(region))]
}
