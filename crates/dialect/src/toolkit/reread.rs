//! Reading a text in place while the reader may give some of it back.
//!
//! The scanner that holds a candidate call in content ([`super::off_format`]) gives its
//! text back when it turns out to be no call: its first character is content and the rest
//! is read again, before the text that follows. Done by
//! building "what was given back + the rest" as a new string on every step, a whole output
//! is copied once per call it holds. Here the text is read where it lies and only what is
//! given back (at most one candidate) is copied (bench parse, llama3, 1 MB of calls read
//! whole: 7.3 → 152 MB/s).

/// What one step of a reader did with the text it was given.
pub enum Step {
    /// It read this many bytes.
    Read(usize),
    /// It read this many bytes, and gave back this text, to be read again before the rest.
    Again(usize, String),
}

/// Feeds `text` to `step`, each time from where the last step stopped, text given back
/// first, until everything is read.
pub fn read_all(text: &str, mut step: impl FnMut(&str) -> Step) {
    let mut again = String::new();
    let (mut again_at, mut at) = (0, 0);
    loop {
        let in_again = again_at < again.len();
        let source = match (in_again, text.get(at..)) {
            (true, _) => again.get(again_at..).unwrap_or(""),
            (false, Some(rest)) if !rest.is_empty() => rest,
            _ => return,
        };
        match step(source) {
            Step::Read(read) if in_again => again_at += read,
            Step::Read(read) => at += read,
            Step::Again(read, held) if in_again => {
                again = held + again.get(again_at + read..).unwrap_or("");
                again_at = 0;
            }
            Step::Again(read, held) => {
                at += read;
                again = held;
                again_at = 0;
            }
        }
    }
}
