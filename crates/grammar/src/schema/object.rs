//! Objects: llama.cpp's `_build_object_rule` and `_not_strings`.
//!
//! Properties come in the order the schema writes them; required ones first, each
//! optional one then reachable through a chain of `-rest` rules so that any subset can
//! appear, still in order. Extra properties (`additionalProperties`) come last, under
//! keys that are none of the listed names (a trie of the names, `-k`).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::converter::{Converter, Result};
use super::exprs::{alt, group, lit, not_class, one, opt, padded, plus, rf, seq, space, star};
use crate::tree::{ClassItem, Expr};

/// The key under which extra properties are tracked, as llama.cpp does.
const EXTRA: &str = "*";

impl Converter<'_> {
    /// The body of an object rule. `properties` are (name, schema, path); `additional`
    /// is the `additionalProperties` keyword (absent: none allowed, as in llama.cpp).
    pub(super) fn object_rule(
        &mut self,
        properties: &[(String, Value, String)],
        required: &[String],
        name: &str,
        additional: Option<&Value>,
        path: &str,
    ) -> Result<Expr> {
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("{name}-")
        };
        let mut required_props: Vec<String> = Vec::new();
        let mut optional_props: Vec<String> = Vec::new();
        let mut kv_rules: HashMap<String, String> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        for (prop_name, prop_schema, prop_path) in properties {
            let value_rule = self.visit(prop_schema, &format!("{prefix}{prop_name}"), prop_path)?;
            let kv = seq(vec![
                lit(Value::String(prop_name.clone()).to_string()),
                space(),
                lit(":"),
                space(),
                rf(value_rule),
            ]);
            let kv_rule = self.add_rule(&format!("{prefix}{prop_name}-kv"), kv);
            kv_rules.insert(prop_name.clone(), kv_rule);
            if required.contains(prop_name) {
                required_props.push(prop_name.clone());
            } else {
                optional_props.push(prop_name.clone());
            }
            names.push(prop_name.clone());
        }
        let extra = match additional {
            Some(Value::Bool(true)) => Some(None),
            Some(schema @ Value::Object(_)) => Some(Some(schema)),
            _ => None,
        };
        if let Some(value_schema) = extra {
            let sub_name = format!("{prefix}additional");
            let value_rule = match value_schema {
                Some(schema) => self.visit(
                    schema,
                    &format!("{sub_name}-value"),
                    &format!("{path}/additionalProperties"),
                )?,
                None => self.primitive("value"),
            };
            let key_rule = if names.is_empty() {
                self.primitive("string")
            } else {
                let body = self.not_strings(&names);
                self.add_rule(&format!("{sub_name}-k"), body)
            };
            let kv = seq(vec![rf(key_rule), lit(":"), space(), rf(value_rule)]);
            let kv_rule = self.add_rule(&format!("{sub_name}-kv"), kv);
            kv_rules.insert(EXTRA.to_string(), kv_rule);
            optional_props.push(EXTRA.to_string());
        }

        let kv = |k: &str| rf(kv_rules.get(k).cloned().unwrap_or_default());
        let mut body = vec![lit("{"), space()];
        for (i, prop) in required_props.iter().enumerate() {
            if i > 0 {
                body.push(lit(","));
                body.push(space());
            }
            body.push(kv(prop));
        }
        if optional_props.is_empty() {
            if required_props.is_empty() {
                body.push(Expr::Empty);
            }
        } else {
            let mut alternatives = Vec::with_capacity(optional_props.len());
            for i in 0..optional_props.len() {
                let chain = self.optional_chain(&optional_props[i..], false, &prefix, &kv_rules);
                alternatives.push(chain);
            }
            if required_props.is_empty() {
                // llama.cpp writes `"{" space  (a-kv a-rest | … | c-kv )?`.
                if let Some(last) = alternatives.pop() {
                    alternatives.push(trailing_blank(last));
                }
                body.push(Expr::Empty);
                body.push(opt(group(alt(alternatives))));
            } else {
                body.push(opt(padded(seq(vec![
                    lit(","),
                    space(),
                    padded(alt(alternatives)),
                ]))));
            }
        }
        body.push(lit("}"));
        body.push(space());
        Ok(seq(body))
    }

    /// The optional properties `keys`, in order, any subset of them: the first one
    /// (optional itself when `first_is_optional`) and a `-rest` rule for the others.
    fn optional_chain(
        &mut self,
        keys: &[String],
        first_is_optional: bool,
        prefix: &str,
        kv_rules: &HashMap<String, String>,
    ) -> Expr {
        let Some(first) = keys.first() else {
            return Expr::Empty;
        };
        let kv_rule = kv_rules.get(first).cloned().unwrap_or_default();
        let comma_kv = padded(seq(vec![lit(","), space(), rf(kv_rule.clone())]));
        let mut items = if first_is_optional {
            vec![if first == EXTRA {
                star(comma_kv)
            } else {
                opt(comma_kv)
            }]
        } else if first == EXTRA {
            vec![rf(kv_rule), star(comma_kv)]
        } else {
            vec![rf(kv_rule)]
        };
        if keys.len() > 1 {
            let rest = self.optional_chain(&keys[1..], true, prefix, kv_rules);
            let rest_rule = self.add_rule(&format!("{prefix}{first}-rest"), rest);
            items.push(rf(rest_rule));
        }
        seq(items)
    }

    /// A JSON string that is none of `strings`, followed by `space`: a trie of the
    /// strings, leaving it at any character that no string continues with.
    pub(super) fn not_strings(&mut self, strings: &[String]) -> Expr {
        let mut trie = Trie::default();
        for s in strings {
            trie.insert(s);
        }
        let char_rule = self.primitive("char");
        let body = if trie.children.is_empty() {
            // Only the empty string is excluded: any other string.
            plus(rf(char_rule))
        } else {
            let inner = padded(trie.alternatives(&char_rule));
            if trie.is_end {
                inner
            } else {
                opt(inner)
            }
        };
        seq(vec![one('"'), body, one('"'), space()])
    }
}

/// The same sequence with an empty piece at its end, printed as a trailing blank.
fn trailing_blank(e: Expr) -> Expr {
    match e {
        Expr::Seq(mut items) => {
            items.push(Expr::Empty);
            Expr::Seq(items)
        }
        other => Expr::Seq(vec![other, Expr::Empty]),
    }
}

#[derive(Default)]
struct Trie {
    children: BTreeMap<char, Trie>,
    is_end: bool,
}

impl Trie {
    fn insert(&mut self, s: &str) {
        let mut node = self;
        for c in s.chars() {
            node = node.children.entry(c).or_default();
        }
        node.is_end = true;
    }

    /// `[a] (…) | [b] char+ | [^"ab] char*`
    fn alternatives(&self, char_rule: &str) -> Expr {
        let mut alternatives = Vec::new();
        let mut rejects = vec![ClassItem::Char('"')];
        for (&c, child) in &self.children {
            rejects.push(ClassItem::Char(c));
            if !child.children.is_empty() {
                alternatives.push(seq(vec![one(c), group(child.alternatives(char_rule))]));
            } else {
                alternatives.push(seq(vec![one(c), plus(rf(char_rule))]));
            }
        }
        alternatives.push(seq(vec![not_class(rejects), star(rf(char_rule))]));
        alt(alternatives)
    }
}
