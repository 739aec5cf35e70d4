//! Ollama's rendering rules, one at a time: the per-turn path, Go's printing of
//! Ollama's types, its functions, missing keys, think and fill-in-the-middle, errors.

use serde_json::json;
use toolbridge_template::gotmpl::{GoRenderOptions, GoTemplate, OllamaRequest};
use toolbridge_template::{Clock, TemplateErrorKind};

fn render_at(template: &str, request: serde_json::Value, now: &str) -> String {
    let options = GoRenderOptions {
        clock: Clock::fixed_from_str(now).unwrap(),
        ..GoRenderOptions::default()
    };
    let request = OllamaRequest::from_json(&request).unwrap();
    GoTemplate::with_options(template, options)
        .and_then(|t| t.render(&request))
        .unwrap_or_else(|err| panic!("{err}"))
}

fn render(template: &str, request: serde_json::Value) -> String {
    render_at(template, request, "2024-07-26T10:30:00")
}

fn chat() -> serde_json::Value {
    json!({"messages": [
        {"role": "user", "content": "Hello friend!"},
        {"role": "assistant", "content": "Hello human!"},
        {"role": "user", "content": "What is your name?"}
    ]})
}

#[test]
fn templates_without_messages_render_per_turn_with_the_last_cut_after_response() {
    // Ollama's TestExecuteWithMessages: with or without `{{ .Response }}`, same prompt.
    let expected = "[INST] Hello friend![/INST] Hello human![INST] What is your name?[/INST] ";
    let no_response =
        r#"[INST] {{ if .System }}{{ .System }}{{ "\n\n" }}{{ end }}{{ .Prompt }}[/INST] "#;
    let response = r#"[INST] {{ if .System }}{{ .System }}{{ "\n\n" }}{{ end }}{{ .Prompt }}[/INST] {{ .Response }}"#;
    assert_eq!(render(no_response, chat()), expected);
    assert_eq!(render(response, chat()), expected);
}

#[test]
fn the_last_turn_drops_what_follows_the_response() {
    let template = "<{{ .Prompt }}|{{ .Response }}{{ if .Response }}</s>{{ end }}>";
    assert_eq!(
        render(template, chat()),
        "<Hello friend!|Hello human!</s>><What is your name?|"
    );
}

#[test]
fn same_role_turns_merge_and_system_turns_collect() {
    let template = "{{ .System }}|{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}";
    let request = json!({"messages": [
        {"role": "system", "content": "s1"},
        {"role": "system", "content": "s2"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"}
    ]});
    assert_eq!(
        render(template, request),
        "s1\n\ns2|[system:s1\n\ns2][user:a\n\nb]"
    );
}

fn tool_request() -> serde_json::Value {
    json!({
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {
                "name": "f", "arguments": {"b": 32222000403u64, "a": "x<y"}}}]}
        ],
        "tools": [{"type": "function", "function": {
            "name": "f", "description": "d",
            "parameters": {"type": "object", "required": ["a"], "properties": {
                "a": {"type": ["string", "null"], "description": "an a"},
                "b": {"type": "integer"}}}}}]
    })
}

