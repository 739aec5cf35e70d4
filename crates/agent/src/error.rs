//! The one error of the crate: why a task, a model, an MCP server or a sandboxed run
//! failed, in kinds a caller can act on (the CLI prints them, the loop turns a tool's into
//! a result the model reads), with the error underneath kept as the cause.

use std::fmt;

/// Why the agent, its model or one of its tools failed.
pub type AgentError = toolbridge_error::Error<AgentErrorKind>;

/// What kind of [`AgentError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentErrorKind {
    /// An MCP configuration file that cannot be read or parsed; the detail is its path.
    McpConfig,
    /// An MCP server that cannot be started or connected to; the detail names it.
    McpStart,
    /// An MCP server that failed a request (its tools' list, a call); the detail names it.
    McpCall,
    /// The model's URL cannot be reached; the detail is the URL.
    ModelUnreachable,
    /// The model answered with an HTTP error `status`; the detail is the body.
    ModelStatus { status: u16 },
    /// The model's answer is not a chat completion.
    ModelMalformed,
    /// The model's answer has no choice.
    NoChoice,
    /// The model gave no answer within `turns` turns.
    TurnLimit { turns: usize },
    /// The kernel has no Landlock, so the built-ins cannot be confined.
    NoLandlock,
    /// The sandbox's file rules cannot be set up.
    SandboxRules,
    /// The workspace is not a folder.
    Workspace,
    /// A program cannot be started in the sandbox; the detail names it.
    Spawn,
    /// The `python3` on `PATH` cannot be used for `run_python`.
    Python,
    /// A sandboxed program cannot be waited for.
    Wait,
}

impl toolbridge_error::Kind for AgentErrorKind {
    fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentErrorKind::McpConfig => out.write_str("cannot read the MCP configuration "),
            AgentErrorKind::McpStart => out.write_str("cannot start MCP server "),
            AgentErrorKind::McpCall => out.write_str("MCP server "),
            AgentErrorKind::ModelUnreachable => out.write_str("cannot reach the model at "),
            AgentErrorKind::ModelStatus { status } => write!(out, "the model answered {status}: "),
            AgentErrorKind::ModelMalformed => {
                out.write_str("the model's answer is not a chat completion: ")
            }
            AgentErrorKind::NoChoice => out.write_str("the model gave no choice"),
            AgentErrorKind::TurnLimit { turns } => {
                write!(out, "no answer after {turns} turns (raise --max-turns)")
            }
            AgentErrorKind::NoLandlock => out.write_str(
                "this kernel has no Landlock, so built-in tools cannot be confined to the \
                 workspace; pass --unsandboxed to run them without it",
            ),
            AgentErrorKind::SandboxRules => {
                out.write_str("cannot set up the sandbox's file rules: ")
            }
            AgentErrorKind::Workspace => out.write_str("the workspace "),
            AgentErrorKind::Spawn => out.write_str("cannot start "),
            AgentErrorKind::Python => {
                out.write_str("cannot use python3 (found on PATH) for run_python: ")
            }
            AgentErrorKind::Wait => out.write_str("cannot wait for the program: "),
        }
    }
}
