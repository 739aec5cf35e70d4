//! Prints the grammar tree as Lark, the notation llguidance reads in-process. GBNF names
//! become Lark rule names (lowercase, `_` for `-`, made unique), literals become JSON-quoted
//! strings, character classes become one-character regexes, and an embedded JSON schema
//! becomes `%json {…}` so llguidance enforces it natively (its objects closed to unlisted
//! properties and its whitespace bounded as our converter reads them:
//! [`schema::for_llguidance`]).
//!
//! A lazy grammar (one that only constrains from a trigger on, as tool calls need) is
//! printed as free text ending in the trigger, followed by what the grammar's root admits
//! after that trigger. llguidance's `[lazy]` rule stops the free text at the first trigger.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::schema;
use crate::tree::{CharClass, ClassItem, Expr, Grammar, Token, Trigger};

/// The grammar as a Lark program whose `start` is the grammar's root.
pub fn print(grammar: &Grammar) -> String {
    let names = LarkNames::new(grammar);
    let mut out = String::from("%llguidance {}\n\n");
    let _ = writeln!(out, "start: {}", names.get(&grammar.root));
    print_rules(&mut out, grammar, &names);
    out
}

/// The grammar as a lazy Lark program: any text, and once a trigger appears, the rest must
/// be what the root admits after that trigger. The root is written as llama.cpp's lazy
/// grammars are, starting with the trigger itself (`root ::= "<tool_call>" …`).
pub fn print_lazy(grammar: &Grammar, triggers: &[Trigger]) -> String {
    let names = LarkNames::new(grammar);
    let mut out = String::from("%llguidance {}\n\n");
    let mut starts = vec!["free_text".to_string()];
    let mut extra = String::new();
    let root = grammar.rule(&grammar.root).map(|rule| rule.body.clone());
    for (i, trigger) in triggers.iter().enumerate() {
        let Some(rest) = root
            .as_ref()
            .and_then(|r| grammar.after_trigger(r, trigger))
        else {
            continue;
        };
        let rest = expr(&rest, &names);
        match trigger {
            Trigger::Word(word) => {
                starts.push(format!("until_trigger_{i} {rest}"));
                let _ = writeln!(
                    extra,
                    "until_trigger_{i}[lazy]: /(?s:.*){}/",
                    regex_escape(word)
                );
            }
            Trigger::Token(token) => {
                starts.push(format!("free_text {} {rest}", token_text(token)));
            }
        }
    }
    let _ = writeln!(out, "start: {}", starts.join("\n     | "));
    let _ = writeln!(out, "free_text: /(?s:.*)/");
    out.push_str(&extra);
    print_rules(&mut out, grammar, &names);
    out
}

fn print_rules(out: &mut String, grammar: &Grammar, names: &LarkNames) {
    for rule in &grammar.rules {
        let _ = writeln!(
            out,
            "{}: {}",
            names.get(&rule.name),
            expr(&rule.body, names)
        );
    }
}

/// Maps GBNF rule names to distinct Lark rule names.
struct LarkNames(HashMap<String, String>);

impl LarkNames {
    fn new(grammar: &Grammar) -> Self {
        let reserved = ["start", "free_text"];
        let mut taken: HashSet<String> = reserved.iter().map(|s| s.to_string()).collect();
        let mut map = HashMap::new();
        for rule in &grammar.rules {
            let base = lark_name(&rule.name);
            let mut name = base.clone();
            let mut n = 1;
            while taken.contains(&name) || name.starts_with("until_trigger_") {
                name = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(name.clone());
            map.insert(rule.name.clone(), name);
        }
        Self(map)
    }

    /// The Lark name of a rule; a reference to an unknown rule keeps a name llguidance
    /// will report as undefined.
    fn get(&self, name: &str) -> String {
        self.0.get(name).cloned().unwrap_or_else(|| lark_name(name))
    }
}

fn lark_name(gbnf: &str) -> String {
    let mut name: String = gbnf
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "r_");
    }
    name
}

