//! Llama 3.1 / 3.2 / 3.3: two dialects over one parser ([`Llama3Parser`]).
//!
//! **`llama3`** (JSON calls): the model's own template shows the tools (Llama 3.1's in the
//! first user turn, "Respond in the format {"name": function name, "parameters": …}") and the
//! model answers `{"name": "f", "parameters": {…}}`. The built-in tools `brave_search`,
//! `wolfram_alpha` and `code_interpreter`, when the request declares tools of those names,
//! are passed as the template's `builtin_tools` (which turns on `Environment: ipython` and
//! the `Tools:` line), and the model calls them after `<|python_tag|>`
//! (`brave_search.call(query="…")`, or code for the interpreter), ending its turn with
//! `<|eom_id|>`. Results go back in `ipython` turns, which the template writes for `tool`
//! messages itself. Llama 3.1's template takes one call per assistant turn, so a past turn
//! with several is given to it as several turns.
//!
//! Grammar: `{"name": "<tool>", "parameters": <its arguments>}`, with `parallel_tool_calls`
//! more after `; `; lazy on `{"name": "` for `auto`, from the first byte for `required` and
//! a named function; the built-ins after the `<|python_tag|>` token. `none` removes the
//! tools from the prompt and the constraint.
//!
//! **`llama3_pythonic`** (zero-shot pythonic lists, seed 002): where the template does not
//! show tools itself, the system turn gets `Customized Functions: [<repr of the functions>]`
//! then `\n\n---\n` and the request's own system prompt, and the model answers
//! `[f(a=1), g(b='x')]`. Past calls are written as the model writes them,
//! `<|python_tag|>[f(a=1)]`, ending `<|eom_id|>`; their results go back in one `ipython` turn
//! as a Python list. Templates whose own tool prompt asks for pythonic calls (vLLM's Llama
//! 3.2 and Llama 4 pythonic templates) are rendered as they are; the official Llama 3.x
//! templates, which ask for JSON, get the zero-shot prompt instead.
//!
//! Both: stops none beyond the request's (`<|eot_id|>` and `<|eom_id|>` are end-of-generation
//! tokens); off-format calls are read too ([`crate::toolkit::off_format`]).

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::render::pyliteral::{functions_repr, python_repr};
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Token, Trigger};

use crate::dialect::{ChatTemplate, Constraint, Dialect, DialectError, Prepared};
use crate::dialects::llama3_parser::{Llama3Parser, PYTHON_TAG};
use crate::dialects::prep::{history, named_alternatives, one_call_per_message, render, repeated};
use crate::dialects::pythonic;
use crate::parser::StreamParser;
use crate::toolkit::choice::Choice;
use crate::toolkit::pycall::write_list;

/// Llama 3.1's built-in tools, called after `<|python_tag|>`.
pub const BUILTIN_TOOLS: [&str; 3] = ["brave_search", "wolfram_alpha", "code_interpreter"];

/// What opens a JSON call, the lazy grammar's trigger.
const CALL_OPEN: &str = "{\"name\": \"";

/// What a template's own prompt says when it asks for pythonic calls.
const PYTHONIC_PROMPTS: [&str; 3] = ["python list", "[func_name1(", "[func_name("];

/// Separates parallel calls.
const SEPARATOR: &str = "; ";

/// Llama 3.x with JSON calls; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llama3Dialect;

/// Llama 3.x with zero-shot pythonic calls; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llama3PythonicDialect;

impl Dialect for Llama3Dialect {
    fn name(&self) -> &'static str {
        "llama3"
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let builtin: Vec<&str> = choice
            .shown
            .iter()
            .map(Tool::name)
            .filter(|name| BUILTIN_TOOLS.contains(name))
            .collect();
        let mut extra = Map::new();
        if !builtin.is_empty() {
            extra.insert("builtin_tools".into(), json!(builtin));
        }
        let messages = history(request)?;
        let prompt = match render(template, &messages, choice.shown, extra.clone()) {
            Ok(prompt) => prompt,
            Err(_) => render(
                template,
                &one_call_per_message(&messages),
                choice.shown,
                extra,
            )?,
        };
        choice.prepared(
            request,
            prompt,
            Box::new(Llama3Parser::new()),
            json_constraint,
        )
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(Llama3Parser::new())
    }
}

impl Dialect for Llama3PythonicDialect {
    fn name(&self) -> &'static str {
        "llama3_pythonic"
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let messages = history(request)?;
        let own = render(template, &messages, choice.shown, Map::new());
        let bare = render(template, &messages, &[], Map::new());
        // The template's own tool prompt is used only where it asks for pythonic calls
        // (vLLM's Llama 3.2 and Llama 4 pythonic templates); Llama 3.x's official
        // templates ask for JSON, so the zero-shot prompt replaces theirs.
        let shows_tools = match (&own, &bare) {
            (Ok(own), Ok(bare)) => {
                own != bare && PYTHONIC_PROMPTS.iter().any(|tell| own.contains(tell))
            }
            _ => false,
        };
        let prompt = if shows_tools || choice.shown.is_empty() {
            own?
        } else {
            zero_shot_prompt(template, &messages, choice.shown)?
        };
        pythonic::prepared(request, &choice, prompt)
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(Llama3Parser::new())
    }
}

