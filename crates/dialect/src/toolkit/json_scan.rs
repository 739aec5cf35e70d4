//! Finding where one JSON value ends in streamed output, without parsing it.
//!
//! Dialects write calls as JSON followed by more text (`{"name": …}</tool_call>`, `[…]` then
//! content), and they stream a call's arguments while they arrive. Both need to know, byte
//! by byte, whether the output is still inside a JSON value, has just finished one, or can no
//! longer be JSON — long before the value is complete enough to parse. [`JsonScanner`]
//! answers that by tracking strings, escapes (surrogate pairs included), UTF-8, nesting and
//! scalars; it builds nothing and never panics. Once it says a value is complete, the text
//! is handed to `serde_json` to be read. [`ArgumentStream`] (a value on its own) and
//! [`FieldStream`] (one field of an object) give a value's text as fragments meanwhile.
//!
//! Strings and containers end at their closing byte. Numbers and `true`/`false`/`null` end
//! only when a byte that cannot continue them arrives, or at [`JsonScanner::finish`]: at the
//! top level that byte starts the following text (`12</tool_call>`); inside a container it
//! must be a separator or a closer.
//!
//! On whether a whole text is exactly one JSON value the scanner agrees with
//! `serde_json::from_slice`, except that `serde_json` also rejects numbers beyond `f64`'s
//! range and nesting deeper than 128: limits of a reader, not of the grammar.

/// What a piece did to the value being scanned. Offsets are byte offsets into that piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// The value is not finished yet (or has not begun: only whitespace so far).
    NeedMore,
    /// The value ended; the text following it starts at `rest_at`.
    Complete { rest_at: usize },
    /// The byte at `at` cannot continue JSON; the scanner stays invalid.
    Invalid { at: usize },
}

/// How the output ended, as told by [`JsonScanner::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// One complete value was scanned.
    Complete,
    /// The output ended before the value did (or before it began).
    Truncated,
    /// A byte that cannot continue JSON was seen.
    Invalid,
}

/// Tracks one JSON value through pieces of output; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct JsonScanner {
    containers: Vec<Container>,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Before a value: at the top, after `:` or after `,` in an array.
    #[default]
    Value,
    /// Just after `[`.
    ValueOrArrayEnd,
    /// Just after `{`.
    KeyOrObjectEnd,
    /// After `,` in an object.
    Key,
    Colon,
    /// After a value inside a container.
    SeparatorOrEnd,
    InString {
        is_key: bool,
        part: StringPart,
    },
    InNumber(NumberPart),
    InLiteral {
        word: &'static [u8],
        matched: usize,
    },
    Complete,
    Invalid,
}

/// What one byte did.
enum Step {
    Continue,
    /// The top-level value ended with this byte.
    CompleteAfter,
    /// The top-level value ended just before this byte.
    CompleteBefore,
    Reject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StringPart {
    Plain,
    /// After `\`.
    Escape,
    /// Inside `\uXXXX`; `low_surrogate` when it must be the second half of a pair.
    Unicode {
        digits: u8,
        code: u16,
        low_surrogate: bool,
    },
    /// After a `\uXXXX` high surrogate: `\u` and a low one must follow.
    AfterHighSurrogate,
    AfterHighSurrogateBackslash,
    /// Inside a multi-byte UTF-8 character.
    Utf8(Utf8Tail),
}

/// The bytes a multi-byte UTF-8 character still needs: `remaining` of them, the next one in
/// `next_low..=next_high` (which rules out overlong forms, surrogates and values past
/// U+10FFFF), the rest in `0x80..=0xBF`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Utf8Tail {
    remaining: u8,
    next_low: u8,
    next_high: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberPart {
    Minus,
    Zero,
    Integer,
    Dot,
    Fraction,
    Exponent,
    ExponentSign,
    ExponentDigits,
}

impl JsonScanner {
    /// A scanner waiting for the start of a value (leading whitespace is skipped).
    pub fn new() -> Self {
        Self::default()
    }

    /// Back to waiting for the start of a value, keeping the nesting stack's allocation for
    /// the next value.
    pub fn reset(&mut self) {
        self.containers.clear();
        self.state = State::default();
    }

    /// Feeds the next piece. After `Complete` or `Invalid`, further pieces are not looked at
    /// and the answer stays the same (with offset 0).
    pub fn push(&mut self, piece: impl AsRef<[u8]>) -> Scan {
        match self.state {
            State::Complete => return Scan::Complete { rest_at: 0 },
            State::Invalid => return Scan::Invalid { at: 0 },
            _ => {}
        }
        let bytes = piece.as_ref();
        let mut offset = 0;
        while let Some(&byte) = bytes.get(offset) {
            if self.in_plain_string() && is_plain_ascii(byte) {
                offset += plain_run(&bytes[offset..]);
                continue;
            }
            match self.step(byte) {
                Step::Continue => {}
                Step::CompleteAfter => {
                    return Scan::Complete {
                        rest_at: offset + 1,
                    }
                }
                Step::CompleteBefore => return Scan::Complete { rest_at: offset },
                Step::Reject => {
                    self.state = State::Invalid;
                    return Scan::Invalid { at: offset };
                }
            }
            offset += 1;
        }
        Scan::NeedMore
    }

