//! Mistral: calls after the `[TOOL_CALLS]` control token, in one of two syntaxes by
//! tokenizer version.
//!
//! - v3 (Mistral 7B v0.3, Nemo, Small 3.1): a JSON list,
//!   `[TOOL_CALLS][{"name": "f", "arguments": {…}, "id": "a1B2c3D4e"}, …]`;
//! - v11+ (Small 3.2, Magistral, Devstral, Ministral 3): one marker per call,
//!   `[TOOL_CALLS]f[ARGS]{…}`, or `[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{…}`.
//!
//! The parser is [`FramedParser`]'s and reads both, whatever the template: `[TOOL_CALLS]`
//! opens a call region that is a JSON list (or object) of calls, or a name, maybe
//! `[CALL_ID]` and an id, `[ARGS]` and an arguments object. `[THINK]…[/THINK]` at the
//! start (Magistral, Ministral 3 Reasoning) is reasoning. A call comes out whole, with the
//! model's id when it wrote one; a region that is no call (broken JSON, an output ending
//! inside one) is content as written, marker included. A marker inside a JSON string is
//! text.
//!
//! The dialect renders the model's own template, which lists the tools in
//! `[AVAILABLE_TOOLS]`. Mistral's templates raise on any call id that is not 9 alphanumerics
//! (some take the last 9 of a longer one), so ids in the history that do not have that shape
//! are replaced by 9 alphanumerics derived from them ([`mistral_id`]), the same for a call
//! and the result that answers it. Which syntax the grammar asks for is read from the
//! template ([`Native::as_written_by`]): one that writes past calls with `[ARGS]` is v11.
//! Grammar: lazy on `[TOOL_CALLS]` for `auto`, from the first byte for `required` and a
//! named function; one call, or with `parallel_tool_calls` several (more list items, or
//! more `[TOOL_CALLS]` markers). Since every id is mapped on its way back into the history,
//! the ids a server generates for calls without one may have any shape
//! ([`IdFormat::Mistral`] keeps them as they are).
//!
//! [`FramedParser`]: crate::toolkit::framed::FramedParser

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{checked_parameters, ChatTemplate};
use crate::error::DialectError;
use crate::tool_ids::IdFormat;
use crate::toolkit::call_json::{self, CallKeys};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{name_first_call, one_or_more, words};
use crate::toolkit::history::default_histories;
use crate::toolkit::native::{reasoning_tags, rendered_past_call, Native};
use crate::toolkit::pattern::{Call, Pat, Region};

/// What opens every call (or list of calls).
pub const TOOL_CALLS: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

/// The longest name or id read before the region is taken for no call.
const MAX_NAME: usize = 256;

/// v3's call objects, with the model's id.
const KEYS: CallKeys = CallKeys {
    name: "name",
    arguments: &["arguments", "parameters"],
    id: Some("id"),
};

/// Mistral's call syntax for the grammar, by tokenizer version; see the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mistral {
    /// `[TOOL_CALLS][{"name": …, "arguments": …}, …]`.
    #[default]
    V3,
    /// `[TOOL_CALLS]name[ARGS]{…}` per call, maybe with `[CALL_ID]id` before `[ARGS]`.
    V11,
}

impl Native for Mistral {
    fn name(&self) -> &'static str {
        "mistral"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        let root = match self {
            Mistral::V11 => {
                grammar.set_rule("call", v11_call(tools)?);
                one_or_more(Expr::reference("call"), Expr::literal(""), parallel)
            }
            Mistral::V3 => {
                grammar.set_rule("call", name_first_call(tools, "arguments")?);
                Expr::Seq(vec![
                    Expr::literal(format!("{TOOL_CALLS}[")),
                    one_or_more(Expr::reference("call"), Expr::literal(", "), parallel),
                    Expr::literal("]"),
                ])
            }
        };
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[TOOL_CALLS])
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        let named = |head: Vec<Pat>| Pat::Seq(head.into_iter().chain([Pat::Json]).collect());
        let body = Pat::Seq(vec![
            Pat::Ws,
            Pat::Alt(vec![
                named(vec![
                    Pat::name(CALL_ID, MAX_NAME),
                    Pat::name(ARGS, MAX_NAME),
                ]),
                named(vec![Pat::name(ARGS, MAX_NAME)]),
                Pat::Json,
            ]),
        ]);
        let region = Region {
            body,
            decode: Arc::new(decode),
        };
        vec![
            (TOOL_CALLS.into(), Action::Call(region)),
            reasoning_tags("[THINK]", "[/THINK]"),
        ]
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let mut histories = default_histories(request)?;
        histories
            .iter_mut()
            .for_each(|messages| mistral_ids(messages));
        Ok(histories)
    }

    fn as_written_by(&self, template: &ChatTemplate) -> Option<Mistral> {
        Some(if writes_args_marker(template) {
            Mistral::V11
        } else {
            Mistral::V3
        })
    }
}

