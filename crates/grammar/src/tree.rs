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

    /// Adds a rule, or replaces the body of the rule with that name.
    pub fn set_rule(&mut self, name: impl Into<String>, body: Expr) {
        let name = name.into();
        match self.rules.iter_mut().find(|rule| rule.name == name) {
            Some(rule) => rule.body = body,
            None => self.rules.push(Rule { name, body }),
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

    /// Visits this expression and every expression inside it, depth first.
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
