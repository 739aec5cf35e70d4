//! Language tests for the extensions beyond llama.cpp: each schema's grammar is run in
//! llguidance (through `crate::check`) on instances JSON Schema accepts and rejects.

use serde_json::{json, Value};

use super::{compile, Compiled, Options};
use crate::check::Validator;
use crate::gbnf;

fn compiled(schema: &Value, options: &Options) -> Compiled {
    match compile(schema, options) {
        Ok(c) => c,
        Err(e) => panic!("{schema} does not compile: {e}"),
    }
}

/// Asserts which instances the exact grammar of `schema` admits, and returns its warnings.
fn language(schema: Value, good: &[&str], bad: &[&str]) -> Vec<String> {
    language_with(schema, &Options::exact(), good, bad)
}

/// Membership is decided by the grammar's own (context-free) semantics, as llama.cpp's
/// engine has them; llguidance must accept the grammar too (its greedy lexer decides
/// some texts differently, which is the Lark printing's business).
fn language_with(schema: Value, options: &Options, good: &[&str], bad: &[&str]) -> Vec<String> {
    let c = compiled(&schema, options);
    let printed = gbnf::print(&c.grammar).unwrap_or_default();
    if let Err(e) = Validator::from_grammar(&c.grammar) {
        panic!("{schema}: llguidance refused the grammar: {e}\n{printed}");
    }
    for text in good {
        assert!(admits(&c, text), "{schema} should admit {text}\n{printed}");
    }
    for text in bad {
        assert!(
            !admits(&c, text),
            "{schema} should refuse {text}\n{printed}"
        );
    }
    c.warnings
}

fn admits(c: &Compiled, text: &str) -> bool {
    let rules: std::collections::BTreeMap<String, crate::tree::Expr> = c
        .grammar
        .rules
        .iter()
        .map(|r| (r.name.clone(), r.body.clone()))
        .collect();
    let root = crate::tree::Expr::Ref(c.grammar.root.clone());
    super::matcher::matches(&rules, &root, text)
        .unwrap_or_else(|| panic!("matcher budget ran out on {text}"))
}

