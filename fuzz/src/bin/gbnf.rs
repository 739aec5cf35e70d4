//! AFL driver of `toolbridge_fuzz::gbnf`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::gbnf(data));
}
