//! Objects: llama.cpp's `_build_object_rule` and `_not_strings`, and the exact-mode
//! object that also honours `patternProperties`, `required` names the schema does not
//! list, `propertyNames` and JSON Schema's reading of a missing `additionalProperties`.
//!
//! Properties come in the order the schema writes them; required ones first, each
//! optional one then reachable through a chain of `-rest` rules so that any subset can
//! appear, still in order. Extra properties come last, under keys that are none of the
//! listed names (a trie of the names, `-k`).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::charset::CharSet;
use super::converter::{properties_of, required_of, Converter};
use super::exact::{is_never, NEVER};
use super::exprs::child_prefix;
use super::exprs::counted;
use super::exprs::{alt, group, lit, not_class, one, opt, padded, plus, rf, seq, space, star};
use super::keywords::Types;
use super::pattern::json_chars;
use crate::error::{limit_error, schema_error, Result};
use crate::tree::{CharClass, ClassItem, Expr};

/// The key under which extra properties are tracked, as llama.cpp does.
const EXTRA: &str = "*";

impl Converter<'_> {
    /// llama.cpp's object rule. `properties` are (name, schema, path); `additional` is
    /// the `additionalProperties` keyword (absent: no extra properties, as in llama.cpp).
    pub(super) fn object_rule(
        &mut self,
        properties: &[(String, Value, String)],
        required: &[String],
        name: &str,
        additional: Option<&Value>,
        path: &str,
    ) -> Result<Expr> {
        let prefix = child_prefix(name);
        self.check_names(properties.iter().map(|(n, _, _)| n), path)?;
        let mut kvs = Vec::with_capacity(properties.len());
        let mut names = Vec::with_capacity(properties.len());
        for (prop_name, prop_schema, prop_path) in properties {
            if *prop_schema == Value::Bool(false) && !required.contains(prop_name) {
                // A property that can have no value cannot appear (llama.cpp refuses
                // the schema `false`); its name stays out of extra keys too.
                names.push(prop_name.clone());
                continue;
            }
            let value_rule = self.visit(prop_schema, &format!("{prefix}{prop_name}"), prop_path)?;
            let kv_rule = self.property_kv(&prefix, prop_name, &value_rule);
            kvs.push((prop_name.clone(), kv_rule));
            names.push(prop_name.clone());
        }
        let extra = match additional {
            Some(Value::Bool(true)) => Some(None),
            Some(schema @ Value::Object(_)) => Some(Some(schema)),
            _ => None,
        };
        let extra_kv = match extra {
            None => None,
            Some(value_schema) => {
                let sub_name = format!("{prefix}additional");
                let value_rule = match value_schema {
                    Some(schema) => self.visit(
                        schema,
                        &format!("{sub_name}-value"),
                        &format!("{path}/additionalProperties"),
                    )?,
                    None => self.primitive("value"),
                };
                Some(self.extra_kv(&sub_name, &names, &value_rule))
            }
        };
        Ok(self.assemble_object(&kvs, required, extra_kv, &prefix, false))
    }

    /// `"\"name\"" space ":" space value`, as the rule `{prefix}{name}-kv`.
    fn property_kv(&mut self, prefix: &str, prop_name: &str, value_rule: &str) -> String {
        let kv = seq(vec![
            lit(Value::String(prop_name.to_string()).to_string()),
            space(),
            lit(":"),
            space(),
            rf(value_rule),
        ]);
        self.add_rule(&format!("{prefix}{prop_name}-kv"), kv)
    }

    /// `key ":" space value` for extra properties, keys being none of `names`.
    fn extra_kv(&mut self, sub_name: &str, names: &[String], value_rule: &str) -> String {
        let key_rule = if names.is_empty() {
            self.primitive("string")
        } else {
            let body = self.not_strings(names);
            self.add_rule(&format!("{sub_name}-k"), body)
        };
        let kv = seq(vec![rf(key_rule), lit(":"), space(), rf(value_rule)]);
        self.add_rule(&format!("{sub_name}-kv"), kv)
    }

    /// The object from its properties' `-kv` rules (in order), which of them are
    /// required, and the `-kv` rule of extra properties.
    fn assemble_object(
        &mut self,
        kvs: &[(String, String)],
        required: &[String],
        extra_kv: Option<String>,
        prefix: &str,
        at_least_one: bool,
    ) -> Expr {
        let required: HashSet<&String> = required.iter().collect();
        let mut kv_rules: HashMap<String, String> = HashMap::new();
        let mut required_props = Vec::new();
        let mut optional_props = Vec::new();
        for (prop_name, kv_rule) in kvs {
            kv_rules.insert(prop_name.clone(), kv_rule.clone());
            if required.contains(prop_name) {
                required_props.push(prop_name.clone());
            } else {
                optional_props.push(prop_name.clone());
            }
        }
        if let Some(extra_kv) = extra_kv {
            kv_rules.insert(EXTRA.to_string(), extra_kv);
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
            let mut alternatives = self.optional_alternatives(&optional_props, prefix, &kv_rules);
            if required_props.is_empty() {
                // llama.cpp writes `"{" space  (a-kv a-rest | … | c-kv )?`.
                if let Some(last) = alternatives.pop() {
                    alternatives.push(trailing_blank(last));
                }
                body.push(Expr::Empty);
                let chosen = group(alt(alternatives));
                body.push(if at_least_one { chosen } else { opt(chosen) });
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
        seq(body)
    }

    /// The exact-mode object: members in the order the schema lists them, required ones
    /// in their place and optional ones free to be left out, extra properties last.
    /// (llama.cpp moves required members first, which rejects objects written in the
    /// listed order.) Two rules per property, built from the last one back: `-after`
    /// when a member has been written, so a comma comes first, and `-from` when none has
    /// and at least one must follow.
    fn ordered_object(
        &mut self,
        kvs: &[(String, String)],
        required: &[String],
        extra_kv: Option<String>,
        prefix: &str,
        at_least_one: bool,
    ) -> Expr {
        let comma_then = |kv: &str| seq(vec![lit(","), space(), rf(kv)]);
        let extra_more = extra_kv.as_deref().map(|kv| star(comma_then(kv)));
        let mut after = extra_more.clone().unwrap_or(Expr::Empty);
        let mut from = extra_kv
            .as_deref()
            .map(|kv| seq(non_empty(vec![rf(kv), after.clone()])));
        let mut required_ahead = false;
        for (i, (name, kv)) in kvs.iter().enumerate().rev() {
            let is_required = required.contains(name);
            // `after` is still the rule for the members past this one.
            let starts_here = seq(non_empty(vec![rf(kv.as_str()), after.clone()]));
            let member = if is_required {
                comma_then(kv)
            } else {
                opt(comma_then(kv))
            };
            if i > 0 {
                let after_body = seq(non_empty(vec![member, after]));
                after = rf(self.add_rule(&format!("{prefix}{name}-after"), after_body));
            }
            let from_body = match (is_required, from) {
                (false, Some(later)) => alt(vec![starts_here, later]),
                _ => starts_here,
            };
            from = Some(rf(self.add_rule(&format!("{prefix}{name}-from"), from_body)));
            required_ahead |= is_required;
        }
        let members = match from {
            None => Expr::Empty,
            Some(from) if at_least_one || required_ahead => from,
            Some(from) => opt(from),
        };
        seq(non_empty(vec![
            lit("{"),
            space(),
            members,
            lit("}"),
            space(),
        ]))
    }

    /// For each optional property `keys[i]`, in order, the alternative that starts
    /// with it: its `-kv` rule, then a `-rest` rule admitting any subset of the ones
    /// after it. llama.cpp builds each alternative recursively; the rest rules are made
    /// here from the last one back, the order in which llama.cpp's recursion first adds
    /// them (which decides names when two keys escape alike), in linear time.
    fn optional_alternatives(
        &mut self,
        keys: &[String],
        prefix: &str,
        kv_rules: &HashMap<String, String>,
    ) -> Vec<Expr> {
        let kv_of = |k: &String| kv_rules.get(k).cloned().unwrap_or_default();
        let comma_kv = |kv: String| padded(seq(vec![lit(","), space(), rf(kv)]));
        // rest[i]: the rule for any subset of keys[i + 1..].
        let mut rest: Vec<Option<String>> = vec![None; keys.len()];
        for i in (0..keys.len().saturating_sub(1)).rev() {
            let next = &keys[i + 1];
            let first = if next == EXTRA {
                star(comma_kv(kv_of(next)))
            } else {
                opt(comma_kv(kv_of(next)))
            };
            let mut items = vec![first];
            if let Some(after) = &rest[i + 1] {
                items.push(rf(after.clone()));
            }
            rest[i] = Some(self.add_rule(&format!("{prefix}{}-rest", keys[i]), seq(items)));
        }
        keys.iter()
            .enumerate()
            .map(|(i, key)| {
                let mut items = vec![rf(kv_of(key))];
                if key == EXTRA {
                    items.push(star(comma_kv(kv_of(key))));
                }
                if let Some(after) = &rest[i] {
                    items.push(rf(after.clone()));
                }
                seq(items)
            })
            .collect()
    }

    /// A JSON string that is none of `strings`, followed by `space`: a trie of the
    /// strings, leaving it at any character that no string continues with. In exact
    /// mode characters are matched in their JSON spelling, and a proper prefix of a
    /// listed string is admitted too (llama.cpp refuses it).
    /// Refuses names too long for a key trie.
    pub(super) fn check_names<'n>(
        &self,
        names: impl IntoIterator<Item = &'n String>,
        path: &str,
    ) -> Result<()> {
        let limit = self.options.limits.max_name_length;
        match names.into_iter().find(|n| n.chars().count() > limit) {
            Some(name) => Err(limit_error(format!(
                "{path}: the name {:?}… is longer than {limit} characters",
                name.chars().take(20).collect::<String>()
            ))),
            None => Ok(()),
        }
    }

    pub(super) fn not_strings(&mut self, strings: &[String]) -> Expr {
        let mut trie = Trie::default();
        for s in strings {
            trie.insert(s);
        }
        let char_rule = self.primitive("char");
        let exact = !self.compat();
        let body = if trie.children.is_empty() {
            // Only the empty string is excluded: any other string.
            plus(rf(char_rule))
        } else {
            let inner = padded(trie.alternatives(&rf(char_rule), None, exact, exact, true));
            if trie.is_end {
                inner
            } else {
                opt(inner)
            }
        };
        seq(vec![one('"'), body, one('"'), space()])
    }

    /// A JSON string of characters of `set`, at least `min` of them, that is none of
    /// `names`; `None` when `min` is above one (the trie cannot count).
    fn keys_in_class_except(
        &mut self,
        names: &[String],
        set: &CharSet,
        min: u64,
        item_name: &str,
    ) -> Option<Expr> {
        let item_body = if self.compat() {
            Expr::Class(CharClass::new(false, set.items()))
        } else {
            json_chars(set)?
        };
        let item = rf(self.add_rule(item_name, item_body));
        let mut trie = Trie::default();
        let mut any = false;
        for name in names {
            if name.chars().all(|c| set.contains(c)) && name.chars().count() as u64 >= min {
                trie.insert(name);
                any = true;
            }
        }
        let body = if !any {
            counted(item, min, None, self.options.limits.max_repeat)
        } else if min > 1 {
            return None;
        } else if trie.children.is_empty() {
            plus(item)
        } else {
            let inner = padded(trie.alternatives(&item, Some(set), !self.compat(), true, true));
            if trie.is_end || min == 1 {
                inner
            } else {
                opt(inner)
            }
        };
        Some(seq(vec![one('"'), body, one('"'), space()]))
    }

    /// Exact mode: every keyword of an object schema.
    pub(super) fn exact_object(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let prefix = child_prefix(name);
        let mut handled = vec![
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "unevaluatedProperties",
        ];
        let mut additional: Option<Value> = match (
            obj.get("additionalProperties"),
            obj.get("unevaluatedProperties"),
        ) {
            (Some(a), _) => Some(a.clone()),
            (None, Some(u)) => Some(u.clone()),
            // Without listed properties llama.cpp admits any object too.
            (None, None)
                if self.options.extra_properties_by_default
                    || !(obj.contains_key("properties")
                        || obj.contains_key("patternProperties")) =>
            {
                Some(Value::Bool(true))
            }
            (None, None) => None,
        };
        let mut patterns: Vec<(String, Value)> = match obj.get("patternProperties") {
            None => Vec::new(),
            Some(Value::Object(p)) => p.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(_) => {
                return Err(schema_error(format!(
                    "{path}/patternProperties: expected an object"
                )))
            }
        };
        let mut required: Vec<String> = Vec::new();
        let mut required_set: HashSet<String> = HashSet::new();
        for r in required_of(obj) {
            if required_set.insert(r.clone()) {
                required.push(r);
            }
        }
        let mut properties = properties_of(obj, path)?;
        self.check_names(properties.iter().map(|(n, _, _)| n), path)?;
        self.check_names(&required, path)?;
        // Required names the schema does not list take the schema of the patterns they
        // match, or else of additionalProperties.
        let listed: HashSet<String> = properties.iter().map(|(n, _, _)| n.clone()).collect();
        for r in &required {
            if listed.contains(r.as_str()) {
                continue;
            }
            let schema = match self.pattern_schemas(&patterns, r, path) {
                Some(matched) if !matched.is_empty() => all_of(matched),
                _ => additional.clone().unwrap_or(Value::Bool(false)),
            };
            properties.push((r.clone(), schema, format!("{path}/required")));
        }
        // Listed names matching a pattern must satisfy its schema too; the pattern's own
        // keys must then leave those names out.
        let mut pattern_hits = vec![false; patterns.len()];
        if !patterns.is_empty() {
            for (prop_name, schema, _) in properties.iter_mut() {
                let mut matched = Vec::new();
                for (i, (pattern, pattern_schema)) in patterns.iter().enumerate() {
                    match self.pattern_matches(pattern, prop_name) {
                        Some(false) => {}
                        Some(true) => {
                            pattern_hits[i] = true;
                            matched.push(pattern_schema.clone());
                        }
                        None => {
                            pattern_hits[i] = true;
                            self.warn(path, format!("could not test the key {prop_name:?} against the pattern {pattern:?}"));
                        }
                    }
                }
                if !matched.is_empty() {
                    let mut all = vec![schema.clone()];
                    all.extend(matched);
                    *schema = all_of(all);
                }
            }
        }
        if let Some(names_schema) = obj.get("propertyNames") {
            handled.push("propertyNames");
            let mut unknown = false;
            for (prop_name, schema, _) in properties.iter_mut() {
                match self.admits(names_schema, &Value::String(prop_name.clone())) {
                    Some(true) => {}
                    Some(false) => *schema = Value::Bool(false),
                    None => unknown = true,
                }
            }
            let extras = !patterns.is_empty()
                || additional
                    .as_ref()
                    .is_some_and(|a| *a != Value::Bool(false));
            if extras && !trivially_true(names_schema) && !unknown && self.options.strict {
                // Strict mode: only the listed names, which were checked.
                self.narrowed(path, "propertyNames: only the listed properties");
                patterns.clear();
                additional = None;
            } else if unknown || (extras && !trivially_true(names_schema)) {
                self.warn(
                    &format!("{path}/propertyNames"),
                    "`propertyNames` is not enforced",
                );
            }
        }

        let mut kvs = Vec::new();
        let mut excluded = Vec::new();
        let mut listed_required = Vec::new();
        for (prop_name, prop_schema, prop_path) in &properties {
            let value_rule = self.visit(prop_schema, &format!("{prefix}{prop_name}"), prop_path)?;
            if is_never(&value_rule) {
                if required_set.contains(prop_name) {
                    return Ok(NEVER.to_string());
                }
                excluded.push(prop_name.clone());
                continue;
            }
            let kv_rule = self.property_kv(&prefix, prop_name, &value_rule);
            kvs.push((prop_name.clone(), kv_rule));
            if required_set.contains(prop_name) {
                listed_required.push(prop_name.clone());
            }
        }
        let mut names: Vec<String> = properties.iter().map(|(n, _, _)| n.clone()).collect();
        names.extend(excluded);

        // Counts of properties.
        let min_props = self.count(obj, "minProperties", path)?;
        let max_props = self.count(obj, "maxProperties", path)?;
        let extras_possible = !patterns.is_empty()
            || additional
                .as_ref()
                .is_some_and(|a| *a != Value::Bool(false));
        let mut at_least_one = false;
        if let Some(min) = min_props {
            if listed_required.len() as u64 >= min {
                handled.push("minProperties");
            } else if !extras_possible && (kvs.len() as u64) < min {
                return Ok(NEVER.to_string());
            } else if min == 1 {
                at_least_one = true;
                handled.push("minProperties");
            }
        }
        if let Some(max) = max_props {
            if (listed_required.len() as u64) > max {
                return Ok(NEVER.to_string());
            }
            if kvs.len() as u64 <= max && (!extras_possible || self.options.strict) {
                // Strict mode: no extra properties, so no more than the listed ones.
                if extras_possible {
                    self.narrowed(path, "maxProperties: only the listed properties");
                }
                patterns.clear();
                additional = None;
                handled.push("maxProperties");
            }
        }
        for key in ["dependentRequired", "dependentSchemas", "dependencies"] {
            if obj
                .get(key)
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
            {
                handled.push(key);
            }
        }
        self.warn_unhandled(obj, Types::OBJECT, &handled, path);
        if super::exact::excluded(obj).iter().any(Value::is_object) {
            self.warn(&format!("{path}/not"), "`not` is not enforced");
        }

        // Extra properties: the patterns', then additionalProperties'.
        let mut extra_kvs = Vec::new();
        let mut distinct_schemas: Vec<&Value> = Vec::new();
        for (i, (pattern, schema)) in patterns.iter().enumerate() {
            let pattern_path = format!(
                "{path}/patternProperties/{}",
                super::converter::pointer_escape(pattern)
            );
            if !trivially_true(schema) && !distinct_schemas.contains(&schema) {
                distinct_schemas.push(schema);
            }
            let value_rule =
                self.visit(schema, &format!("{prefix}pattern-{i}-value"), &pattern_path)?;
            if is_never(&value_rule) {
                continue;
            }
            let key_name = format!("{prefix}pattern-{i}-k");
            let key_rule = if !pattern_hits[i] {
                self.visit_pattern(pattern, &key_name, &pattern_path)?
            } else {
                // Keys of the pattern other than the listed names: said for patterns of
                // one repeated class; otherwise the pattern admits no other key (which
                // refuses some valid objects, never admits an invalid one).
                let simple =
                    super::pattern::simple_class_pattern(pattern, self.options.dotall, false);
                let Some((set, min)) = simple else {
                    self.narrowed(
                        path,
                        format!("patternProperties {pattern:?}: only the listed names"),
                    );
                    continue;
                };
                let Some(body) = self.keys_in_class_except(
                    &names,
                    &set,
                    min,
                    &format!("{prefix}pattern-{i}-char"),
                ) else {
                    continue;
                };
                self.add_rule(&key_name, body)
            };
            let kv = seq(vec![rf(key_rule), lit(":"), space(), rf(value_rule)]);
            extra_kvs.push(rf(self.add_rule(&format!("{prefix}pattern-{i}-kv"), kv)));
        }
        if distinct_schemas.len() > 1 {
            self.warn(path, "a key matching several patternProperties is checked against one of their schemas only");
        }
        // Keys that match no pattern cannot be told apart from those that do, unless no
        // pattern constrains its values: otherwise such keys are left out.
        if !distinct_schemas.is_empty()
            && additional
                .as_ref()
                .is_some_and(|a| *a != Value::Bool(false))
        {
            self.narrowed(
                path,
                "additionalProperties beside patternProperties: no other keys",
            );
        }
        if let Some(additional) = additional.as_ref().filter(|_| distinct_schemas.is_empty()) {
            let value_rule = match additional {
                Value::Bool(true) => self.primitive("value"),
                schema => self.visit(
                    schema,
                    &format!("{prefix}additional-value"),
                    &format!("{path}/additionalProperties"),
                )?,
            };
            if !is_never(&value_rule) {
                let sub_name = format!("{prefix}additional");
                let kv = self.extra_kv(&sub_name, &names, &value_rule);
                extra_kvs.push(rf(kv));
            }
        }
        let extra_kv = match extra_kvs.len() {
            0 => None,
            1 => match extra_kvs.pop() {
                Some(Expr::Ref(name)) => Some(name),
                _ => None,
            },
            _ => Some(self.add_rule(&format!("{prefix}extra-kv"), alt(extra_kvs))),
        };
        if at_least_one && kvs.is_empty() && extra_kv.is_none() {
            return Ok(NEVER.to_string());
        }
        let body = if self.compat() {
            self.assemble_object(&kvs, &listed_required, extra_kv, &prefix, at_least_one)
        } else {
            self.ordered_object(&kvs, &listed_required, extra_kv, &prefix, at_least_one)
        };
        Ok(self.add_rule(rule_name, body))
    }

    /// The schemas of the patterns `key` matches; `None` (with a warning) when a pattern
    /// could not be tested.
    fn pattern_schemas(
        &mut self,
        patterns: &[(String, Value)],
        key: &str,
        path: &str,
    ) -> Option<Vec<Value>> {
        let mut matched = Vec::new();
        for (pattern, schema) in patterns {
            match self.pattern_matches(pattern, key) {
                Some(true) => matched.push(schema.clone()),
                Some(false) => {}
                None => {
                    self.warn(
                        path,
                        format!("could not test the key {key:?} against the pattern {pattern:?}"),
                    );
                    return None;
                }
            }
        }
        Some(matched)
    }
}

