//! Grammars for constrained decoding: JSON Schema to one grammar tree, printed as GBNF
//! for llama.cpp servers and as Lark for llguidance, and the schema renderings prompts
//! need. It depends on nothing else in the workspace so that every layer above may use it.

pub mod check;
pub mod constraint;
pub mod error;
pub mod gbnf;
pub mod lark;
pub mod render;
pub mod schema;
pub mod tree;

pub use constraint::Constraint;
pub use error::{GrammarError, GrammarErrorKind};
pub use tree::{CharClass, ClassItem, Expr, Grammar, Rule, Token, Trigger};
