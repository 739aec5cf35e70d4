//! `toolbridge parse`: model output on stdin, the OpenAI assistant message on stdout.
//!
//! It runs the dialect's own stream parser, the one the server uses, and folds its events
//! the way a non-streaming answer is built, so what it prints is what a client would get.
//! `--split N` feeds the output in pieces, as an engine streams it; the printed message
//! must not change, which makes this a quick check of a parser on text the property tests
//! never saw. Ids are sequential so that two runs print the same bytes. `--template` reads
//! the output in the dialect detected from the model's template (or learned from it), as
//! the server would; with `--request`, exactly as the server would answer that request: the
//! parser is the one prepared for it (its tools, `tool_choice`, `chat_template_kwargs`, and
//! where the rendered prompt left the model, inside reasoning or not).

use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use toolbridge_dialect::{answer_format, assemble, ChatTemplate, Registry, SequentialIds};
use toolbridge_template::TemplateSource;

use crate::prepare::read_request;
use crate::styles;

#[derive(clap::Args)]
pub struct ParseArgs {
    /// The dialect whose syntax the output is in (`hermes`, …).
    #[arg(
        long,
        required_unless_present = "template",
        conflicts_with = "template"
    )]
    style: Option<String>,
    /// The model's chat template (`.jinja`, `tokenizer_config.json` or `.gguf`): the
    /// dialect is the one detected from it.
    #[arg(long)]
    template: Option<PathBuf>,
    /// The OpenAI chat request (JSON) the output answers: the output is read by the parser
    /// the server prepares for it. Needs `--template`.
    #[arg(long, requires = "template")]
    request: Option<PathBuf>,
    /// Feed the output in pieces of at most N bytes (cut at character boundaries).
    #[arg(long)]
    split: Option<NonZeroUsize>,
}

pub fn run(args: &ParseArgs) -> Result<()> {
    let mut registry = Registry::default();
    let name = dialect_name(args, &mut registry)?;
    let dialect = styles::dialect(&registry, &name)?;
    let mut parser = match (&args.request, &args.template) {
        (Some(request), Some(template)) => {
            let request = read_request(request)?;
            let source = TemplateSource::from_path(template)?;
            let template = ChatTemplate::from_source(&source, None, !request.tools().is_empty())?;
            answer_format::prepare(dialect, &request, &template)?.parser
        }
        _ => dialect.parser(),
    };
    let mut output = String::new();
    std::io::stdin()
        .read_to_string(&mut output)
        .context("stdin is not UTF-8 text")?;
    let size = args.split.map_or(output.len().max(1), NonZeroUsize::get);
    let mut events = Vec::new();
    for piece in pieces(&output, size) {
        events.extend(parser.push(piece));
    }
    events.extend(parser.finish());
    let message = assemble(events, SequentialIds::default())
        .context("the parser's events are out of order")?;
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, &message)?;
    writeln!(stdout)?;
    Ok(())
}

/// The dialect `--style` names, or the one the server picks for `--template`.
fn dialect_name(args: &ParseArgs, registry: &mut Registry) -> Result<String> {
    if let Some(style) = &args.style {
        return Ok(style.clone());
    }
    let path = args
        .template
        .as_ref()
        .context("give --style or --template")?;
    Ok(styles::detected(&TemplateSource::from_path(path)?, registry)?.to_string())
}

/// `text` in pieces of at most `size` bytes, each cut at the largest character boundary
/// that fits, and at least one character long.
fn pieces(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, tail) = rest.split_at(cut.max(first.len_utf8()));
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn pieces_fit_the_size_and_keep_characters_whole() {
        let cut: Vec<&str> = pieces("aé€b", 2).collect();
        assert_eq!(cut, ["a", "é", "€", "b"]);
        let cut: Vec<&str> = pieces("aé€b", 3).collect();
        assert_eq!(cut, ["aé", "€", "b"]);
        let cut: Vec<&str> = pieces("abcde", 2).collect();
        assert_eq!(cut, ["ab", "cd", "e"]);
    }

    #[test]
    fn nothing_has_no_pieces() {
        assert_eq!(pieces("", 4).count(), 0);
    }
}
