//! Exact mode: the grammar admits only what JSON Schema admits.
//!
//! The walk mirrors llama.cpp's (same rule names, same spellings where the meaning is
//! the same) but reads every keyword of a schema rather than the first that matches:
//! compositions are merged first (`allOf`, `$ref` or `anyOf` beside other keywords),
//! then `const`/`enum` are filtered by the rest of the schema, then the schema is split
//! by the types it admits and each type converted with all of its keywords. A keyword
//! that constrains and is not enforced is warned about, with its JSON pointer.
//!
//! A schema that admits nothing converts to [`NEVER`], a name no rule has; callers drop
//! it from alternatives, leave out an optional property whose value can't exist, and so
//! on, and the root being `NEVER` is an error.

use serde_json::{Map, Value};

use super::converter::{constant, pointer_escape, Converter, IntBounds};
use super::exprs::child_prefix;
use super::exprs::{alt, group, lit, opt, repetition, rf, seq, space};
use super::instance::Checker;
use super::int_range::int_range;
use super::keywords::{self, Types, GENERIC};
use super::merge::Merged;
use super::number_range::{number_range, Bound};
use crate::error::{limit_error, schema_error, Result};
use crate::tree::Expr;

/// The name of the rule of a schema that admits nothing.
pub(super) const NEVER: &str = "\u{0}never";

pub(super) fn is_never(name: &str) -> bool {
    name == NEVER
}

