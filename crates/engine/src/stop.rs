//! Stop strings over a stream of token bytes, shared by every engine.
//!
//! An engine decodes tokens one at a time, and a token's bytes can end in the middle of a
//! UTF-8 character or in the middle of a stop string. Text is only released once it can no
//! longer become part of a stop string and once its characters are whole, so a caller never
//! sees the start of a stop string that is cut away later, nor half a character.
//!
//! When several stop strings appear, the one that *ends* first wins (ties go to the longer
//! one). That is the only rule that gives the same answer however the text is cut into
//! tokens: a stream cannot wait to see whether a longer stop string starting earlier will
//! complete after a shorter one already has.

/// What one [`StopMatcher::push`] releases.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Released {
    /// Text that is now final (possibly empty).
    pub text: String,
    /// Whether a stop string completed: the generation ends, `text` is the last of it.
    pub stopped: bool,
}

/// Cuts a byte stream at the first stop string, releasing only whole characters.
#[derive(Debug, Clone, Default)]
pub struct StopMatcher {
    stops: Vec<String>,
    /// Decoded text that could still be the start of a stop string.
    held: String,
    /// The bytes of an unfinished UTF-8 character.
    partial_char: Vec<u8>,
    stopped: bool,
}

impl StopMatcher {
    /// Empty stop strings are ignored (they would stop before the first byte).
    pub fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            ..Self::default()
        }
    }

    /// Whether a stop string has completed; later pushes release nothing.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Adds the next bytes of output and returns the text that became final.
    pub fn push(&mut self, bytes: &[u8]) -> Released {
        if self.stopped {
            return Released {
                text: String::new(),
                stopped: true,
            };
        }
        self.partial_char.extend_from_slice(bytes);
        self.decode_whole_characters();
        if let Some((start, _)) = self.first_completed_stop() {
            self.held.truncate(start);
            self.stopped = true;
            return Released {
                text: std::mem::take(&mut self.held),
                stopped: true,
            };
        }
        let keep_from = self.start_of_possible_stop();
        let rest = self.held.split_off(keep_from);
        Released {
            text: std::mem::replace(&mut self.held, rest),
            stopped: false,
        }
    }

    /// Ends the stream: returns what was held back. Bytes of an unfinished character
    /// become U+FFFD, as any invalid UTF-8 does.
    pub fn finish(mut self) -> String {
        if self.stopped {
            return String::new();
        }
        self.held
            .push_str(&String::from_utf8_lossy(&self.partial_char));
        self.held
    }

    /// Moves every complete character from `partial_char` to `held`; invalid sequences
    /// become U+FFFD, an unfinished one at the end stays.
    fn decode_whole_characters(&mut self) {
        let mut bytes = self.partial_char.as_slice();
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.held.push_str(text);
                    bytes = &[];
                    break;
                }
                Err(error) => {
                    let (valid, rest) = bytes.split_at(error.valid_up_to());
                    self.held.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(invalid) => {
                            self.held.push(char::REPLACEMENT_CHARACTER);
                            bytes = &rest[invalid..];
                        }
                        None => {
                            bytes = rest;
                            break;
                        }
                    }
                }
            }
        }
        self.partial_char = bytes.to_vec();
    }

    /// The stop string in `held` that ends first (the longer on a tie), as (start, end).
    fn first_completed_stop(&self) -> Option<(usize, usize)> {
        self.stops
            .iter()
            .filter_map(|stop| {
                let start = self.held.find(stop.as_str())?;
                Some((start, start + stop.len()))
            })
            .min_by_key(|&(start, end)| (end, start))
    }

    /// The first character boundary from which the rest of `held` could still grow into
    /// a stop string (`held.len()` when none can).
    fn start_of_possible_stop(&self) -> usize {
        self.held
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &self.held[i..];
                self.stops.iter().any(|stop| stop.starts_with(tail))
            })
            .unwrap_or(self.held.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stops(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Feeds `chunks` and returns every released piece, then the finish.
    fn run(stop_list: &[String], chunks: &[&[u8]]) -> (Vec<String>, bool) {
        let mut matcher = StopMatcher::new(stop_list);
        let mut pieces = Vec::new();
        for chunk in chunks {
            let released = matcher.push(chunk);
            pieces.push(released.text);
            if released.stopped {
                return (pieces, true);
            }
        }
        pieces.push(matcher.finish());
        (pieces, false)
    }

    /// The output the rule in the module docs defines, computed on the whole text.
    fn reference(text: &str, stop_list: &[String]) -> (String, bool) {
        for (end, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
            let candidates = stop_list
                .iter()
                .filter(|s| !s.is_empty() && text[..end].ends_with(s.as_str()));
            if let Some(longest) = candidates.max_by_key(|s| s.len()) {
                return (text[..end - longest.len()].to_string(), true);
            }
        }
        (text.to_string(), false)
    }

    #[test]
    fn holds_back_a_possible_stop_and_cuts_at_the_match() {
        let s = stops(&["</end>"]);
        let (pieces, stopped) = run(&s, &[b"Hello </", b"en", b"d> more"]);
        assert!(stopped);
        assert_eq!(pieces, ["Hello ", "", ""]);
    }

    #[test]
    fn releases_held_text_when_it_stops_looking_like_a_stop() {
        let s = stops(&["</end>"]);
        let (pieces, stopped) = run(&s, &[b"a </", b"b>"]);
        assert!(!stopped);
        assert_eq!(pieces, ["a ", "</b>", ""]);
    }

    #[test]
    fn buffers_a_character_split_across_tokens() {
        let e_acute = "é".as_bytes();
        let (pieces, _) = run(&[], &[b"caf", &e_acute[..1], &e_acute[1..]]);
        assert_eq!(pieces, ["caf", "", "é", ""]);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let (pieces, _) = run(&[], &[b"a\xffb", b"\xe2\x82"]);
        assert_eq!(pieces.concat(), "a\u{fffd}b\u{fffd}");
    }

    #[test]
    fn the_stop_that_ends_first_wins() {
        let s = stops(&["abcd", "bc"]);
        assert_eq!(run(&s, &[b"xabcd"]).0.concat(), "xa");
        assert_eq!(reference("xabcd", &s).0, "xa");
    }

    #[test]
    fn on_a_tie_the_longer_stop_wins() {
        let s = stops(&["c", "abc"]);
        assert_eq!(run(&s, &[b"xab", b"c"]).0.concat(), "x");
    }

    #[test]
    fn empty_stop_strings_are_ignored() {
        let s = stops(&[""]);
        assert_eq!(
            run(&s, &[b"abc"]),
            (vec!["abc".into(), String::new()], false)
        );
    }

    fn text_and_stops() -> impl Strategy<Value = (String, Vec<String>)> {
        // A small alphabet with multi-byte characters makes matches and splits likely.
        let alphabet = prop::sample::select(vec!['a', 'b', '<', '/', 'é', '€', '😀']);
        let word = prop::collection::vec(alphabet.clone(), 0..4)
            .prop_map(|chars| chars.into_iter().collect::<String>());
        (
            prop::collection::vec(alphabet, 0..24)
                .prop_map(|chars| chars.into_iter().collect::<String>()),
            prop::collection::vec(word, 0..3),
        )
    }

    /// Cuts `bytes` at the given points (taken modulo its length), anywhere, even inside
    /// a character.
    fn cut(bytes: &[u8], mut points: Vec<usize>) -> Vec<&[u8]> {
        points.iter_mut().for_each(|p| *p %= bytes.len() + 1);
        points.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for point in points.into_iter().chain([bytes.len()]) {
            chunks.push(&bytes[from..point]);
            from = point;
        }
        chunks
    }

    proptest! {
        #[test]
        fn any_cut_gives_the_reference_output(
            (text, stop_list) in text_and_stops(),
            points in prop::collection::vec(any::<usize>(), 0..8),
        ) {
            let chunks = cut(text.as_bytes(), points);
            let (pieces, stopped) = run(&stop_list, &chunks);
            let (expected, expected_stop) = reference(&text, &stop_list);
            prop_assert_eq!(pieces.concat(), expected);
            prop_assert_eq!(stopped, expected_stop);
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 0..8),
            stop_list in prop::collection::vec(".{0,3}", 0..3),
        ) {
            let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            let (pieces, _) = run(&stop_list, &chunks);
            let all: Vec<u8> = chunks.concat();
            // Valid input comes out unchanged up to the stop; invalid input is replaced,
            // never dropped silently or split.
            if let Ok(text) = std::str::from_utf8(&all) {
                prop_assert_eq!(pieces.concat(), reference(text, &stop_list).0);
            }
        }
    }
}
