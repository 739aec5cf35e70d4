//! JSON Schema → grammar tree.
//!
//! The conversion follows llama.cpp's `json-schema-to-grammar` rule for rule: the same
//! keyword precedence, rule names and spelling, so that [`crate::gbnf::print()`] of the
//! result is byte-identical to what llama.cpp prints for its own test cases, and a user
//! moving from llama.cpp sees the grammar they know. It builds tree nodes rather than
//! text so that the same result prints as Lark for llguidance too.
//!
//! [`Options`] chooses between reproducing llama.cpp (the default) and exact JSON Schema
//! semantics, and sets the limits that keep hostile schemas bounded. Whatever a schema
//! asks that the grammar does not enforce is reported in [`Compiled::warnings`];
//! `strict` makes each of those an error instead.
//!
//! Where llama.cpp has no answer both modes add one: number bounds, exclusive and
//! draft-4 integer bounds, `patternProperties`, more `format`s (email, ipv4, ipv6,
//! hostname, uri), nested and escaped `$ref` pointers, recursive schemas, boolean
//! schemas, counts beyond the repetition limit (written in blocks).
//!
//! Exact mode ([`Options::exact`]) reads every keyword of a schema rather than the first
//! llama.cpp's dispatch picks: compositions are merged (`merge`), negations written as
//! schemas (`negate`), `oneOf` alternatives made to exclude each other, `const`/`enum`
//! filtered by their siblings (`instance`), and each type converted with all of its
//! keywords (`exact`, `object`). Strict mode ([`Options::strict`]) is exact mode that
//! refuses instead of warning, and narrows what a grammar cannot count (`uniqueItems`,
//! `contains`, `propertyNames`, `maxProperties`) to what it can, soundly. On the
//! MaskBench schemas shared with this project (5690), strict mode compiles 5298 and
//! admits none of their invalid instances.
//!
//! Module map: `converter` (llama.cpp's walk, the rule table, references), `exact`,
//! `merge`, `negate`, `object`, `pattern` (regexes), `int_range`/`number_range`,
//! `formats`, `builtins` (llama.cpp's fixed rules), `refs` (JSON pointers, `$id`), `rebase` (moving a schema
//! into another with its references intact),
//! `keywords` (what each keyword constrains), `instance`/`matcher` (deciding single
//! values at conversion time), `nesting`/`validate` (the finished grammar).

mod builtins;
mod charset;
mod converter;
mod embedded;
mod exact;
mod exprs;
mod formats;
mod instance;
mod int_range;
mod keywords;
mod llguidance_schema;
mod matcher;
mod merge;
mod negate;
mod nesting;
mod number_range;
mod object;
mod pattern;
mod rebase;
mod refs;
mod validate;

#[cfg(test)]
mod tests;

use serde_json::Value;

pub use embedded::expand_embedded;
pub use llguidance_schema::for_llguidance;
pub use rebase::{detached, nest};

use crate::error::schema_error;
use crate::error::GrammarError;
use crate::tree::{Grammar, Rule};

/// How a schema is converted.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Reproduce llama.cpp's output, quirks included (the default). When false, the
    /// grammar follows JSON Schema instead where llama.cpp approximates it: pattern
    /// characters are matched in their JSON spelling, `allOf` is merged rather than
    /// flattened into required properties, and so on.
    pub llama_cpp_compat: bool,
    /// Refuse what cannot be enforced: every warning becomes a
    /// [`GrammarErrorKind::Schema`], the exact constructions are used whatever
    /// `llama_cpp_compat` says, and keywords a grammar cannot count are narrowed to what
    /// it can (`uniqueItems` to one item, `contains` to every item). A schema that
    /// compiles in strict mode admits no instance that JSON Schema rejects.
    pub strict: bool,
    /// `.` in patterns matches line breaks too (llama.cpp's `dotall`).
    pub dotall: bool,
    /// An object schema without `additionalProperties` admits properties it does not
    /// list, of any value, as JSON Schema says. Off by default, as in llama.cpp, whose
    /// grammars admit only the listed properties then.
    pub extra_properties_by_default: bool,
    /// Honour OpenAPI's `nullable: true` (`null` is admitted besides the schema's
    /// type). Off by default: to JSON Schema `nullable` is an unknown keyword.
    pub openapi_nullable: bool,
    pub limits: Limits,
}

