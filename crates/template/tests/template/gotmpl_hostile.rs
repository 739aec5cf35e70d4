//! Go templates written to hurt: each must end in a clear error, in bounded time and
//! memory, and no input may panic the renderer. The memory tests run in a child
//! process (see `bounded.rs`) and print what stopped them, how fast, and the
//! child's peak RSS.

use crate::bounded;
use proptest::prelude::*;
use std::time::{Duration, Instant};
use toolbridge_template::gotmpl::{GoRenderOptions, GoTemplate, OllamaRequest};
use toolbridge_template::{Limits, TemplateError, TemplateErrorKind};

fn request() -> OllamaRequest {
    OllamaRequest::from_json(&serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    }))
    .unwrap()
}

fn render_with(source: &str, limits: Limits) -> Result<String, TemplateError> {
    let options = GoRenderOptions {
        limits,
        ..GoRenderOptions::default()
    };
    GoTemplate::with_options(source, options)?.render(&request())
}

fn render(source: &str) -> Result<String, TemplateError> {
    render_with(source, GoRenderOptions::default().limits)
}

/// Fails with a limit error, and soon.
fn assert_stopped(source: &str) -> TemplateError {
    let started = Instant::now();
    let err = match render(source) {
        Err(err) => err,
        Ok(output) => panic!(
            "{source}: rendered {} bytes instead of failing",
            output.len()
        ),
    };
    assert_eq!(*err.kind(), TemplateErrorKind::Limit, "{source}: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{source}: too slow"
    );
    err
}

#[test]
fn nested_loops_that_would_run_for_hours_are_stopped() {
    assert_stopped("{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}{{ .Messages }}");
}

#[test]
fn exponential_template_calls_run_out_of_fuel() {
    let err = assert_stopped(
        r#"{{ define "f" }}{{ if . }}{{ template "f" (slice . 1) }}{{ template "f" (slice . 1) }}{{ end }}{{ end }}{{ template "f" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }}{{ .Messages }}"#,
    );
    assert!(err.to_string().contains("fuel"), "{err}");
}

#[test]
fn unbounded_recursion_is_stopped() {
    assert_stopped(
        r#"{{ define "f" }}{{ template "f" . }}{{ end }}{{ template "f" . }}{{ .Messages }}"#,
    );
}

#[test]
fn doubling_a_string_is_stopped_before_memory_runs_out() {
    let err = assert_stopped(
        r#"{{ $x := "ab" }}{{ range 64 }}{{ $x = printf "%s%s" $x $x }}{{ end }}{{ .Messages }}"#,
    );
    assert!(err.to_string().contains("the template built"), "{err}");
}

/// Renders `source` in a bounded child; it must fail with a limit error whose message
/// holds `expected` ([`bounded::assert_limited`]).
fn assert_bounded(test: &str, source: &str, expected: &str) {
    bounded::assert_limited(test, expected, || render(source));
}

/// A doubling string reaches the cap on one string or the budget on all, whichever
/// first.
const ONE: &str = "the template built";
const ALL: &str = "bytes of strings";

bounded_tests! {
    printf_doubling_in_a_range:
        r#"{{ $x := "ab" }}{{ range 64 }}{{ $x = printf "%s%s" $x $x }}{{ end }}{{ .Messages }}"# => ONE;
    print_doubling_in_a_range:
        r#"{{ $x := "ab" }}{{ range 64 }}{{ $x = print $x $x }}{{ end }}{{ .Messages }}"# => ONE;
    js_escaping_in_a_range:
        r#"{{ $x := "\\" }}{{ range 64 }}{{ $x = js $x }}{{ end }}{{ .Messages }}"# => ONE;
    printf_with_many_arguments:
        format!(
            r#"{{{{ $x := "ab" }}}}{{{{ range 24 }}}}{{{{ $x = printf "%s%s" $x $x }}}}{{{{ end }}}}{{{{ $y := printf "{}" {} }}}}{{{{ .Messages }}}}"#,
            "%s".repeat(200),
            vec!["$x"; 200].join(" ")
        )
        => ALL;
    many_strings_each_under_the_cap:
        r#"{{ $x := "ab" }}{{ range 22 }}{{ $x = printf "%s%s" $x $x }}{{ end }}{{ range 100000 }}{{ $y := printf "%s" $x }}{{ end }}{{ .Messages }}"#
        => ALL;
}

#[test]
fn requests_nested_past_the_bound_are_refused_before_they_are_read() {
    let deep_text = "[".repeat(20_000) + &"]".repeat(20_000);
    assert!(serde_json::from_str::<serde_json::Value>(&deep_text).is_err());
    // As deep as a test thread can build and drop a `serde_json::Value` safely.
    let mut deep = serde_json::json!({"type": "string"});
    for _ in 0..150 {
        deep = serde_json::json!({"type": "object", "properties": {"x": deep}});
    }
    let request = serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": deep}}]
    });
    let err = OllamaRequest::from_json(&request).unwrap_err();
    assert!(err.detail().contains("more than 256 deep"), "{err}");
}

#[test]
fn output_past_the_cap_is_an_error() {
    let limits = Limits {
        max_output_bytes: 1000,
        ..Limits::default()
    };
    let err =
        render_with("{{ range 1000 }}xxxxxxxxxx{{ end }}{{ .Messages }}", limits).unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Limit);
    assert_eq!(err.to_string(), "the template wrote more than 1000 bytes");
}

#[test]
fn deep_nesting_is_a_syntax_error_not_a_stack_overflow() {
    let source = "{{ if . }}".repeat(100_000) + &"{{ end }}".repeat(100_000);
    assert_eq!(
        *render(&source).unwrap_err().kind(),
        TemplateErrorKind::Syntax
    );
    let source = "{{ ".to_string() + &"(".repeat(100_000) + "1" + &")".repeat(100_000) + " }}";
    assert!(render(&source).is_err());
}

/// Pieces of Go template syntax, so that random templates reach the engine's corners.
fn piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "{{",
        "}}",
        "{{-",
        "-}}",
        " ",
        "\n",
        "x",
        ".",
        ".Messages",
        ".Tools",
        ".Content",
        "$",
        "$x",
        ":=",
        "=",
        "|",
        "(",
        ")",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-1",
        "1e9",
        "0x10",
        "nil",
        "true",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        "\"f\"",
        "printf",
        "\"%s%s\"",
        "print",
        "len",
        "index",
        "slice",
        "eq",
        "and",
        "or",
        "not",
        "json",
        "call",
        "toTypeScriptType",
        "currentDate",
        ".Function",
        "/*",
        "*/",
    ])
    .prop_map(str::to_owned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_templates_end_in_output_or_an_error(pieces in prop::collection::vec(piece(), 0..40)) {
        let source = pieces.concat();
        let limits = Limits { fuel: 100_000, max_output_bytes: 100_000, ..Limits::default() };
        let _ = render_with(&source, limits);
    }

    #[test]
    fn arbitrary_text_never_panics(source in "\\PC{0,200}") {
        let _ = render(&source);
    }
}