    /// Ends the output: a number or literal still open at the top level is complete now.
    pub fn finish(&mut self) -> Ending {
        let top_level_scalar_done = self.containers.is_empty()
            && match self.state {
                State::InNumber(part) => part.is_complete(),
                State::InLiteral { word, matched } => matched == word.len(),
                _ => false,
            };
        if top_level_scalar_done {
            self.state = State::Complete;
        }
        match self.state {
            State::Complete => Ending::Complete,
            State::Invalid => Ending::Invalid,
            _ => Ending::Truncated,
        }
    }

    /// The shortest text that makes the text scanned so far one whole value, with `mark`
    /// (taken) written at the first place after that text where a string can hold it: in
    /// the string the text ends in, else as the next value or key (a key's value `null`).
    /// `None` when the text is no JSON, the mark would need JSON's escapes, or the text
    /// ends in a number or word at the top level (`12`, `f`): nothing there holds the
    /// mark, and the value completed without it would read as the model's (`f` as
    /// `false`, where the model writes the name `f5`).
    ///
    /// This is how a call cut by the token limit is read ([`crate::toolkit::framed`]): the
    /// completed text is decoded like any call, and the mark shows where the model's text
    /// ended in what the decoder made of it.
    pub fn closing(&self, mark: &mut Option<&str>) -> Option<String> {
        if mark.is_some_and(|mark| mark.contains(['"', '\\']) || mark.contains(char::is_control)) {
            return None;
        }
        let mut scanner = self.clone();
        let mut out = scanner.end_escape()?;
        match scanner.state {
            State::Invalid => return None,
            State::Complete => return Some(out),
            State::Value if scanner.containers.is_empty() => {
                out.push_str(&match mark.take() {
                    Some(mark) => format!("{{\"{mark}\":null}}"),
                    None => String::from("{}"),
                });
                return Some(out);
            }
            State::InString { is_key, .. } => {
                out.extend(mark.take());
                out.push('"');
                if is_key {
                    out.push_str(":null");
                }
            }
            // `-1`, not `-0`, which a decoder that writes the value again writes `-0.0`.
            State::InNumber(NumberPart::Minus) => out.push('1'),
            State::InNumber(part) if !part.is_complete() => out.push('0'),
            State::InLiteral { word, matched } => {
                out.push_str(std::str::from_utf8(word.get(matched..)?).ok()?);
            }
            State::Value => out.push_str(&value_holding(mark.take())),
            State::Colon => {
                out.push(':');
                out.push_str(&value_holding(mark.take()));
            }
            State::ValueOrArrayEnd | State::KeyOrObjectEnd => {
                if let Some(mark) = mark.take() {
                    let object = scanner.state == State::KeyOrObjectEnd;
                    out.push_str(&entry_holding(mark, object));
                }
            }
            State::Key => out.push_str(&format!("\"{}\":null", mark.take().unwrap_or(""))),
            State::InNumber(_) | State::SeparatorOrEnd => {}
        }
        match scanner.containers.last() {
            Some(&innermost) => {
                if let Some(mark) = mark.take() {
                    out.push(',');
                    out.push_str(&entry_holding(mark, innermost == Container::Object));
                }
            }
            None if mark.is_some() => return None,
            None => {}
        }
        for container in scanner.containers.iter().rev() {
            out.push(match container {
                Container::Object => '}',
                Container::Array => ']',
            });
        }
        Some(out)
    }

    /// In a string, the text that ends the escape the scanned text ends in (`n` after a
    /// backslash, the digits of a `\u` escape, a low surrogate after a high one), and the
    /// scanner moved past it; empty outside an escape; `None` when no text can end it.
    fn end_escape(&mut self) -> Option<String> {
        let State::InString { part, .. } = self.state else {
            return Some(String::new());
        };
        let candidates: Vec<String> = match part {
            StringPart::Plain => return Some(String::new()),
            StringPart::Escape => vec!["n".into()],
            StringPart::Unicode { digits, .. } => ["0000", "DC00"]
                .iter()
                .filter_map(|digits_of| digits_of.get(usize::from(digits)..))
                .map(|rest| format!("{rest}\\uDC00"))
                .chain(
                    ["0000", "DC00"]
                        .iter()
                        .filter_map(|digits_of| digits_of.get(usize::from(digits)..))
                        .map(String::from),
                )
                .collect(),
            StringPart::AfterHighSurrogate => vec!["\\uDC00".into()],
            StringPart::AfterHighSurrogateBackslash => vec!["uDC00".into()],
            StringPart::Utf8(_) => return None,
        };
        candidates.into_iter().find_map(|candidate| {
            let mut trial = self.clone();
            let plain = trial.push(&candidate) == Scan::NeedMore && trial.in_plain_string();
            plain.then(|| {
                *self = trial;
                candidate
            })
        })
    }

