//! Reads GBNF, llama.cpp's grammar notation, into the grammar tree.
//!
//! Users send GBNF (the `grammar` field of a request, a grammar file on the command line)
//! and expect it to mean here exactly what it means to a llama.cpp server, whether we run
//! it through llguidance in-process or forward it. So this parser follows llama.cpp's own
//! (`src/llama-grammar.cpp`, the `parse_*` functions) step by step rather than a cleaner
//! reading of the notation:
//!
//! - rule names are `[a-zA-Z0-9-]+` (no `_`); a rule is `name ::= alternatives` and ends at
//!   a newline, except inside parentheses and right after `|` or `::=` (so `a ::=` or
//!   `a ::= "x" |` at the end of a line runs on into the next line, as in llama.cpp);
//! - `#` starts a comment wherever blanks may stand;
//! - `"…"` literals and `[…]` classes take the escapes `\xHH`, `\uHHHH`, `\UHHHHHHHH`,
//!   `\t \r \n \\ \" \[ \] \-`, and any other character raw (newlines included);
//! - in a class, `^` first negates and `a-z` is a range unless the `-` is followed by `]`;
//! - `.` is any character, `(…)` groups, `|` separates alternatives (any may be empty);
//! - postfix `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` repeat the item before them, and may
//!   follow each other (`x*?`);
//! - `<[123]>` is the token with id 123 and `<…>` (up to the first `>`) a token by its text.
//!
//! Where llama.cpp's quirks decide a meaning, we keep them: a later definition of a rule
//! replaces the earlier one; `[]` and `[^]` push nothing and so match the empty string
//! (they become `""` here), and neither `""` nor `[]` may take a repetition; a bound above
//! 2000 in `{m,n}` makes the repetition unbounded; the product of nested repetition
//! counts is limited as llama.cpp limits it (`MAX_REPETITION_THRESHOLD`).
//!
//! We are stricter where llama.cpp would crash, hang or silently misread: `{5,2}`,
//! escapes that are no Unicode scalar value (`\uD800`), a raw NUL (llama.cpp stops reading
//! there), numbers that overflow, nesting deeper than [`MAX_NESTING`], and `!<…>` (negated
//! tokens, which the tree cannot express). Undefined rules, a missing start rule and left
//! recursion (`expr ::= expr "+" term`) are errors here at parse time, as they are when
//! llama.cpp builds the grammar; left recursion is judged on llama.cpp's own expansion of
//! the grammar, so exactly the grammars it refuses are refused.
//!
//! The tree keeps the text's shape: rules in the order they are first defined, one
//! `Literal` per quoted string, an `Expr::Group` for each pair of parentheses (`padded`
//! when a blank follows the `(`), `{m}` as `Repeat { min: m, max: Some(m) }`. A repetition
//! of a repetition (`x*?`) gets a group around its item, as the printer writes it, so that
//! parsing what `gbnf::print` prints gives back the same tree.
//!
//! Every error is a [`GrammarErrorKind::Syntax`] with a 1-based line and column (columns count
//! characters; `\n`, `\r\n` and a lone `\r` each end a line).

use std::collections::{HashMap, HashSet};

use crate::error::{GrammarError, GrammarErrorKind};
use crate::tree::{CharClass, ClassItem, Expr, Grammar, Rule, Token};

/// How deeply groups and repetition operators may nest. Parsing, printing and dropping
/// the tree recurse once per level; this keeps them far from the stack's end.
pub const MAX_NESTING: usize = 256;

/// llama.cpp's `MAX_REPETITION_THRESHOLD`: the most copies a repetition may expand to.
pub const MAX_REPETITION: u64 = 2000;

/// Parses a GBNF grammar whose start rule is `root`.
pub fn parse(text: &str) -> Result<Grammar, GrammarError> {
    parse_with_root(text, "root")
}

/// Parses a GBNF grammar whose start rule is `root`, which must be defined.
pub fn parse_with_root(text: &str, root: &str) -> Result<Grammar, GrammarError> {
    Parser::new(text)
        .grammar(root)
        .map_err(|failure| failure.into_error(text))
}

/// Parses GBNF from raw bytes, as read from a file or a request body: text that is not
/// UTF-8 is a syntax error at the first bad byte.
pub fn parse_bytes(bytes: &[u8], root: &str) -> Result<Grammar, GrammarError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_with_root(text, root),
        Err(error) => {
            let valid = String::from_utf8_lossy(bytes.get(..error.valid_up_to()).unwrap_or(&[]));
            let failure = Failure::new(valid.len(), "invalid UTF-8");
            Err(failure.into_error(&valid))
        }
    }
}

/// A parse error before it is given a line and column.
#[derive(Debug)]
struct Failure {
    offset: usize,
    message: String,
}

