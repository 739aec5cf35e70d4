//! What choosing a replica costs per request: hashing the prompt into blocks and looking
//! its blocks up in each replica's index of earlier prompts (full, as after a long day).
//! `cargo bench -p toolbridge-engine --bench affinity`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use toolbridge_engine::remote::affinity::{block_hashes, PrefixIndex};

/// A conversation's prompt of about `bytes` bytes, distinct per `seed`.
fn prompt(seed: usize, bytes: usize) -> String {
    let mut text = format!("<|im_start|>system\nconversation {seed}\n");
    while text.len() < bytes {
        text.push_str("<|im_start|>user\nWhat is the weather like in Paris today?<|im_end|>\n");
    }
    text
}

fn choose(c: &mut Criterion) {
    let replicas: Vec<PrefixIndex> = (0..4)
        .map(|replica| {
            let mut index = PrefixIndex::new(1 << 14);
            for n in 0..(1 << 14) {
                index.record(&block_hashes(&prompt(replica * 100_000 + n, 1024)));
            }
            index
        })
        .collect();
    let mut group = c.benchmark_group("choose a replica of 4");
    for bytes in [4 << 10, 64 << 10, 1 << 20] {
        let asked = prompt(7, bytes);
        group.bench_with_input(BenchmarkId::from_parameter(bytes), &asked, |b, asked| {
            b.iter(|| {
                let blocks = block_hashes(asked);
                replicas.iter().map(|index| index.matched(&blocks)).max()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, choose);
criterion_main!(benches);
