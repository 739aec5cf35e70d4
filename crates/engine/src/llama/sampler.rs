//! Choosing the next token: llama.cpp's sampler chain for the settings, and the grammar.
//!
//! The grammar is enforced by *checking first, masking only on refusal*: the chain picks a
//! token from the raw logits, and only when the matcher refuses it is the mask computed
//! and the pick made again from the allowed tokens. For greedy decoding this is exactly
//! masked decoding; when sampling it draws from the same distribution as sampling from the
//! masked logits (the allowed tokens keep their relative odds). Since a model following
//! its own format is rarely refused, a constrained generation costs almost no mask
//! computations — and a lazy grammar none at all before its trigger.

use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;
use llama_cpp_2::token::LlamaToken;
use llguidance::toktrie::SimpleVob;
use llguidance::Matcher;

use super::constrain::token_id;
use crate::error::constraint_error;
use crate::{highest_logit, EngineError, EngineErrorKind, Sampling};

/// llama.cpp's defaults (as `llama-server` uses them) for settings a request leaves out.
const DEFAULT_TEMPERATURE: f32 = 0.8;
const DEFAULT_TOP_K: u32 = 40;
const DEFAULT_TOP_P: f32 = 0.95;
const DEFAULT_MIN_P: f32 = 0.05;
/// How many recent tokens the repetition penalties look at.
const PENALTY_WINDOW: i32 = 64;
/// llama.cpp's "pick a random seed".
const RANDOM_SEED: u32 = u32::MAX;

/// The sampler of one generation: its chain and, when constrained, its matcher.
pub(super) struct TokenSampler {
    chain: LlamaSampler,
    /// The chain is plain greedy (temperature 0, no penalties): the pick is the highest
    /// logit, found without building the chain's candidate array.
    greedy: bool,
    matcher: Option<Matcher>,
    /// One entry per vocabulary token, reused from step to step.
    candidates: Vec<LlamaTokenData>,
}

impl TokenSampler {
    pub(super) fn new(sampling: &Sampling, n_vocab: i32, matcher: Option<Matcher>) -> Self {
        Self {
            chain: chain(sampling, n_vocab),
            greedy: is_plain_greedy(sampling),
            matcher,
            candidates: Vec::new(),
        }
    }

    /// Picks the next token from `logits` within the grammar and records it in the chain
    /// (for the penalties) and the matcher. `is_end` tells end-of-generation tokens, which
    /// the grammar allows only where it may end.
    pub(super) fn pick(
        &mut self,
        logits: &[f32],
        is_end: impl Fn(LlamaToken) -> bool,
    ) -> Result<LlamaToken, EngineError> {
        let first = self.choose(logits, None)?;
        let token = match self.mask_if_refused(first, is_end(first))? {
            Some(mask) => self.choose(logits, Some(&mask))?,
            None => first,
        };
        self.chain.accept(token);
        if let Some(matcher) = self.matcher.as_mut().filter(|_| !is_end(token)) {
            matcher
                .consume_token(token_id(token))
                .map_err(constraint_error)?;
        }
        Ok(token)
    }

    /// The grammar's mask when it refuses `token`; `None` when it admits it (or there is
    /// no grammar).
    fn mask_if_refused(
        &mut self,
        token: LlamaToken,
        is_end: bool,
    ) -> Result<Option<SimpleVob>, EngineError> {
        let Some(matcher) = self.matcher.as_mut() else {
            return Ok(None);
        };
        if accepts(matcher, token, is_end)? {
            return Ok(None);
        }
        matcher.compute_mask().map(Some).map_err(constraint_error)
    }

    /// The tokens the grammar admits as the only way on from here, taken as if picked
    /// (llguidance's fast-forward tokens: the grammar's forced text, tokenized as the
    /// model's tokenizer would, less a last token a longer one could replace). They are
    /// recorded in the chain (for the penalties) and the matcher. Empty without a grammar,
    /// before a lazy one's trigger, or where it leaves a choice.
    pub(super) fn forced(&mut self) -> Vec<LlamaToken> {
        let Some(matcher) = self
            .matcher
            .as_mut()
            .filter(|matcher| !matcher.is_stopped())
        else {
            return Vec::new();
        };
        let forced: Vec<LlamaToken> = matcher
            .consume_ff_tokens()
            .into_iter()
            .filter_map(|id| Some(LlamaToken(i32::try_from(id).ok()?)))
            .collect();
        for &token in &forced {
            self.chain.accept(token);
        }
        forced
    }

    /// Whether a pick costs next to nothing: plain greedy (~13 µs), whose grammar check
    /// is one token's (a mask only when the grammar refuses the pick, which is rare).
    pub(super) fn is_cheap(&self) -> bool {
        self.greedy
    }

