//! Keeps expressions shallow. A key trie nests one group per character of the longest
//! listed name, a number bound one per digit; llguidance refuses Lark expressions
//! nested too deeply (and deep recursion is a stack hazard in any parser). Groups below
//! a depth are moved into rules of their own (`name-g1`, …), which reads the same.

use std::collections::BTreeMap;

use crate::tree::Expr;

/// Groups nested deeper than this become rules.
pub(super) const MAX_GROUP_DEPTH: usize = 8;

pub(super) fn flatten(rules: &mut BTreeMap<String, Expr>) {
    let names: Vec<String> = rules.keys().cloned().collect();
    for name in names {
        let Some(body) = rules.remove(&name) else {
            continue;
        };
        if depth(&body) <= MAX_GROUP_DEPTH {
            rules.insert(name, body);
            continue;
        }
        let mut hoister = Hoister {
            base: name.clone(),
            counter: 0,
            new_rules: Vec::new(),
        };
        let body = hoister.hoist(body, 0, rules);
        rules.insert(name, body);
        for (new_name, new_body) in hoister.new_rules {
            rules.insert(new_name, new_body);
        }
    }
}

/// How many groups deep the expression nests.
fn depth(e: &Expr) -> usize {
    match e {
        Expr::Group { inner, .. } => 1 + depth(inner),
        Expr::Seq(items) => items
            .iter()
            .map(|i| depth(i) + usize::from(matches!(i, Expr::Alt(_))))
            .max()
            .unwrap_or(0),
        Expr::Alt(items) => items.iter().map(depth).max().unwrap_or(0),
        Expr::Repeat { item, .. } => depth(item) + usize::from(!item.is_atomic()),
        _ => 0,
    }
}

struct Hoister {
    base: String,
    counter: usize,
    new_rules: Vec<(String, Expr)>,
}

impl Hoister {
    fn hoist(&mut self, e: Expr, level: usize, rules: &BTreeMap<String, Expr>) -> Expr {
        match e {
            Expr::Group { inner, padded } => {
                if level + 1 > MAX_GROUP_DEPTH {
                    let body = self.hoist(*inner, 0, rules);
                    let name = self.fresh(rules);
                    self.new_rules.push((name.clone(), body));
                    Expr::Ref(name)
                } else {
                    Expr::Group {
                        inner: Box::new(self.hoist(*inner, level + 1, rules)),
                        padded,
                    }
                }
            }
            Expr::Seq(items) => Expr::Seq(
                items
                    .into_iter()
                    .map(|i| {
                        let extra = usize::from(matches!(i, Expr::Alt(_)));
                        self.hoist(i, level + extra, rules)
                    })
                    .collect(),
            ),
            Expr::Alt(items) => Expr::Alt(
                items
                    .into_iter()
                    .map(|i| self.hoist(i, level, rules))
                    .collect(),
            ),
            Expr::Repeat { item, min, max } => {
                let extra = usize::from(!item.is_atomic());
                Expr::Repeat {
                    item: Box::new(self.hoist(*item, level + extra, rules)),
                    min,
                    max,
                }
            }
            other => other,
        }
    }

    fn fresh(&mut self, rules: &BTreeMap<String, Expr>) -> String {
        loop {
            self.counter += 1;
            let name = format!("{}-g{}", self.base, self.counter);
            if !rules.contains_key(&name) && !self.new_rules.iter().any(|(n, _)| *n == name) {
                return name;
            }
        }
    }
}