/// Seed 002's zero-shot prompt: the functions in the system turn, past calls as pythonic
/// lists after `<|python_tag|>` ending `<|eom_id|>`, their results in one `ipython` turn.
fn zero_shot_prompt(
    template: &ChatTemplate,
    messages: &[Value],
    tools: &[Tool],
) -> Result<String, DialectError> {
    let tools_json = serde_json::to_value(tools).map_err(|source| DialectError::Json {
        what: "the tools",
        source,
    })?;
    let functions = functions_repr(tools_json.as_array().map_or(&[][..], Vec::as_slice));
    let mut header = format!("Customized Functions: {functions}\n\n---\n");
    let mut rest = messages;
    if let Some(first) = messages.first() {
        if first.get("role").and_then(Value::as_str) == Some("system") {
            header.push_str(&text_of(first));
            rest = &messages[1..];
        }
    }
    let mut rewritten = vec![json!({"role": "system", "content": header})];
    let mut calls_written = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for message in rest {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" || role == "ipython" {
            let content = text_of(message);
            results.push(serde_json::from_str(&content).unwrap_or(Value::String(content)));
            continue;
        }
        flush_results(&mut results, &mut rewritten);
        match message.get("tool_calls").and_then(Value::as_array) {
            Some(calls) if !calls.is_empty() => {
                let text = format!("{PYTHON_TAG}{}", pythonic_calls(calls));
                calls_written.push(text.clone());
                let mut prefix = text_of(message);
                if !prefix.is_empty() {
                    prefix.push('\n');
                }
                rewritten.push(json!({"role": "assistant", "content": prefix + &text}));
            }
            _ => rewritten.push(message.clone()),
        }
    }
    flush_results(&mut results, &mut rewritten);
    let mut prompt = render(template, &rewritten, &[], Map::new())?;
    for call in calls_written {
        prompt = prompt.replace(&format!("{call}<|eot_id|>"), &format!("{call}<|eom_id|>"));
    }
    Ok(prompt)
}

fn flush_results(results: &mut Vec<Value>, rewritten: &mut Vec<Value>) {
    if !results.is_empty() {
        let content = python_repr(&Value::Array(std::mem::take(results)));
        rewritten.push(json!({"role": "ipython", "content": content}));
    }
}

/// A message's text content (parts joined), `""` when it has none.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// OpenAI calls (arguments as objects) as a pythonic list.
fn pythonic_calls(calls: &[Value]) -> String {
    let empty = Map::new();
    let calls: Vec<(&str, &Map<String, Value>)> = calls
        .iter()
        .map(|call| {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let arguments = call
                .pointer("/function/arguments")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            (name, arguments)
        })
        .collect();
    write_list(calls)
}

/// `{"name": "<tool>", "parameters": <arguments>}`, `; `-separated with `parallel`; the
/// built-ins after `<|python_tag|>`.
fn json_constraint(
    tools: &[&Tool],
    lazy: bool,
    parallel: bool,
) -> Result<Constraint, DialectError> {
    let (builtin, custom): (Vec<&Tool>, Vec<&Tool>) = tools
        .iter()
        .partition(|tool| BUILTIN_TOOLS.contains(&tool.name()));
    let mut grammar = Grammar::new("root");
    let mut roots = Vec::new();
    let mut triggers = Vec::new();
    if !custom.is_empty() {
        let call = Expr::Seq(vec![
            Expr::literal(CALL_OPEN),
            named_alternatives(&custom, "\", \"parameters\": ")?,
            Expr::literal("}"),
        ]);
        grammar.set_rule("call", call);
        roots.push(repeated(Expr::reference("call"), SEPARATOR, parallel));
        triggers.push(Trigger::Word(CALL_OPEN.to_string()));
    }
    if !builtin.is_empty() {
        let python_tag = Token::Text(PYTHON_TAG.to_string());
        let calls = builtin
            .iter()
            .map(|tool| builtin_call(tool.name()))
            .collect();
        roots.push(Expr::Seq(vec![
            Expr::Token(python_tag.clone()),
            Expr::group(Expr::Alt(calls)),
        ]));
        triggers.push(Trigger::Token(python_tag));
    }
    grammar.set_rule("root", Expr::Alt(roots));
    Ok(Constraint {
        grammar,
        triggers,
        lazy,
    })
}

/// `brave_search.call(query="…")`, `wolfram_alpha.call(query="…")`, or code.
fn builtin_call(name: &str) -> Expr {
    if name == "code_interpreter" {
        return Expr::repeat(Expr::AnyChar, 1, None);
    }
    let not_quote = Expr::Class(CharClass::new(
        true,
        vec![ClassItem::Char('"'), ClassItem::Char('\\')],
    ));
    Expr::Seq(vec![
        Expr::literal(format!("{name}.call(query=\"")),
        Expr::repeat(not_quote, 0, None),
        Expr::literal("\")"),
    ])
}
