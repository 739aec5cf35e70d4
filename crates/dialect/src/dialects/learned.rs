//! The dialect of a template that renders tool calls in a syntax no family here knows,
//! built from what [`crate::toolkit::learn`] found by rendering it: the template shows the
//! tools itself (as every [`Native`] family's does), the grammar writes the learned
//! markers around the learned call shape over the tools' schemas, and the parser is a
//! [`FramedParser`] with the learned markers.
//!
//! A JSON call is read leniently (arguments as an object or JSON text); a Python call as
//! [`pycall`] reads it, with strings the template printed bare (`city=Paris`) quoted first
//! where it does so, a comma being the string's own unless one of the tool's declared
//! parameters follows it (ToolACE's `location=Paris, France, unit=celsius`,
//! [`quote_bare_strings`]). The grammar writes a Python call's string arguments the way the
//! template does (`'Paris'`, `Paris`, `"Paris"`) so the model writes what it was trained
//! on; other values it writes as JSON, which the reader takes too. A bare string holds no
//! quote, bracket, `,` or line break, and does not start like another literal (a digit,
//! `-`), so it reads back whole; one that spells `True` or `None` reads as that constant,
//! as it does in the template's own renders. A lazy grammar needs a word to start at: the
//! opening marker, or for a bare Python list its `[` (so a bracket in free text starts it
//! too); a syntax with neither is refused at learning. A forced grammar may start with the layout the template writes
//! before the opening marker (HyperCLOVA X's ` -> tool/function_call`).

use std::sync::Arc;

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{string_enum, ChatTemplate};
use crate::error::DialectError;
use crate::toolkit::call_json::arguments_text;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{
    call_objects, json_name, none_of, one_or_more, per_tool, reasoning_then, words,
};
use crate::toolkit::history::{
    history_with_object_arguments, history_with_string_arguments, with_empty_content,
};
use crate::toolkit::learn::{learn, quote_bare_strings, refusal, Learned, Shape, Strings};
use crate::toolkit::native::{after_open, reasoning_tags, Native, Start};
use crate::toolkit::pattern::{Call, Pat, Region, MAX_PROSE};
use crate::toolkit::pycall::{parse_calls, Bracket, BracketScanner};
use crate::toolkit::pythonic::{keyword_arguments, python_calls_of, pythonic_arguments};
use crate::toolkit::typed_args::ParameterTypes;
use toolbridge_template::ArgumentsForm;

/// A dialect learned from one template; see the module docs.
#[derive(Debug, Clone)]
pub struct LearnedDialect {
    learned: Learned,
    /// The reasoning's closing marker, kept for the life of the program: [`Start`] holds
    /// a `&'static str`, and a template is learned once per model served.
    reasoning_close: Option<&'static str>,
}

impl LearnedDialect {
    /// Learns `template`'s call syntax, or says why it cannot.
    pub fn learn(template: &ChatTemplate) -> Result<LearnedDialect, DialectError> {
        let learned = learn(template)?;
        if learned.open.is_empty() && !matches!(learned.shape, Shape::Python { list: true }) {
            return Err(refusal(
                "the calls have no opening marker to start a lazy grammar at",
            ));
        }
        let reasoning_close = learned
            .reasoning
            .as_ref()
            .map(|(_, close)| &*Box::leak(close.clone().into_boxed_str()));
        Ok(LearnedDialect {
            learned,
            reasoning_close,
        })
    }

    /// What was learned.
    pub fn learned(&self) -> &Learned {
        &self.learned
    }

    /// One call of each tool, as the grammar writes it.
    fn call(&self, grammar: &mut Grammar, tools: &[&Tool]) -> Result<Expr, DialectError> {
        match &self.learned.shape {
            Shape::Json {
                name, arguments, ..
            } => {
                let calls = call_objects(tools, (name, arguments), None)?;
                Ok(Expr::group(Expr::Alt(calls)))
            }
            Shape::NameAsKey { .. } => per_tool(tools, |_, name, arguments| {
                Expr::Seq(vec![
                    Expr::literal(format!("{{\"{name}\": ")),
                    arguments,
                    Expr::literal("}"),
                ])
            }),
            Shape::Python { .. } => {
                let calls = tools
                    .iter()
                    .enumerate()
                    .map(|(at, tool)| {
                        let prefix = format!("arguments-{at}");
                        let arguments = match self.learned.strings {
                            Strings::Double => pythonic_arguments(grammar, &prefix, tool)?,
                            strings => keyword_arguments(grammar, &prefix, tool, |schema| {
                                python_value(schema, strings)
                            })?,
                        };
                        Ok(Expr::Seq(vec![
                            Expr::literal(format!("{}(", json_name(tool)?)),
                            arguments,
                        ]))
                    })
                    .collect::<Result<Vec<_>, DialectError>>()?;
                Ok(Expr::group(Expr::Alt(calls)))
            }
        }
    }

