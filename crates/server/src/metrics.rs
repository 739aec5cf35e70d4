//! What the server has done, for `GET /metrics` in Prometheus' text format, and one log
//! line per request.
//!
//! Counters and histograms are atomics updated where the work happens (a request's answer,
//! a generation's pieces), so reading them never waits on a request; the queue and slot
//! gauges are read from [`Admission`] when scraped. Labels are few and fixed (routes the
//! server has, statuses, refusal codes), so a client cannot grow the output by sending odd
//! paths.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::admission::Admission;

/// The error codes that mean a request was refused at one of the server's limits before
/// it generated, counted from the answers.
pub const BUDGET_CODES: [&str; 7] = [
    "request_too_large",
    "server_overloaded",
    "queue_timeout",
    "context_length_exceeded",
    "prepare_timeout",
    "grammar_too_large",
    "grammar_timeout",
];

/// The limits that end a generation under way, counted where they stop it (a stream's
/// status was sent before): its wall time, and a client that stopped reading.
pub const GENERATION_LIMITS: [&str; 2] = ["generation_timeout", "client_stalled"];

/// The routes the server has; any other path is counted as `other`.
const ROUTES: [&str; 7] = [
    "/v1/chat/completions",
    "/v1/models",
    "/health",
    "/metrics",
    "/v1/models/{id}",
    "/v1/responses",
    "/v1/messages",
];

/// Upper bounds of the time-to-first-token buckets, in seconds.
const FIRST_TOKEN_BOUNDS: [f64; 12] = [
    0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// Upper bounds of the time-per-token buckets, in seconds.
const PER_TOKEN_BOUNDS: [f64; 10] = [0.005, 0.01, 0.02, 0.04, 0.06, 0.1, 0.2, 0.5, 1.0, 2.5];

/// Everything `/metrics` shows.
#[derive(Debug)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    refusals: Mutex<BTreeMap<&'static str, u64>>,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    first_token: Histogram,
    per_token: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: Mutex::default(),
            refusals: Mutex::default(),
            prompt_tokens: AtomicU64::new(0),
            completion_tokens: AtomicU64::new(0),
            first_token: Histogram::new(&FIRST_TOKEN_BOUNDS),
            per_token: Histogram::new(&PER_TOKEN_BOUNDS),
        }
    }
}

impl Metrics {
    /// A request to `path` answered with `status`; `code` is its error code, if it failed.
    pub fn answered(&self, path: &str, status: u16, code: Option<&str>) {
        let route = route_of(path);
        *lock(&self.requests).entry((route, status)).or_default() += 1;
        if let Some(code) = code.and_then(|code| BUDGET_CODES.into_iter().find(|c| *c == code)) {
            *lock(&self.refusals).entry(code).or_default() += 1;
        }
    }

    /// A generation stopped at `limit`, one of [`GENERATION_LIMITS`].
    pub fn ended_at_limit(&self, limit: &'static str) {
        *lock(&self.refusals).entry(limit).or_default() += 1;
    }