    /// Inside a string, where a plain ASCII character changes nothing: a run of them is
    /// skipped at once, the bulk of a call's long string argument. Byte by byte through
    /// [`JsonScanner::step`], a call took about 40 ns a byte (bench parse, hermes, one 1 MB
    /// call read whole: 19 → 58 MB/s with this and the marker filter of `tag_scan`).
    fn in_plain_string(&self) -> bool {
        matches!(
            self.state,
            State::InString {
                part: StringPart::Plain,
                ..
            }
        )
    }

    /// Whether the text scanned so far ends inside a string (a key or a value).
    pub fn in_string(&self) -> bool {
        matches!(self.state, State::InString { .. })
    }

    /// How many objects and arrays the scanner is inside now.
    pub fn depth(&self) -> usize {
        self.containers.len()
    }

    fn step(&mut self, byte: u8) -> Step {
        match self.state {
            State::Value => self.start_value(byte),
            State::ValueOrArrayEnd if byte == b']' => self.close(Container::Array),
            State::ValueOrArrayEnd => self.start_value(byte),
            State::KeyOrObjectEnd if byte == b'}' => self.close(Container::Object),
            State::KeyOrObjectEnd | State::Key => self.start_key(byte),
            State::Colon => self.expect_colon(byte),
            State::SeparatorOrEnd => self.separator_or_end(byte),
            State::InString { is_key, part } => self.string_byte(is_key, part, byte),
            State::InNumber(part) => self.number_byte(part, byte),
            State::InLiteral { word, matched } => self.literal_byte(word, matched, byte),
            State::Complete => Step::CompleteBefore,
            State::Invalid => Step::Reject,
        }
    }

    fn start_value(&mut self, byte: u8) -> Step {
        self.state = match byte {
            _ if is_json_whitespace(byte) => return Step::Continue,
            b'{' => self.open(Container::Object),
            b'[' => self.open(Container::Array),
            b'"' => State::InString {
                is_key: false,
                part: StringPart::Plain,
            },
            b'-' => State::InNumber(NumberPart::Minus),
            b'0' => State::InNumber(NumberPart::Zero),
            b'1'..=b'9' => State::InNumber(NumberPart::Integer),
            b't' => literal(b"true"),
            b'f' => literal(b"false"),
            b'n' => literal(b"null"),
            _ => return Step::Reject,
        };
        Step::Continue
    }

    fn open(&mut self, container: Container) -> State {
        self.containers.push(container);
        match container {
            Container::Object => State::KeyOrObjectEnd,
            Container::Array => State::ValueOrArrayEnd,
        }
    }

    fn close(&mut self, container: Container) -> Step {
        if self.containers.pop() != Some(container) {
            return Step::Reject;
        }
        self.end_value()
    }

    /// A value that ends at its last byte (string, object, array) has just ended.
    fn end_value(&mut self) -> Step {
        if self.containers.is_empty() {
            self.state = State::Complete;
            Step::CompleteAfter
        } else {
            self.state = State::SeparatorOrEnd;
            Step::Continue
        }
    }

    /// A number or literal ended because `byte` cannot continue it.
    fn end_scalar(&mut self, byte: u8) -> Step {
        if self.containers.is_empty() {
            self.state = State::Complete;
            Step::CompleteBefore
        } else {
            self.state = State::SeparatorOrEnd;
            self.separator_or_end(byte)
        }
    }

    fn start_key(&mut self, byte: u8) -> Step {
        match byte {
            _ if is_json_whitespace(byte) => {}
            b'"' => {
                self.state = State::InString {
                    is_key: true,
                    part: StringPart::Plain,
                }
            }
            _ => return Step::Reject,
        }
        Step::Continue
    }

    fn expect_colon(&mut self, byte: u8) -> Step {
        match byte {
            _ if is_json_whitespace(byte) => {}
            b':' => self.state = State::Value,
            _ => return Step::Reject,
        }
        Step::Continue
    }

    fn separator_or_end(&mut self, byte: u8) -> Step {
        let container = self.containers.last().copied();
        match (byte, container) {
            _ if is_json_whitespace(byte) => Step::Continue,
            (b',', Some(Container::Object)) => {
                self.state = State::Key;
                Step::Continue
            }
            (b',', Some(Container::Array)) => {
                self.state = State::Value;
                Step::Continue
            }
            (b'}', Some(Container::Object)) => self.close(Container::Object),
            (b']', Some(Container::Array)) => self.close(Container::Array),
            _ => Step::Reject,
        }
    }

