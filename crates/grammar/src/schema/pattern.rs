//! String patterns: a regular expression becomes grammar rules, walked the way llama.cpp's
//! `_visit_pattern` walks it so that its rule names (`dot`, `root-1`, …) and spelling
//! (`"ab" "c"? ("hij")?`) come out the same.
//!
//! Unlike llama.cpp, the walk understands what it reads: escapes (`\d`, `\.`, `\u00e9`)
//! and classes (`[^a-z\s]`) are parsed into characters rather than copied through,
//! patterns need not be anchored (an unanchored side admits any characters, as JSON
//! Schema's `pattern` is a search), and what cannot be expressed (lookaround,
//! backreferences, word boundaries) is reported, not silently dropped.
//!
//! In llama.cpp-compatible mode a pattern's characters are matched as written, as
//! llama.cpp does; in exact mode they are matched in their JSON spelling (a `"` in the
//! value is `\"` in the text), which is what the value of a JSON string means.

use super::charset::{self, CharSet};
use super::converter::Converter;
use super::exprs::{alt, group, lit, not_class, one, repetition, rf, seq, space, star};
use crate::error::{limit_error, schema_error, GrammarError, Result};
use crate::tree::{CharClass, ClassItem, Expr};

impl Converter<'_> {
    /// The rule `name` for a string matching `pattern`.
    pub(super) fn visit_pattern(
        &mut self,
        pattern: &str,
        name: &str,
        path: &str,
    ) -> Result<String> {
        Ok(self.visit_pattern_len(pattern, name, path)?.0)
    }

    /// The rule `name` for a string matching `pattern`, and the lengths (in characters)
    /// of such strings: the fewest, and the most if bounded.
    pub(super) fn visit_pattern_len(
        &mut self,
        pattern: &str,
        name: &str,
        path: &str,
    ) -> Result<(String, Len)> {
        self.pattern_rule(pattern, name, path, None, false)
    }

    /// Strict mode: a rule for strings matching `pattern` (read as anchored at both
    /// ends, which admits some of its strings) whose lengths lie within `lo..=hi`, by
    /// bounding its unbounded repetitions: each repeated at least `m` times and at most
    /// `k`, with the least `m` and the most `k` that keep every string within bounds
    /// (found by bisection on the pattern's measured lengths). `None` when no such
    /// bounds exist (a pattern with no unbounded repetition and lengths outside).
    pub(super) fn pattern_rule_within(
        &mut self,
        pattern: &str,
        name: &str,
        path: &str,
        lo: u64,
        hi: Option<u64>,
    ) -> Result<Option<String>> {
        let options = super::Options {
            strict: false,
            llama_cpp_compat: false,
            ..self.options.clone()
        };
        let root = serde_json::Value::Null;
        let measure = |caps: (Option<u64>, u64)| -> Option<Len> {
            let mut scratch = Converter::new(&options, &root);
            scratch
                .pattern_rule(pattern, "measure", "#", Some(caps), true)
                .ok()
                .map(|(_, len)| len)
        };
        let Some((shortest, _)) = measure((None, 0)) else {
            return Ok(None);
        };
        // The fewest repetitions that make every string long enough.
        let mut floor = 0;
        if shortest < lo {
            let (mut low, mut high) = (1u64, lo);
            if measure((None, high)).is_none_or(|l| l.0 < lo) {
                return Ok(None);
            }
            while low < high {
                let mid = low + (high - low) / 2;
                if measure((None, mid)).is_some_and(|l| l.0 >= lo) {
                    high = mid;
                } else {
                    low = mid + 1;
                }
            }
            floor = low;
        }
        // The most repetitions that keep every string short enough.
        let cap = match hi {
            None => None,
            Some(hi) => {
                let fits = |k: u64| {
                    measure((Some(k), floor)).is_some_and(|l| l.1.is_some_and(|m| m <= hi))
                };
                if !fits(floor) {
                    return Ok(None);
                }
                let (mut low, mut high) = (floor, hi.max(floor));
                while low < high {
                    let mid = low + (high - low).div_ceil(2);
                    if fits(mid) {
                        low = mid;
                    } else {
                        high = mid - 1;
                    }
                }
                Some(low)
            }
        };
        let (rule, _) = self.pattern_rule(pattern, name, path, Some((cap, floor)), true)?;
        Ok(Some(rule))
    }

    /// Whether every string of `pattern` already has a length within `lo..=hi`.
    pub(super) fn pattern_fits(&self, pattern: &str, lo: u64, hi: Option<u64>) -> bool {
        let options = super::Options {
            strict: false,
            llama_cpp_compat: false,
            ..self.options.clone()
        };
        let root = serde_json::Value::Null;
        let mut scratch = Converter::new(&options, &root);
        match scratch.pattern_rule(pattern, "measure", "#", None, false) {
            Ok((_, (shortest, longest))) => {
                shortest >= lo && hi.is_none_or(|hi| longest.is_some_and(|l| l <= hi))
            }
            Err(_) => false,
        }
    }

    /// The pattern's rule; `caps` bounds its unbounded repetitions (at most, at least),
    /// `anchored` reads it as anchored at both ends.
    fn pattern_rule(
        &mut self,
        pattern: &str,
        name: &str,
        path: &str,
        caps: Option<(Option<u64>, u64)>,
        anchored: bool,
    ) -> Result<(String, Len)> {
        let limit = self.options.limits.max_pattern_length;
        if pattern.chars().count() > limit {
            return Err(limit_error(format!(
                "{path}/pattern: longer than {limit} characters"
            )));
        }
        let mut chars: Vec<char> = pattern.chars().collect();
        let mut anchored_start = chars.first() == Some(&'^');
        if anchored_start {
            chars.remove(0);
        }
        let mut anchored_end = chars.last() == Some(&'$') && !escaped_at(&chars, chars.len() - 1);
        if anchored_end {
            chars.pop();
        }
        if anchored {
            (anchored_start, anchored_end) = (true, true);
        }
        let mut walk = Walk {
            chars,
            i: 0,
            name: name.to_string(),
            path: format!("{path}/pattern"),
            subs: Vec::new(),
            anchored: (anchored_start, anchored_end),
            exact: !self.compat(),
            caps,
        };
        let (inner, len) = walk.transform(self, 0)?;
        let len = if anchored_start && anchored_end {
            len
        } else {
            (len.0, None)
        };
        let mut body = vec![lit("\"")];
        if !anchored_start {
            body.push(star(rf(self.primitive("char"))));
        }
        body.push(group(inner));
        if !anchored_end {
            body.push(star(rf(self.primitive("char"))));
        }
        body.push(lit("\""));
        body.push(space());
        Ok((self.add_rule(name, seq(body)), len))
    }

    /// One character of `set` as it appears in the grammar's text: as itself in
    /// llama.cpp-compatible mode; in exact mode in its JSON spelling, raw where JSON
    /// allows it and escaped otherwise. Errors when no spelling exists.
    pub(super) fn json_chars(&self, set: &CharSet, path: &str) -> Result<Expr> {
        let expr = json_chars(set);
        expr.ok_or_else(|| {
            schema_error(format!(
                "{path}: a character class that admits no character"
            ))
        })
    }
}

