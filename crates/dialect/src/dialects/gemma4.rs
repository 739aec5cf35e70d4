//! Gemma 4: calls between `<|tool_call>` and `<tool_call|>` tokens, arguments in Gemma's
//! own notation ([`crate::toolkit::gemma_notation`]: bare keys, strings between `<|"|>`),
//! reasoning in a `<|channel>thought … <channel|>` channel:
//!
//! ```text
//! <|channel>thought
//! The user wants the weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|><|tool_response>
//! ```
//!
//! Channel tokens left over are layout, as llama.cpp reads them: an empty thought
//! (`<|channel>thought\n<channel|>`, anywhere), a lone `<|channel>` or `<channel|>`.
//!
//! The model ends a turn that calls with `<|tool_response>`, where the results will go: it
//! is layout, and a stop. The grammar writes each declared parameter in key order (the
//! templates sort them), a string between quote tokens (an enum of strings as one of
//! them), a number, boolean or null as JSON writes it, and arrays and objects as any
//! value of the notation.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{declared_parameters, string_enum, DialectError};
use crate::dialects::framed_native::{
    after_open, forced_after_reasoning, none_of, one_or_more, reasoning_tags, words, ws, Native,
    Start,
};
use crate::dialects::pythonic::{argument_chain, Argument};
use crate::toolkit::framed::{Action, Call, Pat, Region, MAX_REGION};
use crate::toolkit::gemma_notation::{parse_object, QUOTE};

const CALL_OPEN: &str = "<|tool_call>";
const CALL_CLOSE: &str = "<tool_call|>";
const RESPONSE: &str = "<|tool_response>";
const CHANNEL_OPEN: &str = "<|channel>";
const THOUGHT: &str = "<|channel>thought";
const THOUGHT_CLOSE: &str = "<channel|>";
/// The rule for any value of the notation.
const VALUE: &str = "notation-value";

/// The Gemma 4 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemma4;

impl Native for Gemma4 {
    fn name(&self) -> &'static str {
        "gemma4"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(VALUE, any_value());
        let calls = tools
            .iter()
            .enumerate()
            .map(|(at, tool)| call(&mut grammar, &format!("arguments-{at}"), tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let calls = one_or_more(Expr::group(Expr::Alt(calls)), ws(), parallel);
        let root = forced_after_reasoning(forced, (THOUGHT, THOUGHT_CLOSE), calls);
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALL_OPEN])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let body = Pat::Seq(vec![
            Pat::lit("call:"),
            Pat::until("{", 256),
            Pat::until(format!("}}{CALL_CLOSE}"), MAX_REGION),
        ]);
        let region = Region {
            body,
            decode: Arc::new(|captures| {
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
                let arguments = parse_object(&format!("{{{arguments}}}"))?;
                let arguments = serde_json::to_string(&Value::Object(arguments)).ok()?;
                Some(vec![Call::new(name, arguments)])
            }),
        };
        let layout = |text: String| (text, Action::Layout);
        vec![
            (CALL_OPEN.into(), Action::Call(region)),
            layout(RESPONSE.into()),
            reasoning_tags(&format!("{THOUGHT}\n"), THOUGHT_CLOSE),
            reasoning_tags(THOUGHT, THOUGHT_CLOSE),
            layout(format!("{THOUGHT}\n{THOUGHT_CLOSE}")),
            layout(format!("{THOUGHT}{THOUGHT_CLOSE}")),
            layout(CHANNEL_OPEN.into()),
            layout(THOUGHT_CLOSE.into()),
        ]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_open(prompt, THOUGHT, THOUGHT_CLOSE)
    }

    fn stops(&self) -> Vec<String> {
        vec![RESPONSE.into()]
    }
}

/// One call of `tool`: its declared parameters in key order, joined by `,`.
fn call(grammar: &mut Grammar, prefix: &str, tool: &Tool) -> Result<Expr, DialectError> {
    let mut parameters = declared_parameters(tool)?;
    parameters.sort_by(|a, b| a.0.cmp(&b.0));
    let arguments: Vec<Argument> = parameters
        .into_iter()
        .map(|(key, schema, required)| Argument {
            written: Expr::Seq(vec![Expr::literal(format!("{key}:")), value(&schema)]),
            required,
        })
        .collect();
    Ok(Expr::Seq(vec![
        Expr::literal(format!("{CALL_OPEN}call:{}{{", tool.name())),
        argument_chain(grammar, prefix, &arguments, ",", "}"),
        Expr::literal(CALL_CLOSE),
    ]))
}

/// A value of `schema` in the notation.
fn value(schema: &Value) -> Expr {
    let strings = string_enum(schema);
    if let Some(strings) = strings {
        let quoted = strings
            .into_iter()
            .map(|text| Expr::literal(format!("{QUOTE}{text}{QUOTE}")))
            .collect();
        return Expr::group(Expr::Alt(quoted));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => string(),
        Some("integer" | "number" | "boolean" | "null") => Expr::Json(schema.clone()),
        _ => Expr::reference(VALUE),
    }
}

/// Any value of the notation.
fn any_value() -> Expr {
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
        string(),
        Expr::Json(serde_json::json!({"type": ["number", "boolean", "null"]})),
        list("[", any(), "]"),
        list("{", member, "}"),
    ]))
}

/// A string between quote tokens: any text without the quote token `<|"|>`. Text that
/// starts the token (`<`, `<|`, `<|"`, `<|"|`) stands only before another `<` or at the
/// end.
fn string() -> Expr {
    let starts = ["<", "<|", "<|\"", "<|\"|"];
    let partial = || {
        Expr::group(Expr::Alt(
            starts.iter().map(|s| Expr::literal(*s)).collect(),
        ))
    };
    let broken = starts
        .iter()
        .zip(['|', '"', '|', '>'])
        .map(|(start, next)| Expr::Seq(vec![Expr::literal(*start), none_of([next, '<'])]))
        .collect();
    let group = Expr::group(Expr::Alt(vec![
        none_of(['<']),
        Expr::Seq(vec![
            Expr::repeat(partial(), 0, None),
            Expr::group(Expr::Alt(broken)),
        ]),
    ]));
    Expr::Seq(vec![
        Expr::literal(QUOTE),
        Expr::repeat(group, 0, None),
        Expr::repeat(partial(), 0, None),
        Expr::literal(QUOTE),
    ])
}
