//! Compile and render time over the corpus's Jinja goldens, the rows Python rendered.
//!
//! - `cargo bench -p toolbridge-template --bench render`: criterion's two benchmarks,
//!   `jinja/compile` (every distinct template compiled once per iteration) and
//!   `jinja/render` (every `ok` row rendered with templates compiled beforehand), then the
//!   plain summary below.
//! - `cargo bench -p toolbridge-template --bench render -- --summary`: only the plain
//!   summary, timed with `Instant` over `TOOLBRIDGE_BENCH_REPS` repetitions (default 30):
//!   µs per compile (mean over templates) and µs per render (mean over rows), the median
//!   and the fastest repetition, and one JSON line for `scripts/bench-jinja.sh`.
//! - `-- --profile`: the summary, then where the time goes (context conversion, the
//!   source rewrite's tokenizer pass, the slowest templates); with
//!   `TOOLBRIDGE_BENCH_PER_ROW=FILE`, every row's render time as JSON lines
//!   (`{"row": "TEMPLATE [CONTEXT]", "us": …}`, as `bench_jinja_python.py --per-row` writes).
//! - `-- --loop compile` / `-- --loop render`: only that pass, `TOOLBRIDGE_BENCH_REPS`
//!   times, for an outside profiler (`perf record target/release/deps/render-… --loop render`).
//! - `-- --bounds`: what the byte budget and depth bound cost, side by side in one run:
//!   Qwen 2.5's template with 8 tools, then every `ok` row, rendered with the default
//!   limits and with those two bounds turned off, alternating, `TOOLBRIDGE_BENCH_REPS`
//!   times; medians in µs per render.
//!
//! The corpus is `../shared/corpus` beside the repository root; the benchmark panics with
//! the path it looked at when it is missing.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use toolbridge_template::{Clock, JinjaTemplate, Limits, RenderOptions};

/// The rows of `goldens/jinja.jsonl` that Python rendered, with what they need.
struct Corpus {
    /// `(path, source)` of each distinct template, in order of first appearance.
    templates: Vec<(String, String)>,
    /// `(name, context)` of each context the rows use.
    contexts: Vec<(String, serde_json::Value)>,
    /// One per `ok` row.
    rows: Vec<Row>,
}

struct Row {
    template: usize,
    context: usize,
    expected: String,
}

fn corpus_dir() -> PathBuf {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    match corpus.canonicalize() {
        Ok(path) => path,
        Err(err) => panic!(
            "benchmark corpus not found: looked for {} ({err}); expected ../shared/corpus \
             beside the repository root",
            corpus.display()
        ),
    }
}

fn read(dir: &Path, relative: &str) -> String {
    let path = dir.join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn load_corpus() -> Corpus {
    let dir = corpus_dir();
    let goldens = "goldens/jinja.jsonl";
    let mut template_index = BTreeMap::new();
    let mut context_index = BTreeMap::new();
    let mut corpus = Corpus {
        templates: Vec::new(),
        contexts: Vec::new(),
        rows: Vec::new(),
    };
    for (number, line) in read(&dir, goldens).lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("{goldens} line {}: {err}", number + 1));
        if row["ok"].as_bool() != Some(true) {
            continue;
        }
        let field = |name: &str| -> String {
            row[name]
                .as_str()
                .unwrap_or_else(|| panic!("{goldens} line {}: no string {name:?}", number + 1))
                .to_string()
        };
        let (template_path, context_name) = (field("template"), field("context"));
        let template = *template_index
            .entry(template_path.clone())
            .or_insert_with(|| {
                let source = read(&dir, &template_path);
                corpus.templates.push((template_path, source));
                corpus.templates.len() - 1
            });
        let context = *context_index
            .entry(context_name.clone())
            .or_insert_with(|| {
                let text = read(&dir, &format!("contexts/{context_name}.json"));
                let value = serde_json::from_str(&text)
                    .unwrap_or_else(|err| panic!("contexts/{context_name}.json: {err}"));
                corpus.contexts.push((context_name, value));
                corpus.contexts.len() - 1
            });
        corpus.rows.push(Row {
            template,
            context,
            expected: field("output"),
        });
    }
    assert!(
        !corpus.rows.is_empty(),
        "no ok rows in {}",
        dir.join(goldens).display()
    );
    corpus
}

fn options() -> RenderOptions {
    RenderOptions {
        clock: Clock::fixed_from_str("2024-07-26T10:30:00").expect("a valid fixed time"),
        ..RenderOptions::default()
    }
}

/// Compiles every distinct template; `None` where one does not compile.
fn compile_all(corpus: &Corpus, options: &RenderOptions) -> Vec<Option<JinjaTemplate>> {
    corpus
        .templates
        .iter()
        .map(|(_, source)| JinjaTemplate::with_options(source, options.clone()).ok())
        .collect()
}

