//! Models by Hugging Face name: `serve -hf owner/repo[:QUANT]`, as `llama-server -hf` and
//! `ollama run hf.co/owner/repo:QUANT` take them, so a user moving from either names the
//! same model the same way and gets the same file ([`pick`] says which).
//!
//! Files live in the Hugging Face cache, laid out as the hub's Python client lays it out
//! (`models--owner--repo/{blobs,snapshots/<commit>/,refs/main}`), so a model fetched by
//! `huggingface-cli`, `transformers` or a recent llama.cpp is reused, and ours is theirs.
//! The cache is `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
//! `~/.cache/huggingface/hub`, as the Python client finds it. Downloads go through the
//! hub's own Rust client (`hf-hub`, its blocking API), which writes that layout and draws
//! an `indicatif` progress bar; a file already in the snapshot `refs/main` names is used
//! without asking the hub.
//!
//! Which files the repository holds comes from the hub's model API; with
//! `HF_HUB_OFFLINE=1`, or when the hub cannot be reached, it comes from the cached
//! snapshot instead, and a model missing there is an error naming the repository and the
//! cache folder.
//!
//! A download the Python client left unfinished is resumed: `hf-hub` resumes its own
//! partial file (`blobs/<etag>.part`) with a range request, so the Python one is renamed
//! to it first, under the Python client's lock (`.locks/models--owner--repo/<etag>.lock`),
//! so a download it is running now is left alone. `huggingface_hub` before 2.0 leaves
//! `blobs/<etag>.incomplete` (and resumes it itself); 2.x writes a file of its own per
//! process, `blobs/<etag>.<8 hex>.incomplete`, removed when the download fails but left
//! when the process is killed. Neither promises its bytes are a prefix of the file (a Xet
//! download writes where it likes), so a resumed blob whose etag is a sha256 (every LFS
//! file, so every GGUF) is hashed once complete, and downloaded afresh if it differs.
//!
//! The token (gated and private repositories) is `--hf-token`, else `$HF_TOKEN`, else the
//! file `huggingface-cli login` writes (`$HF_TOKEN_PATH`, else `$HF_HOME/token`).

mod pick;

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use hf_hub::api::sync::{ApiBuilder, ApiError};
use hf_hub::{Cache, Repo};

use crate::default_model::sha256_hex;
use crate::model_source::ModelSource;

/// Where the hub is and how to use it, as the environment and flags say.
pub struct Hub {
    /// The cache folder (`…/huggingface/hub`).
    pub cache: PathBuf,
    /// The hub's base URL (`$HF_ENDPOINT`, else `https://huggingface.co`).
    pub endpoint: String,
    pub token: Option<String>,
    /// Use the cache only (`HF_HUB_OFFLINE`).
    pub offline: bool,
}

impl Hub {
    /// The hub as the Python client's environment variables configure it; `token` is the
    /// flag's (or `$HF_TOKEN`'s), before the token file.
    pub fn from_env(token: Option<String>) -> Result<Hub> {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let home = match var("HF_HOME") {
            Some(home) => PathBuf::from(home),
            None => var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))
                .context("cannot find the Hugging Face cache: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME or HOME is set")?
                .join("huggingface"),
        };
        let cache = var("HF_HUB_CACHE")
            .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
            .map_or_else(|| home.join("hub"), PathBuf::from);
        let token_file = var("HF_TOKEN_PATH").map_or_else(|| home.join("token"), PathBuf::from);
        let token = token.filter(|token| !token.is_empty()).or_else(|| {
            fs::read_to_string(token_file)
                .ok()
                .map(|text| text.trim().to_owned())
                .filter(|token| !token.is_empty())
        });
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|url| !url.is_empty())
            .unwrap_or_else(|| "https://huggingface.co".to_owned());
        let offline = std::env::var("HF_HUB_OFFLINE").is_ok_and(|value| {
            matches!(
                value.to_ascii_uppercase().as_str(),
                "1" | "ON" | "YES" | "TRUE"
            )
        });
        Ok(Hub {
            cache,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            token,
            offline,
        })
    }
}

/// What `-hf` names: a repository and, after a colon, a quant tag. Ollama's way of
/// writing it, `hf.co/owner/repo:QUANT`, is taken too.
#[derive(Debug, PartialEq)]
struct Spec<'a> {
    repo: &'a str,
    tag: Option<&'a str>,
}

impl<'a> Spec<'a> {
    fn parse(spec: &'a str) -> Result<Spec<'a>> {
        let bare = ["hf.co/", "huggingface.co/"]
            .iter()
            .find_map(|host| spec.strip_prefix(host))
            .unwrap_or(spec);
        let (repo, tag) = match bare.rsplit_once(':') {
            Some((repo, tag)) => (repo, Some(tag).filter(|tag| !tag.is_empty())),
            None => (bare, None),
        };
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        };
        match repo.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Spec { repo, tag }),
            _ => bail!("-hf {spec}: expected a Hugging Face repository as owner/repo[:QUANT]"),
        }
    }
}

