//! Sets of characters as sorted ranges: what a regex class such as `[^a-z\d]` stands for,
//! so that it can be printed as a grammar class or, in exact mode, as the JSON spellings
//! of its members.

use crate::tree::ClassItem;

const MAX: u32 = 0x10FFFF;

/// A set of Unicode scalar values, as sorted, disjoint, non-adjacent inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct CharSet {
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn all() -> Self {
        Self {
            ranges: vec![(0, MAX)],
        }
    }

    pub fn of(ranges: &[(char, char)]) -> Self {
        let mut set = Self::empty();
        for &(lo, hi) in ranges {
            set.add(lo, hi);
        }
        set
    }

    pub fn add(&mut self, lo: char, hi: char) {
        let (lo, hi) = (lo as u32, hi as u32);
        if lo > hi {
            return;
        }
        self.ranges.push((lo, hi));
        self.normalize();
    }

    pub fn union(&self, other: &Self) -> Self {
        let mut ranges = self.ranges.clone();
        ranges.extend_from_slice(&other.ranges);
        let mut set = Self { ranges };
        set.normalize();
        set
    }

    pub fn complement(&self) -> Self {
        let mut ranges = Vec::new();
        let mut next = 0u32;
        for &(lo, hi) in &self.ranges {
            if lo > next {
                ranges.push((next, lo - 1));
            }
            next = hi.saturating_add(1);
        }
        if next <= MAX {
            ranges.push((next, MAX));
        }
        Self { ranges }
    }

    pub fn minus(&self, other: &Self) -> Self {
        self.intersect(&other.complement())
    }

    pub fn intersect(&self, other: &Self) -> Self {
        let mut ranges = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.ranges.len() && j < other.ranges.len() {
            let (a_lo, a_hi) = self.ranges[i];
            let (b_lo, b_hi) = other.ranges[j];
            let lo = a_lo.max(b_lo);
            let hi = a_hi.min(b_hi);
            if lo <= hi {
                ranges.push((lo, hi));
            }
            if a_hi < b_hi {
                i += 1;
            } else {
                j += 1;
            }
        }
        Self { ranges }
    }

    pub fn contains(&self, c: char) -> bool {
        let c = c as u32;
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }

    pub fn is_empty(&self) -> bool {
        self.chars_len() == 0
    }

    /// How many characters the set holds (surrogates, which are not characters, left out).
    pub fn chars_len(&self) -> u64 {
        self.items_ranges()
            .iter()
            .map(|&(lo, hi)| u64::from(hi as u32 - lo as u32 + 1))
            .sum()
    }

    /// The set as class items: single characters and ranges, surrogates left out.
    pub fn items(&self) -> Vec<ClassItem> {
        self.items_ranges()
            .into_iter()
            .map(|(lo, hi)| {
                if lo == hi {
                    ClassItem::Char(lo)
                } else {
                    ClassItem::Range(lo, hi)
                }
            })
            .collect()
    }

    fn items_ranges(&self) -> Vec<(char, char)> {
        let mut out = Vec::new();
        for &(lo, hi) in &self.ranges {
            for (lo, hi) in [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)] {
                if lo <= hi {
                    if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) {
                        out.push((lo, hi));
                    }
                }
            }
        }
        out
    }

    fn normalize(&mut self) {
        self.ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.ranges.len());
        for &(lo, hi) in &self.ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        self.ranges = merged;
    }
}

/// `\d \w \s` and their negations as the validators read them. JSON Schema says
/// ECMAScript, where `\d` is `[0-9]`; Python's `re`, which many validators use, reads
/// Unicode: `\d` is every decimal digit. A grammar must not admit what either
/// refuses, so a class is taken at its narrowest where it admits (`\d` → `[0-9]`) and
/// at its widest where it is excluded (`\D`, `[^\d]` → no decimal digit at all).
pub(super) fn escape_class(letter: char, widest: bool) -> Option<CharSet> {
    let (base, negated) = match letter {
        'd' => ('d', false),
        'D' => ('d', true),
        'w' => ('w', false),
        'W' => ('w', true),
        's' => ('s', false),
        'S' => ('s', true),
        _ => return None,
    };
    // A negation is narrowest when what it negates is widest.
    let set = match (base, widest != negated) {
        ('d', false) => digits(),
        ('d', true) => unicode(r"\p{Nd}").union(&digits()),
        ('w', false) => word(),
        ('w', true) => unicode(r"\w").union(&unicode(r"\p{N}")).union(&word()),
        (_, false) => white(),
        (_, true) => white_widest(),
    };
    Some(if negated { set.complement() } else { set })
}

/// `\d` in ASCII.
fn digits() -> CharSet {
    CharSet::of(&[('0', '9')])
}

/// `\w` in ASCII.
fn word() -> CharSet {
    CharSet::of(&[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')])
}

/// White space for both ECMAScript and Python: ECMAScript's without U+FEFF, which
/// Python does not count.
fn white() -> CharSet {
    CharSet::of(&[
        ('\t', '\r'),
        (' ', ' '),
        ('\u{a0}', '\u{a0}'),
        ('\u{1680}', '\u{1680}'),
        ('\u{2000}', '\u{200a}'),
        ('\u{2028}', '\u{2029}'),
        ('\u{202f}', '\u{202f}'),
        ('\u{205f}', '\u{205f}'),
        ('\u{3000}', '\u{3000}'),
    ])
}

/// White space for either: U+FEFF (ECMAScript) and U+001C–U+001F, U+0085 (Python).
fn white_widest() -> CharSet {
    white().union(&CharSet::of(&[
        ('\u{1c}', '\u{1f}'),
        ('\u{85}', '\u{85}'),
        ('\u{feff}', '\u{feff}'),
    ]))
}

/// A Unicode class by regex syntax (`\p{Nd}`), from regex-syntax's tables.
fn unicode(class: &str) -> CharSet {
    let mut set = CharSet::empty();
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .build()
        .parse(class);
    if let Ok(hir) = hir {
        if let regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(class)) =
            hir.kind()
        {
            for range in class.iter() {
                set.add(range.start(), range.end());
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_complement_and_items() {
        let set = CharSet::of(&[('a', 'c'), ('b', 'f'), ('x', 'x')]);
        assert_eq!(
            set.items(),
            vec![ClassItem::Range('a', 'f'), ClassItem::Char('x')]
        );
        let not = set.complement();
        assert!(!not.contains('b') && not.contains('g') && not.contains('\0'));
        assert_eq!(not.complement(), set);
        assert_eq!(CharSet::all().minus(&CharSet::all()), CharSet::empty());
        assert!(digits().union(&word()).contains('_'));
        let not_digit = escape_class('D', false).unwrap_or_default();
        assert!(
            !not_digit.contains('\u{663}') && !not_digit.contains('5') && not_digit.contains('x')
        );
        let space = escape_class('s', false).unwrap_or_default();
        assert!(space.contains(' ') && !space.contains('\u{feff}'));
        let not_space = escape_class('S', false).unwrap_or_default();
        assert!(
            !not_space.contains('\u{85}')
                && !not_space.contains('\u{feff}')
                && not_space.contains('a')
        );
        let in_negated = escape_class('d', true).unwrap_or_default();
        assert!(in_negated.contains('\u{663}'));
        assert_eq!(CharSet::all().chars_len(), 0x110000 - 0x800);
    }
}
