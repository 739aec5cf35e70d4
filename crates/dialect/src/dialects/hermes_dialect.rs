//! The Hermes 2 Pro / Qwen 2.5 / Qwen 3 dialect: the model's own template shows the tools,
//! and calls are `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`.
//!
//! These templates render `tools` themselves (Qwen 2.5 lists each tool's JSON inside
//! `<tools></tools>` in the system turn), so the prompt is the template rendered with the
//! request's messages and tools as OpenAI sends them, and `add_generation_prompt`. Past
//! calls are given to the template with their `arguments` as an object where they are JSON:
//! Qwen's template prints `arguments | tojson`, and OpenAI's string form would come out
//! quoted twice.
//!
//! The grammar is llama.cpp's for this family: after the trigger `<tool_call>`, one JSON
//! object per call whose `name` is a tool's name and whose `arguments` follow that tool's
//! schema, each an alternative, both keys required and no others. With parallel calls
//! allowed, more `<tool_call>` blocks may follow, one per line. `tool_choice` decides the
//! rest: `auto` makes the grammar lazy (free text until `<tool_call>`), `required` and a
//! named function make it start at the first byte, a named function or `allowed_tools`
//! keep only those tools' alternatives, and `none` removes the constraint and the tools
//! from the prompt (a model shown no tools is not tempted to call one it may not).
//!
//! Off-format calls: small models of these families often write a call as bare or fenced
//! JSON (`{"name": …, "arguments": …}`), as they saw calls in chat data. The parser reads
//! those too when they name a declared tool and fit its schema
//! ([`crate::toolkit::off_format`]), and the grammar has more triggers, the openings of
//! such a call compact (`{"name": "`) and pretty-printed (`{` and a line break, the `name`
//! key indented by two or four spaces, as Qwen2.5-Coder writes it in a fence), after which
//! the call is constrained like a tagged one (a tool's name, its arguments, `}`, and an
//! optional closing fence; between the members a space or a line break and indent).
//!
//! The parser is the one in [`crate::toolkit::tagged_calls`]: `<think>…</think>` at the
//! very start is reasoning (or everything up to `</think>`, for a prompt that opened it),
//! and `<tool_call>` opens a call region, the JSON object then `</tool_call>`.
//!
//! LongCat writes the same calls between `<longcat_tool_call>` tags ([`Hermes::LongCat`]),
//! as vLLM's LongCat parser reads them.
//!
//! Stops: none beyond the request's. The turn ends with `<|im_end|>`, which these models'
//! vocabularies mark as end-of-generation (llama.cpp and vLLM stop on it as EOS); a stop
//! string would not even see it, since special tokens are not detokenized into text.

use toolbridge_chat::Tool;
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::error::DialectError;
use crate::toolkit::framed::Action;
use crate::toolkit::grammar_parts::{call_objects, per_tool, words};
use crate::toolkit::native::{after_think, Native, Start};
use crate::toolkit::tagged_calls::{markers, Tags, TOOL_CALL_TAGS};

const LONGCAT_TAGS: Tags = ("<longcat_tool_call>", "</longcat_tool_call>");

/// What opens a call written as bare or fenced JSON, compact or pretty-printed; each is a
/// trigger too.
const BARE_CALL_OPENINGS: [&str; 3] = ["{\"name\": \"", "{\n  \"name\": \"", "{\n    \"name\": \""];

/// The Hermes / Qwen family, by the tags its calls are written in; see the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Hermes {
    /// `<tool_call>` (Hermes 2 Pro, Qwen 2.5 / 3, ERNIE 4.5).
    #[default]
    Qwen,
    /// `<longcat_tool_call>`.
    LongCat,
}

impl Hermes {
    fn tags(self) -> Tags {
        match self {
            Hermes::Qwen => TOOL_CALL_TAGS,
            Hermes::LongCat => LONGCAT_TAGS,
        }
    }
}