impl Converter<'_> {
    pub(super) fn visit_exact(
        &mut self,
        schema: &Value,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let obj = match schema {
            Value::Bool(true) => {
                let value = self.primitive("value");
                return Ok(self.add_rule(rule_name, rf(value)));
            }
            Value::Bool(false) => return Ok(NEVER.to_string()),
            Value::Object(obj) => obj,
            other => {
                return Err(schema_error(format!(
                    "{path}: a schema must be an object or a boolean, not {other}"
                )))
            }
        };
        let siblings_constrain = |except: &[&str]| {
            obj.keys()
                .any(|k| !except.contains(&k.as_str()) && !keywords::constrains(k).is_empty())
        };
        let conditional =
            obj.contains_key("if") && (obj.contains_key("then") || obj.contains_key("else"));
        let dependent = ["dependencies", "dependentRequired", "dependentSchemas"]
            .iter()
            .any(|k| {
                obj.get(*k)
                    .and_then(Value::as_object)
                    .is_some_and(|d| !d.is_empty())
            });
        let composed = conditional
            || dependent
            || obj.contains_key("allOf")
            || (obj.contains_key("$ref") && siblings_constrain(&["$ref"]))
            || ((obj.contains_key("anyOf") || obj.contains_key("oneOf"))
                && siblings_constrain(&["anyOf", "oneOf"]))
            || (obj.contains_key("anyOf") && obj.contains_key("oneOf"));
        if composed {
            return self.visit_composed(obj, name, rule_name, path);
        }
        if let Some(reference) = obj.get("$ref") {
            let Value::String(reference) = reference else {
                return Err(schema_error(format!("{path}/$ref: expected a string")));
            };
            let target = self.resolve_ref(reference, path)?;
            if is_never(&target) {
                return Ok(target);
            }
            return Ok(self.add_rule(rule_name, rf(target)));
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(alternatives) = obj.get(keyword) {
                let Value::Array(alternatives) = alternatives else {
                    return Err(schema_error(format!("{path}/{keyword}: expected an array")));
                };
                let alternatives = &if keyword == "oneOf" {
                    self.one_of_alternatives(alternatives, &format!("{path}/oneOf"))
                } else {
                    alternatives.clone()
                };
                let paths: Vec<String> = (0..alternatives.len())
                    .map(|i| format!("{path}/{keyword}/{i}"))
                    .collect();
                return self.exact_union(name, rule_name, alternatives, &paths);
            }
        }
        self.visit_simple(obj, name, rule_name, path)
    }

    /// A schema whose keywords must be merged first; memoized by content so that a
    /// recursive `$ref` with siblings converts to a recursive rule.
    fn visit_composed(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let key = format!("\u{0}{}", Value::Object(obj.clone()));
        if let Some(done) = self.memo_lookup(&key, name) {
            return Ok(done);
        }
        // Merging takes a level, like a subschema: `not: {not: …}` a thousand deep
        // must end at the depth limit too.
        if self.depth >= self.options.limits.max_depth {
            return Err(limit_error(format!(
                "{path}: schema nested deeper than {} levels",
                self.options.limits.max_depth
            )));
        }
        self.depth += 1;
        self.memo_begin(&key, self.depth);
        let result = self.merge_and_visit(obj, name, rule_name, path);
        self.depth -= 1;
        self.memo_end(&key, result)
    }

    fn merge_and_visit(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        match self.merge(obj, path)? {
            Merged::Never => Ok(NEVER.to_string()),
            Merged::One(map) => self.visit_simple(&map, name, rule_name, path),
            Merged::Any(alternatives) => {
                let paths = vec![path.to_string(); alternatives.len()];
                self.exact_union(name, rule_name, &alternatives, &paths)
            }
        }
    }

    /// `a | b | …` of the alternatives that admit something.
    fn exact_union(
        &mut self,
        name: &str,
        rule_name: &str,
        alternatives: &[Value],
        paths: &[String],
    ) -> Result<String> {
        let mut rules = Vec::new();
        for (i, (schema, path)) in alternatives.iter().zip(paths).enumerate() {
            let sub_name = if name.is_empty() {
                format!("alternative-{i}")
            } else {
                format!("{name}-{i}")
            };
            let rule = self.visit(schema, &sub_name, path)?;
            if !is_never(&rule) {
                rules.push(rf(rule));
            }
        }
        if rules.is_empty() {
            return Ok(NEVER.to_string());
        }
        Ok(self.add_rule(rule_name, alt(rules)))
    }

    /// A schema without compositions at its top.
    fn visit_simple(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let Some(mut types) = keywords::declared_types(obj) else {
            return Err(schema_error(format!(
                "{path}: unrecognized type {}",
                obj.get("type").cloned().unwrap_or(Value::Null)
            )));
        };
        if self.options.openapi_nullable
            && obj.get("nullable") == Some(&Value::Bool(true))
            && obj.contains_key("type")
        {
            types = types.union(Types::NULL);
        }
        for key in ["$dynamicRef", "$recursiveRef"] {
            if obj.contains_key(key) {
                self.warn(&format!("{path}/{key}"), format!("`{key}` is not enforced"));
            }
        }
        if obj.contains_key("const") || obj.contains_key("enum") {
            return self.exact_enum(obj, types, rule_name, path);
        }
        let mut obj = obj.clone();
        if let Some(not) = obj.remove("not") {
            match self.not_effect(&not, 0) {
                None => match self.negate(&not, 0) {
                    // Said without `not` (or with the forms enforced): merge it in.
                    Some(negation) => {
                        let mut merged = Map::new();
                        merged.insert(
                            "allOf".into(),
                            Value::Array(vec![Value::Object(obj), negation]),
                        );
                        return self.visit_composed(&merged, name, rule_name, path);
                    }
                    None => self.warn(&format!("{path}/not"), "`not` is not enforced"),
                },
                Some(effect) => {
                    if !effect.also.is_empty() {
                        // `not: {not: X}` is X: merge it in, with what else `not` said.
                        let mut base = obj.clone();
                        if let Some(residual) = effect.residual() {
                            base.insert("not".into(), residual);
                        }
                        let mut parts = vec![Value::Object(base)];
                        parts.extend(effect.also);
                        let mut merged = Map::new();
                        merged.insert("allOf".into(), Value::Array(parts));
                        return self.visit_composed(&merged, name, rule_name, path);
                    }
                    types = types.minus(effect.types);
                    if effect.objects_only {
                        types = types.intersect(Types::OBJECT);
                    }
                    for forbidden in &effect.forbid {
                        let properties = obj
                            .entry("properties")
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let Value::Object(properties) = properties {
                            properties.insert(forbidden.clone(), Value::Bool(false));
                        }
                    }
                    let mut constants = Vec::new();
                    for value in effect.constants {
                        match value {
                            Value::Null => types = types.minus(Types::NULL),
                            other => constants.push(other),
                        }
                    }
                    if !constants.is_empty() {
                        let mut not = Map::new();
                        not.insert("enum".into(), Value::Array(constants));
                        obj.insert("not".into(), Value::Object(not));
                    }
                }
            }
        }
        let obj = &obj;
        if !obj.contains_key("type") {
            types = types.intersect(keywords::implied_types(obj));
        }
        if types.is_empty() {
            return Ok(NEVER.to_string());
        }
        let names = types.names();
        if types == Types::ALL && !keywords::constrains_anything(obj) {
            let value = self.primitive("value");
            return Ok(self.add_rule(rule_name, rf(value)));
        }
        let fraction_only = types.contains(Types::FRACTION) && !types.contains(Types::INTEGER);
        if names.len() > 1 {
            let copies: Vec<Value> = names
                .iter()
                .map(|t| {
                    let mut copy = obj.clone();
                    copy.insert("type".into(), Value::String((*t).to_string()));
                    copy.remove("nullable");
                    if *t == "number" && fraction_only {
                        copy.insert(FRACTION_ONLY.into(), Value::Bool(true));
                    }
                    Value::Object(copy)
                })
                .collect();
            let paths = vec![path.to_string(); copies.len()];
            return self.exact_union(name, rule_name, &copies, &paths);
        }
        match names.first().copied() {
            Some("object") => self.exact_object(obj, name, rule_name, path),
            Some("array") => self.exact_array(obj, name, rule_name, path),
            Some("string") => self.exact_string(obj, rule_name, path),
            Some("integer") => self.exact_number(obj, true, rule_name, path),
            Some("number") if fraction_only || obj.contains_key(FRACTION_ONLY) => {
                self.fraction_only(obj, rule_name, path)
            }
            Some("number") => self.exact_number(obj, false, rule_name, path),
            Some("boolean") if !excluded(obj).is_empty() => {
                self.warn_unhandled(obj, Types::BOOLEAN, &[], path);
                let excluded = excluded(obj);
                let left: Vec<Expr> = [true, false]
                    .into_iter()
                    .filter(|b| !excluded.contains(&Value::Bool(*b)))
                    .map(|b| lit(b.to_string()))
                    .collect();
                if left.is_empty() {
                    return Ok(NEVER.to_string());
                }
                Ok(self.add_rule(rule_name, seq(vec![group(alt(left)), space()])))
            }
            Some(t @ ("boolean" | "null")) => {
                self.warn_unhandled(obj, Types::of_name(t).unwrap_or(Types::ALL), &[], path);
                let name = if rule_name == "root" { "root" } else { t };
                Ok(match super::builtins::primitive(t) {
                    Some(builtin) => self.add_primitive(name, builtin),
                    None => name.to_string(),
                })
            }
            _ => Ok(NEVER.to_string()),
        }
    }

    /// Warns about each keyword constraining `types` that neither `handled` nor the
    /// generic keywords (handled before the type split) cover.
    pub(super) fn warn_unhandled(
        &mut self,
        obj: &Map<String, Value>,
        types: Types,
        handled: &[&str],
        path: &str,
    ) {
        let mut except: Vec<&str> = GENERIC.to_vec();
        except.extend_from_slice(handled);
        for key in keywords::unhandled(obj, types, &except) {
            self.warn(
                &format!("{path}/{}", pointer_escape(key)),
                format!("`{key}` is not enforced"),
            );
        }
    }

    /// `const`/`enum`: the values that also satisfy the rest of the schema.
    fn exact_enum(
        &mut self,
        obj: &Map<String, Value>,
        types: Types,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let values: Vec<Value> = match (obj.get("const"), obj.get("enum")) {
            (Some(c), _) => vec![c.clone()],
            (None, Some(Value::Array(values))) => values.clone(),
            _ => return Err(schema_error(format!("{path}/enum: expected an array"))),
        };
        let mut rest = obj.clone();
        rest.remove("const");
        rest.remove("enum");
        rest.remove("type");
        rest.remove("if");
        rest.remove("then");
        rest.remove("else");
        if let (Some(c), Some(Value::Array(e))) = (obj.get("const"), obj.get("enum")) {
            if !e.iter().any(|v| super::merge::json_equal(v, c)) {
                return Ok(NEVER.to_string());
            }
        }
        let rest = Value::Object(rest);
        let mut kept = Vec::new();
        for value in values {
            if !types.contains(Types::of_value(&value)) {
                continue;
            }
            match self.admits(&rest, &value) {
                Some(true) => kept.push(value),
                Some(false) => {}
                None => {
                    self.warn(
                        path,
                        format!("enum value {value} not checked against its sibling keywords"),
                    );
                    kept.push(value);
                }
            }
        }
        let limit = self.options.limits.max_rules;
        if kept.len() > limit {
            return Err(limit_error(format!(
                "{path}: more than {limit} enum values"
            )));
        }
        if kept.is_empty() {
            return Ok(NEVER.to_string());
        }
        let body = if obj.contains_key("const") && kept.len() == 1 {
            seq(vec![constant(&kept[0]), space()])
        } else {
            seq(vec![
                group(alt(kept.iter().map(constant).collect())),
                space(),
            ])
        };
        Ok(self.add_rule(rule_name, body))
    }

    /// Whether `schema` admits `value`, as far as can be told without running it.
    pub(super) fn admits(&self, schema: &Value, value: &Value) -> Option<bool> {
        let pattern = |p: &str, text: &str| self.pattern_matches(p, text);
        let resolve = |r: &str| self.resolve_anywhere(r);
        let checker = Checker {
            resolve: &resolve,
            pattern: &pattern,
        };
        checker.admits(schema, value, 0)
    }

    /// Whether `text` matches `pattern` (a search, as JSON Schema's `pattern` is).
    pub(super) fn pattern_matches(&self, pattern: &str, text: &str) -> Option<bool> {
        let options = super::Options {
            strict: false,
            llama_cpp_compat: false,
            ..self.options.clone()
        };
        let root = Value::Null;
        let mut scratch = Converter::new(&options, &root);
        let rule = scratch.visit_pattern(pattern, "pattern", "#").ok()?;
        let body = scratch.rules.get(&rule)?.clone();
        let quoted = Value::String(text.to_string()).to_string();
        super::matcher::matches(&scratch.rules, &body, &quoted)
    }

    /// The alternatives of a `oneOf`, as alternatives of an `anyOf`: unchanged when
    /// they provably exclude each other; otherwise each one also excludes those it may
    /// overlap, when that can be said with `not`; otherwise unchanged, with a warning.
    pub(super) fn one_of_alternatives(&mut self, alternatives: &[Value], path: &str) -> Vec<Value> {
        let n = alternatives.len();
        if n > MAX_ONE_OF {
            self.warn(
                path,
                format!("oneOf with more than {MAX_ONE_OF} alternatives is admitted like anyOf"),
            );
            return alternatives.to_vec();
        }
        let mut overlaps: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            for j in i + 1..n {
                if !self.disjoint(&alternatives[i], &alternatives[j]) {
                    overlaps[i].push(j);
                    overlaps[j].push(i);
                }
            }
        }
        if overlaps.iter().all(Vec::is_empty) {
            return alternatives.to_vec();
        }
        let mut out = Vec::with_capacity(n);
        for (i, alternative) in alternatives.iter().enumerate() {
            if overlaps[i].is_empty() {
                out.push(alternative.clone());
                continue;
            }
            let mut parts = vec![alternative.clone()];
            for &j in &overlaps[i] {
                match self.negate(&alternatives[j], 0) {
                    Some(negation) => parts.push(negation),
                    None => {
                        self.warn(path, "oneOf alternatives that may overlap are admitted like anyOf (an instance matching two of them is not refused)");
                        return alternatives.to_vec();
                    }
                }
            }
            let mut all = Map::new();
            all.insert("allOf".into(), Value::Array(parts));
            out.push(Value::Object(all));
        }
        out
    }

    /// What `not: schema` requires, in terms the conversion can enforce; `None` when it
    /// says more than that.
    pub(super) fn not_effect(&self, not: &Value, depth: usize) -> Option<NotEffect> {
        if depth > 8 {
            return None;
        }
        let obj = match not {
            Value::Bool(true) => {
                return Some(NotEffect {
                    types: Types::ALL,
                    ..NotEffect::default()
                })
            }
            Value::Bool(false) => return Some(NotEffect::default()),
            Value::Object(obj) => obj,
            _ => return None,
        };
        let keys: Vec<&str> = obj
            .keys()
            .map(String::as_str)
            .filter(|k| !keywords::constrains(k).is_empty())
            .collect();
        match keys.as_slice() {
            [] => Some(NotEffect {
                types: Types::ALL,
                ..NotEffect::default()
            }),
            ["type"] => Some(NotEffect {
                types: keywords::declared_types(obj)?,
                ..NotEffect::default()
            }),
            ["not"] => Some(NotEffect {
                also: vec![obj.get("not")?.clone()],
                ..NotEffect::default()
            }),
            ["$ref"] => {
                let target = self.resolve_anywhere(obj.get("$ref")?.as_str()?)?;
                self.not_effect(target, depth + 1)
            }
            ["allOf"] => match obj.get("allOf")?.as_array()?.as_slice() {
                [only] => self.not_effect(only, depth + 1),
                _ => None,
            },
            ["anyOf"] => {
                let mut effect = NotEffect::default();
                for alternative in obj.get("anyOf")?.as_array()? {
                    effect.add(self.not_effect(alternative, depth + 1)?);
                }
                Some(effect)
            }
            ["required"] => match obj.get("required")?.as_array()?.as_slice() {
                [Value::String(name)] => Some(NotEffect {
                    forbid: vec![name.clone()],
                    objects_only: true,
                    ..NotEffect::default()
                }),
                _ => None,
            },
            _ if keys.iter().all(|k| matches!(*k, "enum" | "const" | "type")) => {
                let types = keywords::declared_types(obj)?;
                let values = constants(obj)?;
                let constants = values
                    .into_iter()
                    .filter(|v| types.contains(Types::of_value(v)))
                    .collect();
                Some(NotEffect {
                    constants,
                    ..NotEffect::default()
                })
            }
            _ => None,
        }
    }

    fn disjoint(&self, a: &Value, b: &Value) -> bool {
        self.excludes(a, b, 0) && self.excludes(b, a, 0)
    }

    /// Whether no value the grammar of `a` admits is valid against `b`.
    fn excludes(&self, a: &Value, b: &Value, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        let emitted = self.types_of(a, true, 0);
        let common = emitted.intersect(self.types_of(b, false, 0));
        if common.is_empty() {
            return true;
        }
        let (Some(a_obj), Some(b_obj)) = (self.deref(a), self.deref(b)) else {
            return false;
        };
        // Unions: every alternative of `a` is refused by `b`, or `a` is refused by every
        // alternative of `b`.
        let union = |o: &Map<String, Value>| -> Option<Vec<Value>> {
            let only = o.keys().all(|k| {
                matches!(k.as_str(), "anyOf" | "oneOf") || keywords::constrains(k).is_empty()
            });
            let alternatives = o.get("anyOf").or_else(|| o.get("oneOf"))?.as_array()?;
            only.then(|| alternatives.clone())
        };
        if let Some(alternatives) = union(a_obj) {
            return alternatives.iter().all(|x| self.excludes(x, b, depth + 1));
        }
        if let Some(alternatives) = union(b_obj) {
            return alternatives.iter().all(|y| self.excludes(a, y, depth + 1));
        }
        // `a` admits only constants, each of which `b` refuses.
        if let Some(values) = constants(a_obj) {
            if values.iter().all(|v| self.admits(b, v) == Some(false)) {
                return true;
            }
        }
        if !Types::OBJECT.contains(common) {
            return false;
        }
        // Objects of `a` all have a property `b` refuses: one whose values cannot agree,
        // or one `b` does not allow at all.
        let a_props = a_obj.get("properties").and_then(Value::as_object);
        let b_props = b_obj.get("properties").and_then(Value::as_object);
        let b_closed = b_obj.get("additionalProperties") == Some(&Value::Bool(false))
            && !b_obj.contains_key("patternProperties");
        for name in keywords_required(a_obj) {
            match b_props.and_then(|p| p.get(&name)) {
                Some(b_schema) => {
                    let a_schema = a_props
                        .and_then(|p| p.get(&name))
                        .cloned()
                        .unwrap_or(Value::Bool(true));
                    if self.excludes(&a_schema, b_schema, depth + 1) {
                        return true;
                    }
                }
                None if b_closed => return true,
                None => {}
            }
        }
        false
    }

    fn deref<'v>(&'v self, schema: &'v Value) -> Option<&'v Map<String, Value>> {
        let mut current = schema;
        for _ in 0..16 {
            let obj = current.as_object()?;
            match obj.get("$ref").and_then(Value::as_str) {
                Some(r) if obj.len() == 1 => {
                    current = self.resolve_anywhere(r)?;
                }
                _ => return Some(obj),
            }
        }
        None
    }

    /// The types of value `schema` admits (an upper bound): as JSON Schema reads it, or
    /// (`emitted`) as the exact conversion produces it, which also reads a type into
    /// type-specific keywords (`properties` → object) the way llama.cpp does.
    fn types_of(&self, schema: &Value, emitted: bool, depth: usize) -> Types {
        if depth > 16 {
            return Types::ALL;
        }
        let obj = match schema {
            Value::Bool(false) => return Types::NONE,
            Value::Object(obj) => obj,
            _ => return Types::ALL,
        };
        let mut types = keywords::declared_types(obj).unwrap_or(Types::ALL);
        if emitted && !obj.contains_key("type") {
            types = types.intersect(keywords::implied_types(obj));
        }
        if emitted
            && self.options.openapi_nullable
            && obj.get("nullable") == Some(&Value::Bool(true))
            && obj.contains_key("type")
        {
            types = types.union(Types::NULL);
        }
        if let Some(values) = constants(obj) {
            types = types.intersect(
                values
                    .iter()
                    .fold(Types::NONE, |t, v| t.union(Types::of_value(v))),
            );
        }
        if let Some(Value::String(r)) = obj.get("$ref") {
            if let Some(target) = self.resolve_anywhere(r) {
                types = types.intersect(self.types_of(target, emitted, depth + 1));
            }
        }
        if let Some(Value::Array(parts)) = obj.get("allOf") {
            for part in parts {
                types = types.intersect(self.types_of(part, emitted, depth + 1));
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = obj.get(key) {
                let union = alternatives.iter().fold(Types::NONE, |t, s| {
                    t.union(self.types_of(s, emitted, depth + 1))
                });
                types = types.intersect(union);
            }
        }
        types
    }

    /// Numbers that are not integers: a fraction with a digit other than zero.
    fn fraction_only(
        &mut self,
        obj: &Map<String, Value>,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        self.warn_unhandled(obj, Types::NUMBER, &[], path);
        self.warn_excluded(obj, Types::NUMBER, path);
        let integral = self.primitive("integral-part");
        let digits = || Expr::range('0', '9');
        let body = seq(vec![
            opt(lit("-")),
            rf(integral),
            lit("."),
            super::exprs::star(digits()),
            Expr::range('1', '9'),
            super::exprs::star(digits()),
            space(),
        ]);
        Ok(self.add_rule(rule_name, body))
    }

    /// One character of a JSON string that is one code point, as `minLength` and
    /// `maxLength` count: `char` without `\uD800`–`\uDFFF`, since a surrogate pair of
    /// escapes is two `char`s but one character (a raw character beyond the BMP is one).
    fn code_point_rule(&mut self) -> String {
        let hex = super::exprs::hex;
        let not_d = Expr::Class(crate::tree::CharClass::new(
            false,
            vec![
                crate::tree::ClassItem::Range('0', '9'),
                crate::tree::ClassItem::Range('a', 'c'),
                crate::tree::ClassItem::Range('e', 'f'),
                crate::tree::ClassItem::Range('A', 'C'),
                crate::tree::ClassItem::Range('E', 'F'),
            ],
        ));
        let not_surrogate = alt(vec![
            seq(vec![not_d, super::exprs::rep(hex(), 3, Some(3))]),
            seq(vec![
                super::exprs::chars("dD"),
                Expr::range('0', '7'),
                super::exprs::rep(hex(), 2, Some(2)),
            ]),
        ]);
        let body = alt(vec![
            Expr::Class(crate::tree::CharClass::new(
                true,
                vec![
                    crate::tree::ClassItem::Char('"'),
                    crate::tree::ClassItem::Char('\\'),
                    crate::tree::ClassItem::Char('\x7f'),
                    crate::tree::ClassItem::Range('\0', '\x1f'),
                ],
            )),
            seq(vec![
                super::exprs::one('\\'),
                group(alt(vec![
                    super::exprs::chars("\"\\bfnrt"),
                    seq(vec![lit("u"), group(not_surrogate)]),
                ])),
            ]),
        ]);
        self.add_rule("code-point", body)
    }

    /// Warns when a normalized `not: {enum: […]}` excludes constants of `types`, which
    /// the branch for those types cannot.
    fn warn_excluded(&mut self, obj: &Map<String, Value>, types: Types, path: &str) {
        if excluded(obj)
            .iter()
            .any(|v| types.contains(Types::of_value(v)))
        {
            self.warn(&format!("{path}/not"), "`not` is not enforced");
        }
    }

    fn exact_number(
        &mut self,
        obj: &Map<String, Value>,
        integer: bool,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let mut integer = integer;
        if let Some(m) = obj.get("multipleOf") {
            let m = m.as_f64().filter(|m| *m > 0.0).ok_or_else(|| {
                schema_error(format!("{path}/multipleOf: expected a positive number"))
            })?;
            let ratio = 1.0 / m;
            if m == 1.0 || (integer && ratio.fract() == 0.0) {
                integer = true;
            } else {
                self.warn(
                    &format!("{path}/multipleOf"),
                    "`multipleOf` is not enforced",
                );
            }
        }
        self.warn_unhandled(
            obj,
            Types::NUMBER,
            &[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ],
            path,
        );
        self.warn_excluded(obj, Types::NUMBER, path);
        let bounded = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
            .iter()
            .any(|k| obj.get(*k).is_some_and(Value::is_number));
        let prim_name = if integer { "integer" } else { "number" };
        if !bounded {
            let name = if rule_name == "root" {
                "root"
            } else {
                prim_name
            };
            return Ok(match super::builtins::primitive(prim_name) {
                Some(builtin) => self.add_primitive(name, builtin),
                None => name.to_string(),
            });
        }
        if integer {
            let bounds = IntBounds::of(obj, path)?;
            if let (Some(min), Some(max)) = (bounds.min, bounds.max) {
                if min > max {
                    return Ok(NEVER.to_string());
                }
            }
            let range = int_range(bounds.min, bounds.max, false);
            return Ok(self.add_rule(rule_name, seq(vec![group(range), space()])));
        }
        let (lower, upper) = Bound::of_schema(obj, path)?;
        match number_range(lower, upper) {
            Some(range) => Ok(self.add_rule(rule_name, seq(vec![group(range), space()]))),
            None => Ok(NEVER.to_string()),
        }
    }

    fn exact_string(
        &mut self,
        obj: &Map<String, Value>,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let min = self.count(obj, "minLength", path)?;
        let max = self.count(obj, "maxLength", path)?;
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return Ok(NEVER.to_string());
            }
        }
        let format = obj.get("format").and_then(Value::as_str);
        let excluded_strings: Vec<String> = excluded(obj)
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if !excluded_strings.is_empty() {
            self.check_names(&excluded_strings, path)?;
            let plain = ["pattern", "format", "minLength", "maxLength"]
                .iter()
                .all(|k| !obj.contains_key(*k));
            if plain {
                let body = self.not_strings(&excluded_strings);
                return Ok(self.add_rule(rule_name, body));
            }
            self.warn(&format!("{path}/not"), "`not` is not enforced");
        }
        if let Some(pattern) = obj.get("pattern") {
            let Some(pattern) = pattern.as_str() else {
                return Err(schema_error(format!("{path}/pattern: expected a string")));
            };
            let cap = self.options.limits.max_repeat;
            let lengths = min.is_some() || max.is_some();
            let (lo, hi) = (min.unwrap_or(0), max);
            if lengths {
                // One repeated class takes the lengths as its count.
                if let Some((set, fewest)) = super::pattern::simple_class_pattern(
                    pattern,
                    self.options.dotall,
                    self.options.strict,
                ) {
                    {
                        if fewest > 0 && !(pattern.starts_with('^') && pattern.ends_with('$')) {
                            self.narrowed(
                                path,
                                "pattern with lengths: only strings the class spans",
                            );
                        }
                        self.warn_unhandled(
                            obj,
                            Types::STRING,
                            &["pattern", "minLength", "maxLength"],
                            path,
                        );
                        let item = self.json_chars(&set, path)?;
                        let item = rf(self.add_rule(&format!("{rule_name}-char"), item));
                        let lo = lo.max(fewest);
                        if hi.is_some_and(|hi| hi < lo) {
                            return Ok(NEVER.to_string());
                        }
                        let body = seq(vec![
                            lit("\""),
                            repetition(item, lo, hi, None, cap),
                            lit("\""),
                            space(),
                        ]);
                        return Ok(self.add_rule(rule_name, body));
                    }
                }
            }
            if lengths && self.options.strict && !self.pattern_fits(pattern, lo, hi) {
                // Strict mode: bound the pattern's repetitions so that its lengths fit.
                if let Some(rule) = self.pattern_rule_within(pattern, rule_name, path, lo, hi)? {
                    self.narrowed(path, "pattern with lengths: repetitions bounded to fit");
                    self.warn_unhandled(
                        obj,
                        Types::STRING,
                        &["pattern", "minLength", "maxLength"],
                        path,
                    );
                    return Ok(rule);
                }
            }
            let (rule, (shortest, longest)) = self.visit_pattern_len(pattern, rule_name, path)?;
            let mut handled = vec!["pattern"];
            if lengths {
                let within = shortest >= lo && hi.is_none_or(|hi| longest.is_some_and(|l| l <= hi));
                if within {
                    handled.extend(["minLength", "maxLength"]);
                }
            }
            self.warn_unhandled(obj, Types::STRING, &handled, path);
            return Ok(rule);
        }
        if let Some(format) = format {
            if let Some(rule) = self.format_rule(format, rule_name) {
                // Lengths every string of the format already has need no enforcing.
                let mut handled = vec!["format"];
                if let Some((shortest, longest)) = super::formats::lengths(format) {
                    let lo = min.unwrap_or(0);
                    if shortest >= lo && max.is_none_or(|hi| longest.is_some_and(|l| l <= hi)) {
                        handled.extend(["minLength", "maxLength"]);
                    }
                }
                self.warn_unhandled(obj, Types::STRING, &handled, path);
                return Ok(rule);
            }
            if keywords::is_checked_format(format) {
                self.warn(
                    &format!("{path}/format"),
                    format!("format {format:?} is not enforced"),
                );
            }
        }
        if min.is_some() || max.is_some() {
            let char_rule = self.code_point_rule();
            let body = seq(vec![
                lit("\""),
                repetition(
                    rf(char_rule),
                    min.unwrap_or(0),
                    max,
                    None,
                    self.options.limits.max_repeat,
                ),
                lit("\""),
                space(),
            ]);
            return Ok(self.add_rule(rule_name, body));
        }
        let name = if rule_name == "root" {
            "root"
        } else {
            "string"
        };
        Ok(match super::builtins::primitive("string") {
            Some(builtin) => self.add_primitive(name, builtin),
            None => name.to_string(),
        })
    }

    fn exact_array(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let prefix_name = child_prefix(name);
        // Draft 2020-12 (`prefixItems` + `items`) and drafts 4–7 (`items` array +
        // `additionalItems`) alike: leading schemas and the schema of the rest.
        let (mut prefix, prefix_key, mut rest, rest_key): (Vec<Value>, &str, Option<Value>, &str) =
            match (obj.get("prefixItems"), obj.get("items")) {
                (Some(Value::Array(prefix)), rest) => {
                    (prefix.clone(), "prefixItems", rest.cloned(), "items")
                }
                (Some(other), None) => (
                    Vec::new(),
                    "prefixItems",
                    Some(other.clone()),
                    "prefixItems",
                ),
                (_, Some(Value::Array(prefix))) => (
                    prefix.clone(),
                    "items",
                    obj.get("additionalItems").cloned(),
                    "additionalItems",
                ),
                (_, rest) => (Vec::new(), "items", rest.cloned(), "items"),
            };
        let mut min = self.count(obj, "minItems", path)?.unwrap_or(0);
        let mut max = self.count(obj, "maxItems", path)?;
        let mut handled = vec![
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "unevaluatedItems",
        ];
        if obj.get("uniqueItems") == Some(&Value::Bool(true)) && max.is_some_and(|m| m <= 1) {
            handled.push("uniqueItems");
        }
        // What a grammar cannot count, strict mode narrows to what it can: items that
        // are all distinct because there is at most one; items that all match what
        // `contains` asks one of them to.
        if self.options.strict {
            if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
                max = Some(max.map_or(1, |m| m.min(1)));
                handled.push("uniqueItems");
                self.narrowed(path, "uniqueItems: at most one item");
            }
            if let Some(contains) = obj.get("contains") {
                self.narrowed(path, "contains: every item matches");
                let at_least = self.count(obj, "minContains", path)?.unwrap_or(1);
                min = min.max(at_least);
                if let Some(at_most) = self.count(obj, "maxContains", path)? {
                    max = Some(max.map_or(at_most, |m| m.min(at_most)));
                }
                for item in prefix.iter_mut() {
                    *item = both(item.clone(), contains.clone());
                }
                rest = Some(both(rest.unwrap_or(Value::Bool(true)), contains.clone()));
                handled.extend(["contains", "minContains", "maxContains"]);
            }
        }
        if obj.get("uniqueItems") == Some(&Value::Bool(false)) {
            handled.push("uniqueItems");
        }
        self.warn_unhandled(obj, Types::ARRAY, &handled, path);
        self.warn_excluded(obj, Types::ARRAY, path);
        let mut prefix_rules = Vec::new();
        for (i, item) in prefix.iter().enumerate() {
            let rule = self.visit(
                item,
                &format!("{prefix_name}tuple-{i}"),
                &format!("{path}/{prefix_key}/{i}"),
            )?;
            if is_never(&rule) {
                max = Some(max.map_or(i as u64, |m| m.min(i as u64)));
                break;
            }
            prefix_rules.push(rule);
        }
        let rest_rule = match &rest {
            None => Some(self.primitive("value")),
            Some(schema) => {
                let rule = self.visit(
                    schema,
                    &format!("{prefix_name}item"),
                    &format!("{path}/{rest_key}"),
                )?;
                (!is_never(&rule)).then_some(rule)
            }
        };
        let n = prefix_rules.len() as u64;
        if rest_rule.is_none() || max.is_some_and(|m| m <= n) {
            max = Some(max.map_or(n, |m| m.min(n)));
        }
        let cap = self.options.limits.max_repeat;
        if max.is_some_and(|m| m < min) {
            return Ok(NEVER.to_string());
        }
        let sep = [lit(","), space()];
        let items = if prefix_rules.is_empty() {
            match &rest_rule {
                Some(rest_rule) => repetition(rf(rest_rule.clone()), min, max, Some(&sep), cap),
                None => Expr::Empty,
            }
        } else {
            items_from(&prefix_rules, rest_rule.as_deref(), min, max, cap)
        };
        let body = seq(vec![lit("["), space(), items, lit("]"), space()]);
        Ok(self.add_rule(rule_name, body))
    }
}

