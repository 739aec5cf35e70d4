//! Tools from MCP servers, through the official Rust SDK (`rmcp`).
//!
//! Servers are configured as MCP clients (Claude Desktop, Cursor, VS Code) share them, so a
//! user's existing file works unchanged:
//!
//! ```json
//! {"mcpServers": {
//!   "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
//!   "docs": {"url": "http://127.0.0.1:8000/mcp"}
//! }}
//! ```
//!
//! An entry with `command` is started as a child process and spoken to over stdio; one
//! with `url` over streamable HTTP. Servers are trusted as the user configured them: they
//! run outside the sandbox, with the user's rights, as in every MCP client.

use std::collections::BTreeMap;
use std::path::Path;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{AgentError, AgentErrorKind};

/// A `{"mcpServers": {…}}` file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpConfig {
    pub mcp_servers: BTreeMap<String, ServerConfig>,
}

/// One server: a command to start (stdio) or a URL (streamable HTTP).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ServerConfig {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(flatten)]
        filter: ToolFilter,
    },
    Http {
        url: String,
        #[serde(flatten)]
        filter: ToolFilter,
    },
}

/// Which of a server's tools are offered, in Gemini CLI's keys: only those of
/// `includeTools` when it is given, never those of `excludeTools`. A small model chooses
/// better among few tools.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFilter {
    #[serde(default)]
    include_tools: Option<Vec<String>>,
    #[serde(default)]
    exclude_tools: Vec<String>,
}

impl ToolFilter {
    fn admits(&self, tool: &str) -> bool {
        let included = self
            .include_tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == tool));
        included && !self.exclude_tools.iter().any(|name| name == tool)
    }
}

impl ServerConfig {
    fn filter(&self) -> &ToolFilter {
        match self {
            ServerConfig::Stdio { filter, .. } | ServerConfig::Http { filter, .. } => filter,
        }
    }
}

impl McpConfig {
    /// Reads a configuration file.
    pub fn read(path: &Path) -> Result<McpConfig, AgentError> {
        let error = || AgentError::new(AgentErrorKind::McpConfig, path.display().to_string());
        let text = std::fs::read_to_string(path).map_err(|e| error().with_source(e))?;
        McpConfig::parse(&text).map_err(|e| error().with_source(e))
    }

    /// Parses a configuration's text; each server needs `command` or `url`.
    pub fn parse(text: &str) -> Result<McpConfig, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A tool one server offers, as it described it.
#[derive(Debug, Clone)]
pub struct McpTool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Value,
}

/// A connected server.
pub struct McpServer {
    name: String,
    filter: ToolFilter,
    service: RunningService<RoleClient, ()>,
}

impl McpServer {
    /// Starts or connects to `config`'s server and completes MCP's handshake.
    pub async fn connect(name: &str, config: &ServerConfig) -> Result<McpServer, AgentError> {
        // A cause followed by words of ours (the command, the URL) stays in the detail, as
        // before: the shape writes a cause's words last.
        let start_error = |detail: String| AgentError::new(AgentErrorKind::McpStart, detail);
        let service = match config {
            ServerConfig::Stdio {
                command, args, env, ..
            } => {
                let command = tokio::process::Command::new(command).configure(|cmd| {
                    cmd.args(args).envs(env);
                });
                let transport = TokioChildProcess::new(command).map_err(|e| {
                    start_error(format!(
                        "`{name}`: {e} (command `{}`)",
                        command_line(config)
                    ))
                })?;
                ().serve(transport)
                    .await
                    .map_err(|e| start_error(format!("`{name}`")).with_source(e))?
            }
            ServerConfig::Http { url, .. } => {
                let transport = StreamableHttpClientTransport::from_uri(url.as_str());
                ().serve(transport)
                    .await
                    .map_err(|e| start_error(format!("`{name}`: {e} (at {url})")))?
            }
        };
        Ok(McpServer {
            name: name.to_owned(),
            filter: config.filter().clone(),
            service,
        })
    }

    /// The tools the server lists that its filter admits.
    pub async fn tools(&self) -> Result<Vec<McpTool>, AgentError> {
        let tools = self
            .service
            .list_all_tools()
            .await
            .map_err(|e| self.call_error(e))?;
        Ok(tools
            .into_iter()
            .filter(|tool| self.filter.admits(&tool.name))
            .map(|tool| McpTool {
                name: tool.name.into_owned(),
                description: tool.description.map(|text| text.into_owned()),
                input_schema: Value::Object((*tool.input_schema).clone()),
            })
            .collect())
    }

    /// Calls `tool` with `arguments`; the text of its result, and whether the server
    /// marked it an error.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<(String, bool), AgentError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = self
            .service
            .call_tool(params)
            .await
            .map_err(|e| self.call_error(e))?;
        Ok((result_text(&result), result.is_error == Some(true)))
    }

    fn call_error(&self, error: impl std::error::Error + Send + Sync + 'static) -> AgentError {
        AgentError::new(AgentErrorKind::McpCall, format!("`{}`", self.name)).with_source(error)
    }
}

fn command_line(config: &ServerConfig) -> String {
    match config {
        ServerConfig::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        ServerConfig::Http { url, .. } => url.clone(),
    }
}

/// A result as the model reads it: its text blocks, then its structured content when it
/// has no text; other blocks (images, audio) are named, not inlined.
fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block.as_text() {
            Some(text) => text.text.clone(),
            None => "[non-text content]".to_owned(),
        })
        .collect();
    if parts.is_empty() {
        if let Some(structured) = &result.structured_content {
            parts.push(structured.to_string());
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shared_mcp_servers_format() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "docs": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}
            }}"#,
        )
        .expect("parses");
        assert!(matches!(
            &config.mcp_servers["time"],
            ServerConfig::Stdio { command, args, env, .. }
                if command == "uvx" && args == &["mcp-server-time"] && env["TZ"] == "UTC"
        ));
        assert!(matches!(
            &config.mcp_servers["docs"],
            ServerConfig::Http { url, .. } if url == "http://127.0.0.1:8000/mcp"
        ));
    }

    #[test]
    fn include_and_exclude_tools_filter_a_servers_tools() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "a": {"command": "x", "includeTools": ["one", "two"], "excludeTools": ["two"]},
                "b": {"url": "http://127.0.0.1:1/mcp", "excludeTools": ["one"]}
            }}"#,
        )
        .expect("parses");
        let a = config.mcp_servers["a"].filter();
        assert_eq!(
            [a.admits("one"), a.admits("two"), a.admits("three")],
            [true, false, false]
        );
        let b = config.mcp_servers["b"].filter();
        assert_eq!([b.admits("one"), b.admits("two")], [false, true]);
    }

    #[test]
    fn a_server_with_neither_command_nor_url_is_an_error() {
        let error =
            McpConfig::parse(r#"{"mcpServers": {"x": {"args": []}}}"#).expect_err("refused");
        assert!(error.to_string().contains("did not match"), "{error}");
    }
}
