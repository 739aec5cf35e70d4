//! The converter proper: walks a schema the way llama.cpp's `common_schema_converter`
//! does — same keyword precedence, same rule names, same deduplication — and collects
//! rules into a table sorted by name, as llama.cpp's `std::map` prints them.
//!
//! `visit` returns the name of the rule that matches the schema. Each kind of schema has
//! a method of its own here or in a sibling module (`object`, `pattern`); `Converter`
//! keeps the state they share: the rule table, references being resolved, warnings and
//! the nesting depth.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use super::builtins::{self, Builtin};
use super::exprs::child_prefix;
use super::exprs::{alt, group, lit, repetition, rf, seq, space};
use super::int_range::int_range;
use super::keywords::{self, Types};
use super::{refs, Options};
use crate::error::Result;
use crate::error::{limit_error, schema_error};
use crate::gbnf::print::literal as gbnf_literal;
use crate::tree::Expr;

pub(super) struct Converter<'a> {
    pub(super) options: &'a Options,
    pub(super) root: &'a Value,
    pub(super) rules: BTreeMap<String, Expr>,
    /// Rule names of references (and merged schemas) already converted.
    memo_rules: HashMap<String, String>,
    /// References being converted.
    resolving: HashMap<String, Resolving>,
    /// Rules by their printed body, for sharing in exact mode.
    shared: HashMap<String, String>,
    /// Reserved names, and the depth at which the visit that will fill them runs.
    pending: HashMap<String, usize>,
    pub(super) warnings: Vec<String>,
    /// Where strict mode narrowed a keyword, for the error when nothing is left.
    pub(super) narrowings: Vec<String>,
    pub(super) depth: usize,
    /// Base URIs declared in the document, with where.
    ids: Vec<(String, String)>,
    /// Alternatives made by multiplying out `anyOf` inside `allOf`, against the limit.
    pub(super) alternatives_made: usize,
}

impl<'a> Converter<'a> {
    pub(super) fn new(options: &'a Options, root: &'a Value) -> Self {
        let mut rules = BTreeMap::new();
        rules.insert("space".to_string(), builtins::space_rule());
        Self {
            options,
            root,
            rules,
            memo_rules: HashMap::new(),
            alternatives_made: 0,
            ids: refs::declared_ids(root),
            resolving: HashMap::new(),
            pending: HashMap::new(),
            shared: HashMap::new(),
            warnings: Vec::new(),
            narrowings: Vec::new(),
            depth: 0,
        }
    }

    /// Whether llama.cpp's output is reproduced, quirks included, rather than the exact
    /// language of the schema.
    pub(super) fn compat(&self) -> bool {
        self.options.llama_cpp_compat && !self.options.strict
    }

    pub(super) fn warn(&mut self, path: &str, message: impl std::fmt::Display) {
        self.warnings.push(format!("{path}: {message}"));
    }

    /// Notes that strict mode narrowed what a keyword admits to what a grammar can say
    /// (sound, but some valid instances are refused).
    pub(super) fn narrowed(&mut self, path: &str, message: impl std::fmt::Display) {
        self.narrowings.push(format!("{path}: {message}"));
    }

    /// Adds a rule under `name` (characters GBNF does not allow in names become `-`);
    /// a different rule already there makes it `name0`, `name1`, …; an identical one is
    /// shared. Returns the name used.
    pub(super) fn add_rule(&mut self, name: &str, body: Expr) -> String {
        self.add_rule_as(name, body, true)
    }

    /// `add_rule`; in exact mode with `share`, a body equal to one already added under
    /// another name reuses that rule (objects with the same property names share one
    /// key trie, and so on), which llama.cpp's naming does not allow.
    fn add_rule_as(&mut self, name: &str, body: Expr, share: bool) -> String {
        let printed = if share && !self.compat() {
            crate::gbnf::print::expr(&body).ok()
        } else {
            None
        };
        let escaped = escape_rule_name(name);
        if let Some(existing) = printed.as_ref().and_then(|p| self.shared.get(p)) {
            if !self.pending.contains_key(&escaped) {
                return existing.clone();
            }
        }
        let added = self.insert_rule(&escaped, body);
        if let Some(printed) = printed {
            self.shared.entry(printed).or_insert_with(|| added.clone());
        }
        added
    }