/// The items of an array whose first `prefix.len()` items have their own rules and
/// whose other items follow `rest`, between `min` and `max` items in all.
fn items_from(prefix: &[String], rest: Option<&str>, min: u64, max: Option<u64>, cap: u32) -> Expr {
    let body = seq(vec![
        rf(prefix[0].clone()),
        tail_from(1, prefix, rest, min, max, cap),
    ]);
    if min == 0 {
        opt(group(body))
    } else {
        body
    }
}

/// `( "," space item … )` for items `j..`, optional from item `min` on.
fn tail_from(
    j: u64,
    prefix: &[String],
    rest: Option<&str>,
    min: u64,
    max: Option<u64>,
    cap: u32,
) -> Expr {
    if max.is_some_and(|m| j >= m) {
        return Expr::Empty;
    }
    let n = prefix.len() as u64;
    if j < n {
        let inner = seq(vec![
            lit(","),
            space(),
            rf(prefix[j as usize].clone()),
            tail_from(j + 1, prefix, rest, min, max, cap),
        ]);
        return if j >= min { opt(group(inner)) } else { inner };
    }
    let Some(rest) = rest else {
        return Expr::Empty;
    };
    let item = group(seq(vec![lit(","), space(), rf(rest.to_string())]));
    repetition(item, min.saturating_sub(j), max.map(|m| m - j), None, cap)
}

