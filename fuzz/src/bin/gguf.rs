//! AFL driver of `toolbridge_fuzz::gguf`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::gguf(data));
}
