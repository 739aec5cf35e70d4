//! A model served with an Ollama Modelfile's Go template: the prompt is the template
//! rendered as Ollama renders the chat (the Modelfile's `SYSTEM` added), the Modelfile's
//! stop strings end the answer, its parameters are the sampling defaults, and the dialect
//! detected from the Go template reads the calls back. Ollama's own Qwen 2.5 template from the corpus, over a scripted engine.
//! An engine that reports its model's Modelfile (an Ollama server, `/api/show`) is served
//! with it the same way, with no `--template`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use axum::http::StatusCode;
use serde_json::{json, Value};
use toolbridge_engine::{Engine, ModelInfo, ScriptedEngine};
use toolbridge_server::{ServedModel, Server, ServerOptions, TemplateOverride};
use toolbridge_template::{GoTemplate, OllamaRequest, OllamaSource};

use crate::common::{chat, model_info, scripted, Recorder, WEATHER_CALL};

const SYSTEM: &str = "You answer tersely.";

fn corpus() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    assert!(
        path.join("gotmpl").is_dir(),
        "corpus not found: looked at {}",
        path.display()
    );
    path
}

/// A Modelfile around Ollama's Qwen 2.5 template, loaded as `toolbridge serve` loads it.
/// It is written and loaded once: the tests run at once in one process, and one writing
/// the file while another reads it would hand the reader half a Modelfile.
fn qwen_modelfile() -> OllamaSource {
    static LOADED: OnceLock<OllamaSource> = OnceLock::new();
    LOADED.get_or_init(write_qwen_modelfile).clone()
}

fn write_qwen_modelfile() -> OllamaSource {
    let template = std::fs::read_to_string(corpus().join("gotmpl/registry/qwen2.5.gotmpl"))
        .unwrap_or_else(|error| panic!("{error}"));
    let dir = std::env::temp_dir().join(format!("toolbridge-ollama-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
    let path = dir.join("Modelfile");
    let modelfile = format!(
        "FROM ./qwen2.5.gguf\nTEMPLATE \"\"\"{template}\"\"\"\nSYSTEM {SYSTEM}\nPARAMETER stop <|im_end|>\nPARAMETER temperature 0.3\nPARAMETER top_k 7\n"
    );
    std::fs::write(&path, modelfile).unwrap_or_else(|error| panic!("{error}"));
    OllamaSource::from_path(&path).unwrap_or_else(|error| panic!("{error}"))
}

fn app(engine: &Arc<Recorder>, source: &OllamaSource) -> axum::Router {
    let engine: Arc<dyn Engine> = Arc::clone(engine) as Arc<dyn Engine>;
    let model = ServedModel::new(engine, Some(TemplateOverride::Ollama(source.clone())), None)
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(model.dialect_name(), "hermes");
    Server::new(model, ServerOptions::default()).router()
}

fn weather_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    })
}

/// What Ollama renders for `request` with the Modelfile's defaults.
fn as_ollama_renders(source: &OllamaSource, request: &Value) -> String {
    let request = OllamaRequest::from_json(request)
        .unwrap_or_else(|error| panic!("{error}"))
        .with_model_defaults(source.system.as_deref(), &source.messages);
    GoTemplate::new(&source.template)
        .and_then(|template| template.render(&request))
        .unwrap_or_else(|error| panic!("{error}"))
}

#[tokio::test]
async fn a_modelfile_template_renders_the_prompt_as_ollama_does() {
    let source = qwen_modelfile();
    let engine = scripted(&[WEATHER_CALL]);
    let body = json!({
        "model": "m",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [weather_tool()],
    });
    let (status, answer) = chat(&app(&engine, &source), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let generation = engine.generation();
    assert_eq!(generation.prompt, as_ollama_renders(&source, &body));
    assert!(generation
        .prompt
        .starts_with(&format!("<|im_start|>system\n{SYSTEM}\n\n# Tools\n")));
    assert!(generation.prompt.ends_with("<|im_start|>assistant\n"));
    assert!(generation.stop.iter().any(|stop| stop == "<|im_end|>"));
    assert_eq!(generation.sampling.temperature, Some(0.3));
    assert_eq!(generation.sampling.top_k, Some(7));

    let message = &answer["choices"][0]["message"];
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        "{\"city\": \"Paris\"}"
    );
}

#[tokio::test]
async fn past_calls_and_results_render_in_the_templates_own_syntax() {
    let source = qwen_modelfile();
    let engine = scripted(&["It is sunny in Paris."]);
    let body = json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
            }]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 24 C"},
        ],
        "tools": [weather_tool()],
        "temperature": 0,
    });
    let (status, answer) = chat(&app(&engine, &source), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let generation = engine.generation();
    assert_eq!(generation.sampling.temperature, Some(0.0));
    assert_eq!(generation.sampling.top_k, Some(7));
    let prompt = generation.prompt;
    assert_eq!(prompt, as_ollama_renders(&source, &body));
    assert!(prompt.contains(
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call><|im_end|>\n"
    ), "{prompt}");
    assert!(prompt.contains("<tool_response>\nsunny, 24 C\n</tool_response>"));
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "It is sunny in Paris."
    );
}

#[tokio::test]
async fn an_engine_reporting_a_modelfile_is_served_with_its_template() {
    let template = std::fs::read_to_string(corpus().join("gotmpl/registry/qwen2.5.gotmpl"))
        .unwrap_or_else(|error| panic!("{error}"));
    let reported = format!(
        "# Modelfile generated by \"ollama show\"\nFROM /blobs/sha256-0\nTEMPLATE \"\"\"{template}\"\"\"\nSYSTEM {SYSTEM}\nPARAMETER stop <|im_end|>\nPARAMETER top_k 7\nLICENSE \"\"\"Apache\"\"\"\n"
    );
    let info = ModelInfo {
        ollama_modelfile: Some(reported),
        ..model_info()
    };
    let engine = Recorder::new(ScriptedEngine::new(info, [WEATHER_CALL]));
    let served = ServedModel::new(Arc::clone(&engine) as Arc<dyn Engine>, None, None)
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(served.dialect_name(), "hermes");
    let router = Server::new(served, ServerOptions::default()).router();
    let body = json!({
        "model": "m",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [weather_tool()],
    });
    let (status, answer) = chat(&router, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let generation = engine.generation();
    assert_eq!(
        generation.prompt,
        as_ollama_renders(&qwen_modelfile(), &body)
    );
    assert!(generation.stop.iter().any(|stop| stop == "<|im_end|>"));
    assert_eq!(generation.sampling.top_k, Some(7));
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
}
