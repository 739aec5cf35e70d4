//! Writes the seed corpus of every fuzz target: `fuzz-seeds OUT [MODEL.gguf]` fills
//! `OUT/<target>/` with inputs in each target's encoding (see the target's module), from
//! the shared corpus beside the repository (`../shared`) and this repository's fixtures.
//! A fuzzer mutates from these, so they are the real inputs each part is built for:
//! calls written in every dialect's syntax, the corpus's chat templates, llama.cpp's
//! schemas and MaskBench's, seed 000's grammars, the validation tests' request bodies and
//! the head of a real GGUF file.

#[path = "../../../dialect/tests/common/written.rs"]
mod written;

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Map, Value};
use toolbridge_chat::{Arguments, ToolCall};
use toolbridge_dialect::Registry;
use written::{dialect_of, written, ONE_CALL, SYNTAXES};

/// MaskBench schemas taken (of 5690): enough variety, few enough for AFL to calibrate fast.
const MASKBENCH_SCHEMAS: usize = 150;
/// Heads of the model file kept as GGUF seeds: the header and the first key/values.
const GGUF_HEADS: [usize; 2] = [1 << 10, 16 << 10];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first().map(PathBuf::from) else {
        eprintln!("usage: fuzz-seeds OUT_DIR [MODEL.gguf]");
        return ExitCode::FAILURE;
    };
    match write_all(&out, args.get(1).map(Path::new)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fuzz-seeds: {error}");
            ExitCode::FAILURE
        }
    }
}

type Result<T> = std::result::Result<T, String>;

fn write_all(out: &Path, model: Option<&Path>) -> Result<()> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = repo.join("../shared");
    let corpus = shared.join("corpus");
    if !corpus.is_dir() {
        return Err(format!(
            "the shared corpus is missing: looked for {}",
            corpus.display()
        ));
    }
    let mut seeds = Seeds::new(out);
    parser_seeds(&mut seeds)?;
    gbnf_seeds(&mut seeds, &shared, &repo)?;
    schema_seeds(&mut seeds, &corpus)?;
    for path in files_under(&corpus.join("jinja"), "jinja")? {
        seeds.add("jinja", read(&path)?)?;
    }
    for path in files_under(&corpus.join("gotmpl"), "gotmpl")? {
        seeds.add("go_template", read(&path)?)?;
    }
    for path in files_under(&repo.join("crates/chat/tests/validate"), "jsonl")? {
        for line in lines(&path)? {
            let body = parse_json(&line, &path)?["body"].to_string();
            seeds.add("request", body.into_bytes())?;
        }
    }
    seeds.add("gguf", empty_gguf())?;
    if let Some(model) = model {
        let mut head = Vec::new();
        let file = fs::File::open(model).map_err(|e| format!("{}: {e}", model.display()))?;
        file.take(GGUF_HEADS[1] as u64)
            .read_to_end(&mut head)
            .map_err(|e| format!("{}: {e}", model.display()))?;
        for size in GGUF_HEADS {
            seeds.add("gguf", head[..size.min(head.len())].to_vec())?;
        }
    }
    for (target, count) in &seeds.counts {
        println!("{target}: {count} seeds");
    }
    Ok(())
}

/// A GGUF v3 header with no tensors and no key/values: the smallest valid file, the one
/// seed when no model is at hand.
fn empty_gguf() -> Vec<u8> {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes
}

/// Numbered seed files under `OUT/<target>/`, counted per target.
struct Seeds {
    out: PathBuf,
    counts: Vec<(&'static str, usize)>,
}

impl Seeds {
    fn new(out: &Path) -> Seeds {
        Seeds {
            out: out.to_path_buf(),
            counts: Vec::new(),
        }
    }