    fn string_byte(&mut self, is_key: bool, part: StringPart, byte: u8) -> Step {
        let next = match (part, byte) {
            (StringPart::Plain, b'"') if is_key => {
                self.state = State::Colon;
                return Step::Continue;
            }
            (StringPart::Plain, b'"') => return self.end_value(),
            (StringPart::Plain, _) => plain_string_byte(byte),
            (StringPart::Escape, _) => escape_byte(byte),
            (
                StringPart::Unicode {
                    digits,
                    code,
                    low_surrogate,
                },
                _,
            ) => unicode_escape_byte(digits, code, low_surrogate, byte),
            (StringPart::AfterHighSurrogate, b'\\') => {
                Some(StringPart::AfterHighSurrogateBackslash)
            }
            (StringPart::AfterHighSurrogateBackslash, b'u') => Some(StringPart::Unicode {
                digits: 0,
                code: 0,
                low_surrogate: true,
            }),
            (StringPart::AfterHighSurrogate | StringPart::AfterHighSurrogateBackslash, _) => None,
            (StringPart::Utf8(tail), _) => tail.next(byte),
        };
        match next {
            Some(part) => {
                self.state = State::InString { is_key, part };
                Step::Continue
            }
            None => Step::Reject,
        }
    }

    fn number_byte(&mut self, part: NumberPart, byte: u8) -> Step {
        match part.next(byte) {
            Some(next) => {
                self.state = State::InNumber(next);
                Step::Continue
            }
            None if part.is_complete() => self.end_scalar(byte),
            None => Step::Reject,
        }
    }

    fn literal_byte(&mut self, word: &'static [u8], matched: usize, byte: u8) -> Step {
        match word.get(matched) {
            None => self.end_scalar(byte),
            Some(&expected) if expected == byte => {
                self.state = State::InLiteral {
                    word,
                    matched: matched + 1,
                };
                Step::Continue
            }
            Some(_) => Step::Reject,
        }
    }
}

/// JSON's four whitespace bytes.
pub fn is_json_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// A value holding `mark` as a string, or `null` without one.
fn value_holding(mark: Option<&str>) -> String {
    mark.map_or_else(|| String::from("null"), |mark| format!("\"{mark}\""))
}

/// An object's member whose key is `mark` (its value `null`), or an array's string item.
fn entry_holding(mark: &str, object: bool) -> String {
    if object {
        format!("\"{mark}\":null")
    } else {
        format!("\"{mark}\"")
    }
}

fn literal(word: &'static [u8]) -> State {
    State::InLiteral { word, matched: 1 }
}

/// A byte that leaves a string's plain part as it is: printable ASCII but `"` and `\\`.
fn is_plain_ascii(byte: u8) -> bool {
    matches!(byte, 0x20..=0x7F) && byte != b'"' && byte != b'\\'
}

/// The length of the run of [`is_plain_ascii`] bytes `bytes` starts with.
fn plain_run(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&byte| !is_plain_ascii(byte))
        .unwrap_or(bytes.len())
}

fn plain_string_byte(byte: u8) -> Option<StringPart> {
    match byte {
        b'\\' => Some(StringPart::Escape),
        0x00..=0x1F => None,
        0x20..=0x7F => Some(StringPart::Plain),
        _ => Utf8Tail::after_lead(byte).map(StringPart::Utf8),
    }
}

fn escape_byte(byte: u8) -> Option<StringPart> {
    match byte {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(StringPart::Plain),
        b'u' => Some(StringPart::Unicode {
            digits: 0,
            code: 0,
            low_surrogate: false,
        }),
        _ => None,
    }
}

fn unicode_escape_byte(digits: u8, code: u16, low_surrogate: bool, byte: u8) -> Option<StringPart> {
    let digit = char::from(byte).to_digit(16)?;
    let code = (code << 4) | u16::try_from(digit).ok()?;
    let digits = digits + 1;
    if digits < 4 {
        return Some(StringPart::Unicode {
            digits,
            code,
            low_surrogate,
        });
    }
    let is_high = (0xD800..=0xDBFF).contains(&code);
    let is_low = (0xDC00..=0xDFFF).contains(&code);
    match (low_surrogate, is_high, is_low) {
        (true, _, true) | (false, false, false) => Some(StringPart::Plain),
        (false, true, _) => Some(StringPart::AfterHighSurrogate),
        _ => None,
    }
}