    /// The calls between the markers, in the learned layout.
    fn calls(
        &self,
        grammar: &mut Grammar,
        tools: &[&Tool],
        parallel: bool,
    ) -> Result<Expr, DialectError> {
        let learned = &self.learned;
        let marker = |text: &str| (!text.is_empty()).then(|| Expr::literal(text));
        let framed = |inner: Expr| {
            let (open, close) = (marker(&learned.open), marker(&learned.close));
            Expr::Seq(open.into_iter().chain([inner]).chain(close).collect())
        };
        let call = self.call(grammar, tools)?;
        Ok(if learned.shape.is_list() {
            framed(Expr::Seq(vec![
                Expr::literal("["),
                one_or_more(call, Expr::literal(", "), parallel),
                Expr::literal("]"),
            ]))
        } else if learned.each_framed {
            let separator = Expr::literal(learned.separator.clone());
            one_or_more(Expr::group(framed(call)), separator, parallel)
        } else {
            framed(one_or_more(
                call,
                Expr::literal(learned.separator.clone()),
                parallel,
            ))
        })
    }

    /// The call region after the opening marker; bare strings are told apart by `tools`'
    /// declared parameters ([`quote_bare_strings`]).
    fn region(&self, tools: &[&Tool]) -> Region {
        let close = self.learned.close.trim();
        let bare =
            (self.learned.strings == Strings::Bare).then(|| Arc::new(ParameterTypes::new(tools)));
        match self.learned.shape.clone() {
            Shape::Python { .. } => Region {
                body: if close.is_empty() {
                    Pat::Alt(vec![Pat::Literal, Pat::Rest])
                } else {
                    Pat::Alt(vec![Pat::until(close, MAX_PROSE), Pat::Rest])
                },
                decode: Arc::new(move |captures| python_calls(captures.first()?, bare.as_deref())),
            },
            shape => {
                let mut body = vec![Pat::Ws, Pat::Json];
                let separator = self.learned.separator.trim();
                if !shape.is_list() && !self.learned.each_framed {
                    body.push(Pat::repeat(Pat::Seq(vec![
                        Pat::Ws,
                        Pat::opt(if separator.is_empty() { "," } else { separator }),
                        Pat::Ws,
                        Pat::Json,
                    ])));
                }
                if !close.is_empty() {
                    body.extend([Pat::Ws, Pat::opt(close)]);
                }
                Region {
                    body: Pat::Seq(body),
                    decode: Arc::new(move |captures| json_calls(captures, &shape)),
                }
            }
        }
    }
}

impl Native for LearnedDialect {
    fn name(&self) -> &'static str {
        "learned"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        let mut grammar = Grammar::new("root");
        let mut calls = self.calls(&mut grammar, tools, parallel)?;
        if forced && !self.learned.lead.is_empty() {
            let lead = Expr::optional(Expr::literal(self.learned.lead.clone()));
            calls = Expr::Seq(vec![lead, calls]);
        }
        let root = match &self.learned.reasoning {
            Some((open, close)) if forced => reasoning_then(open, close, calls),
            _ => calls,
        };
        grammar.set_rule("root", root);
        Ok(grammar)
    }

    fn triggers(&self) -> Vec<Trigger> {
        // A bare list has no marker: its bracket starts the grammar.
        let open = if self.learned.open.is_empty() {
            "["
        } else {
            &self.learned.open
        };
        words(&[open])
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        let mut markers = vec![(
            self.learned.open.trim().to_string(),
            Action::Call(self.region(tools)),
        )];
        if let Some((open, close)) = &self.learned.reasoning {
            markers.push(reasoning_tags(open, close));
        }
        markers
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        if self.learned.open.is_empty() {
            return Start::AfterMarker("");
        }
        match (&self.learned.reasoning, self.reasoning_close) {
            (Some((open, _)), Some(close)) => after_open(prompt, open, close),
            _ => Start::Content,
        }
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let objects = history_with_object_arguments(request)?;
        let strings = history_with_string_arguments(request)?;
        let histories = match self.learned.arguments {
            ArgumentsForm::String => vec![strings, objects],
            _ => vec![objects, strings],
        };
        let empty: Vec<Vec<Value>> = histories.iter().cloned().map(with_empty_content).collect();
        Ok(histories.into_iter().chain(empty).collect())
    }
}

