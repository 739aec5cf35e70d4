//! `toolbridge bench maskbench` runs a JSON-Schema converter over a MaskBench file (JSONSchemaBench schemas
//! with valid and invalid instances) the way the benchmark scores converters: a schema
//! passes when it compiles and the grammar accepts every valid instance and rejects every
//! invalid one. Our converter runs in strict mode, so a schema with a keyword the grammar
//! cannot enforce does not compile rather than wrongly accepting instances later.

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use toolbridge_grammar::check::{compact_json, Validator};
use toolbridge_grammar::schema::{self, Options};

#[derive(clap::Args)]
pub struct MaskbenchArgs {
    file: PathBuf,
    /// Whose converter to score: ours (strict, through Lark), or llguidance's own.
    #[arg(long, value_enum, default_value_t = Converter::Toolbridge)]
    converter: Converter,
    /// Score only the first N schemas.
    #[arg(long)]
    limit: Option<usize>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Write one JSON line per schema that did not pass (file, reason) to this file.
    #[arg(long)]
    failures: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Converter {
    Toolbridge,
    Llguidance,
}

#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    file: String,
    schema: Value,
    tests: Vec<Instance>,
}

#[derive(Deserialize)]
struct Instance {
    valid: bool,
    data: Box<RawValue>,
}

/// What one schema came to.
struct Outcome {
    file: String,
    /// Schema to grammar tree (ours only).
    convert_time: Option<Duration>,
    /// Schema to a ready llguidance parser, conversion included.
    compile_time: Duration,
    verdict: Verdict,
}

enum Verdict {
    NotCompiled(String),
    Checked {
        wrongly_accepted: usize,
        wrongly_rejected: usize,
    },
}

pub fn run(args: &MaskbenchArgs) -> Result<()> {
    let mut cases = read_cases(&args.file)?;
    if let Some(limit) = args.limit {
        cases.truncate(limit);
    }
    let outcomes = score_in_parallel(&cases, args.converter, args.threads.max(1));
    print_summary(&outcomes);
    if let Some(path) = &args.failures {
        write_failures(path, &outcomes)?;
    }
    Ok(())
}

fn read_cases(path: &Path) -> Result<Vec<Case>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::GzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let mut cases = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line =
            line.with_context(|| format!("{}: cannot read line {}", path.display(), n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = serde_json::from_str(&line).with_context(|| {
            format!("{}: line {} is not a MaskBench case", path.display(), n + 1)
        })?;
        cases.push(case);
    }
    Ok(cases)
}

fn score_in_parallel(cases: &[Case], converter: Converter, threads: usize) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::with_capacity(cases.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let outcome = score(case, converter);
                if let Ok(mut all) = outcomes.lock() {
                    all.push((i, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|(i, _)| *i);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

fn score(case: &Case, converter: Converter) -> Outcome {
    let started = Instant::now();
    let (validator, convert_time) = compile(&case.schema, converter);
    let compile_time = started.elapsed();
    let verdict = match validator {
        Err(reason) => Verdict::NotCompiled(reason),
        Ok(validator) => {
            let (mut wrongly_accepted, mut wrongly_rejected) = (0, 0);
            for test in &case.tests {
                let accepted = validator.accepts(&compact_json(test.data.get()));
                match (test.valid, accepted) {
                    (false, true) => wrongly_accepted += 1,
                    (true, false) => wrongly_rejected += 1,
                    _ => {}
                }
            }
            Verdict::Checked {
                wrongly_accepted,
                wrongly_rejected,
            }
        }
    };
    Outcome {
        file: case.file.clone(),
        convert_time,
        compile_time,
        verdict,
    }
}

fn compile(schema: &Value, converter: Converter) -> (Result<Validator, String>, Option<Duration>) {
    match converter {
        Converter::Llguidance => (
            Validator::from_llguidance_json_schema(schema).map_err(|e| e.to_string()),
            None,
        ),
        Converter::Toolbridge => {
            let options = Options {
                strict: true,
                extra_properties_by_default: true,
                ..Options::default()
            };
            let started = Instant::now();
            let converted = schema::compile(schema, &options);
            let convert_time = started.elapsed();
            let validator = converted.and_then(|c| Validator::from_grammar(&c.grammar));
            (validator.map_err(|e| e.to_string()), Some(convert_time))
        }
    }
}

fn print_summary(outcomes: &[Outcome]) {
    let n = outcomes.len();
    let (mut compiled, mut passed, mut accepted, mut rejected) = (0, 0, 0, 0);
    for outcome in outcomes {
        if let Verdict::Checked {
            wrongly_accepted,
            wrongly_rejected,
        } = outcome.verdict
        {
            compiled += 1;
            passed += usize::from(wrongly_accepted == 0 && wrongly_rejected == 0);
            accepted += wrongly_accepted;
            rejected += wrongly_rejected;
        }
    }
    println!(
        "compiled {compiled}/{n}, passed {passed}/{n}, wrongly accepted {accepted}, wrongly rejected {rejected}"
    );
    let compile: Vec<Duration> = outcomes.iter().map(|o| o.compile_time).collect();
    print_times("compile time per schema (to a ready parser)", compile);
    let convert: Vec<Duration> = outcomes.iter().filter_map(|o| o.convert_time).collect();
    if !convert.is_empty() {
        print_times("of which schema to grammar tree", convert);
    }
}

fn print_times(label: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{label}: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        millis(percentile(&times, 50)),
        millis(percentile(&times, 95)),
        millis(times.last().copied().unwrap_or_default()),
    );
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[(sorted.len() - 1) * p / 100]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn write_failures(path: &Path, outcomes: &[Outcome]) -> Result<()> {
    let mut out = String::new();
    for outcome in outcomes {
        let reason = match &outcome.verdict {
            Verdict::NotCompiled(reason) => {
                format!(
                    "not compiled: {}",
                    reason.chars().take(400).collect::<String>()
                )
            }
            Verdict::Checked {
                wrongly_accepted: 0,
                wrongly_rejected: 0,
            } => continue,
            Verdict::Checked {
                wrongly_accepted,
                wrongly_rejected,
            } => {
                format!("wrongly accepted {wrongly_accepted}, wrongly rejected {wrongly_rejected}")
            }
        };
        let line = serde_json::json!({"file": outcome.file, "reason": reason});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}