/// Renders every row; returns how many rendered (errors are timed too).
fn render_all(corpus: &Corpus, compiled: &[Option<JinjaTemplate>]) -> usize {
    let mut rendered = 0;
    for row in &corpus.rows {
        if let Some(template) = &compiled[row.template] {
            let context = &corpus.contexts[row.context].1;
            if black_box(template.render(black_box(context))).is_ok() {
                rendered += 1;
            }
        }
    }
    rendered
}

/// How the rows fare against Python's output, so a fast wrong renderer is visible.
struct Conformance {
    identical: usize,
    differ: usize,
    errors: usize,
    uncompiled_templates: usize,
}

fn conformance(corpus: &Corpus, compiled: &[Option<JinjaTemplate>]) -> Conformance {
    let mut result = Conformance {
        identical: 0,
        differ: 0,
        errors: 0,
        uncompiled_templates: compiled.iter().filter(|t| t.is_none()).count(),
    };
    for row in &corpus.rows {
        match &compiled[row.template] {
            None => result.errors += 1,
            Some(template) => match template.render(&corpus.contexts[row.context].1) {
                Ok(output) if output == row.expected => result.identical += 1,
                Ok(_) => result.differ += 1,
                Err(_) => result.errors += 1,
            },
        }
    }
    result
}

/// Median and minimum of per-repetition totals, in µs per item.
struct Timing {
    median_us: f64,
    min_us: f64,
}

fn timing(mut totals: Vec<Duration>, items: usize) -> Timing {
    totals.sort();
    let per_item = |d: Duration| d.as_secs_f64() * 1e6 / items as f64;
    let n = totals.len();
    let median = if n % 2 == 1 {
        per_item(totals[n / 2])
    } else {
        (per_item(totals[n / 2 - 1]) + per_item(totals[n / 2])) / 2.0
    };
    Timing {
        median_us: median,
        min_us: per_item(totals[0]),
    }
}

fn repetitions() -> usize {
    match std::env::var("TOOLBRIDGE_BENCH_REPS") {
        Ok(text) => text
            .parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .unwrap_or_else(|| panic!("TOOLBRIDGE_BENCH_REPS={text:?} is not a positive count")),
        Err(_) => 30,
    }
}

/// The plain summary: `Instant` around whole passes over the corpus.
fn summary(corpus: &Corpus) {
    let options = options();
    let reps = repetitions();
    // One untimed pass of each warms caches and the allocator.
    let compiled = compile_all(corpus, &options);
    black_box(render_all(corpus, &compiled));
    let check = conformance(corpus, &compiled);

    let mut compile_totals = Vec::with_capacity(reps);
    let mut render_totals = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let fresh = black_box(compile_all(corpus, &options));
        compile_totals.push(start.elapsed());
        drop(fresh);
        let start = Instant::now();
        black_box(render_all(corpus, &compiled));
        render_totals.push(start.elapsed());
    }
    let compile = timing(compile_totals, corpus.templates.len());
    let render = timing(render_totals, corpus.rows.len());

    println!(
        "toolbridge jinja: {} ok rows, {} distinct templates, {} contexts, {reps} repetitions",
        corpus.rows.len(),
        corpus.templates.len(),
        corpus.contexts.len()
    );
    println!(
        "  conformance: {} identical to Python, {} differ, {} raised; {} templates did not compile",
        check.identical, check.differ, check.errors, check.uncompiled_templates
    );
    println!(
        "  compile: {:.2} µs per template (median of {reps}; fastest {:.2})",
        compile.median_us, compile.min_us
    );
    println!(
        "  render:  {:.2} µs per row (median of {reps}; fastest {:.2})",
        render.median_us, render.min_us
    );
    println!(
        "{{\"impl\":\"toolbridge\",\"rows\":{},\"templates\":{},\"reps\":{reps},\
         \"compile_us\":{:.3},\"compile_us_min\":{:.3},\"render_us\":{:.3},\"render_us_min\":{:.3},\
         \"identical\":{},\"differ\":{},\"raised\":{}}}",
        corpus.rows.len(),
        corpus.templates.len(),
        compile.median_us,
        compile.min_us,
        render.median_us,
        render.min_us,
        check.identical,
        check.differ,
        check.errors
    );
}

/// Mean µs of `f` over `reps` calls.
fn mean_us(reps: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / reps as f64
}

/// Fastest µs of `f` over `reps` calls.
fn best_us(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .fold(f64::INFINITY, f64::min)
}

