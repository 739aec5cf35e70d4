//! AFL driver of `toolbridge_fuzz::stream_parser`.
fn main() {
    afl::fuzz!(|data: &[u8]| toolbridge_fuzz::stream_parser(data));
}
