//! A call region's text and what it holds: the small pattern language ([`Pat`]) a family
//! writes the text after its opening marker in, matched as far as the text so far allows,
//! and the calls ([`Call`]) its decoder reads out of what the pattern captured.
//!
//! Both readers of a region stand on this: [`super::framed`], which holds a region until
//! its pattern has matched whole, and [`super::cut`], which completes the text of a region
//! not yet whole ([`Pat::closing`]) to read it as far as it goes. A pattern decides as early
//! as the text allows whether it still can match ([`Match`]), and resumes where the last
//! piece stopped instead of reading the region again from its start.

use std::sync::Arc;

use crate::toolkit::json_scan::{Ending, JsonScanner, Scan};
use crate::toolkit::pycall::{self, Bracket, BracketScanner};

/// The longest text held by a pattern that matches any text ([`Pat::Rest`], a
/// [`Pat::Until`] right after a marker): past this it is not a call, so prose after a
/// marker is held for at most this long.
pub const MAX_PROSE: usize = 64 * 1024;

/// A call read out of a region: the tool's name and its arguments as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub arguments: String,
    /// The model's own id for the call, where its syntax carries one.
    pub id: Option<String>,
}

impl Call {
    /// A call without an id.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Call {
            name: name.into(),
            arguments: arguments.into(),
            id: None,
        }
    }

    /// Text a region holds among its calls that is no call (a bad line of MiniMax M1's
    /// list, one call a line): content in its place, set apart from the content before, so
    /// one bad line costs neither the calls around it nor its own text. A call's name is
    /// never empty (every decoder refuses one), so an empty name marks it.
    pub fn text(text: impl Into<String>) -> Self {
        Call::new("", text)
    }

    /// Whether this is [`Call::text`].
    pub fn is_text(&self) -> bool {
        self.name.is_empty()
    }
}

/// Turns a region's captures (in pattern order) into its calls; `None` when the region is
/// not a call after all. `Some(vec![])` is a region that calls nothing (Cohere's
/// `directly-answer`): it is layout.
pub type Decode = Arc<dyn Fn(&[String]) -> Option<Vec<Call>> + Send + Sync>;

/// A call region: the pattern of its text after the opening marker, and its decoder.
#[derive(Clone)]
pub struct Region {
    pub body: Pat,
    pub decode: Decode,
}

/// The shape of a call region's text, matched as far as the text allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pat {
    /// This text.
    Lit(String),
    /// This text, or nothing.
    Opt(String),
    /// Any whitespace, maybe none.
    Ws,
    /// One JSON value (leading whitespace skipped); captured.
    Json,
    /// One bracketed literal, JSON or Python (`{'a': True}`), leading whitespace skipped;
    /// captured whole, for the decoder to read. Only where the brackets pair up is decided
    /// here, so it holds longer than [`Pat::Json`] on text that is neither.
    Literal,
    /// Text up to `delim`, at most `max` bytes; captured, and `delim` consumed. Where one
    /// of `ends` comes first, the text ends there instead and that end is not consumed: the
    /// next tag a model writes after leaving a closing tag out (Qwen3-Coder's
    /// `<parameter=` after a value with no `</parameter>`) is read as that tag, not as
    /// more of the value ([`Pat::until_or`]). Where it `drifts`, a last line that may be
    /// a misspelled `delim` ([`drifted_close`]) is undecided until more follows it.
    Until {
        delim: String,
        max: usize,
        ends: Vec<String>,
        drifts: bool,
    },
    /// A function's name (letters, digits, `_`, `-`, `.`), at most `max` bytes, then
    /// `delim`; the name captured, `delim` consumed. Decided at the first character that is
    /// neither, so a line of prose is not held back as a name might be.
    Name {
        delim: String,
        max: usize,
    },
    /// Everything to the end of the output, at most [`MAX_PROSE`] bytes; captured.
    Rest,
    Seq(Vec<Pat>),
    /// The first alternative that matches or still may (in order).
    Alt(Vec<Pat>),
    /// Zero or more of this, as many as match.
    Repeat(Box<Pat>),
    /// This pattern, captured as the text it matched (its own captures dropped): a region
    /// that holds several calls captures each whole, for its decoder to read one by one.
    Span(Box<Pat>),
    /// This pattern, its captures dropped: text a region reads past (K2 Horizon's declared
    /// type of a value, which the tool's schema gives anyway).
    Skip(Box<Pat>),
    /// This pattern must match here, or still may, but nothing is read (its captures
    /// dropped): a region checks how its text opens before a scanner holds it whole.
    Ahead(Box<Pat>),
}

