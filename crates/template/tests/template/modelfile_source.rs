//! Ollama models as template sources: a Modelfile's template, default system prompt,
//! stop strings and example messages, or a `.gotmpl` file with its parameters.

use crate::common::{self, write};

use std::path::Path;
use toolbridge_template::gotmpl::{GoTemplate, Message, OllamaRequest};
use toolbridge_template::source::{is_ollama_path, OllamaSource};
use toolbridge_template::TemplateErrorKind;

const MODELFILE: &str = r#"FROM ./firefunction-v2.gguf
TEMPLATE """{{- if .System }}<|start_header_id|>system<|end_header_id|>

{{ .System }}<|eot_id|>
{{- end }}
{{- range .Messages }}{{- if ne .Role "system" }}<|start_header_id|>{{ .Role }}<|end_header_id|>

{{ .Content }}<|eot_id|>{{ end }}{{ end }}<|start_header_id|>assistant<|end_header_id|>

"""
SYSTEM You are a careful assistant.
PARAMETER stop <|eot_id|>
PARAMETER stop "<|start_header_id|>"
PARAMETER temperature 0.2
MESSAGE user Hi?
MESSAGE assistant Hello!
"#;

#[test]
fn a_modelfile_gives_template_system_stops_and_messages() {
    let dir = common::temp_dir("modelfile_full");
    let source = OllamaSource::from_path(write(&dir, "Modelfile", MODELFILE)).unwrap();
    assert!(source.template.starts_with("{{- if .System }}"));
    assert_eq!(
        source.system.as_deref(),
        Some("You are a careful assistant.")
    );
    assert_eq!(source.stop, ["<|eot_id|>", "<|start_header_id|>"]);
    assert_eq!(source.from, Some(dir.join("./firefunction-v2.gguf")));
    assert_eq!(
        source.parameters,
        [("temperature".to_string(), "0.2".to_string())]
    );
    assert_eq!(
        source.messages,
        [
            Message::new("user", "Hi?"),
            Message::new("assistant", "Hello!")
        ]
    );
}

#[test]
fn a_modelfile_model_renders_with_its_defaults_as_ollama_adds_them() {
    let dir = common::temp_dir("modelfile_render");
    let source = OllamaSource::from_path(write(&dir, "llama.modelfile", MODELFILE)).unwrap();
    let request = OllamaRequest::from_json(&serde_json::json!({
        "messages": [{"role": "user", "content": "Bye?"}]
    }))
    .unwrap()
    .with_model_defaults(source.system.as_deref(), &source.messages);
    let prompt = GoTemplate::new(&source.template)
        .unwrap()
        .render(&request)
        .unwrap();
    assert_eq!(
        prompt,
        "<|start_header_id|>system<|end_header_id|>\n\nYou are a careful assistant.<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nHi?<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nBye?<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n"
    );
}

#[test]
fn a_gotmpl_file_takes_its_stops_from_the_json_beside_it() {
    let path = common::corpus_dir().join("gotmpl/builtin/chatml.gotmpl");
    let source = OllamaSource::from_path(&path).unwrap();
    assert_eq!(
        source.template,
        common::read_corpus_file("gotmpl/builtin/chatml.gotmpl")
    );
    assert_eq!(source.stop, ["<|im_start|>", "<|im_end|>"]);
    assert_eq!(source.system, None);
}

#[test]
fn ollama_files_are_told_apart_by_name() {
    for name in ["Modelfile", "modelfile", "x.Modelfile", "t.gotmpl"] {
        assert!(is_ollama_path(Path::new(name)), "{name}");
    }
    for name in [
        "t.jinja",
        "Modelfile-template",
        "tokenizer_config.json",
        "m.gguf",
    ] {
        assert!(!is_ollama_path(Path::new(name)), "{name}");
    }
}

#[test]
fn broken_modelfiles_are_errors_naming_the_file_and_line() {
    let dir = common::temp_dir("modelfile_broken");
    let path = write(&dir, "Modelfile", "FROM x\nTEMPLATE \"\"\"{{ .Prompt }}\n");
    let err = OllamaSource::from_path(&path).unwrap_err();
    assert_eq!(err.kind(), &TemplateErrorKind::File, "{err:?}");
    assert!(
        err.to_string().contains("Modelfile: line 2: unterminated"),
        "{err}"
    );
    let path = write(&dir, "Modelfile", "FROM llama3.2\nSYSTEM hi\n");
    let err = OllamaSource::from_path(&path).unwrap_err();
    assert!(err.to_string().contains("no TEMPLATE"), "{err}");
}
