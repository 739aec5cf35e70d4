//! The one grammar representation. JSON Schema conversion, dialect call syntaxes and
//! user-sent GBNF all become this tree; printers turn it into GBNF for llama.cpp servers
//! and Lark for llguidance in-process. Nodes keep just enough of how llama.cpp writes
//! things (explicit groups, the spelling of a character class) for the GBNF printer to
//! reproduce llama.cpp's own converter byte for byte.

use serde_json::Value;

/// A set of named rules; `root` names the start rule.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grammar {
    pub root: String,
    pub rules: Vec<Rule>,
}

/// One production `name ::= body`. Names follow GBNF: letters, digits and `-`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub body: Expr,
}

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Matches the empty string (an empty alternative in GBNF).
    Empty,
    /// A literal string, matched exactly.
    Literal(String),
    /// One character from a class.
    Class(CharClass),
    /// Any one character (GBNF `.`).
    AnyChar,
    /// Another rule, by name.
    Ref(String),
    /// A special token of the model's vocabulary, matched as that token.
    Token(Token),
    /// A JSON value conforming to an embedded JSON Schema (Lark `%json {…}`).
    Json(Value),
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    /// Explicit parentheses; `padded` prints them as `( … )`, the way some of llama.cpp's
    /// built-in rules are written.
    Group {
        inner: Box<Expr>,
        padded: bool,
    },
    /// `item{min,max}`; `max: None` is unbounded.
    Repeat {
        item: Box<Expr>,
        min: u32,
        max: Option<u32>,
    },
}

/// A character class such as `[a-z_]` or `[^"\\]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CharClass {
    pub negated: bool,
    pub items: Vec<ClassItem>,
    /// The class as written (`[^\x0A\x0D]`), when it must print exactly so.
    pub spelling: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassItem {
    Char(char),
    Range(char, char),
}

/// A special token, by its text (`<|python_tag|>`) or by its id in the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Text(String),
    Id(u32),
}

/// What switches a lazy grammar on: generation is free until one of these appears, and
/// constrained from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// A word in the generated text, e.g. `<tool_call>` written as plain text.
    Word(String),
    /// A special token, e.g. `<|python_tag|>`.
    Token(Token),
}

impl Grammar {
    /// An empty grammar whose start rule is `root`.
    pub fn new(root: impl Into<String>) -> Self {
        Self {
            root: root.into(),
            rules: Vec::new(),
        }
    }

    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.name == name)
    }

    /// Adds every rule of `other` to this grammar and returns a reference to its root.
    /// A rule identical to one already here is shared; one whose name is taken by a
    /// different rule is renamed `{prefix}{name}`, and references to it follow.
    pub fn include(&mut self, other: Grammar, prefix: &str) -> Expr {
        let mut clashing: std::collections::HashSet<&str> = other
            .rules
            .iter()
            .filter(|rule| self.rule(&rule.name).is_some_and(|mine| mine != *rule))
            .map(|rule| rule.name.as_str())
            .collect();
        // A rule shared by name must also reach only shared rules.
        loop {
            let spreading: Vec<&str> = other
                .rules
                .iter()
                .filter(|rule| !clashing.contains(rule.name.as_str()))
                .filter(|rule| self.rule(&rule.name).is_some())
                .filter(|rule| rule.body.refers_to_any(&clashing))
                .map(|rule| rule.name.as_str())
                .collect();
            if spreading.is_empty() {
                break;
            }
            clashing.extend(spreading);
        }
        let renamed: std::collections::HashMap<String, String> = clashing
            .iter()
            .map(|name| (name.to_string(), format!("{prefix}{name}")))
            .collect();
        let new_name = |name: &str| {
            renamed
                .get(name)
                .cloned()
                .unwrap_or_else(|| name.to_string())
        };
        for mut rule in other.rules {
            rule.name = new_name(&rule.name);
            rule.body.rename_refs(&new_name);
            if self.rule(&rule.name).is_none() {
                self.rules.push(rule);
            }
        }
        Expr::Ref(new_name(&other.root))
    }

    /// Renames a rule and every reference to it (the root too, if it is the root).
    pub fn rename_rule(&mut self, old: &str, new: &str) {
        let new_name = |name: &str| {
            if name == old {
                new.to_string()
            } else {
                name.to_string()
            }
        };
        for rule in &mut self.rules {
            rule.name = new_name(&rule.name);
            rule.body.rename_refs(&new_name);
        }
        self.root = new_name(&self.root);
    }

    /// Adds a rule, or replaces the body of the rule with that name.
    pub fn set_rule(&mut self, name: impl Into<String>, body: Expr) {
        let name = name.into();
        match self.rules.iter_mut().find(|rule| rule.name == name) {
            Some(rule) => rule.body = body,
            None => self.rules.push(Rule { name, body }),
        }
    }

    /// What `e` admits after `trigger`: its alternatives that begin with the trigger, each
    /// without it, as the rest of a lazy grammar once its trigger has appeared. `None`
    /// where none begins with it (or they nest too deep to tell).
    pub fn after_trigger(&self, e: &Expr, trigger: &Trigger) -> Option<Expr> {
        self.after_trigger_at(e, trigger, 0)
    }

    fn after_trigger_at(&self, e: &Expr, trigger: &Trigger, depth: usize) -> Option<Expr> {
        if depth > 32 {
            return None;
        }
        let next = |e: &Expr| self.after_trigger_at(e, trigger, depth + 1);
        match (e, trigger) {
            (Expr::Literal(text), Trigger::Word(word)) => {
                text.strip_prefix(word.as_str()).map(|rest| {
                    if rest.is_empty() {
                        Expr::Empty
                    } else {
                        Expr::literal(rest)
                    }
                })
            }
            (Expr::Token(token), Trigger::Token(wanted)) if token == wanted => Some(Expr::Empty),
            (Expr::Ref(name), _) => next(&self.rule(name)?.body),
            (Expr::Group { inner, .. }, _) => next(inner),
            (Expr::Alt(items), _) => {
                let rests: Vec<Expr> = items.iter().filter_map(next).collect();
                match rests.len() {
                    0 => None,
                    1 => rests.into_iter().next(),
                    _ => Some(Expr::group(Expr::Alt(rests))),
                }
            }
            (Expr::Seq(items), _) => {
                let (first, tail) = items.split_first()?;
                let mut seq = vec![next(first)?];
                seq.extend(tail.iter().cloned());
                Some(Expr::Seq(seq))
            }
            _ => None,
        }
    }
}