impl Failure {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        Self {
            offset,
            message: message.into(),
        }
    }

    fn into_error(self, text: &str) -> GrammarError {
        let (line, column) = line_column(text, self.offset);
        GrammarError::new(GrammarErrorKind::Syntax { line, column }, self.message)
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let (mut line, mut column, mut after_cr) = (1, 1, false);
    for c in before.chars() {
        match c {
            '\n' if after_cr => {}
            '\n' | '\r' => {
                line += 1;
                column = 1;
            }
            _ => column += 1,
        }
        after_cr = c == '\r';
    }
    (line, column)
}

type Parsed<T> = Result<T, Failure>;

/// llama.cpp's symbol table, counted rather than kept: its repetition limit depends on how
/// many rules a group generated, and a name seen for the first time is one of them.
#[derive(Default)]
struct Symbols {
    names: HashSet<String>,
    count: u64,
}

impl Symbols {
    fn name(&mut self, name: &str) {
        if !self.names.contains(name) {
            self.names.insert(name.to_string());
            self.count += 1;
        }
    }

    fn generate(&mut self, n: u64) {
        self.count = self.count.saturating_add(n);
    }
}

/// The items of one sequence while it is being read.
struct Sequence {
    items: Vec<Expr>,
    /// Whether the last item may take a repetition (llama.cpp: it pushed any element).
    repeatable: bool,
    /// How many rules the last item stands for (llama.cpp's `n_prev_rules`).
    weight: u64,
    /// How many repetition operators the last item carries.
    chain: usize,
}

impl Sequence {
    fn new() -> Self {
        Self {
            items: Vec::new(),
            repeatable: false,
            weight: 1,
            chain: 0,
        }
    }

    fn push(&mut self, item: Expr, repeatable: bool, weight: u64) {
        self.items.push(item);
        self.repeatable = repeatable;
        self.weight = weight;
        self.chain = 0;
    }

    fn finish(mut self) -> Expr {
        self.items.retain(|item| *item != Expr::Empty);
        match self.items.len() {
            0 => Expr::Empty,
            1 => self.items.pop().unwrap_or(Expr::Empty),
            _ => Expr::Seq(self.items),
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// Open groups around the current position.
    depth: usize,
    symbols: Symbols,
    rules: Vec<Rule>,
    index: HashMap<String, usize>,
    /// Where each rule's (last) definition starts, by rule index.
    definitions: Vec<usize>,
    /// Each referenced name with the offset of its first reference, in text order.
    references: Vec<(String, usize)>,
    referenced: HashSet<String>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 0,
            depth: 0,
            symbols: Symbols::default(),
            rules: Vec::new(),
            index: HashMap::new(),
            definitions: Vec::new(),
            references: Vec::new(),
            referenced: HashSet::new(),
        }
    }

    fn grammar(mut self, root: &str) -> Parsed<Grammar> {
        self.skip_space(true);
        while self.peek().is_some() {
            self.rule()?;
        }
        self.check_references()?;
        if !self.index.contains_key(root) {
            let what = if self.rules.is_empty() {
                "empty grammar"
            } else {
                "missing start rule"
            };
            return Err(Failure::new(0, format!("{what}: no rule named `{root}`")));
        }
        if let Some((rule, message)) = left_recursion(&self.rules, &self.index) {
            let offset = self.definitions.get(rule).copied().unwrap_or(0);
            return Err(Failure::new(offset, message));
        }
        Ok(Grammar {
            root: root.to_string(),
            rules: self.rules,
        })
    }

    /// `name ::= alternatives` up to the end of its line.
    fn rule(&mut self) -> Parsed<()> {
        let start = self.pos;
        let Some(name) = self.name() else {
            return Err(self.expected_rule_name());
        };
        self.symbols.name(name);
        self.skip_space(false);
        if !self.rest().starts_with("::=") {
            return Err(self.expected_definition(name));
        }
        self.pos += 3;
        self.skip_space(true);
        let body = self.alternates(false)?;
        self.end_of_rule()?;
        self.skip_space(true);
        self.define(name, body, start);
        Ok(())
    }

    fn expected_rule_name(&self) -> Failure {
        let found = self.describe_here();
        let line_start = self.text.get(..self.pos).map_or("", |before| {
            before.rsplit(['\n', '\r']).next().unwrap_or_default()
        });
        let indented =
            !line_start.is_empty() && line_start.bytes().all(|b| b == b' ' || b == b'\t');
        let hint = if self.peek() == Some(b'|') || indented {
            " (a rule goes on past the end of its line only inside parentheses or right after `|`)"
        } else {
            ""
        };
        Failure::new(
            self.pos,
            format!("expecting a rule name, found {found}{hint}"),
        )
    }

    fn expected_definition(&self, name: &str) -> Failure {
        let hint = if self.peek() == Some(b'_') {
            " (rule names are letters, digits and `-`; `_` is not allowed)"
        } else {
            ""
        };
        let found = self.describe_here();
        Failure::new(
            self.pos,
            format!("expecting `::=` after the rule name `{name}`, found {found}{hint}"),
        )
    }