/// The model `-hf spec` names (`file`: `--hf-file`), fetched into the cache unless it is
/// there; its name is `spec`, as written.
pub fn resolve(hub: &Hub, spec: &str, file: Option<&str>) -> Result<ModelSource> {
    let parsed = Spec::parse(spec)?;
    let repo = Repo::model(parsed.repo.to_owned());
    let cached = Cache::new(hub.cache.clone()).repo(repo.clone());
    let folder = hub.cache.join(repo.folder_name());
    let listing = list(hub, &repo, &folder)?;
    let choice = match file {
        Some(file) => pick::by_name(&listing.files, file),
        None => pick::by_tag(&listing.files, parsed.tag),
    }
    .with_context(|| format!("{} ({})", parsed.repo, listing.source))?;
    let mut paths = Vec::new();
    for part in &choice.parts {
        paths.push(match cached.get(part) {
            Some(path) => path,
            None if listing.online => download(hub, &repo, &folder, part)?,
            None => bail!(
                "{}: {part} is listed in the cache but not there",
                parsed.repo
            ),
        });
    }
    let weights = paths[0].clone();
    eprintln!(
        "toolbridge: {spec} is {} ({})",
        choice.first(),
        weights.display()
    );
    let mut source = ModelSource::gguf(weights);
    source.name = Some(spec.to_owned());
    Ok(source)
}

/// A repository's files, and where the list came from.
struct Listing {
    files: Vec<String>,
    /// Whether the hub answered (so missing files can be downloaded).
    online: bool,
    /// "on URL" or "cached in DIR", for errors.
    source: String,
}

/// The files of `repo`: the hub's list, else (offline, or the hub unreachable) the cached
/// snapshot's.
fn list(hub: &Hub, repo: &Repo, folder: &Path) -> Result<Listing> {
    let id = repo.url();
    if !hub.offline {
        match api(hub)?.repo(repo.clone()).info() {
            Ok(info) => {
                let mut files: Vec<String> = info
                    .siblings
                    .into_iter()
                    .map(|file| file.rfilename)
                    .collect();
                files.sort();
                return Ok(Listing {
                    files,
                    online: true,
                    source: format!("on {}", hub.endpoint),
                });
            }
            Err(error) => refused(&error, hub, &id)?,
        }
        eprintln!(
            "toolbridge: the hub at {} cannot be reached; looking for {id} in the cache {}",
            hub.endpoint,
            hub.cache.display()
        );
    }
    let why = if hub.offline {
        "HF_HUB_OFFLINE is set"
    } else {
        "the hub cannot be reached"
    };
    let files = cached_files(folder).with_context(|| {
        format!(
            "{id} is not in the Hugging Face cache {} and {why}",
            hub.cache.display()
        )
    })?;
    Ok(Listing {
        files,
        online: false,
        source: format!("cached in {}", folder.display()),
    })
}

/// Fails with the hub's answer when it answered with an error; returns when it could not
/// be reached at all (then the cache may still serve).
fn refused(error: &ApiError, hub: &Hub, id: &str) -> Result<()> {
    let ApiError::RequestError(request) = error else {
        bail!("{id}: the hub at {} answered oddly: {error}", hub.endpoint);
    };
    match request.as_ref() {
        ureq::Error::Transport(_) => Ok(()),
        ureq::Error::Status(status @ (401 | 403 | 404), _) => {
            let token = if hub.token.is_some() {
                "the token given does not open it"
            } else {
                "give a token with --hf-token or HF_TOKEN if it is gated or private"
            };
            bail!(
                "{id}: the hub at {} answered {status}: no such repository, or one you may not \
                 read ({token})",
                hub.endpoint
            )
        }
        ureq::Error::Status(status, _) => {
            bail!("{id}: the hub at {} answered {status}", hub.endpoint)
        }
    }
}

/// The files of the snapshot `refs/main` names in a cached repository `folder`.
fn cached_files(folder: &Path) -> Result<Vec<String>> {
    let reference = folder.join("refs/main");
    let commit =
        fs::read_to_string(&reference).with_context(|| format!("no {}", reference.display()))?;
    let snapshot = folder.join("snapshots").join(commit.trim());
    let mut files = Vec::new();
    walk(&snapshot, &snapshot, &mut files)
        .with_context(|| format!("cannot read the snapshot {}", snapshot.display()))?;
    files.sort();
    Ok(files)
}

/// Collects the files under `dir` (symbolic links to blobs that exist) as paths relative
/// to `root`, with `/` between folders as the hub writes them.
fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(root, &path, files)?;
        } else if path.is_file() {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<_> = relative.iter().map(|part| part.to_string_lossy()).collect();
            files.push(parts.join("/"));
        }
    }
    Ok(())
}

