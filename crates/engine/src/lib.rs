//! Engines turn a prompt and a constraint into a stream of text: the embedded llama.cpp
//! (behind the `llama` feature, so the core crates build and test in seconds) and remote
//! servers over HTTP. It knows chat types and grammars, never dialects.
//!
//! A generation is consumed as a stream ([`streamed::stream`]): pieces pulled on the
//! caller's runtime as they come, stopped by a word. An engine whose generation is a loop
//! over tokens on its own thread (the embedded one) implements the blocking, callback-driven
//! [`Engine::generate`], and the stream runs it on a blocking thread; an engine that is async
//! already (a remote server) streams natively ([`Engine::stream`]). Either way a caller
//! that stops — when an HTTP client goes away, say — ends the generation at its next piece,
//! so an engine never decodes a token nobody will read.

use toolbridge_grammar::Constraint;

mod error;
mod greedy;
#[cfg(feature = "llama")]
pub mod llama;
pub mod remote;
pub mod scripted;
pub mod stop;
pub mod streamed;

pub use error::{EngineError, EngineErrorKind};
pub use greedy::highest_logit;
#[cfg(feature = "llama")]
pub use llama::{LlamaEngine, LlamaOptions};
pub use remote::{EngineKind, RemoteEngine, RemoteOptions};
pub use scripted::ScriptedEngine;
pub use streamed::{Pieces, Streamed};

/// How the next token is chosen. `None` leaves a setting at the engine's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampling {
    /// 0 is greedy.
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<u32>,
    pub min_p: Option<f32>,
    /// Makes sampling repeatable.
    pub seed: Option<u64>,
    /// llama.cpp's multiplicative repetition penalty (1.0 is none).
    pub repeat_penalty: Option<f32>,
    /// OpenAI's additive penalties, -2.0 to 2.0.
    pub frequency_penalty: Option<f32>,
    pub presence_penalty: Option<f32>,
    /// The most tokens to generate; the engine's context limits it too.
    pub max_tokens: Option<u32>,
    /// OpenAI's `logit_bias`: added to a token's logit before sampling (-100 bans it, 100
    /// all but forces it), by token id.
    pub logit_bias: Vec<(u32, f32)>,
}

impl Sampling {
    /// These settings, with `defaults`' wherever one is left unset.
    pub fn or(self, defaults: &Sampling) -> Sampling {
        Sampling {
            temperature: self.temperature.or(defaults.temperature),
            top_p: self.top_p.or(defaults.top_p),
            top_k: self.top_k.or(defaults.top_k),
            min_p: self.min_p.or(defaults.min_p),
            seed: self.seed.or(defaults.seed),
            repeat_penalty: self.repeat_penalty.or(defaults.repeat_penalty),
            frequency_penalty: self.frequency_penalty.or(defaults.frequency_penalty),
            presence_penalty: self.presence_penalty.or(defaults.presence_penalty),
            max_tokens: self.max_tokens.or(defaults.max_tokens),
            logit_bias: if self.logit_bias.is_empty() {
                defaults.logit_bias.clone()
            } else {
                self.logit_bias
            },
        }
    }
}

/// One generation asked of an engine.
#[derive(Debug, Clone, Default)]
pub struct Generation {
    /// The full prompt text, special tokens written as text (the engine parses them).
    pub prompt: String,
    /// The grammar the output must follow; `None` leaves it free.
    pub constraint: Option<Constraint>,
    /// Generation ends before the first of these appears; it is not part of the output.
    pub stop: Vec<String>,
    pub sampling: Sampling,
}

/// What the caller tells the engine after each piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the generation now (the client went away); it finishes as
    /// [`FinishReason::Cancelled`].
    Stop,
}

/// Why a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// An end-of-generation token, a stop string, or the grammar's end.
    Stop,
    /// `max_tokens` or the context ran out.
    Length,
    /// The caller returned [`Flow::Stop`].
    Cancelled,
}

/// Token counts, as OpenAI's `usage` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Prompt tokens whose KV cache was reused from an earlier generation.
    pub cached_tokens: u32,
}

/// Where the time went, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// From the call to the first generated piece.
    pub first_piece_ms: f64,
    /// Making the constraint's matcher: a compile, or a copy of a cached one.
    pub grammar_ms: f64,
    /// The constraint was compiled before and came from the engine's cache.
    pub grammar_cached: bool,
    /// Waiting for a free sequence (slot) of the engine.
    pub queue_ms: f64,
    /// Evaluating the prompt (the part not reused from cache).
    pub prompt_ms: f64,
    /// Generating, after the prompt.
    pub generation_ms: f64,
    /// Generated tokens a grammar forced, taken without a decode step of their own (as
    /// llama-server's timings count accepted draft tokens).
    pub forced_tokens: u32,
}

/// How a generation ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completion {
    pub finish_reason: FinishReason,
    pub usage: Usage,
    pub timings: Timings,
}

/// What an engine serves, as read from the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelInfo {
    /// The id clients name the model by (`/v1/models`).
    pub id: String,
    /// The chat template the model ships (GGUF `tokenizer.chat_template`).
    pub chat_template: Option<String>,
    /// The texts of the model's BOS and EOS tokens, as templates print them.
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
    /// The context size generations run with, in tokens.
    pub context_length: u32,
    /// The Modelfile an Ollama server reports for the model (`/api/show`): its `TEMPLATE`
    /// is a Go template, rendered as Ollama renders it, with its system prompt,
    /// parameters and messages.
    pub ollama_modelfile: Option<String>,
}

/// Something that generates text from a prompt. Implementations are shared between
/// requests (`Send + Sync`); those that can, serve several generations at once.
pub trait Engine: Send + Sync {
    /// The model served.
    fn model(&self) -> &ModelInfo;

    /// Runs `generation`, handing each decoded piece of text to `on_piece` as it comes,
    /// until the model ends, a stop string appears, `max_tokens` is reached or `on_piece`
    /// returns [`Flow::Stop`]. The pieces together are the whole output, stop string
    /// excluded; a piece is never a partial UTF-8 character. An engine waiting long for
    /// its first piece (evaluating a long prompt, here or remotely) may pass an empty piece
    /// now and then, to learn whether to go on.
    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError>;

    /// The generation as a stream on the caller's runtime, for an engine that is async
    /// already; `None` (the default) has [`streamed::stream`] run [`Engine::generate`] on
    /// a blocking thread instead.
    fn stream(&self, _generation: &Generation) -> Option<Pieces> {
        None
    }

    /// Refuses a prompt that cannot fit the context ([`EngineErrorKind::PromptTooLong`]) as
    /// cheaply as the engine can tell, before the request takes a slot or waits for one;
    /// `generate` checks exactly. By default nothing is checked early.
    fn check_prompt(&self, _prompt: &str) -> Result<(), EngineError> {
        Ok(())
    }

    /// The texts of the model's special tokens (its vocabulary's control tokens), for
    /// showing where a prompt has them; empty where the engine cannot tell.
    fn special_tokens(&self) -> &[String] {
        &[]
    }

    /// Makes ready what generating under `constraint` needs (the embedded engine compiles
    /// and caches its matcher), before the request takes a slot, so that a grammar the
    /// engine refuses, or is slow to compile, fails the request there. By default there
    /// is nothing to make ready.
    fn prepare_constraint(&self, _constraint: &Constraint) -> Result<(), EngineError> {
        Ok(())
    }

    /// What of `generation` this engine cannot enforce (a remote engine that takes no
    /// grammar), to be said with the answer; `None` when it enforces everything.
    fn unenforced(&self, _generation: &Generation) -> Option<&'static str> {
        None
    }
}
