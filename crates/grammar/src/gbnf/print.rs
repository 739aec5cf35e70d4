//! Prints the grammar tree as GBNF, the notation llama.cpp reads. The spelling follows
//! llama.cpp's json-schema-to-grammar (literal escapes, `{m,n}` repetitions, `| …` for an
//! empty first alternative) so that converted schemas come out byte-identical to it.
//!
//! Two of its spellings need a rule of their own. llama.cpp's converter joins pieces with
//! blanks even when a piece is empty, so `"{" space  "}"` has two: an [`Expr::Empty`]
//! inside a sequence prints as such an empty piece. And it writes an exact count two
//! ways: its hand-written rules repeat character classes as `[0-9]{4}`, its repetition
//! builder writes `item{3,3}`; a repeated class prints the first way, anything else the
//! second.

use std::fmt::Write;

use crate::error::{GrammarError, GrammarErrorKind};
use crate::tree::{CharClass, ClassItem, Expr, Grammar, Token};

/// The grammar as GBNF, one `name ::= body` line per rule, in the grammar's rule order.
/// Embedded JSON schemas must have been expanded into rules first
/// ([`crate::schema::expand_embedded`]).
pub fn print(grammar: &Grammar) -> Result<String, GrammarError> {
    let mut out = String::new();
    for rule in &grammar.rules {
        let body = match expr(&rule.body)? {
            empty if empty.is_empty() => "\"\"".to_string(),
            body => body,
        };
        let _ = writeln!(out, "{} ::= {}", rule.name, body);
    }
    Ok(out)
}

/// One expression as GBNF.
pub fn expr(e: &Expr) -> Result<String, GrammarError> {
    Ok(match e {
        Expr::Empty => String::new(),
        Expr::Literal(text) => literal(text),
        Expr::Class(class) => char_class(class),
        Expr::AnyChar => ".".to_string(),
        Expr::Ref(name) => name.clone(),
        Expr::Token(Token::Text(text)) => text.clone(),
        Expr::Token(Token::Id(id)) => format!("<[{id}]>"),
        Expr::Json(_) => {
            return Err(GrammarError::new(GrammarErrorKind::Unprintable,
                "an embedded JSON schema must be converted to rules (schema::expand_embedded) before printing GBNF",
            ))
        }
        Expr::Seq(items) => sequence(items)?,
        Expr::Alt(items) => alternatives(items)?,
        Expr::Group { inner, padded } => {
            let inner = expr(inner)?;
            if *padded {
                format!("( {inner} )")
            } else {
                format!("({inner})")
            }
        }
        Expr::Repeat { item, min, max } => {
            let suffix = match (item.as_ref(), max) {
                (Expr::Class(_), Some(max)) if max == min => format!("{{{min}}}"),
                _ => repetition_suffix(*min, *max),
            };
            format!("{}{suffix}", parenthesized_unless_atomic(item)?)
        }
    })
}

/// Items joined by blanks. An item that prints as nothing is left out, except
/// [`Expr::Empty`], which stands for an empty piece between two blanks.
fn sequence(items: &[Expr]) -> Result<String, GrammarError> {
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        let printed = match item {
            Expr::Alt(_) => format!("({})", expr(item)?),
            _ => expr(item)?,
        };
        if !printed.is_empty() || *item == Expr::Empty {
            parts.push(printed);
        }
    }
    Ok(parts.join(" "))
}

/// Alternatives joined by `|`; an empty alternative leaves no blank behind (`| " "`).
fn alternatives(items: &[Expr]) -> Result<String, GrammarError> {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        let mut printed = expr(item)?;
        if i > 0 {
            // Only a first alternative may be empty: GBNF reads on past a trailing `|`.
            if printed.is_empty() {
                printed = "\"\"".to_string();
            }
            out.push_str(if out.is_empty() { "|" } else { " |" });
            out.push(' ');
        }
        out.push_str(&printed);
    }
    Ok(out)
}

fn parenthesized_unless_atomic(item: &Expr) -> Result<String, GrammarError> {
    let printed = expr(item)?;
    Ok(if item.is_atomic() {
        printed
    } else {
        format!("({printed})")
    })
}

