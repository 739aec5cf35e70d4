//! AFL driver of `toolbridge_fuzz::request`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::request(data));
}
