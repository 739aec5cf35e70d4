//! Anthropic's schema-less client tools, as the function tools they are.
//!
//! Anthropic defines a few tools that the model calls and the client runs, declared by
//! versioned type and name only (`{"type": "bash_20250124", "name": "bash"}`): their input
//! schema is Anthropic's, given in its tool-use docs, and the client (Claude Code, the
//! SDKs' tool helpers) runs calls of exactly that shape. Those whose schema is known here
//! become ordinary function tools with it:
//! - `bash_20241022`, `bash_20250124`: `command`, and `restart`;
//! - `text_editor_20241022`, `text_editor_20250124` (`str_replace_editor`) and
//!   `text_editor_20250429`, `text_editor_20250728` (`str_replace_based_edit_tool`): the
//!   `view`, `create`, `str_replace` and `insert` commands on a `path`, and `undo_edit` in
//!   the two older versions.
//!
//! Any other version, and the other client tools (`computer_…`, whose actions are screen
//! coordinates for a model that sees screenshots; `memory_…`), are left out as the server
//! tools are ([`crate::left_out`]): a guessed schema would have the model write calls the
//! client refuses.

use serde_json::{json, Value};

/// The function of the client tool `kind` named `name`, if its schema is known.
pub fn function(kind: &str, name: &str) -> Option<Value> {
    let (description, parameters) = match kind {
        "bash_20241022" | "bash_20250124" => (BASH, bash()),
        "text_editor_20241022" | "text_editor_20250124" => (EDITOR, editor(true)),
        "text_editor_20250429" | "text_editor_20250728" => (EDITOR, editor(false)),
        _ => return None,
    };
    Some(json!({"name": name, "description": description, "parameters": parameters}))
}

const BASH: &str = "Runs a command in a bash shell that persists between calls.";

const EDITOR: &str = "Views, creates and edits text files: `view` shows a file with line numbers \
(or lists a directory), `create` writes a new file, `str_replace` replaces text that occurs \
exactly once, `insert` adds text after a line.";

fn bash() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command to run."},
            "restart": {"type": "boolean", "description": "true restarts the shell."},
        },
        "required": ["command"],
    })
}

/// The text editor's input, with `undo_edit` in the versions that have it.
fn editor(undo: bool) -> Value {
    let mut commands = vec!["view", "create", "str_replace", "insert"];
    if undo {
        commands.push("undo_edit");
    }
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": commands},
            "path": {"type": "string", "description": "The absolute path of the file or directory."},
            "view_range": {
                "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                "description": "For `view`: the first and last line to show, from 1; -1 as the last reads to the end.",
            },
            "file_text": {"type": "string", "description": "For `create`: the content of the file."},
            "old_str": {"type": "string", "description": "For `str_replace`: the exact text to replace."},
            "new_str": {"type": "string", "description": "For `str_replace`: the new text; for `insert`: the text to insert."},
            "insert_line": {"type": "integer", "description": "For `insert`: the line after which to insert, 0 for the start."},
        },
        "required": ["command", "path"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_map_and_others_do_not() {
        let bash = function("bash_20250124", "bash").expect("known");
        assert_eq!(bash["name"], "bash");
        assert_eq!(bash["parameters"]["required"], json!(["command"]));
        let old = function("text_editor_20250124", "str_replace_editor").expect("known");
        let new = function("text_editor_20250728", "str_replace_based_edit_tool").expect("known");
        let commands = |tool: &Value| tool["parameters"]["properties"]["command"]["enum"].clone();
        assert!(commands(&old)
            .as_array()
            .is_some_and(|c| c.contains(&json!("undo_edit"))));
        assert!(!commands(&new)
            .as_array()
            .is_some_and(|c| c.contains(&json!("undo_edit"))));
        for unknown in [
            "computer_20250124",
            "memory_20250818",
            "bash_20990101",
            "web_search_20250305",
        ] {
            assert_eq!(function(unknown, "x"), None, "{unknown}");
        }
    }
}