/// The JSON spellings of the characters of `set`, or `None` when it is empty.
pub(super) fn json_chars(set: &CharSet) -> Option<Expr> {
    let unsafe_raw = CharSet::of(&[('\0', '\x1f'), ('"', '"'), ('\\', '\\'), ('\x7f', '\x7f')]);
    let raw = set.minus(&unsafe_raw);
    let mut parts = Vec::new();
    if !raw.is_empty() {
        parts.push(class_of(&raw));
    }
    let short: Vec<ClassItem> = [
        ('"', '"'),
        ('\\', '\\'),
        ('\u{8}', 'b'),
        ('\u{c}', 'f'),
        ('\n', 'n'),
        ('\r', 'r'),
        ('\t', 't'),
    ]
    .into_iter()
    .filter(|(c, _)| set.contains(*c))
    .map(|(_, letter)| ClassItem::Char(letter))
    .collect();
    if !short.is_empty() {
        parts.push(seq(vec![
            one('\\'),
            Expr::Class(CharClass::new(false, short)),
        ]));
    }
    let controls = set.intersect(&CharSet::of(&[('\0', '\x1f')]));
    let mut others: Vec<char> = Vec::new();
    for item in controls.items() {
        let (lo, hi) = match item {
            ClassItem::Char(c) => (c, c),
            ClassItem::Range(lo, hi) => (lo, hi),
        };
        for c in lo..=hi {
            if !matches!(c, '\u{8}' | '\u{c}' | '\n' | '\r' | '\t') {
                others.push(c);
            }
        }
    }
    if controls.chars_len() == 32 {
        parts.push(seq(vec![
            lit("\\u00"),
            super::exprs::chars("01"),
            super::exprs::hex(),
        ]));
    } else {
        for c in others {
            parts.push(lit(format!("\\u{:04x}", c as u32)));
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(alt(parts))
    }
}

/// A class for `set`, written negated when that is shorter.
fn class_of(set: &CharSet) -> Expr {
    let items = set.items();
    let complement = set.complement().items();
    if complement.len() < items.len() {
        not_class(complement)
    } else {
        Expr::Class(CharClass::new(false, items))
    }
}

/// Whether the character at `at` is escaped by an odd number of backslashes before it.
fn escaped_at(chars: &[char], at: usize) -> bool {
    chars[..at].iter().rev().take_while(|&&c| c == '\\').count() % 2 == 1
}

/// A piece of a sequence being read: literal text (merged with its neighbours), an
/// expression, or a `|`.
enum Piece {
    Lit(String),
    Atom { expr: Expr, literal: bool, len: Len },
    Bar,
}

struct Walk {
    chars: Vec<char>,
    i: usize,
    name: String,
    path: String,
    /// Rules made for repeated sub-expressions (`root-1 ::= [0-9]`), by expression.
    subs: Vec<(Expr, String)>,
    anchored: (bool, bool),
    exact: bool,
    /// Bounds for unbounded repetitions: at most, at least (see `pattern_rule_within`).
    caps: Option<(Option<u64>, u64)>,
}

impl Walk {
    fn error(&self, message: impl std::fmt::Display) -> GrammarError {
        schema_error(format!("{}: {message}", self.path))
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.i + offset).copied()
    }

    /// Reads up to the `)` closing this group (or the end at depth 0).
    fn transform(&mut self, conv: &mut Converter, depth: usize) -> Result<(Expr, Len)> {
        if depth > conv.options.limits.max_depth {
            return Err(limit_error(format!(
                "{}: groups nested deeper than {}",
                self.path, conv.options.limits.max_depth
            )));
        }
        let mut seq_pieces: Vec<Piece> = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                '.' => {
                    self.i += 1;
                    let dot = self.dot(conv)?;
                    seq_pieces.push(Piece::Atom {
                        expr: dot,
                        literal: false,
                        len: ONE,
                    });
                }
                '(' => {
                    self.i += 1;
                    if self.peek(0) == Some('?') {
                        match (self.peek(1), self.peek(2)) {
                            (Some(':'), _) => self.i += 2,
                            (Some('<'), Some(c)) if c != '=' && c != '!' => {
                                // A named group: `(?<name>…)`.
                                while let Some(c) = self.peek(0) {
                                    self.i += 1;
                                    if c == '>' {
                                        break;
                                    }
                                }
                            }
                            (Some('=' | '!' | '<'), _) => {
                                conv.warn(&self.path, "lookaround assertions are not enforced");
                                self.skip_group();
                                continue;
                            }
                            _ => return Err(self.error("unsupported group syntax `(?`")),
                        }
                    }
                    let (inner, len) = self.transform(conv, depth + 1)?;
                    seq_pieces.push(Piece::Atom {
                        expr: group(inner),
                        literal: false,
                        len,
                    });
                }
                ')' => {
                    if depth == 0 {
                        return Err(self.error("unbalanced parentheses"));
                    }
                    self.i += 1;
                    return self.join(seq_pieces);
                }
                '[' => {
                    let (negated, set, items) = self.class()?;
                    let expr = if self.exact {
                        let set = if negated { set.complement() } else { set };
                        conv.json_chars(&set, &self.path)?
                    } else {
                        Expr::Class(CharClass::new(negated, items))
                    };
                    seq_pieces.push(Piece::Atom {
                        expr,
                        literal: false,
                        len: ONE,
                    });
                }
                '|' => {
                    self.i += 1;
                    seq_pieces.push(Piece::Bar);
                }
                '*' | '+' | '?' => {
                    self.i += 1;
                    let (min, max) = match c {
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => (0, Some(1)),
                    };
                    self.quantify(conv, &mut seq_pieces, min, max, false)?;
                }
                '{' => match self.braces() {
                    Some((min, max, end)) => {
                        self.i = end;
                        let (min, max) = self.capped(min, max)?;
                        self.quantify(conv, &mut seq_pieces, min, max, true)?;
                    }
                    None => {
                        self.i += 1;
                        self.push_literal(&mut seq_pieces, '{');
                    }
                },
                '^' | '$' => {
                    self.i += 1;
                    self.inner_anchor(conv, c, depth, &seq_pieces);
                }
                '\\' => self.escape(conv, &mut seq_pieces)?,
                c => {
                    self.i += 1;
                    self.push_literal(&mut seq_pieces, c);
                }
            }
        }
        if depth > 0 {
            return Err(self.error("unbalanced parentheses"));
        }
        self.join(seq_pieces)
    }

    /// An anchor inside the pattern. At the start (`^`) or end (`$`) of a top-level
    /// alternative of a pattern anchored on that side it changes nothing; anywhere else
    /// it cannot be expressed.
    fn inner_anchor(&self, conv: &mut Converter, c: char, depth: usize, pieces: &[Piece]) {
        let harmless = depth == 0
            && if c == '^' {
                self.anchored.0 && matches!(pieces.last(), None | Some(Piece::Bar))
            } else {
                self.anchored.1 && matches!(self.peek(0), None | Some('|'))
            };
        if !harmless {
            conv.warn(
                &self.path,
                format!("the anchor `{c}` inside the pattern is not enforced"),
            );
        }
    }

    fn push_literal(&self, pieces: &mut Vec<Piece>, c: char) {
        if let Some(Piece::Lit(text)) = pieces.last_mut() {
            text.push(c);
        } else {
            pieces.push(Piece::Lit(c.to_string()));
        }
    }

    /// Skips a lookaround group, up to its closing parenthesis.
    fn skip_group(&mut self) {
        let mut depth = 1;
        while let Some(c) = self.peek(0) {
            if c == '\\' {
                self.i += 2;
                continue;
            }
            self.i += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// `.`: llama.cpp's `dot` rule, `[^\x0A\x0D]` (or every character with `dotall`).
    fn dot(&self, conv: &mut Converter) -> Result<Expr> {
        let body = if self.exact {
            let set = if conv.options.dotall {
                CharSet::all()
            } else {
                CharSet::of(&[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')]).complement()
            };
            conv.json_chars(&set, &self.path)?
        } else if conv.options.dotall {
            Expr::Class(CharClass {
                negated: false,
                items: vec![ClassItem::Range('\0', '\u{10FFFF}')],
                spelling: Some("[\\U00000000-\\U0010FFFF]".into()),
            })
        } else {
            Expr::Class(CharClass {
                negated: true,
                items: vec![ClassItem::Char('\n'), ClassItem::Char('\r')],
                spelling: Some("[^\\x0A\\x0D]".into()),
            })
        };
        Ok(rf(conv.add_rule("dot", body)))
    }

    /// Applies a quantifier to the last piece. Counted repetitions of an expression get
    /// a rule of their own (`name-1`), as in llama.cpp.
    fn quantify(
        &mut self,
        conv: &mut Converter,
        pieces: &mut Vec<Piece>,
        min: u64,
        max: Option<u64>,
        counted: bool,
    ) -> Result<()> {
        // A lazy quantifier (`*?`) admits the same strings.
        if self.peek(0) == Some('?') {
            self.i += 1;
        }
        let (item, literal, item_len) = match pieces.pop() {
            Some(Piece::Lit(mut text)) => {
                let last = text.pop().unwrap_or_default();
                if !text.is_empty() {
                    pieces.push(Piece::Lit(text));
                }
                (self.literal(&last.to_string()), true, ONE)
            }
            Some(Piece::Atom { expr, literal, len }) => {
                if matches!(expr, Expr::Repeat { .. }) && !counted {
                    return Err(self.error("a quantifier follows another quantifier"));
                }
                (expr, literal, len)
            }
            Some(Piece::Bar) | None => return Err(self.error("a quantifier has nothing to repeat")),
        };
        let cap = conv.options.limits.max_repeat;
        let (min, max) = match (self.caps, max) {
            (Some((at_most, at_least)), None) => {
                let min = min.max(at_least);
                (min, at_most.map(|k| k.max(min)))
            }
            _ => (min, max),
        };
        // llama.cpp refuses to repeat a group with an alternative written empty (its
        // expansion loops): `(a|)+` admits what `a*` admits, and `()+` only "".
        let (item, min) = match without_empty_alternatives(&item) {
            Some(Expr::Empty) => {
                pieces.push(Piece::Atom {
                    expr: Expr::Empty,
                    literal: false,
                    len: (0, Some(0)),
                });
                return Ok(());
            }
            Some(rest) => (rest, 0),
            None => (item, min),
        };
        let len = (
            item_len.0.saturating_mul(min),
            match (item_len.1, max) {
                (Some(0), _) | (_, Some(0)) => Some(0),
                (Some(a), Some(b)) => a.checked_mul(b),
                _ => None,
            },
        );
        let expr = if !counted || literal {
            repetition(item, min, max, None, cap)
        } else {
            let id = match self.subs.iter().find(|(e, _)| *e == item) {
                Some((_, id)) => id.clone(),
                None => {
                    let id = conv.add_rule(
                        &format!("{}-{}", self.name, self.subs.len() + 1),
                        item.clone(),
                    );
                    self.subs.push((item, id.clone()));
                    id
                }
            };
            repetition(rf(id), min, max, None, cap)
        };
        pieces.push(Piece::Atom {
            expr,
            literal: false,
            len,
        });
        Ok(())
    }

    fn capped(&self, min: u64, max: Option<u64>) -> Result<(u64, Option<u64>)> {
        if let Some(m) = max {
            if m < min {
                return Err(self.error(format!("repetition {{{min},{m}}} is empty")));
            }
        }
        Ok((min, max))
    }

    /// `{n}`, `{n,}`, `{n,m}` or `{,m}` at the cursor: (min, max, index after `}`).
    fn braces(&self) -> Option<(u64, Option<u64>, usize)> {
        let mut j = self.i + 1;
        let number = |j: &mut usize| -> Option<u64> {
            let start = *j;
            while self.chars.get(*j).is_some_and(char::is_ascii_digit) {
                *j += 1;
            }
            let digits: String = self.chars[start..*j].iter().collect();
            if digits.is_empty() {
                None
            } else {
                Some(digits.parse().unwrap_or(u64::MAX))
            }
        };
        let min = number(&mut j);
        let max = if self.chars.get(j) == Some(&',') {
            j += 1;
            number(&mut j)
        } else {
            match min {
                Some(min) => Some(min),
                None => return None,
            }
        };
        if self.chars.get(j) != Some(&'}') || (min.is_none() && max.is_none()) {
            return None;
        }
        Some((min.unwrap_or(0), max, j + 1))
    }

    /// A backslash escape outside a class.
    fn escape(&mut self, conv: &mut Converter, pieces: &mut Vec<Piece>) -> Result<()> {
        let Some(next) = self.peek(1) else {
            return Err(self.error("the pattern ends with a backslash"));
        };
        if let Some(set) = charset::escape_class(next, false) {
            self.i += 2;
            let expr = if self.exact {
                conv.json_chars(&set, &self.path)?
            } else {
                Expr::Class(CharClass::new(false, set.items()))
            };
            pieces.push(Piece::Atom {
                expr,
                literal: false,
                len: ONE,
            });
            return Ok(());
        }
        match next {
            'b' | 'B' => {
                self.i += 2;
                conv.warn(
                    &self.path,
                    format!("the word boundary `\\{next}` is not enforced"),
                );
                Ok(())
            }
            '1'..='9' | 'k' => {
                self.i += 2;
                if next == 'k' && self.peek(0) == Some('<') {
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '>' {
                            break;
                        }
                    }
                }
                while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                conv.warn(
                    &self.path,
                    "backreferences are not enforced (any text is admitted)",
                );
                let any = star(rf(conv.primitive("char")));
                pieces.push(Piece::Atom {
                    expr: any,
                    literal: false,
                    len: (0, None),
                });
                Ok(())
            }
            _ => {
                let c = self.char_escape()?;
                self.push_literal(pieces, c);
                Ok(())
            }
        }
    }

    /// A character escape at the cursor (`\n`, `\x41`, `\u00e9`, `\u{1F600}`, `\.`),
    /// consumed.
    fn char_escape(&mut self) -> Result<char> {
        let next = self
            .peek(1)
            .ok_or_else(|| self.error("the pattern ends with a backslash"))?;
        self.i += 2;
        let hex = |walk: &mut Self, n: usize| -> Result<char> {
            let digits: String = walk.chars.iter().skip(walk.i).take(n).collect();
            let code = (digits.len() == n)
                .then(|| u32::from_str_radix(&digits, 16).ok())
                .flatten()
                .and_then(char::from_u32)
                .ok_or_else(|| walk.error(format!("bad escape `\\{next}{digits}`")))?;
            walk.i += n;
            Ok(code)
        };
        Ok(match next {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'f' => '\u{c}',
            'v' => '\u{b}',
            '0' => '\0',
            'x' => hex(self, 2)?,
            'u' if self.peek(0) == Some('{') => {
                let end = self.chars[self.i..]
                    .iter()
                    .position(|&c| c == '}')
                    .ok_or_else(|| self.error("unterminated `\\u{`"))?;
                let digits: String = self.chars[self.i + 1..self.i + end].iter().collect();
                self.i += end + 1;
                u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.error(format!("bad escape `\\u{{{digits}}}`")))?
            }
            'u' => hex(self, 4)?,
            'c' => {
                let letter = self
                    .peek(0)
                    .filter(char::is_ascii_alphabetic)
                    .ok_or_else(|| self.error("bad escape `\\c`"))?;
                self.i += 1;
                char::from_u32(letter as u32 % 32).unwrap_or('\0')
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(self.error(format!("unsupported escape `\\{c}`")));
            }
            c => c,
        })
    }

    /// A class `[…]` at the cursor: negated, its set (as written, before negation), and
    /// its items as written.
    fn class(&mut self) -> Result<(bool, CharSet, Vec<ClassItem>)> {
        self.i += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.i += 1;
        }
        let mut set = CharSet::empty();
        let mut items = Vec::new();
        loop {
            let Some(c) = self.peek(0) else {
                return Err(self.error("unbalanced square brackets"));
            };
            if c == ']' {
                self.i += 1;
                break;
            }
            let lo = match self.class_atom(negated)? {
                ClassAtom::Set(s) => {
                    items.extend(s.items());
                    set = set.union(&s);
                    continue;
                }
                ClassAtom::Char(c) => c,
            };
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']') {
                self.i += 1;
                match self.class_atom(negated)? {
                    ClassAtom::Char(hi) if hi >= lo => {
                        items.push(ClassItem::Range(lo, hi));
                        set.add(lo, hi);
                    }
                    ClassAtom::Char(hi) => {
                        return Err(self.error(format!("class range {lo:?}-{hi:?} out of order")))
                    }
                    ClassAtom::Set(s) => {
                        // `[a-\d]`: the dash is literal.
                        items.push(ClassItem::Char(lo));
                        items.push(ClassItem::Char('-'));
                        items.extend(s.items());
                        set.add(lo, lo);
                        set.add('-', '-');
                        set = set.union(&s);
                    }
                }
            } else {
                items.push(ClassItem::Char(lo));
                set.add(lo, lo);
            }
        }
        if items.is_empty() {
            return Err(self.error("an empty character class"));
        }
        Ok((negated, set, items))
    }

    fn class_atom(&mut self, negated: bool) -> Result<ClassAtom> {
        let c = self
            .peek(0)
            .ok_or_else(|| self.error("unbalanced square brackets"))?;
        if c != '\\' {
            self.i += 1;
            return Ok(ClassAtom::Char(c));
        }
        let next = self
            .peek(1)
            .ok_or_else(|| self.error("the pattern ends with a backslash"))?;
        // Inside `[^…]` a class escape is taken at its widest (see `escape_class`).
        if let Some(set) = charset::escape_class(next, negated) {
            self.i += 2;
            return Ok(ClassAtom::Set(set));
        }
        if next == 'b' {
            self.i += 2;
            return Ok(ClassAtom::Char('\u{8}'));
        }
        Ok(ClassAtom::Char(self.char_escape()?))
    }

    /// A literal in the grammar: the characters themselves, or in exact mode their JSON
    /// spelling.
    fn literal(&self, text: &str) -> Expr {
        if self.exact {
            let quoted = serde_json::Value::String(text.to_string()).to_string();
            lit(&quoted[1..quoted.len() - 1])
        } else {
            lit(text)
        }
    }

    /// Joins the pieces read: neighbouring literals merged, `|` splitting alternatives.
    fn join(&self, pieces: Vec<Piece>) -> Result<(Expr, Len)> {
        let mut alternatives: Vec<Expr> = Vec::new();
        let mut lens: Vec<Len> = Vec::new();
        let mut current: Vec<Expr> = Vec::new();
        let mut len: Len = (0, Some(0));
        for piece in pieces {
            match piece {
                Piece::Lit(text) => {
                    let n = text.chars().count() as u64;
                    len = (
                        len.0.saturating_add(n),
                        len.1.and_then(|m| m.checked_add(n)),
                    );
                    current.push(self.literal(&text));
                }
                Piece::Atom { expr, len: l, .. } => {
                    len = (
                        len.0.saturating_add(l.0),
                        len.1.zip(l.1).and_then(|(a, b)| a.checked_add(b)),
                    );
                    current.push(expr);
                }
                Piece::Bar => {
                    alternatives.push(seq_or_empty(std::mem::take(&mut current)));
                    lens.push(std::mem::replace(&mut len, (0, Some(0))));
                }
            }
        }
        alternatives.push(seq_or_empty(current));
        lens.push(len);
        let min = lens.iter().map(|l| l.0).min().unwrap_or(0);
        let max = lens.iter().try_fold(0u64, |acc, l| l.1.map(|m| acc.max(m)));
        Ok((alt(alternatives), (min, max)))
    }
}