    fn end_of_rule(&mut self) -> Parsed<()> {
        match self.peek() {
            None => {}
            Some(b'\n') => self.pos += 1,
            Some(b'\r') => {
                self.pos += 1;
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
            }
            Some(b')') => return Err(Failure::new(self.pos, "unmatched `)`")),
            Some(_) => {
                let found = self.describe_here();
                return Err(Failure::new(
                    self.pos,
                    format!("expecting the end of the rule (a newline), found {found}"),
                ));
            }
        }
        Ok(())
    }

    /// Adds a rule; as in llama.cpp, a second definition replaces the first.
    fn define(&mut self, name: &str, body: Expr, start: usize) {
        match self.index.get(name) {
            Some(&i) => {
                if let Some(rule) = self.rules.get_mut(i) {
                    rule.body = body;
                }
                if let Some(offset) = self.definitions.get_mut(i) {
                    *offset = start;
                }
            }
            None => {
                self.index.insert(name.to_string(), self.rules.len());
                self.definitions.push(start);
                self.rules.push(Rule {
                    name: name.to_string(),
                    body,
                });
            }
        }
    }

    /// Every name the final rules refer to must be defined; the first reference in the
    /// text to an undefined one is reported.
    fn check_references(&self) -> Parsed<()> {
        let mut used = HashSet::new();
        for rule in &self.rules {
            rule.body.walk(&mut |e| {
                if let Expr::Ref(name) = e {
                    used.insert(name.as_str());
                }
            });
        }
        let undefined = self
            .references
            .iter()
            .find(|(name, _)| used.contains(name.as_str()) && !self.index.contains_key(name));
        match undefined {
            Some((name, offset)) => Err(Failure::new(
                *offset,
                format!("undefined rule identifier `{name}`"),
            )),
            None => Ok(()),
        }
    }

