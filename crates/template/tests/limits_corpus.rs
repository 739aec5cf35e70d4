//! The render bounds leave real templates alone: every row Python rendered in
//! `goldens/jinja.jsonl` renders within a byte budget and a depth bound far below the
//! defaults. Prints the smallest power-of-two budget the whole corpus fits in.

mod common;

use std::collections::BTreeMap;
use toolbridge_template::{Clock, JinjaTemplate, Limits, RenderOptions, TemplateErrorKind};

/// The corpus must fit in this fraction of the default byte budget.
const HEADROOM: u64 = 64;

/// How deep real contexts and templates nest, with room: the default is 256.
const CORPUS_DEPTH: usize = 16;

fn limited(max_built_bytes: u64) -> RenderOptions {
    RenderOptions {
        clock: Clock::fixed_from_str("2024-07-26T10:30:00").unwrap(),
        limits: Limits {
            max_built_bytes,
            max_depth: CORPUS_DEPTH,
            ..Limits::default()
        },
        ..RenderOptions::default()
    }
}

/// Whether `source` renders `context` without reaching a bound.
fn fits(source: &str, context: &serde_json::Value, max_built_bytes: u64) -> bool {
    let rendered = JinjaTemplate::with_options(source, limited(max_built_bytes))
        .and_then(|template| template.render(context));
    !matches!(rendered, Err(err) if err.kind == TemplateErrorKind::Limit)
}

#[test]
fn the_corpus_renders_far_below_the_default_bounds() {
    let rows: Vec<serde_json::Value> = common::read_jsonl("goldens/jinja.jsonl")
        .into_iter()
        .filter(|row| row["ok"].as_bool() == Some(true))
        .collect();
    let mut contexts = BTreeMap::new();
    let mut pending: Vec<(String, String, &str)> = Vec::new();
    for row in &rows {
        let name = row["context"].as_str().unwrap();
        contexts.entry(name.to_string()).or_insert_with(|| {
            let text = common::read_corpus_file(&format!("contexts/{name}.json"));
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        });
        let template = row["template"].as_str().unwrap();
        pending.push((template.into(), common::read_corpus_file(template), name));
    }
    let ceiling = Limits::default().max_built_bytes / HEADROOM;
    let mut budget = 16 << 10;
    // Rows that fit a budget fit every larger one: only the others are tried again.
    while !pending.is_empty() && budget <= ceiling {
        pending.retain(|(_, source, context)| !fits(source, &contexts[*context], budget));
        if !pending.is_empty() {
            budget *= 2;
        }
    }
    println!(
        "jinja corpus: {} rows render within {} KiB built and {CORPUS_DEPTH} deep \
         (default {} MiB and {})",
        rows.len() - pending.len(),
        budget >> 10,
        Limits::default().max_built_bytes >> 20,
        Limits::default().max_depth
    );
    let over: Vec<&str> = pending.iter().map(|(path, _, _)| path.as_str()).collect();
    assert!(
        over.is_empty(),
        "rows that reach 1/{HEADROOM} of the default bounds: {over:?}"
    );
}
