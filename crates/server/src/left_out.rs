//! The tools a client declares that this server leaves out, and how it says so.
//!
//! Agent clients declare, on every request and whatever model is behind the URL, tools
//! that run on the API provider's own servers (OpenAI's `web_search`, `file_search`,
//! `code_interpreter`, `image_generation`, remote `mcp`; Anthropic's `web_search_…`,
//! `code_execution_…`) or that take a call shape the chat path has not (OpenAI's
//! free-form `custom` tools). This server runs no tool, so it cannot offer them; refusing
//! the request would refuse those clients outright (Codex sends `web_search` on every
//! turn). So each API's mapping leaves them out — the model is not told of them and cannot
//! call them — and the answer names them in the [`HEADER`] and in a log line: nothing is
//! left out silently.

use axum::http::HeaderValue;
use axum::response::Response;

/// The response header that names the tools left out, comma-separated.
pub const HEADER: &str = "x-toolbridge-ignored-tools";

/// The tools of one request that were left out, by type (or name, where that says more).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LeftOut(Vec<String>);

impl LeftOut {
    /// Records that `tool` was left out.
    pub fn add(&mut self, tool: impl Into<String>) {
        self.0.push(tool.into());
    }

    /// The tools left out, in the order they were declared.
    #[cfg(test)]
    pub fn tools(&self) -> &[String] {
        &self.0
    }

    /// `response` with the header naming the tools left out, and the log line, if any were.
    pub fn mark(self, mut response: Response) -> Response {
        if self.0.is_empty() {
            return response;
        }
        let list = self.0.join(", ");
        tracing::info!(tools = %list, "tools left out: this server cannot run them");
        // A name a client wrote may hold bytes a header cannot; the log line still says it.
        if let Ok(value) = HeaderValue::from_str(&list) {
            response.headers_mut().insert(HEADER, value);
        }
        response
    }
}
