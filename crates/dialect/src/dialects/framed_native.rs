//! What the native dialects built on [`crate::toolkit::framed`] share: one `prepare` that
//! renders the model's own template with the tools, makes the family's call grammar lazy on
//! its opening words (forced from the first byte when `tool_choice` requires a call), and
//! wraps the family's parser with off-format calls when the request has tools.
//!
//! A family says only what differs ([`Native`]): its grammar over the callable tools, its
//! triggers, its markers, how its generation prompt may leave the model inside reasoning,
//! and, where its template reads history differently, its messages.
//!
//! `tool_choice: "none"` shows the template no tools and removes the constraint, as the
//! Hermes dialect does; a named function or `allowed_tools` keep only those tools'
//! alternatives in the grammar while the template still shows every tool, so the prompt
//! (and the model's cache of it) does not change with the choice.

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{
    call_object, checked_parameters, messages_json, ChatTemplate, Constraint, Dialect,
    DialectError, Prepared, RenderInput,
};
use crate::parser::StreamParser;
use crate::toolkit::choice::Choice;
use crate::toolkit::framed::{Action, FramedParser};
use crate::toolkit::prompt_text::{tools_listing, with_system_prompt};

/// One native family, as [`NativeDialect`] needs it.
pub trait Native: Send + Sync {
    fn name(&self) -> &'static str;

    /// The call grammar over `tools` (never empty). `forced`: the output must be calls from
    /// its first byte (then the root may admit reasoning first); otherwise the root starts
    /// with one of [`Native::triggers`]. `parallel`: more than one call may follow.
    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError>;

    /// The words that switch a lazy grammar on.
    fn triggers(&self) -> Vec<Trigger>;

    /// The triggers of a grammar over `tools`; by default [`Native::triggers`]. Families
    /// whose triggers name the tools (pythonic lists open with `[name(`) say them here.
    fn triggers_for(&self, _tools: &[&Tool]) -> Vec<Trigger> {
        self.triggers()
    }

    /// The markers of the parser; `tools` are the request's callable tools, for families
    /// whose decoding reads the schemas (argument types restored in XML formats).
    fn markers(&self, tools: &[&Tool]) -> Vec<(String, Action)>;

    /// Where the model's output starts: `prompt` is the generation prompt, or `None` for
    /// output read without one ([`Dialect::parser`]).
    fn start(&self, _prompt: Option<&str>) -> Start {
        Start::Content
    }

    /// Whether the family's models may start calling before they close their reasoning
    /// (then a call's marker ends it: [`FramedParser::calls_end_reasoning`]).
    fn calls_end_reasoning(&self) -> bool {
        false
    }

    /// Whether the grammar waits for a trigger; by default unless a call is forced.
    fn lazy(&self, forced: bool) -> bool {
        !forced
    }

    /// The tools as the template is given them; some templates need fields OpenAI leaves
    /// optional.
    fn shown_tools(&self, tools: &[Tool]) -> Vec<Tool> {
        tools.to_vec()
    }

    /// The messages as the template may read them, tried in order until one renders;
    /// by default [`default_histories`].
    fn histories(&self, request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
        default_histories(request)
    }

    /// The prompt: the template rendered with `messages`, the `tools` shown and the
    /// generation prompt.
    fn render(
        &self,
        template: &ChatTemplate,
        messages: Vec<Value>,
        tools: &[Tool],
    ) -> Result<String, DialectError> {
        template
            .render(&RenderInput {
                messages,
                tools,
                add_generation_prompt: true,
            })
            .map_err(DialectError::from)
    }

    /// How one call is written, for the system prompt given to templates that do not show
    /// the tools themselves (`NAME` and `ARGUMENTS` stand for a tool's name and its JSON
    /// arguments); `None` leaves such templates as they are.
    fn call_example(&self) -> Option<&'static str> {
        None
    }

    /// Stop strings beyond the request's.
    fn stops(&self) -> Vec<String> {
        Vec::new()
    }

    /// The family as `template` writes calls, where its syntax changed between template
    /// versions (Mistral v11's `[ARGS]`); `None`: as it is.
    fn as_written_by(&self, _template: &ChatTemplate) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// What `template` renders for a short conversation whose assistant called `probe_fn`
