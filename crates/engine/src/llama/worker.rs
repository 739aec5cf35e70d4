//! The worker thread: it owns the model and its context and runs every generation.
//!
//! Each step builds one batch: the last sampled token of every generating sequence, then
//! as much of the waiting prompts as the batch has room for, each under its own sequence
//! id. One decode evaluates them all, and each sequence whose last token was in the batch
//! samples its next one. A prompt longer than the batch is evaluated over several steps
//! while the other sequences keep generating.

use std::sync::mpsc::{Receiver, Sender};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use toolbridge_grammar::Constraint;

use super::constrain::Constrainer;
use super::sampler::TokenSampler;
use super::slot::{Sequence, Slot};
use super::{
    backend, context_params, model_info, model_params, sequences, shared_backend, Event, Job,
    LlamaOptions, BATCH_TOKENS,
};
use crate::{EngineError, FinishReason, ModelInfo, Usage};

/// Loads the model, reports it (or the failure) on `ready`, then serves `jobs` until the
/// engine is dropped.
pub(super) fn run(
    options: &LlamaOptions,
    ready: &Sender<Result<ModelInfo, EngineError>>,
    jobs: Receiver<Job>,
) {
    let model = match load_model(options) {
        Ok(model) => model,
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    let worker = Worker::new(options, &model);
    match worker {
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

fn load_model(options: &LlamaOptions) -> Result<LlamaModel, EngineError> {
    if !options.model.is_file() {
        return Err(backend(format!(
            "no model file at {}",
            options.model.display()
        )));
    }
    LlamaModel::load_from_file(shared_backend()?, &options.model, &model_params(options))
        .map_err(|error| backend(format!("cannot load {}: {error}", options.model.display())))
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
    constrainer: Constrainer,
    slots: Vec<Slot>,
    batch: LlamaBatch<'static>,
    context_per_sequence: usize,
    info: ModelInfo,
}

impl<'m> Worker<'m> {
    fn new(options: &LlamaOptions, model: &'m LlamaModel) -> Result<Self, EngineError> {
        let parallel = sequences(options);
        let context = model
            .new_context(shared_backend()?, context_params(options, model))
            .map_err(|error| backend(format!("cannot create the context: {error}")))?;
        let context_per_sequence = context.n_ctx() / parallel;
        let slots = (0..parallel)
            .map(|seq_id| Slot::new(i32::try_from(seq_id).unwrap_or(i32::MAX)))
            .collect();
        Ok(Self {
            model,
            constrainer: Constrainer::new(model)?,
            slots,
            batch: LlamaBatch::new(BATCH_TOKENS as usize, 1),
            context_per_sequence: context_per_sequence as usize,
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
    fn admit(&mut self, job: Job) {
        let (prompt, sampler) = match self.prepare(&job) {
            Ok(prepared) => prepared,
            Err(error) => {
                let _ = job.events.send(Event::Done(Err(error)));
                return;
            }
        };
        let Some(index) = self.best_free_slot(&prompt) else {
            let _ = job.events.send(Event::Done(Err(backend("no free slot"))));
            return;
        };
        let reused = self.reuse_prefix(index, &prompt);
        let usage = Usage {
            prompt_tokens: count(prompt.len()),
            completion_tokens: 0,
            cached_tokens: count(reused),
        };
        let sequence = Sequence::new(job, prompt[reused..].to_vec(), sampler, usage);
        if sequence.max_tokens == 0 {
            sequence.finish(FinishReason::Length);
            return;
        }
        self.slots[index].sequence = Some(sequence);
    }

    /// The prompt's tokens and the generation's sampler, or why it cannot run.
    fn prepare(&self, job: &Job) -> Result<(Vec<LlamaToken>, TokenSampler), EngineError> {
        let prompt = self.tokenize(&job.generation.prompt)?;
        if prompt.len() >= self.context_per_sequence {
            return Err(EngineError::PromptTooLong {
                prompt_tokens: count(prompt.len()),
                context_length: count(self.context_per_sequence),
            });
        }
        let matcher = job
            .generation
            .constraint
            .as_ref()
            .map(|constraint: &Constraint| self.constrainer.compile(constraint))
            .transpose()?;
        let sampler = TokenSampler::new(&job.generation.sampling, self.model.n_vocab(), matcher);
        Ok((prompt, sampler))
    }

    /// The prompt's tokens, special tokens parsed from their text. BOS is added when the
    /// model wants one and the prompt (rendered by a template) does not start with it.
    fn tokenize(&self, prompt: &str) -> Result<Vec<LlamaToken>, EngineError> {
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(prompt.as_bytes(), false, true);
        let bos = vocab.bos();
        if vocab.should_add_bos() && bos.0 >= 0 && tokens.first() != Some(&bos) {
            tokens.insert(0, bos);
        }
        if tokens.is_empty() {
            return Err(backend(
                "the prompt is empty and the model has no BOS token",
            ));
        }
        Ok(tokens)
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
    /// where generation starts.
    fn reuse_prefix(&mut self, index: usize, prompt: &[LlamaToken]) -> usize {
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

    /// Ends cancelled generations, decodes one batch, and samples for every sequence
    /// whose logits it produced.
    fn step(&mut self) {
        self.end_cancelled();
        let fed = match self.fill_batch() {
            Ok(fed) if fed.is_empty() => return,
            Ok(fed) => fed,
            Err(error) => return self.fail_all(&error),
        };
        if let Err(error) = self.context.decode(&mut self.batch) {
            return self.fail_all(&backend(format!("decoding failed: {error}")));
        }
        for fed in fed {
            let slot = &mut self.slots[fed.slot];
            if let Some(sequence) = slot.sequence.as_mut() {
                slot.cached.extend(sequence.pending.drain(..fed.tokens));
            }
            if let Some(logits_at) = fed.logits_at {
                self.advance(fed.slot, logits_at);
            }
        }
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
            .filter_map(|(index, slot)| Some((index, slot.sequence.as_ref()?.pending.len())))
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
                    .map_err(|error| backend(format!("batch: {error}")))?;
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

    /// Samples the next token of the sequence in `index` and decides whether it ends.
    fn advance(&mut self, index: usize, logits_at: i32) {
        let vocab = self.model.vocab();
        let logits = self.context.get_logits_ith(logits_at);
        let slot = &mut self.slots[index];
        let Some(sequence) = slot.sequence.as_mut() else {
            return;
        };
        let token = match sequence.sampler.pick(logits, |token| vocab.is_eog(token)) {
            Ok(token) => token,
            Err(error) => {
                if let Some(sequence) = slot.sequence.take() {
                    sequence.fail(error);
                }
                return;
            }
        };
        sequence.count_token();
        let ending = if vocab.is_eog(token)
            || sequence.emit(&vocab.token_to_piece(token, true, None))
            || sequence.sampler.grammar_finished()
        {
            Some(FinishReason::Stop)
        } else if sequence.usage.completion_tokens >= sequence.max_tokens
            || slot.cached.len() + 1 >= self.context_per_sequence
        {
            Some(FinishReason::Length)
        } else {
            sequence.pending.push(token);
            None
        };
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
                sequence.fail(clone_error(error));
            }
            let _ = self.context.kv_cache_seq_rm(slot.seq_id, None, None);
            slot.cached.clear();
        }
    }
}

fn clone_error(error: &EngineError) -> EngineError {
    backend(error.to_string())
}

fn count(tokens: usize) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}
