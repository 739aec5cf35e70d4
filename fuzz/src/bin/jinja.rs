//! AFL driver of `toolbridge_fuzz::jinja`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::jinja(data));
}
