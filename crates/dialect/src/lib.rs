//! Dialects: how each model family is shown tools, how its history is rewritten so its
//! template accepts it, the grammar of its calls, and the one streaming parser that reads
//! them back. Sits above `chat`, `template` and `grammar`; below `engine`'s users.

pub mod toolkit;

pub mod answer_format;
pub mod assemble;
pub mod chunks;
pub mod detect;
pub mod dialect;
pub mod dialects;
pub mod events;
pub mod items;
pub mod parser;
pub mod proof;
pub mod registry;
pub mod rewrite;
mod shapes;
pub mod tool_ids;
