//! The worker thread: it owns the model and its context and runs every generation.
//!
//! Each step builds one batch: the last sampled token of every generating sequence, then
//! as much of the waiting prompts as the batch has room for, each under its own sequence
//! id. One decode evaluates them all, and each sequence whose last token was in the batch
//! samples its next one. A prompt longer than the batch is evaluated over several steps
//! while the other sequences keep generating.
//!
//! Where a call grammar leaves the model one way on (a call's `{"name": "`, the rest of a
//! tool's name once its first letters decide it, `", "arguments": {"`), those tokens are
//! taken as if sampled and evaluated with the sampled one in the next batch, rather than
//! one decode step each ([`Worker::advance`]).
//!
//! A prompt prefix is evaluated once: a slot whose cache holds a longer prefix of a new
//! prompt has it copied in ([`Worker::copy_prefix`]), and a prompt arriving while another
//! slot is still evaluating a longer prefix of it waits for that evaluation and then
//! copies it ([`Worker::release_waiting`]): agents' sessions often start together with
//! the same long system prompt and tools.

use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::sampler::TokenSampler;
use super::slot::{Sequence, Slot};
use super::{
    backend, context_params, model_info, sequences, shared_backend, threads, Event, Job,
    LlamaOptions, BATCH_TOKENS,
};
use crate::{EngineError, FinishReason, ModelInfo, Usage};

/// The least gain, in prompt tokens, for which a slot's cache is copied into another
/// ([`Worker::copy_prefix`]): below it, evaluating them costs about what the copy does.
const MIN_COPIED_PREFIX: usize = 64;

/// Makes the context for `model`, reports what is served (or the failure) on `ready`,
/// then serves `jobs` until the engine is dropped.
pub(super) fn run(
    options: &LlamaOptions,
    model: &Arc<LlamaModel>,
    ready: &Sender<Result<ModelInfo, EngineError>>,
    jobs: Receiver<Job>,
) {
    match Worker::new(options, model) {
        Ok(worker) => {
            if ready.send(Ok(worker.info.clone())).is_ok() {
                worker.serve(&jobs);
            }
        }
        Err(error) => {
            let _ = ready.send(Err(error));
        }
    }
}

/// The tokens of one sequence placed in the current batch.
struct Fed {
    slot: usize,
    tokens: usize,
    /// Where the sequence's logits are in the batch, when its last pending token is in it.
    logits_at: Option<i32>,
}

struct Worker<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    slots: Vec<Slot>,
    batch: LlamaBatch<'static>,
    context_per_sequence: usize,
    /// Threads that sample a batch's sequences side by side (the decode threads).
    sampling_threads: usize,
    /// [`LlamaOptions::forced_tokens_ahead`].
    forced_tokens_ahead: bool,
    info: ModelInfo,
}

impl<'m> Worker<'m> {
    fn new(options: &LlamaOptions, model: &'m LlamaModel) -> Result<Self, EngineError> {
        let parallel = sequences(options);
        let context = model
            .new_context(shared_backend()?, context_params(options, model))
            .map_err(|error| backend("cannot create the context").with_source(error))?;
        let context_per_sequence = context.n_ctx() / parallel;
        let slots = (0..parallel)
            .map(|seq_id| Slot::new(i32::try_from(seq_id).unwrap_or(i32::MAX)))
            .collect();
        Ok(Self {
            model,
            slots,
            batch: LlamaBatch::new(BATCH_TOKENS as usize, 1),
            context_per_sequence: context_per_sequence as usize,
            sampling_threads: threads(options),
            forced_tokens_ahead: options.forced_tokens_ahead,
            info: model_info(options, model, context_per_sequence),
            context,
        })
    }

    fn serve(mut self, jobs: &Receiver<Job>) {
        loop {
            if self.slots.iter().all(|slot| slot.sequence.is_none()) {
                match jobs.recv() {
                    Ok(job) => self.admit(job),
                    Err(_) => return,
                }
            }
            while self.slots.iter().any(|slot| slot.sequence.is_none()) {
                match jobs.try_recv() {
                    Ok(job) => self.admit(job),
                    Err(_) => break,
                }
            }
            self.step();
        }
    }

