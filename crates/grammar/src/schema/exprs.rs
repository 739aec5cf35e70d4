//! Short constructors for the tree nodes the converter builds, so that each rule reads
//! close to the GBNF llama.cpp writes for it (`seq([lit("{"), space()])` for `"{" space`).

use crate::gbnf::parse::MAX_REPETITION;
use crate::tree::{CharClass, ClassItem, Expr};

/// The prefix of the rules made for a schema's children: `name-`, or nothing at the root.
pub(super) fn child_prefix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{name}-")
    }
}

pub(super) fn lit(text: impl Into<String>) -> Expr {
    Expr::Literal(text.into())
}

pub(super) fn rf(name: impl Into<String>) -> Expr {
    Expr::Ref(name.into())
}

pub(super) fn space() -> Expr {
    rf("space")
}

/// A sequence; one item stands for itself.
pub(super) fn seq(mut items: Vec<Expr>) -> Expr {
    if items.len() == 1 {
        items.pop().unwrap_or(Expr::Empty)
    } else {
        Expr::Seq(items)
    }
}

/// Alternatives; one alternative stands for itself.
pub(super) fn alt(mut items: Vec<Expr>) -> Expr {
    if items.len() == 1 {
        items.pop().unwrap_or(Expr::Empty)
    } else {
        Expr::Alt(items)
    }
}

/// `(inner)`
pub(super) fn group(inner: Expr) -> Expr {
    Expr::group(inner)
}

/// `( inner )`, the spelling of llama.cpp's hand-written rules.
pub(super) fn padded(inner: Expr) -> Expr {
    Expr::Group {
        inner: Box::new(inner),
        padded: true,
    }
}

/// `item{min,max}`; nothing at all for `{0,0}`, which not every reader takes.
pub(super) fn rep(item: Expr, min: u32, max: Option<u32>) -> Expr {
    if max == Some(0) {
        return Expr::Empty;
    }
    Expr::repeat(item, min, max)
}

pub(super) fn opt(item: Expr) -> Expr {
    Expr::repeat(item, 0, Some(1))
}

pub(super) fn star(item: Expr) -> Expr {
    Expr::repeat(item, 0, None)
}

pub(super) fn plus(item: Expr) -> Expr {
    Expr::repeat(item, 1, None)
}

/// A class of single characters and ranges, written `[…]`.
pub(super) fn class(items: Vec<ClassItem>) -> Expr {
    Expr::Class(CharClass::new(false, items))
}

/// A negated class, written `[^…]`.
pub(super) fn not_class(items: Vec<ClassItem>) -> Expr {
    Expr::Class(CharClass::new(true, items))
}

/// `[c]`
pub(super) fn one(c: char) -> Expr {
    class(vec![ClassItem::Char(c)])
}

/// `[lo-hi]`, or `[lo]` when both ends are the same, as llama.cpp's `digit_range` writes.
pub(super) fn digit_range(lo: char, hi: char) -> Expr {
    if lo == hi {
        one(lo)
    } else {
        Expr::range(lo, hi)
    }
}

/// Characters listed one by one, `[eE]`.
pub(super) fn chars(list: &str) -> Expr {
    class(list.chars().map(ClassItem::Char).collect())
}

/// `[0-9a-fA-F]`
pub(super) fn hex() -> Expr {
    class(vec![
        ClassItem::Range('0', '9'),
        ClassItem::Range('a', 'f'),
        ClassItem::Range('A', 'F'),
    ])
}

/// `item` repeated `min..=max` times (`max: None` unbounded), items separated by `sep`
/// when given: llama.cpp's `build_repetition`, whose spelling the reference cases pin
/// (`item ("," space item){2,4}`, `(item ("," space item)?)?`, nothing for zero).
/// Counts above `cap` are written as repetitions of repetitions (see [`counted`]).
pub(super) fn repetition(
    item: Expr,
    min: u64,
    max: Option<u64>,
    sep: Option<&[Expr]>,
    cap: u32,
) -> Expr {
    if max == Some(0) {
        return Expr::Empty;
    }
    if min == 0 && max == Some(1) {
        return opt(item);
    }
    let Some(sep) = sep else {
        return counted(item, min, max, cap);
    };
    let mut tail = sep.to_vec();
    tail.push(item.clone());
    let rest = repetition(
        group(Expr::Seq(tail)),
        min.saturating_sub(1),
        max.map(|m| m - 1),
        None,
        cap,
    );
    let result = Expr::Seq(vec![item, rest]);
    if min == 0 {
        opt(group(result))
    } else {
        result
    }
}