/// `{"allOf": [a, b]}`
fn both(a: Value, b: Value) -> Value {
    let mut m = Map::new();
    m.insert("allOf".into(), Value::Array(vec![a, b]));
    Value::Object(m)
}

/// `oneOf` alternatives compared pairwise, at most (the comparison is quadratic).
const MAX_ONE_OF: usize = 64;

/// A private keyword marking a `number` copy that must not be an integer.
const FRACTION_ONLY: &str = "\u{0}fraction-only";

/// What a `not` requires: types excluded, properties forbidden (which also makes the
/// value an object), constants excluded, and schemas it negates twice (so requires).
#[derive(Default)]
pub(super) struct NotEffect {
    types: Types,
    forbid: Vec<String>,
    objects_only: bool,
    constants: Vec<Value>,
    also: Vec<Value>,
}

impl NotEffect {
    /// Both: `not (A or B)` is `not A and not B`.
    fn add(&mut self, other: NotEffect) {
        self.types = self.types.union(other.types);
        self.forbid.extend(other.forbid);
        self.objects_only |= other.objects_only;
        self.constants.extend(other.constants);
        self.also.extend(other.also);
    }

    /// This effect without `also`, as a `not` schema again.
    fn residual(&self) -> Option<Value> {
        let mut alternatives = Vec::new();
        if !self.types.is_empty() {
            let names: Vec<Value> = self
                .types
                .names()
                .into_iter()
                .map(|n| Value::String(n.into()))
                .collect();
            let mut m = Map::new();
            m.insert("type".into(), Value::Array(names));
            alternatives.push(Value::Object(m));
        }
        for name in &self.forbid {
            let mut m = Map::new();
            m.insert(
                "required".into(),
                Value::Array(vec![Value::String(name.clone())]),
            );
            alternatives.push(Value::Object(m));
        }
        if !self.constants.is_empty() {
            let mut m = Map::new();
            m.insert("enum".into(), Value::Array(self.constants.clone()));
            alternatives.push(Value::Object(m));
        }
        if alternatives.is_empty() {
            return None;
        }
        let mut m = Map::new();
        m.insert("anyOf".into(), Value::Array(alternatives));
        Some(Value::Object(m))
    }
}

/// The constants a normalized `not: {enum: […]}` excludes.
pub(super) fn excluded(obj: &Map<String, Value>) -> Vec<Value> {
    obj.get("not")
        .and_then(|n| n.get("enum"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn constants(obj: &Map<String, Value>) -> Option<Vec<Value>> {
    match (obj.get("const"), obj.get("enum")) {
        (Some(c), _) => Some(vec![c.clone()]),
        (None, Some(Value::Array(values))) => Some(values.clone()),
        _ => None,
    }
}

fn keywords_required(obj: &Map<String, Value>) -> Vec<String> {
    super::converter::required_of(obj)
}
