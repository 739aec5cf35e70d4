//! Whether a short text is in a rule's language: used at conversion time to test listed
//! property names against `patternProperties` and constants against `pattern`, through
//! the very rules the converter built for the pattern. Sets of reachable positions, not
//! backtracking, with a step budget; `None` when the budget runs out.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::tree::{ClassItem, Expr};

const BUDGET: usize = 200_000;

pub(super) fn matches(rules: &BTreeMap<String, Expr>, expr: &Expr, text: &str) -> Option<bool> {
    let chars: Vec<char> = text.chars().collect();
    let mut m = Matcher {
        rules,
        chars: &chars,
        steps: 0,
        memo: HashMap::new(),
    };
    let ends = m.ends(expr, 0)?;
    Some(ends.contains(&chars.len()))
}

struct Matcher<'a> {
    rules: &'a BTreeMap<String, Expr>,
    chars: &'a [char],
    steps: usize,
    memo: HashMap<(String, usize), Option<BTreeSet<usize>>>,
}

impl Matcher<'_> {
    fn ends(&mut self, e: &Expr, start: usize) -> Option<BTreeSet<usize>> {
        self.steps += 1;
        if self.steps > BUDGET {
            return None;
        }
        let one = |ok: bool| -> BTreeSet<usize> {
            if ok {
                BTreeSet::from([start + 1])
            } else {
                BTreeSet::new()
            }
        };
        Some(match e {
            Expr::Empty => BTreeSet::from([start]),
            Expr::Literal(text) => {
                let lit: Vec<char> = text.chars().collect();
                if self.chars.get(start..start + lit.len()) == Some(&lit[..]) {
                    BTreeSet::from([start + lit.len()])
                } else {
                    BTreeSet::new()
                }
            }
            Expr::Class(class) => one(self.chars.get(start).is_some_and(|&c| {
                class.items.iter().any(|item| match *item {
                    ClassItem::Char(x) => x == c,
                    ClassItem::Range(lo, hi) => lo <= c && c <= hi,
                }) != class.negated
            })),
            Expr::AnyChar => one(start < self.chars.len()),
            Expr::Ref(name) => {
                let key = (name.clone(), start);
                if let Some(done) = self.memo.get(&key) {
                    return done.clone();
                }
                // A rule met again at the same place before it finished consumed
                // nothing on the way: it adds no ends.
                self.memo.insert(key.clone(), Some(BTreeSet::new()));
                let body = self.rules.get(name)?.clone();
                let result = self.ends(&body, start);
                self.memo.insert(key, result.clone());
                result?
            }
            Expr::Seq(items) => {
                let mut current = BTreeSet::from([start]);
                for item in items {
                    let mut next = BTreeSet::new();
                    for &p in &current {
                        next.extend(self.ends(item, p)?);
                    }
                    current = next;
                    if current.is_empty() {
                        break;
                    }
                }
                current
            }
            Expr::Alt(items) => {
                let mut all = BTreeSet::new();
                for item in items {
                    all.extend(self.ends(item, start)?);
                }
                all
            }
            Expr::Group { inner, .. } => self.ends(inner, start)?,
            Expr::Repeat { item, min, max } => {
                let mut result = BTreeSet::new();
                let mut current = BTreeSet::from([start]);
                let mut seen = BTreeSet::new();
                let mut count = 0u32;
                loop {
                    if count >= *min {
                        result.extend(current.iter().copied());
                    }
                    if max.is_some_and(|m| count >= m) || current.is_empty() {
                        break;
                    }
                    let mut next = BTreeSet::new();
                    for &p in &current {
                        next.extend(self.ends(item, p)?);
                    }
                    count += 1;
                    if count > *min {
                        next.retain(|p| !seen.contains(p));
                    }
                    if count >= *min {
                        seen.extend(next.iter().copied());
                    }
                    current = next;
                }
                result
            }
            Expr::Token(_) | Expr::Json(_) => return None,
        })
    }
}
