//! Ollama's Go templates, rendered exactly as Ollama renders a chat.
//!
//! A Modelfile's `TEMPLATE` is Go `text/template` run over Ollama's own data: the
//! collated `.Messages` (same-role turns merged), `.System`, `.Tools`, `.Think`… when
//! the template names `.Messages`; otherwise once per turn with `.System`, `.Prompt` and
//! `.Response`, the last turn cut after `.Response`. `gotmpl` runs the template
//! language; this module supplies the rest (see [`GoTemplate::render`]): the data model
//! and its Go printing ([`values`], [`gofmt`], [`gojson`]), Ollama's functions and its
//! edits of the parse tree ([`hooks`], [`rewrite`]), Go's block checks that `gotmpl`
//! skips ([`blocks`]), and bounds for templates nobody reviewed: fuel for loops and
//! recursion, a cap on output and on any string built, a byte budget on all the
//! strings built, requests nested no deeper than a bound, `gotmpl`'s own depth limits,
//! and errors instead of panics.
//!
//! The output is Ollama's through v0.13.5, where tool values print as JSON (later
//! versions print Go struct syntax there, an upstream bug not copied). Where Go and this
//! renderer still part, no template in the corpus goes: a field a Go struct lacks gives
//! no value here where Go fails, and so does a field of a missing key; a float given to
//! `printf` through a computed format or a `*` width prints as Rust prints it; a partial
//! `slice` of `.Tools` prints as a list of tools, not as one JSON array; images are not
//! part of the data (Ollama would add `[img-N]` tags to the text).

mod blocks;
mod gofmt;
mod gojson;
mod hooks;
mod model;
mod objects;
mod request;
mod rewrite;
mod values;

use gotmpl::parse::{DefineNode, ListNode, Parser};
use gotmpl::{MissingKey, Template, Value};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

pub use model::{
    GoAny, Message, PropertyType, Tool, ToolCall, ToolCallFunction, ToolFunction,
    ToolFunctionParameters, ToolProperty,
};
pub use request::{collate, OllamaRequest, Think};

use crate::error::{at_line, engine_panicked, output_too_large};
use crate::jinja::{Clock, Limits};
use crate::{TemplateError, TemplateErrorKind};
use hooks::RenderState;
use values::Builder;

/// The name Ollama gives the template (and so its root tree).
const ROOT: &str = "";

/// Where `currentDate` reads the time, and the bounds of one render.
#[derive(Clone, Debug)]
pub struct GoRenderOptions {
    pub clock: Clock,
    /// `fuel` bounds the nodes executed and functions called, `max_output_bytes` the
    /// output and any string the template builds, `max_built_bytes` all the strings
    /// its functions build together. Go templates cannot build lists or maps, so values
    /// nest only as deep as the request (bounded by [`OllamaRequest::from_json`]);
    /// template calls and blocks nest 200 deep at most (`gotmpl`'s own bound).
    pub limits: Limits,
}

/// Fuel for one render: every row of `goldens/gotmpl.jsonl` needs under 1 000, so this
/// leaves room for conversations thousands of turns long, while a runaway template
/// stops within seconds (a unit of fuel is a node or a function call; the runaway
/// templates of `tests/gotmpl_hostile.rs` burn all of it in about 10 s in a debug build).
pub const DEFAULT_FUEL: u64 = 5_000_000;

impl Default for GoRenderOptions {
    fn default() -> Self {
        GoRenderOptions {
            clock: Clock::default(),
            limits: Limits {
                fuel: DEFAULT_FUEL,
                ..Limits::default()
            },
        }
    }
}

/// A compiled Ollama template.
pub struct GoTemplate {
    /// The whole template, with its definitions.
    template: Template,
    /// The per-turn path's last turn: the root cut after `.Response`, alone and without
    /// Ollama's functions, as Ollama builds it; or why it cannot be built.
    last_turn: Result<Template, String>,
    /// Whether the template names `.Messages` (else it renders per turn).
    uses_messages: bool,
    options: GoRenderOptions,
}

impl GoTemplate {
    /// Compiles `source` as Ollama does.
    pub fn new(source: &str) -> Result<GoTemplate, TemplateError> {
        GoTemplate::with_options(source, GoRenderOptions::default())
    }

