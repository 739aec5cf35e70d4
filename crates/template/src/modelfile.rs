//! Ollama Modelfiles, read as Ollama's parser reads them.
//!
//! A Modelfile is how a model arrives in Ollama: `FROM` the weights, `TEMPLATE` its Go
//! chat template, `SYSTEM` its default system prompt, `PARAMETER stop …` its stop
//! strings, `MESSAGE role text` example turns put before every conversation, `LICENSE`
//! texts. Commands are case-insensitive, `#` starts a comment line, and a value is the
//! rest of the line, a `"…"` string or a `"""…"""` block (both may span lines, with no
//! escapes, as in Ollama). A later `TEMPLATE` or `SYSTEM` replaces an earlier one.

use crate::gotmpl::Message;
use crate::{TemplateError, TemplateErrorKind};

/// What a Modelfile says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Modelfile {
    pub from: String,
    pub template: Option<String>,
    pub system: Option<String>,
    /// `PARAMETER name value` lines in order (a name may repeat, as `stop` does).
    pub parameters: Vec<(String, String)>,
    pub messages: Vec<Message>,
    pub license: Vec<String>,
    pub adapters: Vec<String>,
}

/// Why a Modelfile does not parse at `line`, in Ollama's words where it has them.
fn error_at(line: usize, message: impl Into<String>) -> TemplateError {
    TemplateError::new(TemplateErrorKind::Modelfile { line }, message)
}

/// The commands Ollama accepts.
const COMMANDS: [&str; 10] = [
    "from",
    "license",
    "template",
    "system",
    "adapter",
    "renderer",
    "parser",
    "parameter",
    "message",
    "requires",
];

const ROLES: [&str; 3] = ["system", "user", "assistant"];

impl Modelfile {
    pub fn parse(text: &str) -> Result<Modelfile, TemplateError> {
        let mut modelfile = Modelfile::default();
        let mut reader = Reader {
            rest: text,
            line: 1,
        };
        let mut has_from = false;
        while let Some((command, line)) = reader.command() {
            let error = |message: String| error_at(line, message);
            let name = command.to_ascii_lowercase();
            if !COMMANDS.contains(&name.as_str()) {
                return Err(error(format!(
                    "unknown command {command:?}; a command must be one of {}",
                    COMMANDS.join(", ")
                )));
            }
            let argument = match name.as_str() {
                "parameter" | "message" => Some(reader.word().map_err(error)?),
                _ => None,
            };
            let value = reader.value().map_err(error)?;
            match (name.as_str(), argument) {
                ("from", _) => {
                    has_from = true;
                    modelfile.from = value;
                }
                ("template", _) => modelfile.template = Some(value),
                ("system", _) => modelfile.system = Some(value),
                ("license", _) => modelfile.license.push(value),
                ("adapter", _) => modelfile.adapters.push(value),
                ("parameter", Some(parameter)) => modelfile.parameters.push((parameter, value)),
                ("message", Some(role)) if ROLES.contains(&role.as_str()) => {
                    modelfile.messages.push(Message::new(role, value))
                }
                ("message", Some(role)) => {
                    return Err(error(format!(
                        "message role must be one of \"system\", \"user\", or \"assistant\", not {role:?}"
                    )))
                }
                _ => {}
            }
        }
        if !has_from {
            return Err(error_at(reader.line, "no FROM line"));
        }
        Ok(modelfile)
    }

    /// The `PARAMETER stop` strings, in order.
    pub fn stop(&self) -> Vec<String> {
        self.parameters
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("stop"))
            .map(|(_, value)| value.clone())
            .collect()
    }
}

/// Reads a Modelfile command by command.
struct Reader<'a> {
    rest: &'a str,
    line: usize,
}

impl<'a> Reader<'a> {
    /// The next command word and its line, past blank lines and comments.
    fn command(&mut self) -> Option<(&'a str, usize)> {
        loop {
            self.skip(|c| c.is_whitespace());
            if self.rest.starts_with('#') {
                let end = self.rest.find('\n').unwrap_or(self.rest.len());
                self.advance(end);
                continue;
            }
            if self.rest.is_empty() {
                return None;
            }
            let line = self.line;
            return Some((self.take_word(), line));
        }
    }