/// (no arguments, id `a1B2c3D4e`) and got `ok` back, or `None` when it renders none: how
/// [`Native::as_written_by`] tells a template's version by the way it writes a past call.
pub fn rendered_past_call(template: &ChatTemplate) -> Option<String> {
    let probe = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "a1B2c3D4e", "type": "function",
            "function": {"name": "probe_fn", "arguments": {}}
        }]}),
        json!({"role": "tool", "tool_call_id": "a1B2c3D4e", "content": "ok"}),
    ];
    let input = RenderInput {
        messages: probe,
        tools: &[],
        add_generation_prompt: true,
    };
    template.render(&input).ok()
}

/// Where a model's output starts, as its generation prompt leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Content,
    /// Inside reasoning that the prompt opened, closed by this marker.
    Reasoning(&'static str),
    /// Just after this marker, which the prompt wrote (Functionary v3.2's `>>>`).
    AfterMarker(&'static str),
}

impl Start {
    fn parser(self, markers: Vec<(String, Action)>) -> FramedParser {
        match self {
            Start::Content => FramedParser::new(markers),
            Start::Reasoning(close) => FramedParser::in_reasoning(markers, close),
            Start::AfterMarker(marker) => FramedParser::after_marker(markers, marker),
        }
    }
}

/// The start for a prompt that may end by opening `<think>`: inside the reasoning then.
pub fn after_think(prompt: Option<&str>) -> Start {
    after_open(prompt, "<think>", "</think>")
}

/// The start for a prompt that may end by opening reasoning with `open` (`<seed:think>`):
/// inside the reasoning then, until `close`.
pub fn after_open(prompt: Option<&str>, open: &str, close: &'static str) -> Start {
    match prompt {
        Some(prompt) if prompt.trim_end().ends_with(open) => Start::Reasoning(close),
        _ => Start::Content,
    }
}

/// The `<think>…</think>` reasoning marker, counted only at the start of the output.
pub fn think() -> (String, Action) {
    reasoning_tags("<think>", "</think>")
}

/// A reasoning marker `open` that runs to `close`, counted only at the start of the output.
pub fn reasoning_tags(open: &str, close: &str) -> (String, Action) {
    (
        open.into(),
        Action::Reasoning {
            close: close.into(),
            at_start_only: true,
        },
    )
}

/// `calls` after optional reasoning, for a forced grammar: the model may still be in the
/// reasoning its prompt opened (then it writes only `close`), or open it itself.
pub fn reasoning_then(open: &str, close: &str, calls: Expr) -> Expr {
    Expr::Seq(vec![
        Expr::optional(Expr::group(Expr::Seq(vec![
            Expr::optional(Expr::literal(open)),
            free_text(),
            Expr::literal(close),
            ws(),
        ]))),
        calls,
    ])
}

/// A grammar's root: `calls`, after the reasoning [`reasoning_then`] admits when the call is
/// `forced` (a lazy grammar starts at its trigger, past any reasoning).
pub fn forced_after_reasoning(forced: bool, (open, close): (&str, &str), calls: Expr) -> Expr {
    if forced {
        reasoning_then(open, close, calls)
    } else {
        calls
    }
}

/// A [`Native`] family as a [`Dialect`].
pub struct NativeDialect<N>(pub N);

impl<N: Native> Dialect for NativeDialect<N> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let written = self.0.as_written_by(template);
        let family = written.as_ref().unwrap_or(&self.0);
        let choice = Choice::of(request)?;
        let shown = family.shown_tools(choice.shown);
        let mut prompt = render_first(family, template, request, &shown)?;
        if let Some(example) = family.call_example() {
            if !shown.is_empty() && !shown.iter().all(|tool| prompt.contains(tool.name())) {
                let described = ChatRequest {
                    messages: with_system_prompt(&request.messages, &tools_prompt(&shown, example)),
                    ..request.clone()
                };
                prompt = render_first(family, template, &described, &shown)?;
            }
        }
        let constraint = if choice.callable.is_empty() {
            None
        } else {
            Some(Constraint::new(
                family.grammar(&choice.callable, choice.parallel, choice.forced)?,
                family.triggers_for(&choice.callable),
                family.lazy(choice.forced),
            ))
        };
        let markers = family.markers(&choice.callable);
        let parser = choice.wrap(Box::new(framed_parser(family, Some(&prompt), markers)));
        let mut stop = request.stop_sequences().to_vec();
        stop.extend(family.stops());
        Ok(Prepared {
            prompt,
            constraint,
            stop,
            parser,
        })
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(framed_parser(&self.0, None, self.0.markers(&[])))
    }
}