/// Bounds on the work a schema may cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Nesting of subschemas (and of groups in a pattern).
    pub max_depth: usize,
    /// The largest count one repetition is written with (`maxItems`, `minLength`,
    /// `{m,n}`); larger counts are written as repetitions of 100-item blocks, exactly.
    /// Whatever this says, no count is written that llama.cpp's GBNF parser refuses (it
    /// bounds a count times the rules its item creates by
    /// [`crate::gbnf::parse::MAX_REPETITION`], and reads a larger maximum as none).
    pub max_repeat: u32,
    /// Rules in the grammar.
    pub max_rules: usize,
    /// Nodes in the whole grammar tree, which bounds the printed size too.
    pub max_nodes: usize,
    /// Characters in one `pattern`.
    pub max_pattern_length: usize,
    /// Alternatives `anyOf`/`oneOf` inside `allOf` (and `dependencies`, `if`) may
    /// multiply out to, over the whole schema.
    pub max_alternatives: usize,
    /// Characters in a property name or an excluded string (each character nests the
    /// key trie one level deeper).
    pub max_name_length: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            llama_cpp_compat: true,
            strict: false,
            dotall: false,
            extra_properties_by_default: false,
            openapi_nullable: false,
            limits: Limits::default(),
        }
    }
}

impl Options {
    /// JSON Schema semantics, warnings listed.
    pub fn exact() -> Self {
        Self {
            llama_cpp_compat: false,
            ..Self::default()
        }
    }

    /// JSON Schema semantics, anything not enforced refused.
    pub fn strict() -> Self {
        Self {
            llama_cpp_compat: false,
            strict: true,
            ..Self::default()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 64,
            max_repeat: 10_000,
            max_rules: 10_000,
            max_nodes: 1_000_000,
            max_pattern_length: 10_000,
            max_alternatives: 1_000,
            max_name_length: 1_000,
        }
    }
}

/// A converted schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    /// The grammar, rules sorted by name; its root is `root` (in exact mode, the rule
    /// the root schema converted to, which may be shared with a subschema).
    pub grammar: Grammar,
    /// What the schema asks that the grammar does not enforce, each starting with the
    /// JSON pointer (`#/properties/a`) of the schema it concerns.
    pub warnings: Vec<String>,
}

/// Converts a JSON Schema into a grammar.
pub fn compile(schema: &Value, options: &Options) -> Result<Compiled, GrammarError> {
    let mut converter = converter::Converter::new(options, schema);
    let root = converter.visit(schema, "", "#")?;
    if exact::is_never(&root) {
        let message = match converter.narrowings.as_slice() {
            [] => "the schema admits no value".to_string(),
            narrowed => format!(
                "the schema admits no value once narrowed to what a grammar can say ({})",
                narrowed.join("; ")
            ),
        };
        return Err(schema_error(message));
    }
    if root != "root" && !converter.rules.contains_key("root") {
        converter.add_rule("root", crate::tree::Expr::Ref(root.clone()));
    }
    nesting::flatten(&mut converter.rules);
    let warnings = std::mem::take(&mut converter.warnings);
    if options.strict {
        if let Some(first) = warnings.first() {
            return Err(schema_error(format!("not enforceable: {first}")));
        }
    }
    let rules: Vec<Rule> = std::mem::take(&mut converter.rules)
        .into_iter()
        .map(|(name, body)| Rule { name, body })
        .collect();
    let root_name = if options.llama_cpp_compat && !options.strict {
        "root".to_string()
    } else {
        root
    };
    let grammar = Grammar {
        root: root_name,
        rules,
    };
    validate::check(&grammar, &options.limits)?;
    Ok(Compiled { grammar, warnings })
}

/// Converts a JSON Schema given as text.
pub fn compile_str(schema: &str, options: &Options) -> Result<Compiled, GrammarError> {
    let schema: Value =
        serde_json::from_str(schema).map_err(|e| schema_error(format!("not JSON: {e}")))?;
    compile(&schema, options)
}
