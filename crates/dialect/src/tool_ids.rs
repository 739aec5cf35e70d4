//! Ids for tool calls whose syntax carries none.
//!
//! OpenAI clients need an id on every call: a tool result answers its call by
//! `tool_call_id`. Most models write no id, so one is made here, in the shape the model's
//! template will accept when the call comes back in the history: OpenAI's `call_` and 24
//! alphanumerics by default, or the 9 alphanumerics Mistral's templates insist on (they raise
//! on any other id).
//!
//! [`RandomIds`] is for serving: ids only need to differ within a conversation, so a small
//! xorshift generator seeded from the clock and a process-wide counter is enough, and it
//! costs no dependency. It is **not** cryptographically secure; nothing may rely on an id
//! being unguessable. [`SequentialIds`] gives the same ids on every run, for tests and
//! golden files.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The characters of generated ids. Digits come first so that a sequential id is its
/// counter in base 62, padded with `0`.
const ALPHANUMERICS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The shape of a generated id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IdFormat {
    /// `call_` and 24 alphanumerics, as OpenAI writes them.
    #[default]
    OpenAi,
    /// 9 alphanumerics, the only ids Mistral's templates accept.
    Mistral,
}

impl IdFormat {
    /// What every id of this format starts with.
    pub fn prefix(self) -> &'static str {
        match self {
            IdFormat::OpenAi => "call_",
            IdFormat::Mistral => "",
        }
    }

    /// How many alphanumerics follow the prefix.
    pub fn alphanumerics(self) -> usize {
        match self {
            IdFormat::OpenAi => 24,
            IdFormat::Mistral => 9,
        }
    }

    /// Whether `id` has this format's shape (a Mistral history must be checked for it).
    pub fn accepts(self, id: &str) -> bool {
        id.strip_prefix(self.prefix()).is_some_and(|rest| {
            rest.len() == self.alphanumerics() && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        })
    }

    /// An id of this format whose alphanumerics are `digit(0)`, `digit(1)`, … each taken
    /// modulo 62.
    fn build(self, mut digit: impl FnMut(usize) -> u64) -> String {
        let mut id = String::with_capacity(self.prefix().len() + self.alphanumerics());
        id.push_str(self.prefix());
        id.extend((0..self.alphanumerics()).map(|position| alphanumeric(digit(position))));
        id
    }
}

/// The alphanumeric `value` selects, modulo 62.
fn alphanumeric(value: u64) -> char {
    // The remainder is below 62, so the index is in range and the cast loses nothing.
    char::from(ALPHANUMERICS[(value % 62) as usize])
}

/// A source of tool-call ids.
pub trait ToolIds {
    /// A new id.
    fn next_id(&mut self) -> String;

    /// The model's id when it gave a non-empty one, else a new id.
    fn id_or_next(&mut self, given: Option<String>) -> String {
        given
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| self.next_id())
    }
}

/// Random ids, for serving. Not for anything that needs secrecy: see the module docs.
#[derive(Debug, Clone)]
pub struct RandomIds {
    format: IdFormat,
    state: XorShift64,
}

impl RandomIds {
    /// Random ids of `format`, seeded from the clock and a process-wide counter, so two
    /// sources made in the same instant still differ.
    pub fn new(format: IdFormat) -> Self {
        RandomIds {
            format,
            state: XorShift64::seeded(),
        }
    }
}

impl Default for RandomIds {
    /// Random OpenAI-style ids.
    fn default() -> Self {
        RandomIds::new(IdFormat::OpenAi)
    }
}

impl ToolIds for RandomIds {
    fn next_id(&mut self) -> String {
        // `u64 % 62` favours the lowest values by under 1 in 2^58: invisible here.
        self.format.build(|_| self.state.next())
    }
}

/// Ids counting up from zero — `call_000000000000000000000000`, `call_…01`, … or
/// `000000000`, `000000001`, … — the same on every run.
#[derive(Debug, Clone, Default)]
pub struct SequentialIds {
    format: IdFormat,
    next: u64,
}

