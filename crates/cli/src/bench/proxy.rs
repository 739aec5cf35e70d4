//! `toolbridge bench proxy`: what standing in front of a llama.cpp server costs.
//!
//! The same requests go to the upstream directly and through a toolbridge serving it
//! (`serve --engine UPSTREAM`), taking turns in one run. "Directly" is the exact request
//! toolbridge itself sends upstream (the prompt it renders, the grammar it builds, the
//! same sampling), made here by the same library code, so the two differ only by the
//! proxy: its HTTP hop, request preparation, the stream parser and the SSE writing.
//! Reported per kind of request (free text, a lazy tool grammar, a forced call): tokens
//! per second over whole requests through toolbridge against direct, and the time added
//! (median) to the whole request and to its first output (the first token: toolbridge's
//! stream opens with it, even for a call its parser holds until whole). The first round of each kind is a warm-up (prompt cache, the grammar's
//! first compile) and is not counted.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use toolbridge_chat::ChatRequest;
use toolbridge_engine::{RemoteEngine, RemoteOptions};
use toolbridge_server::ServedModel;

use super::stream::{chat_chunk, median, timed, Seen, Timing};

#[derive(clap::Args)]
pub struct ProxyArgs {
    /// The llama.cpp server, asked directly.
    #[arg(long)]
    upstream: String,
    /// The toolbridge serving it (`toolbridge serve --engine UPSTREAM`).
    #[arg(long)]
    through: String,
    /// Rounds per kind of request, after one warm-up round.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Tokens generated per request.
    #[arg(long, default_value_t = 64)]
    max_tokens: u32,
}

pub fn run(args: &ProxyArgs) -> Result<()> {
    let engine = RemoteEngine::connect(RemoteOptions {
        urls: vec![args.upstream.clone()],
        ..RemoteOptions::default()
    })
    .with_context(|| format!("cannot use {}", args.upstream))?;
    let engine = Arc::new(engine);
    let model = ServedModel::new(Arc::clone(&engine) as _, None, None)?;
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(600))
        .build();
    let through = format!("{}/v1/chat/completions", args.through.trim_end_matches('/'));
    println!(
        "bench proxy: {} direct vs through {}, {} rounds of {} tokens",
        args.upstream, args.through, args.rounds, args.max_tokens
    );
    for (kind, request) in requests(args.max_tokens) {
        let chat: ChatRequest = serde_json::from_value(request.clone())?;
        let (generation, _) = model
            .generation(&chat)
            .map_err(|failure| anyhow::anyhow!("{}", failure.error.message))?;
        let (path, body) = engine.wire_request(&generation)?;
        let direct_url = format!("{}{path}", args.upstream.trim_end_matches('/'));
        let mut pairs = Vec::with_capacity(args.rounds);
        for round in 0..=args.rounds {
            let direct = timed(&agent, &direct_url, &body, direct_event)?;
            let proxied = timed(&agent, &through, &request, chat_chunk)?;
            if round > 0 {
                pairs.push((direct, proxied));
            }
        }
        report(kind, &pairs);
    }
    Ok(())
}

/// The kinds of request, as chat requests to toolbridge.
fn requests(max_tokens: u32) -> Vec<(&'static str, Value)> {
    let tools = json!([{"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        }, "required": ["city"]}
    }}]);
    let ask = |content: &str| json!([{"role": "user", "content": content}]);
    let base = |messages: Value| {
        json!({
            "model": "default", "messages": messages, "temperature": 0,
            "max_tokens": max_tokens, "stream": true,
            "stream_options": {"include_usage": true},
        })
    };
    let free = base(ask("Write a long poem about the sea."));
    let mut lazy = base(ask("What is the weather like in Paris, in celsius?"));
    lazy["tools"] = tools.clone();
    let mut forced = base(ask("What is the weather like in Paris, in celsius?"));
    forced["tools"] = tools;
    forced["tool_choice"] = json!("required");
    vec![
        ("free text", free),
        ("tools, lazy grammar (auto)", lazy),
        ("tools, forced call (required)", forced),
    ]
}

/// A llama-server `/completion` event.
fn direct_event(event: &Value) -> Seen {
    let output = event["content"]
        .as_str()
        .is_some_and(|text| !text.is_empty());
    Seen {
        output,
        content: output,
        completion_tokens: event["stop"]
            .as_bool()
            .filter(|stop| *stop)
            .and(event["tokens_predicted"].as_u64()),
        prompt_tokens: None,
        ..Seen::default()
    }
}

fn report(kind: &str, pairs: &[(Timing, Timing)]) {
    let rate = |timings: &mut dyn Iterator<Item = &Timing>| {
        let (tokens, seconds) = timings.fold((0u64, 0f64), |(t, s), timing| {
            (t + timing.completion_tokens, s + timing.end.as_secs_f64())
        });
        tokens as f64 / seconds.max(1e-9)
    };
    let direct = rate(&mut pairs.iter().map(|(d, _)| d));
    let proxied = rate(&mut pairs.iter().map(|(_, p)| p));
    let added = |at: fn(&Timing) -> Duration| {
        median_ms(
            pairs
                .iter()
                .map(|(d, p)| at(p).as_secs_f64() - at(d).as_secs_f64()),
        )
    };
    let direct_end = median_ms(pairs.iter().map(|(d, _)| d.end.as_secs_f64()));
    println!(
        "{kind}: {direct:.1} tok/s direct, {proxied:.1} through toolbridge (ratio {:.3}); \
         request {direct_end:.1} ms direct, +{:.1} ms through toolbridge; first output +{:.1} ms \
         (medians of {})",
        proxied / direct,
        added(|t| t.end),
        added(|t| t.first_output),
        pairs.len()
    );
}

/// The median of `seconds`, in milliseconds.
fn median_ms(seconds: impl Iterator<Item = f64>) -> f64 {
    median(seconds.map(|s| s * 1e3))
}
