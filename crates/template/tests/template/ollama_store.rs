//! Models in Ollama's local store, found by name as Ollama finds them: the manifest's
//! layers give the weights' file, the template, the system prompt, the parameters and the
//! example messages. The store here is laid out as `ollama pull` leaves it, with Ollama's
//! own Qwen 2.5 template from the corpus as the template layer.

use crate::common;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::Path;
use toolbridge_template::gotmpl::Message;
use toolbridge_template::ollama_store::{find, manifest_path};

/// Writes `bytes` as a blob and returns its layer entry.
fn blob(store: &Path, media: &str, bytes: &[u8]) -> serde_json::Value {
    let hex = format!("{:x}", Sha256::digest(bytes));
    std::fs::create_dir_all(store.join("blobs")).unwrap();
    std::fs::write(store.join("blobs").join(format!("sha256-{hex}")), bytes).unwrap();
    json!({"mediaType": format!("application/vnd.ollama.image.{media}"), "digest": format!("sha256:{hex}"), "size": bytes.len()})
}

fn write_manifest(store: &Path, relative: &str, layers: Vec<serde_json::Value>) {
    let path = store.join("manifests").join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "layers": layers,
    });
    std::fs::write(path, manifest.to_string()).unwrap();
}

#[test]
fn names_resolve_as_ollama_resolves_them() {
    let models = Path::new("/m");
    let manifest = |name| manifest_path(models, name).map(|path| path.display().to_string());
    let base = "/m/manifests";
    assert_eq!(
        manifest("qwen2.5").as_deref(),
        Some(format!("{base}/registry.ollama.ai/library/qwen2.5/latest").as_str())
    );
    assert_eq!(
        manifest("qwen2.5:0.5b").as_deref(),
        Some(format!("{base}/registry.ollama.ai/library/qwen2.5/0.5b").as_str())
    );
    assert_eq!(
        manifest("someone/model:v1").as_deref(),
        Some(format!("{base}/registry.ollama.ai/someone/model/v1").as_str())
    );
    assert_eq!(
        manifest("hf.co/org/repo-GGUF:Q4_K_M").as_deref(),
        Some(format!("{base}/hf.co/org/repo-GGUF/Q4_K_M").as_str())
    );
    for bad in ["", "../etc", "a/b/c/d", "model:..", "mo del", "a//b"] {
        assert_eq!(manifest(bad), None, "{bad:?}");
    }
}

#[test]
fn a_pulled_model_gives_weights_template_and_defaults() {
    let store = common::temp_dir("store_full");
    let template =
        std::fs::read(common::corpus_dir().join("gotmpl/registry/qwen2.5.gotmpl")).unwrap();
    let weights = blob(&store, "model", b"GGUF weights");
    let layers = vec![
        weights.clone(),
        blob(&store, "template", &template),
        blob(&store, "system", b"You are terse."),
        blob(
            &store,
            "params",
            json!({"stop": ["<|im_start|>", "<|im_end|>"], "temperature": 0.7, "top_k": 20})
                .to_string()
                .as_bytes(),
        ),
        blob(
            &store,
            "messages",
            json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])
                .to_string()
                .as_bytes(),
        ),
        blob(&store, "license", b"Apache-2.0"),
    ];
    write_manifest(&store, "registry.ollama.ai/library/qwen2.5/0.5b", layers);

    let model = find(&store, "qwen2.5:0.5b").unwrap_or_else(|error| panic!("{error}"));
    let hex = weights["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:");
    assert_eq!(
        model.weights,
        store.join("blobs").join(format!("sha256-{hex}"))
    );
    let source = model.source.expect("a template layer");
    assert_eq!(source.template.as_bytes(), template.as_slice());
    assert_eq!(source.system.as_deref(), Some("You are terse."));
    assert_eq!(source.stop, ["<|im_start|>", "<|im_end|>"]);
    assert_eq!(
        source.parameters,
        [
            ("temperature".to_string(), "0.7".to_string()),
            ("top_k".to_string(), "20".to_string())
        ]
    );
    assert_eq!(
        source.messages,
        [
            Message::new("user", "Hi"),
            Message::new("assistant", "Hello")
        ]
    );
    assert_eq!(source.from, Some(model.weights));
}

#[test]
fn a_model_without_a_template_layer_keeps_its_ggufs() {
    let store = common::temp_dir("store_bare");
    write_manifest(
        &store,
        "registry.ollama.ai/library/bare/latest",
        vec![blob(&store, "model", b"GGUF")],
    );
    let model = find(&store, "bare").unwrap_or_else(|error| panic!("{error}"));
    assert!(model.weights.is_file());
    assert_eq!(model.source, None);
}

#[test]
fn missing_models_and_broken_manifests_are_errors_that_say_so() {
    let store = common::temp_dir("store_broken");
    let missing = find(&store, "llama3.2")
        .err()
        .map(|error| error.to_string());
    assert!(
        missing
            .as_deref()
            .is_some_and(|message| message.contains("ollama pull llama3.2")),
        "{missing:?}"
    );
    write_manifest(&store, "registry.ollama.ai/library/nolayers/latest", vec![]);
    assert!(find(&store, "nolayers").is_err());
    write_manifest(
        &store,
        "registry.ollama.ai/library/baddigest/latest",
        vec![
            json!({"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:../../x"}),
        ],
    );
    assert!(find(&store, "baddigest").is_err());
    assert!(find(&store, "../../etc/passwd").is_err());
}
