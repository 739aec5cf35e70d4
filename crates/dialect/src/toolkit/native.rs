//! A native family as a [`Dialect`]: what the families whose template shows the tools (and
//! whose parser is a [`FramedParser`]) share, one `prepare` that renders the model's own
//! template with the tools, makes the family's call grammar lazy on its opening words
//! (forced from the first byte when `tool_choice` requires a call), and wraps the family's
//! parser with off-format calls when the request has tools.
//!
//! A family says only what differs ([`Native`]): its grammar over the callable tools, its
//! triggers, its markers, how its generation prompt may leave the model inside reasoning,
//! and, where its template reads history differently, its messages.
//!
//! `tool_choice: "none"` shows the template no tools and removes the constraint, as the
//! Hermes dialect does; a named function or `allowed_tools` keep only those tools'
//! alternatives in the grammar while the template still shows every tool, so the prompt
//! (and the model's cache of it) does not change with the choice.

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Grammar, Trigger};

use crate::dialect::{tools_json, ChatTemplate, Constraint, Dialect, Prepared, RenderInput};
use crate::error::{template_error, DialectError, DialectErrorKind};
use crate::parser::StreamParser;
use crate::toolkit::choice::Choice;
use crate::toolkit::framed::{Action, FramedParser};
use crate::toolkit::history::default_histories;
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

    /// Whether a call can be sent while the model writes it ([`FramedParser::streaming`]):
    /// the family's decoder reads a call so far as it reads it whole.
    fn streams_calls(&self) -> bool {
        true
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
            .map_err(template_error)
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

/// Renders `template` with `transformers`' variables and `extra` ones on top, for the
/// families whose template reads more (Llama 3.1's `builtin_tools`, FireFunction's
/// `functions`).
pub fn render_with(
    template: &ChatTemplate,
    messages: &[Value],
    tools: &[Tool],
    extra: Map<String, Value>,
) -> Result<String, DialectError> {
    let mut context = Map::new();
    context.insert("messages".into(), Value::Array(messages.to_vec()));
    if !tools.is_empty() {
        context.insert("tools".into(), tools_json(tools)?);
    }
    context.insert("add_generation_prompt".into(), true.into());
    context.extend(extra);
    template.render_context(context).map_err(template_error)
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
        let parser = choice.wrap(
            Box::new(framed_parser(family, Some(&prompt), markers)),
            constraint.as_ref(),
        );
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
    let parser = family
        .start(prompt)
        .parser(markers)
        .streaming(family.streams_calls());
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

/// `render` of the first of `histories` it accepts; the last one's error when it accepts
/// none.
fn first_rendered(
    histories: Vec<Vec<Value>>,
    render: impl Fn(Vec<Value>) -> Result<String, DialectError>,
) -> Result<String, DialectError> {
    let mut prompt = Err(DialectError::from(DialectErrorKind::NoCallableTools));
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
fn tools_prompt(tools: &[Tool], example: &str) -> String {
    let listing: Vec<Value> = tools
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .collect();
    format!(
        "You have access to the following tools:\n{}\n\nTo call tools, write:\n{example}",
        tools_listing(&listing)
    )
}
