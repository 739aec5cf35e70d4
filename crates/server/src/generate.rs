//! One generation, read as a stream on the server's runtime.
//!
//! A task reads the engine's pieces as they come ([`toolbridge_engine::streamed`]: a
//! remote engine's straight from the wire, the embedded engine's from its decoding
//! thread), gives each to the dialect's parser, and sends on [`Step`]s: the parser's
//! events, then how the generation ended. The streaming and the non-streaming answers both
//! read these steps, so they see the same events.
//!
//! The channel is bounded: an engine faster than its client waits for it. When the
//! receiver is dropped (the client went away, or the response failed), the task stops the
//! engine at once, while it waits for a piece too, so cancellation never waits for the
//! parser to decide something.
//!
//! Two [`Budget`]s bound how long a generation holds its slot: its wall time, after which
//! it ends with a `generation_timeout` error, and how long it waits for a client that has
//! stopped reading (a full channel), after which it ends as if that client had gone.
//!
//! The parser's events pass a [`RepeatGuard`] on their way: a call repeating an earlier
//! call of the answer ends the generation there.
//!
//! Once a call has closed, output the client cannot see is bounded
//! ([`UNSEEN_AFTER_CALL`] pieces in a row that decide nothing): a model that goes on
//! writing blank space after its calls (layout, held and then dropped), or another call
//! that never closes (a string argument repeating itself, held until the call is whole),
//! is ended there, and the answer is what the parser makes of it: its calls, and a call
//! cut short as if its token limit had come (then `finish_reason: length`). Seen through Codex CLI:
//! after a call had streamed, the model wrote on for 6319 tokens and 581 s while the
//! stream said nothing, until the client gave up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use toolbridge_dialect::{Event, StreamParser};
use toolbridge_engine::streamed::{self, Pieces, Streamed};
use toolbridge_engine::{Completion, Engine, EngineError, FinishReason, Generation};

use crate::admission::Permit;
use crate::error::Failure;
use crate::metrics::Metrics;
use crate::repeats::RepeatGuard;

/// How many steps may wait for a slow client before the engine waits too.
const CHANNEL_DEPTH: usize = 64;

/// How many pieces in a row may decide nothing once a call has closed. About 2,000
/// tokens: at the default model's 10–20 tokens a second on a CPU, two to three minutes of
/// a silent stream, within the 5 minutes Codex CLI waits for an event. A call after the
/// first that is longer than this is cut here, and read as a call cut by the limit.
pub const UNSEEN_AFTER_CALL: usize = 2048;

/// What the generation thread reports.
#[derive(Debug)]
pub enum Step {
    /// The model's first piece is out (the parser may not have decided anything yet).
    Started,
    /// Events the parser decided, never empty.
    Events(Vec<Event>),
    /// The generation ended; nothing follows.
    Finished(Result<Completion, Failure>),
}

/// How long one generation may hold its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// From the engine's start to its last piece.
    pub generation: Duration,
    /// Waiting for a client to take what was generated, once the channel is full.
    pub stalled_client: Duration,
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

/// Starts `generation` on `engine` and a task that parses its output with `parser`;
/// `permit` is held until the engine has ended, within `budget`; its tokens and timings go
/// to `metrics`. The receiver yields the steps; it ends without [`Step::Finished`] only if
/// the engine vanished or nobody was left to read it (the client went away or stopped
/// reading).
pub fn start(
    engine: Arc<dyn Engine>,
    generation: Generation,
    parser: Box<dyn StreamParser + Send>,
    permit: Permit,
    preparation: Preparation,
    budget: Budget,
    metrics: Arc<Metrics>,
) -> mpsc::Receiver<Step> {
    let (sender, receiver) = mpsc::channel(CHANNEL_DEPTH);
    let pieces = streamed::stream(engine, generation);
    tokio::spawn(async move {
        let _permit = permit;
        let run = Run {
            out: Outbox {
                sender,
                stalled_client: budget.stalled_client,
            },
            preparation,
            time: budget.generation,
            metrics,
        };
        run.generate(pieces, parser).await;
    });
    receiver
}

/// Where one generation reports.
struct Run {
    out: Outbox,
    preparation: Preparation,
    /// The generation's wall-time budget.
    time: Duration,
    metrics: Arc<Metrics>,
}

/// What reading a generation's pieces came to.
struct Read {
    outcome: Result<Completion, EngineError>,
    /// Why the server stopped the engine, if it did.
    ended: Option<Ended>,
}

impl Run {
    /// Reads the pieces, sending events as the parser decides them, then the parser's
    /// last events and the outcome.
    async fn generate(&self, pieces: Pieces, mut parser: Box<dyn StreamParser + Send>) {
        let out = &self.out;
        let mut guard = RepeatGuard::default();
        let mut unseen = UnseenAfterCall::default();
        let Some(Read { outcome, ended }) = self
            .read(pieces, parser.as_mut(), &mut guard, &mut unseen)
            .await
        else {
            return;
        };
        log(&outcome, &self.preparation);
        if let Ok(completion) = &outcome {
            let usage = &completion.usage;
            self.metrics
                .generated(usage.prompt_tokens, usage.completion_tokens);
        }
        let outcome = match (outcome, ended) {
            (Err(error), _) => Err(Failure::from(error)),
            (Ok(completion), Some(Ended::OverTime)) => {
                self.metrics.ended_at_limit("generation_timeout");
                let tokens = completion.usage.completion_tokens;
                Err(Failure::generation_timeout(self.time, tokens))
            }
            (Ok(_), Some(Ended::Stalled)) => {
                self.metrics.ended_at_limit("client_stalled");
                tracing::warn!("the client stopped reading: its generation was stopped");
                return;
            }
            (Ok(_), Some(Ended::Gone)) => return,
            (Ok(mut completion), Some(Ended::Unseen)) => {
                tracing::warn!(
                    pieces = UNSEEN_AFTER_CALL,
                    "after a call, the model wrote what its client could not see: the generation was ended as if at its limit"
                );
                let events = guard.pass(parser.finish_cut());
                unseen.count(&events);
                if unseen.call_open {
                    completion.finish_reason = FinishReason::Length;
                }
                match out.send_events(events).await {
                    Ok(()) => Ok(completion),
                    Err(_) => return,
                }
            }
            (Ok(completion), None) => {
                let events = if completion.finish_reason == FinishReason::Length {
                    parser.finish_cut()
                } else {
                    parser.finish()
                };
                match out.send_events(guard.pass(events)).await {
                    Ok(()) => Ok(completion),
                    Err(_) => return,
                }
            }
        };
        // A receiver that has gone no longer needs to know.
        let _ = out.send(Step::Finished(outcome)).await;
    }