impl Utf8Tail {
    /// What must follow the lead byte of a multi-byte character; `None` if it is no lead.
    fn after_lead(lead: u8) -> Option<Self> {
        let (remaining, next_low, next_high) = match lead {
            0xC2..=0xDF => (1, 0x80, 0xBF),
            0xE0 => (2, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
            0xED => (2, 0x80, 0x9F),
            0xF0 => (3, 0x90, 0xBF),
            0xF1..=0xF3 => (3, 0x80, 0xBF),
            0xF4 => (3, 0x80, 0x8F),
            _ => return None,
        };
        Some(Self {
            remaining,
            next_low,
            next_high,
        })
    }

    fn next(self, byte: u8) -> Option<StringPart> {
        if !(self.next_low..=self.next_high).contains(&byte) {
            return None;
        }
        Some(match self.remaining {
            1 => StringPart::Plain,
            remaining => StringPart::Utf8(Self {
                remaining: remaining - 1,
                next_low: 0x80,
                next_high: 0xBF,
            }),
        })
    }
}

impl NumberPart {
    fn next(self, byte: u8) -> Option<Self> {
        use NumberPart::*;
        match (self, byte) {
            (Minus, b'0') => Some(Zero),
            (Minus, b'1'..=b'9') | (Integer, b'0'..=b'9') => Some(Integer),
            (Zero | Integer, b'.') => Some(Dot),
            (Dot | Fraction, b'0'..=b'9') => Some(Fraction),
            (Zero | Integer | Fraction, b'e' | b'E') => Some(Exponent),
            (Exponent, b'+' | b'-') => Some(ExponentSign),
            (Exponent | ExponentSign | ExponentDigits, b'0'..=b'9') => Some(ExponentDigits),
            _ => None,
        }
    }

    fn is_complete(self) -> bool {
        matches!(
            self,
            NumberPart::Zero
                | NumberPart::Integer
                | NumberPart::Fraction
                | NumberPart::ExponentDigits
        )
    }
}

/// Streams one JSON value's text (a call's arguments) as fragments while it arrives.
///
/// The caller has read up to where the value begins (`"arguments":` in a call object) and
/// feeds the rest here. Each piece yields the part of it that belongs to the value; the
/// fragments joined are the value's text exactly, without the whitespace before it. When the
/// value ends, [`Scan::Complete`] says where the following text starts in that piece.
#[derive(Debug, Clone, Default)]
pub struct ArgumentStream {
    scanner: JsonScanner,
    begun: bool,
}

/// What one piece fed to an [`ArgumentStream`] gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentStep<'a> {
    /// The value's text in this piece; may be empty.
    pub fragment: &'a str,
    /// Where the value stands after this piece (offsets into the piece).
    pub scan: Scan,
}

impl ArgumentStream {
    /// A stream waiting for the value to begin.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next piece; see [`ArgumentStep`].
    pub fn push<'a>(&mut self, piece: &'a str) -> ArgumentStep<'a> {
        let scan = self.scanner.push(piece);
        let end = match scan {
            Scan::NeedMore => piece.len(),
            Scan::Complete { rest_at } => rest_at,
            Scan::Invalid { at } => at,
        };
        let start = if self.begun {
            0
        } else {
            piece
                .bytes()
                .take(end)
                .take_while(|&byte| is_json_whitespace(byte))
                .count()
        };
        self.begun |= start < end;
        ArgumentStep {
            fragment: piece.get(start..end).unwrap_or_default(),
            scan,
        }
    }

    /// Ends the output; see [`JsonScanner::finish`].
    pub fn finish(&mut self) -> Ending {
        self.scanner.finish()
    }
}

/// Streams the value of one field of a JSON object (`arguments` in
/// `{"name": "f", "arguments": {…}}`) as fragments while the whole object is scanned.
///
/// Fed the object's text, each piece yields the part of the field's value it holds; the
/// fragments joined are that value's text exactly. The [`Scan`] is the whole object's, so the
/// caller learns in the same call where the object ends. Only fields of the outermost object
/// count, only the first field of that name, and its key is compared as written (escapes are
/// not decoded).
#[derive(Debug, Clone)]
pub struct FieldStream {
    scanner: JsonScanner,
    field: Vec<u8>,
    key: Vec<u8>,
    phase: FieldPhase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldPhase {
    Seeking,
    InValue,
    Done,
}

impl FieldStream {
    /// A stream for the field named `field` of the object about to be fed.
    pub fn new(field: &str) -> Self {
        Self {
            scanner: JsonScanner::new(),
            field: field.as_bytes().to_vec(),
            key: Vec::new(),
            phase: FieldPhase::Seeking,
        }
    }

