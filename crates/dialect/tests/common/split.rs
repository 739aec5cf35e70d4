//! The one check every parser's tests make: the message read from a text is the same
//! however the text is cut into pieces (whole, in two at every char, char by char, or at
//! given cuts), and the events keep their order contract on the way. A server sees the
//! cuts its engine happens to make, so a parser that answers differently for one of them
//! loses or garbles a call for some user.

use toolbridge_chat::Message;
use toolbridge_dialect::{assemble, EventOrder, Pacing, SequentialIds, StreamParser};

/// Makes a fresh parser for each reading of the text.
pub type MakeParser<'a> = &'a dyn Fn() -> Box<dyn StreamParser + Send>;

/// How the output ended: by itself, or cut by the token limit (the engine's
/// `finish_reason: length`, [`StreamParser::finish_cut`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Finished,
    Cut,
}

/// The message `parser` reads from `pieces`, its events checked against the order contract.
pub fn message_of<'a>(
    parser: &mut dyn StreamParser,
    pieces: impl IntoIterator<Item = &'a str>,
) -> Message {
    message_ended(parser, pieces, End::Finished)
}

/// [`message_of`] for an output that ended as `end` says.
pub fn message_ended<'a>(
    parser: &mut dyn StreamParser,
    pieces: impl IntoIterator<Item = &'a str>,
    end: End,
) -> Message {
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(parser.push(piece));
    }
    events.extend(match end {
        End::Finished => parser.finish(),
        End::Cut => parser.finish_cut(),
    });
    let mut order = EventOrder::new();
    for event in &events {
        if let Err(error) = order.check(event) {
            panic!("{error}: {events:?}");
        }
    }
    assemble(events, SequentialIds::default()).unwrap_or_else(|error| panic!("{error}"))
}

/// The message `make()`'s parsers read from `text`: the same whole, cut in two at every char
/// boundary, and one char at a time.
pub fn parsed_however_cut(make: MakeParser, text: &str) -> Message {
    ended_however_pieced(make, text, End::Finished)
}

/// [`parsed_however_cut`] for an output that ended as `end` says.
pub fn ended_however_pieced(make: MakeParser, text: &str, end: End) -> Message {
    let whole = message_ended(make().as_mut(), [text], end);
    for (at, _) in text.char_indices() {
        let cut = message_ended(make().as_mut(), [&text[..at], &text[at..]], end);
        assert_eq!(cut, whole, "cut at {at}: {text:?}");
    }
    let chars = text
        .char_indices()
        .map(|(at, c)| &text[at..at + c.len_utf8()]);
    assert_eq!(
        message_ended(make().as_mut(), chars.clone(), end),
        whole,
        "char by char: {text:?}"
    );
    if only_calls(&whole) {
        let mut parser = make();
        parser.set_pacing(Pacing::EveryPiece);
        assert_eq!(
            without_ids(message_ended(parser.as_mut(), chars, end)),
            without_ids(whole.clone()),
            "char by char, calls streamed as written: {text:?}"
        );
    }
    whole
}

/// Whether `message` is calls and no text: an output a grammar held to the call syntax,
/// which the server streams call by call as the model writes it ([`Pacing`]).
fn only_calls(message: &Message) -> bool {
    !message.calls().is_empty() && message.content_text().trim().is_empty()
}

/// `message` with its calls' ids taken out: an id the model writes after a call's arguments
/// comes too late for a call streamed as written, which keeps a generated one.
fn without_ids(mut message: Message) -> Message {
    for call in message.tool_calls.iter_mut().flatten() {
        call.id = None;
    }
    message
}

/// The message `make()`'s parsers read from `text`: the same whole and in pieces of each of
/// `sizes` bytes (a piece that would end inside a char takes the rest of it), for a text
/// too long to be cut at every char (that is quadratic).
pub fn parsed_in_pieces(make: MakeParser, text: &str, sizes: &[usize]) -> Message {
    let whole = message_of(make().as_mut(), [text]);
    for &size in sizes {
        let mut at = 0;
        let pieces = std::iter::from_fn(|| {
            let start = at;
            at = (start + size.max(1)).min(text.len());
            while !text.is_char_boundary(at) {
                at += 1;
            }
            (start < text.len()).then(|| &text[start..at])
        });
        let cut = message_of(make().as_mut(), pieces);
        assert!(cut == whole, "{size}-byte pieces read another message");
    }
    whole
}

/// [`parsed_however_cut`], and the same again with `text` cut at all of `cuts` at once
/// (byte offsets; those past the end or inside a char are left out), as a property test
/// draws them.
pub fn parsed_however_cut_and_at(make: MakeParser, text: &str, cuts: &[usize]) -> Message {
    let whole = parsed_however_cut(make, text);
    let mut bounds: Vec<usize> = cuts
        .iter()
        .copied()
        .filter(|&cut| text.is_char_boundary(cut))
        .chain([0, text.len()])
        .collect();
    bounds.sort_unstable();
    let pieces = bounds.windows(2).map(|pair| &text[pair[0]..pair[1]]);
    assert_eq!(
        message_of(make().as_mut(), pieces),
        whole,
        "cut at {bounds:?}: {text:?}"
    );
    whole
}

/// How many bytes of a marker's start a cut answer may show as text: a marker's start at
/// the end of the output may be prose, and stays text.
const MARKER_START: usize = 32;

/// `answer` cut at points along it, as a token limit cuts it, reads the same however the
/// cut text is pieced (streamed == whole), and as far as it was written: the calls of the
/// whole answer up to the one it ends in, that one under its name with arguments that
/// begin the whole call's (or `{}`, what the dialects read for arguments not begun yet),
/// and no more text than the whole answer's but a marker's start, never a call's markup.
pub fn cut_answers_read_as_far_as_written(make: MakeParser, answer: &str, whole: &Message) {
    let ends: Vec<usize> = (1..7)
        .map(|n| answer.len() * n / 7)
        .filter(|&end| answer.is_char_boundary(end))
        .collect();
    let shown = |message: &Message| {
        message.reasoning_content.clone().unwrap_or_default() + message.content_text().trim_end()
    };
    for end in ends {
        let cut = &answer[..end];
        let read = ended_however_pieced(make, cut, End::Cut);
        let (calls, all) = (read.calls(), whole.calls());
        assert!(calls.len() <= all.len(), "more calls cut at {end}: {cut:?}");
        for (n, call) in calls.iter().enumerate() {
            let (arguments, written) = (
                call.function.arguments.as_json_string(),
                all[n].function.arguments.as_json_string(),
            );
            assert_eq!(call.name(), all[n].name(), "cut at {end}: {cut:?}");
            let last = n + 1 == calls.len();
            let begins = written.starts_with(arguments.as_ref()) || arguments == "{}";
            assert!(
                if last { begins } else { arguments == written },
                "call {n} cut at {end}: {arguments:?} for {written:?} in {cut:?}"
            );
        }
        let (text, full) = (shown(&read), shown(whole));
        let as_written = text.len() < full.len() + MARKER_START;
        assert!(
            as_written,
            "text {text:?}, not {full:?}, cut at {end}: {cut:?}"
        );
    }
}