fn non_empty(items: Vec<Expr>) -> Vec<Expr> {
    items.into_iter().filter(|e| *e != Expr::Empty).collect()
}

fn trivially_true(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(obj) => !super::keywords::constrains_anything(obj),
        _ => false,
    }
}

fn all_of(mut schemas: Vec<Value>) -> Value {
    if schemas.len() == 1 {
        return schemas.remove(0);
    }
    let mut m = Map::new();
    m.insert("allOf".into(), Value::Array(schemas));
    Value::Object(m)
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

    /// `[a] (…) | [b] char+ | [^"ab] char*`: strings of `item`s (characters of
    /// `allowed`, any when `None`) that leave the trie somewhere. With `ends`, a string
    /// may also stop at a node that ends no listed string (llama.cpp's `_not_strings`
    /// refuses those proper prefixes).
    fn alternatives(
        &self,
        item: &Expr,
        allowed: Option<&CharSet>,
        exact: bool,
        ends: bool,
        is_root: bool,
    ) -> Expr {
        let mut alternatives = Vec::new();
        let mut rejects = vec![ClassItem::Char('"')];
        let mut reject_set = CharSet::empty();
        for (&c, child) in &self.children {
            rejects.push(ClassItem::Char(c));
            reject_set.add(c, c);
            let first = if exact { json_char(c) } else { one(c) };
            if !child.children.is_empty() {
                alternatives.push(seq(vec![
                    first,
                    group(child.alternatives(item, allowed, exact, ends, false)),
                ]));
            } else {
                alternatives.push(seq(vec![first, plus(item.clone())]));
            }
        }
        let others = allowed
            .cloned()
            .unwrap_or_else(CharSet::all)
            .minus(&reject_set);
        let other = match (exact, allowed) {
            (true, _) => json_chars(&others),
            (false, None) => Some(not_class(rejects)),
            (false, Some(_)) => {
                (!others.is_empty()).then(|| Expr::Class(CharClass::new(false, others.items())))
            }
        };
        if let Some(other) = other {
            alternatives.push(seq(vec![other, star(item.clone())]));
        }
        if ends && !is_root && !self.is_end {
            // The string may end here: it is a proper prefix of a listed one.
            alternatives.push(Expr::Empty);
        }
        alt(alternatives)
    }
}

/// One character in its JSON spelling.
fn json_char(c: char) -> Expr {
    let quoted = Value::String(c.to_string()).to_string();
    let inner = &quoted[1..quoted.len() - 1];
    if inner.chars().count() == 1 {
        one(c)
    } else {
        lit(inner)
    }
}