impl SequentialIds {
    /// Sequential ids of `format`, starting at zero.
    pub fn new(format: IdFormat) -> Self {
        SequentialIds { format, next: 0 }
    }
}

impl ToolIds for SequentialIds {
    fn next_id(&mut self) -> String {
        let count = self.next;
        self.next = self.next.wrapping_add(1);
        let width = self.format.alphanumerics();
        // Base-62 digits of `count`, most significant first.
        self.format
            .build(|position| base62_digit(count, width - 1 - position))
    }
}

/// Digit `place` (0 = least significant) of `value` in base 62.
fn base62_digit(value: u64, place: usize) -> u64 {
    let divisor = u32::try_from(place)
        .ok()
        .and_then(|place| 62u64.checked_pow(place));
    divisor.map_or(0, |divisor| value / divisor % 62)
}

/// Marsaglia's xorshift64* generator: fast, small, statistically fine for ids, predictable
/// to anyone who sees enough of its output.
#[derive(Debug, Clone)]
struct XorShift64(u64);

impl XorShift64 {
    /// A generator seeded from the clock and a process-wide counter.
    fn seeded() -> Self {
        static SOURCES_MADE: AtomicU64 = AtomicU64::new(0);
        let count = SOURCES_MADE.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        // splitmix64 spreads nearby seeds apart; xorshift needs a state other than zero.
        XorShift64(splitmix64(nanos ^ splitmix64(count)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The splitmix64 finalizer: a bijection that scrambles all bits of `value`.
fn splitmix64(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn random_ids_have_their_format() {
        for format in [IdFormat::OpenAi, IdFormat::Mistral] {
            let mut ids = RandomIds::new(format);
            for _ in 0..100 {
                let id = ids.next_id();
                assert!(format.accepts(&id), "{id:?} is not a {format:?} id");
            }
        }
        assert_eq!(RandomIds::default().next_id().len(), "call_".len() + 24);
        assert_eq!(RandomIds::new(IdFormat::Mistral).next_id().len(), 9);
    }

    #[test]
    fn random_ids_do_not_repeat() {
        let mut ids = RandomIds::new(IdFormat::Mistral);
        let drawn: HashSet<String> = (0..10_000).map(|_| ids.next_id()).collect();
        assert_eq!(drawn.len(), 10_000);
    }

    #[test]
    fn sources_made_together_differ() {
        let first = RandomIds::default().next_id();
        let second = RandomIds::default().next_id();
        assert_ne!(first, second);
    }

    #[test]
    fn sequential_ids_count_in_base_62() {
        let mut ids = SequentialIds::new(IdFormat::Mistral);
        let drawn: Vec<String> = (0..63).map(|_| ids.next_id()).collect();
        assert_eq!(drawn[0], "000000000");
        assert_eq!(drawn[1], "000000001");
        assert_eq!(drawn[10], "00000000A");
        assert_eq!(drawn[61], "00000000z");
        assert_eq!(drawn[62], "000000010");
        let mut openai = SequentialIds::default();
        assert_eq!(openai.next_id(), "call_000000000000000000000000");
        assert_eq!(openai.next_id(), "call_000000000000000000000001");
    }

    #[test]
    fn the_models_own_id_is_kept() {
        let mut ids = SequentialIds::default();
        assert_eq!(ids.id_or_next(Some("abc".into())), "abc");
        assert_eq!(ids.id_or_next(None), "call_000000000000000000000000");
        assert_eq!(
            ids.id_or_next(Some(String::new())),
            "call_000000000000000000000001"
        );
    }

    #[test]
    fn accepts_checks_prefix_length_and_characters() {
        assert!(IdFormat::Mistral.accepts("a1B2c3D4e"));
        assert!(!IdFormat::Mistral.accepts("a1B2c3D4"));
        assert!(!IdFormat::Mistral.accepts("a1B2c3D4_"));
        assert!(!IdFormat::OpenAi.accepts("a1B2c3D4e"));
        assert!(!IdFormat::OpenAi.accepts("call_short"));
    }
}
