//! Integers between optional bounds, digit by digit, the way llama.cpp's
//! `build_min_max_int` writes them, so that its reference cases come out identical.
//!
//! Where llama.cpp's construction is wrong this one is not, and the two agree on every
//! case llama.cpp gets right:
//! - the digits after a leading digit are compared as a digit string, leading zeros
//!   kept (llama.cpp reads them back as a number, so `minimum: 100` admitted `10`);
//! - a lower bound with more digits than the usual cap of 16 raises the cap instead of
//!   writing an impossible `{20,15}`;
//! - a remainder starting with a smaller digit than the bound may still be longer.
//!
//! One quirk is kept only on request (`leading_zeros`): llama.cpp writes a negative upper
//! bound's magnitude without excluding leading zeros (`"-" ([0-4] [0-9]{1,15} | …)`
//! admits `-01`, which is not JSON).

use super::exprs::{digit_range, group, lit, one, rep};
use crate::tree::Expr;

/// Digits allowed on an unbounded side, as llama.cpp's `decimals_left = 16`.
const DECIMALS: usize = 16;

/// The alternatives of an integer between `min` and `max` (inclusive), without the
/// surrounding group and `space`. At least one bound must be given and `min <= max`.
pub(super) fn int_range(min: Option<i128>, max: Option<i128>, leading_zeros: bool) -> Expr {
    let mut out = Alts::new();
    let builder = Builder { leading_zeros };
    builder.min_max(&mut out, min, max, DECIMALS, true);
    out.into_expr()
}

/// Alternatives written one item at a time, the way llama.cpp streams `a b | c d` into a
/// string: `push` adds to the current alternative, `bar` starts the next.
struct Alts {
    alts: Vec<Vec<Expr>>,
}

impl Alts {
    fn new() -> Self {
        Self {
            alts: vec![Vec::new()],
        }
    }

    fn push(&mut self, e: Expr) {
        if let Some(last) = self.alts.last_mut() {
            last.push(e);
        }
    }

    fn bar(&mut self) {
        self.alts.push(Vec::new());
    }

    fn into_expr(self) -> Expr {
        let mut alts: Vec<Expr> = self
            .alts
            .into_iter()
            .map(|mut items| match items.len() {
                0 => Expr::Empty,
                1 => items.pop().unwrap_or(Expr::Empty),
                _ => Expr::Seq(items),
            })
            .collect();
        if alts.len() == 1 {
            alts.pop().unwrap_or(Expr::Empty)
        } else {
            Expr::Alt(alts)
        }
    }
}

struct Builder {
    leading_zeros: bool,
}

impl Builder {
    fn min_max(
        &self,
        out: &mut Alts,
        min: Option<i128>,
        max: Option<i128>,
        decimals: usize,
        top: bool,
    ) {
        match (min, max) {
            (Some(mut lo), Some(hi)) => {
                if lo < 0 && hi < 0 {
                    out.push(lit("-"));
                    out.push(
                        self.grouped(|b, g| b.min_max(g, Some(-hi), Some(-lo), decimals, true)),
                    );
                    return;
                }
                if lo < 0 {
                    out.push(lit("-"));
                    out.push(self.grouped(|b, g| b.min_max(g, Some(0), Some(-lo), decimals, true)));
                    out.bar();
                    lo = 0;
                }
                let mut min_s = lo.to_string();
                let max_s = hi.to_string();
                for digits in min_s.len()..max_s.len() {
                    uniform(out, &min_s, &"9".repeat(digits));
                    min_s = format!("1{}", "0".repeat(digits));
                    out.bar();
                }
                uniform(out, &min_s, &max_s);
            }
            (Some(lo), None) => {
                if lo < 0 {
                    out.push(lit("-"));
                    out.push(self.grouped(|b, g| b.min_max(g, Some(0), Some(-lo), decimals, true)));
                    out.bar();
                    out.push(one('0'));
                    out.bar();
                    out.push(Expr::range('1', '9'));
                    push_digits(out, 0, decimals - 1);
                } else {
                    let digits = lo.to_string();
                    let decimals = decimals.max(digits.len());
                    self.at_least(out, &digits, decimals, top);
                }
            }
            (None, Some(hi)) => {
                let less = decimals.saturating_sub(1).max(1);
                if hi >= 0 {
                    if top {
                        out.push(lit("-"));
                        out.push(Expr::range('1', '9'));
                        push_digits(out, 0, less);
                        out.bar();
                    }
                    self.min_max(out, Some(0), Some(hi), decimals, true);
                } else {
                    let digits = (-hi).to_string();
                    let decimals = decimals.max(digits.len());
                    let canonical = !self.leading_zeros;
                    out.push(lit("-"));
                    out.push(self.grouped(|b, g| b.at_least(g, &digits, decimals, canonical)));
                }
            }
            (None, None) => {}
        }
    }

