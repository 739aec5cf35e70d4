//! Template probing over real chat templates from the shared corpus.

use std::fs;
use std::path::{Path, PathBuf};

use toolbridge_template::{ArgumentsForm, ChatTemplate, TemplateCaps};

/// The shared corpus, next to the repository.
fn corpus() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    assert!(
        path.is_dir(),
        "test corpus not found: looked in {}",
        path.display()
    );
    path
}

fn probe_file(relative: &str, bos: &str, eos: &str) -> TemplateCaps {
    let path = corpus().join("jinja").join(relative);
    let source = fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let template = ChatTemplate::new(&source, bos, eos)
        .unwrap_or_else(|err| panic!("{} does not compile: {err:?}", path.display()));
    TemplateCaps::probe(&template)
}

#[test]
fn qwen25_renders_hermes_tool_calls() {
    let caps = probe_file("llama.cpp/Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>");
    assert!(!caps.requires_alternation);
    assert!(caps.supports_system_role);
    assert_eq!(caps.tool_call_arguments, Some(ArgumentsForm::Object));
    assert!(caps.renders_content_with_tool_calls);
    assert!(caps.renders_tool_results);
    assert!(!caps.renders_tool_name);
    assert!(caps.supports_tools);
    assert_eq!(
        caps.generation_prompt.as_deref(),
        Some("<|im_start|>assistant\n")
    );
    assert_eq!(
        caps.assistant_prefix.as_deref(),
        Some("<|im_start|>assistant\n")
    );
    assert_eq!(caps.assistant_suffix.as_deref(), Some("<|im_end|>\n"));
}

#[test]
fn llama31_renders_calls_and_ipython_results() {
    let caps = probe_file(
        "llama.cpp/meta-llama-Llama-3.1-8B-Instruct.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
    );
    assert!(!caps.requires_alternation);
    assert!(caps.supports_system_role);
    assert!(caps.renders_tool_calls());
    assert!(caps.renders_tool_results);
    assert!(caps.supports_tools);
    assert_eq!(
        caps.generation_prompt.as_deref(),
        Some("<|start_header_id|>assistant<|end_header_id|>\n\n")
    );
    assert_eq!(
        caps.assistant_prefix.as_deref(),
        Some("<|start_header_id|>assistant<|end_header_id|>\n\n")
    );
    assert_eq!(caps.assistant_suffix.as_deref(), Some("<|eot_id|>"));
}

/// Mistral 7B Instruct v0.1, the template of seed 000: strict alternation, no system
/// role, no tools.
#[test]
fn mistral_v01_demands_alternation() {
    let caps = probe_file(
        "ollama-repo/template-index__10-mistral-instruct.jinja",
        "<s>",
        "</s>",
    );
    assert!(caps.requires_alternation);
    assert!(!caps.supports_system_role);
    assert_eq!(caps.tool_call_arguments, None);
    assert!(!caps.renders_tool_results);
    assert!(!caps.supports_tools);
    assert_eq!(caps.generation_prompt.as_deref(), Some(""));
    assert_eq!(caps.assistant_prefix.as_deref(), Some(""));
    assert_eq!(caps.assistant_suffix.as_deref(), Some("</s>"));
}

#[test]
fn gemma2_has_no_system_role() {
    let caps = probe_file("llama.cpp/google-gemma-2-2b-it.jinja", "<bos>", "<eos>");
    assert!(caps.requires_alternation);
    assert!(!caps.supports_system_role);
    assert!(!caps.renders_tool_calls());
    assert!(!caps.supports_tools);
    assert_eq!(
        caps.generation_prompt.as_deref(),
        Some("<start_of_turn>model\n")
    );
    assert_eq!(
        caps.assistant_prefix.as_deref(),
        Some("<start_of_turn>model\n")
    );
    assert_eq!(caps.assistant_suffix.as_deref(), Some("<end_of_turn>\n"));
}

/// Plain ChatML (Qwen 1.5) knows nothing of tools, but prints any role's content, so a
/// tool result shows while a call does not. It closes a turn only when another follows
/// (or a generation prompt does), so `<|im_end|>` belongs to the next turn's prefix.
#[test]
fn chatml_without_tool_support() {
    let caps = probe_file("hfjs-e2e/Qwen_Qwen1.5-72B-Chat.jinja", "", "<|im_end|>");
    assert!(!caps.requires_alternation);
    assert!(caps.supports_system_role);
    assert!(!caps.renders_tool_calls());
    assert!(!caps.supports_tools);
    assert!(caps.renders_tool_results);
    assert_eq!(
        caps.assistant_prefix.as_deref(),
        Some("<|im_end|>\n<|im_start|>assistant\n")
    );
    assert_eq!(caps.assistant_suffix.as_deref(), Some(""));
}

/// Every `.jinja` file under `dir`, sorted, depth first.
fn jinja_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .into_iter()
        .flat_map(|path| {
            if path.is_dir() {
                jinja_files(&path)
            } else if path.extension().is_some_and(|ext| ext == "jinja") {
                vec![path]
            } else {
                Vec::new()
            }
        })
        .collect()
}

fn flag(on: bool, name: &str) -> String {
    if on {
        name.to_string()
    } else {
        format!("-{name}")
    }
}

fn summary(caps: &TemplateCaps) -> String {
    let args = match caps.tool_call_arguments {
        Some(form) => format!("calls={form:?}"),
        None => "-calls".into(),
    };
    [
        flag(caps.requires_alternation, "alt"),
        flag(caps.supports_system_role, "system"),
        args,
        flag(caps.renders_content_with_tool_calls, "content+calls"),
        flag(caps.renders_tool_results, "results"),
        flag(caps.renders_tool_name, "result_name"),
        flag(caps.supports_tools, "tools"),
        format!("gen={:?}", caps.generation_prompt),
        format!("pre={:?}", caps.assistant_prefix),
        format!("suf={:?}", caps.assistant_suffix),
    ]
    .join(" ")
}

/// One line per corpus template (run with `--nocapture` to read them); probing never
/// panics, whatever the template does.
#[test]
fn corpus_table() {
    let root = corpus().join("jinja");
    let files = jinja_files(&root);
    assert!(!files.is_empty(), "no templates under {}", root.display());
    for path in files {
        let name = path.strip_prefix(&root).unwrap_or(&path).display();
        let Ok(source) = fs::read_to_string(&path) else {
            println!("{name}: unreadable");
            continue;
        };
        match ChatTemplate::new(&source, "<s>", "</s>") {
            Ok(template) => {
                let caps = TemplateCaps::probe(&template);
                println!("{name}: {}", summary(&caps));
            }
            Err(err) => println!("{name}: does not compile: {}", err),
        }
    }
}

/// Calls written as XML parameters (`<arg_key>k</arg_key><arg_value>v</arg_value>`) or as
/// Python keywords (`f(k="v")`) count as rendered, not only JSON ones.
#[test]
fn non_json_call_syntaxes_render() {
    let glm = probe_file("llama.cpp/GLM-4.6.jinja", "", "");
    assert_eq!(glm.tool_call_arguments, Some(ArgumentsForm::Object));
    let pythonic = probe_file(
        "vllm/tool_chat_template_llama3.2_pythonic.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
    );
    assert!(pythonic.renders_tool_calls());
}
