//! Checks on a finished grammar: within the size limits, every referenced rule defined,
//! and no rule that can only ever refer to itself (`a ::= a`, which a `$ref` cycle with
//! nothing in between produces) or reach itself again before consuming anything (left
//! recursion, which llama.cpp's grammar engine refuses).

use std::collections::{HashMap, HashSet};

use super::Limits;
use crate::error::{limit_error, schema_error, GrammarError};
use crate::tree::{Expr, Grammar};

pub(super) fn check(grammar: &Grammar, limits: &Limits) -> Result<(), GrammarError> {
    if grammar.rules.len() > limits.max_rules {
        return Err(limit_error(format!(
            "the grammar has {} rules, more than {}",
            grammar.rules.len(),
            limits.max_rules
        )));
    }
    let mut nodes = 0usize;
    for rule in &grammar.rules {
        rule.body.walk(&mut |_| nodes += 1);
    }
    if nodes > limits.max_nodes {
        return Err(limit_error(format!(
            "the grammar has {nodes} nodes, more than {}",
            limits.max_nodes
        )));
    }
    let bodies: HashMap<&str, &Expr> = grammar
        .rules
        .iter()
        .map(|r| (r.name.as_str(), &r.body))
        .collect();
    for rule in &grammar.rules {
        let mut missing = None;
        rule.body.walk(&mut |e| {
            if let Expr::Ref(name) = e {
                if !bodies.contains_key(name.as_str()) {
                    missing = Some(name.clone());
                }
            }
        });
        if let Some(name) = missing {
            return Err(schema_error(format!(
                "internal error: rule {} refers to undefined rule {name}",
                rule.name
            )));
        }
    }
    let productive = productive_rules(&bodies);
    if !productive.contains(grammar.root.as_str()) {
        return Err(schema_error(
            "the schema admits no value ($ref cycle without progress)",
        ));
    }
    let nullable = nullable_rules(&bodies);
    // Rules reachable from each rule before anything is consumed.
    let mut firsts: HashMap<&str, Vec<&str>> = HashMap::new();
    for (&name, body) in &bodies {
        let mut out = Vec::new();
        leading_refs(body, &nullable, &mut out);
        firsts.insert(name, out);
    }
    if let Some(rule) = find_cycle(&firsts) {
        return Err(schema_error(format!(
            "$ref cycle without progress through rule {rule}"
        )));
    }
    Ok(())
}

/// Rules that derive at least one string.
fn productive_rules<'a>(bodies: &HashMap<&'a str, &'a Expr>) -> HashSet<&'a str> {
    let mut productive = HashSet::new();
    loop {
        let before = productive.len();
        for (&name, body) in bodies {
            if !productive.contains(name) && derives(body, &productive) {
                productive.insert(name);
            }
        }
        if productive.len() == before {
            return productive;
        }
    }
}

fn derives(e: &Expr, productive: &HashSet<&str>) -> bool {
    match e {
        Expr::Ref(name) => productive.contains(name.as_str()),
        Expr::Seq(items) => items.iter().all(|i| derives(i, productive)),
        Expr::Alt(items) => items.iter().any(|i| derives(i, productive)),
        Expr::Group { inner, .. } => derives(inner, productive),
        Expr::Repeat { item, min, .. } => *min == 0 || derives(item, productive),
        _ => true,
    }
}

/// Rules that derive the empty string.
fn nullable_rules<'a>(bodies: &HashMap<&'a str, &'a Expr>) -> HashSet<&'a str> {
    let mut nullable = HashSet::new();
    loop {
        let before = nullable.len();
        for (&name, body) in bodies {
            if !nullable.contains(name) && is_nullable(body, &nullable) {
                nullable.insert(name);
            }
        }
        if nullable.len() == before {
            return nullable;
        }
    }
}

fn is_nullable(e: &Expr, nullable: &HashSet<&str>) -> bool {
    match e {
        Expr::Empty => true,
        Expr::Literal(text) => text.is_empty(),
        Expr::Ref(name) => nullable.contains(name.as_str()),
        Expr::Seq(items) => items.iter().all(|i| is_nullable(i, nullable)),
        Expr::Alt(items) => items.iter().any(|i| is_nullable(i, nullable)),
        Expr::Group { inner, .. } => is_nullable(inner, nullable),
        Expr::Repeat { item, min, .. } => *min == 0 || is_nullable(item, nullable),
        _ => false,
    }
}

fn leading_refs<'a>(e: &'a Expr, nullable: &HashSet<&str>, out: &mut Vec<&'a str>) {
    match e {
        Expr::Ref(name) => out.push(name),
        Expr::Seq(items) => {
            for item in items {
                leading_refs(item, nullable, out);
                if !is_nullable(item, nullable) {
                    break;
                }
            }
        }
        Expr::Alt(items) => items.iter().for_each(|i| leading_refs(i, nullable, out)),
        Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => {
            leading_refs(item, nullable, out)
        }
        _ => {}
    }
}

/// A rule on a cycle of the graph, if there is one.
fn find_cycle<'a>(graph: &HashMap<&'a str, Vec<&'a str>>) -> Option<&'a str> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Open,
        Done,
    }
    let mut state: HashMap<&str, State> = HashMap::new();
    let mut names: Vec<&str> = graph.keys().copied().collect();
    names.sort_unstable();
    for start in names {
        if state.contains_key(start) {
            continue;
        }
        // Iterative depth-first search: (node, index of next edge).
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        state.insert(start, State::Open);
        while let Some((node, next)) = stack.last_mut() {
            let edges = graph.get(*node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&to) = edges.get(*next) {
                *next += 1;
                match state.get(to) {
                    Some(State::Open) => return Some(to),
                    Some(State::Done) => {}
                    None => {
                        state.insert(to, State::Open);
                        stack.push((to, 0));
                    }
                }
            } else {
                state.insert(node, State::Done);
                stack.pop();
            }
        }
    }
    None
}
