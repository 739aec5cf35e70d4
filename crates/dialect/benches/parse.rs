//! What reading a model's output costs, for every dialect the registry has: some content,
//! then calls whose JSON arguments hold long strings, written in the dialect's own syntax
//! by the writer the BFCL round trip uses (`tests/common/written.rs`), at 1 KB, 64 KB and
//! 1 MB, in two shapes (one call carrying one long string, and many calls), and as content
//! alone (prose, no call: what the parser costs where it only looks for markers), fed to
//! the dialect's parser whole, in 16-byte pieces and in 1-byte pieces, as a server streams
//! it.
//!
//! A streaming parser must be linear in its output: one that reads its held text again
//! from the start on every piece is fine at 1 KB and hopeless at 1 MB in 1-byte pieces. So
//! the table's last column is the time per byte at 1 MB over that at 1 KB, in 1-byte
//! pieces: near 1 when linear.
//!
//! Time is the CPU time the bench's thread ran (Linux's `CLOCK_THREAD_CPUTIME_ID`; wall
//! time elsewhere): the machine it runs on is shared with builds, and at a load of 10 on 2
//! cores wall time made every figure 5–10 times worse, and 1 KB and 1 MB measured at
//! different loads made the last column noise.
//!
//! Not criterion: a thousand cases, some of them seconds long before the parsers were made
//! linear, would take criterion an hour. Each case here runs until it has taken 200 ms (at
//! least once); a run still going after `PARSE_BENCH_BUDGET_MS` (default 2000) stops there
//! and its figure, over the bytes read so far, is marked `≤` (it only gets slower).
//! Arguments that do not start with `-` keep the dialects whose name contains one of them.
//! `--streamed` measures each case twice, back to back: with calls sent whole (the default,
//! as without a grammar) and with calls streamed as the server streams them under a grammar
//! ([`Pacing::Timed`]), printed `whole → streamed`.
//! The `off-format` rows are calls written as bare JSON objects, one per line, read by the
//! Hermes parser a request with the `write_file` tool prepares (`toolkit/off_format.rs`):
//! streamed, they are the calls a lazy grammar's trigger held to a call.
//! `cargo bench -p toolbridge-dialect --bench parse [-- hermes mistral] [-- --streamed]`.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolbridge_chat::{Arguments, ChatRequest, Message, Tool, ToolCall};
use toolbridge_dialect::dialects::hermes_dialect::Hermes;
use toolbridge_dialect::toolkit::native::NativeDialect;
use toolbridge_dialect::{ChatTemplate, Dialect, Pacing, Registry, StreamParser};

#[path = "../tests/common/written.rs"]
mod written;

const SIZES: [(usize, &str); 3] = [(1 << 10, "1 KB"), (1 << 16, "64 KB"), (1 << 20, "1 MB")];
const PIECES: [Option<usize>; 3] = [None, Some(16), Some(1)];
const CONTENT: &str = "Sure, I will save the notes now.\n\n";
const REPEAT_FOR: Duration = Duration::from_millis(200);

#[derive(Clone, Copy)]
enum Shape {
    OneLongCall,
    ManyCalls,
    Content,
}

fn prose(len: usize) -> String {
    let line = "the quick brown fox said \"hello\" to the lazy dog, then wrote it all down.\n";
    let mut text = String::with_capacity(len + line.len());
    while text.len() < len {
        text.push_str(line);
    }
    text.truncate(len);
    text
}

fn note(index: usize, content: String) -> ToolCall {
    let mut arguments = Map::new();
    arguments.insert("path".into(), format!("notes/{index}.txt").into());
    arguments.insert("content".into(), Value::String(content));
    ToolCall::new(
        format!("call{index:05}"),
        "write_file",
        Arguments::Object(arguments),
    )
}

/// Makes a fresh parser for each run.
type MakeParser<'a> = &'a dyn Fn() -> Box<dyn StreamParser + Send>;