impl Pat {
    pub fn lit(text: impl Into<String>) -> Pat {
        Pat::Lit(text.into())
    }

    pub fn opt(text: impl Into<String>) -> Pat {
        Pat::Opt(text.into())
    }

    pub fn until(delim: impl Into<String>, max: usize) -> Pat {
        Pat::until_or(delim, Vec::new(), max)
    }

    /// Text up to `delim` or, where one comes first, up to one of `ends` (not consumed).
    pub fn until_or(delim: impl Into<String>, ends: Vec<String>, max: usize) -> Pat {
        Pat::Until {
            delim: delim.into(),
            max,
            ends,
            drifts: false,
        }
    }

    /// [`Pat::until_or`] for a value whose reader drops a closing tag the model misspelled
    /// on a line of its own when one of `ends` closed the value ([`drifted_close`]): until
    /// the next line shows whether such a line is the value's text, no reading decides it.
    pub fn value_until(close: impl Into<String>, ends: Vec<String>, max: usize) -> Pat {
        Pat::Until {
            delim: close.into(),
            max,
            ends,
            drifts: true,
        }
    }

    /// Text up to `delim`, or to the end of the output when it never comes (a model that
    /// stopped before its closing token): captured, as prose, at most [`MAX_PROSE`] bytes.
    pub fn until_or_end(delim: impl Into<String>) -> Pat {
        Pat::Alt(vec![Pat::until(delim, MAX_PROSE), Pat::Rest])
    }

    pub fn name(delim: impl Into<String>, max: usize) -> Pat {
        Pat::Name {
            delim: delim.into(),
            max,
        }
    }

    pub fn repeat(item: Pat) -> Pat {
        Pat::Repeat(Box::new(item))
    }

    pub fn span(item: Pat) -> Pat {
        Pat::Span(Box::new(item))
    }

    pub fn skip(item: Pat) -> Pat {
        Pat::Skip(Box::new(item))
    }

    pub fn ahead(item: Pat) -> Pat {
        Pat::Ahead(Box::new(item))
    }

    /// The captures of `text` when this pattern matches all of it, as a whole output.
    pub fn captures_of(&self, text: &str) -> Option<Vec<String>> {
        let mut captures = Vec::new();
        match self.matches(text, 0, true, &mut captures) {
            Match::Full(end) if end == text.len() => Some(captures),
            _ => None,
        }
    }

    /// Matches `text` from byte `at`: where the match ends, whether it still may, or not.
    /// `ended` says no more text will come.
    pub fn matches(&self, text: &str, at: usize, ended: bool, captures: &mut Vec<String>) -> Match {
        self.resume(text, at, ended, captures, &mut Resume::default())
    }

