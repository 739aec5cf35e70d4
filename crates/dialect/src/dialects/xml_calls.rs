//! Calls written as XML-style tags with one tag per argument, values as text: Qwen3-Coder
//! (also Qwen 3.5, Nemotron 3 and Step 3.5 templates), ByteDance Seed-OSS, MiniMax M2,
//! DeepSeek V3.2's DSML, MuSE Glimmer's ATEM and GLM 4.5 / 4.6 / 4.7.
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
//! All but GLM differ only in their tags ([`Tags`]): a block that holds one call
//! (Qwen3-Coder's `<tool_call>`, Seed's `<seed:tool_call>`) or several (MiniMax's
//! `<minimax:tool_call>`, DSML's `<｜DSML｜function_calls>`), a call's tag around its name,
//! an argument's tag around its key; so one grammar writer and one parser serve them all.
//!
//! A string argument is written as it is and anything else as JSON, so the parser gives
//! each value its type back from the tool's schema ([`crate::toolkit::typed_args`]); DSML
//! says it instead (`string="true|false"` on each argument), and its word is taken. The
//! grammar writes each declared parameter in schema order, required ones always, a string
//! as text without `</` (an enum of strings as one of them) and anything else as JSON of
//! its schema. Qwen3-Coder's value sits between newlines, which are layout: one newline on
//! each side is dropped. Reasoning (`<think>`, Seed's `<seed:think>`) at the start is
//! reasoning, and a prompt that opened it leaves the output inside it.
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

use std::sync::Arc;

use serde_json::{Map, Value};
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{checked_parameters, DialectError};
use crate::dialects::framed_native::{
    after_open, free_text, grammar_of, one_or_more, reasoning_tags, reasoning_then, words, ws,
    Native, Start,
};
use crate::toolkit::framed::{Action, Call, Pat, Region, MAX_REGION};
use crate::toolkit::typed_args::{typed_value, ParameterTypes};

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
    /// `<｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k"
    /// string="true">v</｜DSML｜parameter>…`.
    DeepSeekV32,
    /// `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.
    Glm,
    /// ` to=f<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter
    /// name="k">v</atem:parameter>…`, one call per message.
    MuseGlimmer,
}

/// The message header of a family that addresses each call to its tool, as harmony does.
#[derive(Debug, Clone, Copy)]
pub struct Recipient {
    /// Before and after the tool's name, ahead of the call's block.
    pub open: &'static str,
    pub message: &'static str,
    /// Between one call's message and the next one's header.
    pub next: &'static str,
    /// Headers and frames that carry no calls (the message to the user, the ends).
    pub layout: &'static [&'static str],
}

/// The tags of a family that writes a call as an element and each argument as a child.
#[derive(Debug, Clone, Copy)]
pub struct Tags {
    /// The block around the calls.
    pub open: &'static str,
    pub close: &'static str,
    /// Whether one block holds several calls, or each call has its own.
    pub many: bool,
    /// A call's opening tag, before and after its name, and its closing tag.
    pub invoke: (&'static str, &'static str),
    pub invoke_close: &'static str,
    /// An argument's opening tag, before and after its key, and its closing tag.
    pub parameter: (&'static str, &'static str),
    pub parameter_close: &'static str,
    /// The argument's tag then says whether its value is a string: `true">` or `false">`.
    pub string_flag: bool,
    /// Each value sits between newlines, which are layout.
    pub value_newlines: bool,
    /// The reasoning tags.
    pub think: (&'static str, &'static str),
    /// Each call is its own message with this header, or the calls stand alone.
    pub recipient: Option<Recipient>,
}

const QWEN3_CODER: Tags = Tags {
    open: "<tool_call>",
    close: "</tool_call>",
    many: false,
    invoke: ("<function=", ">"),
    invoke_close: "</function>",
    parameter: ("<parameter=", ">"),
    parameter_close: "</parameter>",
    string_flag: false,
    value_newlines: true,
    think: ("<think>", "</think>"),
    recipient: None,
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
    string_flag: false,
    value_newlines: false,
    think: ("<think>", "</think>"),
    recipient: None,
};

const DSML: Tags = Tags {
    open: "<｜DSML｜function_calls>",
    close: "</｜DSML｜function_calls>",
    invoke: ("<｜DSML｜invoke name=\"", "\">"),
    invoke_close: "</｜DSML｜invoke>",
    parameter: ("<｜DSML｜parameter name=\"", "\" string=\""),
    parameter_close: "</｜DSML｜parameter>",
    string_flag: true,
    ..MINIMAX_M2
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
        layout: &[
            " to=user<|message|>",
            "<|start|>assistant",
            "<|eom|>",
            "<|eot|>",
        ],
    }),
    ..MINIMAX_M2
};

/// What closes DSML's `string="…` flag.
const FLAG_END: &str = "\">";

const GLM_THINK: (&str, &str) = ("<think>", "</think>");