/// Downloads `file` of `repo` into the cache with a progress bar, resuming what an earlier
/// download left.
fn download(hub: &Hub, repo: &Repo, folder: &Path, file: &str) -> Result<PathBuf> {
    let id = repo.url();
    let resumed = resumable_downloads(folder);
    eprintln!(
        "toolbridge: downloading {id}/{file} from {} into {}",
        hub.endpoint,
        hub.cache.display()
    );
    let api = api(hub)?.repo(repo.clone());
    let fetch = || {
        api.download(file)
            .with_context(|| format!("cannot download {file} of {id} from {}", hub.endpoint))
    };
    let pointer = fetch()?;
    if resumed_wrongly(&pointer, &resumed)? {
        return fetch();
    }
    Ok(pointer)
}

/// The etags of the blobs in `folder` whose download `hf-hub` will resume, after renaming
/// to its name a download the Python client left unfinished (see the module docs) for
/// each blob that has none of `hf-hub`'s; one the Python client is running now stays.
fn resumable_downloads(folder: &Path) -> Vec<String> {
    let blobs = folder.join("blobs");
    let locks = folder
        .with_file_name(".locks")
        .join(folder.file_name().unwrap_or_default());
    let names = |suffix: &str| -> Vec<(PathBuf, String)> {
        let Ok(entries) = fs::read_dir(&blobs) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter_map(|path| {
                let name = path.file_name()?.to_str()?.strip_suffix(suffix)?;
                let etag = name.split('.').next().unwrap_or(name).to_owned();
                Some((path, etag))
            })
            .collect()
    };
    for (path, etag) in names(".incomplete") {
        let ours = blobs.join(format!("{etag}.part"));
        // Held while renaming, so the Python client cannot start on the file meanwhile.
        let lock = File::open(locks.join(format!("{etag}.lock"))).ok();
        if ours.exists() || lock.as_ref().is_some_and(|lock| lock.try_lock().is_err()) {
            continue;
        }
        match fs::rename(&path, &ours) {
            Ok(()) => eprintln!(
                "toolbridge: resuming the unfinished download {}",
                path.display()
            ),
            Err(error) => eprintln!("toolbridge: cannot resume {}: {error}", path.display()),
        }
    }
    names(".part").into_iter().map(|(_, etag)| etag).collect()
}

/// Whether the blob behind `pointer`, if its download was resumed (its etag among
/// `resumed`), is not what its name (a sha256) says; then it and `pointer` are removed.
fn resumed_wrongly(pointer: &Path, resumed: &[String]) -> Result<bool> {
    let blob = fs::canonicalize(pointer)
        .with_context(|| format!("cannot follow {}", pointer.display()))?;
    let Some(etag) = blob.file_name().and_then(|name| name.to_str()) else {
        return Ok(false);
    };
    let sha256 = etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit());
    if !sha256 || !resumed.iter().any(|resumed| resumed == etag) {
        return Ok(false);
    }
    let sum = sha256_hex(&blob)?;
    if sum == etag {
        return Ok(false);
    }
    eprintln!(
        "toolbridge: the resumed {} has sha256 {sum}, not {etag}; downloading it afresh",
        pointer.display()
    );
    fs::remove_file(&blob).with_context(|| format!("cannot remove {}", blob.display()))?;
    fs::remove_file(pointer).with_context(|| format!("cannot remove {}", pointer.display()))?;
    Ok(true)
}

/// The hub's client for `hub`.
fn api(hub: &Hub) -> Result<hf_hub::api::sync::Api> {
    ApiBuilder::from_cache(Cache::new(hub.cache.clone()))
        .with_endpoint(hub.endpoint.clone())
        .with_token(hub.token.clone())
        .with_progress(true)
        .build()
        .context("cannot set up the Hugging Face client")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_a_repository_and_an_optional_tag() {
        let spec = |repo, tag| Spec { repo, tag };
        for (written, expected) in [
            ("owner/model-GGUF", spec("owner/model-GGUF", None)),
            (
                "owner/model-GGUF:q4_k_m",
                spec("owner/model-GGUF", Some("q4_k_m")),
            ),
            ("owner/model-GGUF:", spec("owner/model-GGUF", None)),
            (
                "hf.co/owner/m.v2_x:Q8_0",
                spec("owner/m.v2_x", Some("Q8_0")),
            ),
            ("huggingface.co/owner/m", spec("owner/m", None)),
        ] {
            assert_eq!(Spec::parse(written).unwrap(), expected, "{written}");
        }
        for wrong in [
            "model",
            "owner/",
            "/model",
            "a/b/c",
            "owner/mo del",
            "https://x/y",
        ] {
            let error = Spec::parse(wrong).unwrap_err().to_string();
            assert!(error.contains("as owner/repo[:QUANT]"), "{wrong}: {error}");
        }
    }
}
