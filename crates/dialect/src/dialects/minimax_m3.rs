//! MiniMax M3: MiniMax M2's `<invoke>` calls, but every tag follows the `]<]minimax[>[`
//! token and each argument is an element named by its key, objects and arrays nested as
//! elements too ([`crate::toolkit::tag_tree`]):
//!
//! ```text
//! <mm:think>The user wants the weather.</mm:think>]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="get_weather">]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! Reasoning is `<mm:think>…</mm:think>`; the generation prompt opens it when thinking is
//! enabled, and a turn without reasoning starts with a bare `</mm:think>` (which the prompt
//! writes when thinking is disabled, or the model itself), dropped as layout.
//!
//! The grammar writes each declared argument in schema order, required ones always, its
//! value as the template's `to_xml` writes it: a string (or a union that allows one) as
//! text, which may not hold `]<`, the start of the token; an object's properties and an
//! array's `<item>`s as elements; a union as any of its branches; anything else as JSON.

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::{declared_parameters, string_enum};
use crate::error::DialectError;
use crate::toolkit::framed::{Action, MAX_REGION};
use crate::toolkit::grammar_parts::{forced_after_reasoning, grammar_of, text_value, words};
use crate::toolkit::native::{after_open, reasoning_tags, Native, Start};
use crate::toolkit::pattern::{checked_name, Call, Pat, Region};
use crate::toolkit::tag_tree::{branch, TagTree, ITEM};
use crate::toolkit::typed_args::{may_be_string, ParameterTypes};

/// The token before every tag of a call.
const NS: &str = "]<]minimax[>[";
const THINK: (&str, &str) = ("<mm:think>", "</mm:think>");
/// How deep the grammar follows nested objects and arrays before writing JSON.
const MAX_DEPTH: usize = 8;
const MAX_NAME: usize = 256;

/// The MiniMax M3 family.
#[derive(Debug, Clone, Copy)]
pub struct MiniMaxM3;

impl Native for MiniMaxM3 {
    fn name(&self) -> &'static str {
        "minimax_m3"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let invokes = tools
            .iter()
            .map(|tool| invoke(tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let invoke = Expr::group(Expr::Alt(invokes));
        let invokes = if parallel {
            Expr::repeat(invoke, 1, None)
        } else {
            invoke
        };
        let calls = Expr::Seq(vec![
            Expr::literal(format!("{NS}<tool_call>\n")),
            invokes,
            Expr::literal(format!("{NS}</tool_call>")),
        ]);
        Ok(grammar_of(forced_after_reasoning(forced, THINK, calls)))
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[&format!("{NS}<tool_call>")])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let (open, close) = THINK;
        vec![
            (
                format!("{NS}<tool_call>"),
                Action::Call(calls_region(tools)),
            ),
            reasoning_tags(open, close),
            (close.to_string(), Action::Layout),
        ]
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        let (open, close) = THINK;
        after_open(prompt, open, close)
    }

    fn call_example(&self) -> Option<&'static str> {
        Some("]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"NAME\">]<]minimax[>[<PARAMETER>VALUE]<]minimax[>[</PARAMETER>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>")
    }
}

/// The block after its opening token: one or more invokes, each its name and the text of
/// its arguments, read as a tag tree.
fn calls_region(tools: &[&Tool]) -> Region {
    let invoke = || {
        Pat::Seq(vec![
            Pat::Ws,
            Pat::lit(format!("{NS}<invoke name=\"")),
            Pat::until("\">", MAX_NAME),
            Pat::until(format!("{NS}</invoke>"), MAX_REGION),
        ])
    };
    let body = Pat::Seq(vec![
        invoke(),
        Pat::repeat(invoke()),
        Pat::Ws,
        Pat::opt(format!("{NS}</tool_call>")),
    ]);
    let types = Arc::new(ParameterTypes::new(tools));
    Region {
        body,
        decode: Arc::new(move |captures| {
            if captures.len() % 2 != 0 {
                return None;
            }
            let tree = TagTree { prefix: NS };
            captures
                .chunks(2)
                .map(|invoke| {
                    let name = checked_name(&invoke[0])?;
                    let members = tree.members(&invoke[1], types.properties(name))?;
                    Some(Call::new(name, Value::Object(members).to_string()))
                })
                .collect()
        }),
    }
}

/// One call of `tool`, followed by the newline the template writes after each.
fn invoke(tool: &Tool) -> Result<Expr, DialectError> {
    let parameters = declared_parameters(tool)?;
    Ok(Expr::Seq(vec![
        Expr::literal(format!("{NS}<invoke name=\"{}\">", tool.name())),
        elements(parameters.into_iter(), 0),
        Expr::literal(format!("{NS}</invoke>\n")),
    ]))
}

/// An object's declared properties as elements, in schema order, required ones always.
fn members(object: &Value, depth: usize) -> Expr {
    let required = |key: &str| {
        object
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| required.iter().any(|name| name == key))
    };
    let properties = object.get("properties").and_then(Value::as_object);
    let declared = properties
        .into_iter()
        .flatten()
        .map(|(key, schema)| (key.clone(), schema.clone(), required(key)));
    elements(declared, depth)
}

/// Properties `(key, schema, required)` as elements, required ones always.
fn elements(properties: impl Iterator<Item = (String, Value, bool)>, depth: usize) -> Expr {
    let elements = properties.map(|(key, schema, required)| {
        let element = element(&key, value(&schema, depth + 1));
        if required {
            element
        } else {
            Expr::optional(Expr::group(element))
        }
    });
    Expr::Seq(elements.collect())
}

/// Element `tag` around `value`.
fn element(tag: &str, value: Expr) -> Expr {
    Expr::Seq(vec![
        Expr::literal(format!("{NS}<{tag}>")),
        value,
        Expr::literal(format!("{NS}</{tag}>")),
    ])
}

/// A value of `schema` as the template's `to_xml` writes it; see the module docs.
fn value(schema: &Value, depth: usize) -> Expr {
    let strings = string_enum(schema);
    let union = ["anyOf", "oneOf"]
        .iter()
        .find_map(|key| schema.get(*key)?.as_array());
    let object = branch(Some(schema), "object").filter(|object| {
        object
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| !properties.is_empty())
    });
    let items = branch(Some(schema), "array").and_then(|array| array.get("items"));
    match (strings, union, object, items) {
        _ if depth > MAX_DEPTH => Expr::Json(schema.clone()),
        (Some(strings), ..) => {
            Expr::group(Expr::Alt(strings.into_iter().map(Expr::literal).collect()))
        }
        _ if may_be_string(schema) => text_value("]<"),
        (_, Some(branches), ..) if schema.get("type").is_none() => Expr::group(Expr::Alt(
            branches
                .iter()
                .map(|branch| value(branch, depth + 1))
                .collect(),
        )),
        (_, _, Some(object), _) => members(object, depth),
        (.., Some(items)) => {
            Expr::repeat(Expr::group(element(ITEM, value(items, depth + 1))), 0, None)
        }
        _ => Expr::Json(schema.clone()),
    }
}
