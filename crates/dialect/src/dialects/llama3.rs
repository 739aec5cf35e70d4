//! Llama 3.1 / 3.2 / 3.3: two dialects over one parser ([`markers`]).
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
//! templates, which ask for JSON, get the zero-shot prompt instead. Argument types are
//! restored from the schemas (pythonic templates may write every value as text: vLLM's
//! Llama 4 template writes `count="5"`).
//!
//! **`gemma3_pythonic`**: Gemma 3 with vLLM's pythonic tool template, which shows the tools
//! and asks for "a python list of the function calls": `llama3_pythonic`'s lists, grammar
//! and parser, the template rendered as it is (results go back as it writes them,
//! `<tool_response>` in a user turn). It writes a past call's arguments without commas
//! between them (its `first` flag is reset in every loop iteration):
//! [`crate::toolkit::pycall`] reads those too.
//!
//! The parser ([`markers`]) reads every way Llama 3.x writes a call:
//!
//! - a JSON object, `{"name": "get_weather", "parameters": {"city": "Paris"}}` (what its
//!   templates ask for; `arguments` and `"type": "function"` are read too), several of them
//!   separated by `;` or new lines, or a JSON list of them;
//! - a pythonic list, `[get_weather(city='Paris'), get_time()]`;
//! - after `<|python_tag|>`: a built-in call `brave_search.call(query="…")`, JSON calls or
//!   a pythonic list, or else code, which is a call of `code_interpreter` with `{"code": …}`.
//!   The python tag has no closing marker (the turn ends with `<|eom_id|>`, an end-of-
//!   generation token), so what follows it is decided when the output ends. Llama 3.2
//!   writes each of several calls after a tag of its own
//!   (`<|python_tag|>{…}<|python_tag|>{…}`): where every part between the tags is calls,
//!   each is read, and only text that is no call is code;
//! - between Llama 4's `<|python_start|>` and `<|python_end|>` (or the end of the output):
//!   JSON calls or a pythonic list, the two tokens the region's markers, never content.
//!
//! The calls in content have no marker: each `{` and `[` opens an inline region
//! ([`Action::Inline`]) that is a call only if its text opens as one (a call's key; a
//! name and `(`, or an object) and, once whole, reads as one; anything else is content as
//! written, and streams at once where its opening already says so. Whitespace before a
//! call, and whitespace and a `;` or `,` after one, are layout.
//!
//! Both: stops none beyond the request's (`<|eot_id|>` and `<|eom_id|>` are end-of-generation
//! tokens); off-format calls are read too ([`crate::toolkit::off_format`]).

use std::sync::Arc;

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::render::functions_repr;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Token, Trigger};
use toolbridge_pyrepr::python_repr;

use crate::dialect::{tools_json, ChatTemplate};
use crate::error::DialectError;
use crate::toolkit::call_json::{bare_call, BARE_CALL_KEYS};
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{name_first_call, one_or_more, words};
use crate::toolkit::history::{history, one_call_per_message};
use crate::toolkit::native::{render_with, Native};
use crate::toolkit::pattern::{Call, Decode, Pat, Region};
use crate::toolkit::pycall::{parse_calls, write_list};
use crate::toolkit::pythonic::{list_grammar, list_triggers, python_calls_of};
use crate::toolkit::typed_args::ParameterTypes;

/// Llama 3.1's built-in tools, called after `<|python_tag|>`.
pub const BUILTIN_TOOLS: [&str; 3] = ["brave_search", "wolfram_alpha", "code_interpreter"];

/// The built-in tool that runs the code written after `<|python_tag|>`.
const CODE_INTERPRETER: &str = "code_interpreter";

/// Llama 3.1's marker for a built-in call or code.
const PYTHON_TAG: &str = "<|python_tag|>";

/// Llama 4's tokens around its calls.
const PYTHON_START: &str = "<|python_start|>";
const PYTHON_END: &str = "<|python_end|>";

/// What opens a JSON call, the lazy grammar's trigger.
const CALL_OPEN: &str = "{\"name\": \"";

/// The longest name a pythonic list may open with.
const MAX_NAME: usize = 256;

/// What a template's own prompt says when it asks for pythonic calls.
const PYTHONIC_PROMPTS: [&str; 3] = ["python list", "[func_name1(", "[func_name("];

/// Separates parallel calls.
const SEPARATOR: &str = "; ";

/// Llama 3.x with JSON calls; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llama3Json;

/// Calls as a bare pythonic list; see the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Llama3Pythonic {
    /// Llama 3.2 / 4, with the zero-shot prompt where the template asks for JSON.
    #[default]
    Llama3,
    /// Gemma 3 under vLLM's pythonic template, which it renders as it is.
    Gemma3,
}