#[test]
fn ollama_types_print_as_go_prints_them() {
    let template = "{{ range .Tools }}{{ . }}\n{{ .Function }}\n{{ .Function.Parameters }}\n\
        {{ .Function.Parameters.Type }}\n\
        {{ range $name, $p := .Function.Parameters.Properties }}{{ $name }}={{ $p.Type }};{{ end }}\n\
        {{ end }}{{ .Tools }}\n\
        {{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }} {{ .Function.Arguments.b }} \
        {{ print .Function.Arguments }}|{{ printf \"%v %.1f %s\" .Function.Arguments.b .Function.Arguments.b .Function.Arguments }}\
        {{ end }}{{ end }}";
    let function = r#"{"name":"f","description":"d","parameters":{"type":"object","required":["a"],"properties":{"a":{"type":["string","null"],"description":"an a"},"b":{"type":"integer"}}}}"#;
    let tool = format!(r#"{{"type":"function","function":{function}}}"#);
    let parameters = r#"{"type":"object","required":["a"],"properties":{"a":{"type":["string","null"],"description":"an a"},"b":{"type":"integer"}}}"#;
    assert_eq!(
        render(template, tool_request()),
        format!(
            "{tool}\n{function}\n{parameters}\nobject\na=[string null];b=integer;\n[{tool}]\n\
             {{\"a\":\"x\\u003cy\",\"b\":32222000403}} 3.2222000403e+10 map[a:x<y b:3.2222000403e+10]|\
             3.2222000403e+10 32222000403.0 map[a:x<y b:3.2222000403e+10]"
        )
    );
}

#[test]
fn ollama_functions() {
    let template = "{{ json .Tools }}|{{ json \"<&>\" }}|{{ currentDate }}|{{ yesterdayDate }}|\
        {{ range .Tools }}{{ range $n, $p := .Function.Parameters.Properties }}{{ toTypeScriptType $p }};{{ end }}{{ end }}\
        {{ toTypeScriptType 1 }}{{ range .Messages }}{{ end }}";
    let output = render_at(template, tool_request(), "2024-03-01T00:10:00");
    let (tools, rest) = output.split_once('|').unwrap();
    assert!(tools.starts_with(r#"[{"type":"function","function":{"name":"f""#));
    assert_eq!(
        rest,
        r#""\u003c\u0026\u003e"|2024-03-01|2024-02-29|string | null;number;any"#
    );
}

#[test]
fn missing_keys_print_no_value_and_are_false() {
    let template = "{{ .Nope }}|{{ if .Prompt }}p{{ else }}no prompt{{ end }}|{{ .Messages }}";
    let output = render(template, json!({"messages": []}));
    assert_eq!(output, "<no value>|no prompt|[]");
}

#[test]
fn think_fields_follow_the_request() {
    let template = "{{ .Think }} {{ .ThinkLevel }} {{ .IsThinkSet }}{{ range .Messages }}{{ end }}";
    assert_eq!(render(template, json!({"messages": []})), "false  false");
    assert_eq!(render(template, json!({"think": true})), "true medium true");
    assert_eq!(render(template, json!({"think": "high"})), "true high true");
}

#[test]
fn prompt_and_suffix_render_fill_in_the_middle() {
    let template = "{{ if .Suffix }}<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>{{ else }}{{ .Prompt }}{{ end }}";
    let request = json!({"prompt": "def f():", "suffix": "return 1"});
    assert_eq!(
        render(template, request),
        "<PRE> def f(): <SUF>return 1 <MID>"
    );
    assert_eq!(render(template, json!({"prompt": "hi"})), "hi");
}

#[test]
fn errors_are_readable_and_point_at_the_line() {
    let err = GoTemplate::new("ok\n{{ .Messages }}\n{{ frobnicate . }}").unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Syntax);
    assert!(err.detail().contains("--> template line 3\n"), "{err}");
    assert!(
        err.to_string()
            .contains("function \"frobnicate\" not defined"),
        "{err}"
    );
    let err = GoTemplate::new("a\n{{ if .X }}").unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Syntax);
    let err = GoTemplate::new("{{ range .Messages }}{{ index .Content 99 }}{{ end }}")
        .unwrap()
        .render(&OllamaRequest::from_json(&chat()).unwrap())
        .unwrap_err();
    assert_eq!(*err.kind(), TemplateErrorKind::Render);
}

#[test]
fn a_template_is_shared_across_threads_and_renders() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let template = std::sync::Arc::new(
        GoTemplate::new("{{ range .Messages }}{{ .Content }}{{ end }}").unwrap(),
    );
    shareable(&*template);
    let request = OllamaRequest::from_json(&chat()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (template, request) = (template.clone(), request.clone());
            std::thread::spawn(move || template.render(&request).unwrap())
        })
        .collect();
    for thread in threads {
        assert_eq!(
            thread.join().unwrap(),
            "Hello friend!Hello human!What is your name?"
        );
    }
}
