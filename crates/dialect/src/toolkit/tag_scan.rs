//! Finding literal markers (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`, …) in model
//! output that arrives in pieces of any size.
//!
//! A piece may end halfway through a marker (`<tool_` … `call>`) or halfway through a UTF-8
//! character, so text that could still become a marker, and the first bytes of an unfinished
//! character, are held back until the next piece (or [`TagScanner::finish`]) decides them.
//! Everything else is passed on at once, so content streams without delay. The result does
//! not depend on where the pieces were cut: at each position the longest marker that matches
//! wins, exactly as if the whole output had been scanned in one go.

use crate::error::{DialectError, DialectErrorKind};

/// One decided stretch of output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Output that is not a marker. Invalid UTF-8 comes out as U+FFFD.
    Text(String),
    /// The marker with this index in the list the scanner was built with.
    Marker(usize),
}

/// Where markers are recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// At any position in the output.
    Anywhere,
    /// Only at the very first byte of the output; everything after is text.
    AtStart,
}

/// Splits streamed output into text and markers; see the module docs.
#[derive(Debug, Clone)]
pub struct TagScanner {
    markers: Vec<String>,
    placement: Placement,
    /// Which bytes some marker begins with: a marker is looked for only at those. Matching
    /// every marker at every byte was a sixth of reading a Hermes call (bench parse).
    first_bytes: [bool; 256],
    held: Vec<u8>,
    start_decided: bool,
}

/// Whether more output may still follow what the scanner holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    MoreMayCome,
    Ended,
}

/// What the markers say about the output from one position on.
enum MarkerMatch {
    /// No marker starts here.
    None,
    /// A marker (or a longer one than any that matches) may start here; more output decides.
    Undecided,
    /// The longest marker that starts here.
    Found(usize),
}

impl TagScanner {
    /// A scanner for `markers`; [`Piece::Marker`] reports a marker by its index in this list.
    pub fn new<S: Into<String>>(
        markers: impl IntoIterator<Item = S>,
        placement: Placement,
    ) -> Result<Self, DialectError> {
        let markers: Vec<String> = markers.into_iter().map(Into::into).collect();
        if let Some(index) = markers.iter().position(String::is_empty) {
            return Err(DialectError::from(DialectErrorKind::EmptyMarker { index }));
        }
        Ok(Self {
            first_bytes: first_bytes(markers.iter().map(String::as_str)),
            markers,
            placement,
            held: Vec::new(),
            start_decided: false,
        })
    }

    /// The marker with this index, as given to [`TagScanner::new`].
    pub fn marker(&self, index: usize) -> Option<&str> {
        self.markers.get(index).map(String::as_str)
    }

    /// Feeds the next piece of output; returns what it decided, in order.
    pub fn push(&mut self, piece: impl AsRef<[u8]>) -> Vec<Piece> {
        self.held.extend_from_slice(piece.as_ref());
        self.scan(Input::MoreMayCome)
    }

    /// Ends the output: whatever is still held back is decided now.
    pub fn finish(&mut self) -> Vec<Piece> {
        self.scan(Input::Ended)
    }

    fn scan(&mut self, input: Input) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut text_start = 0;
        let mut position = 0;
        while position < self.held.len() {
            if !self.may_start_marker_at(position) {
                position += 1;
                continue;
            }
            let found = self.match_at(&self.held[position..], input);
            if !matches!(found, MarkerMatch::Undecided) {
                self.start_decided = true;
            }
            match found {
                MarkerMatch::None => position += 1,
                MarkerMatch::Undecided => {
                    push_text(&mut pieces, &self.held[text_start..position]);
                    self.held.drain(..position);
                    return pieces;
                }
                MarkerMatch::Found(index) => {
                    push_text(&mut pieces, &self.held[text_start..position]);
                    pieces.push(Piece::Marker(index));
                    position += self.markers[index].len();
                    text_start = position;
                }
            }
        }
        let text = &self.held[text_start..];
        let decided = match input {
            Input::Ended => text.len(),
            Input::MoreMayCome => without_unfinished_char(text),
        };
        push_text(&mut pieces, &text[..decided]);
        self.held.drain(..text_start + decided);
        pieces
    }

    fn may_start_marker_at(&self, position: usize) -> bool {
        match self.placement {
            Placement::Anywhere => self
                .held
                .get(position)
                .is_some_and(|&byte| self.first_bytes[usize::from(byte)]),
            Placement::AtStart => position == 0 && !self.start_decided,
        }
    }

    fn match_at(&self, rest: &[u8], input: Input) -> MarkerMatch {
        let mut longest: Option<usize> = None;
        for (index, marker) in self.markers.iter().enumerate() {
            let marker = marker.as_bytes();
            if rest.starts_with(marker) {
                if longest.is_none_or(|best| self.markers[best].len() < marker.len()) {
                    longest = Some(index);
                }
            } else if input == Input::MoreMayCome && marker.starts_with(rest) {
                // `rest` is a proper prefix of this marker, so the marker is longer than any
                // that matches here: only more output can say which one it is.
                return MarkerMatch::Undecided;
            }
        }
        longest.map_or(MarkerMatch::None, MarkerMatch::Found)
    }
}