    /// The text that completes `text` from byte `at` on, where the output ended: how a
    /// region cut by the token limit is closed ([`super::cut::cut_calls`]). `mark` (taken) is written
    /// at the first place in the completion that captures text: in the JSON value, the
    /// delimited text or the name the output ended in, or the first such item after it.
    /// `None` when the text cannot be completed to a match.
    pub(crate) fn closing(
        &self,
        text: &str,
        at: usize,
        mark: &mut Option<&str>,
    ) -> Option<Closing> {
        let rest = text.get(at..)?;
        if rest.is_empty() {
            return self.closing_from_nothing(mark).map(Closing::Completed);
        }
        match self.matches(text, at, false, &mut Vec::new()) {
            Match::Full(end) => return Some(Closing::Matched(end)),
            Match::No => return None,
            Match::Partial => {}
        }
        let completed = match self {
            Pat::Lit(literal) | Pat::Opt(literal) => literal.get(rest.len()..)?.to_string(),
            Pat::Ws | Pat::Rest => String::new(),
            Pat::Json => {
                let mut scanner = JsonScanner::new();
                scanner.push(rest);
                scanner.closing(mark)?
            }
            Pat::Literal => pycall::closing(rest, mark)?,
            // Text that may be the start of one of the other ends (`<parameter` before its
            // `=`) is neither the text's nor an end's yet: no completion reads it right.
            Pat::Until {
                delim,
                ends,
                drifts,
                ..
            } => match held_prefix(rest, delim) {
                held if ends.iter().any(|end| held_prefix(rest, end) > held) => return None,
                _ if *drifts && drifted_close(rest, delim).is_some() => return None,
                0 => [mark.take().unwrap_or(""), delim].concat(),
                held => delim.get(held..)?.to_string(),
            },
            Pat::Name { delim, .. } => {
                let name = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
                match rest.len() - name {
                    0 => [mark.take().unwrap_or(""), delim].concat(),
                    held => delim.get(held..)?.to_string(),
                }
            }
            Pat::Seq(items) => {
                let mut position = at;
                let mut items = items.iter();
                for item in items.by_ref() {
                    match item.closing(text, position, mark)? {
                        Closing::Matched(end) => position = end,
                        Closing::Completed(mut completed) => {
                            for item in items {
                                completed.push_str(&item.closing_from_nothing(mark)?);
                            }
                            return Some(Closing::Completed(completed));
                        }
                    }
                }
                return Some(Closing::Matched(position));
            }
            Pat::Alt(items) => return items.iter().find_map(|item| item.closing(text, at, mark)),
            Pat::Repeat(item) => {
                let mut position = at;
                loop {
                    match item.matches(text, position, false, &mut Vec::new()) {
                        Match::Full(end) if end > position => position = end,
                        Match::Partial if position < text.len() => {
                            return item.closing(text, position, mark)
                        }
                        _ => return Some(Closing::Matched(position)),
                    }
                }
            }
            Pat::Span(item) | Pat::Skip(item) => return item.closing(text, at, mark),
            // What follows reads the same text; the completed region is matched whole
            // again, so a look ahead the completion breaks is no call.
            Pat::Ahead(_) => return Some(Closing::Matched(at)),
        };
        Some(Closing::Completed(completed))
    }

    /// The shortest text this pattern matches, with `mark` where [`Pat::closing`] puts it:
    /// what a region needs after the item the output ended in.
    fn closing_from_nothing(&self, mark: &mut Option<&str>) -> Option<String> {
        match self {
            Pat::Lit(literal) => Some(literal.clone()),
            Pat::Opt(_) | Pat::Ws | Pat::Rest | Pat::Repeat(_) | Pat::Ahead(_) => {
                Some(String::new())
            }
            Pat::Json => JsonScanner::new().closing(mark),
            Pat::Literal => Some(String::from("{}")),
            Pat::Until { delim, .. } | Pat::Name { delim, .. } => {
                Some([mark.take().unwrap_or(""), delim].concat())
            }
            Pat::Seq(items) => items
                .iter()
                .map(|item| item.closing_from_nothing(mark))
                .collect(),
            Pat::Alt(items) => items.first()?.closing_from_nothing(mark),
            Pat::Span(item) | Pat::Skip(item) => item.closing_from_nothing(mark),
        }
    }

    /// Whether text this pattern matches may be prose rather than a call: it begins with
    /// text of any kind ([`Pat::Rest`], or a [`Pat::Until`] bounded by [`MAX_PROSE`] or
    /// more). A region of such a pattern that the output ended in and that holds no call
    /// stays content, as written.
    pub(super) fn may_hold_prose(&self) -> bool {
        match self {
            Pat::Rest => true,
            Pat::Until { max, .. } => *max >= MAX_PROSE,
            Pat::Seq(items) => items.first().is_some_and(Pat::may_hold_prose),
            Pat::Alt(items) => items.iter().any(Pat::may_hold_prose),
            Pat::Span(item) | Pat::Skip(item) => item.may_hold_prose(),
            _ => false,
        }
    }