    /// Compiles `source` as Ollama does, rendering with `options`' clock and bounds.
    pub fn with_options(
        source: &str,
        options: GoRenderOptions,
    ) -> Result<GoTemplate, TemplateError> {
        let parsed = catch_unwind(|| Parser::new(source, "{{", "}}").and_then(Parser::parse))
            .map_err(|_| engine_panicked())?;
        let (mut root, defines) = parsed.map_err(|err| syntax_error(&err, source))?;
        blocks::check(source).map_err(|(message, line)| {
            at_line(TemplateErrorKind::Syntax, message, Some(line), source)
        })?;
        if let Some((name, pos)) = rewrite::undefined_function(&root, &defines, &hooks::is_defined)
        {
            return Err(at_line(
                TemplateErrorKind::Syntax,
                format!("function {name:?} not defined"),
                Some(pos.line),
                source,
            ));
        }
        let names = rewrite::identifiers(&root, &defines);
        let uses_messages = names.contains("messages");
        if !uses_messages && !names.contains("response") {
            rewrite::append_response(&mut root);
        }
        let last_turn = rewrite::cut_after_response(&root).map(|cut| assemble(cut, &[]));
        let template = assemble(root, &defines);
        Ok(GoTemplate {
            template: template?,
            last_turn: last_turn.and_then(|t| t.map_err(|err| err.detail().to_owned())),
            uses_messages,
            options,
        })
    }

    /// Renders a chat as Ollama's server renders it.
    pub fn render(&self, request: &OllamaRequest) -> Result<String, TemplateError> {
        let (system, messages) = collate(&request.messages);
        let think = ThinkFields::new(request.think.as_ref());
        let mut builder = Builder::default();
        let data = if !request.prompt.is_empty() && !request.suffix.is_empty() {
            Some(values::map([
                ("Prompt", values::string(&request.prompt)),
                ("Suffix", values::string(&request.suffix)),
                ("Response", values::string("")),
            ]))
        } else if self.uses_messages {
            Some(values::map([
                ("System", values::string(&system)),
                ("Messages", builder.messages(&messages)),
                ("Tools", builder.tools(request.tools.as_deref())),
                ("Response", values::string("")),
            ]))
        } else {
            None
        };
        let limits = &self.options.limits;
        let state = Arc::new(RenderState::new(
            builder.objects,
            self.options.clock.clone(),
            limits,
        ));
        let mut render = Render {
            state,
            output: BoundedText::new(limits.max_output_bytes),
            limits,
        };
        match data {
            Some(data) => render.run(&self.template, true, &think.with(data))?,
            None => self.render_turns(&mut render, &messages, &think)?,
        }
        Ok(render.output.text)
    }

    /// Ollama's path for templates without `.Messages`: one render per user turn with
    /// the system prompt before it and the answer after it, tool results skipped, and
    /// the last turn rendered by the template cut after `.Response`.
    fn render_turns(
        &self,
        render: &mut Render,
        messages: &[Message],
        think: &ThinkFields,
    ) -> Result<(), TemplateError> {
        let mut turn = Turn::default();
        for message in messages {
            let flush = match message.role.as_str() {
                "system" => !turn.prompt.is_empty() || !turn.response.is_empty(),
                "user" => !turn.response.is_empty(),
                _ => false,
            };
            if flush {
                render.run(&self.template, true, &think.with(turn.data()))?;
                turn = Turn::default();
            }
            match message.role.as_str() {
                "system" => turn.system = message.content.clone(),
                "user" => turn.prompt = message.content.clone(),
                "assistant" => turn.response = message.content.clone(),
                _ => {}
            }
        }
        let last_turn = self
            .last_turn
            .as_ref()
            .map_err(|why| TemplateError::new(TemplateErrorKind::Render, why.clone()))?;
        render.run(last_turn, false, &think.with(turn.data()))
    }
}

impl fmt::Debug for GoTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoTemplate")
            .field("uses_messages", &self.uses_messages)
            .finish_non_exhaustive()
    }
}

/// One turn of the per-turn path.
#[derive(Default)]
struct Turn {
    system: String,
    prompt: String,
    response: String,
}

impl Turn {
    fn data(&self) -> Value {
        values::map([
            ("System", values::string(&self.system)),
            ("Prompt", values::string(&self.prompt)),
            ("Response", values::string(&self.response)),
        ])
    }
}

/// `.Think`, `.ThinkLevel` and `.IsThinkSet`, which every path passes.
struct ThinkFields {
    enabled: bool,
    level: String,
    set: bool,
}