/// `[TOOL_CALLS]` then one tool's name, maybe `[CALL_ID]` and 9 alphanumerics, `[ARGS]`
/// and its arguments.
fn v11_call(tools: &[&Tool]) -> Result<Expr, DialectError> {
    let alphanumeric = CharClass::new(
        false,
        vec![
            ClassItem::Range('a', 'z'),
            ClassItem::Range('A', 'Z'),
            ClassItem::Range('0', '9'),
        ],
    );
    let call_id = Expr::Seq(vec![
        Expr::literal(CALL_ID),
        Expr::repeat(Expr::Class(alphanumeric), 9, Some(9)),
    ]);
    let alternatives = tools
        .iter()
        .map(|tool| {
            Ok(Expr::Seq(vec![
                Expr::literal(tool.name()),
                Expr::optional(Expr::group(call_id.clone())),
                Expr::literal(ARGS),
                Expr::Json(checked_parameters(tool)?),
            ]))
        })
        .collect::<Result<Vec<_>, DialectError>>()?;
    Ok(Expr::Seq(vec![
        Expr::literal(TOOL_CALLS),
        Expr::group(Expr::Alt(alternatives)),
    ]))
}

/// A region's calls: `name, [id,] arguments` for v11, or v3's list (or one object).
fn decode(captures: &[String]) -> Option<Vec<Call>> {
    match captures {
        [list] => call_json::calls(list, KEYS),
        [name, arguments] => Some(vec![named_call(name, None, arguments)?]),
        [name, id, arguments] => Some(vec![named_call(name, Some(id), arguments)?]),
        _ => None,
    }
}

/// A v11 call, whose arguments must be an object.
fn named_call(name: &str, id: Option<&String>, arguments: &str) -> Option<Call> {
    let arguments = serde_json::from_str::<Value>(arguments)
        .ok()
        .filter(Value::is_object)?;
    Some(Call {
        id: id.cloned(),
        ..Call::new(name, call_json::arguments_text(&arguments)?)
    })
}

/// Whether the template writes a past call as `name[ARGS]{…}` (v11+).
fn writes_args_marker(template: &ChatTemplate) -> bool {
    rendered_past_call(template)
        .is_some_and(|text| text.contains("probe_fn[ARGS]") || text.contains("probe_fn[CALL_ID]"))
}

/// Replaces, in place, every call id and `tool_call_id` that is not 9 alphanumerics by
/// [`mistral_id`]'s.
fn mistral_ids(messages: &mut [Value]) {
    for message in messages {
        if let Some(Value::String(id)) = message.get_mut("tool_call_id") {
            *id = mistral_id(id);
        }
        if let Some(Value::Array(calls)) = message.get_mut("tool_calls") {
            for call in calls {
                if let Some(Value::String(id)) = call.get_mut("id") {
                    *id = mistral_id(id);
                }
            }
        }
    }
}

/// `id` itself when it is 9 alphanumerics, else 9 alphanumerics from its FNV-1a hash.
pub fn mistral_id(id: &str) -> String {
    if IdFormat::Mistral.accepts(id) {
        return id.to_string();
    }
    const ALPHANUMERICS: &[u8; 62] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let digit = ALPHANUMERICS[(hash % 62) as usize];
            hash /= 62;
            char::from(digit)
        })
        .collect()
}
