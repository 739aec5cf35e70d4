//! A slot is one sequence of the shared KV cache, and the generation running in it.

use std::sync::atomic::Ordering;
use std::time::Instant;

use llama_cpp_2::token::LlamaToken;

use super::sampler::TokenSampler;
use super::{Event, Job};
use crate::stop::StopMatcher;
use crate::{Completion, EngineError, FinishReason, Timings, Usage};

/// One KV-cache sequence. `cached` outlives the generation, so the next prompt that
/// starts the same way skips evaluating those tokens.
pub(super) struct Slot {
    pub(super) seq_id: i32,
    /// The tokens whose keys and values are in this sequence of the cache, in order.
    pub(super) cached: Vec<LlamaToken>,
    pub(super) sequence: Option<Sequence>,
}

impl Slot {
    pub(super) fn new(seq_id: i32) -> Self {
        Self {
            seq_id,
            cached: Vec::new(),
            sequence: None,
        }
    }

    /// How many leading tokens of `prompt` this slot's cache already holds.
    pub(super) fn shared_prefix(&self, prompt: &[LlamaToken]) -> usize {
        self.cached
            .iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count()
    }
}

/// A generation in progress.
pub(super) struct Sequence {
    job: Job,
    /// Tokens to evaluate next: the rest of the prompt, then each sampled token.
    pub(super) pending: Vec<LlamaToken>,
    pub(super) sampler: TokenSampler,
    stops: StopMatcher,
    pub(super) usage: Usage,
    pub(super) max_tokens: u32,
    admitted: Instant,
    first_token: Option<Instant>,
    /// Tokens taken where the grammar forced them.
    pub(super) forced_tokens: u32,
    /// The slot evaluating a longer prefix of this prompt, and how long: this prompt
    /// waits for it to be cached there, then copies it ([`super::worker`]).
    pub(super) waits_for: Option<(usize, usize)>,
}

impl Sequence {
    pub(super) fn new(
        job: Job,
        pending: Vec<LlamaToken>,
        sampler: TokenSampler,
        usage: Usage,
    ) -> Self {
        let stops = StopMatcher::new(&job.generation.stop);
        let max_tokens = job.generation.sampling.max_tokens.unwrap_or(u32::MAX);
        Self {
            job,
            pending,
            sampler,
            stops,
            usage,
            max_tokens,
            admitted: Instant::now(),
            first_token: None,
            forced_tokens: 0,
            waits_for: None,
        }
    }

    /// Whether part of the prompt is still to be evaluated: no token is generated yet.
    pub(super) fn is_prompt_pending(&self) -> bool {
        self.first_token.is_none() && !self.pending.is_empty()
    }

    pub(super) fn is_cancelled(&self) -> bool {
        self.job.cancelled.load(Ordering::Relaxed)
    }

    /// Notes that a token was sampled (the prompt is evaluated once the first one is).
    pub(super) fn count_token(&mut self) {
        self.first_token.get_or_insert_with(Instant::now);
        self.usage.completion_tokens += 1;
    }

    /// Runs `bytes` through the stop strings and sends what they release. Returns
    /// whether a stop string completed.
    pub(super) fn emit(&mut self, bytes: &[u8]) -> bool {
        let released = self.stops.push(bytes);
        self.send_piece(released.text);
        released.stopped
    }

    /// Ends the generation: sends the text the stop strings held back, then the
    /// completion.
    pub(super) fn finish(mut self, finish_reason: FinishReason) {
        if finish_reason != FinishReason::Cancelled {
            let rest = std::mem::take(&mut self.stops).finish();
            self.send_piece(rest);
        }
        let now = Instant::now();
        let first_token = self.first_token.unwrap_or(now);
        let completion = Completion {
            finish_reason,
            usage: self.usage,
            timings: Timings {
                queue_ms: millis(self.admitted - self.job.queued),
                prompt_ms: millis(first_token - self.admitted),
                generation_ms: millis(now - first_token),
                forced_tokens: self.forced_tokens,
                ..Timings::default()
            },
        };
        let _ = self.job.events.send(Event::Done(Ok(completion)));
    }

    pub(super) fn fail(self, error: EngineError) {
        let _ = self.job.events.send(Event::Done(Err(error)));
    }

    /// Tells the caller a batch of its prompt was evaluated, with an empty piece: a long
    /// prompt takes minutes on a CPU, and a caller that learns nothing meanwhile cannot
    /// say it went away (a killed agent's 13,609-token prompt held the one slot for 4.5
    /// minutes after its client was gone, and the requests behind it timed out in the
    /// queue). One send per batch of prompt tokens.
    pub(super) fn prompt_progress(&mut self) {
        self.send_piece_even_empty(String::new());
    }

    /// A caller that went away cancels its generation.
    fn send_piece(&mut self, text: String) {
        if !text.is_empty() {
            self.send_piece_even_empty(text);
        }
    }

    fn send_piece_even_empty(&mut self, text: String) {
        if self.job.events.send(Event::Piece(text)).is_err() {
            self.job.cancelled.store(true, Ordering::Relaxed);
        }
    }
}

fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
