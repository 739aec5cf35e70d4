//! Picking a dialect by the name a user types after `--style`.
//!
//! `render --request` and `parse` must agree on what a name means, so both look it up
//! here; a name the registry does not know is an error that lists the ones it does,
//! because a user guessing at spellings (`qwen`, `hermes2`) needs the list, not a shrug.
//!
//! `render --show system|conversation` needs more than a [`Dialect`]: the two parts a
//! prompt style's prompt is made of, which only [`PromptStyle`] exposes. The registry hands
//! out `&dyn Dialect`, so [`prompt_parts`] builds the prompt style anew from the name the
//! registry resolved, with the dialect crate's own constructors.

use anyhow::{anyhow, bail, Result};
use std::sync::Arc;
use toolbridge_chat::ChatRequest;
use toolbridge_dialect::dialect::{ChatTemplate, Dialect, DialectError};
use toolbridge_dialect::dialects::styles::{
    functionary_v2, hermes_2_pro, long, mixtral, short, thoughtful_steps, PromptStyle, ToolsPrompt,
};
use toolbridge_dialect::registry::Registry;
use toolbridge_template::Clock;

/// Every dialect, with `hermes_2_pro` dated by `clock` (`render --now`) instead of the
/// local clock, so the full prompt and `--show system` print the same date.
pub fn registry(clock: &Clock) -> Registry {
    let mut registry = Registry::default();
    registry.register(Arc::new(hermes_2_pro::dialect(clock.clone())), &[]);
    registry
}

/// The dialect `registry` knows as `name` (its own name or an alias).
pub fn dialect<'a>(registry: &'a Registry, name: &str) -> Result<&'a dyn Dialect> {
    registry.get(name).ok_or_else(|| {
        anyhow!(
            "unknown style {name:?}; the styles are: {}",
            registry.names().join(", ")
        )
    })
}

/// The two parts of a prompt style's prompt, as seed 000 prints them apart.
pub trait PromptParts {
    /// The system prompt the style injects for `request`, if any.
    fn system_prompt(&self, request: &ChatRequest) -> Result<Option<String>, DialectError>;

    /// The conversation rendered without the injected system prompt.
    fn conversation(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<String, DialectError>;
}

impl<P: ToolsPrompt> PromptParts for PromptStyle<P> {
    fn system_prompt(&self, request: &ChatRequest) -> Result<Option<String>, DialectError> {
        PromptStyle::system_prompt(self, request)
    }

    fn conversation(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<String, DialectError> {
        PromptStyle::conversation(self, request, template)
    }
}

/// The prompt style `registry` knows as `name`, with `hermes_2_pro` dated by `clock`; a
/// dialect that shows tools through the template itself has no parts to give.
pub fn prompt_parts(registry: &Registry, name: &str, clock: Clock) -> Result<Box<dyn PromptParts>> {
    Ok(match dialect(registry, name)?.name() {
        "short" => Box::new(short::dialect()),
        "long" => Box::new(long::dialect()),
        "hermes_2_pro" => Box::new(hermes_2_pro::dialect(clock)),
        "thoughtful_steps" => Box::new(thoughtful_steps::dialect()),
        "mixtral" => Box::new(mixtral::dialect()),
        "functionary_v2" => Box::new(functionary_v2::dialect()),
        other => bail!(
            "style {other} renders tools through the template; it has no separate system prompt"
        ),
    })
}
