//! Reading a short header that routes what follows it (`superSecretTool\n<|content|>`,
//! `all\n<|content|>`): a name made of a few allowed characters, ended by a separator.
//!
//! A header is decided as early as the text allows, so a model that ignores the format
//! has its text streamed as content at once rather than held until the output ends: as
//! soon as the text read so far cannot be a name followed by (a prefix of) the separator,
//! the header is [`Header::Invalid`]. The decision depends only on the text, never on how
//! it was cut into pieces, so split invariance holds for the parsers built on it.

/// What the text read so far says about the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    /// It may still become a header; more text decides.
    Pending,
    /// A header: its `name`, and the text after the separator.
    Found { name: String, rest: String },
    /// Not a header: all the text read, to be taken as it is.
    Invalid(String),
}

/// Reads one header; see the module docs.
#[derive(Debug, Clone)]
pub struct HeaderReader {
    separator: &'static str,
    allowed: fn(char) -> bool,
    held: String,
}

impl HeaderReader {
    /// A reader of a non-empty name of `allowed` characters ended by `separator`.
    pub fn new(separator: &'static str, allowed: fn(char) -> bool) -> Self {
        HeaderReader {
            separator,
            allowed,
            held: String::new(),
        }
    }

    /// Reads `text`, the output that follows what was read before.
    pub fn push(&mut self, text: &str) -> Header {
        self.held.push_str(text);
        let name_len = self
            .held
            .find(|c: char| !(self.allowed)(c))
            .unwrap_or(self.held.len());
        let after = &self.held[name_len..];
        if name_len > 0 && after.starts_with(self.separator) {
            let rest = after[self.separator.len()..].to_string();
            self.held.truncate(name_len);
            return Header::Found {
                name: std::mem::take(&mut self.held),
                rest,
            };
        }
        if self.separator.starts_with(after) && (name_len > 0 || after.is_empty()) {
            return Header::Pending;
        }
        Header::Invalid(std::mem::take(&mut self.held))
    }

    /// Ends the text: whatever was held is not a header.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader() -> HeaderReader {
        HeaderReader::new("\n<|content|>", |c| c.is_ascii_alphanumeric())
    }

    #[test]
    fn a_header_is_found_however_cut() {
        let text = "say\n<|content|>hi";
        for at in 0..=text.len() {
            let mut reader = reader();
            let (first, second) = text.split_at(at);
            let found = match reader.push(first) {
                Header::Pending => reader.push(second),
                Header::Found { name, rest } => Header::Found {
                    name,
                    rest: rest + second,
                },
                invalid => invalid,
            };
            let expected = Header::Found {
                name: "say".into(),
                rest: "hi".into(),
            };
            assert_eq!(found, expected, "cut at {at}");
        }
    }

    #[test]
    fn text_that_cannot_be_a_header_is_decided_at_once() {
        assert_eq!(
            reader().push("Hello there"),
            Header::Invalid("Hello there".into())
        );
        assert_eq!(
            reader().push("\n<|content|>"),
            Header::Invalid("\n<|content|>".into())
        );
        assert_eq!(
            reader().push("say\n<|x"),
            Header::Invalid("say\n<|x".into())
        );
    }

    #[test]
    fn an_unfinished_header_is_held_until_the_end() {
        let mut reader = reader();
        assert_eq!(reader.push("say\n<|con"), Header::Pending);
        assert_eq!(reader.finish(), "say\n<|con");
    }
}
