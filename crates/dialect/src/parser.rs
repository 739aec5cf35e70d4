//! The one interface every dialect's parser has, and the non-streaming answer built on it.
//!
//! A parser is fed the model's text in pieces of any size and says what it found as
//! [`Event`]s, in the order [`crate::events`] lays down. There is deliberately no second,
//! "complete text" entry point: peers that parse whole outputs with one function and streams
//! with another see the two drift apart (a call found in one and lost in the other, or
//! content kept in one and dropped in the other). Here the non-streaming answer is
//! [`parse_all`]: the same parser fed everything at once and then finished, so streamed and
//! not streamed agree by construction, and the dialects' property tests check that they
//! agree for every way of cutting the text.

use crate::events::Event;

/// Reads one model output, piece by piece.
pub trait StreamParser {
    /// Feeds the next piece of output; returns the events it decided, in order. Text that
    /// may still turn out to be part of a marker or a call is held back until it is decided.
    fn push(&mut self, piece: &str) -> Vec<Event>;

    /// Ends the output: everything still held back is decided now.
    fn finish(&mut self) -> Vec<Event>;

    /// Ends an output the token limit cut (the engine's `finish_reason: length`): as
    /// [`StreamParser::finish`], except that a call region the output ends in is the call
    /// so far, its name and its arguments as written, left open, as OpenAI returns a call
    /// cut by `max_tokens`. A region cut before its name is dropped with its marker. Only
    /// the engine's word makes an end a cut: an output that merely stops inside a call's
    /// syntax (prose, a near miss) stays text as written. Parsers that hold no call
    /// regions end a cut output as any other.
    fn finish_cut(&mut self) -> Vec<Event> {
        self.finish()
    }

    /// How often a call still being written is read for what it decides so far; parsers
    /// that send calls only whole ignore it.
    fn set_pacing(&mut self, _pacing: Pacing) {}
}

/// Whether and how often a call still being written is read for what it decides so far
/// ([`crate::toolkit::cut`]), so that its name and its arguments go out as the model writes
/// them. Each reading costs what reading the region whole does, so reading on every piece
/// would make a long call quadratic: readings are paced by time, at most one a millisecond
/// and at most a seventeenth of the time. A model writes a token every 5–50 ms, so each of
/// its tokens is read at once; a parser fed at memory speed (a benchmark, a remote engine's
/// burst) reads seldom, and the pieces between readings go out together. Bench parse
/// `--streamed` (Hermes, Mistral, Cohere, DeepSeek R1; 1 KB to 1 MB, one run, whole →
/// streamed): read whole, the same; in 16-byte and 1-byte pieces, 5–20% slower; the time a
/// byte at 1 MB over 1 KB stays 0.5–1.0.
///
/// A call sent in part cannot be taken back, so the server streams calls only where the
/// grammar holds the model to the call's syntax: where it does not, a call region may still
/// turn out to be no call (a near miss stays content), and is sent whole once it is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// Calls are sent once whole.
    #[default]
    Whole,
    /// Read as time allows; see above.
    Timed,
    /// On every piece: for tests, which compare what every way of cutting the text sends.
    EveryPiece,
}

/// The events of a whole output: `text` fed to `parser` in one piece, then finished.
pub fn parse_all<P: StreamParser + ?Sized>(parser: &mut P, text: &str) -> Vec<Event> {
    let mut events = parser.push(text);
    events.extend(parser.finish());
    events
}

/// The events of a whole output the token limit cut: `text` fed to `parser` in one piece,
/// then finished as cut ([`StreamParser::finish_cut`]).
pub fn parse_cut<P: StreamParser + ?Sized>(parser: &mut P, text: &str) -> Vec<Event> {
    let mut events = parser.push(text);
    events.extend(parser.finish_cut());
    events
}

/// A boxed parser is a parser, so wrappers such as
/// [`crate::toolkit::off_format::OffFormatCalls`] take any dialect's.
impl<P: StreamParser + ?Sized> StreamParser for Box<P> {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        (**self).push(piece)
    }

    fn finish(&mut self) -> Vec<Event> {
        (**self).finish()
    }

    fn finish_cut(&mut self) -> Vec<Event> {
        (**self).finish_cut()
    }

    fn set_pacing(&mut self, pacing: Pacing) {
        (**self).set_pacing(pacing);
    }
}
