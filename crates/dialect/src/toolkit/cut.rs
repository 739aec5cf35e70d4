//! A call region read before it is whole: where the token limit cut it ([`cut_calls`]), or
//! while the model is still writing it ([`calls_so_far`], its calls streamed as they come).
//!
//! Both read the region the same way, with the decoder a whole region has: its text is
//! completed ([`Pat::closing`]) with [`CUT_MARK`] written where the model's text ended, and
//! the completed text is decoded. The calls before the mark are whole; the one it lands in
//! is the call being written: its name is decided once the mark is past it, its arguments
//! are written up to the mark. A decoder that types values from text ([`super::typed_args`])
//! writes [`HELD_MARK`] for a value the mark lands in whose type the rest of the text may
//! still change (`12` may be the number twelve or the start of `12 apples`), so such a value
//! is sent once it is whole.
//!
//! What streams must only ever grow: each reading's arguments must begin with the last
//! one's, and the whole call's with every reading's, since a client cannot take back a
//! fragment. So [`calls_so_far`] sends less than a cut call keeps: nothing where the
//! completion had to finish a token of the model's (a number, a `true`, an escape, the
//! quote a key needs, a closing tag begun), no blank at the end of a string, which a
//! decoder may trim, and no call's end.
//!
//! [`Pat::closing`]: super::pattern::Pat::closing

use crate::toolkit::json_scan::{JsonScanner, Scan};
use crate::toolkit::pattern::{Call, Closing, Region};

/// Written where the output ended when a region is completed: where it lands in the
/// decoded calls says which call was cut and how far its name and arguments were written.
/// Private-use characters, which JSON writes unescaped and no name holds.
pub const CUT_MARK: &str = "\u{E000}cut\u{E001}";

/// Written by a decoder, as a string value, for a value [`CUT_MARK`] lands in whose type is
/// not decided yet: the value is left out of the arguments written so far.
pub const HELD_MARK: &str = "\u{E002}held\u{E003}";

/// The calls of a region: those written whole, and the one the output ended in.
#[derive(Debug, Default)]
pub struct CutCalls {
    pub whole: Vec<Call>,
    pub cut: Option<Call>,
}

impl CutCalls {
    pub fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.cut.is_none()
    }

    /// The calls with the cut one ended: its arguments as written, closed to a whole JSON
    /// value (a region cut by its bound, which no more text can carry on).
    pub fn ended(mut self) -> CutCalls {
        if let Some(mut call) = self.cut.take() {
            call.arguments.push_str(&closing_of(&call.arguments));
            self.whole.push(call);
        }
        self
    }
}

/// What closes `arguments`, JSON cut off somewhere, to a whole value (nothing where it is
/// whole, or no JSON).
pub fn closing_of(arguments: &str) -> String {
    let mut scanner = JsonScanner::new();
    scanner.push(arguments);
    scanner.closing(&mut None).unwrap_or_default()
}

/// The calls in `text`, a region of `region`'s the output ended in while its pattern could
/// still match: the text is completed and decoded as a whole region is. The call
/// [`CUT_MARK`] lands in is the one the output ended in; it keeps its arguments as written
/// up to the mark (the completion's own text before the mark taken off them), and calls
/// after it are dropped. A call whose name or id holds the mark has no name yet: it is
/// dropped too, since a client can do nothing with a call it cannot name. Where the mark
/// landed outside every call (in a key the decoder does not read), the last call is the
/// cut one, its arguments as decoded. `None` when the completed text is no call either.
pub fn cut_calls(region: &Region, text: &str) -> Option<CutCalls> {
    let read = read_cut(region, text)?;
    let cut = read.cut.map(|call| Call {
        arguments: match written_before_mark(&call.arguments) {
            Some(before) if !read.mark_outside => without_completion(before, &read.completion),
            _ => call.arguments,
        },
        ..call
    });
    Some(CutCalls {
        whole: read.whole,
        cut,
    })
}

/// The calls in `text`, a region still being written, as far as they are decided: each
/// with the part of its arguments that no later text can change (possibly none yet), and
/// none ended, not even one the reading finds whole: the closing brace is sent with the
/// call's end, once the region is decided (a mark in an argument's key may read as a call
/// whose arguments end there). Where the completion had to finish a token of the model's
/// first (a number, a `tr`, an escape, the `</` that may open a closing tag or be text),
/// the last call's arguments are not decided at all. `None` while the text decides no call.
pub fn calls_so_far(region: &Region, text: &str) -> Option<Vec<Call>> {
    let read = read_cut(region, text)?;
    let finished_a_token = !read.completion.is_empty() && !read.completion.starts_with(CUT_MARK);
    let mut calls: Vec<Call> = read
        .whole
        .into_iter()
        .map(|call| Call {
            arguments: open_part(&call.arguments).to_string(),
            ..call
        })
        .collect();
    match read.cut {
        Some(call) => calls.push(Call {
            arguments: match read.mark_outside || finished_a_token {
                true => String::new(),
                false => decided_arguments(&call.arguments).to_string(),
            },
            ..call
        }),
        None if finished_a_token => {
            if let Some(last) = calls.last_mut() {
                last.arguments.clear();
            }
        }
        None => {}
    }
    Some(calls)
}

/// A region's text completed and decoded, the call the mark landed in apart.
struct ReadCut {
    whole: Vec<Call>,
    /// The call the output ended in, its arguments as decoded (the mark in them).
    cut: Option<Call>,
    /// The mark landed outside every call (in a key the decoder does not read): the cut
    /// call is the last, its arguments as decoded, whole.
    mark_outside: bool,
    completion: String,
}

