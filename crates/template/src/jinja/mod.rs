//! Hugging Face chat templates, rendered as `transformers` renders them.
//!
//! `transformers.apply_chat_template` compiles a template in jinja2's
//! `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)` with the
//! `loopcontrols` extension, its own `tojson`, `raise_exception`, `strftime_now` and the
//! `{% generation %}` tag. This module configures minijinja to behave the same way,
//! byte for byte, and to stay bounded on templates nobody has reviewed: a GGUF from a
//! stranger carries its template, and rendering it must never hang, exhaust memory or
//! reach outside its inputs (see [`Limits`]).

mod clock;
mod context;
mod error;
mod generation;
mod limits;
mod pyfilters;
mod pyfmt;
mod pyjson;
mod pymethods;
mod pysource;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Value, ValueKind};
use minijinja::{Environment, ErrorKind, State, UndefinedBehavior};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::TemplateError;

pub use clock::Clock;
pub(crate) use limits::json_nests_deeper;
pub use limits::Limits;

/// The name the compiled template goes by inside its environment and in errors.
const TEMPLATE_NAME: &str = "chat_template";

/// How the template is compiled and rendered. The defaults are `transformers`' settings.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Remove the first newline after a block tag (`trim_blocks`).
    pub trim_blocks: bool,
    /// Strip whitespace before a block tag at the start of a line (`lstrip_blocks`).
    pub lstrip_blocks: bool,
    /// Keep a single trailing newline of the template (jinja2 drops it by default).
    pub keep_trailing_newline: bool,
    /// Where `strftime_now` reads the time.
    pub clock: Clock,
    /// Bounds on time, memory and depth for one render.
    pub limits: Limits,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            trim_blocks: true,
            lstrip_blocks: true,
            keep_trailing_newline: false,
            clock: Clock::default(),
            limits: Limits::default(),
        }
    }
}

/// A compiled chat template, ready to render many contexts.
pub struct JinjaTemplate {
    env: Environment<'static>,
    limits: Limits,
}

impl JinjaTemplate {
    /// Compiles `source` with `transformers`' settings.
    pub fn new(source: &str) -> Result<JinjaTemplate, TemplateError> {
        JinjaTemplate::with_options(source, RenderOptions::default())
    }

    /// Compiles `source` with the given options.
    pub fn with_options(
        source: &str,
        options: RenderOptions,
    ) -> Result<JinjaTemplate, TemplateError> {
        let syntax = syntax_config(&options);
        let mut env = python_environment(&options, syntax.clone());
        let source = pysource::rewrite(source, &syntax);
        catch_unwind(AssertUnwindSafe(|| {
            env.add_template_owned(TEMPLATE_NAME, source.clone())
        }))
        .map_err(|_| crate::error::engine_panicked())?
        .map_err(|err| error::from_minijinja(&err, &source))?;
        Ok(JinjaTemplate {
            env,
            limits: options.limits,
        })
    }

    /// Renders the template with `context`'s top-level keys as its variables.
    pub fn render(&self, context: &serde_json::Value) -> Result<String, TemplateError> {
        let context = context::json_to_value(context, self.limits.max_depth)
            .map_err(|err| error::from_minijinja(&err, ""))?;
        self.render_value(context)
    }

    /// Renders with a context that is already a minijinja value (its depth is the
    /// caller's to bound).
    pub fn render_value(&self, context: Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|err| error::from_minijinja(&err, ""))?;
        let mut output = limits::BoundedOutput::new(self.limits.max_output_bytes);
        let result = catch_unwind(AssertUnwindSafe(|| {
            template.render_captured_to(context, &mut output).map(drop)
        }))
        .map_err(|_| crate::error::engine_panicked())?;
        match result {
            Ok(()) => Ok(output.into_string()),
            Err(_) if output.overflowed() => Err(crate::error::output_too_large(&self.limits)),
            Err(err) => Err(error::from_minijinja(&err, template.source())),
        }
    }
}

/// A minijinja environment that behaves like `transformers`' jinja2 environment.
fn python_environment(options: &RenderOptions, syntax: SyntaxConfig) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(syntax);
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_unknown_method_callback(pymethods::unknown_method);
    env.set_formatter(|out, state, value| {
        let written = match value.as_str() {
            Some(text) if value.kind() == ValueKind::String => out.write_str(text),
            _ => out.write_str(&pyfmt::py_str(value, limits::bytes_left(state))?),
        };
        written.map_err(minijinja::Error::from)
    });
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    limits::apply(&mut env, &options.limits);
    pyfilters::register(&mut env);
    env.add_filter("tojson", pyjson::tojson);
    env.add_filter("string", |state: &State, value: Value| {
        pyfmt::py_str(&value, limits::bytes_left(state))
    });
    env.add_function("raise_exception", raise_exception);
    env.add_function(pysource::PY_ITER, pysource::py_iter);
    let clock = options.clock.clone();
    env.add_function("strftime_now", move |format: &str| {
        clock.strftime_now(format)
    });
    env
}

/// jinja2's default delimiters with the options' whitespace handling.
fn syntax_config(options: &RenderOptions) -> SyntaxConfig {
    SyntaxConfig::builder()
        .trim_blocks(options.trim_blocks)
        .lstrip_blocks(options.lstrip_blocks)
        .keep_trailing_newline(options.keep_trailing_newline)
        .build()
        .expect("the default delimiters are valid")
}

/// `raise_exception(message)`: the template refuses its input.
fn raise_exception(message: &str) -> Result<Value, minijinja::Error> {
    Err(minijinja::Error::new(
        ErrorKind::InvalidOperation,
        format!("TemplateError: {message}"),
    ))
}
