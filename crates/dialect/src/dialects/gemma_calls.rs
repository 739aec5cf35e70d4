//! Google's calls, in two spellings of one notation ([`crate::toolkit::gemma_notation`]:
//! bare keys, strings between quote tokens):
//!
//! ```text
//! Gemma 4:       <|channel>thought
//!                The user wants the weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|><|tool_response>
//! FunctionGemma: <start_function_call>call:get_weather{city:<escape>Paris<escape>,days:2}<end_function_call><start_function_response>
//! ```
//!
//! Gemma 4 reasons in a `<|channel>thought … <channel|>` channel; channel tokens left
//! over are layout, as llama.cpp reads them: an empty thought (`<|channel>thought\n<channel|>`,
//! anywhere), a lone `<|channel>` or `<channel|>`. FunctionGemma does not reason.
//!
//! The model ends a turn that calls with the marker where the results will go
//! (`<|tool_response>`, `<start_function_response>`): it is layout, and a stop. The grammar
//! writes each declared parameter in key order (the templates sort them), a string between
//! quote tokens (an enum of strings as one of them), a number, boolean or null as JSON
//! writes it, and arrays and objects as any value of the notation. A quoted value whose
//! parameter the schema types otherwise (FunctionGemma's `count:<escape>42<escape>` for an
//! integer) is read as that type.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{declared_parameters, string_enum};
use crate::error::DialectError;
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::gemma_notation::{Notation, FUNCTION_GEMMA, GEMMA4};
use crate::toolkit::grammar_parts::{
    argument_chain, forced_after_reasoning, none_of, one_or_more, words, ws, Argument,
};
use crate::toolkit::native::{after_open, reasoning_tags, Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region};
use crate::toolkit::typed_args::ParameterTypes;

const CHANNEL_OPEN: &str = "<|channel>";
const THOUGHT: &str = "<|channel>thought";
const THOUGHT_CLOSE: &str = "<channel|>";
/// The rule for any value of the notation.
const VALUE: &str = "notation-value";

/// The spellings; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmaCalls {
    Gemma4,
    FunctionGemma,
}

/// What a spelling writes around a call.
struct Spelling {
    call_open: &'static str,
    call_close: &'static str,
    /// Where the results will go: the model ends a turn that calls with it.
    response: &'static str,
    notation: Notation,
}

impl GemmaCalls {
    fn spelling(self) -> Spelling {
        match self {
            GemmaCalls::Gemma4 => Spelling {
                call_open: "<|tool_call>",
                call_close: "<tool_call|>",
                response: "<|tool_response>",
                notation: GEMMA4,
            },
            GemmaCalls::FunctionGemma => Spelling {
                call_open: "<start_function_call>",
                call_close: "<end_function_call>",
                response: "<start_function_response>",
                notation: FUNCTION_GEMMA,
            },
        }
    }

    fn reasons(self) -> bool {
        self == GemmaCalls::Gemma4
    }
}

impl Native for GemmaCalls {
    fn name(&self) -> &'static str {
        match self {
            GemmaCalls::Gemma4 => "gemma4",
            GemmaCalls::FunctionGemma => "functiongemma",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let spelling = self.spelling();
        let mut grammar = Grammar::new("root");
        grammar.set_rule(VALUE, any_value(spelling.notation));
        let calls = tools
            .iter()
            .enumerate()
            .map(|(at, tool)| call(&mut grammar, &format!("arguments-{at}"), tool, &spelling))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let calls = one_or_more(Expr::group(Expr::Alt(calls)), ws(), parallel);
        let root = if self.reasons() {
            forced_after_reasoning(forced, (THOUGHT, THOUGHT_CLOSE), calls)
        } else {
            calls
        };
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[self.spelling().call_open])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let Spelling {
            call_open,
            call_close,
            response,
            notation,
        } = self.spelling();
        // A model may leave `call` out (`<|tool_call>:get_weather{…}`), as vLLM reads it.
        let body = Pat::Seq(vec![
            Pat::opt("call"),
            Pat::lit(":"),
            Pat::until("{", 256),
            Pat::until(format!("}}{call_close}"), MAX_REGION),
        ]);
        let types = ParameterTypes::new(tools);
        let region = Region {
            body,
            decode: Arc::new(move |captures| {
                let [name, arguments] = captures else {
                    return None;
                };
                let name = name.trim();
                if name.is_empty()
                    || name.contains(['<', '>', '}'])
                    || name.contains(char::is_whitespace)
                {
                    return None;
                }
                let arguments = notation.parse_object(&format!("{{{arguments}}}"))?;
                let arguments = serde_json::to_string(&Value::Object(arguments)).ok()?;
                Some(vec![Call::new(name, types.retyped(name, arguments))])
            }),
        };
        let layout = |text: String| (text, Action::Layout);
        let mut markers = vec![
            (call_open.into(), Action::Call(region)),
            layout(response.into()),
        ];
        if self.reasons() {
            markers.extend([
                reasoning_tags(&format!("{THOUGHT}\n"), THOUGHT_CLOSE),
                reasoning_tags(THOUGHT, THOUGHT_CLOSE),
                layout(format!("{THOUGHT}\n{THOUGHT_CLOSE}")),
                layout(format!("{THOUGHT}{THOUGHT_CLOSE}")),
                layout(CHANNEL_OPEN.into()),
                layout(THOUGHT_CLOSE.into()),
            ]);
        }
        markers
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        if self.reasons() {
            after_open(prompt, THOUGHT, THOUGHT_CLOSE)
        } else {
            Start::Content
        }
    }

    fn call_example(&self) -> Option<&'static str> {
        Some(match self {
            GemmaCalls::Gemma4 => {
                "<|tool_call>call:NAME{text:<|\"|>a string<|\"|>,number:1}<tool_call|>"
            }
            GemmaCalls::FunctionGemma => {
                "<start_function_call>call:NAME{text:<escape>a string<escape>,number:1}<end_function_call>"
            }
        })
    }

    fn stops(&self) -> Vec<String> {
        vec![self.spelling().response.into()]
    }
}

