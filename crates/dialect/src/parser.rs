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
}
