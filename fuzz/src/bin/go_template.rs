//! AFL driver of `toolbridge_fuzz::go_template`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::go_template(data));
}