    /// Starts `job` in the free slot whose cache shares the longest prefix with its
    /// prompt, or answers it at once when it cannot start.
    fn admit(&mut self, mut job: Job) {
        let Some(index) = self.best_free_slot(&job.prompt) else {
            let _ = job.events.send(Event::Done(Err(backend("no free slot"))));
            return;
        };
        let prompt = std::mem::take(&mut job.prompt);
        let reused = self.reuse_prefix(index, &prompt);
        let usage = Usage {
            prompt_tokens: count(prompt.len()),
            completion_tokens: 0,
            cached_tokens: count(reused),
        };
        let sampler = TokenSampler::new(
            &job.generation.sampling,
            self.model.n_vocab(),
            job.matcher.take(),
        );
        let mut sequence = Sequence::new(job, prompt[reused..].to_vec(), sampler, usage);
        if sequence.max_tokens == 0 {
            sequence.finish(FinishReason::Length);
            return;
        }
        sequence.waits_for = self.prefix_being_evaluated(index, &prompt, reused);
        self.slots[index].sequence = Some(sequence);
    }

    /// The slot (other than `index`) evaluating a prefix of `prompt` at least
    /// [`MIN_COPIED_PREFIX`] tokens longer than the `reused` one, and that prefix's length.
    fn prefix_being_evaluated(
        &self,
        index: usize,
        prompt: &[LlamaToken],
        reused: usize,
    ) -> Option<(usize, usize)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != index)
            .filter_map(|(other, slot)| {
                let sequence = slot.sequence.as_ref()?;
                let cached = slot.shared_prefix(prompt);
                if sequence.waits_for.is_some()
                    || !sequence.is_prompt_pending()
                    || cached < slot.cached.len()
                {
                    return None;
                }
                let pending = sequence
                    .pending
                    .iter()
                    .zip(&prompt[cached..])
                    .take_while(|(a, b)| a == b)
                    .count();
                Some((
                    (cached + pending).min(prompt.len().saturating_sub(1)),
                    other,
                ))
            })
            .max()
            .filter(|&(shared, _)| shared >= reused + MIN_COPIED_PREFIX)
            .map(|(shared, other)| (other, shared))
    }

    /// Lets the prompts waiting for another slot's evaluation go on once it has cached
    /// what they wait for, or stopped evaluating it: each copies what it can
    /// ([`Worker::reuse_prefix`]) and evaluates the rest.
    fn release_waiting(&mut self) {
        for index in 0..self.slots.len() {
            let Some((donor, shared)) = self.slots[index]
                .sequence
                .as_ref()
                .and_then(|s| s.waits_for)
            else {
                continue;
            };
            let donor_slot = &self.slots[donor];
            let still_evaluating = donor_slot.cached.len() < shared
                && donor_slot.sequence.as_ref().is_some_and(|sequence| {
                    sequence.waits_for.is_none() && sequence.is_prompt_pending()
                });
            if still_evaluating {
                continue;
            }
            let slot = &mut self.slots[index];
            let Some(mut sequence) = slot.sequence.take() else {
                continue;
            };
            let mut prompt = slot.cached.clone();
            prompt.append(&mut sequence.pending);
            let reused = self.reuse_prefix(index, &prompt);
            sequence.pending = prompt[reused..].to_vec();
            sequence.usage.cached_tokens = count(reused);
            sequence.waits_for = None;
            self.slots[index].sequence = Some(sequence);
        }
    }

    fn best_free_slot(&self, prompt: &[LlamaToken]) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.sequence.is_none())
            .max_by_key(|(index, slot)| (slot.shared_prefix(prompt), std::cmp::Reverse(*index)))
            .map(|(index, _)| index)
    }

    /// Drops the slot's cache after the prefix it shares with `prompt` and returns that
    /// prefix's length. The last prompt token is always evaluated again: its logits are
    /// where generation starts. Where another slot (busy or not) holds a longer prefix of
    /// the prompt, that slot's cache is copied in first ([`Worker::copy_prefix`]).
    fn reuse_prefix(&mut self, index: usize, prompt: &[LlamaToken]) -> usize {
        self.copy_prefix(index, prompt);
        let slot = &mut self.slots[index];
        let mut keep = slot.shared_prefix(prompt).min(prompt.len() - 1);
        let from = u32::try_from(keep).ok();
        if self
            .context
            .kv_cache_seq_rm(slot.seq_id, from, None)
            .is_err()
        {
            // Some caches (recurrent models) cannot drop a suffix: start over.
            let _ = self.context.kv_cache_seq_rm(slot.seq_id, None, None);
            keep = 0;
        }
        slot.cached.truncate(keep);
        keep
    }

    /// Copies into slot `index` the cache of the slot holding the longest prefix of
    /// `prompt`, where that is longer than its own by at least [`MIN_COPIED_PREFIX`]
    /// tokens: a prompt seen on one slot is not evaluated again on another (4 streams
    /// sharing a system prompt and tools, as llama-server's `--cache-ram` restores). Each
    /// sequence has its own cache stream, so llama.cpp copies the whole stream, at the
    /// next decode and before it: a buffer copy of one sequence's cache (the default
    /// model: 12 KB a token), bounded by the context per sequence, against evaluating
    /// the prefix again.
    fn copy_prefix(&mut self, index: usize, prompt: &[LlamaToken]) {
        let own = self.slots[index].shared_prefix(prompt);
        let donor = self
            .slots
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != index)
            .map(|(other, slot)| (slot.shared_prefix(prompt), other))
            .max();
        let Some((shared, donor)) = donor.filter(|&(shared, _)| shared >= own + MIN_COPIED_PREFIX)
        else {
            return;
        };
        let (from, to) = (self.slots[donor].seq_id, self.slots[index].seq_id);
        let _ = self.context.kv_cache_seq_rm(to, None, None);
        self.slots[index].cached.clear();
        if self
            .context
            .copy_kv_cache_seq(from, to, None, None)
            .is_err()
        {
            return;
        }
        let keep = u32::try_from(shared).ok();
        if self.context.kv_cache_seq_rm(to, keep, None).is_err() {
            let _ = self.context.kv_cache_seq_rm(to, None, None);
            return;
        }
        self.slots[index].cached = prompt[..shared].to_vec();
    }

    /// Ends cancelled generations, decodes one batch, and samples for every sequence
    /// whose logits it produced.
    fn step(&mut self) {
        self.end_cancelled();
        self.release_waiting();
        let fed = match self.fill_batch() {
            Ok(fed) if fed.is_empty() => return,
            Ok(fed) => fed,
            Err(error) => return self.fail_all(&error),
        };
        if let Err(error) = self.context.decode(&mut self.batch) {
            return self.fail_all(&backend("decoding failed").with_source(error));
        }
        let mut sampling = Vec::with_capacity(fed.len());
        for fed in fed {
            let slot = &mut self.slots[fed.slot];
            if let Some(sequence) = slot.sequence.as_mut() {
                slot.cached.extend(sequence.pending.drain(..fed.tokens));
                if fed.logits_at.is_none() {
                    sequence.prompt_progress();
                }
            }
            if let Some(logits_at) = fed.logits_at {
                sampling.push((fed.slot, logits_at));
            }
        }
        for (index, pick) in self.pick_all(&sampling) {
            self.advance(index, pick);
        }
    }

    /// Picks the next token of each sequence in `sampling` (slot, where its logits are).
    /// Sequences whose pick costs something (a sampler chain, a grammar) are sampled on
    /// scoped threads, one per core, so the masks and samplers of a batch run side by side
    /// rather than one after another.
    fn pick_all(
        &mut self,
        sampling: &[(usize, i32)],
    ) -> Vec<(usize, Result<LlamaToken, EngineError>)> {
        let vocab = self.model.vocab();
        let is_end = |token| vocab.is_eog(token);
        let mut work: Vec<(usize, &mut TokenSampler, &[f32])> = Vec::with_capacity(sampling.len());
        let context = &self.context;
        for (index, slot) in self.slots.iter_mut().enumerate() {
            let Some(&(_, logits_at)) = sampling.iter().find(|(slot, _)| *slot == index) else {
                continue;
            };
            if let Some(sequence) = slot.sequence.as_mut() {
                work.push((
                    index,
                    &mut sequence.sampler,
                    context.get_logits_ith(logits_at),
                ));
            }
        }
        let pick = |(index, sampler, logits): (usize, &mut TokenSampler, &[f32])| {
            (index, sampler.pick(logits, is_end))
        };
        // A thread costs tens of microseconds to start: worth it for samplers and masks,
        // not for greedy picks.
        let costly = work
            .iter()
            .filter(|(_, sampler, _)| !sampler.is_cheap())
            .count();
        let threads = self.sampling_threads.min(costly);
        if threads <= 1 {
            return work.into_iter().map(pick).collect();
        }
        let per_thread = work.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let mut chunks = Vec::with_capacity(threads);
            while !work.is_empty() {
                let rest = work.split_off(per_thread.min(work.len()));
                let chunk = std::mem::replace(&mut work, rest);
                let indices: Vec<usize> = chunk.iter().map(|(index, _, _)| *index).collect();
                let thread = scope.spawn(move || chunk.into_iter().map(pick).collect::<Vec<_>>());
                chunks.push((indices, thread));
            }
            chunks
                .into_iter()
                .flat_map(|(indices, thread)| {
                    thread.join().unwrap_or_else(|_| {
                        let failed = || Err(backend("sampling panicked"));
                        indices.into_iter().map(|index| (index, failed())).collect()
                    })
                })
                .collect()
        })
    }

    fn end_cancelled(&mut self) {
        for slot in &mut self.slots {
            if slot.sequence.as_ref().is_some_and(Sequence::is_cancelled) {
                if let Some(sequence) = slot.sequence.take() {
                    sequence.finish(FinishReason::Cancelled);
                }
            }
        }
    }

    /// Puts each sequence's pending tokens in the batch, generating sequences first (one
    /// token each), then prompts as far as the batch has room.
    fn fill_batch(&mut self) -> Result<Vec<Fed>, EngineError> {
        self.batch.clear();
        let mut order: Vec<(usize, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let sequence = slot.sequence.as_ref().filter(|s| s.waits_for.is_none())?;
                Some((index, sequence.pending.len()))
            })
            .collect();
        order.sort_by_key(|&(_, pending)| pending);
        let mut room = BATCH_TOKENS as usize;
        let mut fed = Vec::new();
        for (index, pending) in order {
            let tokens = pending.min(room);
            if tokens == 0 {
                continue;
            }
            let slot = &self.slots[index];
            let Some(sequence) = slot.sequence.as_ref() else {
                continue;
            };
            let start = slot.cached.len();
            for (offset, &token) in sequence.pending[..tokens].iter().enumerate() {
                let position =
                    i32::try_from(start + offset).map_err(|_| backend("position out of range"))?;
                let wants_logits = offset + 1 == pending;
                self.batch
                    .add(token, position, &[slot.seq_id], wants_logits)
                    .map_err(|error| backend("batch").with_source(error))?;
            }
            let logits_at = (tokens == pending).then(|| self.batch.n_tokens() - 1);
            fed.push(Fed {
                slot: index,
                tokens,
                logits_at,
            });
            room -= tokens;
        }
        Ok(fed)
    }

    /// Takes the token picked for the sequence in `index`, and the tokens the grammar
    /// forces after it, and decides whether the generation ends.
    fn advance(&mut self, index: usize, pick: Result<LlamaToken, EngineError>) {
        let vocab = self.model.vocab();
        let slot = &mut self.slots[index];
        let Some(sequence) = slot.sequence.as_mut() else {
            return;
        };
        let token = match pick {
            Ok(token) => token,
            Err(error) => {
                if let Some(sequence) = slot.sequence.take() {
                    sequence.fail(error);
                }
                return;
            }
        };
        let mut taken = vec![token];
        if self.forced_tokens_ahead && !vocab.is_eog(token) {
            taken.extend(sequence.sampler.forced());
        }
        let last = taken.len() - 1;
        let mut ending = None;
        for (n, token) in taken.into_iter().enumerate() {
            sequence.count_token();
            sequence.forced_tokens += u32::from(n > 0);
            ending = if vocab.is_eog(token)
                || sequence.emit(&vocab.token_to_piece(token, true, None))
                || (n == last && sequence.sampler.grammar_finished())
            {
                Some(FinishReason::Stop)
            } else if sequence.usage.completion_tokens >= sequence.max_tokens
                || slot.cached.len() + sequence.pending.len() + 1 >= self.context_per_sequence
            {
                Some(FinishReason::Length)
            } else {
                sequence.pending.push(token);
                None
            };
            if ending.is_some() {
                break;
            }
        }
        if let Some(reason) = ending {
            if let Some(sequence) = slot.sequence.take() {
                sequence.finish(reason);
            }
        }
    }

    /// After a failed decode the cache is in an unknown state: every running generation
    /// fails and every slot starts afresh.
    fn fail_all(&mut self, error: &EngineError) {
        for slot in &mut self.slots {
            if let Some(sequence) = slot.sequence.take() {
                sequence.fail(error.clone());
            }
            let _ = self.context.kv_cache_seq_rm(slot.seq_id, None, None);
            slot.cached.clear();
        }
    }
}

fn count(tokens: usize) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}
