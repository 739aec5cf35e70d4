//! Calls written as XML-style tags with one tag per argument, values as text: Qwen3-Coder
//! (also Qwen 3.5, Nemotron 3 and Step 3.5 templates) and GLM 4.5 / 4.6 / 4.7.
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=city>
//! Paris
//! </parameter>
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
//! A string argument is written as it is and anything else as JSON, so the parser gives
//! each value its type back from the tool's schema ([`crate::toolkit::typed_args`]); the
//! grammar writes each declared parameter in schema order, required ones always, a string
//! as text without `</` (an enum of strings as one of them) and anything else as JSON of
//! its schema. Qwen3-Coder's value sits
//! between newlines, which are layout: one newline on each side is dropped. `<think>` at the
//! start is reasoning (Qwen 3.5, GLM).

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{checked_parameters, DialectError};
use crate::dialects::framed_native::{
    after_think, free_text, grammar_of, one_or_more, think, words, ws, Native, Start,
};
use crate::toolkit::framed::{Action, Call, Pat, Region, MAX_REGION};
use crate::toolkit::typed_args::ParameterTypes;

const MAX_NAME: usize = 256;

/// Which XML-style family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XmlCalls {
    /// `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`.
    Qwen3Coder,
    /// `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.
    Glm,
}

impl Native for XmlCalls {
    fn name(&self) -> &'static str {
        match self {
            XmlCalls::Qwen3Coder => "qwen3_coder",
            XmlCalls::Glm => "glm",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let calls = tools
            .iter()
            .map(|tool| self.call_grammar(tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let calls = one_or_more(Expr::group(Expr::Alt(calls)), ws(), parallel);
        let root = if forced {
            Expr::Seq(vec![
                Expr::optional(Expr::group(Expr::Seq(vec![
                    Expr::literal("<think>"),
                    free_text(),
                    Expr::literal("</think>"),
                    ws(),
                ]))),
                calls,
            ])
        } else {
            calls
        };
        Ok(grammar_of(root))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&["<tool_call>"])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let types = Arc::new(ParameterTypes::new(tools));
        match self {
            XmlCalls::Qwen3Coder => {
                let function = || {
                    Pat::Seq(vec![
                        Pat::until(">", MAX_NAME),
                        Pat::repeat(Pat::Seq(vec![
                            Pat::Ws,
                            Pat::lit("<parameter="),
                            Pat::until(">", MAX_NAME),
                            Pat::until("</parameter>", MAX_REGION),
                        ])),
                        Pat::Ws,
                        Pat::lit("</function>"),
                    ])
                };
                let wrapped = Pat::Seq(vec![
                    Pat::Ws,
                    Pat::lit("<function="),
                    function(),
                    Pat::Ws,
                    Pat::opt("</tool_call>"),
                ]);
                let bare = Pat::Seq(vec![function(), Pat::Ws, Pat::opt("</tool_call>")]);
                vec![
                    (
                        "<tool_call>".into(),
                        Action::Call(region(wrapped, &types, true)),
                    ),
                    (
                        "<function=".into(),
                        Action::Call(region(bare, &types, true)),
                    ),
                    think(),
                ]
            }
            XmlCalls::Glm => {
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
                vec![
                    (
                        "<tool_call>".into(),
                        Action::Call(region(body, &types, false)),
                    ),
                    think(),
                ]
            }
        }
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(match self {
            XmlCalls::Qwen3Coder => "<tool_call>\n<function=NAME>\n<parameter=PARAMETER>\nVALUE\n</parameter>\n</function>\n</tool_call>",
            XmlCalls::Glm => "<tool_call>NAME\n<arg_key>PARAMETER</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>",
        })
    }
}

impl XmlCalls {
    /// One call of `tool`: its declared parameters in schema order.
    fn call_grammar(&self, tool: &Tool) -> Result<Expr, DialectError> {
        let parameters = checked_parameters(tool)?;
        let required: Vec<&str> = parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut items = vec![Expr::literal(match self {
            XmlCalls::Qwen3Coder => format!("<tool_call>\n<function={}>\n", tool.name()),
            XmlCalls::Glm => format!("<tool_call>{}\n", tool.name()),
        })];
        let properties = parameters.get("properties").and_then(Value::as_object);
        for (key, schema) in properties.into_iter().flatten() {
            let strings: Option<Vec<&str>> = schema
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|values| values.iter().map(Value::as_str).collect());
            let value = if let Some(strings) = strings {
                Expr::group(Expr::Alt(strings.into_iter().map(Expr::literal).collect()))
            } else if schema.get("type").and_then(Value::as_str) == Some("string") {
                text_value(match self {
                    XmlCalls::Qwen3Coder => 'p',
                    XmlCalls::Glm => 'a',
                })
            } else {
                Expr::Json(schema.clone())
            };
            let parameter = Expr::Seq(match self {
                XmlCalls::Qwen3Coder => vec![
                    Expr::literal(format!("<parameter={key}>\n")),
                    value,
                    Expr::literal("\n</parameter>\n"),
                ],
                XmlCalls::Glm => vec![
                    Expr::literal(format!("<arg_key>{key}</arg_key>\n<arg_value>")),
                    value,
                    Expr::literal("</arg_value>\n"),
                ],
            });
            items.push(if required.contains(&key.as_str()) {
                parameter
            } else {
                Expr::optional(Expr::group(parameter))
            });
        }
        items.push(Expr::literal(match self {
            XmlCalls::Qwen3Coder => "</function>\n</tool_call>",
            XmlCalls::Glm => "</tool_call>",
        }));
        Ok(Expr::Seq(items))
    }
}

/// A string value as text: anything without `</` and then `closing` (the first letter of
/// its closing tag's name), so that tag ends it.
fn text_value(closing: char) -> Expr {
    let not = |chars: &[char]| {
        Expr::Class(CharClass::new(
            true,
            chars.iter().map(|&c| ClassItem::Char(c)).collect(),
        ))
    };
    Expr::Seq(vec![
        Expr::repeat(
            Expr::group(Expr::Alt(vec![
                not(&['<']),
                Expr::Seq(vec![Expr::literal("<"), not(&['/', '<'])]),
                Expr::Seq(vec![Expr::literal("</"), not(&[closing, '<'])]),
            ])),
            0,
            None,
        ),
        Expr::optional(Expr::group(Expr::Alt(vec![
            Expr::literal("<"),
            Expr::literal("</"),
        ]))),
    ])
}

/// A region whose captures are the function's name and then (key, value) pairs.
fn region(body: Pat, types: &Arc<ParameterTypes>, newlines_are_layout: bool) -> Region {
    let types = Arc::clone(types);
    Region {
        body,
        decode: Arc::new(move |captures| {
            let (name, pairs) = captures.split_first()?;
            let name = name.trim();
            if name.is_empty() || name.contains(['<', '>']) || name.contains(char::is_whitespace) {
                return None;
            }
            if pairs.len() % 2 != 0 {
                return None;
            }
            let pairs: Vec<(String, String)> = pairs
                .chunks(2)
                .map(|pair| {
                    let value = if newlines_are_layout {
                        let value = pair[1].strip_prefix('\n').unwrap_or(&pair[1]);
                        value.strip_suffix('\n').unwrap_or(value)
                    } else {
                        pair[1].as_str()
                    };
                    (pair[0].trim().to_string(), value.to_string())
                })
                .collect();
            let arguments = types.arguments(name, &pairs)?;
            Some(vec![Call::new(name, arguments)])
        }),
    }
}
