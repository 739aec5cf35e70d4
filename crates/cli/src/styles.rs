//! Picking a dialect by the name a user types after `--style`.
//!
//! `render --request` and `parse` must agree on what a name means, so both look it up
//! here; a name the registry does not know is an error that lists the ones it does,
//! because a user guessing at spellings (`qwen`, `hermes2`) needs the list, not a shrug.

use anyhow::{anyhow, Result};
use toolbridge_dialect::dialect::Dialect;
use toolbridge_dialect::registry::Registry;

/// The dialect `registry` knows as `name` (its own name or an alias).
pub fn dialect<'a>(registry: &'a Registry, name: &str) -> Result<&'a dyn Dialect> {
    registry.get(name).ok_or_else(|| {
        anyhow!(
            "unknown style {name:?}; the styles are: {}",
            registry.names().join(", ")
        )
    })
}
