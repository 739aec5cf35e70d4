//! Every dialect's stream parser on any text, cut anywhere: the message it reads is the
//! same whole, cut at fuzz-chosen points and fed one char at a time, and its events keep
//! the order contract on the way. A server sees whatever cuts its
//! engine makes, so one cut that reads differently loses or garbles some user's call.
//!
//! Input: byte 0 picks the dialect (registry order), byte 1 mod 8 is how many cut bytes
//! follow, each placing a cut at its share of the text's length; the rest is the text
//! (invalid UTF-8 replaced, as an engine's detokenizer would).

use std::borrow::Cow;
use std::sync::OnceLock;

use toolbridge_chat::Message;
use toolbridge_dialect::{assemble, Registry, SequentialIds, StreamParser};

/// The most cuts one input places.
const MAX_CUTS: u8 = 8;

pub fn stream_parser(data: &[u8]) {
    let Some((pick, cuts, text)) = split_input(data) else {
        return;
    };
    let registry = registry();
    let names = registry.names();
    let name = names[usize::from(pick) % names.len()];
    let dialect = registry.get(name).expect("a registered name");
    let read = |pieces: &[&str]| message_of(name, dialect.parser().as_mut(), pieces);

    let whole = read(&[&text]);
    let bounds = bounds(&text, cuts);
    let pieces: Vec<&str> = bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    assert_eq!(read(&pieces), whole, "{name}: cut at {bounds:?}: {text:?}");
    let chars: Vec<&str> = text
        .char_indices()
        .map(|(at, c)| &text[at..at + c.len_utf8()])
        .collect();
    assert_eq!(read(&chars), whole, "{name}: char by char: {text:?}");
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// The dialect byte, the cut bytes and the text of an input.
fn split_input(data: &[u8]) -> Option<(u8, &[u8], Cow<'_, str>)> {
    let (&pick, rest) = data.split_first()?;
    let (&count, rest) = rest.split_first()?;
    let (cuts, text) = rest.split_at(usize::from(count % MAX_CUTS).min(rest.len()));
    Some((pick, cuts, String::from_utf8_lossy(text)))
}

/// Sorted piece bounds of `text`: 0, each cut at its share of the length moved back to a
/// char boundary, and the end.
fn bounds(text: &str, cuts: &[u8]) -> Vec<usize> {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|&cut| {
            let mut at = text.len() * usize::from(cut) / usize::from(u8::MAX);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .chain([0, text.len()])
        .collect();
    bounds.sort_unstable();
    bounds
}

/// The message `parser` reads from `pieces`; `assemble` checks the order contract.
fn message_of(name: &str, parser: &mut dyn StreamParser, pieces: &[&str]) -> Message {
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(parser.push(piece));
    }
    events.extend(parser.finish());
    assemble(events.clone(), SequentialIds::default())
        .unwrap_or_else(|error| panic!("{name}: {error}: {events:?}"))
}
