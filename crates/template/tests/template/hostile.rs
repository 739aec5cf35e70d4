//! Templates written to hurt: each must end in a clear error, in bounded time and
//! memory, and none may reach outside its inputs.
//!
//! The memory and nesting tests run in a child process (see `bounded.rs`) with the
//! default limits, and print what stopped them, how fast, and the child's peak RSS.

use crate::bounded;
use toolbridge_template::{JinjaTemplate, Limits, RenderOptions, TemplateErrorKind};

fn render(source: &str) -> Result<String, toolbridge_template::TemplateError> {
    let context = serde_json::json!({"messages": [{"role": "user", "content": "hi"}]});
    JinjaTemplate::new(source)?.render(&context)
}

fn assert_limit_error(source: &str) {
    match render(source) {
        Err(err) => assert!(
            matches!(
                *err.kind(),
                TemplateErrorKind::Limit | TemplateErrorKind::Render
            ),
            "{source}: unexpected error kind {err:?}"
        ),
        Ok(output) => panic!(
            "{source}: rendered {} bytes instead of failing",
            output.len()
        ),
    }
}

#[test]
fn nested_loops_that_would_run_for_hours_run_out_of_fuel() {
    let err =
        render("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}")
            .unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Limit, "{err}");
}

#[test]
fn exponential_macro_output_is_stopped() {
    assert_limit_error(
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}x{% endmacro %}{{ f(64) }}",
    );
}

#[test]
fn unbounded_recursion_is_stopped() {
    let err = render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").unwrap_err();
    assert!(err.to_string().contains("recursion"), "{err}");
}

#[test]
fn recursive_loops_are_stopped_at_the_recursion_limit() {
    assert_limit_error(
        "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}\
         {% for item in ns.x recursive %}{{ loop(item) }}{% endfor %}",
    );
}

#[test]
fn huge_ranges_are_refused() {
    assert_limit_error("{% for i in range(10**12) %}{% endfor %}");
    assert_limit_error("{{ range(10**12)|length }}");
}

#[test]
fn huge_string_repetition_is_refused() {
    assert_limit_error("{{ 'x' * 10**12 }}");
}

#[test]
fn output_past_the_cap_is_an_error() {
    let options = RenderOptions {
        limits: Limits {
            max_output_bytes: 1 << 20,
            ..Limits::default()
        },
        ..RenderOptions::default()
    };
    let template = JinjaTemplate::with_options(
        "{% for i in range(100000) %}{{ 'y' * 100 }}{% endfor %}",
        options,
    )
    .unwrap();
    let err = template.render(&serde_json::json!({})).unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Limit, "{err}");
    assert!(err.to_string().contains("1048576"), "{err}");
}

#[test]
fn values_nested_to_just_under_the_bound_print_and_serialize() {
    let nest = "{% set ns = namespace(x=[]) %}{% for i in range(254) %}{% set ns.x = [ns.x] %}{% endfor %}";
    assert!(render(&format!("{nest}{{{{ ns.x|tojson }}}}")).is_ok());
    let printed = render(&format!("{nest}{{{{ ns.x }}}}")).unwrap();
    assert!(
        printed.starts_with("[[[") && printed.ends_with("]]]"),
        "{printed}"
    );
}

/// Renders `source` in a bounded child; it must fail with a limit error whose message
/// holds `expected` ([`bounded::assert_limited`]).
fn assert_bounded(test: &str, source: &str, expected: &str) {
    assert_bounded_with(test, source, expected, Limits::default());
}

/// [`assert_bounded`] under `limits`.
fn assert_bounded_with(test: &str, source: &str, expected: &str, limits: Limits) {
    bounded::assert_limited(test, expected, || {
        let context = serde_json::json!({"messages": [{"role": "user", "content": "hi"}]});
        let options = RenderOptions {
            limits,
            ..RenderOptions::default()
        };
        JinjaTemplate::with_options(source, options).and_then(|t| t.render(&context))
    });
}

const BUILT: &str = "bytes of values";
const LARGER: &str = "larger than the bytes left";
const DEEP: &str = "nested values more than 256 deep";

