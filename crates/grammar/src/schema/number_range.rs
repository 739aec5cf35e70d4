//! Numbers between bounds, exclusive or not, for `type: number`: digit by digit over
//! JSON's number syntax. Integer parts reuse [`super::int_range`]; fractions are
//! compared digit by digit against the bound's fraction. Exponents are not admitted
//! (the bound would have to be compared against the scaled value), which leaves out
//! some valid spellings such as `1e3` but never admits a number out of bounds.

use serde_json::{Map, Value};

use super::exprs::{alt, digit_range, group, lit, one, opt, plus, seq, star};
use super::int_range::int_range;
use crate::error::{schema_error, Result};
use crate::tree::Expr;

/// Integer parts beyond this many digits are out of reach.
const MAX_INT_DIGITS: usize = 30;
/// Fraction digits a bound is compared on; a longer bound is rounded inwards.
const MAX_FRACTION_DIGITS: usize = 40;

/// A bound: a non-negative decimal (integer and fraction digits), its sign, and
/// whether it is exclusive.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Bound {
    negative: bool,
    int: String,
    frac: String,
    exclusive: bool,
}

impl Bound {
    /// The lower and upper bounds of a schema (draft 4's boolean exclusives included);
    /// the tighter of two lower (upper) bounds wins.
    pub(super) fn of_schema(
        obj: &Map<String, Value>,
        path: &str,
    ) -> Result<(Option<Bound>, Option<Bound>)> {
        let mut lower: Option<Bound> = None;
        let mut upper: Option<Bound> = None;
        for (key, is_lower, exclusive) in [
            (
                "minimum",
                true,
                obj.get("exclusiveMinimum") == Some(&Value::Bool(true)),
            ),
            ("exclusiveMinimum", true, true),
            (
                "maximum",
                false,
                obj.get("exclusiveMaximum") == Some(&Value::Bool(true)),
            ),
            ("exclusiveMaximum", false, true),
        ] {
            let Some(value) = obj.get(key) else { continue };
            if value.is_boolean() {
                continue;
            }
            let Some(bound) = Bound::parse(value, exclusive) else {
                return Err(schema_error(format!(
                    "{path}/{key}: expected a number, found {value}"
                )));
            };
            let slot = if is_lower { &mut lower } else { &mut upper };
            let tighter = match slot {
                None => true,
                Some(old) => {
                    let order = bound.cmp_value(old);
                    let stricter_at_tie = order == std::cmp::Ordering::Equal && bound.exclusive;
                    if is_lower {
                        order == std::cmp::Ordering::Greater || stricter_at_tie
                    } else {
                        order == std::cmp::Ordering::Less || stricter_at_tie
                    }
                }
            };
            if tighter {
                *slot = Some(bound);
            }
        }
        Ok((lower, upper))
    }

    fn parse(value: &Value, exclusive: bool) -> Option<Bound> {
        let Value::Number(n) = value else { return None };
        let text = if let Some(i) = n.as_i64() {
            i.to_string()
        } else if let Some(u) = n.as_u64() {
            u.to_string()
        } else {
            format!("{}", n.as_f64()?)
        };
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let int = int.trim_start_matches('0');
        let frac = frac.trim_end_matches('0');
        Some(Bound {
            negative: negative && !(int.is_empty() && frac.is_empty()),
            int: if int.is_empty() {
                "0".into()
            } else {
                int.into()
            },
            frac: frac.into(),
            exclusive,
        })
    }

    fn zero(exclusive: bool) -> Bound {
        Bound {
            negative: false,
            int: "0".into(),
            frac: String::new(),
            exclusive,
        }
    }

    fn is_zero(&self) -> bool {
        self.int == "0" && self.frac.is_empty()
    }

    fn negated(&self) -> Bound {
        Bound {
            negative: !self.negative && !self.is_zero(),
            ..self.clone()
        }
    }

    /// Compares the values, ignoring exclusiveness.
    fn cmp_value(&self, other: &Bound) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        match (self.negative, other.negative) {
            (false, true) => Greater,
            (true, false) => Less,
            (negative, _) => {
                let magnitude = (self.int.len(), &self.int)
                    .cmp(&(other.int.len(), &other.int))
                    .then_with(|| cmp_fraction(&self.frac, &other.frac));
                if negative {
                    magnitude.reverse()
                } else {
                    magnitude
                }
            }
        }
    }
}

fn cmp_fraction(a: &str, b: &str) -> std::cmp::Ordering {
    let n = a.len().max(b.len());
    let pad = |s: &str| format!("{s:0<n$}");
    pad(a).cmp(&pad(b))
}