impl Expr {
    pub fn literal(text: impl Into<String>) -> Self {
        Expr::Literal(text.into())
    }

    pub fn reference(name: impl Into<String>) -> Self {
        Expr::Ref(name.into())
    }

    pub fn group(inner: Expr) -> Self {
        Expr::Group {
            inner: Box::new(inner),
            padded: false,
        }
    }

    pub fn repeat(item: Expr, min: u32, max: Option<u32>) -> Self {
        Expr::Repeat {
            item: Box::new(item),
            min,
            max,
        }
    }

    pub fn optional(item: Expr) -> Self {
        Self::repeat(item, 0, Some(1))
    }

    /// `[lo-hi]`
    pub fn range(lo: char, hi: char) -> Self {
        Expr::Class(CharClass::new(false, vec![ClassItem::Range(lo, hi)]))
    }

    /// True when the expression prints as one unit that a suffix such as `*` can follow.
    pub fn is_atomic(&self) -> bool {
        !matches!(self, Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. })
    }

    /// Whether this expression refers to any of the named rules.
    pub fn refers_to_any(&self, names: &std::collections::HashSet<&str>) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e, Expr::Ref(name) if names.contains(name.as_str())));
        found
    }

    /// Rewrites every rule reference inside this expression.
    pub fn rename_refs(&mut self, new_name: &impl Fn(&str) -> String) {
        match self {
            Expr::Ref(name) => *name = new_name(name),
            Expr::Seq(items) | Expr::Alt(items) => {
                items.iter_mut().for_each(|e| e.rename_refs(new_name))
            }
            Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => {
                item.rename_refs(new_name)
            }
            _ => {}
        }
    }

    /// Visits this expression and every expression inside it, depth first.
    /// Replaces each literal for which `replace` gives an expression.
    pub fn map_literals(&mut self, replace: &mut impl FnMut(&str) -> Option<Expr>) {
        match self {
            Expr::Literal(text) => {
                if let Some(replaced) = replace(text) {
                    *self = replaced;
                }
            }
            Expr::Seq(items) | Expr::Alt(items) => {
                items.iter_mut().for_each(|e| e.map_literals(replace))
            }
            Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => {
                item.map_literals(replace)
            }
            _ => {}
        }
    }

    pub fn walk<'a>(&'a self, visit: &mut impl FnMut(&'a Expr)) {
        visit(self);
        match self {
            Expr::Seq(items) | Expr::Alt(items) => items.iter().for_each(|e| e.walk(visit)),
            Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => item.walk(visit),
            _ => {}
        }
    }
}

impl CharClass {
    pub fn new(negated: bool, items: Vec<ClassItem>) -> Self {
        Self {
            negated,
            items,
            spelling: None,
        }
    }

    /// Whether `c` is in the class.
    pub fn matches(&self, c: char) -> bool {
        let listed = self.items.iter().any(|item| match *item {
            ClassItem::Char(x) => x == c,
            ClassItem::Range(lo, hi) => lo <= c && c <= hi,
        });
        listed != self.negated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_shares_identical_rules_and_renames_clashing_ones() {
        let mut a = Grammar::new("root");
        a.set_rule("space", Expr::literal(" "));
        a.set_rule("value", Expr::literal("a"));
        let mut b = Grammar::new("root");
        b.set_rule(
            "root",
            Expr::Seq(vec![Expr::reference("value"), Expr::reference("space")]),
        );
        b.set_rule("space", Expr::literal(" "));
        b.set_rule("value", Expr::literal("b"));
        let root = a.include(b, "t0-");
        assert_eq!(root, Expr::reference("root"));
        assert_eq!(
            a.rule("root").map(|r| &r.body),
            Some(&Expr::Seq(vec![
                Expr::reference("t0-value"),
                Expr::reference("space")
            ]))
        );
        assert_eq!(
            a.rule("t0-value").map(|r| &r.body),
            Some(&Expr::literal("b"))
        );
        assert_eq!(a.rules.len(), 4);
    }
}
