//! The machinery every dialect is built from. A family's file says only what is its own
//! (its markers, its literals, where its template differs) and takes the rest from here,
//! never from another family's file, so a rule is written once and a family can be read
//! alone.
//!
//! Model output arrives in pieces of any size: a piece may end inside a marker, a UTF-8
//! character or a JSON string escape, and a parser must give the same answer whether it is
//! fed everything at once or one byte at a time. Getting that right is fiddly, and peers that
//! re-solve it in each parser lose calls at chunk boundaries in some parsers and not others.
//! So it is solved once, here, and tested here against every way of cutting the input; the
//! dialects only say which markers and which JSON they expect, and copy nothing.
//!
//! - [`native`]: a family whose template shows the tools, as a dialect: one `prepare`, the
//!   family saying only what differs.
//! - [`prompt_style`]: a style's prompt and call syntax, for templates that know nothing of
//!   tools, as a dialect.
//! - [`history`]: the shapes of the conversation templates read, tried in order.
//! - [`grammar_parts`]: the parts call grammars are made of.
//! - [`pythonic`]: pythonic call lists as a grammar over the tools, read back as calls.
//! - [`tagged_calls`]: a JSON call between `<tool_call>` tags, read (the Hermes family's
//!   parser) and asked for (the prompt styles' syntax).
//! - [`choice`]: the request's `tool_choice` settled once: callable and shown tools, forced,
//!   parallel.
//! - [`attributes`]: quoted attribute values (`tool="NAME"`), escaped and read back.
//! - [`tag_scan`]: literal markers (`<tool_call>`, `[TOOL_CALLS]`, …) among text.
//! - [`tag_tree`]: arguments as a tree of elements named by their keys (MiniMax M3), read
//!   back with the schema.
//! - [`header`]: a short routing header (`name\n<|content|>`), decided as early as it can be.
//! - [`learn`]: a template's call syntax, learned by rendering sentinel calls.
//! - [`json_scan`]: where one JSON value ends, and a value's (or one field's) text as
//!   argument fragments meanwhile.
//! - [`off_format`]: calls a model wrote as fenced or bare JSON, read out of content.
//! - [`call_json`]: calls as JSON objects with a family's key names, one or a list.
//! - [`cut`]: a call region read before it is whole: cut by the token limit, or streamed
//!   while the model writes it.
//! - [`pattern`]: a call region's text as a small pattern, matched as far as the text so
//!   far allows, and the calls its decoder reads out of it.
//! - [`framed`]: markers that switch content, reasoning and layout, and call regions read
//!   whole by their pattern, the parser most native families are made of.
//! - [`gemma_notation`]: Google's argument notation (bare keys, `<|"|>` or `<escape>`
//!   strings) read into JSON.
//! - [`prompt_text`]: a system prompt put in front of the request's, tools listed as JSON.
//! - [`pycall`]: Python call syntax, `[f(a=1), g(b='x')]`: read, written, and where a
//!   bracketed literal ends in a stream.
//! - [`reread`]: text read in place while a reader gives some back to read again.
//! - [`typed_args`]: argument values written as text, typed back from the tool's schema.
//! - [`unescape`]: markdown's `\_` taken out of a stream before a parser reads it.

pub mod attributes;
pub mod call_json;
pub mod choice;
pub mod cut;
pub mod framed;
pub mod gemma_notation;
pub mod grammar_parts;
pub mod header;
pub mod history;
pub mod json_scan;
pub mod learn;
pub mod native;
pub mod off_format;
pub mod pattern;
pub mod prompt_style;
pub mod prompt_text;
pub mod pycall;
pub mod pythonic;
mod reread;
pub mod tag_scan;
pub mod tag_tree;
pub mod tagged_calls;
pub mod typed_args;
pub mod unescape;
