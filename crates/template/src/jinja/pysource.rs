//! Source rewrites that give a template Python's meaning where minijinja's differs.
//!
//! Some differences live in the language, not in filters: minijinja iterates `None` as
//! an empty list where Python raises `'NoneType' object is not iterable`, it keeps a
//! backslash-newline inside a string literal where Python's unescaping drops it, and it
//! has no `{% generation %}` tag. Rather than fork the engine, the template text is
//! rewritten before compiling, at positions found by minijinja's own lexer:
//! - `{% for x in EXPR %}` becomes `{% for x in __py_iter(EXPR) %}`;
//! - `"a\⏎b"` becomes `"ab"⏎` (the newline moves outside the literal, inside the tag,
//!   where whitespace means nothing, so every later line keeps its number);
//! - generation blocks become `if true` blocks (see [`super::generation`]).
//!
//! A template that does not tokenize is returned unchanged, so the compiler reports the
//! error against the text its author wrote.

use minijinja::machinery::{tokenize, Span, Token};
use minijinja::syntax::SyntaxConfig;
use minijinja::{Error, ErrorKind};

use super::generation::rewrite_generation_tags;

/// The name of the global that checks a loop's iterable.
pub const PY_ITER: &str = "__py_iter";

/// `source` rewritten for Python semantics.
pub fn rewrite(source: &str, syntax: &SyntaxConfig) -> String {
    let source = rewrite_generation_tags(source);
    let tokens: Vec<(Token, Span)> = match tokenize(&source, false, syntax.clone()).collect() {
        Ok(tokens) => tokens,
        Err(_) => return source,
    };
    let mut edits = Vec::new();
    string_continuation_edits(&source, &tokens, &mut edits);
    for_loop_edits(&tokens, &mut edits);
    apply(&source, edits)
}

/// `__py_iter(value)`: what Python's `iter()` refuses, refused here too.
pub fn py_iter(value: minijinja::Value) -> Result<minijinja::Value, Error> {
    match value.kind() {
        minijinja::value::ValueKind::None => Err(Error::new(
            ErrorKind::InvalidOperation,
            "TypeError: 'NoneType' object is not iterable",
        )),
        minijinja::value::ValueKind::Number | minijinja::value::ValueKind::Bool => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("TypeError: '{}' object is not iterable", value.kind()),
        )),
        _ => Ok(value),
    }
}

/// Replace `len` bytes at `offset` with `text`.
struct Edit {
    offset: usize,
    len: usize,
    text: String,
}

fn insert(offset: usize, text: &str) -> Edit {
    Edit {
        offset,
        len: 0,
        text: text.to_string(),
    }
}

fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    if edits.is_empty() {
        return source.to_string();
    }
    edits.sort_by_key(|edit| (edit.offset, edit.len));
    let mut out = String::with_capacity(source.len() + edits.len() * 16);
    let mut position = 0;
    for edit in edits {
        if edit.offset < position || edit.offset + edit.len > source.len() {
            continue;
        }
        out.push_str(&source[position..edit.offset]);
        out.push_str(&edit.text);
        position = edit.offset + edit.len;
    }
    out.push_str(&source[position..]);
    out
}

/// Every string literal holding a backslash-newline loses it; the newlines it held are
/// put back right after the literal.
fn string_continuation_edits(source: &str, tokens: &[(Token, Span)], edits: &mut Vec<Edit>) {
    for (token, span) in tokens {
        if !matches!(token, Token::Str(_) | Token::String(_)) {
            continue;
        }
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        let Some(literal) = source.get(start..end) else {
            continue;
        };
        if let Some((joined, newlines)) = join_continuations(literal) {
            edits.push(Edit {
                offset: start,
                len: end - start,
                text: joined + &"\n".repeat(newlines),
            });
        }
    }
}

/// The literal without its backslash-newline pairs and how many it had, or `None`
/// when it has none. Escaped backslashes (`\\`) are skipped as pairs.
fn join_continuations(literal: &str) -> Option<(String, usize)> {
    let mut out = String::with_capacity(literal.len());
    let mut removed = 0;
    let mut chars = literal.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('\n') => {
                chars.next();
                removed += 1;
            }
            Some(_) => {
                out.push(c);
                out.extend(chars.next());
            }
            None => out.push(c),
        }
    }
    (removed > 0).then_some((out, removed))
}

/// Where each `for` tag's iterable starts and ends, found in the token stream: after
/// the first top-level `in` up to a top-level `if`, `recursive` or the tag's end. Tokens,
/// not the syntax tree, because the tree's spans leave out parentheses and the left side
/// of a filter chain.
fn for_loop_edits(tokens: &[(Token, Span)], edits: &mut Vec<Edit>) {
    let mut position = 0;
    while position < tokens.len() {
        let is_for_tag = matches!(tokens[position].0, Token::BlockStart)
            && matches!(tokens.get(position + 1), Some((Token::Ident("for"), _)));
        position += 1;
        if !is_for_tag {
            continue;
        }
        if let Some((start, end)) = iterable_range(&tokens[position + 1..]) {
            edits.push(insert(start, &format!("{PY_ITER}(")));
            edits.push(insert(end, ")"));
        }
    }
}

/// The byte range of the iterable in the tokens that follow `for`.
fn iterable_range(tokens: &[(Token, Span)]) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut range: Option<(usize, usize)> = None;
    for (token, span) in tokens {
        match token {
            Token::BlockEnd => break,
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth = depth.saturating_sub(1)
            }
            Token::Ident("in") if depth == 0 && range.is_none() => {
                range = Some((span.end_offset as usize, span.end_offset as usize));
                continue;
            }
            Token::Ident("if" | "recursive") if depth == 0 && range.is_some() => break,
            _ => {}
        }
        if let Some((start, end)) = range.as_mut() {
            if *start == *end {
                *start = span.start_offset as usize;
            }
            *end = span.end_offset as usize;
        }
    }
    range.filter(|(start, end)| start < end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(source: &str) -> String {
        rewrite(source, &SyntaxConfig::default())
    }

    #[test]
    fn loops_iterate_through_the_python_check() {
        assert_eq!(
            rewritten("{% for m in messages[1:] if m %}{{ m }}{% endfor %}"),
            "{% for m in __py_iter(messages[1:]) if m %}{{ m }}{% endfor %}"
        );
        assert_eq!(
            rewritten("{% for k, v in d|items %}{% for x in v %}{% endfor %}{% endfor %}"),
            "{% for k, v in __py_iter(d|items) %}{% for x in __py_iter(v) %}{% endfor %}{% endfor %}"
        );
    }

    #[test]
    fn string_continuations_are_joined_and_lines_kept() {
        assert_eq!(
            rewritten("{% set x = \"a\\\nb\" + y %}\n{{ x }}"),
            "{% set x = \"ab\"\n + y %}\n{{ x }}"
        );
        assert_eq!(rewritten("{{ 'a\\\\' }}"), "{{ 'a\\\\' }}");
    }

    #[test]
    fn unparsable_templates_are_left_for_the_compiler() {
        assert_eq!(rewritten("{% for x in %}"), "{% for x in %}");
    }
}
