//! `toolbridge serve --model Modelfile`, as an Ollama user runs it: a Modelfile whose
//! `FROM` is the default model's GGUF and whose `TEMPLATE` is Ollama's own Qwen 2.5
//! template. The server must pick the Hermes dialect from the Go template and answer a
//! required call with a valid one, streamed and not. Built with the `llama` feature only.

#![cfg(feature = "llama")]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use common::ServeProcess;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A Modelfile in a fresh folder: `FROM` the default model, Ollama's Qwen 2.5 template.
fn modelfile() -> PathBuf {
    let model = workspace().join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        model.is_file(),
        "default model not found (scripts/fetch-model.sh fetches it): looked at {}",
        model.display()
    );
    let corpus = workspace().join("../shared/corpus");
    let template_path = corpus.join("gotmpl/registry/qwen2.5.gotmpl");
    let template = std::fs::read_to_string(&template_path).unwrap_or_else(|error| {
        panic!(
            "corpus not found: cannot read {}: {error}",
            template_path.display()
        )
    });
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-modelfile");
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
    let path = dir.join("Modelfile");
    let text = format!(
        "FROM {}\nTEMPLATE \"\"\"{template}\"\"\"\nPARAMETER stop <|im_end|>\n",
        model.display()
    );
    std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
    path
}

fn weather_request(stream: bool) -> Value {
    json!({
        "model": "qwen",
        "messages": [{"role": "user", "content": "What is the weather like in Paris today?"}],
        "tools": [{
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the current weather in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }],
        "tool_choice": "required",
        "temperature": 0,
        "max_tokens": 64,
        "stream": stream,
    })
}

fn post(server: &ServeProcess, body: &Value) -> String {
    ureq::post(&format!("{}/v1/chat/completions", server.base_url))
        .timeout(Duration::from_secs(300))
        .send_json(body.clone())
        .unwrap_or_else(|error| panic!("the request failed: {error}"))
        .into_string()
        .unwrap_or_else(|error| panic!("the answer is not text: {error}"))
}

/// The call's name and its arguments, parsed.
fn call_of(message: &Value) -> (String, Value) {
    let function = &message["tool_calls"][0]["function"];
    let arguments = function["arguments"].as_str().unwrap_or_default();
    let arguments = serde_json::from_str(arguments)
        .unwrap_or_else(|error| panic!("arguments are not JSON ({error}): {message}"));
    (
        function["name"].as_str().unwrap_or_default().to_owned(),
        arguments,
    )
}

/// The streamed deltas' call: its name and its argument fragments joined.
fn streamed_call(body: &str) -> (String, Value) {
    let mut name = String::new();
    let mut arguments = String::new();
    for data in body.lines().filter_map(|line| line.strip_prefix("data: ")) {
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).unwrap_or_else(|error| panic!("{error}"));
        for call in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            name.push_str(call["function"]["name"].as_str().unwrap_or_default());
            arguments.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
    }
    let arguments = serde_json::from_str(&arguments)
        .unwrap_or_else(|error| panic!("streamed arguments are not JSON ({error}): {body}"));
    (name, arguments)
}

#[test]
fn a_modelfile_is_served_with_its_go_template() {
    let path = modelfile();
    let server = ServeProcess::start(&["--model", path.to_str().expect("a UTF-8 path")]);
    let serving = std::iter::from_fn(|| server.banner.recv_timeout(Duration::from_secs(10)).ok())
        .find(|line| line.starts_with("serving "))
        .expect("the banner names the model and dialect");
    assert!(serving.contains("(dialect hermes)"), "{serving}");

    let answer: Value = serde_json::from_str(&post(&server, &weather_request(false)))
        .unwrap_or_else(|error| panic!("{error}"));
    let message = &answer["choices"][0]["message"];
    assert_eq!(
        answer["choices"][0]["finish_reason"], "tool_calls",
        "{answer}"
    );
    let (name, arguments) = call_of(message);
    assert_eq!(name, "get_weather", "{answer}");
    assert!(arguments["city"].is_string(), "{answer}");

    let streamed = streamed_call(&post(&server, &weather_request(true)));
    assert_eq!(streamed, (name, arguments));
}