    /// A word on the command's line (a parameter name, a message role).
    fn word(&mut self) -> Result<String, String> {
        self.skip(|c| c == ' ' || c == '\t');
        match self.take_word() {
            "" => Err("missing value".into()),
            word => Ok(word.to_owned()),
        }
    }

    /// The command's value: a `"""` block, a `"` string, or the rest of the line.
    fn value(&mut self) -> Result<String, String> {
        self.skip(|c| c == ' ' || c == '\t');
        for quote in ["\"\"\"", "\""] {
            if let Some(body) = self.rest.strip_prefix(quote) {
                let end = body
                    .find(quote)
                    .ok_or_else(|| format!("unterminated {quote} string"))?;
                let value = body[..end].to_owned();
                self.advance(quote.len() + end + quote.len());
                let trailing = self.rest.find('\n').unwrap_or(self.rest.len());
                self.advance(trailing);
                return Ok(value);
            }
        }
        let end = self.rest.find('\n').unwrap_or(self.rest.len());
        let value = self.rest[..end].trim_end().to_owned();
        self.advance(end);
        if value.is_empty() {
            return Err("missing value".into());
        }
        Ok(value)
    }

    fn take_word(&mut self) -> &'a str {
        let end = self
            .rest
            .find(char::is_whitespace)
            .unwrap_or(self.rest.len());
        let word = &self.rest[..end];
        self.advance(end);
        word
    }

    fn skip(&mut self, skipped: impl Fn(char) -> bool) {
        let end = self
            .rest
            .find(|c: char| !skipped(c))
            .unwrap_or(self.rest.len());
        self.advance(end);
    }

    fn advance(&mut self, bytes: usize) {
        self.line += self.rest[..bytes].matches('\n').count();
        self.rest = &self.rest[bytes..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA: &str = r#"# Modelfile generated by "ollama show"
FROM /models/llama3.2.gguf
TEMPLATE """{{- range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>

{{ .Content }}<|eot_id|>
{{- end }}<|start_header_id|>assistant<|end_header_id|>

"""
system "You are
a pirate."
PARAMETER stop <|start_header_id|>
PARAMETER stop "<|eot_id|>"
parameter temperature 0.7
MESSAGE user Is the sea blue?
MESSAGE assistant "Arr, it be."
LICENSE """first"""
LICENSE second
"#;

    #[test]
    fn reads_every_command() {
        let modelfile = Modelfile::parse(LLAMA).unwrap();
        assert_eq!(modelfile.from, "/models/llama3.2.gguf");
        let template = modelfile.template.as_deref().unwrap();
        assert!(template.starts_with("{{- range .Messages }}"));
        assert!(template.ends_with("<|end_header_id|>\n\n"));
        assert_eq!(modelfile.system.as_deref(), Some("You are\na pirate."));
        assert_eq!(modelfile.stop(), ["<|start_header_id|>", "<|eot_id|>"]);
        assert_eq!(
            modelfile.parameters[2],
            ("temperature".into(), "0.7".into())
        );
        assert_eq!(
            modelfile.messages,
            [
                Message::new("user", "Is the sea blue?"),
                Message::new("assistant", "Arr, it be.")
            ]
        );
        assert_eq!(modelfile.license, ["first", "second"]);
    }

    #[test]
    fn errors_name_the_line() {
        let err = Modelfile::parse("FROM x\nTEMPLATE \"\"\"{{ .Prompt }}\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: unterminated \"\"\" string");
        let err = Modelfile::parse("FROM x\n\nFOO bar").unwrap_err();
        assert_eq!(err.kind(), &TemplateErrorKind::Modelfile { line: 3 });
        let err = Modelfile::parse("FROM x\nMESSAGE tool hi").unwrap_err();
        assert!(err.detail().contains("role"));
        assert_eq!(
            Modelfile::parse("SYSTEM hi").unwrap_err().detail(),
            "no FROM line"
        );
        assert_eq!(
            Modelfile::parse("FROM").unwrap_err().detail(),
            "missing value"
        );
    }
}