    /// A generation's token counts.
    pub fn generated(&self, prompt_tokens: u32, completion_tokens: u32) {
        self.prompt_tokens
            .fetch_add(u64::from(prompt_tokens), Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(u64::from(completion_tokens), Ordering::Relaxed);
    }

    /// From a request's arrival to its first piece of output.
    pub fn first_token(&self, elapsed: Duration) {
        self.first_token.observe(elapsed);
    }

    /// Between two pieces of one generation.
    pub fn next_token(&self, elapsed: Duration) {
        self.per_token.observe(elapsed);
    }

    /// The text format Prometheus scrapes, with the queue and slots as `admission` has them.
    pub fn render(&self, admission: &Admission) -> String {
        let mut out = String::new();
        header(
            &mut out,
            "requests_total",
            "counter",
            "Requests answered, by route and HTTP status.",
        );
        for ((route, status), count) in lock(&self.requests).iter() {
            let _ = writeln!(
                out,
                "toolbridge_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}"
            );
        }
        header(
            &mut out,
            "budget_refusals_total",
            "counter",
            "Requests refused at a limit, by error code.",
        );
        for code in BUDGET_CODES.into_iter().chain(GENERATION_LIMITS) {
            let count = lock(&self.refusals).get(code).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "toolbridge_budget_refusals_total{{kind=\"{code}\"}} {count}"
            );
        }
        counter(
            &mut out,
            "prompt_tokens_total",
            "Prompt tokens of finished generations.",
            &self.prompt_tokens,
        );
        counter(
            &mut out,
            "completion_tokens_total",
            "Tokens generated.",
            &self.completion_tokens,
        );
        self.first_token.render(
            &mut out,
            "time_to_first_token_seconds",
            "From a request's arrival to its first output.",
        );
        self.per_token.render(
            &mut out,
            "time_per_token_seconds",
            "Between two pieces of output of one generation.",
        );
        gauge(
            &mut out,
            "queue_depth",
            "Requests waiting for a generation slot.",
            admission.waiting(),
        );
        gauge(
            &mut out,
            "slots_busy",
            "Generation slots in use.",
            admission.busy(),
        );
        gauge(
            &mut out,
            "slots_total",
            "Generation slots (--parallel).",
            admission.slots(),
        );
        out
    }
}

/// The route label of `path`.
fn route_of(path: &str) -> &'static str {
    if path.starts_with("/v1/models/") {
        return "/v1/models/{id}";
    }
    ROUTES
        .into_iter()
        .find(|route| *route == path)
        .unwrap_or("other")
}

/// A lock whose holder cannot leave the data half-written (a counter update), so a
/// poisoned one is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(
        out,
        "# HELP toolbridge_{name} {help}\n# TYPE toolbridge_{name} {kind}"
    );
}

fn counter(out: &mut String, name: &str, help: &str, value: &AtomicU64) {
    header(out, name, "counter", help);
    let _ = writeln!(out, "toolbridge_{name} {}", value.load(Ordering::Relaxed));
}

fn gauge(out: &mut String, name: &str, help: &str, value: usize) {
    header(out, name, "gauge", help);
    let _ = writeln!(out, "toolbridge_{name} {value}");
}

/// A histogram of durations with fixed buckets.
#[derive(Debug)]
struct Histogram {
    bounds: &'static [f64],
    /// Per bucket (not cumulative), the last one past every bound.
    counts: Vec<AtomicU64>,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_micros: AtomicU64::new(0),
        }
    }

    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = self
            .bounds
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(self.bounds.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        header(out, name, "histogram", help);
        let mut total = 0;
        for (at, count) in self.counts.iter().enumerate() {
            total += count.load(Ordering::Relaxed);
            let le = self
                .bounds
                .get(at)
                .map_or_else(|| "+Inf".to_owned(), ToString::to_string);
            let _ = writeln!(out, "toolbridge_{name}_bucket{{le=\"{le}\"}} {total}");
        }
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(
            out,
            "toolbridge_{name}_sum {sum}\ntoolbridge_{name}_count {total}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_paths_share_one_label() {
        assert_eq!(route_of("/v1/chat/completions"), "/v1/chat/completions");
        assert_eq!(route_of("/v1/models/qwen"), "/v1/models/{id}");
        assert_eq!(route_of("/wp-admin/../../etc"), "other");
    }

    #[test]
    fn histograms_are_cumulative() {
        let histogram = Histogram::new(&[0.1, 1.0]);
        for ms in [50, 500, 5000] {
            histogram.observe(Duration::from_millis(ms));
        }
        let mut out = String::new();
        histogram.render(&mut out, "t", "help");
        assert!(out.contains("toolbridge_t_bucket{le=\"0.1\"} 1\n"), "{out}");
        assert!(out.contains("toolbridge_t_bucket{le=\"1\"} 2\n"), "{out}");
        assert!(
            out.contains("toolbridge_t_bucket{le=\"+Inf\"} 3\n"),
            "{out}"
        );
        assert!(
            out.contains("toolbridge_t_sum 5.55\ntoolbridge_t_count 3\n"),
            "{out}"
        );
    }
}
