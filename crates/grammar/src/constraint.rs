//! The constraint on one generation, as dialects make it and engines enforce it. It lives
//! here, below both, so that the engine crate never needs to know about dialects.

use crate::tree::{Grammar, Trigger};

/// A grammar tree, and when it is lazy, the triggers that switch it on (text before the
/// first trigger is free).
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub grammar: Grammar,
    pub triggers: Vec<Trigger>,
    /// Whether generation is free until a trigger appears. False when `tool_choice` forces
    /// a call: then the output must follow the grammar from its first byte.
    pub lazy: bool,
}
