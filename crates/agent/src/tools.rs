//! The agent's tools, from every source, under one list of names the model sees.
//!
//! Built-ins keep their names (`run_python`, `read_file`, …). An MCP server's tool is
//! exposed as `server__tool`: OpenAI's function names must match `^[a-zA-Z0-9_-]{1,64}$`,
//! so a double underscore (not a `.` or `/`, which the pattern refuses) separates the two,
//! every other character is replaced by `_`, and a name past 64 characters is shortened
//! with a hash of the whole to stay unique. Two servers may then offer tools of the same
//! name without clashing.
//!
//! Every call is checked before it runs: an unknown name, arguments that are not a JSON
//! object or do not fit the tool's schema come back to the model as an error result it can
//! correct, never as a crash of the loop. The schema check uses the same llguidance program
//! that constrains generation, so a remote model without a grammar is held to what a
//! constrained one could write.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::{Map, Value};
use toolbridge_chat::{FunctionDefinition, Tool};
use toolbridge_grammar::check::Validator;

use crate::builtins::Builtins;
use crate::error::AgentError;
use crate::mcp::{McpConfig, McpServer};

/// What a tool call gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The text the model reads.
    pub text: String,
    /// The call failed (the tool said so, or it could not be made).
    pub is_error: bool,
}

impl ToolResult {
    fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Where a tool's calls go.
enum Source {
    Builtin,
    Mcp {
        server: Arc<McpServer>,
        tool: String,
    },
}

struct Entry {
    definition: Tool,
    source: Source,
}

/// Every tool the agent offers.
#[derive(Default)]
pub struct Toolbox {
    entries: Vec<Entry>,
    builtins: Option<Builtins>,
}

impl Toolbox {
    /// No tools.
    pub fn new() -> Toolbox {
        Toolbox::default()
    }

    /// Adds the built-in tools.
    pub fn with_builtins(mut self, builtins: Builtins) -> Toolbox {
        for (name, description, parameters) in builtins.definitions() {
            self.push(
                name.to_owned(),
                Some(description.to_owned()),
                parameters,
                Source::Builtin,
            );
        }
        self.builtins = Some(builtins);
        self
    }

    /// Connects to every server of `config` and adds its tools.
    pub async fn with_mcp(mut self, config: &McpConfig) -> Result<Toolbox, AgentError> {
        for (name, server_config) in &config.mcp_servers {
            let server = Arc::new(McpServer::connect(name, server_config).await?);
            for tool in server.tools().await? {
                let source = Source::Mcp {
                    server: Arc::clone(&server),
                    tool: tool.name.clone(),
                };
                self.push(
                    exposed_name(name, &tool.name),
                    tool.description,
                    tool.input_schema,
                    source,
                );
            }
        }
        Ok(self)
    }

    fn push(
        &mut self,
        name: String,
        description: Option<String>,
        parameters: Value,
        source: Source,
    ) {
        let definition = Tool::function(FunctionDefinition {
            name,
            description,
            parameters: Some(parameters),
            ..FunctionDefinition::default()
        });
        self.entries.push(Entry { definition, source });
    }

    /// The tools as the model is told of them.
    pub fn definitions(&self) -> Vec<Tool> {
        self.entries
            .iter()
            .map(|entry| entry.definition.clone())
            .collect()
    }

    /// Calls tool `name` with `arguments` (the JSON text the model wrote).
    pub async fn call(&self, name: &str, arguments: &str) -> ToolResult {
        let Some(entry) = self
            .entries
            .iter()
            .find(|entry| entry.definition.name() == name)
        else {
            let known: Vec<&str> = self.entries.iter().map(|e| e.definition.name()).collect();
            return ToolResult::error(format!(
                "unknown tool `{name}`; the tools are: {}",
                known.join(", ")
            ));
        };
        let arguments = match check_arguments(&entry.definition, arguments) {
            Ok(arguments) => arguments,
            Err(message) => return ToolResult::error(message),
        };
        match &entry.source {
            Source::Builtin => self.call_builtin(name, arguments).await,
            Source::Mcp { server, tool } => match server.call(tool, arguments).await {
                Ok((text, is_error)) => ToolResult { text, is_error },
                Err(error) => ToolResult::error(error.to_string()),
            },
        }
    }

    async fn call_builtin(&self, name: &str, arguments: Map<String, Value>) -> ToolResult {
        let Some(builtins) = self.builtins.clone() else {
            return ToolResult::error(format!("`{name}` is not available"));
        };
        let name = name.to_owned();
        let run = tokio::task::spawn_blocking(move || builtins.call(&name, &arguments)).await;
        match run {
            Ok(Some(Ok(output))) => ToolResult {
                is_error: !output.success(),
                text: output.report(),
            },
            Ok(Some(Err(error))) => ToolResult::error(error.to_string()),
            Ok(None) => ToolResult::error("not a built-in tool"),
            Err(error) => ToolResult::error(format!("the tool's run failed: {error}")),
        }
    }
}

/// The arguments as an object that fits the tool's schema, or what is wrong with them.
fn check_arguments(tool: &Tool, arguments: &str) -> Result<Map<String, Value>, String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => object,
        Ok(_) => {
            return Err(format!(
                "bad arguments for `{}`: not a JSON object",
                tool.name()
            ))
        }
        Err(error) => {
            return Err(format!(
                "bad arguments for `{}`: not JSON ({error})",
                tool.name()
            ))
        }
    };
    let Some(schema) = &tool.function.parameters else {
        return Ok(object);
    };
    // A schema llguidance cannot compile is the server's to enforce; the call goes on.
    if let Ok(validator) = Validator::from_llguidance_json_schema(schema) {
        let compact = Value::Object(object.clone()).to_string();
        if !validator.accepts(&compact) {
            return Err(format!(
                "bad arguments for `{}`: {compact} does not fit its parameters schema {schema}",
                tool.name()
            ));
        }
    }
    Ok(object)
}

/// The longest function name OpenAI accepts.
const MAX_NAME: usize = 64;

/// `server__tool`, with characters outside `[a-zA-Z0-9_-]` replaced by `_` and long names
/// cut to 64 characters with a hash of the whole.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    let mut hasher = DefaultHasher::new();
    (server, tool).hash(&mut hasher);
    let suffix = format!("_{:08x}", hasher.finish() as u32);
    format!("{}{suffix}", &name[..MAX_NAME - suffix.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_names_fit_openais_pattern() {
        assert_eq!(
            exposed_name("time", "get_current_time"),
            "time__get_current_time"
        );
        assert_eq!(exposed_name("my.server", "a/b c"), "my_server__a_b_c");
        let long = exposed_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, exposed_name("server", &"x".repeat(101)));
        assert!(long
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }
}
