//! `toolbridge bench`: measurements that need real data, run on demand rather than in
//! tests, because timings belong in benchmarks and the data is large.

mod agent;
mod bfcl;
mod load;
mod mask_time;
mod maskbench;
mod proxy;
mod serve;
mod stream;
mod vocab;

use anyhow::Result;

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(clap::Subcommand)]
enum Which {
    /// Score a JSON-Schema converter on a MaskBench file (`.jsonl` or `.jsonl.gz`).
    Maskbench(maskbench::MaskbenchArgs),
    /// Ask an OpenAI-compatible server BFCL questions and judge its tool calls.
    Bfcl(bfcl::BfclArgs),
    /// Time llguidance's token masks for a tool-call grammar over a GGUF model's vocabulary.
    MaskTime(mask_time::MaskTimeArgs),
    /// Time the same requests to a llama.cpp server directly and through a toolbridge in
    /// front of it: decode speed ratio and added time to first token.
    Proxy(proxy::ProxyArgs),
    /// A running server under load and faults for a while (mixed streams and tool
    /// choices, hung-up streams, oversized prompts), then checked: answers, memory, metrics.
    Load(load::LoadArgs),
    /// One workload against two OpenAI-compatible servers side by side: decode, prompt
    /// evaluation, first token with tools, concurrent streams; ratios printed.
    Serve(serve::ServeArgs),
    /// Coding-agent sessions against two servers side by side: several at once, each a
    /// conversation of turns over a shared long system prompt and twelve tools.
    Agent(agent::AgentArgs),
}

pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.which {
        Which::Bfcl(args) => bfcl::run(args),
        Which::Load(args) => load::run(args),
        Which::Maskbench(args) => maskbench::run(args),
        Which::MaskTime(args) => mask_time::run(args),
        Which::Proxy(args) => proxy::run(args),
        Which::Serve(args) => serve::run(args),
        Which::Agent(args) => agent::run(args),
    }
}