    fn add(&mut self, target: &'static str, bytes: Vec<u8>) -> Result<()> {
        let dir = self.out.join(target);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let count = match self.counts.iter_mut().find(|(name, _)| *name == target) {
            Some((_, count)) => count,
            None => {
                self.counts.push((target, 0));
                &mut self.counts.last_mut().expect("just pushed").1
            }
        };
        *count += 1;
        let path = dir.join(format!("seed-{count:04}"));
        fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// A plain answer for every registered dialect, and calls in each syntax the dialect
/// tests write (`written`), each behind its dialect's byte and no cuts.
fn parser_seeds(seeds: &mut Seeds) -> Result<()> {
    let registry = Registry::default();
    let names = registry.names();
    for at in 0..names.len() {
        seeds.add("stream_parser", parser_input(at, "The answer is 42."))?;
    }
    let calls = sample_calls();
    for syntax in SYNTAXES {
        let at = names
            .iter()
            .position(|name| *name == dialect_of(syntax))
            .ok_or_else(|| format!("{syntax}: its dialect is not registered"))?;
        let calls = if ONE_CALL.contains(&syntax) {
            &calls[..1]
        } else {
            &calls[..]
        };
        seeds.add("stream_parser", parser_input(at, &written(syntax, calls)))?;
    }
    Ok(())
}

fn parser_input(dialect: usize, text: &str) -> Vec<u8> {
    let mut input = vec![dialect as u8, 0];
    input.extend(text.as_bytes());
    input
}

fn sample_calls() -> Vec<ToolCall> {
    let object = |value: Value| match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    vec![
        ToolCall::new(
            "call_0",
            "get_weather",
            Arguments::Object(object(json!({"city": "Paris", "days": 2, "units": ["c"]}))),
        ),
        ToolCall::new(
            "call_1",
            "search",
            Arguments::Object(object(
                json!({"query": "a \"quoted\"\nline", "exact": true}),
            )),
        ),
    ]
}

/// Seed 000's grammars (the fenced block after each `Grammar:` line) and the grammar
/// crate's GBNF fixtures.
fn gbnf_seeds(seeds: &mut Seeds, shared: &Path, repo: &Path) -> Result<()> {
    let seed = String::from_utf8_lossy(&read(&shared.join("seeds/000_8b0e678405ed2946.txt"))?)
        .into_owned();
    let mut lines = seed.lines();
    while let Some(line) = lines.next() {
        if line == "Grammar:" {
            let block: Vec<&str> = lines
                .by_ref()
                .skip_while(|l| !l.starts_with("```"))
                .skip(1)
                .take_while(|l| *l != "```")
                .collect();
            seeds.add("gbnf", (block.join("\n") + "\n").into_bytes())?;
        }
    }
    for path in files_under(&repo.join("crates/grammar/tests/fixtures/gbnf"), "gbnf")? {
        seeds.add("gbnf", read(&path)?)?;
    }
    Ok(())
}

/// llama.cpp's json-schema-to-grammar cases and the first MaskBench schemas, each in one
/// of the four conversion modes in turn.
fn schema_seeds(seeds: &mut Seeds, corpus: &Path) -> Result<()> {
    let cases = corpus.join("schema2gbnf/cases.jsonl");
    let mut schemas = Vec::new();
    for line in lines(&cases)? {
        if let Some(schema) = parse_json(&line, &cases)?["schema"].as_str() {
            schemas.push(schema.to_string());
        }
    }
    let maskbench = corpus.join("maskbench/maskbench-shared.jsonl.gz");
    let file = fs::File::open(&maskbench).map_err(|e| format!("{}: {e}", maskbench.display()))?;
    for line in BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .take(MASKBENCH_SCHEMAS)
    {
        let line = line.map_err(|e| format!("{}: {e}", maskbench.display()))?;
        schemas.push(parse_json(&line, &maskbench)?["schema"].to_string());
    }
    for (at, schema) in schemas.into_iter().enumerate() {
        let mut input = vec![(at % 4) as u8];
        input.extend(schema.into_bytes());
        seeds.add("schema", input)?;
    }
    Ok(())
}

/// Files under `dir` (recursively) whose name ends in `.ext`, sorted.
fn files_under(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            found.extend(files_under(&path, ext)?);
        } else if path.extension().is_some_and(|e| e == ext) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn lines(path: &Path) -> Result<Vec<String>> {
    let text = String::from_utf8(read(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect())
}

fn parse_json(line: &str, path: &Path) -> Result<Value> {
    serde_json::from_str(line).map_err(|e| format!("{}: {e}", path.display()))
}
