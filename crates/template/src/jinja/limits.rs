//! Bounds on one render of an untrusted template.
//!
//! A chat template is code from whoever published the model. Each bound below turns one
//! way of running away into a clear error: fuel (instructions executed) stops infinite
//! and exponential loops, the recursion limit stops self-calling macros, the output cap
//! stops a render that writes without end, and minijinja itself refuses `range` over
//! more than 100 000 items and string repetition past 100 MB.

use minijinja::Environment;
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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 50_000_000,
            max_recursion: 200,
            max_output_bytes: 64 << 20,
        }
    }
}

/// Sets the environment-wide bounds.
pub fn apply(env: &mut Environment<'static>, limits: &Limits) {
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.max_recursion);
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
