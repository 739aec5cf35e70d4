//! Picking a dialect by the name a user types after `--style`.
//!
//! `render --request` and `parse` must agree on what a name means, so both look it up
//! here; a name the registry does not know is an error that lists the ones it does,
//! because a user guessing at spellings (`qwen`, `hermes2`) needs the list, not a shrug.
//!
//! `render --show system|conversation` prints the two parts of a prompt style's prompt,
//! which the dialect gives through [`Dialect::prompt_parts`].

use anyhow::{anyhow, Result};
use std::sync::Arc;
use toolbridge_dialect::{
    detect, dialects::firefunction, dialects::styles::hermes_2_pro, Dialect, PromptParts, Registry,
};
use toolbridge_template::{ChatTemplate, Clock, TemplateSource};

/// Every dialect, with `hermes_2_pro` and FireFunction v2 dated by `clock` (`render --now`)
/// instead of the local clock, so the full prompt and `--show system` print the same date.
pub fn registry(clock: &Clock) -> Registry {
    let mut registry = Registry::default();
    registry.register(Arc::new(hermes_2_pro::dialect(clock.clone())), &[]);
    registry.register(
        Arc::new(firefunction::dialect(clock.clone())),
        &["firefunction"],
    );
    registry
}

/// The dialect the server picks for `source`'s template: the detected family's, or, where
/// the family has none and the template renders calls, one learned from it (added to
/// `registry`).
pub fn detected(source: &TemplateSource, registry: &mut Registry) -> Result<&'static str> {
    let text = source.select_for(None, true)?;
    let template = ChatTemplate::from_source(source, None, true)?;
    Ok(detect::choose(text, &template, registry).register_into(registry))
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

/// The two parts of the prompt of the dialect `registry` knows as `name`; a dialect whose
/// template describes the tools itself has no parts to give.
pub fn prompt_parts<'a>(registry: &'a Registry, name: &str) -> Result<&'a dyn PromptParts> {
    let dialect = dialect(registry, name)?;
    dialect.prompt_parts().ok_or_else(|| {
        anyhow!(
            "style {} renders tools through the template; it has no separate system prompt",
            dialect.name()
        )
    })
}