    fn insert_rule(&mut self, escaped: &str, body: Expr) -> String {
        let escaped = escaped.to_string();
        let mut key = escaped.clone();
        let mut i = 0usize;
        loop {
            if let Some(&depth) = self.pending.get(&key) {
                if depth == self.depth {
                    self.pending.remove(&key);
                    self.rules.insert(key.clone(), body);
                    return key;
                }
            } else {
                match self.rules.get(&key) {
                    None => {
                        self.rules.insert(key.clone(), body);
                        return key;
                    }
                    Some(existing) if *existing == body => return key,
                    Some(_) => {}
                }
            }
            key = format!("{escaped}{i}");
            i += 1;
        }
    }

    /// Adds a builtin rule and the builtins it needs.
    pub(super) fn add_primitive(&mut self, name: &str, builtin: Builtin) -> String {
        let deps = builtin.deps;
        let added = self.add_rule_as(name, builtin.body, false);
        for dep in deps {
            if !self.rules.contains_key(*dep) {
                if let Some(dep_rule) =
                    builtins::primitive(dep).or_else(|| builtins::string_format(dep))
                {
                    self.add_primitive(dep, dep_rule);
                }
            }
        }
        added
    }

    /// A JSON primitive by name (`string`, `value`, …), added with what it needs.
    pub(super) fn primitive(&mut self, name: &str) -> String {
        match builtins::primitive(name) {
            Some(builtin) => self.add_primitive(name, builtin),
            None => name.to_string(),
        }
    }

    /// Converts `schema`, found at JSON pointer `path`, into a rule; `name` is the rule
    /// name llama.cpp would derive from the schema's position (`""` for the root).
    pub(super) fn visit(&mut self, schema: &Value, name: &str, path: &str) -> Result<String> {
        if self.depth >= self.options.limits.max_depth {
            return Err(limit_error(format!(
                "{path}: schema nested deeper than {} levels",
                self.options.limits.max_depth
            )));
        }
        self.depth += 1;
        let result = self.visit_schema(schema, name, path);
        self.depth -= 1;
        result
    }

    fn visit_schema(&mut self, schema: &Value, name: &str, path: &str) -> Result<String> {
        let rule_name = if builtins::is_reserved_name(name) {
            format!("{name}-")
        } else if name.is_empty() {
            "root".to_string()
        } else {
            name.to_string()
        };
        if !self.compat() {
            return self.visit_exact(schema, name, &rule_name, path);
        }
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(true) => {
                let value = self.primitive("value");
                return Ok(self.add_rule(&rule_name, rf(value)));
            }
            Value::Bool(false) => {
                return Err(schema_error(format!(
                    "{path}: the schema `false` admits no value"
                )))
            }
            _ => {
                return Err(schema_error(format!(
                    "{path}: a schema must be an object or a boolean, not {schema}"
                )))
            }
        };
        let schema_type = obj.get("type");
        let untyped = schema_type.is_none();
        let type_is = |t: &str| schema_type.and_then(Value::as_str) == Some(t);
        let format = match obj.get("format") {
            None => "",
            Some(Value::String(format)) => format.as_str(),
            Some(other) => {
                return Err(schema_error(format!(
                    "{path}/format: expected a string, found {other}"
                )))
            }
        };