/// `?`, `*`, `+`, or `{min,max}` / `{min,}` as llama.cpp writes repetitions.
pub fn repetition_suffix(min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, Some(1)) => "?".to_string(),
        (0, None) => "*".to_string(),
        (1, None) => "+".to_string(),
        (min, Some(max)) => format!("{{{min},{max}}}"),
        (min, None) => format!("{{{min},}}"),
    }
}

/// A double-quoted GBNF literal, escaped as llama.cpp's converter escapes it (plus hex
/// escapes for control characters, which GBNF cannot hold raw).
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_control(c) && c != '\t' => push_hex(&mut out, c),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn char_class(class: &CharClass) -> String {
    if let Some(spelling) = &class.spelling {
        return spelling.clone();
    }
    let mut out = String::from("[");
    if class.negated {
        out.push('^');
    }
    let last = class.items.len().saturating_sub(1);
    for (i, item) in class.items.iter().enumerate() {
        match *item {
            ClassItem::Char(c) => push_class_char(&mut out, c, i == 0 || i == last, i == 0),
            ClassItem::Range(lo, hi) => {
                push_class_char(&mut out, lo, false, i == 0);
                out.push('-');
                push_class_char(&mut out, hi, false, false);
            }
        }
    }
    out.push(']');
    out
}

fn push_class_char(out: &mut String, c: char, dash_is_literal: bool, is_first: bool) {
    match c {
        '\\' => out.push_str("\\\\"),
        ']' => out.push_str("\\]"),
        '-' if !dash_is_literal => out.push_str("\\-"),
        '^' if is_first => out.push_str("\\x5E"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if is_control(c) => push_hex(out, c),
        c => out.push(c),
    }
}

fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || c == '\x7f'
}

fn push_hex(out: &mut String, c: char) {
    let _ = write!(out, "\\x{:02X}", c as u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_first_alternative_prints_as_llama_cpp_writes_it() {
        let space = Expr::Alt(vec![
            Expr::Empty,
            Expr::literal(" "),
            Expr::Seq(vec![
                Expr::literal("\n"),
                Expr::repeat(
                    Expr::Class(CharClass::new(
                        false,
                        vec![ClassItem::Char(' '), ClassItem::Char('\t')],
                    )),
                    0,
                    Some(20),
                ),
            ]),
        ]);
        assert_eq!(expr(&space).unwrap(), r#"| " " | "\n" [ \t]{0,20}"#);
    }

    #[test]
    fn class_escapes_keep_dash_literal_at_the_edges() {
        let class = CharClass::new(false, vec![ClassItem::Char('-'), ClassItem::Char('+')]);
        assert_eq!(char_class(&class), "[-+]");
        let class = CharClass::new(
            true,
            vec![
                ClassItem::Char('"'),
                ClassItem::Char('\\'),
                ClassItem::Char('\x7f'),
                ClassItem::Range('\0', '\x1f'),
            ],
        );
        assert_eq!(char_class(&class), r#"[^"\\\x7F\x00-\x1F]"#);
    }

    #[test]
    fn repetitions_and_groups() {
        let digit = Expr::range('0', '9');
        assert_eq!(
            expr(&Expr::repeat(digit.clone(), 3, Some(3))).unwrap(),
            "[0-9]{3}"
        );
        assert_eq!(
            expr(&Expr::repeat(Expr::reference("item"), 3, Some(3))).unwrap(),
            "item{3,3}"
        );
        let seq = Expr::Seq(vec![Expr::literal(","), Expr::reference("value")]);
        assert_eq!(
            expr(&Expr::repeat(seq, 0, None)).unwrap(),
            r#"("," value)*"#
        );
        let padded = Expr::Group {
            inner: Box::new(Expr::Alt(vec![Expr::literal("a"), digit])),
            padded: true,
        };
        assert_eq!(expr(&padded).unwrap(), r#"( "a" | [0-9] )"#);
    }

    #[test]
    fn an_empty_piece_in_a_sequence_keeps_its_blanks() {
        let object = Expr::Seq(vec![
            Expr::literal("{"),
            Expr::reference("space"),
            Expr::Empty,
            Expr::literal("}"),
        ]);
        assert_eq!(expr(&object).unwrap(), r#""{" space  "}""#);
        let trailing = Expr::group(Expr::Seq(vec![Expr::reference("a-kv"), Expr::Empty]));
        assert_eq!(expr(&trailing).unwrap(), "(a-kv )");
    }
}
