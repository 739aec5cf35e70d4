//! How the command prints an error: its message, then each cause's words once.
//!
//! anyhow's `{:#}` writes every cause after the message, but an error of the library
//! crates (`toolbridge_error::Error`) already ends with its cause's words, so its cause
//! would be said twice ("cannot read x: gone: gone"). [`Chain`] prints the chain with
//! [`toolbridge_error::write_chain`], which drops a cause the message above already ends
//! with; for errors without one, it prints what `{:#}` does.

use std::fmt;

/// `error` and its causes, each said once.
pub struct Chain<'a>(pub &'a anyhow::Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        toolbridge_error::write_chain(self.0.as_ref(), out)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use anyhow::Context;
    use toolbridge_agent::McpConfig;

    use super::Chain;

    #[test]
    fn an_error_with_a_source_prints_each_cause_once() {
        let path = Path::new("/nonexistent/toolbridge/mcp.json");
        let error = McpConfig::read(path)
            .context("the agent's tools")
            .expect_err("no such file");
        let cause = std::fs::read_to_string(path).expect_err("no such file");
        let once = format!(
            "the agent's tools: cannot read the MCP configuration {}: {cause}",
            path.display()
        );
        assert_eq!(Chain(&error).to_string(), once);
        assert_eq!(
            format!("{error:#}"),
            format!("{once}: {cause}"),
            "anyhow repeats it"
        );
    }

    #[test]
    fn causes_without_the_shape_print_as_anyhow_prints_them() {
        let error = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(Chain(&error).to_string(), format!("{error:#}"));
        assert_eq!(Chain(&error).to_string(), "outer: middle: inner");
    }
}