impl ThinkFields {
    fn new(think: Option<&Think>) -> ThinkFields {
        ThinkFields {
            enabled: think.is_some_and(Think::enabled),
            level: think.map(Think::level).unwrap_or_default(),
            set: think.is_some(),
        }
    }

    /// `data` (a map) with the think fields added.
    fn with(&self, data: Value) -> Value {
        let Value::Map(mut entries) = data else {
            return data;
        };
        let entries_mut = Arc::make_mut(&mut entries);
        entries_mut.insert("Think".into(), Value::Bool(self.enabled));
        entries_mut.insert("ThinkLevel".into(), values::string(&self.level));
        entries_mut.insert("IsThinkSet".into(), Value::Bool(self.set));
        Value::Map(entries)
    }
}

/// One render in progress: its state, its output so far.
struct Render<'a> {
    state: Arc<RenderState>,
    output: BoundedText,
    limits: &'a Limits,
}

impl Render<'_> {
    /// Executes `template` over `data`, appending to the output.
    fn run(
        &mut self,
        template: &Template,
        with_ollama: bool,
        data: &Value,
    ) -> Result<(), TemplateError> {
        let template = template
            .clone()
            .funcs(hooks::functions(&self.state, with_ollama));
        let output = &mut self.output;
        let result = catch_unwind(AssertUnwindSafe(|| {
            template.execute_template_fmt(output, ROOT, data)
        }))
        .map_err(|_| engine_panicked())?;
        result.map_err(|err| self.describe(&err))
    }

    fn describe(&self, err: &gotmpl::TemplateError) -> TemplateError {
        let kind = match err {
            _ if self.output.overflowed => return output_too_large(self.limits),
            _ if self.state.limit_reached() => TemplateErrorKind::Limit,
            gotmpl::TemplateError::RecursionLimit | gotmpl::TemplateError::RangeIterLimit => {
                TemplateErrorKind::Limit
            }
            _ => TemplateErrorKind::Render,
        };
        let message = err.to_string();
        let message = message
            .strip_prefix("execution error: ")
            .unwrap_or(&message)
            .to_owned();
        TemplateError::new(kind, message)
    }
}

/// The root tree and the definitions as one `gotmpl` template, instrumented. A name
/// defined twice with two non-empty bodies is Go's "multiple definition" error; an
/// empty body never replaces a definition.
fn assemble(mut root: ListNode, defines: &[DefineNode]) -> Result<Template, TemplateError> {
    let mut trees: Vec<(String, ListNode)> = Vec::new();
    rewrite::instrument(&mut root);
    let mut add = |name: &str, body: ListNode, empty: bool| -> Result<(), TemplateError> {
        match trees.iter_mut().find(|(n, _)| n == name) {
            Some(_) if empty => Ok(()),
            Some((_, existing)) if !existing.is_empty_tree() => Err(TemplateError::new(
                TemplateErrorKind::Syntax,
                format!("template: multiple definition of template {name:?}"),
            )),
            Some((_, existing)) => {
                *existing = body;
                Ok(())
            }
            None => {
                trees.push((name.to_owned(), body));
                Ok(())
            }
        }
    };
    let root_empty = root.is_empty_tree();
    add(ROOT, root, root_empty)?;
    for define in defines {
        let empty = define.body.is_empty_tree();
        let mut body = define.body.clone();
        rewrite::instrument(&mut body);
        add(&define.name, body, empty)?;
    }
    let template = Template::new(ROOT).missing_key(MissingKey::ZeroValue);
    Ok(trees.into_iter().fold(template, |template, (name, tree)| {
        template.add_parse_tree(&name, tree)
    }))
}

fn syntax_error(err: &gotmpl::TemplateError, source: &str) -> TemplateError {
    match err {
        gotmpl::TemplateError::Parse { line, message, .. }
        | gotmpl::TemplateError::Lex { line, message, .. } => at_line(
            TemplateErrorKind::Syntax,
            message.clone(),
            Some(*line),
            source,
        ),
        other => TemplateError::new(TemplateErrorKind::Syntax, other.to_string()),
    }
}

/// Output that refuses to grow past its cap.
struct BoundedText {
    text: String,
    cap: usize,
    overflowed: bool,
}

impl BoundedText {
    fn new(cap: usize) -> BoundedText {
        BoundedText {
            text: String::new(),
            cap,
            overflowed: false,
        }
    }
}

impl fmt::Write for BoundedText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.text.len() + s.len() > self.cap {
            self.overflowed = true;
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}
