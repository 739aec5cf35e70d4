//! Embedded schemas (`Expr::Json`, Lark's `%json`) turned into rules, for notations that
//! have no such node: GBNF for llama.cpp servers. A dialect writes its call grammar once,
//! with each tool's parameters embedded, and it prints either way.

use serde_json::Value;

use super::{compile, Options};
use crate::error::GrammarError;
use crate::tree::{Expr, Grammar};

/// The grammar with every embedded schema converted (with `options`) and included under
/// `json-N-` names; the warnings of each conversion are returned beside it.
pub fn expand_embedded(
    grammar: &Grammar,
    options: &Options,
) -> Result<(Grammar, Vec<String>), GrammarError> {
    let mut out = grammar.clone();
    let mut warnings = Vec::new();
    for n in 0.. {
        let Some(schema) = take_first_schema(&mut out) else {
            break;
        };
        let compiled = compile(&schema, options)?;
        warnings.extend(compiled.warnings);
        let mut embedded = compiled.grammar;
        let root = embedded.root.clone();
        embedded.rename_rule(&root, &format!("json-{n}"));
        let reference = out.include(embedded, &format!("json-{n}-"));
        replace_placeholder(&mut out, &reference);
    }
    Ok((out, warnings))
}

/// Where a schema was taken out, until its rules are in.
const PLACEHOLDER: &str = "\u{0}embedded-schema";

fn take_first_schema(grammar: &mut Grammar) -> Option<Value> {
    grammar
        .rules
        .iter_mut()
        .find_map(|rule| take_schema(&mut rule.body))
}

fn take_schema(e: &mut Expr) -> Option<Value> {
    match e {
        Expr::Json(_) => match std::mem::replace(e, Expr::Ref(PLACEHOLDER.into())) {
            Expr::Json(schema) => Some(schema),
            _ => None,
        },
        Expr::Seq(items) | Expr::Alt(items) => items.iter_mut().find_map(take_schema),
        Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => take_schema(item),
        _ => None,
    }
}

fn replace_placeholder(grammar: &mut Grammar, reference: &Expr) {
    let Expr::Ref(name) = reference else { return };
    let new_name = |n: &str| {
        if n == PLACEHOLDER {
            name.clone()
        } else {
            n.to_string()
        }
    };
    for rule in &mut grammar.rules {
        rule.body.rename_refs(&new_name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Validator;
    use serde_json::json;

    #[test]
    fn embedded_schemas_become_rules_that_admit_the_same_calls() {
        let mut g = Grammar::new("root");
        let call = |name: &str| {
            Expr::Json(
                json!({"type": "object", "properties": {"name": {"const": name}},
                "required": ["name"], "additionalProperties": false}),
            )
        };
        g.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>"),
                Expr::group(Expr::Alt(vec![call("f"), call("g")])),
                Expr::literal("</tool_call>"),
            ]),
        );
        let (expanded, warnings) = expand_embedded(&g, &Options::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let gbnf = crate::gbnf::print(&expanded).unwrap();
        assert!(
            gbnf.contains("root ::= \"<tool_call>\" (json-0 | json-1) \"</tool_call>\""),
            "{gbnf}"
        );
        let v = Validator::from_grammar(&expanded).unwrap();
        assert!(v.accepts("<tool_call>{\"name\": \"g\"}</tool_call>"));
        assert!(!v.accepts("<tool_call>{\"name\": \"h\"}</tool_call>"));
        let reparsed = crate::gbnf::parse(&gbnf).unwrap();
        assert!(Validator::from_grammar(&reparsed)
            .unwrap()
            .accepts("<tool_call>{\"name\":\"f\"}</tool_call>"));
    }
}