    /// Digit strings not below `min`. At the top level they are canonical integers of
    /// at most `decimals` digits; below it (the digits after a leading one) they may
    /// start with zeros and have between `min.len()` and `decimals` digits.
    fn at_least(&self, out: &mut Alts, min: &str, decimals: usize, top: bool) {
        let less = decimals.saturating_sub(1).max(1);
        let bytes = min.as_bytes();
        let len = bytes.len();
        if bytes.iter().all(|&b| b == b'0') {
            if top {
                out.push(one('0'));
                out.bar();
                out.push(Expr::range('1', '9'));
                push_digits(out, 0, less);
            } else {
                push_digits(out, len, decimals);
            }
            return;
        }
        let c = char::from(bytes[0]);
        let start = if top { '1' } else { '0' };
        if len == 1 {
            if c > start {
                out.push(digit_range(start, prev(c)));
                push_digits(out, 1, less);
                out.bar();
            }
            out.push(digit_range(c, '9'));
            push_digits(out, 0, less);
            return;
        }
        if c > start && len <= less {
            out.push(digit_range(start, prev(c)));
            push_digits(out, len, less);
            out.bar();
        }
        out.push(digit_range(c, c));
        let rest = &min[1..];
        out.push(self.grouped(|b, g| b.at_least(g, rest, less, false)));
        if c < '9' {
            out.bar();
            out.push(digit_range(next(c), '9'));
            push_digits(out, len - 1, less);
        }
    }

    fn grouped(&self, fill: impl FnOnce(&Self, &mut Alts)) -> Expr {
        let mut inner = Alts::new();
        fill(self, &mut inner);
        group(inner.into_expr())
    }
}

/// Same-length digit strings from `from` to `to`, llama.cpp's `uniform_range`.
fn uniform(out: &mut Alts, from: &str, to: &str) {
    for e in uniform_items(from, to) {
        out.push(e);
    }
}

fn uniform_items(from: &str, to: &str) -> Vec<Expr> {
    let f = from.as_bytes();
    let t = to.as_bytes();
    let mut i = 0;
    while i < f.len() && i < t.len() && f[i] == t[i] {
        i += 1;
    }
    let mut items = Vec::new();
    if i > 0 {
        items.push(lit(&from[..i]));
    }
    if i < f.len() && i < t.len() {
        let (fc, tc) = (char::from(f[i]), char::from(t[i]));
        let sub_len = f.len() - i - 1;
        if sub_len > 0 {
            let from_sub = &from[i + 1..];
            let to_sub = &to[i + 1..];
            let zeros = "0".repeat(sub_len);
            let nines = "9".repeat(sub_len);
            let mut inner = Alts::new();
            let mut to_reached = false;
            if from_sub == zeros {
                inner.push(digit_range(fc, prev(tc)));
                push_digits(&mut inner, sub_len, sub_len);
            } else {
                inner.push(one(fc));
                let mut rest = Alts::new();
                uniform(&mut rest, from_sub, &nines);
                inner.push(group(rest.into_expr()));
                if fc < prev(tc) {
                    inner.bar();
                    if to_sub == nines {
                        inner.push(digit_range(next(fc), tc));
                        to_reached = true;
                    } else {
                        inner.push(digit_range(next(fc), prev(tc)));
                    }
                    push_digits(&mut inner, sub_len, sub_len);
                }
            }
            if !to_reached {
                inner.bar();
                inner.push(one(tc));
                uniform(&mut inner, &zeros, to_sub);
            }
            items.push(group(inner.into_expr()));
        } else {
            items.push(Expr::range(fc, tc));
        }
    }
    items
}

/// `[0-9]` repeated `min..=max` times, as llama.cpp's `more_digits` writes it: a bare
/// `[0-9]` for exactly one.
fn push_digits(out: &mut Alts, min: usize, max: usize) {
    let digits = Expr::range('0', '9');
    if min == 1 && max == 1 {
        out.push(digits);
    } else {
        out.push(rep(digits, count(min), Some(count(max))));
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn prev(c: char) -> char {
    char::from_u32(c as u32 - 1).unwrap_or(c)
}

fn next(c: char) -> char {
    char::from_u32(c as u32 + 1).unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gbnf::print::expr;

    fn range(min: Option<i128>, max: Option<i128>) -> String {
        expr(&int_range(min, max, true)).unwrap()
    }

    #[test]
    fn llama_cpp_reference_ranges() {
        assert_eq!(range(Some(0), None), "[0] | [1-9] [0-9]{0,15}");
        assert_eq!(
            range(Some(10), None),
            "[1] ([0-9]{1,15}) | [2-9] [0-9]{1,15}"
        );
        assert_eq!(
            range(Some(25), None),
            "[1] [0-9]{2,15} | [2] ([0-4] [0-9]{1,14} | [5-9] [0-9]{0,14}) | [3-9] [0-9]{1,15}"
        );
        assert_eq!(
            range(Some(15), Some(300)),
            "([1] ([5-9]) | [2-9] [0-9]) | ([1-2] [0-9]{2} | [3] \"00\")"
        );
        assert_eq!(
            range(Some(-10), Some(10)),
            "\"-\" ([0-9] | \"10\") | [0-9] | \"10\""
        );
    }

    #[test]
    fn remainders_keep_their_leading_zeros() {
        // llama.cpp writes `[1] ([0-9]{1,15})` here, which admits 10.
        assert_eq!(
            range(Some(100), None),
            "[1] ([0-9]{2,15}) | [2-9] [0-9]{2,15}"
        );
    }

    #[test]
    fn a_negative_upper_bound_can_exclude_leading_zeros() {
        let exact = expr(&int_range(None, Some(-5), false)).unwrap();
        assert_eq!(exact, "\"-\" ([1-4] [0-9]{1,15} | [5-9] [0-9]{0,15})");
    }

    #[test]
    fn huge_lower_bounds_raise_the_digit_cap() {
        let printed = range(Some(i64::MAX as i128), None);
        assert!(!printed.contains("{19,15}"), "{printed}");
        assert!(printed.starts_with("[9] ([2] ([2] ([3] ("), "{printed}");
    }
}
