//! Hostile schemas: each must end in a clear error or in a grammar under a size bound,
//! quickly, in every mode, and never panic. Random JSON values as schemas (proptest)
//! check the "never panic" part broadly.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolbridge_grammar::gbnf;
use toolbridge_grammar::schema::{compile, Options};
use toolbridge_grammar::{GrammarError, GrammarErrorKind};

/// Printed grammars above this size count as unbounded.
const MAX_PRINTED: usize = 8 << 20;
const MAX_TIME: Duration = Duration::from_secs(20);

fn modes() -> Vec<(&'static str, Options)> {
    vec![
        ("llama.cpp", Options::default()),
        ("exact", Options::exact()),
        ("strict", Options::strict()),
        (
            "open",
            Options {
                extra_properties_by_default: true,
                openapi_nullable: true,
                ..Options::exact()
            },
        ),
    ]
}

/// Compiles in every mode on a thread with a generous stack (a debug build's frames are
/// large), asserting an error or a bounded grammar, in bounded time. Returns the
/// outcomes for further checks.
fn bounded(name: &str, schema: Value) -> Vec<Result<usize, GrammarError>> {
    let name = name.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            modes()
                .into_iter()
                .map(|(mode, options)| {
                    let started = Instant::now();
                    let result = compile(&schema, &options).and_then(|c| gbnf::print(&c.grammar));
                    let elapsed = started.elapsed();
                    assert!(elapsed < MAX_TIME, "{name} ({mode}) took {elapsed:?}");
                    let size = result.map(|printed| printed.len());
                    if let Ok(size) = &size {
                        assert!(
                            *size < MAX_PRINTED,
                            "{name} ({mode}): grammar of {size} bytes"
                        );
                    }
                    size
                })
                .collect()
        })
        .expect("a thread")
        .join()
        .unwrap_or_else(|_| panic!("compiling a hostile schema panicked"))
}

fn assert_limit(name: &str, schema: Value) {
    for outcome in bounded(name, schema) {
        assert!(
            matches!(&outcome, Err(e) if e.kind() == &GrammarErrorKind::Limit),
            "{name}: expected a limit error, got {outcome:?}"
        );
    }
}

/// A limit error in the exact modes; llama.cpp's mode may stop reading earlier.
fn assert_exact_limit(name: &str, schema: Value) {
    for outcome in &bounded(name, schema)[1..] {
        assert!(
            matches!(&outcome, Err(e) if e.kind() == &GrammarErrorKind::Limit),
            "{name}: expected a limit error, got {outcome:?}"
        );
    }
}

fn assert_error(name: &str, schema: Value) {
    for outcome in bounded(name, schema) {
        assert!(
            outcome.is_err(),
            "{name}: expected an error, got a grammar of {outcome:?} bytes"
        );
    }
}

/// `depth` levels of `wrap` around a string schema. `wrap` gets a placeholder to put
/// where the inner schema goes (`json!` would copy the inner value recursively).
fn nested(depth: usize, wrap: impl Fn(Value) -> Value) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        let mut outer = wrap(json!("INNER"));
        replace_placeholder(&mut outer, &mut Some(schema));
        schema = outer;
    }
    schema
}

fn replace_placeholder(value: &mut Value, inner: &mut Option<Value>) {
    match value {
        Value::String(s) if s == "INNER" => {
            if let Some(v) = inner.take() {
                *value = v;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_placeholder(v, inner)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_placeholder(v, inner)),
        _ => {}
    }
}

#[test]
fn deep_nesting_is_a_limit_error() {
    assert_limit(
        "nested properties",
        nested(1_000, |s| json!({"type": "object", "properties": {"a": s}})),
    );
    assert_limit(
        "nested items",
        nested(1_000, |s| json!({"type": "array", "items": s})),
    );
    assert_limit(
        "nested anyOf",
        nested(1_000, |s| json!({"anyOf": [s, {"type": "null"}]})),
    );
    // llama.cpp's allOf and not read one level only; the exact modes go all the way.
    assert_exact_limit("nested allOf", nested(1_000, |s| json!({"allOf": [s]})));
    assert_exact_limit("nested not", nested(1_000, |s| json!({"not": {"not": s}})));
    let groups = format!("^{}a{}$", "(".repeat(5_000), ")".repeat(5_000));
    assert_limit(
        "nested groups",
        json!({"type": "string", "pattern": groups}),
    );
}

#[test]
fn reference_cycles_without_progress_are_errors() {
    assert_error("self", json!({"$ref": "#"}));
    assert_error(
        "two-step cycle",
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
    );
    let allof_cycle = json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}, {"type": "object"}]}}, "$ref": "#/$defs/a"});
    for outcome in &bounded("allOf cycle", allof_cycle)[1..] {
        assert!(outcome.is_err(), "{outcome:?}");
    }
    assert_error(
        "left recursion through anyOf",
        json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
    );
    assert_error("missing target", json!({"$ref": "#/$defs/nowhere"}));
    assert_error("remote", json!({"$ref": "https://example.com/schema.json"}));
}

#[test]
fn recursive_schemas_make_small_recursive_grammars() {
    let tree = json!({
        "$defs": {"node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "next": {"$ref": "#/$defs/node", "minProperties": 1}},
        }},
        "$ref": "#/$defs/node"
    });
    for outcome in bounded("tree", tree) {
        let size = outcome.expect("a recursive schema compiles");
        assert!(size < 20_000, "{size}");
    }
}