fn read_cut(region: &Region, text: &str) -> Option<ReadCut> {
    if text.contains(CUT_MARK) || text.contains(HELD_MARK) {
        return None;
    }
    let mut mark = Some(CUT_MARK);
    let completion = match region.body.closing(text, 0, &mut mark)? {
        Closing::Completed(completion) => completion,
        Closing::Matched(end) if end == text.len() => String::new(),
        Closing::Matched(_) => return None,
    };
    let captures = region.body.captures_of(&[text, &completion].concat())?;
    let mut whole = (region.decode)(&captures)?;
    let marked = whole.iter().position(|call| {
        holds_mark(&call.name)
            || call.id.as_deref().is_some_and(holds_mark)
            || holds_mark(&call.arguments)
    });
    let cut = match marked {
        Some(at) => whole.drain(at..).next().filter(|call| {
            !call.is_text()
                && !holds_mark(&call.name)
                && !call.id.as_deref().is_some_and(holds_mark)
        }),
        None if mark.is_none() => whole.pop(),
        None => None,
    };
    Some(ReadCut {
        whole,
        cut,
        mark_outside: marked.is_none(),
        completion,
    })
}

fn holds_mark(text: &str) -> bool {
    text.contains(CUT_MARK) || text.contains(HELD_MARK)
}

/// `arguments` up to the mark: before [`CUT_MARK`], or before the string that holds
/// [`HELD_MARK`]. `None` when neither is there.
fn written_before_mark(arguments: &str) -> Option<&str> {
    let cut = arguments.find(CUT_MARK);
    let held = arguments
        .find(HELD_MARK)
        .map(|at| at - usize::from(arguments[..at].ends_with('"')));
    let at = match (cut, held) {
        (Some(cut), Some(held)) => cut.min(held),
        (at, None) | (None, at) => at?,
    };
    arguments.get(..at)
}

/// `before`, less the end of `completion`'s text before the mark that it ends with: the
/// completion's own text, where the decoder kept the text as written (`{"a": 1` completed
/// as `{"a": 1,"<mark>":null}`).
fn without_completion(before: &str, completion: &str) -> String {
    let added = completion.split(CUT_MARK).next().unwrap_or_default();
    let ours = (1..=added.len())
        .rev()
        .filter_map(|len| added.get(added.len() - len..))
        .find(|end| before.ends_with(end))
        .map_or(0, str::len);
    before[..before.len() - ours].to_string()
}

/// The part of `arguments` that the rest of the model's text cannot change: the text
/// before the mark, without blanks ending an open string.
fn decided_arguments(arguments: &str) -> &str {
    written_before_mark(arguments).map_or("", open_part)
}

/// `text`, JSON cut off somewhere, as far as it is sent: less the blanks (written or
/// escaped) that end the string it stops in, which a decoder may trim, and less its last
/// byte where it is a whole value: the brace that closes the arguments is sent with the
/// call's end, never before.
fn open_part(text: &str) -> &str {
    let mut scanner = JsonScanner::new();
    if let Scan::Complete { .. } = scanner.push(text) {
        return &text[..text.len() - 1];
    }
    if !scanner.in_string() {
        return text;
    }
    let mut end = text.len();
    loop {
        let rest = &text[..end];
        let blank = [" ", "\\n", "\\r", "\\t"]
            .into_iter()
            .find(|blank| rest.ends_with(blank) && !escaped_at(rest, rest.len() - blank.len()));
        match blank {
            Some(blank) => end -= blank.len(),
            None => return rest,
        }
    }
}

/// Whether the byte at `at` in `text` follows an odd run of backslashes (it is escaped),
/// where `text[at..]` starts with a backslash that escapes what follows it. For a blank
/// written plainly (a space), whether it is a space at all, not an escape's letter.
fn escaped_at(text: &str, at: usize) -> bool {
    let backslashes = text[..at]
        .bytes()
        .rev()
        .take_while(|&byte| byte == b'\\')
        .count();
    backslashes % 2 == 1
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::toolkit::pattern::Pat;

    /// A call as K2 Horizon may write it: one JSON value, or a name on a line of its own;
    /// the decoder takes what either captured for the call's name.
    fn json_or_name() -> Region {
        Region {
            body: Pat::Alt(vec![
                Pat::Seq(vec![Pat::Json, Pat::lit("</c>")]),
                Pat::Seq(vec![Pat::until("\n", 64), Pat::lit("</c>")]),
            ]),
            decode: Arc::new(|captures| Some(vec![Call::new(captures.first()?.clone(), "{}")])),
        }
    }

    #[test]
    fn a_name_that_begins_like_a_json_word_is_not_read_as_the_word() {
        let names =
            |calls: Vec<Call>| -> Vec<String> { calls.into_iter().map(|call| call.name).collect() };
        for text in ["f", "tru", "true", "12"] {
            assert_eq!(
                calls_so_far(&json_or_name(), text).map(names),
                Some(vec![]),
                "{text}"
            );
            let cut = cut_calls(&json_or_name(), text).expect("a region");
            assert!(cut.is_empty(), "{text}: {cut:?}");
        }
        assert_eq!(
            calls_so_far(&json_or_name(), "f5\n").map(names),
            Some(vec!["f5".to_string()])
        );
    }
}