/// `syntax`'s output of about `size` bytes in `shape`; `None` where the syntax carries one
/// call per answer and `shape` asks for many.
fn output(syntax: &str, size: usize, shape: Shape) -> Option<String> {
    if shape_fits(syntax, shape) {
        written_output(&|calls| written::written(syntax, calls), size, shape)
    } else {
        None
    }
}

fn shape_fits(syntax: &str, shape: Shape) -> bool {
    !matches!(shape, Shape::ManyCalls) || !written::ONE_CALL.contains(&syntax)
}

/// Calls as bare JSON objects, one per line.
fn bare_calls(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|call| {
            format!(
                "{{\"name\": \"{}\", \"arguments\": {}}}",
                call.name(),
                call.function.arguments.as_json_string()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parser a request with the `write_file` tool prepares for Hermes, which reads calls
/// written off-format.
fn off_format_parser() -> Box<dyn StreamParser + Send> {
    let template = ChatTemplate::new(
        "{% for m in messages %}{{ m.content }}\n{% endfor %}{{ tools | tojson }}",
        "",
        "",
    )
    .expect("compiles");
    let tool: Tool = serde_json::from_value(serde_json::json!({"type": "function", "function": {
        "name": "write_file",
        "parameters": {"type": "object", "required": ["path", "content"], "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}}}}}))
    .expect("a tool");
    let mut request = ChatRequest::new("m", vec![Message::user("Save the notes.")]);
    request.tools = Some(vec![tool]);
    NativeDialect(Hermes::Qwen)
        .prepare(&request, &template)
        .expect("prepares")
        .parser
}

/// An output written by `write` of about `size` bytes in `shape`.
fn written_output(
    write: &dyn Fn(&[ToolCall]) -> String,
    size: usize,
    shape: Shape,
) -> Option<String> {
    let text = |calls: &[ToolCall]| format!("{CONTENT}{}", write(calls));
    match shape {
        Shape::OneLongCall => {
            let frame = text(&[note(0, String::new())]).len();
            let probe = text(&[note(0, prose(size))]).len() - frame;
            let len = (size.saturating_sub(frame) as f64 * size as f64 / probe as f64) as usize;
            Some(text(&[note(0, prose(len))]))
        }
        Shape::ManyCalls => {
            let one = text(&[note(0, prose(200))]).len() - CONTENT.len();
            let count = (size.saturating_sub(CONTENT.len()) / one).max(1);
            let calls: Vec<ToolCall> = (0..count).map(|index| note(index, prose(200))).collect();
            Some(text(&calls))
        }
        Shape::Content => Some(format!("{CONTENT}{}", prose(size - CONTENT.len()))),
    }
}

/// Seconds this thread has run on a CPU (`None` where the clock is not there).
#[cfg(target_os = "linux")]
fn cpu_seconds() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec {
        seconds: 0,
        nanoseconds: 0,
    };
    // SAFETY: `time` is a valid, writable `struct timespec` for the call.
    let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    (status == 0).then(|| time.seconds as f64 + time.nanoseconds as f64 / 1e9)
}

#[cfg(not(target_os = "linux"))]
fn cpu_seconds() -> Option<f64> {
    None
}

/// One run: the seconds it took (CPU time, see the module docs) and the bytes it read (all
/// of them unless over `budget`, in wall time).
fn run(
    make: MakeParser,
    pacing: Pacing,
    text: &str,
    piece: Option<usize>,
    budget: Duration,
) -> (f64, usize) {
    let mut parser = make();
    parser.set_pacing(pacing);
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let took = || match (cpu_start, cpu_seconds()) {
        (Some(before), Some(now)) => now - before,
        _ => start.elapsed().as_secs_f64(),
    };
    let mut events = 0;
    let mut at = 0;
    let mut pushes = 0u32;
    while at < text.len() {
        let mut end = piece.map_or(text.len(), |piece| (at + piece).min(text.len()));
        while !text.is_char_boundary(end) {
            end += 1;
        }
        events += parser.push(&text[at..end]).len();
        at = end;
        pushes = pushes.wrapping_add(1);
        if pushes.is_multiple_of(1024) && start.elapsed() > budget {
            return (took(), at);
        }
    }
    events += parser.finish().len();
    std::hint::black_box(events);
    (took(), text.len())
}

/// MB/s over runs of at least [`REPEAT_FOR`] in all, and whether a run was cut short.
fn measure(
    make: MakeParser,
    pacing: Pacing,
    text: &str,
    piece: Option<usize>,
    budget: Duration,
) -> (f64, bool) {
    let (mut seconds, mut bytes) = (0.0, 0);
    while seconds < REPEAT_FOR.as_secs_f64() {
        let (took, read) = run(make, pacing, text, piece, budget);
        seconds += took;
        bytes += read;
        if read < text.len() {
            return (bytes as f64 / seconds / 1e6, true);
        }
    }
    (bytes as f64 / seconds / 1e6, false)
}

fn figure((rate, cut): (f64, bool)) -> String {
    let mark = if cut { "≤" } else { "" };
    if rate >= 100.0 {
        format!("{mark}{rate:.0}")
    } else {
        format!("{mark}{rate:.1}")
    }
}

fn main() {
    let budget = std::env::var("PARSE_BENCH_BUDGET_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(2), Duration::from_millis);
    let pacings = if std::env::args().any(|arg| arg == "--streamed") {
        vec![Pacing::Whole, Pacing::Timed]
    } else {
        vec![Pacing::Whole]
    };
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let registry = Registry::default();
    println!(
        "| dialect | shape | size | whole MB/s | 16 B MB/s | 1 B MB/s | 1 B ns/byte, 1 MB / 1 KB |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for name in registry.names() {
        if !filters.is_empty() && !filters.iter().any(|filter| name.contains(filter.as_str())) {
            continue;
        }
        let Some(syntax) = written::SYNTAXES
            .iter()
            .find(|syntax| written::dialect_of(syntax) == *name)
        else {
            println!("| {name} | no writer | | | | | |");
            continue;
        };
        let Some(dialect) = registry.get(name) else {
            continue;
        };
        let make = || dialect.parser();
        rows(
            name,
            &make,
            &|size, shape| output(syntax, size, shape),
            &pacings,
            budget,
        );
    }
    let off_format = "off-format";
    if filters.is_empty()
        || filters
            .iter()
            .any(|filter| off_format.contains(filter.as_str()))
    {
        let shapes = |size, shape| written_output(&bare_calls, size, shape);
        rows(off_format, &off_format_parser, &shapes, &pacings, budget);
    }
}

/// The table's rows for one parser: each shape at each size, in each piece size and
/// pacing.
fn rows(
    name: &str,
    make: MakeParser,
    output: &dyn Fn(usize, Shape) -> Option<String>,
    pacings: &[Pacing],
    budget: Duration,
) {
    for (shape, label) in [
        (Shape::OneLongCall, "one long call"),
        (Shape::ManyCalls, "many calls"),
        (Shape::Content, "content"),
    ] {
        let mut per_byte_1kb = None;
        for (size, size_label) in SIZES {
            let Some(text) = output(size, shape) else {
                continue;
            };
            let rates: Vec<Vec<(f64, bool)>> = PIECES
                .iter()
                .map(|&piece| {
                    pacings
                        .iter()
                        .map(|&pacing| measure(make, pacing, &text, piece, budget))
                        .collect()
                })
                .collect();
            let cell = |rates: &[(f64, bool)]| {
                rates
                    .iter()
                    .map(|&rate| figure(rate))
                    .collect::<Vec<_>>()
                    .join(" → ")
            };
            let per_byte = 1e3 / rates[2].last().map_or(f64::NAN, |rate| rate.0);
            let ratio = match per_byte_1kb {
                None => {
                    per_byte_1kb = Some(per_byte);
                    String::new()
                }
                Some(small) if size == 1 << 20 => format!("{:.2}", per_byte / small),
                Some(_) => String::new(),
            };
            println!(
                "| {name} | {label} | {size_label} | {} | {} | {} | {ratio} |",
                cell(&rates[0]),
                cell(&rates[1]),
                cell(&rates[2]),
            );
        }
    }
}