/// Where the time goes: the parts of compile and render that the public API lets us
/// time apart, and the templates that cost most.
fn profile(corpus: &Corpus) {
    use minijinja::machinery::tokenize;
    use minijinja::syntax::SyntaxConfig;
    use minijinja::value::{Serde, Value};

    let options = options();
    let reps = 10;
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .expect("default delimiters");
    let templates = corpus.templates.len() as f64;
    let rows = corpus.rows.len() as f64;

    // Compile: ours in full, a bare minijinja environment on the unrewritten source, and
    // one tokenizer pass (what the source rewrite adds before minijinja compiles).
    let ours = mean_us(reps, || {
        black_box(compile_all(corpus, &options));
    }) / templates;
    let bare_env = mean_us(reps, || {
        for (_, source) in &corpus.templates {
            let mut env = minijinja::Environment::new();
            env.set_syntax(syntax.clone());
            black_box(env.add_template_owned("t", source.clone()).is_ok());
        }
    }) / templates;
    let empty_env = mean_us(reps, || {
        for _ in &corpus.templates {
            let mut env = minijinja::Environment::new();
            env.set_syntax(syntax.clone());
            black_box(env);
        }
    }) / templates;
    let ours_empty = mean_us(reps, || {
        for _ in &corpus.templates {
            black_box(JinjaTemplate::with_options("", options.clone()).is_ok());
        }
    }) / templates;
    let tokenizer = mean_us(reps, || {
        for (_, source) in &corpus.templates {
            black_box(tokenize(source, false, syntax.clone()).count());
        }
    }) / templates;
    println!("profile, µs per template:");
    println!("  JinjaTemplate::with_options        {ours:9.2}");
    println!("  ... of an empty template           {ours_empty:9.2}  (environment setup)");
    println!("  minijinja add_template, raw source {bare_env:9.2}  (bare Environment)");
    println!("  ... bare Environment::new alone    {empty_env:9.2}");
    println!("  one minijinja tokenize pass        {tokenizer:9.2}  (the rewrite's lexing)");

    // Render: JSON → minijinja value conversion of the context, then rendering a value.
    let compiled = compile_all(corpus, &options);
    let values: Vec<Value> = corpus
        .contexts
        .iter()
        .map(|(_, json)| Value::from(Serde(json)))
        .collect();
    let full = mean_us(reps, || {
        black_box(render_all(corpus, &compiled));
    }) / rows;
    let convert = mean_us(reps, || {
        for row in &corpus.rows {
            black_box(Value::from(Serde(&corpus.contexts[row.context].1)));
        }
    }) / rows;
    let from_value = mean_us(reps, || {
        for row in &corpus.rows {
            if let Some(template) = &compiled[row.template] {
                black_box(template.render_value(values[row.context].clone()).is_ok());
            }
        }
    }) / rows;
    println!("profile, µs per row:");
    println!("  render(&serde_json::Value)          {full:9.2}");
    println!("  ... context JSON → Value            {convert:9.2}");
    println!("  render_value(pre-converted Value)   {from_value:9.2}");

    // The fixed cost of a row, whatever the template reads: converting its whole context
    // and rendering an empty template, per context.
    let empty = JinjaTemplate::with_options("", options.clone()).expect("the empty template");
    println!("profile, fixed µs per row by context (fastest of 100):");
    for (name, json) in &corpus.contexts {
        let convert = best_us(100, || {
            black_box(Value::from(Serde(json)));
        });
        let render_empty = best_us(100, || {
            black_box(empty.render(json).is_ok());
        });
        println!("  {name:<10} JSON → Value {convert:7.2}   render(\"\") {render_empty:7.2}");
    }

    // The costliest templates, compile and render.
    let mut compile_cost: Vec<(f64, &str)> = corpus
        .templates
        .iter()
        .map(|(path, source)| {
            let us = best_us(reps, || {
                black_box(JinjaTemplate::with_options(source, options.clone()).is_ok());
            });
            (us, path.as_str())
        })
        .collect();
    compile_cost.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("slowest compiles (µs, fastest of {reps}):");
    for (us, path) in compile_cost.iter().take(8) {
        println!("  {us:9.1}  {path}");
    }
    let mut render_cost: Vec<(f64, String)> = corpus
        .rows
        .iter()
        .filter_map(|row| {
            let template = compiled[row.template].as_ref()?;
            let context = &corpus.contexts[row.context];
            let us = best_us(reps, || {
                black_box(template.render(&context.1).is_ok());
            });
            Some((
                us,
                format!("{} [{}]", corpus.templates[row.template].0, context.0),
            ))
        })
        .collect();
    if let Ok(path) = std::env::var("TOOLBRIDGE_BENCH_PER_ROW") {
        let lines: String = render_cost
            .iter()
            .map(|(us, name)| format!("{}\n", serde_json::json!({"row": name, "us": us})))
            .collect();
        std::fs::write(&path, lines).unwrap_or_else(|err| panic!("cannot write {path}: {err}"));
        println!("per-row render times written to {path}");
    }
    render_cost.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("slowest renders (µs, fastest of {reps}):");
    for (us, name) in render_cost.iter().take(8) {
        println!("  {us:9.1}  {name}");
    }
}