#[test]
fn exponential_references_stay_linear() {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({"type": "integer"}));
    for i in 1..16 {
        let prev = format!("#/$defs/d{}", i - 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"x": {"$ref": prev}, "y": {"$ref": prev}}, "required": ["x", "y"]}),
        );
    }
    let schema = json!({"$defs": defs, "$ref": "#/$defs/d15"});
    for outcome in bounded("doubling refs", schema) {
        let size = outcome.expect("compiles");
        assert!(size < 100_000, "{size}");
    }
}

#[test]
fn huge_counts_stay_small() {
    for (name, schema) in [
        (
            "minItems",
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1_000_000_000_000u64}),
        ),
        (
            "maxItems",
            json!({"type": "array", "items": {"type": "integer"}, "maxItems": u64::MAX}),
        ),
        (
            "maxLength",
            json!({"type": "string", "maxLength": u64::MAX}),
        ),
        (
            "minLength",
            json!({"type": "string", "minLength": 123_456_789_012u64, "maxLength": 123_456_789_999u64}),
        ),
        (
            "pattern count",
            json!({"type": "string", "pattern": "^a{0,1000000000}b{5000000}$"}),
        ),
    ] {
        for outcome in bounded(name, schema) {
            let size = outcome.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(size < 20_000, "{name}: {size}");
        }
    }
}

#[test]
fn enormous_enums_and_objects_are_bounded() {
    let values: Vec<Value> = (0..200_000).map(|i| json!(format!("value-{i}"))).collect();
    bounded("enum", json!({"enum": values}));
    let mut properties = Map::new();
    for i in 0..20_000 {
        properties.insert(format!("p{i}"), json!({"type": "integer"}));
    }
    bounded(
        "many properties",
        json!({"type": "object", "properties": properties, "additionalProperties": true}),
    );
    let long = "k".repeat(100_000);
    assert_limit(
        "long property name",
        json!({"type": "object", "properties": {long.clone(): {}}, "additionalProperties": true}),
    );
}

#[test]
fn catastrophic_patterns_convert_in_linear_time() {
    for pattern in [
        "^(a+)+$",
        "^(a|a)*b$",
        "^((a*)*)*$",
        "^(a|aa)+$",
        "^(.*a){20}$",
        "^((a{100}){100}){100}$",
    ] {
        for outcome in bounded(pattern, json!({"type": "string", "pattern": pattern})) {
            let size = outcome.unwrap_or_else(|e| panic!("{pattern}: {e}"));
            assert!(size < 10_000, "{pattern}: {size}");
        }
    }
    assert_limit(
        "long pattern",
        json!({"type": "string", "pattern": "a".repeat(100_000)}),
    );
}

#[test]
fn huge_numeric_bounds_neither_overflow_nor_panic() {
    for schema in [
        json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}),
        json!({"type": "integer", "exclusiveMinimum": i64::MIN}),
        json!({"type": "integer", "exclusiveMaximum": i64::MIN}),
        json!({"type": "integer", "exclusiveMinimum": i64::MAX}),
        json!({"type": "integer", "maximum": u64::MAX}),
        json!({"type": "integer", "minimum": -1e308, "maximum": 1e308}),
        json!({"type": "integer", "minimum": 1e300}),
        json!({"type": "number", "minimum": -1e308, "maximum": 1e308}),
        json!({"type": "number", "exclusiveMinimum": 1e-300, "exclusiveMaximum": 2e-300}),
        json!({"type": "number", "minimum": 1e300}),
        json!({"type": "integer", "minimum": 5, "maximum": 4}),
    ] {
        bounded(&schema.to_string(), schema.clone());
    }
}

#[test]
fn multiplying_alternatives_is_a_limit_error() {
    let parts: Vec<Value> = (0..20)
        .map(|i| json!({"anyOf": [{"properties": {format!("a{i}"): {"type": "integer"}}}, {"properties": {format!("b{i}"): {"type": "string"}}}]}))
        .collect();
    let outcomes = bounded("allOf of anyOfs", json!({"type": "object", "allOf": parts}));
    // llama.cpp's flattening needs no multiplying; the exact modes refuse.
    for outcome in &outcomes[1..] {
        assert!(
            matches!(&outcome, Err(e) if e.kind() == &GrammarErrorKind::Limit),
            "{outcome:?}"
        );
    }
    let alternatives: Vec<Value> = (0..2_000).map(|i| json!({"const": i})).collect();
    bounded("wide oneOf", json!({"oneOf": alternatives}));
}

/// JSON values leaning towards schema keywords, nested a few levels.
fn schema_like() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "properties",
        "items",
        "prefixItems",
        "additionalProperties",
        "patternProperties",
        "required",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "$ref",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "if",
        "then",
        "else",
        "dependencies",
        "dependentRequired",
        "propertyNames",
        "multipleOf",
        "nullable",
        "$defs",
        "definitions",
        "a",
        "b",
        "additionalItems",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "object",
            "array",
            "string",
            "integer",
            "number",
            "boolean",
            "null",
            "#",
            "#/$defs/a",
            "#/definitions/b",
            "^a+$",
            "[",
            "(?=x)",
            "\\d{2,}",
            "date",
            "email",
            "uuid",
            "a",
            "",
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..5).prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_values_as_schemas_never_panic(schema in schema_like()) {
        for (_, options) in modes() {
            let started = Instant::now();
            if let Ok(compiled) = compile(&schema, &options) {
                let _ = gbnf::print(&compiled.grammar);
                let _ = toolbridge_grammar::lark::print(&compiled.grammar);
            }
            prop_assert!(started.elapsed() < MAX_TIME);
        }
    }
}
