//! `toolbridge agent`: a model, tools, and a loop between them until the task is answered.
//!
//! - [`Session`] runs the loop (model → calls → results → model) up to a turn limit,
//!   reporting every call and result as an [`Event`] as it happens;
//! - [`ChatModel`] is the model: [`HttpModel`] for any OpenAI-compatible URL,
//!   [`RouterModel`] for toolbridge's own server in-process (the embedded engine);
//! - [`Toolbox`] gathers the tools: MCP servers' ([`McpConfig`], through `rmcp`) and the
//!   [`Builtins`] (Python, shell, files), which run in the [`sandbox`] — no network, the
//!   file system limited to the workspace, CPU time, memory and output capped.

mod builtins;
mod error;
mod mcp;
mod model;
pub mod sandbox;
mod session;
mod tools;

pub use builtins::Builtins;
pub use error::{AgentError, AgentErrorKind};
pub use mcp::{McpConfig, ServerConfig};
pub use model::{ChatModel, HttpModel, ModelFuture, RouterModel};
pub use sandbox::Policy;
pub use session::{Event, Options, Session};
pub use tools::{exposed_name, ToolResult, Toolbox};