/// Lengths of strings, in characters: the fewest and the most (`None`: unbounded).
pub(super) type Len = (u64, Option<u64>);

const ONE: Len = (1, Some(1));

enum ClassAtom {
    Char(char),
    Set(CharSet),
}

/// `item` (a group, or what a group holds) without its alternatives written empty, when it
/// has any: `Expr::Empty` when nothing else is left.
fn without_empty_alternatives(item: &Expr) -> Option<Expr> {
    let inner = match item {
        Expr::Group { inner, .. } => inner.as_ref(),
        other => other,
    };
    let written_empty =
        |e: &Expr| matches!(e, Expr::Empty) || matches!(e, Expr::Literal(text) if text.is_empty());
    match inner {
        e if written_empty(e) => Some(Expr::Empty),
        Expr::Alt(alternatives) if alternatives.iter().any(written_empty) => {
            let rest: Vec<Expr> = alternatives
                .iter()
                .filter(|e| !written_empty(e))
                .cloned()
                .collect();
            Some(if rest.is_empty() {
                Expr::Empty
            } else {
                group(alt(rest))
            })
        }
        _ => None,
    }
}

fn seq_or_empty(items: Vec<Expr>) -> Expr {
    if items.is_empty() {
        Expr::Empty
    } else {
        seq(items)
    }
}