    /// Feeds the next piece of the object; see [`ArgumentStep`].
    pub fn push<'a>(&mut self, piece: &'a str) -> ArgumentStep<'a> {
        let mut start = (self.phase == FieldPhase::InValue).then_some(0);
        let mut end = None;
        let mut scan = Scan::NeedMore;
        for (offset, &byte) in piece.as_bytes().iter().enumerate() {
            let before = self.scanner.state;
            let before_depth = self.scanner.depth();
            let in_top_object =
                before_depth == 1 && self.scanner.containers.first() == Some(&Container::Object);
            let step = self.scanner.push([byte]);
            if let Scan::Invalid { .. } = step {
                scan = Scan::Invalid { at: offset };
                break;
            }
            if in_top_object && self.phase == FieldPhase::Seeking {
                self.follow_key(before, byte);
                if self.value_begins(before) {
                    self.phase = FieldPhase::InValue;
                    start = Some(offset);
                }
            }
            if self.phase == FieldPhase::InValue && !self.value_goes_on() {
                self.phase = FieldPhase::Done;
                let scalar_ended_before_this_byte = before_depth == 1
                    && matches!(before, State::InNumber(_) | State::InLiteral { .. });
                end = Some(offset + usize::from(!scalar_ended_before_this_byte));
            }
            if let Scan::Complete { rest_at } = step {
                scan = Scan::Complete {
                    rest_at: offset + rest_at,
                };
                break;
            }
        }
        let stop = match scan {
            Scan::NeedMore => piece.len(),
            Scan::Complete { rest_at } => rest_at,
            Scan::Invalid { at } => at,
        };
        let fragment = start.and_then(|start| piece.get(start..end.unwrap_or(stop)));
        ArgumentStep {
            fragment: fragment.unwrap_or_default(),
            scan,
        }
    }

    /// Ends the output; see [`JsonScanner::finish`].
    pub fn finish(&mut self) -> Ending {
        self.scanner.finish()
    }

    /// Collects the key being read in the outermost object.
    fn follow_key(&mut self, before: State, byte: u8) {
        let in_key = matches!(self.scanner.state, State::InString { is_key: true, .. });
        match before {
            State::KeyOrObjectEnd | State::Key if in_key => self.key.clear(),
            State::InString { is_key: true, .. } if in_key => self.key.push(byte),
            _ => {}
        }
    }

    /// Whether the byte just scanned began the value of the wanted field.
    fn value_begins(&self, before: State) -> bool {
        before == State::Value && self.scanner.state != State::Value && self.key == self.field
    }

    /// Whether the scanner is still inside the wanted field's value.
    fn value_goes_on(&self) -> bool {
        match self.scanner.depth() {
            0 => false,
            1 => matches!(
                self.scanner.state,
                State::InString { is_key: false, .. }
                    | State::InNumber(_)
                    | State::InLiteral { .. }
            ),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// Whether `pieces`, fed in order, hold exactly one JSON value (surrounding whitespace
    /// allowed), as the scanner sees it.
    fn is_one_value<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> bool {
        let mut scanner = JsonScanner::new();
        let mut rest = Vec::new();
        let mut complete = false;
        for piece in pieces {
            if complete {
                rest.extend_from_slice(piece);
                continue;
            }
            match scanner.push(piece) {
                Scan::NeedMore => {}
                Scan::Complete { rest_at } => {
                    complete = true;
                    rest.extend_from_slice(&piece[rest_at..]);
                }
                Scan::Invalid { .. } => return false,
            }
        }
        let ending = scanner.finish();
        ending == Ending::Complete && rest.iter().all(|&byte| is_json_whitespace(byte))
    }

    /// Whether serde_json takes `bytes` as one value; `None` where it refuses for a reader's
    /// limit rather than for the grammar (see the module docs).
    fn serde_says(bytes: &[u8]) -> Option<bool> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(_) => Some(true),
            Err(error) => {
                let message = error.to_string();
                let limit = message.starts_with("number out of range")
                    || message.starts_with("recursion limit exceeded");
                (!limit).then_some(false)
            }
        }
    }

    fn scan_whole(text: &str) -> (Scan, Ending) {
        let mut scanner = JsonScanner::new();
        let scan = scanner.push(text);
        (scan, scanner.finish())
    }

    #[test]
    fn containers_and_strings_end_at_their_last_byte() {
        let text = r#"{"a": [1, "x\"}"]}</tool_call>"#;
        assert_eq!(scan_whole(text).0, Scan::Complete { rest_at: 18 });
        assert_eq!(scan_whole(r#""ab"c"#).0, Scan::Complete { rest_at: 4 });
    }

    #[test]
    fn scalars_end_at_the_first_byte_that_cannot_continue_them() {
        assert_eq!(scan_whole("12</x>").0, Scan::Complete { rest_at: 2 });
        assert_eq!(scan_whole(" true,").0, Scan::Complete { rest_at: 5 });
        assert_eq!(scan_whole("12"), (Scan::NeedMore, Ending::Complete));
        assert_eq!(scan_whole("1.5e+3"), (Scan::NeedMore, Ending::Complete));
        assert_eq!(scan_whole("1."), (Scan::NeedMore, Ending::Truncated));
        assert_eq!(scan_whole("nul"), (Scan::NeedMore, Ending::Truncated));
    }

    #[test]
    fn invalid_at_the_first_byte_that_cannot_continue() {
        assert_eq!(scan_whole("[1 2]").0, Scan::Invalid { at: 3 });
        assert_eq!(scan_whole("[01]").0, Scan::Invalid { at: 2 });
        assert_eq!(scan_whole(r#"{"a" 1}"#).0, Scan::Invalid { at: 5 });
        assert_eq!(scan_whole(r#""\x""#).0, Scan::Invalid { at: 2 });
        assert_eq!(scan_whole(r#""\ud800x""#).0, Scan::Invalid { at: 7 });
        assert_eq!(scan_whole("[1}").0, Scan::Invalid { at: 2 });
        assert_eq!(
            scan_whole("tru e"),
            (Scan::Invalid { at: 3 }, Ending::Invalid)
        );
    }

    #[test]
    fn surrogate_pairs_must_pair() {
        assert_eq!(scan_whole(r#""\ud83d\ude00""#).1, Ending::Complete);
        assert_eq!(scan_whole(r#""\ude00""#).1, Ending::Invalid);
        assert_eq!(scan_whole(r#""\ud83d\u0041""#).1, Ending::Invalid);
    }

    #[test]
    fn depth_follows_nesting() {
        let mut scanner = JsonScanner::new();
        scanner.push(r#"{"a": [{"#);
        assert_eq!(scanner.depth(), 3);
        scanner.push("}]");
        assert_eq!(scanner.depth(), 1);
    }

    #[test]
    fn argument_fragments_are_the_value_text() {
        let mut stream = ArgumentStream::new();
        let pieces = [
            " \n",
            r#" {"city""#,
            r#": "Par"#,
            r#"is"}"#,
            "}</tool_call>",
        ];
        let steps: Vec<ArgumentStep> = pieces.iter().map(|piece| stream.push(piece)).collect();
        let fragments: Vec<&str> = steps.iter().map(|step| step.fragment).collect();
        assert_eq!(fragments, ["", r#"{"city""#, r#": "Par"#, r#"is"}"#, ""]);
        assert_eq!(steps[3].scan, Scan::Complete { rest_at: 4 });
        assert_eq!(steps[4].scan, Scan::Complete { rest_at: 0 });
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e300f64..1e300).prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            "[a-z\"\\\\/\n\t\u{1}é😀]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map("[a-z\"é]{0,4}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn serialized(value: &Value, pretty: bool) -> String {
        let text = if pretty {
            serde_json::to_string_pretty(value)
        } else {
            serde_json::to_string(value)
        };
        text.unwrap_or_else(|error| panic!("a Value always serializes: {error}"))
    }

    /// Near-JSON garbage: JSON's own bytes, shuffled, plus some that never belong.
    fn garbage() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            prop::sample::select(b"{}[],:\"\\ \n0123456789-+.eEtrufalsnbu/dD8cC".to_vec()),
            any::<u8>(),
        ];
        prop::collection::vec(byte, 0..40)
    }

    /// A valid value with one byte replaced, dropped or cut short.
    fn near_miss() -> impl Strategy<Value = Vec<u8>> {
        (
            json_value(),
            any::<prop::sample::Index>(),
            any::<u8>(),
            0..3u8,
        )
            .prop_map(|(value, index, byte, edit)| {
                let mut bytes = serialized(&value, false).into_bytes();
                let at = index.index(bytes.len());
                match edit {
                    0 => bytes[at] = byte,
                    1 => {
                        bytes.remove(at);
                    }
                    _ => bytes.truncate(at),
                }
                bytes
            })
    }

    fn agrees_with_serde_at_every_cut(bytes: &[u8]) -> Result<(), TestCaseError> {
        let Some(expected) = serde_says(bytes) else {
            return Ok(());
        };
        prop_assert_eq!(
            is_one_value([bytes]),
            expected,
            "whole: {:?}",
            String::from_utf8_lossy(bytes)
        );
        prop_assert_eq!(is_one_value(bytes.chunks(1)), expected, "bytewise");
        for cut in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(cut);
            prop_assert_eq!(is_one_value([head, tail]), expected, "cut at {}", cut);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn agrees_with_serde_on_values(value in json_value(), pretty in any::<bool>()) {
            let text = serialized(&value, pretty);
            prop_assert_eq!(serde_says(text.as_bytes()), Some(true));
            agrees_with_serde_at_every_cut(text.as_bytes())?;
            agrees_with_serde_at_every_cut(format!(" \n{text}\t ").as_bytes())?;
        }

        #[test]
        fn agrees_with_serde_on_garbage(bytes in garbage()) {
            agrees_with_serde_at_every_cut(&bytes)?;
        }

        #[test]
        fn agrees_with_serde_on_near_misses(bytes in near_miss()) {
            agrees_with_serde_at_every_cut(&bytes)?;
        }

        #[test]
        fn a_value_ends_where_the_following_text_starts(value in json_value(), cut in any::<prop::sample::Index>()) {
            let text = serialized(&value, false);
            let output = format!("{text}</tool_call>");
            let (head, tail) = output.as_bytes().split_at(cut.index(output.len() + 1));
            let mut scanner = JsonScanner::new();
            let rest_starts_at = match scanner.push(head) {
                Scan::Complete { rest_at } => rest_at,
                Scan::NeedMore => match scanner.push(tail) {
                    Scan::Complete { rest_at } => head.len() + rest_at,
                    other => return Err(TestCaseError::fail(format!("{other:?}"))),
                },
                other => return Err(TestCaseError::fail(format!("{other:?}"))),
            };
            prop_assert_eq!(rest_starts_at, text.len());
        }

        #[test]
        fn argument_fragments_join_to_the_value(
            value in json_value(),
            pretty in any::<bool>(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let text = serialized(&value, pretty);
            let output = format!("  {text}}}</tool_call>");
            let mut boundaries: Vec<usize> = cuts
                .iter()
                .map(|cut| cut.index(output.len() + 1))
                .filter(|&cut| output.is_char_boundary(cut))
                .collect();
            boundaries.extend([0, output.len()]);
            boundaries.sort_unstable();
            let mut stream = ArgumentStream::new();
            let mut joined = String::new();
            for pair in boundaries.windows(2) {
                let step = stream.push(&output[pair[0]..pair[1]]);
                joined.push_str(step.fragment);
                let invalid = matches!(step.scan, Scan::Invalid { .. });
                prop_assert!(!invalid, "invalid: {:?}", step.scan);
            }
            prop_assert_eq!(stream.finish(), Ending::Complete);
            prop_assert_eq!(joined, text);
        }
    }

    fn call_object() -> impl Strategy<Value = (Value, Value)> {
        (json_value(), json_value(), "[a-z_]{1,8}").prop_map(|(arguments, other, name)| {
            let call = serde_json::json!({
                "name": name,
                "before": other.clone(),
                "arguments": arguments.clone(),
                "after": other,
            });
            (call, arguments)
        })
    }

    #[test]
    fn field_fragments_are_the_field_value_text() {
        let mut stream = FieldStream::new("arguments");
        let pieces = [
            r#"{"name": "f", "argu"#,
            r#"ments": {"a": [1"#,
            "]}, \"x\": 2",
            "}<",
        ];
        let steps: Vec<ArgumentStep> = pieces.iter().map(|piece| stream.push(piece)).collect();
        let fragments: Vec<&str> = steps.iter().map(|step| step.fragment).collect();
        assert_eq!(fragments, ["", r#"{"a": [1"#, "]}", ""]);
        assert_eq!(steps[3].scan, Scan::Complete { rest_at: 1 });
        let mut stream = FieldStream::new("arguments");
        assert_eq!(stream.push(r#"{"arguments":12}"#).fragment, "12");
        assert_eq!(stream.finish(), Ending::Complete);
    }

    proptest! {
        #[test]
        fn field_fragments_join_to_the_field_value(
            (call, arguments) in call_object(),
            pretty in any::<bool>(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let text = serialized(&call, pretty);
            let output = format!("{text}</tool_call>");
            let mut boundaries: Vec<usize> = cuts
                .iter()
                .map(|cut| cut.index(output.len() + 1))
                .filter(|&cut| output.is_char_boundary(cut))
                .collect();
            boundaries.extend([0, output.len()]);
            boundaries.sort_unstable();
            let mut stream = FieldStream::new("arguments");
            let mut joined = String::new();
            let mut object_end = None;
            for pair in boundaries.windows(2) {
                let step = stream.push(&output[pair[0]..pair[1]]);
                joined.push_str(step.fragment);
                if let (None, Scan::Complete { rest_at }) = (object_end, step.scan) {
                    object_end = Some(pair[0] + rest_at);
                }
            }
            prop_assert_eq!(object_end, Some(text.len()));
            // Compared after one trip through serde_json each, as float digits may not round-trip.
            let reread = |text: &str| serde_json::from_str::<Value>(text).map_err(|error| TestCaseError::fail(format!("{error}: {text:?}")));
            prop_assert_eq!(reread(&joined)?, reread(&serialized(&arguments, false))?);
            if !pretty {
                prop_assert_eq!(joined, serialized(&arguments, false));
            }
        }
    }
}