/// The family's parser for output after `prompt`.
fn framed_parser<N: Native>(
    family: &N,
    prompt: Option<&str>,
    markers: Vec<(String, Action)>,
) -> FramedParser {
    let parser = family.start(prompt).parser(markers);
    if family.calls_end_reasoning() {
        parser.calls_end_reasoning()
    } else {
        parser
    }
}

/// The prompt rendered from the first of the family's histories that renders.
fn render_first<N: Native>(
    family: &N,
    template: &ChatTemplate,
    request: &ChatRequest,
    shown: &[Tool],
) -> Result<String, DialectError> {
    first_rendered(family.histories(request)?, |messages| {
        family.render(template, messages, shown)
    })
}

/// The shapes of history templates read, in the order they are tried: past calls'
/// `arguments` as objects (templates that print them with `tojson`), then as the JSON
/// strings OpenAI sends (templates that concatenate them), then objects with `content: ""`
/// on turns that only call (templates that iterate or search the content of every
/// assistant turn: LFM2's, Qwen 3's `'</think>' in message.content`).
pub fn default_histories(request: &ChatRequest) -> Result<Vec<Vec<Value>>, DialectError> {
    Ok(vec![
        history_with_object_arguments(request)?,
        history_with_string_arguments(request)?,
        history_with_empty_content(request)?,
    ])
}

/// `render` of the first of `histories` it accepts; the last one's error when it accepts
/// none.
pub fn first_rendered(
    histories: Vec<Vec<Value>>,
    render: impl Fn(Vec<Value>) -> Result<String, DialectError>,
) -> Result<String, DialectError> {
    let mut prompt = Err(DialectError::NoCallableTools);
    for messages in histories {
        prompt = render(messages);
        if prompt.is_ok() {
            break;
        }
    }
    prompt
}

/// The system prompt that describes the tools and the family's call syntax, for templates
/// that do not show tools themselves.
pub fn tools_prompt(tools: &[Tool], example: &str) -> String {
    let listing: Vec<Value> = tools
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .collect();
    format!(
        "You have access to the following tools:\n{}\n\nTo call tools, write:\n{example}",
        tools_listing(&listing)
    )
}

/// The messages as JSON, past calls' `arguments` as objects where they hold JSON objects:
/// templates print them with `tojson` and OpenAI's string form would come out quoted twice.
pub fn history_with_object_arguments(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_object_arguments(history_with_string_arguments(
        request,
    )?))
}

/// `messages` with past calls' `arguments` as objects where they hold JSON objects.
pub fn with_object_arguments(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        let Some(Value::Array(calls)) = message.get_mut("tool_calls") else {
            continue;
        };
        for call in calls {
            let Some(arguments) = call.pointer_mut("/function/arguments") else {
                continue;
            };
            if let Value::String(text) = arguments {
                if let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                    *arguments = object;
                }
            }
        }
    }
    messages
}