fn strict_error(schema: Value) -> String {
    match compile(&schema, &Options::strict()) {
        Ok(c) => panic!(
            "{schema} compiled in strict mode:\n{}",
            gbnf::print(&c.grammar).unwrap_or_default()
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn number_bounds() {
    language(
        json!({"type": "number", "minimum": 1.5, "exclusiveMaximum": 10}),
        &["1.5", "1.50", "2", "9.999", "3.25"],
        &["1.49", "1", "10", "10.0", "-2", "11"],
    );
    language(
        json!({"type": "number", "exclusiveMinimum": -0.5, "maximum": 0.25}),
        &["-0.49", "0", "0.25", "0.250", "0.1"],
        &["-0.5", "-1", "0.26", "1"],
    );
    language(
        json!({"type": "number", "minimum": 0}),
        &["0", "0.5", "12345.678"],
        &["-1", "-0.1"],
    );
    language(
        json!({"type": "number", "maximum": -2.5}),
        &["-2.5", "-3", "-100.25"],
        &["-2.4", "0", "3"],
    );
    language(
        json!({"type": "number", "minimum": 2, "maximum": 2}),
        &["2", "2.0"],
        &["2.1", "1.9"],
    );
    let err = strict_error(json!({"type": "number", "minimum": 3, "maximum": 2}));
    assert!(err.contains("admits no value"), "{err}");
}

#[test]
fn integer_bounds_with_exclusive_and_draft4_forms() {
    language(
        json!({"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 9}),
        &["6", "8"],
        &["5", "9", "-1"],
    );
    language(
        json!({"type": "integer", "minimum": 5, "exclusiveMinimum": true}),
        &["6", "60"],
        &["5", "4"],
    );
    language(
        json!({"type": "integer", "minimum": 1.5, "maximum": 3.5}),
        &["2", "3"],
        &["1", "4"],
    );
    language(
        json!({"type": "integer", "maximum": -5}),
        &["-5", "-12"],
        &["-01", "-4", "0"],
    );
    language(
        json!({"type": "integer", "minimum": 100}),
        &["100", "999", "1000"],
        &["10", "99", "-100"],
    );
}

#[test]
fn patterns_in_json_spelling() {
    language(
        json!({"type": "string", "pattern": "^\"[a-z]+\"$"}),
        &[r#""\"ab\"""#],
        &[r#"""ab"""#],
    );
    language(
        json!({"type": "string", "pattern": "^[^a]+$"}),
        &[r#""xyz""#, r#""x\ny""#, r#""\\""#],
        &[r#""xay""#, r#""\u0061""#],
    );
    language(
        json!({"type": "string", "pattern": "abc"}),
        &[r#""abc""#, r#""xxabcyy""#],
        &[r#""ab""#],
    );
    language(
        json!({"type": "string", "pattern": "^\\d{3}-\\w+$"}),
        &[r#""123-ab_c""#],
        &[r#""12-ab""#, r#""123-""#],
    );
    language(
        json!({"type": "string", "pattern": "^a.c$"}),
        &[r#""abc""#, r#""a\"c""#],
        &[r#""a\nc""#, r#""ac""#],
    );
    let warnings = language(
        json!({"type": "string", "pattern": "^(?=a)a+$"}),
        &[r#""aa""#],
        &[],
    );
    assert!(
        warnings.iter().any(|w| w.contains("lookaround")),
        "{warnings:?}"
    );
    strict_error(json!({"type": "string", "pattern": "^(a)\\1$"}));
}

#[test]
fn formats() {
    language(
        json!({"type": "string", "format": "date"}),
        &[r#""2024-02-29""#, r#""2023-12-31""#, r#""2000-02-29""#],
        &[
            r#""2023-02-29""#,
            r#""1900-02-29""#,
            r#""2023-04-31""#,
            r#""0000-01-01""#,
        ],
    );
    language(
        json!({"format": "date-time"}),
        &[
            r#""2024-01-02T03:04:05Z""#,
            r#""2024-01-02T03:04:05.123+01:00""#,
        ],
        &[r#""2024-01-02 03:04:05""#],
    );
    language(
        json!({"format": "email"}),
        &[r#""a.b+c@example.co.uk""#],
        &[r#""a@b""#, r#""@x.com""#, r#""a b@x.com""#],
    );
    language(
        json!({"format": "ipv4"}),
        &[r#""192.168.0.1""#, r#""0.0.0.0""#],
        &[r#""256.1.1.1""#, r#""01.1.1.1""#, r#""1.1.1""#],
    );
    language(
        json!({"format": "ipv6"}),
        &[
            r#""::""#,
            r#""::1""#,
            r#""2001:db8::ff00:42:8329""#,
            r#""::ffff:192.0.2.128""#,
            r#""1:2:3:4:5:6:7:8""#,
        ],
        &[r#""1:2:3:4:5:6:7:8:9""#, r#""1::2::3""#, r#""12345::""#],
    );
    language(
        json!({"format": "hostname"}),
        &[r#""example.com""#, r#""localhost""#],
        &[r#""-a.com""#, r#""a..com""#, r#""1.2.3.4""#],
    );
    language(
        json!({"format": "uri"}),
        &[r#""https://example.com/a/b?x=1#top""#],
        &[r#""example.com""#, r#""http://""#],
    );
    let warnings = language(
        json!({"type": "string", "format": "duration"}),
        &[r#""P1D""#],
        &[],
    );
    assert!(
        warnings.iter().any(|w| w.contains("duration")),
        "{warnings:?}"
    );
}

#[test]
fn nested_and_escaped_refs() {
    let schema = json!({
        "$defs": {"a/b": {"$defs": {"c": {"type": "integer"}}}, "d e": {"properties": {"x": {"const": 1}}, "required": ["x"]}},
        "type": "object",
        "properties": {"i": {"$ref": "#/$defs/a~1b/$defs/c"}, "o": {"$ref": "#/$defs/d%20e/properties/x"}},
        "required": ["i", "o"]
    });
    language(
        schema,
        &[r#"{"i":3,"o":1}"#],
        &[r#"{"i":"3","o":1}"#, r#"{"i":3,"o":2}"#],
    );
}

#[test]
fn recursive_refs_make_recursive_rules() {
    let schema = json!({
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}, "required": ["v"]}},
        "$ref": "#/$defs/node"
    });
    language(
        schema.clone(),
        &[r#"{"v":1}"#, r#"{"v":1,"next":{"v":2,"next":{"v":3}}}"#],
        &[r#"{"v":1,"next":{}}"#],
    );
    language_with(
        schema,
        &Options::default(),
        &[r#"{"v":1,"next":{"v":2}}"#],
        &[r#"{"next":{"v":2}}"#],
    );
    let err = compile(&json!({"$ref": "#"}), &Options::exact())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("cycle"), "{err}");
    let err = compile(&json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}), &Options::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("cycle"), "{err}");
}

#[test]
fn additional_properties_follow_json_schema_on_request() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    language(schema.clone(), &[r#"{"a":1}"#, "{}"], &[r#"{"b":1}"#]);
    let open = Options {
        extra_properties_by_default: true,
        ..Options::exact()
    };
    language_with(
        schema,
        &open,
        &[r#"{"a":1}"#, r#"{"a":1,"b":[true]}"#, r#"{"ab":1}"#],
        &[r#"{"a":"x"}"#],
    );
}

#[test]
fn pattern_properties() {
    let schema = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": false
    });
    language(
        schema,
        &[r#"{"id":1,"x-a":"s"}"#, r#"{"x-b":"t"}"#],
        &[r#"{"x-a":1}"#, r#"{"y":"s"}"#],
    );
}

#[test]
fn const_enum_and_types() {
    language(
        json!({"enum": [{"a": [1, null]}, "x", 2.5]}),
        &[r#"{"a":[1,null]}"#, r#""x""#, "2.5"],
        &[r#""y""#],
    );
    language(
        json!({"type": "string", "enum": ["a", 1, "bb"], "maxLength": 1}),
        &[r#""a""#],
        &["1", r#""bb""#],
    );
    language(
        json!({"type": ["integer", "null"], "minimum": 3}),
        &["3", "null"],
        &["2", r#""3""#],
    );
    let nullable = Options {
        openapi_nullable: true,
        ..Options::exact()
    };
    language_with(
        json!({"type": "string", "nullable": true}),
        &nullable,
        &[r#""s""#, "null"],
        &["1"],
    );
    language(
        json!({"type": "string", "nullable": true}),
        &[r#""s""#],
        &["null"],
    );
}

#[test]
fn all_of_merges() {
    let schema = json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
            {"properties": {"a": {"maximum": 5}, "b": {"type": "string"}}}
        ]
    });
    language(
        schema,
        &[r#"{"a":3}"#, r#"{"a":5,"b":"x"}"#],
        &[r#"{"a":6}"#, r#"{"b":"x"}"#, r#"{"a":-1}"#],
    );
    let schema = json!({"type": "object", "properties": {"k": {"enum": ["a", "b"]}}, "required": ["k"], "anyOf": [{"properties": {"k": {"const": "a"}}}, {"properties": {"x": {"type": "null"}}, "required": ["x"]}]});
    language(
        schema,
        &[r#"{"k":"a"}"#, r#"{"k":"b","x":null}"#],
        &[r#"{"k":"b"}"#],
    );
}

#[test]
fn one_of_is_exact_only_when_disjoint() {
    let disjoint = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
    assert!(compile(&disjoint, &Options::strict()).is_ok());
    let tagged = json!({"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"type": "integer"}}, "required": ["kind"]}
    ]});
    assert!(compile(&tagged, &Options::strict()).is_ok());
    let err = strict_error(json!({"oneOf": [
        {"type": "string", "pattern": "^a"},
        {"type": "string", "pattern": "b$"}
    ]}));
    assert!(err.contains("oneOf"), "{err}");
}

#[test]
fn tuples_and_items_false() {
    language(
        json!({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false}),
        &["[]", "[1]", r#"[1,"a"]"#],
        &[r#"[1,"a",2]"#, r#"["a"]"#],
    );
    language(
        json!({"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "boolean"}, "minItems": 2}),
        &["[1,true]", "[1,true,false]"],
        &["[1]", "[1,2]"],
    );
    language(json!({"type": "array", "items": false}), &["[]"], &["[1]"]);
}

#[test]
fn strings_by_length_and_boolean_schemas() {
    language(
        json!({"type": "string", "minLength": 2, "maxLength": 3}),
        &[r#""ab""#, r#""a\nb""#],
        &[r#""a""#, r#""abcd""#],
    );
    language(json!(true), &["1", r#"{"a":[]}"#], &[]);
    language(
        json!({"properties": {"a": false}}),
        &["{}"],
        &[r#"{"a":1}"#],
    );
    let err = compile(&json!(false), &Options::exact())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("admits no value"), "{err}");
}

#[test]
fn required_properties_that_are_not_listed() {
    let schema =
        json!({"type": "object", "required": ["z"], "additionalProperties": {"type": "integer"}});
    language(schema, &[r#"{"z":1}"#], &["{}", r#"{"z":"a"}"#]);
    let err =
        strict_error(json!({"type": "object", "required": ["z"], "additionalProperties": false}));
    assert!(err.contains("admits no value"), "{err}");
}

#[test]
fn unenforced_keywords_are_warned_and_refused_in_strict_mode() {
    // (schema, keyword warned about in exact mode, refused in strict mode too)
    for (schema, keyword, refused) in [
        (
            json!({"type": "integer", "multipleOf": 3}),
            "multipleOf",
            true,
        ),
        (
            json!({"type": "array", "uniqueItems": true}),
            "uniqueItems",
            false,
        ),
        (json!({"not": {"const": 1}}), "not", true),
        (
            json!({"if": {"minimum": 1}, "then": {"maximum": 3}}),
            "if",
            false,
        ),
        (
            json!({"type": "object", "minProperties": 2}),
            "minProperties",
            true,
        ),
        (
            json!({"type": "object", "properties": {"a": {}}, "maxProperties": 0, "additionalProperties": true}),
            "maxProperties",
            true,
        ),
        (
            json!({"type": "array", "contains": {"type": "integer"}}),
            "contains",
            false,
        ),
        (
            json!({"type": "string", "format": "email", "maxLength": 20}),
            "maxLength",
            true,
        ),
    ] {
        let c = compiled(&schema, &Options::exact());
        assert!(
            c.warnings.iter().any(|w| w.contains(keyword)),
            "{schema}: {:?}",
            c.warnings
        );
        if refused {
            strict_error(schema);
        } else {
            let c = compiled(&schema, &Options::strict());
            assert!(c.warnings.is_empty(), "{schema}: {:?}", c.warnings);
        }
    }
    let annotated = json!({"type": "string", "title": "t", "description": "d", "examples": ["x"], "$comment": "c", "default": "y", "deprecated": true});
    assert!(compiled(&annotated, &Options::strict()).warnings.is_empty());
}

#[test]
fn compat_mode_warns_about_what_llama_cpp_ignores() {
    let c = compiled(
        &json!({"type": "integer", "multipleOf": 3}),
        &Options::default(),
    );
    assert!(
        c.warnings.iter().any(|w| w.contains("multipleOf")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn not_in_the_forms_a_grammar_can_say() {
    language(
        json!({"not": {"type": "null"}}),
        &["1", r#""a""#, "{}"],
        &["null"],
    );
    language(
        json!({"type": "string", "not": {"enum": ["a", "b"]}}),
        &[r#""c""#, r#""ab""#, r#""""#],
        &[r#""a""#, r#""b""#],
    );
    language(
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "not": {"required": ["b"]}}),
        &["{}", r#"{"a":1}"#],
        &[r#"{"b":1}"#],
    );
    language(
        json!({"not": {"not": {"type": "integer"}}}),
        &["1"],
        &["1.5", r#""1""#],
    );
    language(
        json!({"type": ["number", "string"], "not": {"type": "integer"}}),
        &["1.5", r#""s""#],
        &["1", "1.0"],
    );
    language(
        json!({"type": "boolean", "not": {"const": true}}),
        &["false"],
        &["true"],
    );
    let err = strict_error(json!({"type": "string", "not": {"pattern": "^a"}}));
    assert!(err.contains("not"), "{err}");
}

#[test]
fn one_of_excludes_the_overlap_when_it_can() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
    });
    assert!(compile(&schema, &Options::strict()).is_ok());
    language(
        schema,
        &[r#"{"a":1}"#, r#"{"b":1}"#],
        &[r#"{"a":1,"b":2}"#, "{}"],
    );
    language(
        json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
        &["1.5"],
        &["1"],
    );
    // A schema that says nothing about type admits strings: `properties` does not make
    // it disjoint from `{"type": "string"}`. A non-empty string matches both, so it is
    // out; the empty string matches only the first.
    let schema = json!({"oneOf": [{"properties": {"a": {"minimum": 1}}}, {"type": "string", "minLength": 1}]});
    language(
        schema,
        &[r#""""#, "{}", r#"{"a":2}"#],
        &[r#""x""#, r#"{"a":0}"#],
    );
}

#[test]
fn at_least_one_property() {
    language(
        json!({"type": "object", "minProperties": 1}),
        &[r#"{"a":1}"#, r#"{"a":1,"b":2}"#],
        &["{}"],
    );
}

#[test]
fn large_counts_are_cut_into_blocks() {
    let c = compiled(
        &json!({"type": "string", "maxLength": 32767}),
        &Options::exact(),
    );
    let printed = gbnf::print(&c.grammar).unwrap_or_default();
    assert!(
        printed.len() < 2_000 && !printed.contains("32767"),
        "{printed}"
    );
    let schema =
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 250, "maxItems": 260});
    let c = compiled(
        &schema,
        &Options {
            limits: super::Limits {
                max_repeat: 100,
                ..Default::default()
            },
            ..Options::exact()
        },
    );
    let list = |n: usize| format!("[{}]", vec!["1"; n].join(","));
    let good = [list(250), list(255), list(260)];
    let bad = [list(249), list(261), list(100)];
    for text in &good {
        assert!(admits(&c, text), "should admit {} items", text.len() / 2);
    }
    for text in &bad {
        assert!(!admits(&c, text), "should refuse {} items", text.len() / 2);
    }
}

#[test]
fn pattern_properties_that_match_listed_names() {
    let schema = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {".*": {"type": ["integer", "string"]}}
    });
    assert!(compile(&schema, &Options::strict()).is_ok());
    language(
        schema,
        &[r#"{"id":1,"x":"s"}"#, r#"{"idx":2}"#],
        &[r#"{"id":"s"}"#, r#"{"x":null}"#],
    );
    let schema = json!({
        "type": "object",
        "properties": {"ab": {"maxLength": 2}},
        "patternProperties": {"^[a-z]+$": {"type": "string"}},
        "additionalProperties": false
    });
    language(
        schema,
        &[r#"{"ab":"xy","x":"s"}"#, r#"{"a":"s"}"#, r#"{"abc":"s"}"#],
        &[
            r#"{"ab":"xyz"}"#,
            r#"{"ab":1}"#,
            r#"{"X":"s"}"#,
            r#"{"x":1}"#,
        ],
    );
}

#[test]
fn patterns_with_lengths() {
    language(
        json!({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}),
        &[r#""abc""#, r#""a""#],
        &[r#""abcd""#, r#""""#, r#""A""#],
    );
    let c = compiled(
        &json!({"type": "string", "pattern": "^[0-9]{5}$", "minLength": 5, "maxLength": 5}),
        &Options::strict(),
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let schema = json!({"type": "string", "pattern": "^(a|bb)+$", "maxLength": 3});
    let c = compiled(&schema, &Options::exact());
    assert!(
        c.warnings.iter().any(|w| w.contains("maxLength")),
        "{:?}",
        c.warnings
    );
    language_with(
        schema,
        &Options::strict(),
        &[r#""a""#, r#""bb""#],
        &[r#""abb""#, r#""aaaa""#],
    );
}

#[test]
fn unknown_formats_constrain_nothing() {
    let c = compiled(
        &json!({"type": "string", "format": "int32"}),
        &Options::strict(),
    );
    assert!(c.warnings.is_empty());
    strict_error(json!({"type": "string", "format": "uri-reference"}));
}

#[test]
fn dependencies_and_conditionals() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "dependencies": {"a": ["b"]},
        "dependentSchemas": {"c": {"required": ["a"]}}
    });
    assert!(compile(&schema, &Options::strict()).is_ok());
    language(
        schema,
        &[
            "{}",
            r#"{"b":1}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"b":2,"c":3}"#,
        ],
        &[r#"{"a":1}"#, r#"{"c":3}"#],
    );
    let schema = json!({
        "type": "object",
        "properties": {"kind": {"enum": ["n", "s"]}, "v": {}},
        "required": ["kind", "v"],
        "if": {"properties": {"kind": {"const": "n"}}},
        "then": {"properties": {"v": {"type": "number"}}},
        "else": {"properties": {"v": {"type": "string"}}}
    });
    let c = compiled(&schema, &Options::strict());
    assert!(c.warnings.is_empty());
    language_with(
        schema,
        &Options::strict(),
        &[r#"{"kind":"n","v":1}"#],
        &[r#"{"kind":"n","v":"x"}"#, r#"{"kind":"s","v":1}"#],
    );
}

#[test]
fn strict_mode_narrows_what_it_cannot_count() {
    let schema = json!({"type": "array", "items": {"type": "integer"}, "uniqueItems": true});
    language_with(schema, &Options::strict(), &["[]", "[1]"], &["[1,2]"]);
    let schema = json!({"type": "array", "contains": {"type": "integer", "minimum": 5}});
    language_with(
        schema,
        &Options::strict(),
        &["[5]", "[6,7]"],
        &["[]", "[1]", "[5,1]"],
    );
    let schema = json!({"type": "object", "properties": {"a": {}}, "propertyNames": {"maxLength": 3}, "additionalProperties": true});
    language_with(
        schema,
        &Options::strict(),
        &[r#"{"a":1}"#],
        &[r#"{"abcd":1}"#],
    );
    let schema = json!({"type": "string", "pattern": "[0-9a-f]+", "minLength": 4, "maxLength": 4});
    language_with(
        schema,
        &Options::strict(),
        &[r#""00ff""#],
        &[r#""0ff""#, r#""00ff0""#],
    );
}

#[test]
fn references_inside_an_id_scope_point_into_it() {
    let schema = json!({
        "type": "object",
        "$defs": {"x": {"type": "integer"}},
        "properties": {
            "a": {
                "$id": "https://example.com/inner.json",
                "type": "object",
                "$defs": {"x": {"type": "string"}},
                "properties": {"v": {"$ref": "#/$defs/x"}},
                "required": ["v"]
            },
            "b": {"$ref": "https://example.com/inner.json#/$defs/x"},
            "c": {"$ref": "#/$defs/x"}
        },
        "required": ["a", "b", "c"]
    });
    language(
        schema,
        &[r#"{"a":{"v":"s"},"b":"t","c":1}"#],
        &[
            r#"{"a":{"v":1},"b":"t","c":1}"#,
            r#"{"a":{"v":"s"},"b":1,"c":1}"#,
            r#"{"a":{"v":"s"},"b":"t","c":"u"}"#,
        ],
    );
}

#[test]
fn unicode_classes_are_narrow_where_they_admit_and_wide_where_they_exclude() {
    language(
        json!({"type": "string", "pattern": "^\\D+$"}),
        &[r#""ab""#],
        &[r#""a5""#, "\"a\u{663}\""],
    );
    language(
        json!({"type": "string", "pattern": "^[^\\s]+$"}),
        &[r#""ab""#],
        &[r#""a b""#, "\"a\u{85}\""],
    );
    language(
        json!({"type": "string", "pattern": "^\\d+$"}),
        &[r#""123""#],
        &["\"\u{663}\""],
    );
    strict_error(json!({"type": "string", "pattern": "^\\p{L}+$"}));
}

#[test]
fn negations_written_as_schemas() {
    language(
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "not": {"required": ["a", "b"]}}),
        &["{}", r#"{"a":1}"#, r#"{"b":1}"#],
        &[r#"{"a":1,"b":2}"#],
    );
    language(
        json!({"type": "integer", "not": {"minimum": 3}}),
        &["2", "-5"],
        &["3", "10"],
    );
    language(
        json!({"type": "string", "not": {"maxLength": 2}}),
        &[r#""abc""#],
        &[r#""ab""#],
    );
    let one_of = json!({
        "type": "object",
        "properties": {"r": {"type": "number"}, "l": {"type": "number"}, "w": {"type": "number"}},
        "oneOf": [{"required": ["r"]}, {"required": ["l", "w"]}]
    });
    assert!(compile(&one_of, &Options::strict()).is_ok());
    language(
        one_of,
        &[r#"{"r":1}"#, r#"{"l":1,"w":2}"#, r#"{"r":1,"l":2}"#],
        &[r#"{"r":1,"l":1,"w":2}"#, "{}"],
    );
    let discriminated = json!({"oneOf": [
        {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}},
        {"type": "object", "properties": {"kind": {"const": "c"}}}
    ]});
    language(
        discriminated,
        &[r#"{"kind":"a"}"#, r#"{"kind":"c"}"#],
        &["{}", r#"{"x":1}"#],
    );
}

#[test]
fn compat_mode_reads_false_properties_and_items() {
    language_with(
        json!({"type": "object", "properties": {"a": false, "b": {"type": "integer"}}, "additionalProperties": true}),
        &Options::default(),
        &["{}", r#"{"b":1}"#, r#"{"c":1}"#],
        &[r#"{"a":1}"#],
    );
    language_with(
        json!({"type": "array", "items": false}),
        &Options::default(),
        &["[]"],
        &["[1]"],
    );
}

#[test]
fn lengths_a_format_already_has() {
    let c = compiled(
        &json!({"type": "string", "format": "uri", "minLength": 1}),
        &Options::strict(),
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let c = compiled(
        &json!({"type": "string", "format": "uuid", "maxLength": 36}),
        &Options::strict(),
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    strict_error(json!({"type": "string", "format": "email", "minLength": 8}));
}

#[test]
fn strict_mode_bounds_repetitions_to_fit_lengths() {
    let schema =
        json!({"type": "string", "pattern": "^[a-z]+@[a-z]+$", "minLength": 5, "maxLength": 9});
    let c = compiled(&schema, &Options::strict());
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    language_with(
        schema,
        &Options::strict(),
        &[r#""ab@cd""#, r#""abcd@efgh""#],
        &[r#""abc@""#, r#""abcde@fghij""#, r#""ab@c""#],
    );
    let schema = json!({"type": "string", "pattern": "^IGF[a-zA-Z0-9-_]+$", "maxLength": 6});
    language_with(
        schema,
        &Options::strict(),
        &[r#""IGFa""#, r#""IGFabc""#],
        &[r#""IGFabcd""#, r#""IGF""#],
    );
    strict_error(json!({"type": "string", "pattern": "^abc$", "minLength": 4}));
}

#[test]
fn lengths_count_code_points() {
    // One character written as a surrogate pair of escapes is not two.
    let schema = json!({"type": "string", "minLength": 2});
    language(
        schema.clone(),
        &[r#""ab""#, r#""\u00e9x""#],
        &[r#""\ud83d\ude00""#, r#""a""#],
    );
    language(
        json!({"type": "string", "maxLength": 1}),
        &["\"\u{1F600}\""],
        &[r#""ab""#],
    );
}