    /// [`Pat::matches`] carried on from where a call on a shorter `text` (the same text cut
    /// earlier) answered [`Match::Partial`], as that call left `resume` and `captures`: the
    /// text already decided is not read again, so a region fed in pieces costs what it
    /// costs whole. A fresh `resume` with empty `captures` matches from the start.
    pub(super) fn resume(
        &self,
        text: &str,
        at: usize,
        ended: bool,
        captures: &mut Vec<String>,
        resume: &mut Resume,
    ) -> Match {
        let Some(rest) = text.get(at..) else {
            return Match::No;
        };
        match self {
            Pat::Lit(literal) => {
                if rest.starts_with(literal.as_str()) {
                    Match::Full(at + literal.len())
                } else if !ended && literal.starts_with(rest) {
                    Match::Partial
                } else {
                    Match::No
                }
            }
            Pat::Opt(literal) => {
                if rest.starts_with(literal.as_str()) {
                    Match::Full(at + literal.len())
                } else if !ended && literal.starts_with(rest) {
                    Match::Partial
                } else {
                    Match::Full(at)
                }
            }
            Pat::Ws => {
                let skipped = resume.skip_whitespace(rest);
                if skipped == rest.len() && !ended {
                    Match::Partial
                } else {
                    Match::Full(at + skipped)
                }
            }
            Pat::Json => json_value(rest, at, ended, captures, resume),
            Pat::Literal => bracketed_literal(rest, at, ended, captures, resume),
            Pat::Until {
                delim, max, ends, ..
            } => until(rest, at, (delim, ends, *max), ended, captures, resume),
            Pat::Name { delim, max } => name(rest, at, delim, *max, ended, captures),
            Pat::Rest if rest.len() > MAX_PROSE => Match::No,
            Pat::Rest if ended => {
                captures.push(rest.to_string());
                Match::Full(text.len())
            }
            Pat::Rest => Match::Partial,
            Pat::Seq(items) => {
                let Resume {
                    index,
                    position,
                    item,
                    ..
                } = resume;
                let position = position.get_or_insert(at);
                while let Some(pat) = items.get(*index) {
                    let state = item.get_or_insert_with(Box::default);
                    match pat.resume(text, *position, ended, captures, state) {
                        Match::Full(next) => {
                            *position = next;
                            *index += 1;
                            state.clear();
                        }
                        other => return other,
                    }
                }
                Match::Full(*position)
            }
            Pat::Alt(items) => {
                let Resume {
                    index, kept, item, ..
                } = resume;
                let kept = *kept.get_or_insert(captures.len());
                while let Some(pat) = items.get(*index) {
                    let state = item.get_or_insert_with(Box::default);
                    match pat.resume(text, at, ended, captures, state) {
                        Match::No => {
                            captures.truncate(kept);
                            *index += 1;
                            state.clear();
                        }
                        decided => return decided,
                    }
                }
                Match::No
            }
            Pat::Repeat(pat) => {
                let Resume {
                    position,
                    kept,
                    item,
                    ..
                } = resume;
                let position = position.get_or_insert(at);
                let kept = kept.get_or_insert(captures.len());
                loop {
                    let state = item.get_or_insert_with(Box::default);
                    match pat.resume(text, *position, ended, captures, state) {
                        Match::Full(next) if next > *position => {
                            *position = next;
                            *kept = captures.len();
                            state.clear();
                        }
                        Match::Full(_) => break,
                        Match::Partial => return Match::Partial,
                        Match::No => {
                            captures.truncate(*kept);
                            break;
                        }
                    }
                }
                Match::Full(*position)
            }
            Pat::Span(pat) => match pat.resume_on_its_own(text, at, ended, resume) {
                Match::Full(end) => match text.get(at..end) {
                    Some(span) => {
                        captures.push(span.to_string());
                        Match::Full(end)
                    }
                    None => Match::No,
                },
                other => other,
            },
            Pat::Skip(pat) => pat.resume_on_its_own(text, at, ended, resume),
            Pat::Ahead(pat) => match pat.resume_on_its_own(text, at, ended, resume) {
                Match::Full(_) => Match::Full(at),
                other => other,
            },
        }
    }

    /// Resumes this pattern as the item of a [`Pat::Span`], [`Pat::Skip`] or
    /// [`Pat::Ahead`]: its captures its own (in `resume`), not the region's.
    fn resume_on_its_own(&self, text: &str, at: usize, ended: bool, resume: &mut Resume) -> Match {
        let Resume {
            captures: own,
            item,
            ..
        } = resume;
        let state = item.get_or_insert_with(Box::default);
        self.resume(text, at, ended, own, state)
    }
}