        if let Some(reference) = obj.get("$ref") {
            let Value::String(reference) = reference else {
                return Err(schema_error(format!(
                    "{path}/$ref: expected a string, found {reference}"
                )));
            };
            self.compat_warn(obj, Types::ALL, &["$ref"], path, "beside $ref");
            let target = self.resolve_ref(reference, path)?;
            return Ok(self.add_rule(&rule_name, rf(target)));
        }
        if let Some((keyword, alternatives)) = ["oneOf", "anyOf"]
            .into_iter()
            .find_map(|k| obj.get(k).map(|v| (k, v)))
        {
            let Value::Array(alternatives) = alternatives else {
                return Err(schema_error(format!(
                    "{path}/{keyword}: expected an array of schemas"
                )));
            };
            let paths: Vec<String> = (0..alternatives.len())
                .map(|i| format!("{path}/{keyword}/{i}"))
                .collect();
            if keyword == "oneOf" {
                let _ = self.one_of_alternatives(alternatives, &format!("{path}/oneOf"));
            }
            self.compat_warn(
                obj,
                Types::ALL,
                &["oneOf", "anyOf"],
                path,
                &format!("beside {keyword}"),
            );
            let union = self.union(name, alternatives, &paths)?;
            return Ok(self.add_rule(&rule_name, union));
        }
        if let Some(Value::Array(types)) = schema_type {
            let copies: Vec<Value> = types
                .iter()
                .map(|t| {
                    let mut copy = obj.clone();
                    copy.insert("type".into(), t.clone());
                    Value::Object(copy)
                })
                .collect();
            let paths = vec![path.to_string(); copies.len()];
            let union = self.union(name, &copies, &paths)?;
            return Ok(self.add_rule(&rule_name, union));
        }
        if let Some(value) = obj.get("const") {
            self.compat_warn_constants(obj, std::slice::from_ref(value), path);
            return Ok(self.add_rule(&rule_name, seq(vec![constant(value), space()])));
        }
        if let Some(values) = obj.get("enum") {
            let Value::Array(values) = values else {
                return Err(schema_error(format!("{path}/enum: expected an array")));
            };
            self.compat_warn_constants(obj, values, path);
            let body = seq(vec![
                group(alt(values.iter().map(constant).collect())),
                space(),
            ]);
            return Ok(self.add_rule(&rule_name, body));
        }
        let additional = obj.get("additionalProperties");
        if (untyped || type_is("object")) && obj.contains_key("patternProperties") {
            return self.exact_object(obj, name, &rule_name, path);
        }
        if (untyped || type_is("object"))
            && (obj.contains_key("properties")
                || additional.is_some_and(|a| *a != Value::Bool(true)))
        {
            let properties = properties_of(obj, path)?;
            let required = required_of(obj);
            self.compat_warn(
                obj,
                Types::OBJECT,
                &["properties", "required", "additionalProperties"],
                path,
                "",
            );
            let listed: std::collections::HashSet<&str> =
                properties.iter().map(|(n, _, _)| n.as_str()).collect();
            if let Some(missing) = required.iter().find(|r| !listed.contains(r.as_str())) {
                self.warn(path, format!("the required property {missing:?} is not listed in properties; not enforced"));
            }
            let body = self.object_rule(&properties, &required, name, additional, path)?;
            return Ok(self.add_rule(&rule_name, body));
        }
        if (untyped || type_is("object") || type_is("string")) && obj.contains_key("allOf") {
            self.compat_warn(
                obj,
                Types::OBJECT,
                &["allOf", "properties", "required"],
                path,
                "beside allOf",
            );
            return self.all_of_llama(obj, name, &rule_name, path);
        }
        if (untyped || type_is("array"))
            && (obj.contains_key("items") || obj.contains_key("prefixItems"))
        {
            let handled = [
                "items",
                "prefixItems",
                "minItems",
                "maxItems",
                "additionalItems",
            ];
            self.compat_warn(obj, Types::ARRAY, &handled, path, "");
            return self.array(obj, name, &rule_name, path);
        }
        if (untyped || type_is("string")) && obj.contains_key("pattern") {
            let Some(pattern) = obj.get("pattern").and_then(Value::as_str) else {
                return Err(schema_error(format!("{path}/pattern: expected a string")));
            };
            self.compat_warn(obj, Types::STRING, &["pattern"], path, "beside pattern");
            if pattern.contains(['.', '"', '\\']) || pattern.contains("[^") {
                self.warn(
                    &format!("{path}/pattern"),
                    "pattern characters are matched as written, not in their JSON spelling (llama.cpp compatibility)",
                );
            }
            return self.visit_pattern(pattern, &rule_name, path);
        }
        if (untyped || type_is("string")) && is_uuid_format(format) {
            self.compat_warn(obj, Types::STRING, &["format"], path, "beside format");
            let name = if rule_name == "root" { "root" } else { format };
            return Ok(match builtins::primitive("uuid") {
                Some(uuid) => self.add_primitive(name, uuid),
                None => name.to_string(),
            });
        }
        if untyped || type_is("string") {
            let format_rule = format!("{format}-string");
            if let Some(builtin) = builtins::string_format(&format_rule) {
                self.compat_warn(obj, Types::STRING, &["format"], path, "beside format");
                if format == "date" || format == "date-time" {
                    self.warn(&format!("{path}/format"), "days of the month are not checked against the month (llama.cpp compatibility)");
                }
                let added = self.add_primitive(&format_rule, builtin);
                return Ok(self.add_rule(&rule_name, rf(added)));
            }
            if matches!(format, "email" | "ipv4" | "ipv6" | "hostname" | "uri") {
                self.compat_warn(obj, Types::STRING, &["format"], path, "beside format");
                if let Some(rule) = self.format_rule(format, &rule_name) {
                    return Ok(rule);
                }
            }
        }
        if type_is("string") && (obj.contains_key("minLength") || obj.contains_key("maxLength")) {
            self.compat_warn(obj, Types::STRING, &["minLength", "maxLength"], path, "");
            let char_rule = self.primitive("char");
            let (min, max) = self.count_range(obj, ["minLength", "maxLength"], path)?;
            let body = seq(vec![
                lit("\""),
                repetition(
                    rf(char_rule),
                    min,
                    max,
                    None,
                    self.options.limits.max_repeat,
                ),
                lit("\""),
                space(),
            ]);
            return Ok(self.add_rule(&rule_name, body));
        }
        if type_is("integer")
            && ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"]
                .iter()
                .any(|k| obj.contains_key(*k))
        {
            let handled = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"];
            self.compat_warn(obj, Types::INTEGER, &handled, path, "");
            return self.integer_range(obj, &rule_name, path);
        }
        if type_is("number")
            && ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"]
                .iter()
                .any(|k| obj.get(*k).is_some_and(Value::is_number))
        {
            let handled = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"];
            self.compat_warn(obj, Types::NUMBER, &handled, path, "");
            let (lower, upper) = super::number_range::Bound::of_schema(obj, path)?;
            let Some(range) = super::number_range::number_range(lower, upper) else {
                return Err(schema_error(format!(
                    "{path}: no number lies between the bounds"
                )));
            };
            return Ok(self.add_rule(&rule_name, seq(vec![group(range), space()])));
        }
        if obj.is_empty() || type_is("object") {
            self.compat_warn(obj, Types::OBJECT, &[], path, "");
            let object = self.primitive("object");
            return Ok(self.add_rule(&rule_name, rf(object)));
        }
        if untyped {
            self.compat_warn(obj, Types::ALL, &[], path, "");
            let value = self.primitive("value");
            return Ok(self.add_rule(&rule_name, rf(value)));
        }
        match schema_type.and_then(Value::as_str) {
            Some(t @ ("string" | "number" | "integer" | "boolean" | "null" | "array")) => {
                self.compat_warn(obj, Types::of_name(t).unwrap_or(Types::ALL), &[], path, "");
                let name = if rule_name == "root" { "root" } else { t };
                Ok(match builtins::primitive(t) {
                    Some(builtin) => self.add_primitive(name, builtin),
                    None => name.to_string(),
                })
            }
            _ => Err(schema_error(format!(
                "{path}: unrecognized schema {}",
                Value::Object(obj.clone())
            ))),
        }
    }

    /// llama.cpp-compatible mode: warns about each keyword of `obj` constraining `types`
    /// that the branch taken, which handles `handled` (and `type`), ignores.
    fn compat_warn(
        &mut self,
        obj: &Map<String, Value>,
        types: Types,
        handled: &[&str],
        path: &str,
        place: &str,
    ) {
        let mut except = vec!["type"];
        except.extend_from_slice(handled);
        let ignored: Vec<String> = keywords::unhandled(obj, types, &except)
            .into_iter()
            .map(str::to_string)
            .collect();
        for key in ignored {
            let place = if place.is_empty() {
                String::new()
            } else {
                format!(" {place}")
            };
            self.warn(
                &format!("{path}/{}", pointer_escape(&key)),
                format!("`{key}`{place} is not enforced (llama.cpp ignores it)"),
            );
        }
    }

    /// llama.cpp-compatible mode: `const`/`enum` values are admitted whatever the other
    /// keywords say; warns when one of them might not satisfy them.
    fn compat_warn_constants(&mut self, obj: &Map<String, Value>, values: &[Value], path: &str) {
        let mut rest = obj.clone();
        rest.remove("const");
        rest.remove("enum");
        let rest = Value::Object(rest);
        for value in values {
            if self.admits(&rest, value) != Some(true) {
                self.warn(
                    path,
                    format!(
                        "enum/const value {value} is admitted without checking the other keywords"
                    ),
                );
            }
        }
    }

    /// `a | b | …`, one rule per alternative, named `name-0`, … (`alternative-0`, … at
    /// the root).
    fn union(&mut self, name: &str, alternatives: &[Value], paths: &[String]) -> Result<Expr> {
        let mut rules = Vec::with_capacity(alternatives.len());
        for (i, (schema, path)) in alternatives.iter().zip(paths).enumerate() {
            let sub_name = if name.is_empty() {
                format!("alternative-{i}")
            } else {
                format!("{name}-{i}")
            };
            rules.push(rf(self.visit(schema, &sub_name, path)?));
        }
        Ok(alt(rules))
    }

    /// The rule of a reference, converting its target the first time. A reference met
    /// again while its target is being converted is recursive: a name is reserved for
    /// it then, which the conversion under way fills when it adds its rule.
    pub(super) fn resolve_ref(&mut self, reference: &str, path: &str) -> Result<String> {
        let base = refs::rule_name(reference).to_string();
        let target = self.resolve_at(path, reference)?;
        // Keyed by where the reference leads, which is what it means.
        let key = format!("$ref {}", target.path);
        if let Some(name) = self.memo_lookup(&key, &base) {
            return Ok(name);
        }
        if self.memo_rules.len() + self.resolving.len() >= self.options.limits.max_rules {
            return Err(limit_error(format!(
                "{path}: more than {} references",
                self.options.limits.max_rules
            )));
        }
        // The target's visit runs one level down, and adds its rule there.
        self.memo_begin(&key, self.depth + 1);
        let result = self.visit(target.schema, &base, &target.path);
        self.memo_end(&key, result)
    }

    /// The target of `reference` met at `path`, `$id` scopes followed.
    pub(super) fn resolve_at(&self, path: &str, reference: &str) -> Result<refs::Target<'a>> {
        refs::resolve_at(self.root, &self.ids, path, reference)
            .map_err(|message| schema_error(format!("{path}: {message}")))
    }

    /// The target of `reference` when where it is met does not matter (no schema in
    /// the document declares an `$id` of its own); `None` otherwise, or when unknown.
    pub(super) fn resolve_anywhere(&self, reference: &str) -> Option<&'a Value> {
        if self.ids.iter().any(|(_, path)| path != "#") {
            return None;
        }
        refs::resolve(self.root, reference).ok().map(|t| t.schema)
    }

    /// The rule already made for `key` (a reference, or a merged schema), or the name
    /// reserved for it when it is being converted right now (recursion).
    pub(super) fn memo_lookup(&mut self, key: &str, base: &str) -> Option<String> {
        if let Some(name) = self.memo_rules.get(key) {
            return Some(name.clone());
        }
        let state = self.resolving.get(key)?;
        if let Some(name) = &state.reserved {
            return Some(name.clone());
        }
        let fill_depth = state.fill_depth;
        let name = self.reserve_name(base, fill_depth);
        if let Some(state) = self.resolving.get_mut(key) {
            state.reserved = Some(name.clone());
        }
        Some(name)
    }

    /// Marks `key` as being converted by a visit whose rule is added at `fill_depth`.
    pub(super) fn memo_begin(&mut self, key: &str, fill_depth: usize) {
        self.resolving.insert(
            key.to_string(),
            Resolving {
                fill_depth,
                reserved: None,
            },
        );
    }

    /// Records the rule made for `key`; a name reserved for it meanwhile that the visit
    /// did not fill becomes an alias of that rule.
    pub(super) fn memo_end(&mut self, key: &str, result: Result<String>) -> Result<String> {
        let reserved = self.resolving.remove(key).and_then(|s| s.reserved);
        let name = result?;
        if let Some(reserved) = reserved {
            if self.pending.remove(&reserved).is_some() {
                self.rules.insert(reserved, rf(name.clone()));
            }
        }
        self.memo_rules.insert(key.to_string(), name.clone());
        Ok(name)
    }

    /// A free rule name for a recursive reference, to be filled by the rule the visit at
    /// `fill_depth` adds under that name (see `add_rule`).
    fn reserve_name(&mut self, name: &str, fill_depth: usize) -> String {
        let base = if builtins::is_reserved_name(name) {
            format!("{name}-")
        } else if name.is_empty() {
            "root".to_string()
        } else {
            name.to_string()
        };
        let escaped = escape_rule_name(&base);
        let mut key = escaped.clone();
        let mut i = 0usize;
        while self.rules.contains_key(&key) || self.pending.contains_key(&key) {
            key = format!("{escaped}{i}");
            i += 1;
        }
        self.pending.insert(key.clone(), fill_depth);
        key
    }

    /// llama.cpp's `allOf`: properties of every part (required when the part is
    /// required), parts of a nested `anyOf` optional, enums intersected.
    fn all_of_llama(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let Some(Value::Array(parts)) = obj.get("allOf") else {
            return Err(schema_error(format!("{path}/allOf: expected an array")));
        };
        let mut collected = AllOfParts::default();
        for (i, part) in parts.iter().enumerate() {
            let part_path = format!("{path}/allOf/{i}");
            if let Some(Value::Array(any)) = part.get("anyOf") {
                for (j, sub) in any.iter().enumerate() {
                    self.all_of_part(
                        sub,
                        false,
                        &format!("{part_path}/anyOf/{j}"),
                        &mut collected,
                        0,
                    )?;
                }
            } else {
                self.all_of_part(part, true, &part_path, &mut collected, 0)?;
            }
        }
        if !collected.enums.is_empty() {
            let common: Vec<Expr> = collected
                .enums
                .into_values()
                .filter(|(_, n)| *n == parts.len())
                .map(|(e, _)| e)
                .collect();
            if !common.is_empty() {
                let body = seq(vec![group(alt(common)), space()]);
                return Ok(self.add_rule(rule_name, body));
            }
        }
        let body =
            self.object_rule(&collected.properties, &collected.required, name, None, path)?;
        Ok(self.add_rule(rule_name, body))
    }

    fn all_of_part(
        &mut self,
        part: &Value,
        required: bool,
        path: &str,
        collected: &mut AllOfParts,
        hops: usize,
    ) -> Result<()> {
        if let Some(Value::String(reference)) = part.get("$ref") {
            if hops >= self.options.limits.max_depth {
                return Err(limit_error(format!("{path}: $ref chain too long")));
            }
            let target = self.resolve_at(path, reference)?;
            let (schema, target_path) = (target.schema, target.path);
            return self.all_of_part(schema, required, &target_path, collected, hops + 1);
        }
        if let Some(properties) = part.get("properties") {
            let Value::Object(properties) = properties else {
                return Err(schema_error(format!(
                    "{path}/properties: expected an object"
                )));
            };
            for (key, schema) in properties {
                collected.properties.push((
                    key.clone(),
                    schema.clone(),
                    format!("{path}/properties/{}", pointer_escape(key)),
                ));
                if required {
                    collected.required.push(key.clone());
                }
            }
        } else if let Some(Value::Array(values)) = part.get("enum") {
            for value in values {
                let printed = gbnf_literal(&value.to_string());
                let entry = collected
                    .enums
                    .entry(printed)
                    .or_insert((constant(value), 0));
                entry.1 += 1;
            }
        } else {
            self.warn(
                path,
                "this allOf part is not enforced (llama.cpp merges only properties and enums)",
            );
        }
        Ok(())
    }

    fn array(
        &mut self,
        obj: &Map<String, Value>,
        name: &str,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let (keyword, items) = match obj.get("items") {
            Some(items) => ("items", items),
            None => (
                "prefixItems",
                obj.get("prefixItems").unwrap_or(&Value::Null),
            ),
        };
        let prefix = child_prefix(name);
        if let Value::Array(tuple) = items {
            let mut body = vec![lit("["), space()];
            for (i, item) in tuple.iter().enumerate() {
                if i > 0 {
                    body.push(lit(","));
                    body.push(space());
                }
                let item_rule = self.visit(
                    item,
                    &format!("{prefix}tuple-{i}"),
                    &format!("{path}/{keyword}/{i}"),
                )?;
                body.push(rf(item_rule));
            }
            if tuple.is_empty() {
                body.push(Expr::Empty);
            }
            body.push(lit("]"));
            body.push(space());
            return Ok(self.add_rule(rule_name, seq(body)));
        }
        if *items == Value::Bool(false) {
            // No item can exist: the empty array.
            let body = seq(vec![lit("["), space(), Expr::Empty, lit("]"), space()]);
            return Ok(self.add_rule(rule_name, body));
        }
        let item_rule = self.visit(
            items,
            &format!("{prefix}item"),
            &format!("{path}/{keyword}"),
        )?;
        let (min, max) = self.count_range(obj, ["minItems", "maxItems"], path)?;
        let sep = [lit(","), space()];
        let body = seq(vec![
            lit("["),
            space(),
            repetition(
                rf(item_rule),
                min,
                max,
                Some(&sep),
                self.options.limits.max_repeat,
            ),
            lit("]"),
            space(),
        ]);
        Ok(self.add_rule(rule_name, body))
    }

    fn integer_range(
        &mut self,
        obj: &Map<String, Value>,
        rule_name: &str,
        path: &str,
    ) -> Result<String> {
        let bounds = IntBounds::of(obj, path)?;
        let (min, max) = (bounds.min, bounds.max);
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return Err(schema_error(format!(
                    "{path}: no integer lies between the bounds {min} and {max}"
                )));
            }
        }
        let range = int_range(min, max, self.compat());
        Ok(self.add_rule(rule_name, seq(vec![group(range), space()])))
    }

    /// A non-negative count keyword (`minItems`, `maxLength`, …).
    /// A count's bounds, `minItems`/`maxItems` or `minLength`/`maxLength`: the minimum (0
    /// when absent) and the maximum. A maximum below the minimum is an error: nothing
    /// satisfies the schema, and the repetition llama.cpp would print (`{5,2}`) is one its
    /// GBNF parser refuses.
    fn count_range(
        &mut self,
        obj: &Map<String, Value>,
        [min_key, max_key]: [&str; 2],
        path: &str,
    ) -> Result<(u64, Option<u64>)> {
        let min = self.count(obj, min_key, path)?.unwrap_or(0);
        let max = self.count(obj, max_key, path)?;
        match max {
            Some(max) if max < min => Err(schema_error(format!(
                "{path}: {min_key} {min} is above {max_key} {max}, so nothing satisfies the schema"
            ))),
            _ => Ok((min, max)),
        }
    }

    pub(super) fn count(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<u64>> {
        let Some(value) = obj.get(key) else {
            return Ok(None);
        };
        let n = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            }),
            _ => None,
        };
        let Some(n) = n else {
            return Err(schema_error(format!(
                "{path}/{key}: expected a non-negative integer, found {value}"
            )));
        };
        Ok(Some(n))
    }
}

