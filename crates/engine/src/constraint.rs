//! The one place a [`Constraint`] becomes the Lark program llguidance compiles, so the
//! scripted engine checks exactly the language the real engines enforce.

use toolbridge_grammar::{lark, Constraint};

/// The constraint as Lark: free text up to a trigger when lazy, the grammar from the
/// first byte otherwise.
pub(crate) fn to_lark(constraint: &Constraint) -> String {
    if constraint.lazy {
        lark::print_lazy(&constraint.grammar, &constraint.triggers)
    } else {
        lark::print(&constraint.grammar)
    }
}