/// Where matching a [`Pat`] stopped when the text ran out (see [`Pat::resume`]): each
/// kind of pattern keeps the fields it needs, and a composite one the state of the item it
/// is in. Keeping it is what makes a call region fed in 1-byte pieces linear; read again
/// from its start on every piece, a 64 KB region went at under 1 MB/s (bench parse); the
/// figures now are on [`super::framed::FramedParser::scan_region`].
#[derive(Debug, Clone, Default)]
pub(super) struct Resume {
    /// The item of a sequence, or the alternative, reached so far.
    index: usize,
    /// Where a sequence's current item, or a repetition's next round, starts.
    position: Option<usize>,
    /// How many captures an alternative, or a repetition's round, started with.
    kept: Option<usize>,
    /// Leading whitespace skipped so far.
    skipped: usize,
    /// Bytes after it read so far: fed to a scanner, or searched for a delimiter.
    read: usize,
    json: JsonScanner,
    bracket: BracketScanner,
    /// A span's own captures (dropped when it matches).
    captures: Vec<String>,
    /// Where the item being matched stopped.
    item: Option<Box<Resume>>,
}

impl Resume {
    /// Back to a fresh start, keeping what was allocated (the items' boxes, the JSON
    /// scanner's stack) for the next item, round or region. Dropped and boxed anew for each
    /// item, they were a third of reading Kimi K3's 1 MB of calls whole (bench parse); with
    /// [`search`], that went from 42–48 to 70 MB/s (on a machine at load 10).
    pub(super) fn clear(&mut self) {
        self.index = 0;
        self.position = None;
        self.kept = None;
        self.skipped = 0;
        self.read = 0;
        self.json.reset();
        self.bracket = BracketScanner::default();
        self.captures.clear();
        if let Some(item) = &mut self.item {
            item.clear();
        }
    }

    /// The offset in `rest` of its first character that is not whitespace (or its length),
    /// skipping again only what was not skipped before.
    fn skip_whitespace(&mut self, rest: &str) -> usize {
        let body = rest.get(self.skipped..).unwrap_or("");
        self.skipped = rest.len() - body.trim_start().len();
        self.skipped
    }
}

/// How a pattern takes the text the output ended in ([`Pat::closing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Closing {
    /// It matches the text up to this byte, as it is.
    Matched(usize),
    /// It matches all of the text with this appended.
    Completed(String),
}

/// How far a text matches a [`Pat`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// It matches, up to this byte.
    Full(usize),
    /// It may still match; more text decides.
    Partial,
    /// It cannot match.
    No,
}

fn json_value(
    rest: &str,
    at: usize,
    ended: bool,
    captures: &mut Vec<String>,
    resume: &mut Resume,
) -> Match {
    let fed = resume.read;
    resume.read = rest.len();
    let end = match resume.json.push(&rest.as_bytes()[fed.min(rest.len())..]) {
        Scan::Complete { rest_at } => fed + rest_at,
        Scan::Invalid { .. } => return Match::No,
        Scan::NeedMore if !ended => return Match::Partial,
        Scan::NeedMore => match resume.json.finish() {
            Ending::Complete => rest.len(),
            Ending::Truncated | Ending::Invalid => return Match::No,
        },
    };
    let start = rest.len() - rest.trim_start().len();
    match rest.get(start..end) {
        Some(value) => {
            captures.push(value.to_string());
            Match::Full(at + end)
        }
        None => Match::No,
    }
}