/// A value of `schema` with a string written as `strings`: a plain string or a string
/// `enum` so, anything else as JSON.
fn python_value(schema: &Value, strings: Strings) -> Expr {
    let choices = string_enum(schema);
    if let Some(choices) = choices {
        let written: Option<Vec<Expr>> = choices
            .into_iter()
            .map(|text| Some(Expr::literal(string_literal(text, strings)?)))
            .collect();
        return written.map_or(Expr::Json(schema.clone()), |written| {
            Expr::group(Expr::Alt(written))
        });
    }
    let plain = schema.as_object().is_some_and(|members| {
        members.get("type") == Some(&Value::from("string"))
            && members
                .keys()
                .all(|key| ["type", "description", "title", "examples"].contains(&key.as_str()))
    });
    match strings {
        Strings::Single if plain => Expr::Seq(vec![
            Expr::literal("'"),
            Expr::repeat(
                Expr::group(Expr::Alt(vec![
                    none_of("'\\\n".chars()),
                    Expr::Seq(vec![
                        Expr::literal("\\"),
                        Expr::Class(CharClass::new(
                            false,
                            "\\'\"nt".chars().map(ClassItem::Char).collect(),
                        )),
                    ]),
                ])),
                0,
                None,
            ),
            Expr::literal("'"),
        ]),
        Strings::Bare if plain => Expr::Seq(vec![
            none_of(BARE_START.chars()),
            Expr::repeat(none_of(BARE_STOP.chars()), 0, None),
        ]),
        _ => Expr::Json(schema.clone()),
    }
}

/// What a bare string holds none of: what ends its argument, or would be read as the
/// start of a quoted or bracketed literal.
const BARE_STOP: &str = "'\"()[]{},\n";
/// What a bare string does not start with: besides [`BARE_STOP`], what starts a number
/// or layout.
const BARE_START: &str = "'\"()[]{},\n -0123456789";

/// `text` as a string literal written as `strings`; `None` where a bare string could not
/// hold it.
fn string_literal(text: &str, strings: Strings) -> Option<String> {
    match strings {
        Strings::Double => serde_json::to_string(text).ok(),
        Strings::Single => Some(format!(
            "'{}'",
            text.replace('\\', "\\\\").replace('\'', "\\'")
        )),
        Strings::Bare => (!text.is_empty()
            && !text.starts_with(|c| BARE_START.contains(c))
            && !text.contains(|c| BARE_STOP.contains(c)))
        .then(|| text.to_string()),
    }
}

/// The calls of JSON captures in `shape`, all calls, at least one.
fn json_calls(captures: &[String], shape: &Shape) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    for capture in captures {
        let value = serde_json::from_str::<Value>(capture).ok()?;
        let items = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        for item in &items {
            calls.push(json_call(item, shape)?);
        }
    }
    (!calls.is_empty()).then_some(calls)
}

/// One JSON call object in `shape`.
fn json_call(item: &Value, shape: &Shape) -> Option<Call> {
    let members = item.as_object()?;
    let (name, arguments) = match shape {
        Shape::Json {
            name, arguments, ..
        } => (
            members.get(name)?.as_str()?,
            members.get(arguments).unwrap_or(&Value::Null),
        ),
        _ if members.len() == 1 => {
            let (name, arguments) = members.iter().next()?;
            (name.as_str(), arguments)
        }
        _ => return None,
    };
    if name.is_empty() {
        return None;
    }
    Some(Call::new(name, arguments_text(arguments)?))
}

/// Python calls: a list `[f(a=1)]`, or calls one after another (`f(a=1)\ng(b=2)`),
/// separated by blanks or commas; with `bare_strings`, the declared parameters, strings
/// may be written bare.
fn python_calls(text: &str, bare_strings: Option<&ParameterTypes>) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    let mut rest = text.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    while !rest.is_empty() {
        let opening = if rest.starts_with('[') {
            0
        } else {
            rest.find('(')?
        };
        let length = match BracketScanner::new().push(&rest[opening..]) {
            Bracket::Complete { rest_at } => opening + rest_at,
            _ => return None,
        };
        let written = &rest[..length];
        let read = parse_calls(written)
            .or_else(|| parse_calls(&quote_bare_strings(written, bare_strings?)))?;
        calls.extend(python_calls_of(read)?);
        rest = rest[length..].trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    }
    (!calls.is_empty()).then_some(calls)
}