/// For a pattern whose strings are exactly the repetitions of one class — `^[a-z_]+$`,
/// `^.*$`, `^\w{1,}$` — that class and the fewest repetitions; an unanchored pattern
/// that can match the empty string matches every string, `(everything, 0)`. With
/// `subset`, an unanchored `[a-z]+` (a string containing a letter) answers its anchored
/// form, whose strings are some of its strings.
pub(super) fn simple_class_pattern(
    pattern: &str,
    dotall: bool,
    subset: bool,
) -> Option<(CharSet, u64)> {
    let mut chars: Vec<char> = pattern.chars().collect();
    let anchored_start = chars.first() == Some(&'^');
    if anchored_start {
        chars.remove(0);
    }
    let anchored_end = chars.last() == Some(&'$') && !escaped_at(&chars, chars.len() - 1);
    if anchored_end {
        chars.pop();
    }
    let mut walk = Walk {
        chars,
        i: 0,
        name: String::new(),
        path: String::new(),
        subs: Vec::new(),
        anchored: (anchored_start, anchored_end),
        exact: true,
        caps: None,
    };
    if walk.chars.is_empty() {
        return (!(anchored_start && anchored_end)).then(|| (CharSet::all(), 0));
    }
    let set = match walk.peek(0)? {
        '.' => {
            walk.i += 1;
            if dotall {
                CharSet::all()
            } else {
                CharSet::of(&[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')]).complement()
            }
        }
        '[' => {
            let (negated, set, _) = walk.class().ok()?;
            if negated {
                set.complement()
            } else {
                set
            }
        }
        '\\' => {
            let next = walk.peek(1)?;
            match charset::escape_class(next, false) {
                Some(set) => {
                    walk.i += 2;
                    set
                }
                None if next.is_ascii_alphanumeric()
                    && !matches!(next, 'n' | 'r' | 't' | 'f' | 'v') =>
                {
                    return None
                }
                None => {
                    let c = walk.char_escape().ok()?;
                    CharSet::of(&[(c, c)])
                }
            }
        }
        c if "()|*+?{}^$".contains(c) => return None,
        c => {
            walk.i += 1;
            CharSet::of(&[(c, c)])
        }
    };
    let min = match walk.peek(0)? {
        '*' => 0,
        '+' => 1,
        '{' => {
            let (min, max, end) = walk.braces()?;
            if max.is_some() {
                return None;
            }
            walk.i = end - 1;
            min
        }
        _ => return None,
    };
    walk.i += 1;
    if walk.peek(0) == Some('?') {
        walk.i += 1;
    }
    if walk.i != walk.chars.len() {
        return None;
    }
    if anchored_start && anchored_end || (subset && min > 0) {
        Some((set, min))
    } else if min == 0 {
        Some((CharSet::all(), 0))
    } else {
        None
    }
}
