//! The checks on `tools` and on names: what OpenAI requires of a function declaration.
//!
//! A name is what the model writes and the grammar forces, so it is bounded and plain: a
//! 10,000-character name would otherwise be rendered, compiled into a grammar and matched
//! on every token. Deliberately more lenient than OpenAI: a function name may contain `.`
//! (BFCL's `math.factorial`, MCP servers' dotted names), and there is no cap on the number
//! of tools (the prompt's length is bounded by the context instead).

use std::collections::HashMap;

use serde_json::Value;

use crate::error::ApiError;
use crate::json;
use crate::tool::Tool;

use super::refusal;

/// OpenAI's longest function or schema name.
const MAX_NAME: usize = 64;

/// Checks the declared tools: each named well and uniquely, each with an object schema for
/// its parameters. An empty `tools` is no tools (OpenAI refuses it; agent frameworks send it).
pub fn check(tools: &[Tool]) -> Result<(), ApiError> {
    let mut seen = HashMap::new();
    for (index, tool) in tools.iter().enumerate() {
        check_name(&format!("tools[{index}].function.name"), tool.name(), ".")?;
        if let Some(first) = seen.insert(tool.name(), index) {
            return Err(refusal::invalid(
                "tools",
                format!(
                    "the function name '{}' is declared twice (tools[{first}] and tools[{index}]).",
                    tool.name()
                ),
            ));
        }
        if let Some(parameters) = &tool.function.parameters {
            check_parameters(index, tool.name(), parameters)?;
        }
    }
    Ok(())
}

/// A function or schema name: 1 to 64 characters from `a-z`, `A-Z`, `0-9`, `_`, `-`, and
/// the characters in `also`.
pub fn check_name(param: &str, name: &str, also: &str) -> Result<(), ApiError> {
    let length = name.chars().count();
    if length == 0 {
        return Err(refusal::empty_string(param));
    }
    if length > MAX_NAME {
        return Err(refusal::too_long(param, MAX_NAME, length));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || also.contains(c);
    if name.chars().all(allowed) {
        return Ok(());
    }
    Err(refusal::invalid(
        param,
        format!(
            "string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_{also}-]+$'."
        ),
    ))
}

/// A function's parameters: a JSON Schema object, and one that describes an object.
fn check_parameters(index: usize, name: &str, parameters: &Value) -> Result<(), ApiError> {
    let param = format!("tools[{index}].function.parameters");
    let Some(schema) = parameters.as_object() else {
        return Err(refusal::wrong_type(
            &param,
            "an object",
            json::kind(parameters),
        ));
    };
    match schema.get("type") {
        None => Ok(()),
        Some(Value::String(kind)) if kind == "object" => Ok(()),
        Some(kind) => Err(refusal::invalid_schema(
            &param,
            &format!("function '{name}'"),
            format!("schema must be a JSON Schema of 'type: \"object\"', got 'type: {kind}'."),
        )),
    }
}
