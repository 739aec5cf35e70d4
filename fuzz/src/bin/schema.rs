//! AFL driver of `toolbridge_fuzz::schema`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::schema(data));
}