/// [`Pat::Until`]: the delimiter (and each end) is looked for only in the text not searched
/// before (from where one may have begun at its end), and not past `max`. The first found
/// decides, the delimiter on a tie, but not while a needle that may still start before it
/// is cut by the end of the text.
fn until(
    rest: &str,
    at: usize,
    (delim, ends, max): (&str, &[String], usize),
    ended: bool,
    captures: &mut Vec<String>,
    resume: &mut Resume,
) -> Match {
    let searched = resume.read.min(rest.len());
    let longest = ends.iter().map(String::len).fold(delim.len(), usize::max);
    let end = rest.len().min(max.saturating_add(longest));
    let window = rest.as_bytes().get(searched..end).unwrap_or_default();
    // The first needle found (its offset, length, and whether it is consumed), and where
    // the earliest cut start of a needle begins.
    let mut found: Option<(usize, usize, bool)> = None;
    let mut partial = window.len();
    let needles =
        std::iter::once((delim, true)).chain(ends.iter().map(|end| (end.as_str(), false)));
    for (needle, consumed) in needles {
        match search(window, needle.as_bytes()) {
            Ok(offset) if found.is_none_or(|(first, _, _)| offset < first) => {
                found = Some((offset, needle.len(), consumed));
            }
            Ok(_) => {}
            Err(cut) => partial = partial.min(cut),
        }
    }
    match found {
        Some((offset, _, _)) if !ended && partial < offset => {
            resume.read = searched + partial;
            Match::Partial
        }
        Some((offset, len, consumed)) if searched + offset <= max => {
            let found = searched + offset;
            captures.push(rest.get(..found).unwrap_or_default().to_string());
            Match::Full(at + found + if consumed { len } else { 0 })
        }
        Some(_) => Match::No,
        None if ended || rest.len() >= max.saturating_add(longest) => Match::No,
        None => {
            resume.read = searched + partial;
            Match::Partial
        }
    }
}

/// Where `needle` first is in `haystack` (`Ok`), or else where the end of `haystack` that
/// may be the start of `needle` begins (`Err`; its length when none). Only a byte equal to
/// the needle's first is looked at further. A delimiter is mostly found a few bytes on (a
/// name's end, a parameter's), where `str::find`'s setting up of its two-way search cost
/// more than the search: a fifth of reading Kimi K3's 1 MB of calls whole (bench parse).
/// And in 1-byte pieces each piece is searched alone, not with the delimiter's length
/// before it again: Kimi K3, one 1 MB call in 1-byte pieces, 2.9–3.6 → 4.5–7.2 MB/s (with
/// [`Resume::clear`]; load 10).
fn search(haystack: &[u8], needle: &[u8]) -> Result<usize, usize> {
    let Some((&first, _)) = needle.split_first() else {
        return Ok(0);
    };
    let mut from = 0;
    while let Some(found) = haystack
        .get(from..)
        .and_then(|rest| rest.iter().position(|&byte| byte == first))
    {
        let at = from + found;
        let candidate = haystack.get(at..).unwrap_or_default();
        if candidate.starts_with(needle) {
            return Ok(at);
        }
        if needle.starts_with(candidate) {
            return Err(at);
        }
        from = at + 1;
    }
    Err(haystack.len())
}

/// The length of the longest end of `text` that is a proper prefix of `marker`, where `text`
/// does not hold `marker`.
pub(super) fn held_prefix(text: &str, marker: &str) -> usize {
    search(text.as_bytes(), marker.as_bytes()).map_or_else(|at| text.len() - at, |_| 0)
}

/// Where the last line of a value's `text` starts, when that line begins as `close` does
/// less its final `>` (`</parameter1>`, `</parameter_function>`, `</parameter`): a closing
/// tag the model misspelled on a line of its own, as SGLang reads Qwen3-Coder. A value
/// another end closed drops that line; one its closing tag ended keeps it as text.
pub fn drifted_close(text: &str, close: &str) -> Option<usize> {
    let stem = close.strip_suffix('>').unwrap_or(close);
    let at = text.trim_end().rfind('\n')? + 1;
    text[at..].starts_with(stem).then_some(at)
}

/// Whether `c` may be part of a function's name, as [`Pat::Name`] reads it.
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// A function's name as a region wrote it (trimmed), or `None` when it cannot be one.
pub fn checked_name(name: &str) -> Option<&str> {
    let name = name.trim();
    let bad =
        name.is_empty() || name.contains(['<', '>', '"']) || name.contains(char::is_whitespace);
    (!bad).then_some(name)
}

fn name(
    rest: &str,
    at: usize,
    delim: &str,
    max: usize,
    ended: bool,
    captures: &mut Vec<String>,
) -> Match {
    let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
    let after = &rest[len..];
    if len > max {
        Match::No
    } else if len > 0 && after.starts_with(delim) {
        captures.push(rest[..len].to_string());
        Match::Full(at + len + delim.len())
    } else if !ended && delim.starts_with(after) {
        Match::Partial
    } else {
        Match::No
    }
}