/// The block size counts above the cap are cut into.
const BLOCK: u64 = 100;

/// `item{min,max}`, exactly, with no count above `cap`: larger counts become blocks,
/// `item{250}` with a cap of 100 being `(item{100}){2} item{50}`, so that a schema's
/// `maxLength: 65535` stays a small grammar (and a bounded one for llama.cpp, which
/// copies a repeated item once per count).
pub(super) fn counted(item: Expr, min: u64, max: Option<u64>, cap: u32) -> Expr {
    let cap = u64::from(cap.max(2)).min(llama_cpp_cap(&item));
    if min <= cap && max.is_none_or(|m| m <= cap) {
        return rep(item, min as u32, max.map(|m| m as u32));
    }
    let mut parts = Vec::new();
    if min > 0 {
        parts.push(exactly(item.clone(), min, cap));
    }
    match max {
        None => parts.push(star(item)),
        Some(m) if m > min => parts.push(up_to(item, m - min, cap)),
        Some(_) => {}
    }
    seq(parts)
}

fn block(item: Expr, size: u64) -> Expr {
    group(rep(item, size as u32, Some(size as u32)))
}

/// The largest count llama.cpp's GBNF parser takes on `item`: it refuses a repetition
/// whose count times the rules its item creates (`n_prev_rules`) reaches
/// [`MAX_REPETITION`], so a block of blocks (which creates one rule per group) takes a
/// smaller count than a literal. Never below 2, so that blocks still shrink a count.
fn llama_cpp_cap(item: &Expr) -> u64 {
    ((MAX_REPETITION - 1) / rules_created(item).max(1)).max(2)
}

/// The rules llama.cpp creates reading `expr`: one per group, per rule name (counted each
/// time, which over-counts a name already seen) and per optional copy of a repetition.
fn rules_created(expr: &Expr) -> u64 {
    match expr {
        Expr::Ref(_) => 1,
        Expr::Group { inner, .. } => rules_created(inner).saturating_add(1),
        Expr::Repeat { item, min, max } => {
            let optional = max.map_or(1, |max| u64::from(max.saturating_sub(*min)));
            rules_created(item).saturating_add(optional)
        }
        Expr::Seq(items) | Expr::Alt(items) => items
            .iter()
            .fold(0, |sum, item| sum.saturating_add(rules_created(item))),
        Expr::Empty
        | Expr::Literal(_)
        | Expr::Class(_)
        | Expr::AnyChar
        | Expr::Token(_)
        | Expr::Json(_) => 0,
    }
}

/// `item{n}`
fn exactly(item: Expr, n: u64, cap: u64) -> Expr {
    let cap = cap.min(llama_cpp_cap(&item));
    if n <= cap {
        return rep(item, n as u32, Some(n as u32));
    }
    let (a, r) = (n / BLOCK, n % BLOCK);
    let mut parts = vec![exactly(block(item.clone(), BLOCK), a, cap)];
    if r > 0 {
        parts.push(rep(item, r as u32, Some(r as u32)));
    }
    seq(parts)
}

/// `item{0,n}`: fewer than `a` whole blocks and a partial one, or `a` whole blocks and
/// at most the remainder.
fn up_to(item: Expr, n: u64, cap: u64) -> Expr {
    let cap = cap.min(llama_cpp_cap(&item));
    if n <= cap {
        return rep(item, 0, Some(n as u32));
    }
    let (a, r) = (n / BLOCK, n % BLOCK);
    let fewer = seq(vec![
        up_to(block(item.clone(), BLOCK), a - 1, cap),
        rep(item.clone(), 0, Some((BLOCK - 1) as u32)),
    ]);
    let all = seq(vec![
        exactly(block(item.clone(), BLOCK), a, cap),
        rep(item, 0, Some(r as u32)),
    ]);
    alt(vec![fewer, all])
}