/// The alternatives of a number between `lower` and `upper`, or `None` when no number
/// is.
pub(super) fn number_range(lower: Option<Bound>, upper: Option<Bound>) -> Option<Expr> {
    if let (Some(lo), Some(hi)) = (&lower, &upper) {
        let order = lo.cmp_value(hi);
        if order == std::cmp::Ordering::Greater
            || (order == std::cmp::Ordering::Equal && (lo.exclusive || hi.exclusive))
        {
            return None;
        }
    }
    let mut parts = Vec::new();
    // Zero and above.
    let upper_reaches_zero = upper
        .as_ref()
        .is_none_or(|hi| !(hi.negative || hi.is_zero() && hi.exclusive));
    if upper_reaches_zero {
        let lo = match &lower {
            Some(lo) if !lo.negative => lo.clone(),
            _ => Bound::zero(false),
        };
        if let Some(m) = magnitude(&lo, upper.as_ref()) {
            parts.push(m);
        }
    }
    // Below zero: the magnitude lies between -upper (or just above 0) and -lower.
    let lower_below_zero = lower.as_ref().is_none_or(|lo| lo.negative);
    if lower_below_zero {
        let lo = match &upper {
            Some(hi) if hi.negative => hi.negated(),
            _ => Bound::zero(true),
        };
        let hi = lower.as_ref().map(Bound::negated);
        if let Some(m) = magnitude(&lo, hi.as_ref()) {
            parts.push(seq(vec![lit("-"), group(m)]));
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(alt(parts))
    }
}

/// Non-negative numbers from `lo` up to `hi` (both non-negative), as `int ("." frac)?`.
fn magnitude(lo: &Bound, hi: Option<&Bound>) -> Option<Expr> {
    if lo.int.len() > MAX_INT_DIGITS {
        // Nothing that long is written.
        return None;
    }
    // Nothing written reaches so far an upper bound.
    let hi = hi.filter(|h| h.int.len() <= MAX_INT_DIGITS);
    let lo_int: i128 = lo.int.parse().ok()?;
    let lo_frac = clip(&lo.frac, true);
    let mut alternatives = Vec::new();
    match hi {
        None => {
            // The integer part of the bound, with a large enough fraction …
            alternatives.extend(with_int(lo_int, fraction_at_least(&lo_frac, lo.exclusive)));
            // … or any larger integer part.
            let above = int_range(Some(lo_int + 1), None, false);
            alternatives.push(seq(vec![group(above), any_fraction()]));
        }
        Some(hi) => {
            let hi_int: i128 = hi.int.parse().ok()?;
            let hi_frac = clip(&hi.frac, false);
            if lo_int == hi_int {
                alternatives.extend(with_int(
                    lo_int,
                    fraction_between(&lo_frac, &hi_frac, lo.exclusive, hi.exclusive),
                ));
            } else {
                alternatives.extend(with_int(lo_int, fraction_at_least(&lo_frac, lo.exclusive)));
                if lo_int + 1 < hi_int {
                    let between = int_range(Some(lo_int + 1), Some(hi_int - 1), false);
                    alternatives.push(seq(vec![group(between), any_fraction()]));
                }
                alternatives.extend(with_int(hi_int, fraction_at_most(&hi_frac, hi.exclusive)));
            }
        }
    }
    if alternatives.is_empty() {
        None
    } else {
        Some(alt(alternatives))
    }
}

/// A fraction bound cut to the digits compared on, rounded inwards: up for a lower
/// bound (one more in the last kept digit), down for an upper one.
fn clip(frac: &str, lower: bool) -> String {
    if frac.len() <= MAX_FRACTION_DIGITS {
        return frac.to_string();
    }
    let kept = &frac[..MAX_FRACTION_DIGITS];
    if !lower {
        return kept.trim_end_matches('0').to_string();
    }
    // Round up: increment the kept digits as a number. All nines cannot happen for a
    // fraction below one with more digits after; if it did the bound is taken as
    // `.99…9`, still inside.
    let mut digits: Vec<u8> = kept.bytes().collect();
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            break;
        }
    }
    String::from_utf8(digits)
        .unwrap_or_default()
        .trim_end_matches('0')
        .to_string()
}

/// Digit strings after a decimal point: whether the empty one (no fraction) is in, and
/// the non-empty ones.
struct Digits {
    empty: bool,
    nonempty: Option<Expr>,
}

impl Digits {
    fn none() -> Self {
        Self {
            empty: false,
            nonempty: None,
        }
    }

    /// `d` followed by these.
    fn after(self, d: Expr) -> Option<Expr> {
        match (self.empty, self.nonempty) {
            (false, None) => None,
            (true, None) => Some(d),
            (false, Some(rest)) => Some(seq(vec![d, rest])),
            (true, Some(rest)) => Some(seq(vec![d, opt(group(rest))])),
        }
    }

    /// `("." digits)?` after an integer part.
    fn into_fraction(self) -> Option<Expr> {
        match (self.empty, self.nonempty) {
            (false, None) => None,
            (true, None) => Some(Expr::Empty),
            (false, Some(d)) => Some(seq(vec![lit("."), d])),
            (true, Some(d)) => Some(opt(group(seq(vec![lit("."), d])))),
        }
    }
}

