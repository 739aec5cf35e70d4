//! The one shape of every crate's error.
//!
//! Each crate of the house fails in its own kinds (a grammar's syntax, an engine's
//! upstream, a template's render) and callers act on the kind: the server picks an HTTP
//! status and an OpenAI error code, the CLI an exit code. They never match the words.
//! So, as minijinja does, every crate's error is one [`Error`] over that crate's own
//! `#[non_exhaustive]` kind enum: the kind to match on, a detail that says which input
//! failed and how, and the error underneath when one caused it, kept as a value
//! (`std::error::Error::source`) instead of flattened into the words.
//!
//! The words are written once, here: the kind's lead (`"JSON Schema: "`), the detail,
//! and the cause's own words after a colon, the message each error printed before it was
//! made one shape. A printer that walks the chain ([`Error::source`], anyhow's `{:#}`)
//! finds the cause's words already said; the CLI's printer drops them.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// What a crate's kind enum says about itself: the words that open the message.
pub trait Kind: fmt::Debug + Clone + PartialEq + Send + Sync + 'static {
    /// Writes the words before the detail (`"the upstream engine failed: "`); a kind
    /// whose data says everything (a prompt's token count against the context) writes
    /// the whole message and is made with an empty detail. Nothing by default.
    fn write_lead(&self, _out: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

/// The error underneath, shared so that an error stays cheap to clone.
type Cause = Arc<dyn StdError + Send + Sync + 'static>;

/// A crate's error: its kind, the detail, and the cause when there was one. One
/// pointer wide, as minijinja's is, so that a `Result` costs its callers no more stack
/// than the value it carries (parsers that recurse return one per level).
#[derive(Clone)]
pub struct Error<K> {
    repr: Box<Repr<K>>,
}

#[derive(Clone)]
struct Repr<K> {
    kind: K,
    detail: String,
    source: Option<Cause>,
}

impl<K: Kind> Error<K> {
    /// An error of `kind` that says `detail`.
    pub fn new(kind: K, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Error {
            repr: Box::new(Repr {
                kind,
                detail,
                source: None,
            }),
        }
    }

    /// The same error, caused by `source`; its words follow the detail.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.repr.source = Some(Arc::new(source));
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> &K {
        &self.repr.kind
    }

    /// The words that say which input failed and how, without the kind's lead or the
    /// cause's words.
    pub fn detail(&self) -> &str {
        &self.repr.detail
    }
}

/// An error whose kind says everything (its data), with no detail.
impl<K: Kind> From<K> for Error<K> {
    fn from(kind: K) -> Self {
        Error::new(kind, "")
    }
}

impl<K: Kind> fmt::Display for Error<K> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Repr {
            kind,
            detail,
            source,
        } = &*self.repr;
        kind.write_lead(out)?;
        out.write_str(detail)?;
        match source {
            Some(source) if detail.is_empty() => write!(out, "{source}"),
            Some(source) => write!(out, ": {source}"),
            None => Ok(()),
        }
    }
}

impl<K: Kind> fmt::Debug for Error<K> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = self.repr.source.as_ref().map(|s| s.to_string());
        out.debug_struct("Error")
            .field("kind", &self.repr.kind)
            .field("detail", &self.repr.detail)
            .field("source", &cause)
            .finish()
    }
}

/// Two errors are equal when they say the same: kind, detail and the cause's words.
impl<K: Kind> PartialEq for Error<K> {
    fn eq(&self, other: &Self) -> bool {
        let words = |e: &Self| e.repr.source.as_ref().map(|s| s.to_string());
        self.kind() == other.kind()
            && self.detail() == other.detail()
            && words(self) == words(other)
    }
}

impl<K: Kind> StdError for Error<K> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let source = self.repr.source.as_deref();
        source.map(|s| s as &(dyn StdError + 'static))
    }
}

/// Writes `error` and the causes under it, each cause once: a cause whose words the
/// message above already ends with (an [`Error`] says its cause) is not repeated.
pub fn write_chain(error: &(dyn StdError + 'static), out: &mut impl fmt::Write) -> fmt::Result {
    let mut said = error.to_string();
    out.write_str(&said)?;
    let mut cause = error.source();
    while let Some(inner) = cause {
        let words = inner.to_string();
        if !said.ends_with(&words) {
            write!(out, ": {words}")?;
        }
        said = words;
        cause = inner.source();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum Fault {
        Plain,
        Led,
    }

    impl Kind for Fault {
        fn write_lead(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Fault::Plain => Ok(()),
                Fault::Led => out.write_str("led: "),
            }
        }
    }

    fn io(words: &str) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, words)
    }

    #[test]
    fn the_message_is_lead_detail_and_cause() {
        let plain = Error::new(Fault::Plain, "no tools");
        assert_eq!(plain.to_string(), "no tools");
        let led = Error::new(Fault::Led, "cannot read x").with_source(io("gone"));
        assert_eq!(led.to_string(), "led: cannot read x: gone");
        assert_eq!(led.source().unwrap().to_string(), "gone");
        let bare = Error::new(Fault::Led, "").with_source(io("gone"));
        assert_eq!(bare.to_string(), "led: gone");
    }

    #[test]
    fn a_chain_says_each_cause_once() {
        let inner = Error::new(Fault::Plain, "cannot read x").with_source(io("gone"));
        let outer = Error::new(Fault::Led, "loading").with_source(inner);
        let mut chain = String::new();
        write_chain(&outer, &mut chain).unwrap();
        assert_eq!(chain, "led: loading: cannot read x: gone");
    }

    #[test]
    fn equal_errors_say_the_same() {
        let one = Error::new(Fault::Led, "x").with_source(io("a"));
        assert_eq!(one, one.clone());
        assert_ne!(one, Error::new(Fault::Led, "x").with_source(io("b")));
        assert_ne!(one, Error::new(Fault::Plain, "x").with_source(io("a")));
    }
}
