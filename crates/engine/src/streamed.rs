//! A generation as an async caller consumes it: pieces pulled as they come, on the
//! caller's runtime, stopped by a word, ending in its completion.
//!
//! An engine that is async already (a remote server) streams natively
//! ([`Engine::stream`]): its task reads the wire and feeds the caller, one crossing per
//! piece. A blocking engine (the embedded llama.cpp, the scripted one) keeps its own loop
//! ([`Engine::generate`]); [`stream`] runs that loop on a blocking thread and feeds the
//! caller over the same channel.
//!
//! Stopping is a word, not a drop: [`Pieces::stop`] ends the generation at its next piece
//! as [`Flow::Stop`] does, and the stream still ends with the engine's [`Completion`] (its
//! counts and timings). Dropping [`Pieces`] stops it too, with nobody left to tell.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use crate::{Completion, Engine, EngineError, Flow, Generation};

/// Pieces a stream holds before its engine waits for the caller: enough for an engine to
/// decode its next token while the caller parses the last, and few, since an engine that
/// is stopped may have decoded this many that nobody reads.
const DEPTH: usize = 4;

/// What a generation's stream yields.
#[derive(Debug)]
pub enum Streamed {
    /// More output text, never empty.
    Piece(String),
    /// The generation ended; nothing follows.
    Done(Completion),
}

/// One item of a generation's stream.
pub type Item = Result<Streamed, EngineError>;

/// The caller's end of a generation.
#[derive(Debug)]
pub struct Pieces {
    receiver: mpsc::Receiver<Item>,
    stop: watch::Sender<bool>,
}

/// The engine's end of a generation.
#[derive(Debug)]
pub struct Feed {
    sender: mpsc::Sender<Item>,
    stop: watch::Receiver<bool>,
}

impl Pieces {
    /// A stream, and the feed its engine writes into.
    pub fn channel() -> (Pieces, Feed) {
        let (sender, receiver) = mpsc::channel(DEPTH);
        let (stop, stop_seen) = watch::channel(false);
        let pieces = Pieces { receiver, stop };
        let feed = Feed {
            sender,
            stop: stop_seen,
        };
        (pieces, feed)
    }

    /// A stream that fails before its first piece.
    pub fn failed(error: EngineError) -> Pieces {
        let (pieces, feed) = Pieces::channel();
        // The channel is empty and its receiver is here: the send cannot fail.
        let _ = feed.sender.try_send(Err(error));
        pieces
    }

    /// The next piece, the end, or `None` when the engine vanished without an end.
    pub async fn next(&mut self) -> Option<Item> {
        self.receiver.recv().await
    }

    /// Asks the engine to end the generation at its next piece, as [`Flow::Stop`] does;
    /// the stream then ends with the completion, [`crate::FinishReason::Cancelled`].
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }
}

impl Feed {
    /// Whether the caller asked to stop, or went away.
    pub fn stopped(&self) -> bool {
        *self.stop.borrow() || self.sender.is_closed()
    }

    /// Resolves once the caller asks to stop, or goes away.
    pub async fn stop_asked(&mut self) {
        // An error is the caller gone, which is a stop too.
        let _ = self.stop.wait_for(|stop| *stop).await;
    }

    /// Hands `item` to the caller, waiting while its stream is full; whether the caller
    /// is still there.
    pub async fn send(&self, item: Item) -> bool {
        self.sender.send(item).await.is_ok()
    }

    /// [`Feed::send`] from a blocking thread.
    pub fn blocking_send(&self, item: Item) -> bool {
        self.sender.blocking_send(item).is_ok()
    }
}

/// `generation` on `engine`, as a stream on the current runtime: the engine's own
/// ([`Engine::stream`]), else its blocking [`Engine::generate`] on a blocking thread,
/// each piece handed over as it comes. An empty piece (an engine asking, while it is
/// quiet, whether to go on) is answered from the stream's stop, not sent.
pub fn stream(engine: Arc<dyn Engine>, generation: Generation) -> Pieces {
    if let Some(pieces) = engine.stream(&generation) {
        return pieces;
    }
    let (pieces, feed) = Pieces::channel();
    tokio::task::spawn_blocking(move || {
        let outcome = engine.generate(&generation, &mut |piece| {
            let stop = feed.stopped()
                || (!piece.is_empty() && !feed.blocking_send(Ok(Streamed::Piece(piece.into()))));
            if stop {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        feed.blocking_send(outcome.map(Streamed::Done));
    });
    pieces
}