/// A reference whose target is being converted: the depth at which the visit converting
/// it adds its rule, and the name reserved for it once it turned out to be recursive.
struct Resolving {
    fill_depth: usize,
    reserved: Option<String>,
}

#[derive(Default)]
struct AllOfParts {
    properties: Vec<(String, Value, String)>,
    required: Vec<String>,
    enums: BTreeMap<String, (Expr, usize)>,
}

/// Integer bounds of a schema, inclusive, from `minimum`/`maximum` and their exclusive
/// forms (draft 4's boolean ones included); fractional bounds round inwards.
pub(super) struct IntBounds {
    pub min: Option<i128>,
    pub max: Option<i128>,
}

/// Bounds beyond this magnitude are treated as absent (for the far side) or refused.
const HUGE: f64 = 1e36;

impl IntBounds {
    pub(super) fn of(obj: &Map<String, Value>, path: &str) -> Result<Self> {
        let number = |key: &str| -> Result<Option<f64>> {
            match obj.get(key) {
                None | Some(Value::Bool(_)) => Ok(None),
                Some(Value::Number(n)) => Ok(n.as_f64()),
                Some(other) => Err(schema_error(format!(
                    "{path}/{key}: expected a number, found {other}"
                ))),
            }
        };
        let flag = |key: &str| obj.get(key) == Some(&Value::Bool(true));
        let exact = |key: &str| obj.get(key).and_then(Value::as_i64).map(i128::from);
        let mut min: Option<i128> = None;
        let mut max: Option<i128> = None;
        let mut raise = |candidate: i128| min = Some(min.map_or(candidate, |m| m.max(candidate)));
        if let Some(m) = number("minimum")? {
            let exclusive = flag("exclusiveMinimum");
            if let Some(b) = round_bound(m, exclusive, true, exact("minimum"), path)? {
                raise(b);
            }
        }
        if let Some(m) = number("exclusiveMinimum")? {
            if let Some(b) = round_bound(m, true, true, exact("exclusiveMinimum"), path)? {
                raise(b);
            }
        }
        let mut lower = |candidate: i128| max = Some(max.map_or(candidate, |m| m.min(candidate)));
        if let Some(m) = number("maximum")? {
            let exclusive = flag("exclusiveMaximum");
            if let Some(b) = round_bound(m, exclusive, false, exact("maximum"), path)? {
                lower(b);
            }
        }
        if let Some(m) = number("exclusiveMaximum")? {
            if let Some(b) = round_bound(m, true, false, exact("exclusiveMaximum"), path)? {
                lower(b);
            }
        }
        Ok(Self { min, max })
    }
}

