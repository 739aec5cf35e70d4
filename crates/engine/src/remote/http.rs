//! The one HTTP client every remote backend talks through: JSON requests, and streamed
//! answers cut into frames (server-sent events or newline-delimited JSON).
//!
//! Every request gets a connection of its own (see [`Http::new`]). Every wait is bounded
//! by the idle timeout: connecting, the headers, and each gap
//! between two pieces of a streamed body. A long generation that keeps streaming never
//! times out; a server that goes quiet does, as [`Failure::Timeout`]. Dropping a
//! [`Frames`] drops the connection, which is how a cancelled generation tells the server
//! to stop.
//!
//! It is the bottom of the remote engine and imports nothing of it: how an answer is
//! framed ([`Framing`]) and how an error body names its message ([`error_message`]) are
//! here, with the frames and failures that need them.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;

use crate::error::{unavailable_error, upstream_error};
use crate::{EngineError, EngineErrorKind};

/// Why an HTTP exchange failed, in the terms that decide what happens next: a replica
/// that cannot be reached is ejected and the request retried elsewhere; a status is the
/// server's answer, read by its backend.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Failure {
    /// No connection, or it broke before any answer.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The server answered with a status other than 2xx.
    #[error("answered {status}: {}", error_message(body))]
    Status { status: u16, body: String },
    /// Nothing arrived within the idle timeout.
    #[error("{0}")]
    Timeout(String),
    /// The answer broke off, or is not what the protocol sends.
    #[error("{0}")]
    Broken(String),
}

impl Failure {
    /// Whether the replica is unfit for more requests until its health check passes.
    pub fn ejects(&self) -> bool {
        match self {
            Failure::Connect(_) => true,
            Failure::Status { status, .. } => *status >= 500,
            Failure::Timeout(_) | Failure::Broken(_) => false,
        }
    }

    /// The shared mapping onto engine errors: a server error or a broken answer is a bad
    /// gateway (502), an overloaded or unreachable server unavailable (503), silence a
    /// timeout (504).
    pub fn into_engine_error(self) -> EngineError {
        match self {
            Failure::Connect(message) => unavailable_error(message),
            Failure::Status { status: 503, body } => {
                unavailable_error(format!("503: {}", error_message(&body)))
            }
            Failure::Status { status, body } => {
                upstream_error(format!("{status}: {}", error_message(&body)))
            }
            Failure::Timeout(message) => EngineError::new(EngineErrorKind::Timeout, message),
            Failure::Broken(message) => upstream_error(message),
        }
    }
}

/// The first of the places error bodies name their message in
/// (`{"error": {"message": …}}`, `{"error": "…"}`, `{"message": "…"}`, `{"detail": "…"}`),
/// else the body itself, cut short.
pub(crate) fn error_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.trim().chars().take(500).collect();
    };
    let candidates = [
        value.pointer("/error/message"),
        value.get("error"),
        value.get("message"),
        value.get("detail"),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find_map(|v| v.as_str().map(str::to_owned));
    found.unwrap_or_else(|| value.to_string().chars().take(500).collect())
}

/// How a streamed answer is cut into frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events: each event's `data:` lines are a frame.
    Sse,
    /// One JSON value per line.
    Ndjson,
}

/// The HTTP client, with the idle timeout every wait is bounded by.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    idle: Duration,
}