fn criterion_benches(corpus: &Corpus) {
    let options = options();
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = criterion.benchmark_group("jinja");
    group.throughput(Throughput::Elements(corpus.templates.len() as u64));
    group.bench_function("compile", |b| {
        b.iter(|| compile_all(corpus, &options));
    });
    let compiled = compile_all(corpus, &options);
    group.throughput(Throughput::Elements(corpus.rows.len() as u64));
    group.bench_function("render", |b| {
        b.iter(|| render_all(corpus, &compiled));
    });
    group.finish();
    criterion.final_summary();
}

/// The default options with the byte budget and the depth bound turned off.
fn unbounded_options() -> RenderOptions {
    RenderOptions {
        limits: Limits {
            max_built_bytes: u64::MAX,
            max_depth: usize::MAX,
            ..Limits::default()
        },
        ..options()
    }
}

/// Median µs per call of `f` with and without the bounds, timed alternately.
fn side_by_side(reps: usize, calls: usize, mut f: impl FnMut(bool)) -> (f64, f64) {
    let mut times = [Vec::with_capacity(reps), Vec::with_capacity(reps)];
    for _ in 0..reps {
        for (bounded, samples) in [true, false].into_iter().zip(times.iter_mut()) {
            let start = Instant::now();
            for _ in 0..calls {
                f(bounded);
            }
            samples.push(start.elapsed());
        }
    }
    let [with, without] = times;
    (
        timing(with, calls).median_us,
        timing(without, calls).median_us,
    )
}

/// The cost of the render bounds, on Qwen 2.5 with 8 tools and on the whole corpus.
fn bounds(corpus: &Corpus) {
    let reps = repetitions();
    let dir = corpus_dir();
    let source = read(&dir, "jinja/hfjs-e2e/Qwen_Qwen2.5-7B-Instruct.jinja");
    let mut context: serde_json::Value =
        serde_json::from_str(&read(&dir, "contexts/tool_use.json")).expect("a JSON context");
    let tools = context["tools"].as_array().cloned().unwrap_or_default();
    context["tools"] = tools.iter().chain(&tools).cloned().collect();
    let compile = |options| JinjaTemplate::with_options(&source, options).expect("Qwen 2.5");
    let (bounded, unbounded) = (compile(options()), compile(unbounded_options()));
    let (with, without) = side_by_side(reps, 200, |on| {
        let template = if on { &bounded } else { &unbounded };
        black_box(template.render(black_box(&context)).is_ok());
    });
    let tool_count = context["tools"].as_array().map_or(0, Vec::len);
    println!(
        "Qwen 2.5, {tool_count} tools: {with:.2} µs per render bounded, {without:.2} µs \
         unbounded ({:+.1}%), median of {reps}",
        (with / without - 1.0) * 100.0
    );
    let with_bounds = compile_all(corpus, &options());
    let without_bounds = compile_all(corpus, &unbounded_options());
    let (with, without) = side_by_side(reps, 1, |on| {
        black_box(render_all(
            corpus,
            if on { &with_bounds } else { &without_bounds },
        ));
    });
    let rows = corpus.rows.len() as f64;
    println!(
        "corpus, {} rows: {:.2} µs per row bounded, {:.2} µs unbounded ({:+.1}%), median of {reps}",
        corpus.rows.len(),
        with / rows,
        without / rows,
        (with / without - 1.0) * 100.0
    );
}

/// Runs one pass `TOOLBRIDGE_BENCH_REPS` times and nothing else.
fn run_loop(corpus: &Corpus, what: Option<&str>) {
    let options = options();
    let reps = repetitions();
    let start = Instant::now();
    match what {
        Some("compile") => {
            for _ in 0..reps {
                black_box(compile_all(corpus, &options));
            }
        }
        Some("render") => {
            let compiled = compile_all(corpus, &options);
            for _ in 0..reps {
                black_box(render_all(corpus, &compiled));
            }
        }
        other => panic!("--loop takes compile or render, not {other:?}"),
    }
    println!("{reps} passes in {:.3} s", start.elapsed().as_secs_f64());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let corpus = load_corpus();
    if let Some(at) = args.iter().position(|arg| arg == "--loop") {
        run_loop(&corpus, args.get(at + 1).map(String::as_str));
    } else if args.iter().any(|arg| arg == "--bounds") {
        bounds(&corpus);
    } else if args.iter().any(|arg| arg == "--summary") {
        summary(&corpus);
    } else if args.iter().any(|arg| arg == "--profile") {
        summary(&corpus);
        profile(&corpus);
    } else {
        criterion_benches(&corpus);
        // `cargo bench` passes `--bench`; `cargo test --benches` does not, and only checks
        // that the benchmarks run.
        if args.iter().any(|arg| arg == "--bench") {
            summary(&corpus);
        }
    }
}