    /// Sequences separated by `|`; a newline may follow each `|`.
    fn alternates(&mut self, nested: bool) -> Parsed<Expr> {
        let first = self.sequence(nested)?;
        let mut rest = Vec::new();
        while self.peek() == Some(b'|') {
            self.pos += 1;
            self.skip_space(true);
            rest.push(self.sequence(nested)?);
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr::Alt(std::iter::once(first).chain(rest).collect())
        })
    }

    /// Items and their repetitions, up to something that is neither.
    fn sequence(&mut self, nested: bool) -> Parsed<Expr> {
        let mut seq = Sequence::new();
        while let Some(byte) = self.peek() {
            match byte {
                b'"' => {
                    let text = self.literal()?;
                    let repeatable = !text.is_empty();
                    let item = if repeatable {
                        Expr::Literal(text)
                    } else {
                        Expr::Empty
                    };
                    seq.push(item, repeatable, 1);
                }
                b'[' => {
                    let item = self.class()?;
                    let repeatable = item != Expr::Empty;
                    seq.push(item, repeatable, 1);
                }
                b'<' => seq.push(Expr::Token(self.token()?), true, 1),
                b'(' => {
                    let before = self.symbols.count;
                    let group = self.group()?;
                    let weight = self.symbols.count.saturating_sub(before).max(1);
                    seq.push(group, true, weight);
                }
                b'.' => {
                    self.pos += 1;
                    seq.push(Expr::AnyChar, true, 1);
                }
                b'*' | b'+' | b'?' | b'{' => self.repetition(&mut seq, nested)?,
                b'!' => return Err(self.negated_token()),
                b'\0' => return Err(Failure::new(self.pos, "NUL character in the grammar")),
                b if is_word_byte(b) => {
                    let item = self.reference();
                    seq.push(item, true, 1);
                }
                _ => break,
            }
            self.skip_space(nested);
        }
        Ok(seq.finish())
    }

    fn negated_token(&self) -> Failure {
        Failure::new(
            self.pos,
            "negated tokens (`!<…>`) are not supported: the grammar tree has no node for them",
        )
    }

    fn reference(&mut self) -> Expr {
        let start = self.pos;
        let name = self.name().unwrap_or_default();
        self.symbols.name(name);
        if self.referenced.insert(name.to_string()) {
            self.references.push((name.to_string(), start));
        }
        Expr::Ref(name.to_string())
    }

    /// `[a-zA-Z0-9-]+` at the current position, if any.
    fn name(&mut self) -> Option<&'a str> {
        let text = self.text;
        let start = self.pos;
        let len = self.rest().bytes().take_while(|&b| is_word_byte(b)).count();
        self.pos += len;
        text.get(start..self.pos).filter(|name| !name.is_empty())
    }

    /// `"…"`
    fn literal(&mut self) -> Parsed<String> {
        let open = self.pos;
        self.pos += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(Failure::new(
                        open,
                        "unterminated literal: missing the closing `\"`",
                    ))
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some(_) => text.push(self.char()?),
            }
        }
    }

    /// `[…]`, `[^…]`; an empty class matches the empty string, as in llama.cpp.
    fn class(&mut self) -> Parsed<Expr> {
        let open = self.pos;
        self.pos += 1;
        let negated = self.peek() == Some(b'^');
        if negated {
            self.pos += 1;
        }
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None => return Err(unterminated_class(open)),
                Some(b']') => break,
                Some(_) => items.push(self.class_item(open)?),
            }
        }
        self.pos += 1;
        Ok(if items.is_empty() {
            Expr::Empty
        } else {
            Expr::Class(CharClass::new(negated, items))
        })
    }

    /// One character of a class, or a range `lo-hi` unless the `-` is followed by `]`.
    fn class_item(&mut self, open: usize) -> Parsed<ClassItem> {
        let lo = self.char()?;
        if self.peek() != Some(b'-') || self.peek_at(1) == Some(b']') {
            return Ok(ClassItem::Char(lo));
        }
        if self.peek_at(1).is_none() {
            return Err(unterminated_class(open));
        }
        self.pos += 1;
        Ok(ClassItem::Range(lo, self.char()?))
    }

    /// One character of a literal or class: an escape, or any character as it stands.
    fn char(&mut self) -> Parsed<char> {
        let start = self.pos;
        let Some(c) = self.rest().chars().next() else {
            return Err(Failure::new(start, "unexpected end of input"));
        };
        if c == '\0' {
            return Err(Failure::new(start, "NUL character in the grammar"));
        }
        self.pos += c.len_utf8();
        if c != '\\' {
            return Ok(c);
        }
        let Some(escape) = self.rest().chars().next() else {
            return Err(Failure::new(
                start,
                "unterminated escape at the end of input",
            ));
        };
        self.pos += escape.len_utf8();
        match escape {
            'x' => self.hex(start, 2),
            'u' => self.hex(start, 4),
            'U' => self.hex(start, 8),
            't' => Ok('\t'),
            'r' => Ok('\r'),
            'n' => Ok('\n'),
            '\\' | '"' | '[' | ']' | '-' => Ok(escape),
            other => Err(Failure::new(
                start,
                format!("unknown escape `\\{}`", other.escape_debug()),
            )),
        }
    }

    /// The `digits` hex digits of `\x`, `\u` or `\U` escape starting at `start`.
    fn hex(&mut self, start: usize, digits: usize) -> Parsed<char> {
        let mut value: u32 = 0;
        for i in 0..digits {
            let digit = self.peek_at(i).and_then(|b| char::from(b).to_digit(16));
            match digit {
                Some(d) => value = value * 16 + d,
                None => {
                    let escape = self.text.get(start..start + 2).unwrap_or("\\");
                    return Err(Failure::new(
                        start,
                        format!("expecting {digits} hex digits after `{escape}`"),
                    ));
                }
            }
        }
        self.pos += digits;
        char::from_u32(value).ok_or_else(|| {
            Failure::new(
                start,
                format!("escape U+{value:04X} is not a Unicode scalar value"),
            )
        })
    }

    /// `<[id]>` or `<text>`.
    fn token(&mut self) -> Parsed<Token> {
        let open = self.pos;
        self.pos += 1;
        if self.peek() == Some(b'[') {
            return self.token_id(open);
        }
        let Some(len) = self.rest().find('>') else {
            return Err(Failure::new(open, "unterminated token: missing `>`"));
        };
        self.pos += len + 1;
        let text = self.text.get(open..self.pos).unwrap_or_default();
        Ok(Token::Text(text.to_string()))
    }

    fn token_id(&mut self, open: usize) -> Parsed<Token> {
        self.pos += 1;
        let id = self.number("expecting a token id after `<[`")?;
        let id = u32::try_from(id)
            .map_err(|_| Failure::new(open, format!("token id {id} is out of range")))?;
        for close in [b']', b'>'] {
            if self.peek() != Some(close) {
                let found = self.describe_here();
                return Err(Failure::new(
                    self.pos,
                    format!(
                        "expecting `{}` in `<[{id}]>`, found {found}",
                        char::from(close)
                    ),
                ));
            }
            self.pos += 1;
        }
        Ok(Token::Id(id))
    }

    /// `( alternatives )`, over any number of lines.
    fn group(&mut self) -> Parsed<Expr> {
        let open = self.pos;
        self.pos += 1;
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(too_deep(open));
        }
        let padded = matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n'));
        self.symbols.generate(1);
        self.skip_space(true);
        let inner = self.alternates(true)?;
        match self.peek() {
            Some(b')') => self.pos += 1,
            None => {
                let (line, column) = line_column(self.text, open);
                return Err(Failure::new(
                    self.pos,
                    format!("unterminated group: missing `)` for the `(` at line {line}, column {column}"),
                ));
            }
            Some(_) => {
                let found = self.describe_here();
                return Err(Failure::new(
                    self.pos,
                    format!("expecting `)`, found {found}"),
                ));
            }
        }
        self.depth -= 1;
        Ok(Expr::Group {
            inner: Box::new(inner),
            padded,
        })
    }

    /// A postfix operator, applied to the sequence's last item.
    fn repetition(&mut self, seq: &mut Sequence, nested: bool) -> Parsed<()> {
        let at = self.pos;
        let (min, max) = match self.peek() {
            Some(b'{') => self.braces(nested)?,
            Some(b'+') => (1, None),
            Some(b'?') => (0, Some(1)),
            _ => (0, None),
        };
        if self.pos == at {
            self.pos += 1;
        }
        self.repeat(seq, at, min, max)
    }

    /// `{m}`, `{m,}` or `{m,n}`, with blanks allowed inside.
    fn braces(&mut self, nested: bool) -> Parsed<(u64, Option<u64>)> {
        let open = self.pos;
        self.pos += 1;
        self.skip_space(nested);
        let min = self.number("expecting a number after `{`")?;
        self.skip_space(nested);
        let max = match self.peek() {
            Some(b'}') => Some(min),
            Some(b',') => {
                self.pos += 1;
                self.skip_space(nested);
                let max = match self.peek() {
                    Some(b) if b.is_ascii_digit() => Some(self.number("")?),
                    _ => None,
                };
                self.skip_space(nested);
                if self.peek() != Some(b'}') {
                    let found = self.describe_here();
                    return Err(Failure::new(
                        self.pos,
                        format!("expecting `}}`, found {found}"),
                    ));
                }
                max
            }
            _ => {
                let found = self.describe_here();
                return Err(Failure::new(
                    self.pos,
                    format!("expecting `,` or `}}`, found {found}"),
                ));
            }
        };
        self.pos += 1;
        check_bounds(open, min, max)
    }

    /// Wraps the last item of `seq` in a repetition, within llama.cpp's limits.
    fn repeat(&mut self, seq: &mut Sequence, at: usize, min: u64, max: Option<u64>) -> Parsed<()> {
        let item = match seq.items.pop() {
            Some(item) if seq.repeatable => item,
            _ => {
                let op = self.text.get(at..at + 1).unwrap_or("repetition");
                return Err(Failure::new(
                    at,
                    format!("`{op}` has no item before it to repeat"),
                ));
            }
        };
        let copies = match max {
            Some(max) if max > 0 => max,
            _ => min.max(1),
        };
        let weight = seq.weight.saturating_mul(copies);
        if weight >= MAX_REPETITION {
            return Err(Failure::new(
                at,
                format!("this repetition expands to {weight} copies; llama.cpp allows fewer than {MAX_REPETITION}"),
            ));
        }
        if self.depth + seq.chain + 1 > MAX_NESTING {
            return Err(too_deep(at));
        }
        self.symbols.generate(max.map_or(1, |max| max - min));
        let item = if item.is_atomic() {
            item
        } else {
            Expr::group(item)
        };
        // Both bounds are at most MAX_REPETITION here, so they fit.
        let (min, max) = (min as u32, max.map(|max| max as u32));
        seq.items.push(Expr::repeat(item, min, max));
        seq.weight = weight;
        seq.chain += 1;
        Ok(())
    }

    /// A decimal number; `what` is the message when there is none.
    fn number(&mut self, what: &str) -> Parsed<u64> {
        let start = self.pos;
        let len = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            let found = self.describe_here();
            return Err(Failure::new(start, format!("{what}, found {found}")));
        }
        self.pos += len;
        let digits = self.text.get(start..self.pos).unwrap_or_default();
        digits
            .parse()
            .map_err(|_| Failure::new(start, format!("number {digits} is too large")))
    }

    /// Blanks and comments; newlines too where `newline_ok`.
    fn skip_space(&mut self, newline_ok: bool) {
        while let Some(byte) = self.peek() {
            match byte {
                b' ' | b'\t' => self.pos += 1,
                b'\r' | b'\n' if newline_ok => self.pos += 1,
                b'#' => {
                    let len = self.rest().find(['\r', '\n']);
                    self.pos = len.map_or(self.text.len(), |len| self.pos + len);
                }
                _ => break,
            }
        }
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.text.as_bytes().get(self.pos + ahead).copied()
    }

    /// The character at the current position, for messages.
    fn describe_here(&self) -> String {
        match self.rest().chars().next() {
            None => "the end of input".to_string(),
            Some('\n' | '\r') => "the end of the line".to_string(),
            Some(c) => format!("`{}`", c.escape_debug()),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Left recursion
//
// llama.cpp refuses a grammar in which a rule can reach itself again before matching a
// character (`expr ::= expr "+" term`): its pushdown matcher would loop. It decides this on
// its own expansion of the grammar (a group is a rule of its own; `x*` is a rule
// `x' ::= x x' |`; `x{m,n}` is m copies and a chain of optional rules), and it counts a
// rule as possibly empty only when one of its alternatives is written empty. The check
// below rebuilds just that much of the expansion, so that it refuses exactly what
// llama.cpp refuses — including `("")*`, whose expansion `x' ::= g x' |` loops on `g ::= ""`.

/// One element of an expanded alternative: a rule, or something that matches a character.
#[derive(Clone, Copy)]
enum Element {
    Char,
    Rule(usize),
}

/// The grammar expanded as llama.cpp expands it, as far as the check needs.
struct Expansion<'g> {
    index: &'g HashMap<String, usize>,
    /// Each rule's alternatives; named rules first, in the grammar's order.
    alternatives: Vec<Vec<Vec<Element>>>,
    /// The named rule each expanded rule was written in.
    owner: Vec<usize>,
}

impl<'g> Expansion<'g> {
    fn new(rules: &[Rule], index: &'g HashMap<String, usize>) -> Self {
        let mut expansion = Self {
            index,
            alternatives: vec![Vec::new(); rules.len()],
            owner: (0..rules.len()).collect(),
        };
        for (i, rule) in rules.iter().enumerate() {
            let alternatives = expansion.alternatives_of(&rule.body, i);
            if let Some(slot) = expansion.alternatives.get_mut(i) {
                *slot = alternatives;
            }
        }
        expansion
    }

    fn alternatives_of(&mut self, e: &Expr, owner: usize) -> Vec<Vec<Element>> {
        match e {
            Expr::Alt(items) => items
                .iter()
                .map(|item| self.sequence(item, owner))
                .collect(),
            other => vec![self.sequence(other, owner)],
        }
    }

    fn sequence(&mut self, e: &Expr, owner: usize) -> Vec<Element> {
        let mut out = Vec::new();
        self.push(e, owner, &mut out);
        out
    }

    fn push(&mut self, e: &Expr, owner: usize, out: &mut Vec<Element>) {
        match e {
            Expr::Empty => {}
            Expr::Literal(text) if text.is_empty() => {}
            Expr::Literal(_) | Expr::Class(_) | Expr::AnyChar | Expr::Token(_) | Expr::Json(_) => {
                out.push(Element::Char)
            }
            Expr::Ref(name) => out.push(match self.index.get(name) {
                Some(&rule) => Element::Rule(rule),
                None => Element::Char,
            }),
            Expr::Seq(items) => items.iter().for_each(|item| self.push(item, owner, out)),
            Expr::Alt(_) => {
                let alternatives = self.alternatives_of(e, owner);
                out.push(Element::Rule(self.add(owner, alternatives)));
            }
            Expr::Group { inner, .. } => {
                let alternatives = self.alternatives_of(inner, owner);
                out.push(Element::Rule(self.add(owner, alternatives)));
            }
            Expr::Repeat { item, min, max } => self.repeat(item, *min, *max, owner, out),
        }
    }

    /// `item{min,max}`: the item (its further copies change nothing here), then the
    /// optional rest as a rule `rest ::= item rest |` (unbounded) or a chain
    /// `rest ::= item next |`, `next ::= item |` (bounded; longer chains repeat `next`).
    fn repeat(
        &mut self,
        item: &Expr,
        min: u32,
        max: Option<u32>,
        owner: usize,
        out: &mut Vec<Element>,
    ) {
        let one = self.sequence(item, owner);
        if min > 0 {
            out.extend(one.iter().copied());
        }
        let optional = max.map_or(1, |max| max.saturating_sub(min));
        if optional == 0 {
            return;
        }
        let rest = self.add(owner, Vec::new());
        let tail = match max {
            None => Some(rest),
            Some(_) if optional > 1 => Some(self.add(owner, vec![one.clone(), Vec::new()])),
            Some(_) => None,
        };
        let mut first = one;
        first.extend(tail.map(Element::Rule));
        if let Some(slot) = self.alternatives.get_mut(rest) {
            *slot = vec![first, Vec::new()];
        }
        out.push(Element::Rule(rest));
    }

    fn add(&mut self, owner: usize, alternatives: Vec<Vec<Element>>) -> usize {
        self.alternatives.push(alternatives);
        self.owner.push(owner);
        self.alternatives.len() - 1
    }

    /// The rules each rule may start with: leftmost elements, and the ones after a rule
    /// that has an empty alternative.
    fn left_edges(&self) -> Vec<Vec<usize>> {
        let may_be_empty: Vec<bool> = self
            .alternatives
            .iter()
            .map(|alternatives| alternatives.iter().any(Vec::is_empty))
            .collect();
        let edges_of = |alternatives: &Vec<Vec<Element>>| {
            let mut edges = Vec::new();
            for alternative in alternatives {
                for element in alternative {
                    let Element::Rule(rule) = *element else { break };
                    edges.push(rule);
                    if !may_be_empty.get(rule).copied().unwrap_or(false) {
                        break;
                    }
                }
            }
            edges
        };
        self.alternatives.iter().map(edges_of).collect()
    }
}

/// The first left-recursive cycle, in the order llama.cpp looks for one: the named rule to
/// report it at, and the message.
fn left_recursion(rules: &[Rule], index: &HashMap<String, usize>) -> Option<(usize, String)> {
    let expansion = Expansion::new(rules, index);
    let cycle = find_cycle(&expansion.left_edges())?;
    let mut names: Vec<usize> = Vec::new();
    for node in &cycle {
        let owner = expansion.owner.get(*node).copied().unwrap_or(0);
        if names.last() != Some(&owner) {
            names.push(owner);
        }
    }
    if names.len() > 1 && names.first() == names.last() {
        names.pop();
    }
    let first = names.first().copied().unwrap_or(0);
    let name = |i: usize| rules.get(i).map_or("?", |rule| rule.name.as_str());
    let message = if names.len() == 1 {
        format!(
            "left recursion in `{}`: it can come back to where it started without matching a character, which llama.cpp refuses",
            name(first)
        )
    } else {
        let chain: Vec<String> = names
            .iter()
            .chain(names.first())
            .map(|&i| format!("`{}`", name(i)))
            .collect();
        format!(
            "left recursion: {} without matching a character, which llama.cpp refuses",
            chain.join(" → ")
        )
    };
    Some((first, message))
}

/// A cycle of the graph, as its nodes in order, found by depth-first search from each node
/// in turn (iteratively: a grammar may chain thousands of rules).
fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state = vec![State::New; edges.len()];
    for start in 0..edges.len() {
        if state[start] != State::New {
            continue;
        }
        state[start] = State::Open;
        let mut stack = vec![(start, 0usize)];
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let Some(&to) = edges.get(node).and_then(|out| out.get(*next)) else {
                state[node] = State::Done;
                stack.pop();
                continue;
            };
            *next += 1;
            match state.get(to) {
                Some(State::Open) => {
                    let from = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                    return Some(stack[from..].iter().map(|&(n, _)| n).collect());
                }
                Some(State::New) => {
                    state[to] = State::Open;
                    stack.push((to, 0));
                }
                _ => {}
            }
        }
    }
    None
}

