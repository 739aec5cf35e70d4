//! Dialects: how each model family is shown tools, how its history is rewritten so its
//! template accepts it, the grammar of its calls, and the one streaming parser that reads
//! them back. Sits above `chat`, `template` and `grammar`; below `engine`'s users.

pub mod toolkit;

pub mod answer_format;
mod completion;
pub mod detect;
mod dialect;
pub mod dialects;
mod error;
mod events;
mod items;
mod parser;
pub mod proof;
mod registry;
pub mod rewrite;
mod shapes;
mod tool_ids;

pub use completion::{assemble, ChatAnswer};
pub use dialect::{ChatTemplate, Constraint, Dialect, Prepared, PromptParts, RenderInput};
pub use error::{DialectError, DialectErrorKind};
pub use events::{Event, EventOrder};
pub use items::{Change, Item, ItemKind, Items};
pub use parser::{parse_all, parse_cut, Pacing, StreamParser};
pub use registry::Registry;
pub use tool_ids::{IdFormat, RandomIds, SequentialIds, ToolIds};
