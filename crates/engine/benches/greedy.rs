//! Greedy decoding's pick over a vocabulary the size of the default model's: the highest
//! allowed logit found directly, against llama.cpp's greedy sampler over the candidate
//! array the chain needs. Runs per generated token.

use criterion::{criterion_group, criterion_main, Criterion};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use toolbridge_engine::highest_logit;

/// Qwen 2.5's vocabulary.
const VOCABULARY: usize = 151_936;

fn logits() -> Vec<f32> {
    // Deterministic, spread like logits, the maximum two thirds in.
    let mut logits: Vec<f32> = (0..VOCABULARY)
        .map(|i| ((i * 7919) % 10_007) as f32 / 1000.0 - 6.0)
        .collect();
    logits[VOCABULARY * 2 / 3] = 12.5;
    logits
}

fn greedy(c: &mut Criterion) {
    let logits = logits();
    c.bench_function("highest_logit", |b| {
        b.iter(|| highest_logit(std::hint::black_box(&logits), |_| true))
    });
    let mut sampler = LlamaSampler::greedy();
    let mut candidates = Vec::with_capacity(VOCABULARY);
    c.bench_function("candidate array + llama.cpp greedy", |b| {
        b.iter(|| {
            candidates.clear();
            candidates.extend(
                logits
                    .iter()
                    .zip(0..)
                    .map(|(&logit, id)| LlamaTokenData::new(LlamaToken(id), logit, 0.0)),
            );
            let mut array = LlamaTokenDataArray::new(std::mem::take(&mut candidates), false);
            array.apply_sampler(&mut sampler);
            let chosen = array.selected_token();
            candidates = array.data;
            chosen
        })
    });
}

criterion_group!(benches, greedy);
criterion_main!(benches);