/// Checks `{min,max}` as llama.cpp does; a bound above the limit means "no bound".
fn check_bounds(open: usize, min: u64, max: Option<u64>) -> Parsed<(u64, Option<u64>)> {
    if min > MAX_REPETITION {
        return Err(Failure::new(
            open,
            format!("{min} repetitions exceed llama.cpp's limit of {MAX_REPETITION}"),
        ));
    }
    let max = max.filter(|&max| max <= MAX_REPETITION);
    if let Some(max) = max.filter(|&max| max < min) {
        return Err(Failure::new(
            open,
            format!("repetition {{{min},{max}}} has its maximum below its minimum"),
        ));
    }
    Ok((min, max))
}

fn unterminated_class(open: usize) -> Failure {
    Failure::new(open, "unterminated character class: missing `]`")
}

fn too_deep(at: usize) -> Failure {
    Failure::new(
        at,
        format!(
            "grammar nested too deeply: more than {MAX_NESTING} levels of groups and repetitions"
        ),
    )
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Expr {
        let grammar = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        grammar.rules[0].body.clone()
    }

    fn error(text: &str) -> (usize, usize, String) {
        match parse(text) {
            Err(error) => match *error.kind() {
                GrammarErrorKind::Syntax { line, column } => (line, column, error.detail().into()),
                _ => panic!("{text:?}: expected a syntax error, got {error:?}"),
            },
            other => panic!("{text:?}: expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn literals_classes_and_references() {
        assert_eq!(
            body("root ::= \"a\\x41\\u00e9\\U0001F600\\t\" [^a-z_\\]] x\nx ::= .\n"),
            Expr::Seq(vec![
                Expr::literal("aAé😀\t"),
                Expr::Class(CharClass::new(
                    true,
                    vec![
                        ClassItem::Range('a', 'z'),
                        ClassItem::Char('_'),
                        ClassItem::Char(']')
                    ]
                )),
                Expr::reference("x"),
            ])
        );
    }

    #[test]
    fn dash_is_a_range_unless_before_the_closing_bracket() {
        let class = |items| Expr::Class(CharClass::new(false, items));
        assert_eq!(
            body("root ::= [-a-]"),
            class(vec![
                ClassItem::Char('-'),
                ClassItem::Char('a'),
                ClassItem::Char('-')
            ])
        );
        assert_eq!(
            body("root ::= [a-z-0]"),
            class(vec![
                ClassItem::Range('a', 'z'),
                ClassItem::Char('-'),
                ClassItem::Char('0')
            ])
        );
    }

    #[test]
    fn repetitions() {
        let a = || Expr::literal("a");
        assert_eq!(body("root ::= \"a\"{3}"), Expr::repeat(a(), 3, Some(3)));
        assert_eq!(body("root ::= \"a\"{ 2 , }"), Expr::repeat(a(), 2, None));
        assert_eq!(body("root ::= \"a\"{0,5000}"), Expr::repeat(a(), 0, None));
        assert_eq!(
            body("root ::= \"a\"*?"),
            Expr::optional(Expr::group(Expr::repeat(a(), 0, None)))
        );
    }

    #[test]
    fn groups_span_lines_and_record_padding() {
        assert_eq!(
            body("root ::= ( \"a\" |\n  \"b\" # comment\n)\n"),
            Expr::Group {
                inner: Box::new(Expr::Alt(vec![Expr::literal("a"), Expr::literal("b")])),
                padded: true,
            }
        );
        assert_eq!(body("root ::= ()"), Expr::group(Expr::Empty));
    }

    #[test]
    fn tokens() {
        assert_eq!(
            body("root ::= <[128010]> <|python_tag|>"),
            Expr::Seq(vec![
                Expr::Token(Token::Id(128010)),
                Expr::Token(Token::Text("<|python_tag|>".into())),
            ])
        );
    }

    #[test]
    fn empty_alternatives_and_bodies() {
        assert_eq!(
            body("root ::= | \"x\" |"),
            Expr::Alt(vec![Expr::Empty, Expr::literal("x"), Expr::Empty])
        );
        assert_eq!(body("root ::="), Expr::Empty);
        assert_eq!(body("root ::= []"), Expr::Empty);
        assert_eq!(body("root ::= \"\""), Expr::Empty);
    }

    #[test]
    fn later_definitions_replace_earlier_ones_in_place() {
        let g = parse("a ::= \"1\"\nroot ::= a\na ::= \"2\"\n").unwrap();
        assert_eq!(g.rules.len(), 2);
        assert_eq!(g.rules[0].name, "a");
        assert_eq!(g.rules[0].body, Expr::literal("2"));
    }

    #[test]
    fn errors_carry_line_and_column() {
        assert_eq!(error("root ::= \"a\"\nx ::= y").0, 2);
        let (line, column, message) = error("root ::= \"a\"\r\n  x");
        assert_eq!((line, column), (2, 4), "{message}");
        let (line, column, message) = error("root ::= \"é\" \\q");
        assert_eq!((line, column), (1, 14), "{message}");
    }

    #[test]
    fn repetition_limits_follow_llama_cpp() {
        assert!(parse("root ::= \"a\"{1999}").is_ok());
        assert!(error("root ::= \"a\"{2000}").2.contains("2000"));
        assert!(error("root ::= \"a\"{2001}").2.contains("2000"));
        assert!(parse("root ::= (\"a\"{40}){40}").is_ok());
        // A group weighs as many rules as llama.cpp generates for it: itself and the 50
        // optional copies, not the 50 fixed ones.
        assert!(parse("root ::= (\"a\"{50}){39}").is_ok());
        assert!(error("root ::= (\"a\"{0,50}){50}").2.contains("copies"));
        assert!(error("root ::= \"a\"{5,2}").2.contains("below"));
        assert!(error("root ::= \"\"*").2.contains("no item"));
        assert!(error("root ::= \"a\" | *").2.contains("no item"));
    }

    #[test]
    fn left_recursion_is_refused_as_llama_cpp_refuses_it() {
        let (line, column, message) = error("root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"\n");
        assert_eq!((line, column), (2, 1), "{message}");
        assert!(message.contains("left recursion in `expr`"), "{message}");
        let (line, _, message) = error("root ::= a\na ::= b \"x\"\nb ::= a | \"y\"\n");
        assert_eq!(line, 2, "{message}");
        assert!(message.contains("`a` → `b` → `a`"), "{message}");
        // Through a rule written with an empty alternative, a `*`, `?` or `{0,n}`.
        for text in [
            "root ::= a root \"x\" | \"y\"\na ::= | \"z\"",
            "root ::= \"x\"* root | \"y\"",
            "root ::= \"x\"{0,3} root | \"y\"",
            "root ::= \"a\" (\"\")*",
            "root ::= \"a\" (| \"b\")+",
            "root ::= (root)",
        ] {
            assert!(error(text).2.contains("left recursion"), "{text}");
        }
        // llama.cpp only counts a rule as possibly empty when an alternative is written
        // empty, and a character ends the search.
        for text in [
            "root ::= a root \"x\" | \"y\"\na ::= b\nb ::= | \"z\"",
            "root ::= (\"b\"?)*",
            "root ::= \"x\"{2} root | \"y\"",
            "root ::= \"(\" root \")\" | \"y\"",
        ] {
            assert!(parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn invalid_bytes_are_reported_where_they_start() {
        let err = parse_bytes(b"root ::= \"a\"\nx ::= \"\xff\"", "root").unwrap_err();
        assert_eq!(
            err,
            GrammarError::new(
                GrammarErrorKind::Syntax { line: 2, column: 8 },
                "invalid UTF-8"
            )
        );
    }
}