impl Http {
    /// A client whose waits are bounded by `idle`, sending `api_key` as a bearer token.
    pub fn new(idle: Duration, api_key: Option<&str>) -> Result<Http, EngineError> {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(key) = api_key {
            let value =
                reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    EngineError::new(
                        EngineErrorKind::Backend,
                        "the engine API key is not a valid header value",
                    )
                })?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(idle.min(Duration::from_secs(10)))
            // A connection per request. A POST on a kept-alive connection the server has
            // just closed (llama-server closes them after a streamed answer, and after
            // seconds idle) fails without an answer and cannot be safely sent again; a
            // new connection costs a handshake, a fraction of a millisecond nearby.
            .pool_max_idle_per_host(0)
            // Nagle off, as reqwest 0.12 already has it, said here so that it stays so: a
            // request written in two pieces (headers, then the body) would otherwise wait
            // for the server's delayed acknowledgement, up to 40 ms, before the second.
            .tcp_nodelay(true)
            .build()
            .map_err(|error| {
                EngineError::new(EngineErrorKind::Backend, "cannot make an HTTP client")
                    .with_source(error)
            })?;
        Ok(Http { client, idle })
    }

    /// The same client with another idle timeout (health checks wait less).
    pub fn with_idle(&self, idle: Duration) -> Http {
        Http {
            client: self.client.clone(),
            idle,
        }
    }

    /// `GET url`, its body as JSON.
    pub async fn get_json(&self, url: &str) -> Result<Value, Failure> {
        let response = self.send(self.client.get(url)).await?;
        self.json(url, response).await
    }

    /// Whether `GET url` answers 2xx.
    pub async fn get_ok(&self, url: &str) -> bool {
        self.send(self.client.get(url)).await.is_ok()
    }

    /// `POST url` with a JSON body, the answer as JSON.
    pub async fn post_json(&self, url: &str, body: &Value) -> Result<Value, Failure> {
        let response = self.send(self.client.post(url).json(body)).await?;
        self.json(url, response).await
    }

    /// `POST url` with a JSON body, the answer read as `framing`'s frames.
    pub async fn post_stream(
        &self,
        url: &str,
        body: &Value,
        framing: Framing,
    ) -> Result<Frames, Failure> {
        let response = self.send(self.client.post(url).json(body)).await?;
        Ok(Frames::new(response, framing, self.idle))
    }

    /// Sends, waiting at most the idle timeout for the headers; a status other than 2xx
    /// is a [`Failure::Status`] with the body that came with it.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, Failure> {
        let response = match tokio::time::timeout(self.idle, request.send()).await {
            Err(_) => return Err(self.timed_out("an answer")),
            Ok(Err(error)) => return Err(Failure::Connect(describe(&error))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = match tokio::time::timeout(self.idle, response.text()).await {
            Ok(Ok(body)) => body,
            _ => String::new(),
        };
        Err(Failure::Status {
            status: status.as_u16(),
            body,
        })
    }

    async fn json(&self, url: &str, response: reqwest::Response) -> Result<Value, Failure> {
        let body = match tokio::time::timeout(self.idle, response.bytes()).await {
            Err(_) => return Err(self.timed_out("a body")),
            Ok(Err(error)) => return Err(Failure::Broken(describe(&error))),
            Ok(Ok(body)) => body,
        };
        serde_json::from_slice(&body).map_err(|error| {
            Failure::Broken(format!(
                "{url} answered with something other than JSON: {error}"
            ))
        })
    }

    fn timed_out(&self, what: &str) -> Failure {
        Failure::Timeout(format!(
            "no {what} within {} s (--engine-timeout)",
            self.idle.as_secs_f64()
        ))
    }
}

