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
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use toolbridge_dialect::events::Event;
use toolbridge_dialect::parser::StreamParser;
use toolbridge_engine::{Completion, Engine, EngineError, Flow, Generation};

use crate::admission::Permit;
use crate::metrics::Metrics;
use crate::repeats::RepeatGuard;

/// How many steps may wait for a slow client before the engine waits too.
const CHANNEL_DEPTH: usize = 64;

/// What the generation thread reports.
#[derive(Debug)]
pub enum Step {
    /// The model's first piece is out (the parser may not have decided anything yet).
    Started,
    /// Events the parser decided, never empty.
    Events(Vec<Event>),
    /// The generation ended; nothing follows.
    Finished(Result<Completion, EngineError>),
}

/// What a request spent before its engine saw it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Preparation {
    /// Reading the JSON body into a request.
    pub parse: Duration,
    /// The dialect's work: the prompt rendered, the constraint and parser built.
    pub prepare: Duration,
    /// Waiting for the server to admit it (`--parallel` and the queue).
    pub admission: Duration,
}

impl Preparation {
    /// Everything before the engine.
    fn total(&self) -> Duration {
        self.parse + self.prepare + self.admission
    }
}

/// Starts `generation` on a blocking thread, parsing its output with `parser`; `permit` is
/// held until the engine returns; its tokens and timings go to `metrics`. The receiver
/// yields the steps; it ends without [`Step::Finished`] only if the engine panicked.
pub fn start(
    engine: Arc<dyn Engine>,
    generation: Generation,
    parser: Box<dyn StreamParser + Send>,
    permit: Permit,
    preparation: Preparation,
    metrics: Arc<Metrics>,
) -> mpsc::Receiver<Step> {
    let (sender, receiver) = mpsc::channel(CHANNEL_DEPTH);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let run = Run {
            sender: &sender,
            preparation,
            metrics: &metrics,
        };
        run.generate(engine.as_ref(), &generation, parser);
    });
    receiver
}

/// Where one generation reports.
struct Run<'a> {
    sender: &'a mpsc::Sender<Step>,
    preparation: Preparation,
    metrics: &'a Metrics,
}

impl Run<'_> {
    /// Generates, sending events as the parser decides them, then the parser's last events
    /// and the outcome.
    fn generate(
        &self,
        engine: &dyn Engine,
        generation: &Generation,
        mut parser: Box<dyn StreamParser + Send>,
    ) {
        let sender = self.sender;
        let mut guard = RepeatGuard::default();
        let mut output = RawOutput::default();
        let mut clock = PieceClock::new(self.preparation.total());
        let outcome = engine.generate(generation, &mut |piece| {
            let first = !piece.is_empty() && clock.tick(self.metrics);
            if first && sender.blocking_send(Step::Started).is_err() {
                return Flow::Stop;
            }
            output.push(piece);
            let events = guard.pass(parser.push(piece));
            match send_events(sender, events) {
                Ok(()) if guard.tripped() => Flow::Stop,
                Ok(()) => Flow::Continue,
                Err(Gone) => Flow::Stop,
            }
        });
        log(&outcome, &self.preparation);
        if let Ok(completion) = &outcome {
            let usage = &completion.usage;
            self.metrics
                .generated(usage.prompt_tokens, usage.completion_tokens);
        }
        output.log();
        if outcome.is_ok() && send_events(sender, guard.pass(parser.finish())).is_err() {
            return;
        }
        // A receiver that has gone no longer needs to know.
        let _ = sender.blocking_send(Step::Finished(outcome));
    }
}

/// Times a generation's pieces for the metrics: the first from the request's arrival, each
/// next from the one before.
struct PieceClock {
    started: Instant,
    before: Duration,
    last: Option<Instant>,
}

impl PieceClock {
    /// A clock for a generation whose request spent `before` on its way to the engine.
    fn new(before: Duration) -> Self {
        PieceClock {
            started: Instant::now(),
            before,
            last: None,
        }
    }

    /// Records a piece; whether it was the first.
    fn tick(&mut self, metrics: &Metrics) -> bool {
        let now = Instant::now();
        let first = self.last.is_none();
        match self.last {
            None => metrics.first_token(self.before + (now - self.started)),
            Some(last) => metrics.next_token(now - last),
        }
        self.last = Some(now);
        first
    }
}

/// One line per generation: how it ended, its tokens, and where its time went, stage by
/// stage in milliseconds (the engine's stages after the server's).
fn log(outcome: &Result<Completion, EngineError>, preparation: &Preparation) {
    let ms = |duration: Duration| round_ms(duration.as_secs_f64() * 1e3);
    match outcome {
        Ok(completion) => {
            let timings = &completion.timings;
            tracing::info!(
                prompt_tokens = completion.usage.prompt_tokens,
                cached_tokens = completion.usage.cached_tokens,
                completion_tokens = completion.usage.completion_tokens,
                finish = ?completion.finish_reason,
                parse_ms = ms(preparation.parse),
                prepare_ms = ms(preparation.prepare),
                admission_ms = ms(preparation.admission),
                grammar_ms = round_ms(timings.grammar_ms),
                grammar_cached = timings.grammar_cached,
                queue_ms = round_ms(timings.queue_ms),
                prompt_ms = round_ms(timings.prompt_ms),
                first_piece_ms = round_ms(timings.first_piece_ms),
                generation_ms = round_ms(timings.generation_ms),
                "generation"
            );
        }
        Err(error) => tracing::warn!(%error, "generation failed"),
    }
}

/// Milliseconds to a tenth, for the log.
fn round_ms(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
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