impl XmlCalls {
    fn tags(self) -> Option<Tags> {
        match self {
            XmlCalls::Qwen3Coder => Some(QWEN3_CODER),
            XmlCalls::SeedOss => Some(SEED_OSS),
            XmlCalls::MiniMaxM2 => Some(MINIMAX_M2),
            XmlCalls::DeepSeekV32 => Some(DSML),
            XmlCalls::MuseGlimmer => Some(MUSE_GLIMMER),
            XmlCalls::Glm => None,
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
            XmlCalls::DeepSeekV32 => "deepseek_v3_2",
            XmlCalls::Glm => "glm",
            XmlCalls::MuseGlimmer => "muse_glimmer",
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
        let root = if forced {
            reasoning_then(open, close, calls)
        } else {
            calls
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[self.tags().map_or("<tool_call>", |tags| tags.open)])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let types = Arc::new(ParameterTypes::new(tools));
        let (open, close) = self.think();
        let mut markers = match self.tags() {
            Some(tags) => tags.markers(&types),
            None => glm_markers(&types),
        };
        match self.tags().and_then(|tags| tags.recipient) {
            Some(recipient) => {
                markers.extend(
                    recipient
                        .layout
                        .iter()
                        .map(|word| (word.to_string(), Action::Layout)),
                );
                markers.push((
                    open.into(),
                    Action::Reasoning {
                        close: close.into(),
                        at_start_only: false,
                    },
                ));
            }
            None => markers.push(reasoning_tags(open, close)),
        }
        markers
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        let (open, close) = self.think();
        after_open(prompt, open, close)
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(match self {
            XmlCalls::Qwen3Coder => "<tool_call>\n<function=NAME>\n<parameter=PARAMETER>\nVALUE\n</parameter>\n</function>\n</tool_call>",
            XmlCalls::SeedOss => "<seed:tool_call>\n<function=NAME>\n<parameter=PARAMETER>VALUE</parameter>\n</function>\n</seed:tool_call>",
            XmlCalls::MiniMaxM2 => "<minimax:tool_call>\n<invoke name=\"NAME\">\n<parameter name=\"PARAMETER\">VALUE</parameter>\n</invoke>\n</minimax:tool_call>",
            XmlCalls::DeepSeekV32 => "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"NAME\">\n<｜DSML｜parameter name=\"PARAMETER\" string=\"true|false\">VALUE</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
            XmlCalls::Glm => "<tool_call>NAME\n<arg_key>PARAMETER</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>",
            XmlCalls::MuseGlimmer => "<|start|>assistant to=NAME<|message|><atem:function_calls>\n<atem:invoke name=\"NAME\">\n<atem:parameter name=\"PARAMETER\">VALUE</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
        })
    }
}

/// One declared parameter as the grammar writes it.
struct Parameter {
    key: String,
    /// Its value as text (a string, or an enum of strings) or as JSON.
    value: Expr,
    is_string: bool,
    required: bool,
}

/// `tool`'s declared parameters in schema order; a string's text is ended by a closing tag
/// whose name starts with `closing`.
fn parameters(tool: &Tool, closing: char) -> Result<Vec<Parameter>, DialectError> {
    let parameters = checked_parameters(tool)?;
    let required: Vec<String> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let properties = parameters.get("properties").and_then(Value::as_object);
    Ok(properties
        .into_iter()
        .flatten()
        .map(|(key, schema)| {
            let strings: Option<Vec<&str>> = schema
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|values| values.iter().map(Value::as_str).collect());
            let (value, is_string) = if let Some(strings) = strings {
                let values = strings.into_iter().map(Expr::literal).collect();
                (Expr::group(Expr::Alt(values)), true)
            } else if schema.get("type").and_then(Value::as_str) == Some("string") {
                (text_value(closing), true)
            } else {
                (Expr::Json(schema.clone()), false)
            };
            Parameter {
                key: key.clone(),
                value,
                is_string,
                required: required.contains(key),
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

impl Tags {
    /// The calls: each in its own block, or all in one.
    fn grammar(&self, tools: &[&Tool], parallel: bool) -> Result<Expr, DialectError> {
        let invokes = tools
            .iter()
            .map(|tool| self.invoke_grammar(tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let block = |calls: Expr| {
            Expr::Seq(vec![
                Expr::literal(format!("{}\n", self.open)),
                calls,
                Expr::literal(format!("\n{}", self.close)),
            ])
        };
        let invokes = Expr::group(Expr::Alt(invokes));
        Ok(if self.many {
            block(one_or_more(invokes, Expr::literal("\n"), parallel))
        } else {
            one_or_more(Expr::group(block(invokes)), ws(), parallel)
        })
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
            let block = Expr::Seq(vec![
                Expr::literal(format!("{}\n", self.open)),
                self.invoke_grammar(tool)?,
                Expr::literal(format!("\n{}", self.close)),
            ]);
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
        let mut items = vec![Expr::literal(format!("{before}{}{after}\n", tool.name()))];
        let closing = self
            .parameter_close
            .trim_start_matches("</")
            .chars()
            .next()
            .unwrap_or('<');
        let newline = if self.value_newlines { "\n" } else { "" };
        for parameter in parameters(tool, closing)? {
            let (before, after) = self.parameter;
            let mut open = format!("{before}{}{after}", parameter.key);
            if self.string_flag {
                open.push_str(if parameter.is_string { "true" } else { "false" });
                open.push_str(FLAG_END);
            }
            open.push_str(newline);
            let written = Expr::Seq(vec![
                Expr::literal(open),
                parameter.value.clone(),
                Expr::literal(format!("{newline}{}\n", self.parameter_close)),
            ]);
            items.push(maybe(&parameter, written));
        }
        items.push(Expr::literal(self.invoke_close));
        Ok(Expr::Seq(items))
    }

    /// A call after its opening tag's first part: its name, arguments and closing tag.
    fn invoke_pattern(&self) -> Pat {
        let mut parameter = vec![
            Pat::Ws,
            Pat::lit(self.parameter.0),
            Pat::until(self.parameter.1, MAX_NAME),
        ];
        if self.string_flag {
            parameter.push(Pat::until(FLAG_END, 8));
        }
        parameter.push(Pat::until(self.parameter_close, MAX_REGION));
        Pat::Seq(vec![
            Pat::until(self.invoke.1, MAX_NAME),
            Pat::repeat(Pat::Seq(parameter)),
            Pat::Ws,
            Pat::lit(self.invoke_close),
        ])
    }

    /// The block's marker, and where each block holds one call the call's own tag too (a
    /// model may leave the block out).
    fn markers(&self, types: &Arc<ParameterTypes>) -> Vec<(String, Action)> {
        let invoke = || Pat::span(self.invoke_pattern());
        let tagged = || Pat::Seq(vec![Pat::Ws, Pat::lit(self.invoke.0), invoke()]);
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
        markers.push((
            self.open.to_string(),
            Action::Call(self.region(Pat::Seq(block), 0, types)),
        ));
        if !self.many {
            let bare = Pat::Seq(vec![invoke(), Pat::Ws, Pat::opt(self.close)]);
            markers.push((
                self.invoke.0.to_string(),
                Action::Call(self.region(bare, 0, types)),
            ));
        }
        markers
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
                    .map(|span| tags.call(&invoke.captures_of(span)?, &types))
                    .collect()
            }),
        }
    }

    /// A call from its captures: its name, then each argument's key, flag and value.
    fn call(&self, captures: &[String], types: &ParameterTypes) -> Option<Call> {
        let (name, arguments) = captures.split_first()?;
        let name = checked_name(name)?;
        let stride = if self.string_flag { 3 } else { 2 };
        if arguments.len() % stride != 0 {
            return None;
        }
        let properties = types.properties(name);
        let object: Map<String, Value> = arguments
            .chunks(stride)
            .map(|argument| {
                let key = argument[0].trim();
                let text = argument[stride - 1].as_str();
                let text = if self.value_newlines {
                    let text = text.strip_prefix('\n').unwrap_or(text);
                    text.strip_suffix('\n').unwrap_or(text)
                } else {
                    text
                };
                let schema = properties.and_then(|properties| properties.get(key));
                let value = match self.string_flag.then(|| argument[1].as_str()) {
                    Some("true") => Value::String(text.to_string()),
                    Some("false") => serde_json::from_str(text.trim())
                        .unwrap_or_else(|_| typed_value(text, schema)),
                    _ => typed_value(text, schema),
                };
                (key.to_string(), value)
            })
            .collect();
        let arguments = serde_json::to_string(&Value::Object(object)).ok()?;
        Some(Call::new(name, arguments))
    }
}

/// A function's name as written, or `None` when it cannot be one.
fn checked_name(name: &str) -> Option<&str> {
    let name = name.trim();
    let bad =
        name.is_empty() || name.contains(['<', '>', '"']) || name.contains(char::is_whitespace);
    (!bad).then_some(name)
}

/// One GLM call of `tool`: its declared parameters in schema order.
fn glm_call(tool: &Tool) -> Result<Expr, DialectError> {
    let mut items = vec![Expr::literal(format!("<tool_call>{}\n", tool.name()))];
    for parameter in parameters(tool, 'a')? {
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

/// A string value as text: anything without `</` and then `closing` (the first letter of
/// its closing tag's name), so that tag ends it. A run of `<` is one step, so `<<` and
/// `<</` are text while `<</p` still ends the value.
fn text_value(closing: char) -> Expr {
    let not = |chars: &[char]| {
        Expr::Class(CharClass::new(
            true,
            chars.iter().map(|&c| ClassItem::Char(c)).collect(),
        ))
    };
    let angles = || Expr::repeat(Expr::literal("<"), 1, None);
    Expr::Seq(vec![
        Expr::repeat(
            Expr::group(Expr::Alt(vec![
                not(&['<']),
                Expr::Seq(vec![
                    angles(),
                    Expr::group(Expr::Alt(vec![
                        not(&['/', '<']),
                        Expr::Seq(vec![Expr::literal("/"), not(&[closing, '<'])]),
                    ])),
                ]),
            ])),
            0,
            None,
        ),
        Expr::optional(Expr::group(Expr::Seq(vec![
            angles(),
            Expr::optional(Expr::literal("/")),
        ]))),
    ])
}