/// [`history_with_object_arguments`] with `content: ""` instead of `null` on assistant turns
/// that only call.
pub fn history_with_empty_content(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    Ok(with_empty_content(history_with_object_arguments(request)?))
}

/// The messages as JSON, as OpenAI sends them, with `content: null` on assistant turns
/// that only call (templates test `message['content'] is none`, as `transformers` gives it).
pub fn history_with_string_arguments(request: &ChatRequest) -> Result<Vec<Value>, DialectError> {
    let mut messages = messages_json(&request.messages)?;
    for message in &mut messages {
        if let Value::Object(members) = message {
            if members.contains_key("tool_calls") {
                members.entry("content").or_insert(Value::Null);
            }
        }
    }
    Ok(messages)
}

/// `messages` with `content: ""` where a turn that only calls has `null`, for templates
/// that raise on a `content` that is present and not a string (Apertus').
pub fn with_empty_content(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        if let Value::Object(members) = message {
            if members.contains_key("tool_calls") && members.get("content") == Some(&Value::Null) {
                members.insert("content".into(), Value::String(String::new()));
            }
        }
    }
    messages
}

/// A tool's name as JSON string text without its quotes (`a\"b` for `a"b`).
pub fn json_name(tool: &Tool) -> Result<String, DialectError> {
    let quoted = serde_json::to_string(tool.name()).map_err(|source| DialectError::Json {
        what: "a tool name",
        source,
    })?;
    Ok(quoted[1..quoted.len() - 1].to_string())
}

/// One alternative per tool, each made by `call` from the tool, its JSON-escaped name and
/// its checked parameters schema.
pub fn per_tool(
    tools: &[&Tool],
    call: impl Fn(&Tool, &str, Expr) -> Expr,
) -> Result<Expr, DialectError> {
    let alternatives = tools
        .iter()
        .map(|tool| {
            let name = json_name(tool)?;
            Ok(call(tool, &name, Expr::Json(checked_parameters(tool)?)))
        })
        .collect::<Result<Vec<_>, DialectError>>()?;
    Ok(Expr::group(Expr::Alt(alternatives)))
}

/// One JSON object schema per tool ([`call_object`]).
pub fn call_objects(
    tools: &[&Tool],
    keys: (&str, &str),
    id: Option<&str>,
) -> Result<Vec<Expr>, DialectError> {
    tools
        .iter()
        .map(|tool| Ok(Expr::Json(call_object(tool, keys, id)?)))
        .collect()
}

/// `first`, then with `parallel` any number of `separator first`.
pub fn one_or_more(first: Expr, separator: Expr, parallel: bool) -> Expr {
    if !parallel {
        return first;
    }
    Expr::Seq(vec![
        first.clone(),
        Expr::repeat(Expr::group(Expr::Seq(vec![separator, first])), 0, None),
    ])
}

/// Optional layout whitespace between the parts of a call.
pub fn ws() -> Expr {
    Expr::repeat(
        Expr::Class(CharClass::new(
            false,
            vec![
                ClassItem::Char(' '),
                ClassItem::Char('\t'),
                ClassItem::Char('\n'),
            ],
        )),
        0,
        Some(24),
    )
}

/// Free text without `<`, for the reasoning a forced grammar lets a model write first.
pub fn free_text() -> Expr {
    text_without('<')
}

/// Free text without `stop`, the first character of the marker that ends it.
pub fn text_without(stop: char) -> Expr {
    Expr::repeat(none_of([stop]), 0, None)
}

/// One character not among `chars`.
pub fn none_of(chars: impl IntoIterator<Item = char>) -> Expr {
    let items = chars.into_iter().map(ClassItem::Char).collect();
    Expr::Class(CharClass::new(true, items))
}

/// A grammar whose root is `root`.
pub fn grammar_of(root: Expr) -> Grammar {
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", root);
    grammar
}

/// Word triggers.
pub fn words(words: &[&str]) -> Vec<Trigger> {
    words
        .iter()
        .map(|word| Trigger::Word(word.to_string()))
        .collect()
}
