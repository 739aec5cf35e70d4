//! Log probabilities of the generated tokens, as a choice reports them.

use serde::{Deserialize, Serialize};

/// A choice's `logprobs`: one entry per generated token of the content (or of a refusal).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChoiceLogprobs {
    /// Always written, `null` when absent, as OpenAI does.
    #[serde(default)]
    pub content: Option<Vec<TokenLogprob>>,
    /// Always written, `null` when absent, as OpenAI does.
    #[serde(default)]
    pub refusal: Option<Vec<TokenLogprob>>,
}

/// One generated token with its log probability and the most likely alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
    /// The token's UTF-8 bytes (a token may hold part of a character).
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
    #[serde(default)]
    pub top_logprobs: Vec<TopLogprob>,
}

/// One of the most likely tokens at a position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopLogprob {
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
}