bounded_tests! {
    concat_doubling_in_a_loop:
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}"
        => BUILT;
    concat_doubling_unrolled:
        format!("{{% set s = 'ab' %}}{}{{{{ s|length }}}}", "{% set s = s ~ s %}".repeat(40))
        => BUILT;
    plus_doubling_strings:
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}"
        => BUILT;
    list_repetition:
        "{{ ([1] * 10**8)|length }}" => BUILT;
    capture_doubling:
        format!("{{% set s = 'ab' %}}{}{{{{ s|length }}}}", "{% set s %}{{ s }}{{ s }}{% endset %}".repeat(40))
        => BUILT;
    macro_output_doubling:
        "{% macro twice(x) %}{{ x }}{{ x }}{% endmacro %}{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = twice(ns.s) %}{% endfor %}{{ ns.s|length }}"
        => BUILT;
    replace_filter_squares:
        "{% set s = 'a' * 100000 %}{{ (s|replace('a', s))|length }}" => BUILT;
    replace_method_squares:
        "{% set s = 'a' * 100000 %}{{ s.replace('a', s)|length }}" => BUILT;
    join_filter_repeats:
        "{% set s = 'x' * 1000000 %}{{ ([s] * 100000)|join|length }}" => BUILT;
    join_method_repeats:
        "{% set s = 'x' * 1000000 %}{{ ''.join([s] * 100000)|length }}" => LARGER;
    printing_a_shared_list:
        "{% set ns = namespace(l=['x' * 1000000]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l }}"
        => BUILT;
    printing_a_shared_tree:
        "{% set ns = namespace(l=['x' * 1000000]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}"
        => "a value of more than";
    tojson_with_a_long_indent:
        "{{ (range(1000)|list)|tojson(indent='x' * 1000000) }}" => LARGER;
    format_width:
        "{{ '%999999999999s'|format('x') }}" => "format width";
    batch_fill:
        "{{ [1]|batch(10**12, 'x')|list|length }}" => BUILT;
    slice_count:
        "{{ [1]|slice(10**12)|list|length }}" => BUILT;
    deep_list_in_a_loop:
        "{% set ns = namespace(x=[]) %}{% for i in range(30000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}"
        => DEEP;
    deep_dict_in_a_loop:
        "{% set ns = namespace(x={}) %}{% for i in range(30000) %}{% set ns.x = {'a': ns.x} %}{% endfor %}{{ ns.x|length }}"
        => DEEP;
    deep_dict_by_function:
        "{% set ns = namespace(x={}) %}{% for i in range(30000) %}{% set ns.x = dict(a=ns.x) %}{% endfor %}{{ ns.x|length }}"
        => DEEP;
    deep_nesting_by_a_macro:
        "{% macro wrap(ns) %}{% set ns.x = [ns.x] %}{% endmacro %}{% set ns = namespace(x=[]) %}{% for i in range(30000) %}{{ wrap(ns) }}{% endfor %}"
        => DEEP;
    namespaces_linked_back_to_front:
        format!(
            "{{% set l = [{}] %}}{{% for i in range(299) %}}{{% set a = l[i + 1] %}}{{% set a.p = l[i] %}}{{% endfor %}}",
            vec!["namespace(p=none)"; 300].join(", ")
        )
        => "a namespace cannot be put in";
}

/// Lists join lazily, so `l + l` is charged for what `l` prints to, found by walking
/// it: up to the default budget that is some 10 million items walked, 45 s in a debug
/// build, so this test stops at 16 MiB.
#[test]
fn plus_doubling_lists() {
    let limits = Limits {
        max_built_bytes: 16 << 20,
        ..Limits::default()
    };
    assert_bounded_with(
        test_path!(plus_doubling_lists),
        "{% set ns = namespace(l=['ab']) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
        "more than 16777216 bytes",
        limits,
    );
}

#[test]
fn deep_contexts_are_refused_before_they_are_walked() {
    let deep_text = "[".repeat(20_000) + &"]".repeat(20_000);
    let err = serde_json::from_str::<serde_json::Value>(&deep_text).unwrap_err();
    assert!(err.to_string().contains("recursion limit"), "{err}");
    // As deep as a test thread can build and drop a `serde_json::Value` safely.
    let mut deep = serde_json::json!("leaf");
    for _ in 0..150 {
        deep = serde_json::json!({"type": "object", "properties": {"x": deep}});
    }
    let context = serde_json::json!({"tools": [deep]});
    let template = JinjaTemplate::new("{{ tools|length }}").unwrap();
    let err = template.render(&context).unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Limit, "{err}");
    assert!(
        err.to_string().contains("nested more than 256 deep"),
        "{err}"
    );
}

#[test]
fn templates_cannot_reach_files_or_the_environment() {
    for source in [
        "{% include '/etc/passwd' %}",
        "{% import '/etc/passwd' as p %}",
        "{% extends '/etc/passwd' %}",
        "{% from 'x.jinja' import y %}",
    ] {
        assert!(render(source).is_err(), "{source} rendered");
    }
    for source in [
        "{{ ''.__class__ }}",
        "{{ messages.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ env }}{{ environ }}{{ os }}",
    ] {
        let output = render(source).unwrap_or_default();
        assert!(
            !output.contains("class") && !output.contains("PATH"),
            "{source}: {output}"
        );
    }
}

#[test]
fn mutation_is_refused_as_in_the_immutable_sandbox() {
    assert!(render("{% set l = [] %}{{ l.append(1) }}").is_err());
    assert!(render("{% set d = {} %}{{ d.update({'a': 1}) }}").is_err());
}

#[test]
fn syntax_errors_name_the_line() {
    let err = JinjaTemplate::new("fine\n{% if %}\n").err().unwrap();
    assert_eq!(*err.kind(), TemplateErrorKind::Syntax);
    assert!(err.detail().contains("--> template line 2\n"), "{err}");
}