    /// Whether the grammar is complete and admits nothing more.
    pub(super) fn grammar_finished(&self) -> bool {
        self.matcher.as_ref().is_some_and(Matcher::is_stopped)
    }

    fn choose(
        &mut self,
        logits: &[f32],
        allowed: Option<&SimpleVob>,
    ) -> Result<LlamaToken, EngineError> {
        if self.greedy {
            let allowed = |id: usize| allowed.is_none_or(|mask| mask.is_allowed(id as u32));
            return highest_logit(logits, allowed)
                .map(|id| LlamaToken(id as i32))
                .ok_or_else(|| {
                    EngineError::new(EngineErrorKind::Backend, "every token is masked")
                });
        }
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        candidates.extend(logits.iter().zip(0..).map(|(&logit, id)| {
            let allowed = allowed.is_none_or(|mask| mask.is_allowed(id as u32));
            let logit = if allowed { logit } else { f32::NEG_INFINITY };
            LlamaTokenData::new(LlamaToken(id), logit, 0.0)
        }));
        let mut candidates = LlamaTokenDataArray::new(candidates, false);
        candidates.apply_sampler(&mut self.chain);
        let chosen = candidates.selected_token();
        self.candidates = candidates.data;
        chosen
            .ok_or_else(|| EngineError::new(EngineErrorKind::Backend, "the sampler chose no token"))
    }
}

/// Whether `sampling` makes the chain plain greedy.
fn is_plain_greedy(sampling: &Sampling) -> bool {
    sampling.temperature.unwrap_or(DEFAULT_TEMPERATURE) <= 0.0
        && sampling.repeat_penalty.unwrap_or(1.0) == 1.0
        && sampling.frequency_penalty.unwrap_or(0.0) == 0.0
        && sampling.presence_penalty.unwrap_or(0.0) == 0.0
        && sampling.logit_bias.is_empty()
}

/// Whether the matcher admits `token` next (an end token where the grammar may end).
fn accepts(matcher: &mut Matcher, token: LlamaToken, is_end: bool) -> Result<bool, EngineError> {
    if is_end {
        return Ok(matcher.is_stopped() || matcher.is_accepting().map_err(constraint_error)?);
    }
    let valid = matcher
        .validate_tokens(&[token_id(token)])
        .map_err(constraint_error)?;
    Ok(valid == 1)
}

/// llama.cpp's chain for `sampling`: the logit biases, penalties, then greedy, or top-k,
/// top-p, min-p, temperature and a seeded draw. A bias for a token the vocabulary lacks
/// changes nothing (llama.cpp looks each one up).
fn chain(sampling: &Sampling, n_vocab: i32) -> LlamaSampler {
    let mut samplers = Vec::new();
    if !sampling.logit_bias.is_empty() {
        let biases: Vec<LlamaLogitBias> = sampling
            .logit_bias
            .iter()
            .filter_map(|&(token, bias)| {
                let token = LlamaToken(i32::try_from(token).ok()?);
                Some(LlamaLogitBias::new(token, bias))
            })
            .collect();
        samplers.push(LlamaSampler::logit_bias(n_vocab, &biases));
    }
    let repeat = sampling.repeat_penalty.unwrap_or(1.0);
    let frequency = sampling.frequency_penalty.unwrap_or(0.0);
    let presence = sampling.presence_penalty.unwrap_or(0.0);
    if repeat != 1.0 || frequency != 0.0 || presence != 0.0 {
        samplers.push(LlamaSampler::penalties(
            n_vocab,
            PENALTY_WINDOW,
            repeat,
            frequency,
            presence,
        ));
    }
    let temperature = sampling.temperature.unwrap_or(DEFAULT_TEMPERATURE);
    if temperature <= 0.0 {
        samplers.push(LlamaSampler::greedy());
    } else {
        let top_k = sampling.top_k.unwrap_or(DEFAULT_TOP_K);
        samplers.extend([
            LlamaSampler::top_k(i32::try_from(top_k).unwrap_or(i32::MAX)),
            LlamaSampler::top_p(sampling.top_p.unwrap_or(DEFAULT_TOP_P), 1),
            LlamaSampler::min_p(sampling.min_p.unwrap_or(DEFAULT_MIN_P), 1),
            LlamaSampler::temp(temperature),
            LlamaSampler::dist(sampling.seed.map_or(RANDOM_SEED, fold_seed)),
        ]);
    }
    LlamaSampler::chain_simple(samplers)
}

/// A 64-bit seed folded into llama.cpp's 32 bits, avoiding the value meaning "random".
fn fold_seed(seed: u64) -> u32 {
    let folded = (seed ^ (seed >> 32)) as u32;
    if folded == RANDOM_SEED {
        0
    } else {
        folded
    }
}