impl Native for Llama3Json {
    fn name(&self) -> &'static str {
        "llama3"
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        json_grammar(tools, parallel)
    }

    fn triggers(&self) -> Vec<Trigger> {
        words(&[CALL_OPEN])
    }

    /// `{"name": "` for the tools called in JSON, the `<|python_tag|>` token for the
    /// built-ins.
    fn triggers_for(&self, tools: &[&Tool]) -> Vec<Trigger> {
        let (builtin, custom) = builtin_and_custom(tools);
        let mut triggers = Vec::new();
        if !custom.is_empty() {
            triggers.extend(self.triggers());
        }
        if !builtin.is_empty() {
            triggers.push(Trigger::Token(python_tag()));
        }
        triggers
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        markers(ParameterTypes::default())
    }

    /// The history with past calls' arguments as objects, then with one call per turn.
    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        let messages = history(request)?;
        let split = one_call_per_message(&messages);
        Ok(vec![messages, split])
    }

    /// The template rendered with the built-in tools among `tools` as `builtin_tools`.
    fn render(
        &self,
        template: &ChatTemplate,
        messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        let builtin: Vec<&str> = tools
            .iter()
            .map(Tool::name)
            .filter(|name| BUILTIN_TOOLS.contains(name))
            .collect();
        let mut extra = Map::new();
        if !builtin.is_empty() {
            extra.insert("builtin_tools".into(), json!(builtin));
        }
        render_with(template, &messages, tools, extra)
    }
}

impl Native for Llama3Pythonic {
    fn name(&self) -> &'static str {
        match self {
            Llama3Pythonic::Llama3 => "llama3_pythonic",
            Llama3Pythonic::Gemma3 => "gemma3_pythonic",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        _forced: bool,
    ) -> Result<Grammar, DialectError> {
        list_grammar(tools, parallel)
    }

    fn triggers(&self) -> Vec<Trigger> {
        self.triggers_for(&[])
    }

    fn triggers_for(&self, tools: &[&Tool]) -> Vec<Trigger> {
        list_triggers(tools)
    }

    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)> {
        markers(ParameterTypes::new(tools))
    }

    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        Ok(vec![history(request)?])
    }

    /// The template's own prompt where it asks for pythonic calls (vLLM's Llama 3.2 and
    /// Llama 4 pythonic templates, Gemma 3's), else the zero-shot prompt: Llama 3.x's
    /// official templates ask for JSON.
    fn render(
        &self,
        template: &ChatTemplate,
        messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        let own = render_with(template, &messages, tools, Map::new());
        if tools.is_empty() || *self == Llama3Pythonic::Gemma3 {
            return own;
        }
        let bare = render_with(template, &messages, &[], Map::new());
        let shows_tools = match (&own, &bare) {
            (Ok(own), Ok(bare)) => {
                own != bare && PYTHONIC_PROMPTS.iter().any(|tell| own.contains(tell))
            }
            _ => false,
        };
        if shows_tools {
            own
        } else {
            zero_shot_prompt(template, &messages, tools)
        }
    }
}

/// Seed 002's zero-shot prompt: the functions in the system turn, past calls as pythonic
/// lists after `<|python_tag|>` ending `<|eom_id|>`, their results in one `ipython` turn.
fn zero_shot_prompt(
    template: &ChatTemplate,
    messages: &[Value],
    tools: &[Tool],
) -> Result<String, DialectError> {
    let listed = tools_json(tools)?;
    let functions = functions_repr(listed.as_array().map_or(&[][..], Vec::as_slice));
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
    let mut prompt = render_with(template, &rewritten, &[], Map::new())?;
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
fn json_grammar(tools: &[&Tool], parallel: bool) -> Result<Grammar, DialectError> {
    let (builtin, custom) = builtin_and_custom(tools);
    let mut grammar = Grammar::new("root");
    let mut roots = Vec::new();
    if !custom.is_empty() {
        grammar.set_rule("call", name_first_call(&custom, "parameters")?);
        roots.push(one_or_more(
            Expr::reference("call"),
            Expr::literal(SEPARATOR),
            parallel,
        ));
    }
    if !builtin.is_empty() {
        let calls = builtin
            .iter()
            .map(|tool| builtin_call(tool.name()))
            .collect();
        roots.push(Expr::Seq(vec![
            Expr::Token(python_tag()),
            Expr::group(Expr::Alt(calls)),
        ]));
    }
    grammar.set_rule("root", Expr::Alt(roots));
    Ok(grammar)
}

/// `tools` split into the built-ins and the others.
fn builtin_and_custom<'a>(tools: &[&'a Tool]) -> (Vec<&'a Tool>, Vec<&'a Tool>) {
    tools
        .iter()
        .partition(|tool| BUILTIN_TOOLS.contains(&tool.name()))
}

/// The `<|python_tag|>` token.
fn python_tag() -> Token {
    Token::Text(PYTHON_TAG.to_string())
}