fn bracketed_literal(
    rest: &str,
    at: usize,
    ended: bool,
    captures: &mut Vec<String>,
    resume: &mut Resume,
) -> Match {
    let fed = resume.read;
    if fed == 0 {
        let start = resume.skip_whitespace(rest);
        let body = &rest[start..];
        if body.is_empty() {
            return if ended { Match::No } else { Match::Partial };
        }
        if !body.starts_with(['[', '{']) {
            return Match::No;
        }
    }
    let start = resume.skipped;
    let body = &rest[start..];
    resume.read = body.len();
    match resume.bracket.push(&body[fed.min(body.len())..]) {
        Bracket::Complete { rest_at } => {
            let end = fed + rest_at;
            captures.push(body[..end].to_string());
            Match::Full(at + start + end)
        }
        Bracket::NeedMore if !ended => Match::Partial,
        Bracket::NeedMore | Bracket::Invalid { .. } => Match::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn patterns_decide_as_early_as_the_text_allows() {
        let pat = Pat::Seq(vec![
            Pat::lit("ab"),
            Pat::until(">", 3),
            Pat::Ws,
            Pat::opt("!"),
        ]);
        let run = |text: &str, ended: bool| pat.matches(text, 0, ended, &mut Vec::new());
        assert_eq!(run("a", false), Match::Partial);
        assert_eq!(run("x", false), Match::No);
        assert_eq!(run("abxyz", false), Match::Partial);
        assert_eq!(run("abxyzw", false), Match::No);
        assert_eq!(run("abx> ", false), Match::Partial);
        assert_eq!(run("abx> ", true), Match::Full(5));
        assert_eq!(run("abx> !", false), Match::Full(6));
        assert_eq!(run("abx> ?", false), Match::Full(5));
    }

    #[test]
    fn a_name_is_decided_at_its_first_foreign_character() {
        let run = |text: &str, ended: bool| {
            let mut captures = Vec::new();
            let matched = Pat::name("\n", 8).matches(text, 0, ended, &mut captures);
            (matched, captures)
        };
        assert_eq!(run("get_we", false), (Match::Partial, vec![]));
        assert_eq!(run("get_we", true), (Match::No, vec![]));
        assert_eq!(
            run("a.b-c\n{", false),
            (Match::Full(6), vec!["a.b-c".into()])
        );
        assert_eq!(run("Hello there", false), (Match::No, vec![]));
        assert_eq!(run("\nHi", false), (Match::No, vec![]));
        assert_eq!(run("much_too_long", false), (Match::No, vec![]));
    }

    #[test]
    fn a_literal_ends_where_its_brackets_pair_up() {
        let run = |text: &str, ended: bool| {
            let mut captures = Vec::new();
            let matched = Pat::Literal.matches(text, 0, ended, &mut captures);
            (matched, captures)
        };
        let text = " {'a': ']', \"b\": [1]} x";
        assert_eq!(
            run(text, false),
            (Match::Full(21), vec![text[1..21].into()])
        );
        assert_eq!(run(" {'a': [", false), (Match::Partial, vec![]));
        assert_eq!(run(" {'a': [", true), (Match::No, vec![]));
        assert_eq!(run(" x", false), (Match::No, vec![]));
        assert_eq!(run("  ", false), (Match::Partial, vec![]));
    }

    proptest! {
        /// Resumed byte by byte, a delimiter is found where a fresh match finds it, also
        /// when a start of it ends the text so far (`aab` after `a`, `aa`, `aaa`).
        #[test]
        fn until_resumed_matches_as_fresh(text in "[ab!]{0,14}") {
            let pat = Pat::Seq(vec![Pat::until("aab", 8), Pat::lit("!")]);
            let (mut captures, mut resume) = (Vec::new(), Resume::default());
            for end in 1..=text.len() {
                let resumed = pat.resume(&text[..end], 0, false, &mut captures, &mut resume);
                let mut fresh_captures = Vec::new();
                let fresh = pat.matches(&text[..end], 0, false, &mut fresh_captures);
                prop_assert_eq!(resumed, fresh, "at {}", end);
                if resumed != Match::Partial {
                    prop_assert_eq!(&captures, &fresh_captures);
                    break;
                }
            }
        }
    }
}
