//! llguidance over the model's own vocabulary. The token trie is built once at load (it
//! walks every token); each constrained generation compiles its grammar into a fresh
//! [`Matcher`]. Control tokens are marked special in the trie, so only a grammar that
//! names one (`<|python_tag|>`) admits it, and every end-of-generation token counts as
//! EOS, so a finished grammar lets the model end the way it was trained to.

use std::sync::Arc;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};
use toolbridge_grammar::Constraint;

use crate::constraint::to_lark;
use crate::EngineError;

/// Compiles constraints for one model.
pub(super) struct Constrainer {
    factory: ParserFactory,
}

impl Constrainer {
    pub(super) fn new(model: &LlamaModel) -> Result<Self, EngineError> {
        let mut factory = ParserFactory::new_simple(&token_env(model))
            .map_err(|error| EngineError::Backend(format!("llguidance: {error}")))?;
        factory.quiet();
        Ok(Self { factory })
    }

    /// A matcher at the start of `constraint`'s language; a grammar llguidance refuses is
    /// an [`EngineError::Constraint`].
    pub(super) fn compile(&self, constraint: &Constraint) -> Result<Matcher, EngineError> {
        let grammar = TopLevelGrammar::from_lark(to_lark(constraint));
        let parser = llguidance::panic_utils::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.factory.create_parser(grammar)
        }));
        let matcher = Matcher::new(parser);
        match matcher.get_error() {
            Some(error) => Err(EngineError::Constraint(error)),
            None => Ok(matcher),
        }
    }
}

/// The model's vocabulary as llguidance's token trie, built as llama.cpp's own llguidance
/// integration builds it: each token's text as bytes; a token without plain text (a
/// control token) as its special text behind toktrie's special-token marker; every
/// end-of-generation token registered as EOS. Walks the whole vocabulary (~150k tokens
/// for Qwen, a few hundred milliseconds), so it runs once per model.
fn token_env(model: &LlamaModel) -> TokEnv {
    let vocab = model.vocab();
    let eot = vocab.eot();
    let primary_end = if eot.0 >= 0 { eot } else { vocab.eos() };
    let mut ends = vec![token_id(primary_end)];
    let mut words = Vec::new();
    for id in 0..model.n_vocab() {
        let token = LlamaToken(id);
        if vocab.is_eog(token) && token != primary_end {
            ends.push(token_id(token));
        }
        let plain = vocab.token_to_piece(token, false, None);
        words.push(if plain.is_empty() {
            marked_special(vocab.token_to_piece(token, true, None))
        } else {
            plain
        });
    }
    let info = TokRxInfo::new(words.len() as u32, token_id(primary_end));
    let trie = TokTrie::from(&info, &words).with_eos_tokens(&ends);
    Arc::new(ApproximateTokEnv::new(trie))
}

fn marked_special(text: Vec<u8>) -> Vec<u8> {
    if text.is_empty() {
        return text;
    }
    let mut marked = vec![TokTrie::SPECIAL_TOKEN_MARKER];
    marked.extend(text);
    marked
}

pub(super) fn token_id(token: LlamaToken) -> u32 {
    // Token ids are never negative; llguidance counts them unsigned.
    token.0 as u32
}