/// `brave_search.call(query="…")`, `wolfram_alpha.call(query="…")`, or code.
fn builtin_call(name: &str) -> Expr {
    if name == CODE_INTERPRETER {
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

/// Llama 3's parser, Gemma 3's too (see the module docs): `{` and `[` open calls written
/// bare in content, `<|python_tag|>` what the rest of the output is. Each call's string
/// arguments are typed from `types` (no tools: as written).
pub fn markers(types: ParameterTypes) -> Vec<(String, Action)> {
    let types = Arc::new(types);
    // An object that opens with a key no call has is data, and streams at once.
    let opens_object = Pat::Seq(vec![
        Pat::lit("{"),
        Pat::Ws,
        Pat::Alt(
            BARE_CALL_KEYS
                .iter()
                .map(|key| Pat::lit(format!("\"{key}\"")))
                .collect(),
        ),
    ]);
    let opens_list = Pat::Seq(vec![
        Pat::lit("["),
        Pat::Ws,
        Pat::Alt(vec![Pat::lit("{"), Pat::name("(", MAX_NAME)]),
    ]);
    let inline = |opens: Pat, call: Pat| {
        let body = Pat::Seq(vec![Pat::ahead(opens), call, separator()]);
        let decode = typed(Arc::clone(&types), |captures| bare_calls(captures.first()?));
        Action::Inline(Region { body, decode })
    };
    let python = Region {
        body: Pat::Rest,
        decode: typed(Arc::clone(&types), |captures| {
            Some(python_calls(captures.first()?))
        }),
    };
    let python_region = Region {
        body: Pat::until_or_end(PYTHON_END),
        decode: typed(Arc::clone(&types), |captures| {
            tagged_calls(captures.first()?.trim())
        }),
    };
    vec![
        ("{".into(), inline(opens_object, Pat::Json)),
        ("[".into(), inline(opens_list, Pat::Literal)),
        (PYTHON_TAG.into(), Action::Call(python)),
        (PYTHON_START.into(), Action::Call(python_region)),
    ]
}

/// A `;` or `,` after a call, with the blanks before it, or nothing.
fn separator() -> Pat {
    Pat::Alt(vec![
        Pat::Seq(vec![Pat::Ws, Pat::Alt(vec![Pat::lit(";"), Pat::lit(",")])]),
        Pat::lit(""),
    ])
}

/// `decode`, each call's arguments typed from `types`.
fn typed(
    types: Arc<ParameterTypes>,
    decode: impl Fn(&[String]) -> Option<Vec<Call>> + Send + Sync + 'static,
) -> Decode {
    Arc::new(move |captures| {
        let mut calls = decode(captures)?;
        for call in &mut calls {
            call.arguments = types.retyped(&call.name, std::mem::take(&mut call.arguments));
        }
        Some(calls)
    })
}

/// The calls a complete `{…}` or `[…]` in content stands for: a JSON call object with its
/// arguments key (`{"name": "Bob"}` is data), a list of them, or a pythonic call list.
fn bare_calls(text: &str) -> Option<Vec<Call>> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let calls = match &value {
            Value::Array(items) if !items.is_empty() => items.iter().map(bare_call).collect(),
            Value::Object(_) => bare_call(&value).map(|call| vec![call]),
            _ => None,
        };
        if calls.is_some() {
            return calls;
        }
    }
    if !text.starts_with('[') {
        return None;
    }
    python_calls_of(parse_calls(text)?).filter(|calls| !calls.is_empty())
}

/// The text after `<|python_tag|>`: calls ([`tagged_calls`]), each part between further
/// tags read alone, or else code for the interpreter.
fn python_calls(code: &str) -> Vec<Call> {
    let code = code.trim();
    if code.is_empty() {
        return Vec::new();
    }
    let parts: Option<Vec<Vec<Call>>> = code
        .split(PYTHON_TAG)
        .map(|part| tagged_calls(part.trim()))
        .collect();
    if let Some(parts) = parts {
        return parts.into_iter().flatten().collect();
    }
    let arguments = json!({ "code": code }).to_string();
    vec![Call::new(CODE_INTERPRETER, arguments)]
}

/// JSON calls in a row, or Python calls (a list, or a built-in's
/// `brave_search.call(query="…")`).
fn tagged_calls(text: &str) -> Option<Vec<Call>> {
    json_calls_in_a_row(text).or_else(|| parse_calls(text).and_then(python_calls_of))
}

/// JSON calls one after another, separated by `;`, `,` or blanks, and nothing else.
fn json_calls_in_a_row(text: &str) -> Option<Vec<Call>> {
    let row = Pat::repeat(Pat::Seq(vec![Pat::Json, separator()]));
    let values = row.captures_of(text)?;
    let mut calls = Vec::new();
    for value in &values {
        calls.extend(bare_calls(value)?);
    }
    (!calls.is_empty()).then_some(calls)
}