impl Native for Hermes {
    fn name(&self) -> &'static str {
        match self {
            Hermes::Qwen => "hermes",
            Hermes::LongCat => "longcat",
        }
    }

    fn grammar(
        &self,
        tools: &[&Tool],
        parallel: bool,
        forced: bool,
    ) -> Result<Grammar, DialectError> {
        call_grammar(tools, parallel, !forced, self.tags())
    }

    fn triggers(&self) -> Vec<Trigger> {
        let mut triggers = words(&[self.tags().0]);
        triggers.extend(words(&BARE_CALL_OPENINGS));
        triggers
    }

    fn markers(&self, _tools: &[&Tool]) -> Vec<(String, Action)> {
        markers(self.tags())
    }

    fn start(&self, prompt: Option<&str>) -> Start {
        after_think(prompt)
    }
}

/// `root ::= tagged | bare`. `tagged` is `"<tool_call>\n" call "\n</tool_call>"`, then with
/// `parallel` any number of `"\n<tool_call>\n" call "\n</tool_call>"`, where `call` is one
/// alternative per tool; `bare` is one call as JSON starting with one of
/// [`BARE_CALL_OPENINGS`], closed by an optional fence. A forced call (`with_bare` false)
/// is only `tagged`: the grammar writes the syntax from the first byte, so the model's
/// off-format habit needs no room, and a call cut by the token limit is always inside a
/// `<tool_call>` region, which the parser closes as the call so far.
fn call_grammar(
    tools: &[&Tool],
    parallel: bool,
    with_bare: bool,
    (call_open, call_close): Tags,
) -> Result<Grammar, DialectError> {
    let calls = call_objects(tools, ("name", "arguments"), None)?;
    let block = |open: &str| {
        Expr::Seq(vec![
            Expr::literal(format!("{open}\n")),
            Expr::reference("call"),
            Expr::literal(format!("\n{call_close}")),
        ])
    };
    let mut root = vec![block(call_open)];
    if parallel {
        root.push(Expr::repeat(
            Expr::group(block(&format!("\n{call_open}"))),
            0,
            None,
        ));
    }
    let root = if with_bare {
        Expr::Alt(vec![Expr::Seq(root), Expr::reference("bare-call")])
    } else {
        Expr::Seq(root)
    };
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", root);
    grammar.set_rule("call", Expr::Alt(calls));
    if with_bare {
        grammar.set_rule("bare-call", bare_calls(tools, parallel)?);
    }
    Ok(grammar)
}

/// `{"name": "<tool>", "arguments": <its arguments>}`, compact or pretty-printed, then an
/// optional closing fence; with `parallel`, more such calls may follow, each after blank
/// space and, optionally, a fence closing the last and opening the next (models write one
/// fenced block per call, or one object per line).
fn bare_calls(tools: &[&Tool], parallel: bool) -> Result<Expr, DialectError> {
    let space = |most: u32| {
        Expr::repeat(
            Expr::Alt(vec![Expr::literal("\n"), Expr::literal(" ")]),
            0,
            Some(most),
        )
    };
    let call = Expr::Seq(vec![
        Expr::group(Expr::Alt(
            BARE_CALL_OPENINGS
                .iter()
                .map(|open| Expr::literal(*open))
                .collect(),
        )),
        named_arguments(tools)?,
        space(2),
        Expr::literal("}"),
    ]);
    let mut calls = vec![call.clone()];
    if parallel {
        let fences = Expr::Seq(vec![
            Expr::literal("```"),
            space(4),
            Expr::optional(Expr::literal("```json")),
            space(4),
        ]);
        let next = Expr::Seq(vec![space(4), Expr::optional(Expr::group(fences)), call]);
        calls.push(Expr::repeat(Expr::group(next), 0, None));
    }
    calls.push(Expr::optional(Expr::literal("\n```")));
    Ok(Expr::Seq(calls))
}

/// One alternative per tool: the rest of a bare call's opening for its name, the
/// `"arguments"` member (after a space or a line break and indent), and its arguments.
fn named_arguments(tools: &[&Tool]) -> Result<Expr, DialectError> {
    per_tool(tools, |_, name, arguments| {
        Expr::Seq(vec![
            Expr::literal(format!("{name}\",")),
            Expr::group(Expr::Alt(vec![
                Expr::literal(" "),
                Expr::literal("\n  "),
                Expr::literal("\n    "),
            ])),
            Expr::literal("\"arguments\": "),
            arguments,
        ])
    })
}
