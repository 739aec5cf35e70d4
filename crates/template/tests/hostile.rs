//! Templates written to hurt: each must end in a clear error, in bounded time and
//! memory, and none may reach outside its inputs.

use toolbridge_template::{JinjaTemplate, Limits, RenderOptions, TemplateErrorKind};

fn render(source: &str) -> Result<String, toolbridge_template::TemplateError> {
    let context = serde_json::json!({"messages": [{"role": "user", "content": "hi"}]});
    JinjaTemplate::new(source)?.render(&context)
}

fn assert_limit_error(source: &str) {
    match render(source) {
        Err(err) => assert!(
            matches!(
                err.kind,
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
    assert_eq!(err.kind, TemplateErrorKind::Limit, "{err}");
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
    assert_eq!(err.kind, TemplateErrorKind::Limit, "{err}");
    assert!(err.to_string().contains("1048576"), "{err}");
}

#[test]
fn self_nesting_values_print_and_serialize_without_overflowing_the_stack() {
    let nest = "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}";
    assert!(render(&format!("{nest}{{{{ ns.x|tojson }}}}")).is_err());
    let printed = render(&format!("{nest}{{{{ ns.x }}}}")).unwrap();
    assert!(printed.contains("..."));
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
    assert_eq!(err.kind, TemplateErrorKind::Syntax);
    assert_eq!(err.line, Some(2));
}
