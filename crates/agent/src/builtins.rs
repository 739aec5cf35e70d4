//! The built-in tools: run Python, run a shell command, read and write a file in the
//! workspace.
//!
//! Every one of them, file access included, is a program run by [`crate::sandbox`], so
//! one set of kernel rules decides what a call may touch: `read_file` is `cat`,
//! `write_file` is `sh` writing its standard input. A path the model gives is resolved
//! by the sandboxed program itself, relative to the workspace, and the kernel refuses it
//! when it points outside what the policy grants (`..`, absolute paths and symlinks
//! alike).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Map, Value};

use crate::error::{AgentError, AgentErrorKind};
use crate::sandbox::{self, Output, Policy};

/// The built-in tools under one sandbox policy.
#[derive(Debug, Clone)]
pub struct Builtins {
    policy: Policy,
    python: PathBuf,
}

impl Builtins {
    /// The tools under `policy`, with the `python3` found on `PATH`: its real executable
    /// is run (not a version manager's shim) and its installation is made readable.
    pub fn new(mut policy: Policy) -> Result<Builtins, AgentError> {
        let (python, prefix) = locate_python()?;
        policy.allow_read.push(prefix);
        Ok(Builtins { policy, python })
    }

    /// The policy calls run under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The tools' OpenAI function definitions: `(name, description, parameters)`.
    pub fn definitions(&self) -> Vec<(&'static str, &'static str, Value)> {
        let string = |name: &str, about: &str| {
            json!({
                "type": "object",
                "properties": {name: {"type": "string", "description": about}},
                "required": [name]
            })
        };
        vec![
            (
                "run_python",
                "Run a Python 3 program in the workspace and return what it prints.",
                string("code", "The program's source code."),
            ),
            (
                "run_shell",
                "Run a shell command (sh) in the workspace and return its output.",
                string("command", "The command line."),
            ),
            (
                "read_file",
                "Read a text file of the workspace.",
                string("path", "The file's path, relative to the workspace."),
            ),
            (
                "write_file",
                "Write a text file in the workspace, creating folders as needed.",
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "The file's path, relative to the workspace."},
                        "content": {"type": "string", "description": "The text to write."}
                    },
                    "required": ["path", "content"]
                }),
            ),
        ]
    }

    /// Runs built-in `name` with `arguments` (already checked against its schema). A
    /// name that is not a built-in is `None`.
    pub fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Result<Output, AgentError>> {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("");
        let shell = Path::new("/bin/sh");
        Some(match name {
            "run_python" => sandbox::run(
                &self.policy,
                &self.python,
                &["-I", "-"],
                text("code").as_bytes(),
            ),
            "run_shell" => sandbox::run(&self.policy, shell, &["-c", text("command")], b""),
            "read_file" => sandbox::run(
                &self.policy,
                Path::new("/bin/cat"),
                &["--", text("path")],
                b"",
            ),
            "write_file" => sandbox::run(
                &self.policy,
                shell,
                &["-c", WRITE_SCRIPT, "write_file", text("path")],
                text("content").as_bytes(),
            ),
            _ => return None,
        })
    }
}

/// `write_file`'s program: the parent folders, then standard input into the file.
const WRITE_SCRIPT: &str = r#"mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && echo "wrote $1""#;

/// The real executable and the installation prefix of the `python3` on `PATH`.
fn locate_python() -> Result<(PathBuf, PathBuf), AgentError> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys; print(sys.executable); print(sys.base_prefix)",
        ])
        .output()
        .map_err(|error| AgentError::new(AgentErrorKind::Python, "").with_source(error))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(executable), Some(prefix)) if output.status.success() => {
            Ok((PathBuf::from(executable), PathBuf::from(prefix)))
        }
        _ => Err(AgentError::new(
            AgentErrorKind::Python,
            format!(
                "it did not say where it is installed ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        )),
    }
}
