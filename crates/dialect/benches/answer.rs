//! What folding a parser's events into an answer costs, per event: the chat completion's
//! deltas and message ([`ChatAnswer`], what every chat stream does per piece) beside the
//! bare fold into items ([`Items`], what Responses and Messages build on), over the events
//! of an answer read in 1-byte pieces: some text, then two calls whose arguments arrive a
//! byte at a time. `cargo bench -p toolbridge-dialect --bench answer`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use toolbridge_dialect::{ChatAnswer, Event, Items, SequentialIds};

/// Text, then two calls of 1 KB of arguments each, one event per byte.
fn events() -> Vec<Event> {
    let mut events: Vec<Event> = "Let me look that up for you. "
        .chars()
        .map(|c| Event::Content(c.to_string()))
        .collect();
    let arguments = format!(
        r#"{{"path": "notes.md", "content": "{}"}}"#,
        "x".repeat(1000)
    );
    for index in 0..2 {
        events.push(Event::ToolCallStart {
            index,
            id: None,
            name: "write_file".into(),
        });
        events.extend(arguments.chars().map(|c| Event::ToolCallArguments {
            index,
            fragment: c.to_string(),
        }));
        events.push(Event::ToolCallEnd { index });
    }
    events
}

fn fold(c: &mut Criterion) {
    let events = events();
    let mut group = c.benchmark_group("fold");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("chat deltas and message", |b| {
        b.iter_batched(
            || events.clone(),
            |events| {
                let mut answer = ChatAnswer::new(SequentialIds::default());
                let deltas: usize = events
                    .into_iter()
                    .map(|event| answer.push(event).map_or(0, |deltas| deltas.len()))
                    .sum();
                answer.finish();
                (deltas, answer.message())
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("items", |b| {
        b.iter_batched(
            || events.clone(),
            |events| {
                let mut items = Items::new(SequentialIds::default());
                for event in events {
                    let _ = items.push(event);
                }
                items.finish();
                items.into_items()
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, fold);
criterion_main!(benches);
