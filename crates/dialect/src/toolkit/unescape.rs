//! Markdown's escaped underscores taken out of a stream, for models that write `\_`.
//!
//! Mixtral and other models tuned on markdown escape underscores out of habit: they write
//! `<tool\_call>` for `<tool_call>` and `super\_secret` for `super_secret`, which no tag
//! scanner finds and no JSON parser accepts (`\_` is not a JSON escape). [`Unescaped`]
//! puts any parser behind a one-character transducer that drops the backslash of every
//! `\_` and keeps every other backslash pair (`\\`, `\"`) as it is, so escaped JSON stays
//! valid. It holds back at most one trailing backslash, so it gives the same text however
//! the stream is cut. Content loses those backslashes too: in markdown `\_` shows as `_`.

use std::mem;

use crate::events::Event;
use crate::parser::{Pacing, StreamParser};

/// Drops the backslash of each `\_`; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct UnderscoreUnescaper {
    /// A backslash was the last character seen; what follows decides whether it stays.
    backslash: bool,
}

impl UnderscoreUnescaper {
    /// The text of `piece` decided so far.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        for c in piece.chars() {
            if mem::take(&mut self.backslash) {
                if c != '_' {
                    out.push('\\');
                }
                out.push(c);
            } else if c == '\\' {
                self.backslash = true;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The backslash still held back, if the text ended on one.
    pub fn finish(&mut self) -> &'static str {
        if mem::take(&mut self.backslash) {
            "\\"
        } else {
            ""
        }
    }
}

/// A parser that reads the stream with its `\_` unescaped.
#[derive(Debug, Clone, Default)]
pub struct Unescaped<P> {
    unescaper: UnderscoreUnescaper,
    inner: P,
}

impl<P> Unescaped<P> {
    pub fn new(inner: P) -> Self {
        Unescaped {
            unescaper: UnderscoreUnescaper::default(),
            inner,
        }
    }
}

impl<P: StreamParser> StreamParser for Unescaped<P> {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let text = self.unescaper.push(piece);
        self.inner.push(&text)
    }

    fn finish(&mut self) -> Vec<Event> {
        let mut events = self.inner.push(self.unescaper.finish());
        events.extend(self.inner.finish());
        events
    }

    fn finish_cut(&mut self) -> Vec<Event> {
        let mut events = self.inner.push(self.unescaper.finish());
        events.extend(self.inner.finish_cut());
        events
    }

    fn set_pacing(&mut self, pacing: Pacing) {
        self.inner.set_pacing(pacing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(pieces: &[&str]) -> String {
        let mut unescaper = UnderscoreUnescaper::default();
        let mut out: String = pieces.iter().map(|piece| unescaper.push(piece)).collect();
        out.push_str(unescaper.finish());
        out
    }

    #[test]
    fn drops_escapes_of_underscores_only() {
        let text = r#"<tool\_call>{"name": "super\_secret", "a": "x\\_y \"q\""}\"#;
        let expected = r#"<tool_call>{"name": "super_secret", "a": "x\\_y \"q\""}\"#;
        assert_eq!(unescape(&[text]), expected);
        for at in 1..text.len() {
            assert_eq!(
                unescape(&[&text[..at], &text[at..]]),
                expected,
                "cut at {at}"
            );
        }
    }
}