fn any_digits() -> Expr {
    plus(digit())
}

fn digit() -> Expr {
    Expr::range('0', '9')
}

fn any_fraction() -> Expr {
    opt(group(seq(vec![lit("."), any_digits()])))
}

/// `[0]* [1-9] [0-9]*`: digit strings that are not all zeros.
fn nonzero_digits() -> Expr {
    seq(vec![star(one('0')), digit_range('1', '9'), star(digit())])
}

fn with_int(int: i128, fraction: Digits) -> Option<Expr> {
    let fraction = fraction.into_fraction()?;
    let int = lit(int.to_string());
    Some(match fraction {
        Expr::Empty => int,
        f => seq(vec![int, f]),
    })
}

fn digit_at(s: &[u8], k: usize) -> u8 {
    s.get(k).copied().unwrap_or(b'0')
}

fn all_zero(s: &[u8], k: usize) -> bool {
    s.iter().skip(k).all(|&d| d == b'0')
}

/// Fractions `f` with `0.f >= 0.bound` (`>` when exclusive).
fn fraction_at_least(bound: &str, exclusive: bool) -> Digits {
    at_least(bound.as_bytes(), 0, exclusive)
}

fn at_least(b: &[u8], k: usize, exclusive: bool) -> Digits {
    if all_zero(b, k) {
        return if exclusive {
            Digits {
                empty: false,
                nonempty: Some(nonzero_digits()),
            }
        } else {
            Digits {
                empty: true,
                nonempty: Some(any_digits()),
            }
        };
    }
    let d = char::from(digit_at(b, k));
    let mut alternatives = Vec::new();
    if d < '9' {
        alternatives.push(seq(vec![digit_range(next(d), '9'), star(digit())]));
    }
    if let Some(e) = at_least(b, k + 1, exclusive).after(one(d)) {
        alternatives.push(e);
    }
    Digits {
        empty: false,
        nonempty: (!alternatives.is_empty()).then(|| alt(alternatives)),
    }
}

/// Fractions `f` with `0.f <= 0.bound` (`<` when exclusive).
fn fraction_at_most(bound: &str, exclusive: bool) -> Digits {
    at_most(bound.as_bytes(), 0, exclusive)
}

fn at_most(b: &[u8], k: usize, exclusive: bool) -> Digits {
    if all_zero(b, k) {
        return if exclusive {
            Digits::none()
        } else {
            Digits {
                empty: true,
                nonempty: Some(plus(one('0'))),
            }
        };
    }
    let d = char::from(digit_at(b, k));
    let mut alternatives = Vec::new();
    if d > '0' {
        alternatives.push(seq(vec![digit_range('0', prev(d)), star(digit())]));
    }
    if let Some(e) = at_most(b, k + 1, exclusive).after(one(d)) {
        alternatives.push(e);
    }
    Digits {
        empty: true,
        nonempty: (!alternatives.is_empty()).then(|| alt(alternatives)),
    }
}

/// Fractions between two bounds of the same integer part.
fn fraction_between(lo: &str, hi: &str, lo_excl: bool, hi_excl: bool) -> Digits {
    between(lo.as_bytes(), hi.as_bytes(), 0, lo_excl, hi_excl)
}

fn between(lo: &[u8], hi: &[u8], k: usize, lo_excl: bool, hi_excl: bool) -> Digits {
    let n = lo.len().max(hi.len());
    if k >= n {
        // The bounds are equal from here on.
        return if lo_excl || hi_excl {
            Digits::none()
        } else {
            Digits {
                empty: true,
                nonempty: Some(plus(one('0'))),
            }
        };
    }
    let (a, b) = (char::from(digit_at(lo, k)), char::from(digit_at(hi, k)));
    // No more digits means the rest is zero: in when the lower bound's rest is zero too.
    let empty = all_zero(lo, k) && !lo_excl;
    let mut alternatives = Vec::new();
    if a == b {
        if let Some(e) = between(lo, hi, k + 1, lo_excl, hi_excl).after(one(a)) {
            alternatives.push(e);
        }
    } else {
        if let Some(e) = at_least(lo, k + 1, lo_excl).after(one(a)) {
            alternatives.push(e);
        }
        if next(a) < b {
            alternatives.push(seq(vec![digit_range(next(a), prev(b)), star(digit())]));
        }
        if let Some(e) = at_most(hi, k + 1, hi_excl).after(one(b)) {
            alternatives.push(e);
        }
    }
    Digits {
        empty,
        nonempty: (!alternatives.is_empty()).then(|| alt(alternatives)),
    }
}

fn next(c: char) -> char {
    char::from_u32(c as u32 + 1).unwrap_or(c)
}

fn prev(c: char) -> char {
    char::from_u32(c as u32 - 1).unwrap_or(c)
}