/// Which bytes some of `markers` begins with: elsewhere none can start.
pub fn first_bytes<'a>(markers: impl IntoIterator<Item = &'a str>) -> [bool; 256] {
    let mut first = [false; 256];
    for marker in markers {
        if let Some(&byte) = marker.as_bytes().first() {
            first[usize::from(byte)] = true;
        }
    }
    first
}

/// Appends `bytes` as text, joined to the text before it.
fn push_text(pieces: &mut Vec<Piece>, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    match pieces.last_mut() {
        Some(Piece::Text(previous)) => previous.push_str(&text),
        _ => pieces.push(Piece::Text(text.into_owned())),
    }
}

/// The length of `bytes` without a trailing character whose remaining bytes have not arrived.
fn without_unfinished_char(bytes: &[u8]) -> usize {
    let longest_unfinished = 3;
    let first_candidate = bytes.len().saturating_sub(longest_unfinished);
    (first_candidate..bytes.len())
        .find(|&start| is_unfinished_char(&bytes[start..]))
        .unwrap_or(bytes.len())
}

fn is_unfinished_char(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => false,
        Err(error) => error.valid_up_to() == 0 && error.error_len().is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MARKERS: [&str; 5] = [
        "<tool_call>",
        "</tool_call>",
        "[TOOL_CALLS]",
        "<|python_tag|>",
        "<tool",
    ];

    fn scanner(placement: Placement) -> TagScanner {
        match TagScanner::new(MARKERS, placement) {
            Ok(scanner) => scanner,
            Err(error) => panic!("the test markers are valid: {error}"),
        }
    }

    fn text(value: &str) -> Piece {
        Piece::Text(value.to_owned())
    }

    /// Feeds `pieces` one after another, then finishes; adjacent texts joined.
    fn scan_pieces<'a>(
        placement: Placement,
        pieces: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<Piece> {
        let mut scanner = scanner(placement);
        let mut out = Vec::new();
        for piece in pieces {
            out.extend(scanner.push(piece));
        }
        out.extend(scanner.finish());
        join_texts(out)
    }

    fn join_texts(pieces: Vec<Piece>) -> Vec<Piece> {
        let mut joined: Vec<Piece> = Vec::new();
        for piece in pieces {
            match (joined.last_mut(), piece) {
                (Some(Piece::Text(previous)), Piece::Text(next)) => previous.push_str(&next),
                (_, piece) => joined.push(piece),
            }
        }
        joined
    }

    /// The obvious whole-output scan the streaming one must agree with.
    fn reference_scan(input: &str, placement: Placement) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut rest = input;
        let mut at_start = true;
        while !rest.is_empty() {
            let may_match = placement == Placement::Anywhere || at_start;
            at_start = false;
            let longest = MARKERS
                .iter()
                .enumerate()
                .filter(|(_, marker)| may_match && rest.starts_with(*marker))
                .max_by_key(|(index, marker)| (marker.len(), std::cmp::Reverse(*index)));
            match longest {
                Some((index, marker)) => {
                    pieces.push(Piece::Marker(index));
                    rest = &rest[marker.len()..];
                }
                None => {
                    let width = rest.chars().next().map_or(1, char::len_utf8);
                    push_text(&mut pieces, &rest.as_bytes()[..width]);
                    rest = &rest[width..];
                }
            }
        }
        pieces
    }

    fn reassemble(pieces: &[Piece]) -> String {
        pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.as_str(),
                Piece::Marker(index) => MARKERS[*index],
            })
            .collect()
    }

    #[test]
    fn finds_markers_between_text() {
        let pieces = scan_pieces(
            Placement::Anywhere,
            [b"Hi <tool_call>{}</tool_call> bye".as_slice()],
        );
        assert_eq!(
            pieces,
            [
                text("Hi "),
                Piece::Marker(0),
                text("{}"),
                Piece::Marker(1),
                text(" bye")
            ]
        );
    }

    #[test]
    fn holds_back_a_possible_marker_until_decided() {
        let mut scanner = scanner(Placement::Anywhere);
        assert_eq!(scanner.push("Hi <tool_"), [text("Hi ")]);
        assert_eq!(scanner.push("cal"), []);
        assert_eq!(scanner.push("l>x"), [Piece::Marker(0), text("x")]);
    }

    #[test]
    fn a_near_miss_comes_out_as_text() {
        let mut scanner = scanner(Placement::Anywhere);
        assert_eq!(scanner.push("<tool_cal"), []);
        assert_eq!(scanner.push("x"), [Piece::Marker(4), text("_calx")]);
        assert_eq!(scanner.push("[TOOL"), []);
        assert_eq!(scanner.finish(), [text("[TOOL")]);
    }

    #[test]
    fn the_longest_marker_wins_even_when_a_shorter_one_is_complete() {
        let mut scanner = scanner(Placement::Anywhere);
        assert_eq!(scanner.push("<tool"), []);
        assert_eq!(scanner.finish(), [Piece::Marker(4)]);
    }

    #[test]
    fn holds_back_a_split_character() {
        let bytes = "a€".as_bytes();
        let mut scanner = scanner(Placement::Anywhere);
        assert_eq!(scanner.push(&bytes[..2]), [text("a")]);
        assert_eq!(scanner.push(&bytes[2..]), [text("€")]);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let pieces = scan_pieces(Placement::Anywhere, [b"\xE2\x82<tool_call>".as_slice()]);
        assert_eq!(pieces, [text("\u{FFFD}"), Piece::Marker(0)]);
    }

    #[test]
    fn at_start_only_matches_the_first_byte() {
        let pieces = scan_pieces(Placement::AtStart, [b"[TOOL_CALLS][TOOL_CALLS]".as_slice()]);
        assert_eq!(pieces, [Piece::Marker(2), text("[TOOL_CALLS]")]);
        let pieces = scan_pieces(Placement::AtStart, [b" [TOOL_CALLS]".as_slice()]);
        assert_eq!(pieces, [text(" [TOOL_CALLS]")]);
    }

    #[test]
    fn rejects_an_empty_marker() {
        let error = TagScanner::new(["<a>", ""], Placement::Anywhere).err();
        assert_eq!(
            error.map(|e| *e.kind()),
            Some(DialectErrorKind::EmptyMarker { index: 1 })
        );
    }

    /// Output made of markers, parts of markers and text (ASCII and not).
    fn output() -> impl Strategy<Value = String> {
        let marker = prop::sample::select(MARKERS.to_vec()).prop_map(str::to_owned);
        let partial = (prop::sample::select(MARKERS.to_vec()), 1..12usize)
            .prop_map(|(marker, len)| marker[..len.min(marker.len())].to_owned());
        let text = "[a-z <>|_/\\[\\]é€😀]{0,6}";
        let part = prop_oneof![marker, partial, text];
        prop::collection::vec(part, 0..10).prop_map(|parts| parts.concat())
    }

    fn placement() -> impl Strategy<Value = Placement> {
        prop_oneof![Just(Placement::Anywhere), Just(Placement::AtStart)]
    }

    proptest! {
        #[test]
        fn whole_output_agrees_with_the_reference(input in output(), placement in placement()) {
            let pieces = scan_pieces(placement, [input.as_bytes()]);
            prop_assert_eq!(&pieces, &reference_scan(&input, placement));
            prop_assert_eq!(reassemble(&pieces), input);
        }

        #[test]
        fn cutting_at_every_byte_changes_nothing(input in output(), placement in placement()) {
            let whole = scan_pieces(placement, [input.as_bytes()]);
            let bytes = scan_pieces(placement, input.as_bytes().chunks(1));
            prop_assert_eq!(&bytes, &whole);
            let chars: Vec<String> = input.chars().map(String::from).collect();
            let chars = scan_pieces(placement, chars.iter().map(|char| char.as_bytes()));
            prop_assert_eq!(chars, whole);
        }

        #[test]
        fn random_cuts_change_nothing(
            input in output(),
            placement in placement(),
            cuts in prop::collection::vec(0..64usize, 0..8),
        ) {
            let bytes = input.as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(bytes.len())).collect();
            cuts.push(0);
            cuts.push(bytes.len());
            cuts.sort_unstable();
            let pieces = cuts.windows(2).map(|pair| &bytes[pair[0]..pair[1]]);
            prop_assert_eq!(scan_pieces(placement, pieces), scan_pieces(placement, [bytes]));
        }

        #[test]
        fn never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let whole = scan_pieces(Placement::Anywhere, [bytes.as_slice()]);
            prop_assert_eq!(scan_pieces(Placement::Anywhere, bytes.chunks(1)), whole);
        }
    }
}
