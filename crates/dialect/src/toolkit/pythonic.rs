//! Pythonic call lists `[f(a=1), g(b='x')]` as a grammar over the tools' schemas, for the
//! families trained to write them: Llama 3.2 / 4 zero-shot, LFM2 (inside
//! `<|tool_call_start|>…<|tool_call_end|>`), MiniCPM3, OLMo 3 and Gemma 3. Reading Python
//! syntax is [`crate::toolkit::pycall`]'s; here its calls become [`Call`]s.

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::declared_parameters;
use crate::error::DialectError;
use crate::toolkit::call_json::object_text;
use crate::toolkit::grammar_parts::{argument_chain, Argument};
use crate::toolkit::pattern::Call;
use crate::toolkit::pycall::{parse_calls, PyCall};

/// `[f(a=…, b=…), …]` ([`call_list`]), for the families whose calls are bare lists in the
/// content (Llama 3.2 / 4 zero-shot, Gemma 3).
pub fn list_grammar(tools: &[&Tool], parallel: bool) -> Result<Grammar, DialectError> {
    let mut grammar = Grammar::new("root");
    let root = call_list(&mut grammar, tools, "", parallel)?;
    grammar.set_rule("root", root);
    Ok(grammar)
}

/// What switches [`list_grammar`] on: `[<name>(` for each tool, so a bracket in free text
/// does not start a call.
pub fn list_triggers(tools: &[&Tool]) -> Vec<Trigger> {
    tools
        .iter()
        .map(|tool| Trigger::Word(format!("[{}(", tool.name())))
        .collect()
}

/// `{open}[f(a=…, b=…), …]`: each tool's parameters as keyword arguments in schema order,
/// optional ones maybe left out; values as JSON (which Python reads), but `True`/`False`/
/// `None` where the schema says boolean or null. More than one call only with `parallel`.
/// Adds its rules to `grammar` and gives the list's expression.
pub fn call_list(
    grammar: &mut Grammar,
    tools: &[&Tool],
    open: &str,
    parallel: bool,
) -> Result<Expr, DialectError> {
    call_sequence(grammar, tools, (&format!("{open}["), ", ", "]"), parallel)
}

/// Calls one after another, Python call syntax each: the first after `open`, with
/// `parallel` any number more each after `separator`, then `close`.
pub fn call_sequence(
    grammar: &mut Grammar,
    tools: &[&Tool],
    (open, separator, close): (&str, &str, &str),
    parallel: bool,
) -> Result<Expr, DialectError> {
    let arguments = tools_arguments(grammar, tools)?;
    let mut list = vec![call_alternatives(open, tools, &arguments)];
    if parallel {
        grammar.set_rule("call", call_alternatives("", tools, &arguments));
        list.push(Expr::repeat(
            Expr::group(Expr::Seq(vec![
                Expr::literal(separator),
                Expr::reference("call"),
            ])),
            0,
            None,
        ));
    }
    list.push(Expr::literal(close));
    Ok(Expr::Seq(list))
}

/// Each tool's keyword arguments ([`pythonic_arguments`]), in the order of `tools`.
pub fn tools_arguments(grammar: &mut Grammar, tools: &[&Tool]) -> Result<Vec<Expr>, DialectError> {
    tools
        .iter()
        .enumerate()
        .map(|(at, tool)| pythonic_arguments(grammar, &format!("arguments-{at}"), tool))
        .collect()
}

/// One alternative per tool: `{open}name(`, then its `arguments` ([`tools_arguments`]).
pub fn call_alternatives(open: &str, tools: &[&Tool], arguments: &[Expr]) -> Expr {
    let alternatives = tools
        .iter()
        .zip(arguments)
        .map(|(tool, arguments)| {
            Expr::Seq(vec![
                Expr::literal(format!("{open}{}(", tool.name())),
                arguments.clone(),
            ])
        })
        .collect();
    Expr::group(Expr::Alt(alternatives))
}

/// The calls of a block written one per line (MiniCPM3, OLMo 3): each line that is not
/// blank one Python call (or a list of them); `None` when a line holds none, or no line does.
pub fn calls_by_line(block: &str) -> Option<Vec<Call>> {
    let mut calls = Vec::new();
    for line in block.lines().filter(|line| !line.trim().is_empty()) {
        calls.extend(python_calls_of(parse_calls(line)?)?);
    }
    (!calls.is_empty()).then_some(calls)
}

/// Calls read from Python syntax, their arguments as JSON text.
pub fn python_calls_of(calls: Vec<PyCall>) -> Option<Vec<Call>> {
    calls
        .into_iter()
        .map(|(name, arguments)| Some(Call::new(name, object_text(arguments)?)))
        .collect()
}

/// A call's keyword arguments after `name(`, then `)`: its parameters in schema order,
/// each `key=value`, the value a Python literal ([`python_value`]).
pub fn pythonic_arguments(
    grammar: &mut Grammar,
    prefix: &str,
    tool: &Tool,
) -> Result<Expr, DialectError> {
    keyword_arguments(grammar, prefix, tool, python_value)
}

/// A call's keyword arguments after `name(`, then `)`: its parameters in schema order,
/// each `key=value`, the value as `value` writes one of the parameter's schema.
pub fn keyword_arguments(
    grammar: &mut Grammar,
    prefix: &str,
    tool: &Tool,
    value: impl Fn(&Value) -> Expr,
) -> Result<Expr, DialectError> {
    let arguments: Vec<Argument> = declared_parameters(tool)?
        .into_iter()
        .map(|(key, schema, required)| Argument {
            written: Expr::Seq(vec![Expr::literal(format!("{key}=")), value(&schema)]),
            required,
        })
        .collect();
    Ok(argument_chain(grammar, prefix, &arguments, ", ", ")"))
}

/// A Python literal for `schema`: `True`/`False`/`None` for booleans and null, JSON
/// otherwise.
fn python_value(schema: &Value) -> Expr {
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => Expr::group(Expr::Alt(vec![
            Expr::literal("True"),
            Expr::literal("False"),
        ])),
        Some("null") => Expr::literal("None"),
        _ => Expr::Json(schema.clone()),
    }
}