/// An error of reqwest's with its causes, which name what actually went wrong
/// (connection refused, reset by peer).
fn describe(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The frames of a streamed answer, in order.
pub(crate) struct Frames {
    response: reqwest::Response,
    splitter: FrameSplitter,
    idle: Duration,
}

impl Frames {
    fn new(response: reqwest::Response, framing: Framing, idle: Duration) -> Frames {
        Frames {
            response,
            splitter: FrameSplitter::new(framing),
            idle,
        }
    }

    /// The next frame; `None` once the body has ended (its last frame, if unterminated,
    /// comes before that).
    pub async fn next(&mut self) -> Option<Result<String, Failure>> {
        loop {
            if let Some(frame) = self.splitter.pop() {
                return Some(Ok(frame));
            }
            if self.splitter.ended {
                return None;
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Err(_) => {
                    return Some(Err(Failure::Timeout(format!(
                        "the answer stopped for {} s (--engine-timeout)",
                        self.idle.as_secs_f64()
                    ))))
                }
                Ok(Err(error)) => return Some(Err(Failure::Broken(describe(&error)))),
                Ok(Ok(Some(bytes))) => self.splitter.push(&bytes),
                Ok(Ok(None)) => self.splitter.end(),
            }
        }
    }
}

/// Cuts a byte stream into frames: SSE events (their `data:` lines joined with `\n`;
/// comments, `event:` and `id:` lines dropped) or NDJSON lines. Bytes are only decoded
/// once a whole line is in, so a character split between two chunks is never cut.
#[derive(Debug)]
pub(crate) struct FrameSplitter {
    framing: Framing,
    buffer: Vec<u8>,
    /// The `data:` lines of the SSE event being read.
    data: Option<String>,
    ready: VecDeque<String>,
    ended: bool,
}

impl FrameSplitter {
    pub fn new(framing: Framing) -> FrameSplitter {
        FrameSplitter {
            framing,
            buffer: Vec::new(),
            data: None,
            ready: VecDeque::new(),
            ended: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]);
            self.line(line.strip_suffix('\r').unwrap_or(&line));
        }
    }

    /// The body has ended: what is left is the last line, and an event not yet closed by
    /// a blank line is complete.
    pub fn end(&mut self) {
        if !self.buffer.is_empty() {
            let rest = std::mem::take(&mut self.buffer);
            let rest = String::from_utf8_lossy(&rest).into_owned();
            self.line(&rest);
        }
        self.dispatch();
        self.ended = true;
    }

    pub fn pop(&mut self) -> Option<String> {
        self.ready.pop_front()
    }

    fn line(&mut self, line: &str) {
        match self.framing {
            Framing::Ndjson => {
                if !line.trim().is_empty() {
                    self.ready.push_back(line.to_owned());
                }
            }
            Framing::Sse => {
                if line.is_empty() {
                    self.dispatch();
                } else if let Some(value) = line.strip_prefix("data:") {
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match &mut self.data {
                        Some(data) => {
                            data.push('\n');
                            data.push_str(value);
                        }
                        None => self.data = Some(value.to_owned()),
                    }
                } else if line.starts_with('{') {
                    // An error body some servers write without `data:` mid-stream.
                    self.ready.push_back(line.to_owned());
                }
            }
        }
    }

    fn dispatch(&mut self) {
        if let Some(data) = self.data.take() {
            self.ready.push_back(data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(framing: Framing, chunks: &[&[u8]]) -> Vec<String> {
        let mut splitter = FrameSplitter::new(framing);
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.push(chunk);
            while let Some(frame) = splitter.pop() {
                out.push(frame);
            }
        }
        splitter.end();
        while let Some(frame) = splitter.pop() {
            out.push(frame);
        }
        out
    }

    #[test]
    fn sse_events_survive_any_cut() {
        let body =
            "data: {\"a\":\"é\"}\n\n: comment\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n";
        let whole = frames(Framing::Sse, &[body.as_bytes()]);
        assert_eq!(whole, vec!["{\"a\":\"é\"}", "one\ntwo", "[DONE]"]);
        for cut in 1..body.len() {
            let (a, b) = body.as_bytes().split_at(cut);
            assert_eq!(frames(Framing::Sse, &[a, b]), whole, "cut at {cut}");
        }
    }

    #[test]
    fn sse_crlf_and_an_unclosed_last_event() {
        let body = b"data: a\r\n\r\ndata: b";
        assert_eq!(frames(Framing::Sse, &[body]), vec!["a", "b"]);
    }

    #[test]
    fn ndjson_lines_are_frames() {
        let body = b"{\"response\":\"a\"}\n\n{\"done\":true}";
        assert_eq!(
            frames(Framing::Ndjson, &[body]),
            vec!["{\"response\":\"a\"}", "{\"done\":true}"]
        );
    }

    #[test]
    fn failures_map_to_gateway_statuses() {
        assert!(matches!(
            Failure::Connect("refused".into())
                .into_engine_error()
                .kind(),
            EngineErrorKind::Unavailable
        ));
        assert!(matches!(
            Failure::Timeout("quiet".into()).into_engine_error().kind(),
            EngineErrorKind::Timeout
        ));
        let status = Failure::Status {
            status: 500,
            body: r#"{"error":{"message":"boom"}}"#.into(),
        };
        assert!(status.ejects());
        assert!(
            matches!(status.into_engine_error(), e if e.kind() == &EngineErrorKind::Upstream && e.detail() == "500: boom")
        );
    }

    #[test]
    fn error_messages_are_found_in_each_shape() {
        assert_eq!(error_message(r#"{"error":{"message":"bad"}}"#), "bad");
        assert_eq!(error_message(r#"{"error":"worse"}"#), "worse");
        assert_eq!(error_message(r#"{"detail":"gone"}"#), "gone");
        assert_eq!(error_message("plain text\n"), "plain text");
    }
}
