//! Every input that ever broke a fuzz target, replayed: `regressions/<target>/` holds the
//! crashes the fuzzer found (minimized where that was quick), kept after their fix so the
//! bug stays fixed; `seeds/<target>/` a few inputs of each kind from the seed corpus, so
//! each target's happy path runs too. Stable `cargo test`, no fuzzer needed.
//!
//! Adding a case is adding a file. Each input runs on a thread with a large stack: a debug
//! build's frames are many times a release build's, and the fuzzer runs release code.

use std::fs;
use std::path::{Path, PathBuf};

use toolbridge_fuzz::{Target, TARGETS};

/// Stack for one replay; the hostile-schema tests use the same for the same reason.
const STACK: usize = 256 << 20;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files in `dir`, sorted; none when it does not exist.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a readable entry").path())
            .collect(),
        Err(_) => Vec::new(),
    };
    files.retain(|path| path.is_file());
    files.sort();
    files
}

/// Runs `target` on `path`'s bytes; the panic message when it panics.
fn replay(target: Target, path: &Path) -> Result<(), String> {
    let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || target(&data))
        .expect("a thread")
        .join()
        .map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            format!("{}: {message}", path.display())
        })
}

fn replay_all(folder: &str) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut failures = Vec::new();
    for (name, target) in TARGETS {
        for path in inputs(&crate_dir().join(folder).join(name)) {
            count += 1;
            failures.extend(replay(*target, &path).err());
        }
    }
    (count, failures)
}

#[test]
fn every_crash_found_stays_fixed() {
    let (count, failures) = replay_all("regressions");
    println!("{count} regression inputs replayed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_target_passes_its_seed_sample() {
    for (name, _) in TARGETS {
        let dir = crate_dir().join("seeds").join(name);
        assert!(!inputs(&dir).is_empty(), "no seeds in {}", dir.display());
    }
    let (_, failures) = replay_all("seeds");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_input_folder_names_a_target() {
    for folder in ["regressions", "seeds"] {
        let Ok(entries) = fs::read_dir(crate_dir().join(folder)) else {
            continue;
        };
        for entry in entries {
            let name = entry.expect("a readable entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                TARGETS.iter().any(|(target, _)| *target == name),
                "{folder}/{name} is not a fuzz target"
            );
        }
    }
}