    /// Reads the pieces to the engine's end, parsing each and sending what the parser
    /// decides; stops the engine (and reads on to its end, for its counts) when the
    /// budget runs out, the client goes, the guard trips or a call's aftermath runs too
    /// long. `None` when the engine vanished without an end.
    async fn read(
        &self,
        mut pieces: Pieces,
        parser: &mut (dyn StreamParser + Send),
        guard: &mut RepeatGuard,
        unseen: &mut UnseenAfterCall,
    ) -> Option<Read> {
        let out = &self.out;
        let mut output = RawOutput::default();
        let mut clock = PieceClock::new(self.preparation.total());
        let deadline = tokio::time::Instant::now() + self.time;
        let mut stopping = Stopping::default();
        let outcome = loop {
            // The budget first, then the client: a piece that comes after either is not read.
            let item = tokio::select! {
                biased;
                () = tokio::time::sleep_until(deadline), if !stopping.stopped => {
                    stopping.stop(&pieces, Some(Ended::OverTime));
                    continue;
                }
                () = out.sender.closed(), if !stopping.stopped => {
                    stopping.stop(&pieces, Some(Ended::Gone));
                    continue;
                }
                item = pieces.next() => item?,
            };
            let piece = match item {
                Ok(Streamed::Piece(piece)) if !stopping.stopped => piece,
                Ok(Streamed::Piece(_)) => continue,
                Ok(Streamed::Done(completion)) => break Ok(completion),
                Err(error) => break Err(error),
            };
            let first = clock.tick(&self.metrics);
            output.push(&piece);
            let events = guard.pass(parser.push(&piece));
            unseen.count(&events);
            let sent = if first {
                out.send(Step::Started).await
            } else {
                Ok(())
            };
            let sent = match sent {
                Ok(()) => out.send_events(events).await,
                Err(why) => Err(why),
            };
            match sent {
                Ok(()) if guard.tripped() => stopping.stop(&pieces, None),
                Ok(()) if unseen.too_many() => stopping.stop(&pieces, Some(Ended::Unseen)),
                Ok(()) => {}
                Err(why) => stopping.stop(&pieces, Some(why)),
            }
        };
        output.log();
        Some(Read {
            outcome,
            ended: stopping.ended,
        })
    }
}

/// Whether the server has stopped the engine, and why.
#[derive(Default)]
struct Stopping {
    stopped: bool,
    /// The first reason given; a guard that trips gives none.
    ended: Option<Ended>,
}

impl Stopping {
    fn stop(&mut self, pieces: &Pieces, why: Option<Ended>) {
        self.stopped = true;
        self.ended = self.ended.or(why);
        pieces.stop();
    }
}

/// Why a generation was stopped before the engine ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The receiver was dropped: the client went away.
    Gone,
    /// The client took nothing for the whole stalled-client budget.
    Stalled,
    /// The generation's wall-time budget ran out.
    OverTime,
    /// After a call, [`UNSEEN_AFTER_CALL`] pieces in a row decided nothing.
    Unseen,
}

/// Counts the pieces in a row that decided nothing, once a call has closed.
#[derive(Debug, Default)]
struct UnseenAfterCall {
    call_closed: bool,
    /// The last call started has not ended: ended now, it is a call cut short.
    call_open: bool,
    pieces: usize,
}

impl UnseenAfterCall {
    /// Takes the events one piece decided.
    fn count(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::ToolCallStart { .. } => self.call_open = true,
                Event::ToolCallEnd { .. } => {
                    self.call_open = false;
                    self.call_closed = true;
                }
                _ => {}
            }
        }
        self.pieces = if events.is_empty() && self.call_closed {
            self.pieces + 1
        } else {
            0
        };
    }

    /// Whether the client has waited on more pieces than it should.
    fn too_many(&self) -> bool {
        self.pieces >= UNSEEN_AFTER_CALL
    }
}

/// The sending side of the steps, bounded in how long it waits for a slow client.
struct Outbox {
    sender: mpsc::Sender<Step>,
    stalled_client: Duration,
}

impl Outbox {
    /// Sends `step`, waiting for a client that has fallen behind at most the
    /// stalled-client budget.
    async fn send(&self, step: Step) -> Result<(), Ended> {
        match tokio::time::timeout(self.stalled_client, self.sender.send(step)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Ended::Gone),
            Err(_) => Err(Ended::Stalled),
        }
    }

    /// Sends `events` if there are any; either way, says whether anyone is still
    /// listening.
    async fn send_events(&self, events: Vec<Event>) -> Result<(), Ended> {
        if events.is_empty() {
            return if self.sender.is_closed() {
                Err(Ended::Gone)
            } else {
                Ok(())
            };
        }
        self.send(Step::Events(events)).await
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
                forced_tokens = timings.forced_tokens,
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
