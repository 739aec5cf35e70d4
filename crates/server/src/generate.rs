//! Running the blocking engine for an async server.
//!
//! The engine decodes on a blocking thread ([`tokio::task::spawn_blocking`]); the dialect's
//! parser runs on that thread too, right after each piece, and what crosses to the async
//! side is [`Step`]s: the parser's events, then how the generation ended. The streaming
//! and the non-streaming answers both read these steps, so they see the same events.
//!
//! The channel is bounded: an engine faster than its client waits for it. When the
//! receiver is dropped (the client went away, or the response failed), the next send
//! fails and the engine is told [`Flow::Stop`]; a piece that produces no events checks the
//! channel too, so cancellation never waits for the parser to decide something.
//!
//! The parser's events pass a [`RepeatGuard`] on their way: a call repeating an earlier
//! call of the answer ends the generation there.

use std::sync::Arc;

use tokio::sync::mpsc;
use toolbridge_dialect::events::Event;
use toolbridge_dialect::parser::StreamParser;
use toolbridge_engine::{Completion, Engine, EngineError, Flow, Generation};

use crate::admission::Permit;
use crate::repeats::RepeatGuard;

/// How many steps may wait for a slow client before the engine waits too.
const CHANNEL_DEPTH: usize = 64;

/// What the generation thread reports.
#[derive(Debug)]
pub enum Step {
    /// Events the parser decided, never empty.
    Events(Vec<Event>),
    /// The generation ended; nothing follows.
    Finished(Result<Completion, EngineError>),
}

/// Starts `generation` on a blocking thread, parsing its output with `parser`; `permit` is
/// held until the engine returns. The receiver yields the steps; it ends without
/// [`Step::Finished`] only if the engine panicked.
pub fn start(
    engine: Arc<dyn Engine>,
    generation: Generation,
    parser: Box<dyn StreamParser + Send>,
    permit: Permit,
) -> mpsc::Receiver<Step> {
    let (sender, receiver) = mpsc::channel(CHANNEL_DEPTH);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        run(engine.as_ref(), &generation, parser, &sender);
    });
    receiver
}

/// Generates, sending events as the parser decides them, then the parser's last events
/// and the outcome.
fn run(
    engine: &dyn Engine,
    generation: &Generation,
    mut parser: Box<dyn StreamParser + Send>,
    sender: &mpsc::Sender<Step>,
) {
    let mut guard = RepeatGuard::default();
    let mut output = RawOutput::default();
    let outcome = engine.generate(generation, &mut |piece| {
        output.push(piece);
        let events = guard.pass(parser.push(piece));
        match send_events(sender, events) {
            Ok(()) if guard.tripped() => Flow::Stop,
            Ok(()) => Flow::Continue,
            Err(Gone) => Flow::Stop,
        }
    });
    log(&outcome);
    output.log();
    if outcome.is_ok() && send_events(sender, guard.pass(parser.finish())).is_err() {
        return;
    }
    // A receiver that has gone no longer needs to know.
    let _ = sender.blocking_send(Step::Finished(outcome));
}

/// One line per generation: what it cost and how it ended.
fn log(outcome: &Result<Completion, EngineError>) {
    match outcome {
        Ok(completion) => tracing::info!(
            prompt_tokens = completion.usage.prompt_tokens,
            cached_tokens = completion.usage.cached_tokens,
            completion_tokens = completion.usage.completion_tokens,
            first_piece_ms = completion.timings.first_piece_ms.round(),
            generation_ms = completion.timings.generation_ms.round(),
            finish = ?completion.finish_reason,
            "generation"
        ),
        Err(error) => tracing::warn!(%error, "generation failed"),
    }
}

/// The model's text as it wrote it, kept only when the debug log is on
/// (`RUST_LOG=toolbridge_server=debug`): what a parser made of an answer is checked
/// against it.
#[derive(Default)]
struct RawOutput {
    text: Option<String>,
}

impl RawOutput {
    fn push(&mut self, piece: &str) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            self.text.get_or_insert_with(String::new).push_str(piece);
        }
    }

    fn log(&self) {
        if let Some(text) = &self.text {
            tracing::debug!(output = ?text, "generation output");
        }
    }
}

/// The receiver has been dropped.
struct Gone;

/// Sends `events` if there are any; either way, says whether anyone is still listening.
fn send_events(sender: &mpsc::Sender<Step>, events: Vec<Event>) -> Result<(), Gone> {
    if events.is_empty() {
        return if sender.is_closed() {
            Err(Gone)
        } else {
            Ok(())
        };
    }
    sender.blocking_send(Step::Events(events)).map_err(|_| Gone)
}
