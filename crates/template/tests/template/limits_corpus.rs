//! The render bounds leave real templates alone: every row Python rendered in
//! `goldens/jinja.jsonl`, and every row of `goldens/gotmpl.jsonl`, renders within a
//! byte budget and a depth bound far below the defaults. Prints the smallest
//! power-of-two budget each corpus fits in.

use crate::common::{self, goldens};
use toolbridge_template::gotmpl::{GoRenderOptions, GoTemplate};
use toolbridge_template::{JinjaTemplate, Limits, RenderOptions, TemplateErrorKind};

/// The corpus must fit in this fraction of the default byte budget.
const HEADROOM: u64 = 64;

/// How deep real contexts and templates nest, with room: the default is 256.
const CORPUS_DEPTH: usize = 16;

fn limits(max_built_bytes: u64) -> Limits {
    Limits {
        max_built_bytes,
        max_depth: CORPUS_DEPTH,
        ..Limits::default()
    }
}

/// Whether `source` renders `context` without reaching a bound.
fn fits(source: &str, context: &serde_json::Value, max_built_bytes: u64) -> bool {
    let options = RenderOptions {
        clock: goldens::clock(),
        limits: limits(max_built_bytes),
        ..RenderOptions::default()
    };
    let rendered =
        JinjaTemplate::with_options(source, options).and_then(|template| template.render(context));
    !matches!(rendered, Err(err) if *err.kind() == TemplateErrorKind::Limit)
}

/// The smallest power-of-two budget from 16 KiB up to `ceiling` that every row fits
/// in, and the rows that fit none. Rows that fit a budget fit every larger one, so
/// only the others are tried again.
fn smallest_budget<T>(
    mut rows: Vec<T>,
    ceiling: u64,
    fits: impl Fn(&T, u64) -> bool,
) -> (u64, Vec<T>) {
    let mut budget = 16 << 10;
    while budget <= ceiling {
        rows.retain(|row| !fits(row, budget));
        if rows.is_empty() {
            break;
        }
        budget *= 2;
    }
    (budget, rows)
}

/// Each row's template path, template source and context name, all yet to fit a budget.
fn pending(rows: &[serde_json::Value]) -> Vec<(&str, String, &str)> {
    rows.iter()
        .map(|row| {
            let template = row["template"].as_str().unwrap();
            let context = row["context"].as_str().unwrap();
            (template, common::read_corpus_file(template), context)
        })
        .collect()
}

#[test]
fn the_corpus_renders_far_below_the_default_bounds() {
    let rows: Vec<serde_json::Value> = common::read_jsonl("goldens/jinja.jsonl")
        .into_iter()
        .filter(|row| row["ok"].as_bool() == Some(true))
        .collect();
    let contexts = goldens::contexts(&rows, common::jinja_context);
    let pending = pending(&rows);
    let ceiling = Limits::default().max_built_bytes / HEADROOM;
    let (budget, pending) = smallest_budget(pending, ceiling, |(_, source, context), budget| {
        fits(source, &contexts[*context], budget)
    });
    println!(
        "jinja corpus: {} rows render within {} KiB built and {CORPUS_DEPTH} deep \
         (default {} MiB and {})",
        rows.len() - pending.len(),
        budget >> 10,
        Limits::default().max_built_bytes >> 20,
        Limits::default().max_depth
    );
    let over: Vec<&str> = pending.iter().map(|(path, _, _)| *path).collect();
    assert!(
        over.is_empty(),
        "rows that reach 1/{HEADROOM} of the default bounds: {over:?}"
    );
}

#[test]
fn the_go_corpus_renders_far_below_the_default_bounds() {
    let rows = common::read_jsonl("goldens/gotmpl.jsonl");
    let requests = goldens::contexts(&rows, common::ollama_request);
    let pending = pending(&rows);
    let ceiling = Limits::default().max_built_bytes / HEADROOM;
    let (budget, over) = smallest_budget(pending, ceiling, |(_, source, name), budget| {
        let options = GoRenderOptions {
            clock: goldens::clock(),
            limits: limits(budget),
        };
        let rendered = GoTemplate::with_options(source, options)
            .and_then(|template| template.render(&requests[*name]));
        !matches!(rendered, Err(err) if *err.kind() == TemplateErrorKind::Limit)
    });
    println!(
        "gotmpl corpus: {} rows render within {} KiB built (default {} MiB)",
        rows.len() - over.len(),
        budget >> 10,
        Limits::default().max_built_bytes >> 20
    );
    let over: Vec<&str> = over.iter().map(|(path, _, _)| *path).collect();
    assert!(
        over.is_empty(),
        "rows that reach 1/{HEADROOM} of the default budget: {over:?}"
    );
}
