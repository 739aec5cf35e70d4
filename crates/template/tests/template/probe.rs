//! Template probing over real chat templates from the shared corpus.

use crate::common;
use std::fs;
use std::path::{Path, PathBuf};

use toolbridge_chat::Role;
use toolbridge_template::{ArgumentsForm, ChatTemplate, OllamaSource, TemplateCaps};

fn probe_file(relative: &str, bos: &str, eos: &str) -> TemplateCaps {
    let path = common::corpus_dir().join("jinja").join(relative);
    let source = fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let template = ChatTemplate::new(&source, bos, eos)
        .unwrap_or_else(|err| panic!("{} does not compile: {err:?}", path.display()));
    TemplateCaps::probe(&template)
}

fn probe_gotmpl(relative: &str) -> TemplateCaps {
    let path = common::corpus_dir().join("gotmpl").join(relative);
    let source = OllamaSource::from_gotmpl(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let template = ChatTemplate::ollama(&source)
        .unwrap_or_else(|err| panic!("{} does not compile: {err:?}", path.display()));
    TemplateCaps::probe(&template)
}

/// Qwen 2.5's template concatenates strings: content as parts raises for user, system
/// and assistant turns and prints as a list for tool results, and a `developer` turn is
/// skipped.
#[test]
fn qwen25_takes_text_as_strings_only() {
    let caps = probe_file("llama.cpp/Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>");
    assert!(!caps.knows_developer_role);
    assert_eq!(caps.text_parts_roles, []);
}

/// Gemma 3 iterates a turn's parts, but of a leading system turn given as parts keeps
/// only the first; it knows no `developer` turn (and raises on one, whose role breaks
/// its alternation check).
#[test]
fn gemma3_reads_parts_except_in_its_system_turn() {
    let caps = probe_file(
        "ollama-repo/template-index__22-gemma3-instruct.jinja",
        "<bos>",
        "<eos>",
    );
    assert!(!caps.knows_developer_role);
    assert_eq!(caps.text_parts_roles, [Role::User, Role::Assistant]);
}

/// GPT-OSS's harmony template has a developer message of its own.
#[test]
fn gpt_oss_knows_developer_role_turns() {
    let caps = probe_file("llama.cpp/openai-gpt-oss-120b.jinja", "", "");
    assert!(caps.knows_developer_role);
}

/// Ollama hands a Go template each text part as a turn of its own and merges turns of one
/// role again (tool results excepted, which stay apart), so parts render for every role
/// Qwen 2.5's Go template prints; like Ollama, it skips a `developer` turn.
#[test]
fn ollama_qwen25_takes_parts_through_ollamas_mapping() {
    let caps = probe_gotmpl("registry/qwen2.5.gotmpl");
    assert!(!caps.knows_developer_role);
    assert_eq!(
        caps.text_parts_roles,
        [Role::System, Role::User, Role::Assistant, Role::Tool]
    );
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
        flag(caps.knows_developer_role, "developer"),
        format!("parts={:?}", caps.text_parts_roles),
    ]
    .join(" ")
}

/// Each corpus template's name and its caps, or why it does not compile.
fn corpus_caps() -> Vec<(String, Result<TemplateCaps, String>)> {
    let root = common::corpus_dir().join("jinja");
    let files = jinja_files(&root);
    assert!(!files.is_empty(), "no templates under {}", root.display());
    files
        .iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(path)
                .display()
                .to_string();
            let caps = fs::read_to_string(path)
                .map_err(|err| format!("unreadable: {err}"))
                .and_then(|source| {
                    ChatTemplate::new(&source, "<s>", "</s>")
                        .map_err(|err| format!("does not compile: {err}"))
                })
                .map(|template| TemplateCaps::probe(&template));
            (name, caps)
        })
        .collect()
}

/// One line per corpus template (run with `--nocapture` to read them); probing never
/// panics, whatever the template does.
#[test]
fn corpus_table() {
    for (name, caps) in corpus_caps() {
        match caps {
            Ok(caps) => println!("{name}: {}", summary(&caps)),
            Err(why) => println!("{name}: {why}"),
        }
    }
}

/// How many corpus templates take each shape of content: the counts the dialect's
/// fitting rests on. Of 258 that compile, 202 render text parts for no role, 56 for user
/// turns (the multimodal ones), and 8 know a `developer` turn (GPT-OSS, Gemma 4, DeepSeek
/// V3.2, Reka Edge). A change to the probe that moves them is a change to review here.
#[test]
fn content_shapes_across_the_corpus() {
    let probed: Vec<TemplateCaps> = corpus_caps()
        .into_iter()
        .filter_map(|(_, caps)| caps.ok())
        .collect();
    let count = |keep: &dyn Fn(&TemplateCaps) -> bool| probed.iter().filter(|c| keep(c)).count();
    let roles = [
        Role::System,
        Role::Developer,
        Role::User,
        Role::Assistant,
        Role::Tool,
    ];
    let parts: Vec<(String, usize)> = roles
        .iter()
        .map(|role| {
            (
                role.to_string(),
                count(&|caps| caps.renders_text_parts(role)),
            )
        })
        .collect();
    let developer = count(&|caps| caps.knows_developer_role);
    println!(
        "{} templates; developer: {developer}; parts: {parts:?}",
        probed.len()
    );
    let expected = [31, 19, 56, 50, 30];
    assert_eq!(
        (probed.len(), developer, parts),
        (
            258,
            8,
            roles
                .iter()
                .zip(expected)
                .map(|(role, count)| (role.to_string(), count))
                .collect()
        )
    );
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
