//! A model's vocabulary, read from its GGUF file, as the token trie llguidance computes
//! masks over. GGUF stores tokens as the tokenizer spells them: GPT-2 byte-level BPE maps
//! every byte to a printable character (`Ġ` for a space), SentencePiece writes `▁` for a
//! space and `<0x0A>` for raw bytes. Both are turned back into the bytes a token stands
//! for; control tokens are marked special so that only a grammar naming them admits them.

use anyhow::{bail, Context, Result};
use std::path::Path;
use toolbridge_grammar::check::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use toolbridge_template::gguf::{GgufMetadata, ReadOptions, TOKENS_KEY};

const TOKEN_TYPE_KEY: &str = "tokenizer.ggml.token_type";
const MODEL_KEY: &str = "tokenizer.ggml.model";
const EOS_ID_KEY: &str = "tokenizer.ggml.eos_token_id";
const BOS_ID_KEY: &str = "tokenizer.ggml.bos_token_id";
/// llama.cpp's `LLAMA_TOKEN_TYPE_CONTROL`.
const CONTROL: u64 = 3;
/// llama.cpp's `LLAMA_TOKEN_TYPE_USER_DEFINED`: added tokens, stored as plain text.
const USER_DEFINED: u64 = 4;

/// The GGUF's vocabulary as a tokenizer environment (greedy tokenization over the trie).
pub fn from_gguf(path: &Path) -> Result<TokEnv> {
    let options = ReadOptions::keep_only_arrays([TOKENS_KEY, TOKEN_TYPE_KEY]);
    let meta = GgufMetadata::read_with(path, &options)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let tokens = meta
        .get(TOKENS_KEY)
        .and_then(|v| v.as_array())
        .context("the GGUF has no token list")?;
    let types = meta
        .get(TOKEN_TYPE_KEY)
        .and_then(|v| v.as_array())
        .unwrap_or(&[]);
    let byte_level = match meta.get_str(MODEL_KEY) {
        Some("gpt2") => true,
        Some("llama") => false,
        other => bail!("tokenizer model {other:?} is not supported for mask timing"),
    };
    let words: Vec<Vec<u8>> = tokens
        .iter()
        .enumerate()
        .map(|(id, token)| {
            let text = token.as_str().unwrap_or_default();
            match types.get(id).and_then(|t| t.as_u64()) {
                Some(CONTROL) => special(text),
                Some(USER_DEFINED) => text.as_bytes().to_vec(),
                _ if byte_level => byte_level_bytes(text),
                _ => sentencepiece_bytes(text),
            }
        })
        .collect();
    let vocab_size = u32::try_from(words.len()).context("vocabulary too large")?;
    let id = |key| meta.get_u64(key).and_then(|v| u32::try_from(v).ok());
    let info = TokRxInfo {
        tok_bos: id(BOS_ID_KEY),
        ..TokRxInfo::new(
            vocab_size,
            id(EOS_ID_KEY).context("the GGUF has no EOS token")?,
        )
    };
    Ok(std::sync::Arc::new(ApproximateTokEnv::new(TokTrie::from(
        &info, &words,
    ))))
}

fn special(text: &str) -> Vec<u8> {
    let mut bytes = vec![TokTrie::SPECIAL_TOKEN_MARKER];
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

/// Undoes GPT-2's byte-to-character map: printable Latin-1 bytes stand for themselves,
/// the other 68 bytes were moved to U+0100 and up, in byte order.
fn byte_level_bytes(text: &str) -> Vec<u8> {
    let moved: Vec<u8> = (0..=255u8).filter(|b| !stands_for_itself(*b)).collect();
    text.chars()
        .filter_map(|c| match u32::from(c) {
            n if n < 256 && stands_for_itself(n as u8) => Some(n as u8),
            n if (256..256 + moved.len() as u32).contains(&n) => Some(moved[(n - 256) as usize]),
            _ => None,
        })
        .collect()
}

fn stands_for_itself(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

fn sentencepiece_bytes(text: &str) -> Vec<u8> {
    if let Some(hex) = text.strip_prefix("<0x").and_then(|t| t.strip_suffix('>')) {
        if let Ok(byte) = u8::from_str_radix(hex, 16) {
            return vec![byte];
        }
    }
    text.replace('\u{2581}', " ").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_tokens_decode_to_their_bytes() {
        assert_eq!(byte_level_bytes("Ġhello"), b" hello");
        assert_eq!(byte_level_bytes("Ċ"), b"\n");
        assert_eq!(byte_level_bytes("Ã©"), "é".as_bytes());
    }

    #[test]
    fn sentencepiece_tokens_decode_to_their_bytes() {
        assert_eq!(sentencepiece_bytes("▁the"), b" the");
        assert_eq!(sentencepiece_bytes("<0x0A>"), b"\n");
    }
}