/// One call of `tool`: its declared parameters in key order, joined by `,`.
fn call(
    grammar: &mut Grammar,
    prefix: &str,
    tool: &Tool,
    spelling: &Spelling,
) -> Result<Expr, DialectError> {
    let notation = spelling.notation;
    let mut parameters = declared_parameters(tool)?;
    parameters.sort_by(|a, b| a.0.cmp(&b.0));
    let arguments: Vec<Argument> = parameters
        .into_iter()
        .map(|(key, schema, required)| Argument {
            written: Expr::Seq(vec![
                Expr::literal(format!("{key}:")),
                value(&schema, notation),
            ]),
            required,
        })
        .collect();
    Ok(Expr::Seq(vec![
        Expr::literal(format!("{}call:{}{{", spelling.call_open, tool.name())),
        argument_chain(grammar, prefix, &arguments, ",", "}"),
        Expr::literal(spelling.call_close),
    ]))
}

/// A value of `schema` in the notation.
fn value(schema: &Value, notation: Notation) -> Expr {
    let strings = string_enum(schema);
    if let Some(strings) = strings {
        let quoted = strings
            .into_iter()
            .map(|text| Expr::literal(notation.write_value(&Value::String(text.to_owned()))))
            .collect();
        return Expr::group(Expr::Alt(quoted));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => string(notation),
        Some("integer" | "number" | "boolean" | "null") => Expr::Json(schema.clone()),
        _ => Expr::reference(VALUE),
    }
}

/// Any value of the notation.
fn any_value(notation: Notation) -> Expr {
    let any = || Expr::reference(VALUE);
    let key = Expr::repeat(
        Expr::Class(CharClass::new(
            true,
            ":,{}[]<\"\n ".chars().map(ClassItem::Char).collect(),
        )),
        1,
        Some(256),
    );
    let member = Expr::Seq(vec![key, Expr::literal(":"), any()]);
    let list = |open: &str, item: Expr, close: &str| {
        Expr::Seq(vec![
            Expr::literal(open),
            Expr::optional(Expr::group(Expr::Seq(vec![
                item.clone(),
                Expr::repeat(
                    Expr::group(Expr::Seq(vec![Expr::literal(","), item])),
                    0,
                    None,
                ),
            ]))),
            Expr::literal(close),
        ])
    };
    Expr::group(Expr::Alt(vec![
        string(notation),
        Expr::Json(serde_json::json!({"type": ["number", "boolean", "null"]})),
        list("[", any(), "]"),
        list("{", member, "}"),
    ]))
}

/// A string between quote tokens: any text without the quote token. Text that starts the
/// token (for `<|"|>`: `<`, `<|`, `<|"`, `<|"|`) stands only before another `<` or at the
/// end.
fn string(notation: Notation) -> Expr {
    let quote = notation.quote;
    let first = quote.chars().next().unwrap_or('<');
    let starts: Vec<&str> = quote
        .char_indices()
        .skip(1)
        .map(|(at, _)| &quote[..at])
        .collect();
    let partial = || {
        Expr::group(Expr::Alt(
            starts.iter().map(|start| Expr::literal(*start)).collect(),
        ))
    };
    let broken = starts
        .iter()
        .map(|start| {
            let next = quote[start.len()..].chars().next().unwrap_or(first);
            Expr::Seq(vec![Expr::literal(*start), none_of([next, first])])
        })
        .collect();
    let group = Expr::group(Expr::Alt(vec![
        none_of([first]),
        Expr::Seq(vec![
            Expr::repeat(partial(), 0, None),
            Expr::group(Expr::Alt(broken)),
        ]),
    ]));
    Expr::Seq(vec![
        Expr::literal(quote),
        Expr::repeat(group, 0, None),
        Expr::repeat(partial(), 0, None),
        Expr::literal(quote),
    ])
}
