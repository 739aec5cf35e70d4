//! `toolbridge serve -hf owner/repo[:QUANT]`: which file it serves, and the Hugging Face
//! cache it reads and writes, checked against a local hub (`hf_hub_server.py`: the
//! resolve and model-info endpoints, `HF_ENDPOINT` pointing at it) and against a cache
//! the hub's own Python client (`huggingface_hub`) wrote. The model files are small GGUF
//! headers, so the serve command stops at loading them (or, built without the engine,
//! just after choosing them); what it chose is its `… is FILE (PATH)` line on stderr.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use sha2::{Digest, Sha256};

use crate::common::{one_at_a_time, run, scratch, test_python, test_script};

/// A repository's files: (path, content).
type Files = Vec<(&'static str, Vec<u8>)>;

/// `hf_hub_server.py` serving the repositories under `root`, killed when dropped.
struct LocalHub {
    child: Child,
    url: String,
    log: PathBuf,
}

impl LocalHub {
    /// Starts a hub whose repositories are `repos`: (owner/repo, [(path, content)]).
    fn start(name: &str, repos: &[(&str, Files)]) -> LocalHub {
        let dir = scratch(name);
        let root = dir.join("repos");
        for (repo, files) in repos {
            for (path, content) in files {
                let file = root.join(repo).join(path);
                std::fs::create_dir_all(file.parent().expect("a folder")).expect("created");
                std::fs::write(&file, content).expect("written");
            }
        }
        std::fs::create_dir_all(&root).expect("created");
        let log = dir.join("requests.log");
        let script = test_script("hf_hub_server.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg(&root)
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot run {}: {error}", script.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the hub prints its address");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not an address: {line:?}"))
            .to_owned();
        LocalHub { child, url, log }
    }

    /// The requests answered so far, one `METHOD PATH RANGE` a line.
    fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for LocalHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small GGUF file: the header of an empty model, then `label`, so each file differs.
fn gguf(label: &str) -> Vec<u8> {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(label.repeat(64).as_bytes());
    bytes
}

/// A repository of several quants of one model, with a projector and a README.
fn quants() -> Files {
    vec![
        ("README.md", b"# model\n".to_vec()),
        ("mmproj-model-f16.gguf", gguf("mmproj")),
        ("model-Q2_K.gguf", gguf("q2_k")),
        ("model-Q4_K_M.gguf", gguf("q4_k_m")),
        ("model-Q8_0.gguf", gguf("q8_0")),
    ]
}

/// The Hugging Face environment of one test: its own `HF_HOME` (so no token of the
/// machine's is read) and cache.
struct HfEnv {
    home: PathBuf,
    cache: PathBuf,
}

impl HfEnv {
    fn new(name: &str) -> HfEnv {
        let home = scratch(name);
        HfEnv {
            cache: home.join("hub"),
            home,
        }
    }

    /// Runs `toolbridge serve` with `args` and `env` on top of this environment, and
    /// returns what it printed on stderr (it exits: the model files are not loadable).
    fn serve(&self, args: &[&str], env: &[(&str, &OsStr)]) -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env_remove("HF_TOKEN")
            .env_remove("HF_HUB_OFFLINE")
            .env_remove("HF_ENDPOINT")
            .env("HF_HOME", &self.home)
            .env("HF_HUB_CACHE", &self.cache)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("toolbridge runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        println!("{stderr}");
        stderr
    }

    /// The folder of `repo` in the cache.
    fn repo(&self, repo: &str) -> PathBuf {
        self.cache
            .join(format!("models--{}", repo.replace('/', "--")))
    }

    /// The snapshot `refs/main` of `repo` names.
    fn snapshot(&self, repo: &str) -> PathBuf {
        let folder = self.repo(repo);
        let commit = std::fs::read_to_string(folder.join("refs/main"))
            .unwrap_or_else(|error| panic!("no refs/main for {repo}: {error}"));
        folder.join("snapshots").join(commit.trim())
    }
}

/// The line `serve` prints for the model it chose: "`spec` is `file` (`path`)".
fn chosen(spec: &str, file: &str, path: &Path) -> String {
    format!("toolbridge: {spec} is {file} ({})", path.display())
}

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[test]
fn a_quant_is_downloaded_into_the_cache_then_reused_offline() {
    let hub = LocalHub::start("hf-hub-quants", &[("owner/model-GGUF", quants())]);
    let env = HfEnv::new("hf-env-quants");
    let endpoint = [("HF_ENDPOINT", OsStr::new(&hub.url))];

    let stderr = env.serve(&["-hf", "owner/model-GGUF:q8_0"], &endpoint);
    let snapshot = env.snapshot("owner/model-GGUF");
    let served = snapshot.join("model-Q8_0.gguf");
    let line = chosen("owner/model-GGUF:q8_0", "model-Q8_0.gguf", &served);
    assert!(stderr.contains(&line), "{stderr}");
    // The Python client's layout: the snapshot's file a relative link to its blob, named
    // by the content's sha256 (the hub's ETag).
    let content = gguf("q8_0");
    let blob = format!("../../blobs/{}", sha256(&content));
    assert_eq!(
        std::fs::read_link(&served).expect("a link"),
        Path::new(&blob)
    );
    assert_eq!(std::fs::read(&served).expect("readable"), content);
    let requests = hub.requests();
    assert!(
        !requests.contains("Q4_K_M") && !requests.contains("mmproj"),
        "only the quant asked for is fetched:\n{requests}"
    );

    // Again, online: the cached file is used without fetching it again.
    let before = hub.requests().len();
    let again = env.serve(&["--hf-repo", "owner/model-GGUF:Q8_0"], &endpoint);
    assert!(again.contains(&served.display().to_string()), "{again}");
    assert!(
        !hub.requests()[before..].contains("/resolve/"),
        "{}",
        hub.requests()
    );

    // Offline: not a single request.
    let before = hub.requests().len();
    let offline = [
        ("HF_ENDPOINT", OsStr::new(&hub.url)),
        ("HF_HUB_OFFLINE", OsStr::new("1")),
    ];
    let stderr = env.serve(&["-hf", "owner/model-GGUF:q8_0"], &offline);
    assert!(stderr.contains(&line), "{stderr}");
    assert_eq!(hub.requests().len(), before, "{}", hub.requests());

    // The hub unreachable: the cache still serves.
    let unreachable = [("HF_ENDPOINT", OsStr::new("http://127.0.0.1:9"))];
    let stderr = env.serve(&["-hf", "owner/model-GGUF:q8_0"], &unreachable);
    assert!(stderr.contains("cannot be reached"), "{stderr}");
    assert!(stderr.contains(&line), "{stderr}");
}

#[test]
fn offline_without_the_model_names_the_repository_and_the_cache() {
    let env = HfEnv::new("hf-env-offline-miss");
    let offline = [("HF_HUB_OFFLINE", OsStr::new("1"))];
    let stderr = env.serve(&["-hf", "owner/absent-GGUF:Q4_K_M"], &offline);
    let expected = format!(
        "owner/absent-GGUF is not in the Hugging Face cache {} and HF_HUB_OFFLINE is set",
        env.cache.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn a_cache_the_python_client_wrote_is_read_and_its_tag_picks_the_quant() {
    let _turn = one_at_a_time();
    let hub = LocalHub::start("hf-hub-python", &[("owner/multi-GGUF", quants())]);
    let env = HfEnv::new("hf-env-python");
    let python = test_python(&[("huggingface_hub", "huggingface_hub")]);
    let script = "import sys\nfrom huggingface_hub import hf_hub_download\n\
                  for name in sys.argv[1:]:\n    hf_hub_download('owner/multi-GGUF', name)\n";
    run(Command::new(&python)
        .args(["-c", script])
        .args([
            "README.md",
            "model-Q2_K.gguf",
            "model-Q4_K_M.gguf",
            "model-Q8_0.gguf",
        ])
        .env("HF_ENDPOINT", &hub.url)
        .env("HF_HOME", &env.home)
        .env("HF_HUB_CACHE", &env.cache)
        .env("HF_HUB_DISABLE_TELEMETRY", "1"));
    let snapshot = env.snapshot("owner/multi-GGUF");
    let offline = [("HF_HUB_OFFLINE", OsStr::new("1"))];
    for (tag, file) in [
        ("", "model-Q4_K_M.gguf"),
        (":Q8_0", "model-Q8_0.gguf"),
        (":q2_k", "model-Q2_K.gguf"),
    ] {
        let spec = format!("owner/multi-GGUF{tag}");
        let stderr = env.serve(&["-hf", &spec], &offline);
        let line = chosen(&spec, file, &snapshot.join(file));
        assert!(stderr.contains(&line), "{stderr}");
    }
    let stderr = env.serve(&["-hf", "owner/multi-GGUF:Q5_K_M"], &offline);
    assert!(
        stderr.contains(
            "none of its GGUF files is quantized as Q5_K_M; give one of these with :TAG or \
             --hf-file: model-Q2_K.gguf, model-Q4_K_M.gguf, model-Q8_0.gguf"
        ),
        "{stderr}"
    );
}

#[test]
fn a_download_the_python_client_left_unfinished_is_resumed() {
    let files = vec![
        ("model-Q4_K_M.gguf", gguf("old-client")),
        ("model-Q8_0.gguf", gguf("new-client")),
        ("model-Q2_K.gguf", gguf("corrupt")),
    ];
    let hub = LocalHub::start("hf-hub-resume", &[("owner/resume-GGUF", files.clone())]);
    let env = HfEnv::new("hf-env-resume");
    let blobs = env.repo("owner/resume-GGUF").join("blobs");
    std::fs::create_dir_all(&blobs).expect("created");
    // What an interrupted huggingface_hub leaves: the bytes so far in
    // blobs/<etag>.incomplete before 2.0, in blobs/<etag>.<8 hex>.incomplete since; the
    // third holds bytes that are not the file's.
    let partials = [
        ("q4_k_m", "{etag}.incomplete", &files[0].1),
        ("q8_0", "{etag}.1a2b3c4d.incomplete", &files[1].1),
        ("q2_k", "{etag}.incomplete", &gguf("not-the-file")),
    ];
    let endpoint = [("HF_ENDPOINT", OsStr::new(&hub.url))];
    for ((tag, name, partial), (file, content)) in partials.into_iter().zip(&files) {
        let etag = sha256(content);
        let half = content.len() / 2;
        let partial_path = blobs.join(name.replace("{etag}", &etag));
        std::fs::write(&partial_path, &partial[..half]).expect("written");

        let stderr = env.serve(&["-hf", &format!("owner/resume-GGUF:{tag}")], &endpoint);
        assert!(
            stderr.contains("resuming the unfinished download"),
            "{stderr}"
        );
        let resumed = format!("GET /owner/resume-GGUF/resolve/main/{file} bytes={half}-");
        let requests = hub.requests();
        assert!(
            requests.contains(&resumed),
            "the download of {file} goes on from byte {half}:\n{requests}"
        );
        assert_eq!(
            std::fs::read(blobs.join(&etag)).expect("the blob"),
            *content
        );
        assert!(!partial_path.exists(), "{}", partial_path.display());
        let afresh = stderr.contains("downloading it afresh");
        assert_eq!(afresh, tag == "q2_k", "{stderr}");
    }
}

#[test]
fn a_split_model_comes_whole_and_its_first_part_is_served() {
    let parts = vec![
        ("Q4_K_M/big-Q4_K_M-00001-of-00002.gguf", gguf("part1")),
        ("Q4_K_M/big-Q4_K_M-00002-of-00002.gguf", gguf("part2")),
        ("big-Q8_0.gguf", gguf("q8")),
    ];
    let hub = LocalHub::start("hf-hub-split", &[("owner/big-GGUF", parts)]);
    let env = HfEnv::new("hf-env-split");
    let endpoint = [("HF_ENDPOINT", OsStr::new(&hub.url))];
    let stderr = env.serve(&["-hf", "owner/big-GGUF"], &endpoint);
    let snapshot = env.snapshot("owner/big-GGUF");
    let first = "Q4_K_M/big-Q4_K_M-00001-of-00002.gguf";
    let line = chosen("owner/big-GGUF", first, &snapshot.join(first));
    assert!(stderr.contains(&line), "{stderr}");
    let second = snapshot.join("Q4_K_M/big-Q4_K_M-00002-of-00002.gguf");
    assert_eq!(
        std::fs::read(second).expect("part 2 beside part 1"),
        gguf("part2")
    );

    // `--hf-file` (`-hff`) names a file outright.
    let stderr = env.serve(
        &["-hf", "owner/big-GGUF", "-hff", "big-Q8_0.gguf"],
        &endpoint,
    );
    let line = chosen(
        "owner/big-GGUF",
        "big-Q8_0.gguf",
        &snapshot.join("big-Q8_0.gguf"),
    );
    assert!(stderr.contains(&line), "{stderr}");
}

#[test]
fn a_repository_without_gguf_or_missing_is_a_clear_error() {
    let hub = LocalHub::start(
        "hf-hub-errors",
        &[(
            "owner/safetensors-only",
            vec![
                ("config.json", b"{}".to_vec()),
                ("model.safetensors", b"weights".to_vec()),
            ],
        )],
    );
    let env = HfEnv::new("hf-env-errors");
    let endpoint = [("HF_ENDPOINT", OsStr::new(&hub.url))];
    let stderr = env.serve(&["-hf", "owner/safetensors-only"], &endpoint);
    assert!(
        stderr.contains("owner/safetensors-only (on http://127.0.0.1:")
            && stderr.contains(
                "it holds no GGUF model file, so it cannot be served (its files: config.json, \
             model.safetensors)"
            ),
        "{stderr}"
    );
    let stderr = env.serve(&["-hf", "owner/nothing-here"], &endpoint);
    assert!(
        stderr.contains("owner/nothing-here: the hub at")
            && stderr.contains("answered 404: no such repository, or one you may not read"),
        "{stderr}"
    );
    let stderr = env.serve(&["-hf", "not-a-repo"], &endpoint);
    assert!(
        stderr.contains("expected a Hugging Face repository as owner/repo[:QUANT]"),
        "{stderr}"
    );
}

/// The default model served by its Hugging Face name from a cache laid out as the Python
/// client lays it out (its blob a link to the model file), offline: clients know it by
/// the `-hf` argument, the dialect comes from the GGUF's own template, and a required
/// call comes back. Built with the `llama` feature only.
#[cfg(feature = "llama")]
#[test]
fn the_default_model_is_served_by_its_hugging_face_name() {
    use crate::common::serve::{weather_question, ServeProcess};
    use crate::common::{default_model, DEFAULT_MODEL_SHA256};
    use serde_json::Value;

    let _turn = one_at_a_time();
    let env = HfEnv::new("hf-env-real");
    let repo = "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF";
    let folder = env.repo(repo);
    let commit = "7f1c6ad5e2bd1e4b3e7e9d1a7c1b1d0e8a3f2c11";
    let snapshot = folder.join("snapshots").join(commit);
    std::fs::create_dir_all(folder.join("blobs")).expect("created");
    std::fs::create_dir_all(folder.join("refs")).expect("created");
    std::fs::create_dir_all(&snapshot).expect("created");
    std::os::unix::fs::symlink(
        default_model(),
        folder.join("blobs").join(DEFAULT_MODEL_SHA256),
    )
    .expect("linked");
    std::os::unix::fs::symlink(
        format!("../../blobs/{DEFAULT_MODEL_SHA256}"),
        snapshot.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
    )
    .expect("linked");
    std::fs::write(folder.join("refs/main"), commit).expect("written");

    let spec = format!("{repo}:q4_k_m");
    let server = ServeProcess::start(
        &["-hf", &spec],
        &[
            ("HF_HOME", env.home.as_path()),
            ("HF_HUB_CACHE", env.cache.as_path()),
            ("HF_HUB_OFFLINE", Path::new("1")),
        ],
    );
    let serving = server.serving();
    assert!(
        serving.starts_with(&format!("serving {spec} (dialect hermes)")),
        "{serving}"
    );
    let request = weather_question(&spec, false);
    let answer: Value = ureq::post(&format!("{}/v1/chat/completions", server.base_url))
        .send_json(request)
        .expect("an answer")
        .into_json()
        .expect("JSON");
    assert_eq!(answer["model"], spec.as_str(), "{answer}");
    let call = &answer["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{answer}");
}