/// The inclusive integer bound of a numeric bound: `minimum: 1.5` → 2, `exclusiveMinimum:
/// 2` → 3. `None` for a bound so far out that it does not restrict the grammar's own
/// 16-digit integers.
fn round_bound(
    value: f64,
    exclusive: bool,
    lower: bool,
    exact: Option<i128>,
    path: &str,
) -> Result<Option<i128>> {
    if value.abs() > HUGE {
        let irrelevant = (lower && value < 0.0) || (!lower && value > 0.0);
        return if irrelevant {
            Ok(None)
        } else {
            Err(limit_error(format!(
                "{path}: integer bound {value} is too large"
            )))
        };
    }
    let base = match exact {
        Some(exact) => exact,
        None if lower => value.ceil() as i128,
        None => value.floor() as i128,
    };
    let on_bound = exact.is_some() || value.fract() == 0.0;
    Ok(Some(match (exclusive && on_bound, lower) {
        (true, true) => base + 1,
        (true, false) => base - 1,
        (false, _) => base,
    }))
}

/// The literal of a constant: its compact JSON text.
pub(super) fn constant(value: &Value) -> Expr {
    lit(value.to_string())
}

fn is_uuid_format(format: &str) -> bool {
    match format.strip_prefix("uuid") {
        Some("") => true,
        Some(rest) => rest.len() == 1 && ('1'..='5').contains(&rest.chars().next().unwrap_or('0')),
        None => false,
    }
}

/// The properties of an object schema, in the order written, with their paths.
pub(super) fn properties_of(
    obj: &Map<String, Value>,
    path: &str,
) -> Result<Vec<(String, Value, String)>> {
    match obj.get("properties") {
        None => Ok(Vec::new()),
        Some(Value::Object(properties)) => Ok(properties
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.clone(),
                    format!("{path}/properties/{}", pointer_escape(k)),
                )
            })
            .collect()),
        Some(other) => Err(schema_error(format!(
            "{path}/properties: expected an object, found {other}"
        ))),
    }
}

/// The names `required` lists (non-strings ignored, as llama.cpp does).
pub(super) fn required_of(obj: &Map<String, Value>) -> Vec<String> {
    match obj.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// A key as a JSON pointer token.
pub(super) fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// llama.cpp's rule names: every run of characters other than ASCII letters, digits and
/// `-` becomes one `-`. A name that would begin with a digit (a property `1st`) begins
/// `r-` instead: GBNF takes `1st-kv`, but xgrammar's EBNF (vLLM, SGLang) refuses a rule
/// name that starts with a digit, and Lark's printer writes the same `r_` prefix.
pub(super) fn escape_rule_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push_str("r-");
    }
    let mut in_run = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    out
}
