//! llguidance over the model's own vocabulary. The token trie is built once at load (it
//! walks every token). Control tokens are marked special in the trie, so only a grammar
//! that names one (`<|python_tag|>`) admits it, and every end-of-generation token counts
//! as EOS, so a finished grammar lets the model end the way it was trained to. Text is
//! tokenized by the model's own tokenizer, so the tokens llguidance forces where the
//! grammar leaves one way on are the ones the model would read for that text.
//!
//! A constraint is compiled on the caller's thread, never the decode thread, and kept:
//! a grammar is a function of the tools, `tool_choice`, the dialect and the response
//! format, and clients send the same ones request after request. The cache is keyed by
//! the grammar's text; a hit is a copy of the compiled matcher in its start state. Requests
//! that arrive together with a new grammar wait for one compile instead of each running
//! their own.
//!
//! `toolbridge bench mask-time --tools examples/tools/eight.json` on the default model
//! (2 cores): compiling a call grammar of eight tools takes 4.0 ms, a copy of the compiled
//! matcher 14 µs. In the server's timing line, a request with those tools spends 17 ms
//! when its grammar is new (the lazy call grammar is larger) and 0.6–1.0 ms on a cache
//! hit, most of it printing the grammar that keys the cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};
use toolbridge_grammar::Constraint;

use crate::error::constraint_error;
use crate::{EngineError, EngineErrorKind};

/// How many compiled grammars are kept; the least recently used goes first.
const CACHED_GRAMMARS: usize = 64;

/// Compiles constraints for one model, and remembers them.
pub(super) struct Constrainer {
    factory: ParserFactory,
    cache: Mutex<Cache>,
}

/// A matcher at the start of a constraint's language, and what it cost.
pub(super) struct Ready {
    pub(super) matcher: Matcher,
    pub(super) millis: f64,
    /// The grammar was compiled for an earlier request.
    pub(super) cached: bool,
}

/// One grammar's compile, shared by the requests that want it; set once compiled.
type Compile = Arc<OnceLock<Result<Matcher, String>>>;

#[derive(Default)]
struct Cache {
    grammars: HashMap<String, (Compile, u64)>,
    /// Counts lookups; each entry remembers when it was last used.
    clock: u64,
}

impl Cache {
    /// The entry for `lark`, made if new, and whether it existed.
    fn entry(&mut self, lark: &str) -> (Compile, bool) {
        self.clock += 1;
        let clock = self.clock;
        if let Some((compile, used)) = self.grammars.get_mut(lark) {
            *used = clock;
            return (Arc::clone(compile), true);
        }
        if self.grammars.len() >= CACHED_GRAMMARS {
            self.evict_least_recent();
        }
        let compile = Compile::default();
        self.grammars
            .insert(lark.to_owned(), (Arc::clone(&compile), clock));
        (compile, false)
    }

    fn evict_least_recent(&mut self) {
        let oldest = self
            .grammars
            .iter()
            .min_by_key(|(_, (_, used))| *used)
            .map(|(lark, _)| lark.clone());
        if let Some(lark) = oldest {
            self.grammars.remove(&lark);
        }
    }
}

impl Constrainer {
    pub(super) fn new(model: &Arc<LlamaModel>) -> Result<Self, EngineError> {
        let mut factory = ParserFactory::new_simple(&token_env(model)).map_err(|error| {
            EngineError::new(EngineErrorKind::Backend, format!("llguidance: {error}"))
        })?;
        factory.quiet();
        Ok(Self {
            factory,
            cache: Mutex::default(),
        })
    }

    /// A matcher at the start of `constraint`'s language, from the cache when it was
    /// compiled before; a grammar llguidance refuses is an [`EngineErrorKind::Constraint`].
    pub(super) fn matcher(&self, constraint: &Constraint) -> Result<Ready, EngineError> {
        let started = Instant::now();
        let (compile, cached) = self.compiled(constraint);
        let matcher = compile
            .get()
            .and_then(|compiled| compiled.as_ref().ok())
            .ok_or_else(|| refused(&compile))?;
        Ok(Ready {
            matcher: matcher.deep_clone(),
            millis: started.elapsed().as_secs_f64() * 1e3,
            cached,
        })
    }

    /// Compiles `constraint` into the cache unless it is there, so a later [`matcher`]
    /// for it is a copy; a grammar llguidance refuses is an [`EngineErrorKind::Constraint`].
    ///
    /// [`matcher`]: Constrainer::matcher
    pub(super) fn prepare(&self, constraint: &Constraint) -> Result<(), EngineError> {
        let (compile, _) = self.compiled(constraint);
        match compile.get() {
            Some(Ok(_)) => Ok(()),
            _ => Err(refused(&compile)),
        }
    }

    /// The cache's compile of `constraint`, compiled now if it was not; whether it was
    /// cached.
    fn compiled(&self, constraint: &Constraint) -> (Compile, bool) {
        let lark = constraint.lark();
        let (compile, cached) = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(lark);
        compile.get_or_init(|| self.compile(TopLevelGrammar::from_lark(lark.to_owned())));
        (compile, cached)
    }

    /// Compiles `grammar`, or says why llguidance refuses it.
    fn compile(&self, grammar: TopLevelGrammar) -> Result<Matcher, String> {
        let parser = llguidance::panic_utils::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.factory.create_parser(grammar)
        }));
        let matcher = Matcher::new(parser);
        match matcher.get_error() {
            Some(error) => Err(error),
            None => Ok(matcher),
        }
    }
}

/// Why `compile` holds no matcher.
fn refused(compile: &Compile) -> EngineError {
    match compile.get() {
        Some(Err(error)) => constraint_error(error.clone()),
        _ => constraint_error("the grammar was not compiled"),
    }
}

/// The model's vocabulary as llguidance's token trie, built as llama.cpp's own llguidance
/// integration builds it: each token's text as bytes; a token without plain text (a
/// control token) as its special text behind toktrie's special-token marker; every
/// end-of-generation token registered as EOS. Walks the whole vocabulary (~150k tokens
/// for Qwen, a few hundred milliseconds), so it runs once per model.
fn token_env(model: &Arc<LlamaModel>) -> TokEnv {
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
    Arc::new(ModelTokens {
        model: Arc::clone(model),
        trie,
    })
}

/// The vocabulary's trie, and the model's tokenizer for text (special tokens not parsed:
/// llguidance marks those itself).
struct ModelTokens {
    model: Arc<LlamaModel>,
    trie: TokTrie,
}

impl TokenizerEnv for ModelTokens {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    /// Text that is not UTF-8 (a char cut by the forced bytes' end) is left to the trie.
    fn tokenize_bytes(&self, text: &[u8]) -> Vec<TokenId> {
        if std::str::from_utf8(text).is_err() {
            return self.trie.greedy_tokenize(text);
        }
        self.model
            .vocab()
            .tokenize(text, false, false)
            .into_iter()
            .map(token_id)
            .collect()
    }
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
