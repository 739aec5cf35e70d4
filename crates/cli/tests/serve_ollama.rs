//! `toolbridge serve` on an Ollama user's model, both ways one comes: a Modelfile whose
//! `FROM` is the default model's GGUF and whose `TEMPLATE` is Ollama's own Qwen 2.5
//! template, and a model pulled into Ollama's store (laid out as `ollama pull` leaves it:
//! a manifest naming the GGUF blob, the template and the parameters), served by name. The
//! server must pick the Hermes dialect from the Go template and answer a required call
//! with a valid one, streamed and not. Built with the `llama` feature only.

#![cfg(feature = "llama")]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::common::serve::{streamed_calls, weather_question, ServeProcess};
use crate::common::{corpus, default_model, one_at_a_time, scratch, DEFAULT_MODEL_SHA256};

/// Ollama's own Qwen 2.5 template, from the corpus.
fn qwen_template() -> String {
    let path = corpus("gotmpl/registry/qwen2.5.gotmpl");
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {path}: {error}"))
}

/// A Modelfile in a fresh folder: `FROM` the default model, Ollama's Qwen 2.5 template.
fn modelfile() -> PathBuf {
    let path = scratch("serve-modelfile").join("Modelfile");
    let text = format!(
        "FROM {}\nTEMPLATE \"\"\"{}\"\"\"\nPARAMETER stop <|im_end|>\n",
        default_model().display(),
        qwen_template()
    );
    std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
    path
}

/// An Ollama store holding the default model as `qwen2.5-coder:0.5b`: its GGUF linked in
/// as the model blob, Ollama's template and parameters as blobs of their own.
fn ollama_store() -> PathBuf {
    let store = scratch("ollama-store");
    let blobs = store.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap_or_else(|error| panic!("{error}"));
    std::os::unix::fs::symlink(
        default_model(),
        blobs.join(format!("sha256-{DEFAULT_MODEL_SHA256}")),
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let layer = |media: &str, digest: String| json!({"mediaType": format!("application/vnd.ollama.image.{media}"), "digest": format!("sha256:{digest}")});
    let text_blob = |media: &str, text: &str| {
        let digest = format!("{:x}", Sha256::digest(text.as_bytes()));
        std::fs::write(blobs.join(format!("sha256-{digest}")), text)
            .unwrap_or_else(|error| panic!("{error}"));
        layer(media, digest)
    };
    let params = json!({"stop": ["<|im_start|>", "<|im_end|>"], "temperature": 0.7});
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "layers": [
            layer("model", DEFAULT_MODEL_SHA256.to_owned()),
            text_blob("template", &qwen_template()),
            text_blob("params", &params.to_string()),
        ],
    });
    let path = store.join("manifests/registry.ollama.ai/library/qwen2.5-coder/0.5b");
    std::fs::create_dir_all(path.parent().expect("a folder"))
        .unwrap_or_else(|error| panic!("{error}"));
    std::fs::write(path, manifest.to_string()).unwrap_or_else(|error| panic!("{error}"));
    store
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

/// The streamed deltas' one call: its name and its argument fragments joined, parsed.
fn streamed_call(body: &str) -> (String, Value) {
    let calls = streamed_calls(body);
    let [(name, arguments)] = &calls[..] else {
        panic!("not one streamed call but {calls:?}: {body}");
    };
    let arguments = serde_json::from_str(arguments)
        .unwrap_or_else(|error| panic!("streamed arguments are not JSON ({error}): {body}"));
    (name.clone(), arguments)
}

#[test]
fn a_modelfile_is_served_with_its_go_template() {
    let _turn = one_at_a_time();
    let path = modelfile();
    let server = ServeProcess::start(&["--model", path.to_str().expect("a UTF-8 path")], &[]);
    answers_a_required_call(&server);
}

#[test]
fn a_model_in_ollamas_store_is_served_by_name() {
    let _turn = one_at_a_time();
    let store = ollama_store();
    let server = ServeProcess::start(
        &["--model", "qwen2.5-coder:0.5b"],
        &[("OLLAMA_MODELS", store.as_path())],
    );
    let serving = answers_a_required_call(&server);
    assert!(
        serving.starts_with("serving qwen2.5-coder:0.5b "),
        "{serving}"
    );
}

/// The banner names the Hermes dialect, and a required call comes back valid, the same
/// streamed and not. Returns the banner's `serving …` line.
fn answers_a_required_call(server: &ServeProcess) -> String {
    let serving = server.serving();
    assert!(serving.contains("(dialect hermes)"), "{serving}");

    let answer: Value = serde_json::from_str(&post(server, &weather_question("qwen", false)))
        .unwrap_or_else(|error| panic!("{error}"));
    let message = &answer["choices"][0]["message"];
    assert_eq!(
        answer["choices"][0]["finish_reason"], "tool_calls",
        "{answer}"
    );
    let (name, arguments) = call_of(message);
    assert_eq!(name, "get_weather", "{answer}");
    assert!(arguments["city"].is_string(), "{answer}");

    let streamed = streamed_call(&post(server, &weather_question("qwen", true)));
    assert_eq!(streamed, (name, arguments));
    serving
}