fn expr(e: &Expr, names: &LarkNames) -> String {
    match e {
        Expr::Empty => "\"\"".to_string(),
        Expr::Literal(text) => char_by_char(text),
        Expr::Class(class) => format!("/{}/", class_regex(class)),
        Expr::AnyChar => "/(?s:.)/".to_string(),
        Expr::Ref(name) => names.get(name),
        Expr::Token(token) => token_text(token),
        Expr::Json(schema) => format!("%json {}", schema::for_llguidance(schema)),
        Expr::Seq(items) if items.is_empty() => "\"\"".to_string(),
        Expr::Seq(items) => items
            .iter()
            .filter(|item| **item != Expr::Empty)
            .map(|item| match item {
                Expr::Alt(_) => format!("({})", expr(item, names)),
                _ => expr(item, names),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Expr::Alt(items) => items
            .iter()
            .map(|item| expr(item, names))
            .collect::<Vec<_>>()
            .join(" | "),
        Expr::Group { inner, .. } => format!("({})", expr(inner, names)),
        Expr::Repeat { item, min, max } => {
            let printed = expr(item, names);
            let item = if item.is_atomic() {
                printed
            } else {
                format!("({printed})")
            };
            format!(
                "{item}{}",
                crate::gbnf::print::repetition_suffix(*min, *max)
            )
        }
    }
}

/// A literal as a sequence of one-character literals. llguidance lexes greedily: a
/// multi-character literal that shares a start with another allowed lexeme and fails
/// more than one character on would reject text the grammar admits. One character per
/// lexeme keeps GBNF's meaning exactly.
fn char_by_char(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (None, _) | (Some(_), None) => quoted(text),
        _ => {
            let pieces: Vec<String> = text
                .chars()
                .map(|c| quoted(c.encode_utf8(&mut [0; 4])))
                .collect();
            format!("({})", pieces.join(" "))
        }
    }
}

fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

fn token_text(token: &Token) -> String {
    match token {
        Token::Text(text) => text.clone(),
        Token::Id(id) => format!("<[{id}]>"),
    }
}

/// A character class as a regex class, every character spelled so that neither the regex
/// syntax nor Lark's `/…/` delimiters can misread it.
fn class_regex(class: &CharClass) -> String {
    if class.items.is_empty() {
        return if class.negated {
            "(?s:.)"
        } else {
            "[^\\x{0}-\\x{10FFFF}]"
        }
        .to_string();
    }
    let mut out = String::from(if class.negated { "[^" } else { "[" });
    for item in &class.items {
        match *item {
            ClassItem::Char(c) => push_regex_char(&mut out, c),
            ClassItem::Range(lo, hi) => {
                push_regex_char(&mut out, lo);
                out.push('-');
                push_regex_char(&mut out, hi);
            }
        }
    }
    out.push(']');
    out
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    text.chars().for_each(|c| push_regex_char(&mut out, c));
    out
}

fn push_regex_char(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) || c == '/' || c == '"' {
        out.push('\\');
        out.push(c);
    } else if c.is_ascii_graphic() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace()) {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

/// What `e` admits after the trigger, or `None` when `e` cannot start with it. Rule
/// references are followed to a bounded depth; repetitions are not looked into.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_unique_lark_rule_names() {
        let mut g = Grammar::new("root");
        g.set_rule("root", Expr::reference("Item-1"));
        g.set_rule("Item-1", Expr::reference("item_1"));
        g.set_rule("item_1", Expr::literal("x"));
        let lark = print(&g);
        assert!(lark.contains("start: root\n"), "{lark}");
        assert!(lark.contains("root: item_1\n"), "{lark}");
        assert!(lark.contains("item_1: item_1_1\n"), "{lark}");
        assert!(lark.contains("item_1_1: \"x\"\n"), "{lark}");
    }

    #[test]
    fn classes_escape_every_delimiter() {
        let class = CharClass::new(
            true,
            vec![
                ClassItem::Char('"'),
                ClassItem::Char('\\'),
                ClassItem::Char('/'),
                ClassItem::Char(']'),
                ClassItem::Range('\0', '\x1f'),
            ],
        );
        assert_eq!(class_regex(&class), r#"[^\"\\\/\]\x{0}-\x{1F}]"#);
    }

    #[test]
    fn the_rest_after_a_word_trigger_drops_the_trigger() {
        let mut g = Grammar::new("root");
        g.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>\n"),
                Expr::reference("call"),
            ]),
        );
        let rest = g.after_trigger(&g.rules[0].body, &Trigger::Word("<tool_call>".into()));
        assert_eq!(
            rest,
            Some(Expr::Seq(vec![
                Expr::literal("\n"),
                Expr::reference("call")
            ]))
        );
    }
}
