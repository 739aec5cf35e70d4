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

/// `\d`
pub(super) fn digits() -> CharSet {
    CharSet::of(&[('0', '9')])
}

/// `\w`
pub(super) fn word() -> CharSet {
    CharSet::of(&[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')])
}

/// `\s`, ECMAScript's white space and line terminators.
pub(super) fn white() -> CharSet {
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
        ('\u{feff}', '\u{feff}'),
    ])
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
        assert_eq!(CharSet::all().chars_len(), 0x110000 - 0x800);
    }
}
