//! Bounds on one render of an untrusted template.
//!
//! A chat template is code from whoever published the model. Each bound below turns one
//! way of running away into a clear error: fuel (instructions executed) stops infinite
//! and exponential loops, the recursion limit stops self-calling macros, the output cap
//! stops a render that writes without end, and minijinja itself refuses `range` over
//! more than 100 000 items and string repetition past 100 MB.
//!
//! Fuel does not bound memory: `{% set s = s ~ s %}` doubles a string per instruction.
//! The byte budget does: every string, list and map built for the template is charged
//! against it before it is built (our patch of minijinja in `vendor/minijinja` charges
//! operators, literals, captured output, call results and its filters that can build
//! more than they are given; our own filters and `str` methods charge what they build,
//! see [`super::pymethods`]). The depth bound
//! keeps values shallow enough to print, compare and drop without overflowing the stack.

use minijinja::{Environment, Error, ErrorKind, State};
use std::io;

/// The bounds for one render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Instructions one render may execute. Real chat templates use well under 1% of
    /// the default on long conversations.
    pub fuel: u64,
    /// Nesting of macro calls, includes and recursive loops.
    pub max_recursion: usize,
    /// Bytes one render may write.
    pub max_output_bytes: usize,
    /// Bytes of strings, lists and maps one render may build, counted as they are
    /// built (a string rebuilt in a loop counts each time), and the most that one
    /// value may print to. It bounds the memory a render holds: the hostile templates
    /// of `tests/hostile.rs` stop under 350 MiB resident. Every render of the corpus
    /// builds under 128 KiB (`tests/limits_corpus.rs`). `u64::MAX` turns it off.
    pub max_built_bytes: u64,
    /// How deep values may nest, those given to the template and those it builds.
    /// `usize::MAX` turns it off.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 50_000_000,
            max_recursion: 200,
            max_output_bytes: 64 << 20,
            max_built_bytes: 256 << 20,
            max_depth: 256,
        }
    }
}

/// Sets the environment-wide bounds.
pub fn apply(env: &mut Environment<'static>, limits: &Limits) {
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.max_recursion);
    env.set_byte_budget(Some(limits.max_built_bytes).filter(|&b| b != u64::MAX));
    env.set_max_value_depth(Some(limits.max_depth).filter(|&d| d != usize::MAX));
}

/// Bytes a filter may still build in this render.
pub fn bytes_left(state: &State) -> usize {
    state.bytes_left().map_or(usize::MAX, |left| {
        usize::try_from(left).unwrap_or(usize::MAX)
    })
}

/// The error of a value that would outgrow the byte budget.
pub fn too_large() -> Error {
    Error::new(
        ErrorKind::ValueLimit,
        "the template built a value larger than the bytes left to this render",
    )
}

/// Whether `json` nests containers more than `max_depth` deep; walks without
/// recursion, so any depth is safe to ask about.
pub fn json_nests_deeper(json: &serde_json::Value, max_depth: usize) -> bool {
    let mut pending = vec![(json, 0)];
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match value {
            serde_json::Value::Array(items) => Box::new(items.iter()),
            serde_json::Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= max_depth {
            return true;
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// The error of a value nested past [`Limits::max_depth`].
pub fn too_deep(max_depth: usize) -> Error {
    Error::new(
        ErrorKind::ValueLimit,
        format!("the template was given values nested more than {max_depth} deep"),
    )
}

/// A sink that refuses to grow past its cap; the render then fails with an I/O error
/// and [`BoundedOutput::overflowed`] says why.
pub struct BoundedOutput {
    buffer: Vec<u8>,
    cap: usize,
    overflowed: bool,
}

impl BoundedOutput {
    pub fn new(cap: usize) -> BoundedOutput {
        BoundedOutput {
            buffer: Vec::new(),
            cap,
            overflowed: false,
        }
    }

    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub fn into_string(self) -> String {
        String::from_utf8(self.buffer)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
    }
}

impl io::Write for BoundedOutput {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buffer.len() + bytes.len() > self.cap {
            self.overflowed = true;
            return Err(io::Error::other("render output limit reached"));
        }
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
