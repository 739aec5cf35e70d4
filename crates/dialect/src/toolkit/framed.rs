//! Output framed by markers: a marker in content switches to reasoning, is layout, or opens
//! a call region whose text follows a small pattern ([`Pat`]), read whole and then decoded.
//!
//! Most native tool-call families differ only in their markers and in the few shapes a call
//! takes after its opening marker: Command R7B's `<|START_ACTION|>[…]<|END_ACTION|>`,
//! DeepSeek's `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json …```…`, Qwen3-Coder's
//! `<tool_call><function=name><parameter=p>v</parameter></function></tool_call>`, harmony's
//! `<|channel|>commentary to=functions.name …<|message|>{…}<|call|>`. So a dialect's parser
//! here is a list of markers, each with an [`Action`], and for each call region a pattern and
//! a decoder; [`FramedParser`] does the streaming once for all of them.
//!
//! How it decides, always from the text alone (so the answer is the same however the output
//! is cut, and the same streamed or not):
//! - In content, the longest marker at the leftmost position wins (as [`super::tag_scan`]
//!   does); text that may still become a marker is held back until the next piece decides it.
//!   A reasoning marker marked `at_start_only` counts only before any non-whitespace content.
//! - A call region is held until its pattern has matched whole ([`Pat`] says as early as the
//!   text allows whether it still can). A match whose decoder gives calls emits them whole,
//!   in order; anything else gives the opening marker back as content and reads the text
//!   after it again, as content (a call may start inside it). So a call is never emitted
//!   garbled, and text that is no call comes out as written.
//! - In families whose decoders read a call so far as they read it whole
//!   ([`FramedParser::streaming`]), and where the pacing asks for it ([`Pacing`]: the server
//!   does where a grammar holds the model to the call syntax), a region still being written
//!   is read on the way ([`crate::toolkit::cut`]): a call's start goes out once its name is
//!   written, and its arguments as far as no later text can change them; the region read
//!   whole carries the same calls on.
//! - Reasoning runs to its closing marker, or to a marker that opens the answer
//!   ([`Action::Answer`]); whitespace right after it is dropped. A call
//!   written inside reasoning is reasoning, except in families whose models start calling
//!   before they close their reasoning ([`FramedParser::calls_end_reasoning`]: Qwen 3.5,
//!   Kimi K2 Thinking, as llama.cpp reads them): there a call's marker opens its region as
//!   in content, so the call is not lost in the reasoning, and a region that is no call
//!   gives its marker back as reasoning, and the reasoning goes on.
//! - Whitespace before a call's marker and after a call is layout, unless text follows it
//!   after the call (as in the Hermes parser): a reply that only calls has no content.
//! - Calls written bare in content (Llama 3's `{"name": …}`) open at a marker that is their
//!   own first character ([`Action::Inline`]); the region's pattern reads it, and checks
//!   how the text opens ([`Pat::Ahead`]) so that other text in braces streams at once.
//!
//! A region is held only while its pattern still matches, so garbage after a marker is
//! given back at its first byte that no call begins with; what a region's bound
//! ([`MAX_REGION`]) cuts is a genuine long call, and it is large. Patterns that match any
//! text, and so may hold prose ([`Pat::Rest`], a [`Pat::Until`] right after a marker), are
//! bounded by [`MAX_PROSE`] instead, so prose after a marker cannot hold the output back
//! for long. Past its bound a region is a call cut there (as the token limit cuts one), and
//! a region that may hold prose is content, read whole or in pieces alike.
//!
//! [`Pat`]: super::pattern::Pat
//! [`Pat::Ahead`]: super::pattern::Pat::Ahead
//! [`Pat::Rest`]: super::pattern::Pat::Rest
//! [`Pat::Until`]: super::pattern::Pat::Until
//! [`MAX_PROSE`]: super::pattern::MAX_PROSE

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::events::Event;
use crate::parser::{Pacing, StreamParser};
use crate::toolkit::cut::{calls_so_far, closing_of, cut_calls, CutCalls};
use crate::toolkit::pattern::{held_prefix, Call, Match, Region, Resume};
use crate::toolkit::tag_scan::first_bytes;

/// The longest call region held back, in bytes; a longer one is content. An agent writes a
/// whole file as a tool's argument, so a call of hundreds of KB is a call; 8 MiB is more
/// than one answer holds even at a 1M-token context (about 4 bytes a token), and still
/// bounds what a stream holds. At 64 KB, a 1 MB call turned into content at its 64th KB.
pub const MAX_REGION: usize = 8 << 20;

/// What a marker does when it appears in content.
#[derive(Clone)]
pub enum Action {
    /// Dropped: it frames the answer (`<|START_RESPONSE|>`, `<|end|>`).
    Layout,
    /// Dropped, as layout: it opens the answer (Kimi K3's `<|open|>response<|sep|>`), so
    /// inside reasoning it ends the reasoning too. A model with nothing to reason about
    /// goes straight to its answer without closing the reasoning its prompt opened; read
    /// as reasoning, its content and calls were lost.
    Answer,
    /// Opens reasoning, which runs to `close`.
    Reasoning {
        close: String,
        /// Only before any non-whitespace content (`<think>`), not anywhere.
        at_start_only: bool,
    },
    /// Opens a call region.
    Call(Region),
    /// Opens a call region that begins with the marker itself, for calls written bare in
    /// content (`{` of Llama 3's `{"name": …}`, `[` of a pythonic list): the region's
    /// pattern reads the marker too. Never opened inside reasoning.
    Inline(Region),
}

/// The stream parser built from markers; see the module docs.
pub struct FramedParser {
    markers: Vec<(String, Action)>,
    /// Which bytes some marker begins with: content is searched for markers only there.
    first_bytes: [bool; 256],
    /// Text read but not yet decided (in a region: its text after the opening marker).
    pending: Held,
    mode: Mode,
    writer: ContentWriter,
    /// Whether anything but whitespace has been read (then `at_start_only` markers are text).
    seen_output: bool,
    events: Vec<Event>,
    next_index: u32,
    /// The region being read was opened by the prompt, not by the output.
    virtual_marker: bool,
    /// The marker the prompt opens ([`FramedParser::after_marker`]), opened again where
    /// reasoning that opens the output closes with nothing else written yet (xLAM's
    /// `<think>…</think>[…]`: the list still starts the answer).
    start_again: Option<usize>,
    /// Where matching the region being read stopped, and its captures so far.
    region: Resume,
    /// The closing marker of the reasoning the region being read was opened in: the
    /// reasoning goes on if the region is no call.
    region_in_reasoning: Option<Arc<str>>,
    /// Whether a call's marker inside reasoning ends it ([`FramedParser::calls_end_reasoning`]).
    calls_end_reasoning: bool,
    captures: Vec<String>,
    /// The engine said the token limit cut the output ([`StreamParser::finish_cut`]): a
    /// region the output ends in is a call cut short.
    output_cut: bool,
    /// The calls of the region being read that were sent before it was whole, in order.
    streamed: VecDeque<Streamed>,
    /// Whether the family's calls may be sent before they are whole
    /// ([`FramedParser::streaming`]).
    streams: bool,
    pace: Pace,
}

/// A call sent while its region was still being written: what of it has been sent.
#[derive(Debug)]
struct Streamed {
    index: u32,
    name: String,
    sent: String,
}

impl Streamed {
    /// Whether `call`, read later, is this call with more of its arguments (or all). Its
    /// id is not compared: an id the model writes after the arguments comes too late for
    /// the call's start, and the call keeps the one it was sent with.
    fn goes_on_as(&self, call: &Call) -> bool {
        call.name == self.name && call.arguments.starts_with(&self.sent)
    }
}

/// Cloned on every piece ([`FramedParser::run`]), so its closing marker is shared, not
/// copied.
#[derive(Debug, Clone)]
enum Mode {
    Content,
    Reasoning {
        close: Arc<str>,
    },
    /// In the region opened by this marker.
    Region(usize),
}

impl FramedParser {
    /// A parser at the start of the output, in content. A marker with empty text never
    /// appears in content: it names a region the output may begin with, for
    /// [`FramedParser::after_marker`] (calls a model writes bare, with no marker).
    pub fn new(markers: Vec<(String, Action)>) -> Self {
        FramedParser {
            first_bytes: first_bytes(markers.iter().map(|(marker, _)| marker.as_str())),
            markers,
            pending: Held::default(),
            mode: Mode::Content,
            writer: ContentWriter::default(),
            seen_output: false,
            events: Vec::new(),
            next_index: 0,
            virtual_marker: false,
            start_again: None,
            region: Resume::default(),
            region_in_reasoning: None,
            calls_end_reasoning: false,
            captures: Vec::new(),
            output_cut: false,
            streamed: VecDeque::new(),
            streams: false,
            pace: Pace::default(),
        }
    }

    /// A parser for output that begins inside reasoning closed by `close`, because the
    /// prompt opened it (`<think>\n` at the end of a generation prompt).
    pub fn in_reasoning(markers: Vec<(String, Action)>, close: impl Into<String>) -> Self {
        FramedParser {
            mode: Mode::Reasoning {
                close: close.into().into(),
            },
            seen_output: true,
            ..FramedParser::new(markers)
        }
    }

    /// A parser for output that begins just after `marker` (one of `markers`, opening a
    /// call region), because the prompt wrote it, or at the start of a region the output
    /// may open with no marker (`marker` empty). If the region is no call, the marker is
    /// not given back: the model never wrote it.
    pub fn after_marker(markers: Vec<(String, Action)>, marker: &str) -> Self {
        let mut parser = FramedParser::new(markers);
        if let Some(index) = parser.markers.iter().position(|(text, _)| text == marker) {
            parser.mode = Mode::Region(index);
            parser.virtual_marker = true;
            parser.start_again = Some(index);
        }
        parser
    }

    /// This parser, with a call's marker inside reasoning ending the reasoning and opening
    /// its region, for families whose models call before they close their reasoning.
    pub fn calls_end_reasoning(mut self) -> Self {
        self.calls_end_reasoning = true;
        self
    }

    /// This parser, with calls sent as the model writes them where the pacing asks for it
    /// ([`Pacing`]), if `streams`: for families whose decoders read a call so far as they
    /// read it whole ([`crate::toolkit::cut`]).
    pub fn streaming(mut self, streams: bool) -> Self {
        self.streams = streams;
        self
    }

    fn run(&mut self, ended: bool) {
        loop {
            let switched = match self.mode.clone() {
                Mode::Content => self.scan_content(ended),
                Mode::Reasoning { close } => self.scan_reasoning(&close, ended),
                Mode::Region(marker) => self.scan_region(marker, ended),
            };
            if !switched {
                break;
            }
        }
    }

    /// Content up to the next marker; true when a marker switched the mode. Only bytes some
    /// marker begins with are tried as markers; the text between them is content at once.
    /// Content read whole goes at about 1 GB/s (bench parse, content, 1 MB; load 6).
    fn scan_content(&mut self, ended: bool) -> bool {
        let mut position = 0;
        while position < self.pending.len() {
            let rest = self.pending.from(position);
            let plain = rest
                .bytes()
                .position(|byte| self.first_bytes[usize::from(byte)])
                .unwrap_or(rest.len());
            let before = rest.get(..plain).unwrap_or_default();
            self.seen_output |= !before.trim_start().is_empty();
            position += plain;
            let rest = self.pending.from(position);
            let Some(c) = rest.chars().next() else {
                break;
            };
            let mut best: Option<usize> = None;
            let mut undecided = false;
            for (index, (marker, action)) in self.markers.iter().enumerate() {
                if marker.is_empty() || (self.seen_output && at_start_only(action)) {
                    continue;
                }
                if rest.starts_with(marker.as_str()) {
                    if best.is_none_or(|best| self.markers[best].0.len() < marker.len()) {
                        best = Some(index);
                    }
                } else if !ended && marker.starts_with(rest) {
                    undecided = true;
                }
            }
            if undecided {
                self.commit_content(position);
                return false;
            }
            if let Some(index) = best {
                self.commit_content(position);
                let marker_len = self.markers[index].0.len();
                self.pending.take(marker_len);
                self.on_marker(index);
                return true;
            }
            self.seen_output |= !c.is_whitespace();
            position += c.len_utf8();
        }
        self.commit_content(self.pending.len());
        false
    }

    fn commit_content(&mut self, up_to: usize) {
        let text = self.pending.take(up_to);
        if self.start_again.is_some() && !text.trim().is_empty() {
            self.start_again = None;
        }
        self.writer.write(text, &mut self.events);
    }

    fn on_marker(&mut self, index: usize) {
        self.seen_output = true;
        match &self.markers[index].1 {
            Action::Layout | Action::Answer => {}
            Action::Reasoning { close, .. } => {
                self.mode = Mode::Reasoning {
                    close: close.as_str().into(),
                }
            }
            Action::Call(_) => self.mode = Mode::Region(index),
            Action::Inline(_) => {
                self.pending.give_back(self.markers[index].0.len());
                self.mode = Mode::Region(index);
            }
        }
    }

    fn scan_reasoning(&mut self, close: &Arc<str>, ended: bool) -> bool {
        let text = self.pending.from(0);
        let closed_at = text.find(&**close);
        let call = self.first_reasoning_end(text);
        if let Some((at, index)) = call.filter(|&(at, _)| closed_at.is_none_or(|end| at < end)) {
            self.emit_reasoning(at);
            self.pending.take(self.markers[index].0.len());
            if matches!(self.markers[index].1, Action::Answer) {
                self.writer.skip_leading_whitespace = true;
                self.mode = Mode::Content;
            } else {
                self.region_in_reasoning = Some(Arc::clone(close));
                self.mode = Mode::Region(index);
            }
            return true;
        }
        if let Some(found) = closed_at {
            self.emit_reasoning(found);
            self.pending.take(close.len());
            self.writer.skip_leading_whitespace = true;
            self.mode = match self.start_again.take() {
                Some(index) => {
                    self.virtual_marker = true;
                    Mode::Region(index)
                }
                None => Mode::Content,
            };
            return true;
        }
        let keep = if ended {
            0
        } else {
            self.reasoning_ends()
                .map(|(marker, _)| held_prefix(text, marker))
                .fold(held_prefix(text, close), usize::max)
        };
        self.emit_reasoning(self.pending.len() - keep);
        false
    }

    /// The first `len` bytes held, as reasoning.
    fn emit_reasoning(&mut self, len: usize) {
        let reasoning = self.pending.take(len);
        if !reasoning.is_empty() {
            self.events.push(Event::Reasoning(reasoning.to_string()));
        }
    }

    /// The markers that end reasoning, with their indexes: those that open the answer
    /// ([`Action::Answer`]), and with [`FramedParser::calls_end_reasoning`] those that open
    /// call regions.
    fn reasoning_ends(&self) -> impl Iterator<Item = (&str, usize)> {
        let calls = self.calls_end_reasoning;
        self.markers
            .iter()
            .enumerate()
            .filter(move |(_, (marker, action))| {
                !marker.is_empty()
                    && match action {
                        Action::Answer => true,
                        Action::Call(_) => calls,
                        _ => false,
                    }
            })
            .map(|(index, (marker, _))| (marker.as_str(), index))
    }

    /// Where the first marker that ends reasoning is in `text`, and which (the longest
    /// where several start there).
    fn first_reasoning_end(&self, text: &str) -> Option<(usize, usize)> {
        self.reasoning_ends()
            .filter_map(|(marker, index)| Some((text.find(marker)?, index)))
            .min_by_key(|&(at, index)| (at, usize::MAX - self.markers[index].0.len()))
    }

    /// Matches the region held so far, resuming where the last piece stopped ([`Resume`]).
    /// Bench parse (`benches/parse-results.md`), 1-byte pieces, before → after resuming:
    /// Cohere one call of 64 KB 0.0 → 38 MB/s, DeepSeek V3 1 MB of calls 0.0 → 28 MB/s,
    /// Kimi K2 64 KB 0.0 → 24 MB/s; 1 KB regions 0.1–0.4 → 13–36 MB/s; whole, 180–500 MB/s.
    /// With regions bounded at [`MAX_REGION`], not 64 KB, a 1 MB call costs per byte what a
    /// 1 KB one does (1 MB ÷ 1 KB, 1-byte pieces: Cohere 1.47 → 1.04, Granite 1.58 → 0.92,
    /// Hermes 1.88 → 0.85; full table in `benches/parse-results.md`).
    fn scan_region(&mut self, marker: usize, ended: bool) -> bool {
        let (region, inline) = match &self.markers[marker] {
            (_, Action::Call(region)) => (region, false),
            (_, Action::Inline(region)) => (region, true),
            _ => {
                self.mode = Mode::Content;
                return true;
            }
        };
        let (text, ended) = bounded(self.pending.from(0), ended);
        let matched = region
            .body
            .resume(text, 0, ended, &mut self.captures, &mut self.region);
        let cut = ended
            && self.output_cut
            && region.body.matches(text, 0, false, &mut Vec::new()) == Match::Partial;
        let calls = match matched {
            Match::Partial if self.pending.len() <= MAX_REGION && !ended => {
                if self.streams
                    && !inline
                    && !region.body.may_hold_prose()
                    && self.pace.due(text.len())
                {
                    let so_far = calls_so_far(region, text);
                    self.pace.read(text.len());
                    if let Some(so_far) = so_far {
                        self.stream_calls(so_far);
                    }
                }
                return false;
            }
            _ if cut => cut_calls(region, text).map(|calls| (text.len(), calls)),
            Match::Partial
                if self.pending.len() > MAX_REGION && !inline && !region.body.may_hold_prose() =>
            {
                let at = floor_char_boundary(text, MAX_REGION);
                cut_calls(region, &text[..at]).map(|calls| (at, calls.ended()))
            }
            Match::Full(end) if end <= MAX_REGION => {
                (region.decode)(&self.captures).map(|whole| (end, CutCalls { whole, cut: None }))
            }
            Match::Full(_) | Match::Partial | Match::No => None,
        };
        let region_len = text.len();
        self.captures.clear();
        self.region.clear();
        self.mode = Mode::Content;
        let virtual_marker = std::mem::take(&mut self.virtual_marker);
        let in_reasoning = self.region_in_reasoning.take();
        let prose = inline || region.body.may_hold_prose();
        if calls.as_ref().is_none_or(|(_, calls)| calls.is_empty()) {
            self.end_streamed();
        }
        match (calls, in_reasoning) {
            // A region that calls nothing (a stray section marker) is layout: the
            // reasoning it was opened in goes on.
            (Some((end, calls)), Some(close)) if calls.is_empty() && !cut => {
                self.pending.take(end);
                self.mode = Mode::Reasoning { close };
            }
            (Some((end, calls)), _) if !calls.is_empty() || !cut => {
                self.pending.take(end);
                self.emit_calls(calls.whole);
                if let Some(call) = calls.cut {
                    self.write_call(call, false);
                }
                self.end_streamed();
            }
            (_, Some(close)) => {
                self.events
                    .push(Event::Reasoning(self.markers[marker].0.clone()));
                self.mode = Mode::Reasoning { close };
            }
            (_, None) if cut && !prose && region_len > 0 => {
                // A marker is never content: a region the output ended in that holds no
                // call (its name was cut, or it is no call) is dropped with its marker,
                // and the blank before it is layout, as before a call. A marker with
                // nothing after it at the very end stays text: it may be prose (`[`).
                self.pending.take(region_len);
                self.writer.end_of_call();
            }
            (_, None) if virtual_marker => {}
            (_, None) => {
                let text = self.markers[marker].0.clone();
                if inline {
                    self.pending.take(text.len());
                }
                self.writer.write(&text, &mut self.events);
            }
        }
        true
    }

    fn emit_calls(&mut self, calls: Vec<Call>) {
        self.writer.end_of_call();
        for call in calls {
            if call.is_text() {
                self.writer.write_apart(&call.arguments, &mut self.events);
                continue;
            }
            self.write_call(call, true);
        }
    }

    /// Writes `call`, ended if `end`: as the rest of the call the region sent in its place
    /// while it was being written, or as a new call.
    fn write_call(&mut self, call: Call, end: bool) {
        let index = match self.streamed.pop_front() {
            Some(streamed) if streamed.goes_on_as(&call) => {
                self.send_arguments(streamed.index, &call.arguments[streamed.sent.len()..]);
                streamed.index
            }
            Some(streamed) => {
                self.end_call_as_sent(streamed);
                self.open_call(call)
            }
            None => self.open_call(call),
        };
        if end {
            self.events.push(Event::ToolCallEnd { index });
        }
    }

    /// Starts `call` with its arguments, and leaves it open; its index.
    fn open_call(&mut self, call: Call) -> u32 {
        let index = self.start_call(call.id, call.name);
        self.events.push(Event::ToolCallArguments {
            index,
            fragment: call.arguments,
        });
        index
    }

    fn start_call(&mut self, id: Option<String>, name: String) -> u32 {
        self.writer.end_of_call();
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        self.events.push(Event::ToolCallStart { index, id, name });
        index
    }

    fn send_arguments(&mut self, index: u32, fragment: &str) {
        if !fragment.is_empty() {
            self.events.push(Event::ToolCallArguments {
                index,
                fragment: fragment.to_string(),
            });
        }
    }

    /// Sends what the region being written decides so far: each call's name and decided
    /// arguments, as the part not sent yet. No call ends before the region is decided
    /// ([`FramedParser::write_call`]); calls after a text between calls wait for it too.
    fn stream_calls(&mut self, calls: Vec<Call>) {
        for (n, call) in calls.into_iter().enumerate() {
            if call.is_text() {
                return;
            }
            if n == self.streamed.len() {
                let index = self.start_call(call.id.clone(), call.name.clone());
                self.streamed.push_back(Streamed {
                    index,
                    name: call.name.clone(),
                    sent: String::new(),
                });
            }
            let Some(streamed) = self.streamed.get_mut(n) else {
                return;
            };
            if !streamed.goes_on_as(&call) {
                continue;
            }
            let index = streamed.index;
            let fragment = call.arguments[streamed.sent.len()..].to_string();
            streamed.sent.push_str(&fragment);
            self.send_arguments(index, &fragment);
        }
    }

    /// Ends the calls sent while the region was being written that its reading did not
    /// carry on (it is no call after all, or read otherwise).
    fn end_streamed(&mut self) {
        while let Some(streamed) = self.streamed.pop_front() {
            self.end_call_as_sent(streamed);
        }
    }

    /// Ends a call sent in part with the arguments sent, closed to a whole JSON value: a
    /// client has them already, and cannot take them back.
    fn end_call_as_sent(&mut self, streamed: Streamed) {
        self.send_arguments(streamed.index, &closing_of(&streamed.sent));
        self.events.push(Event::ToolCallEnd {
            index: streamed.index,
        });
    }
}

#[derive(Debug, Default)]
struct Pace {
    pacing: Pacing,
    /// When the last reading ended (or, before the first, when the first piece was looked at).
    last_read: Option<Instant>,
    /// What the last reading cost a byte of the region read, in seconds; before the first,
    /// [`FIRST_COST_PER_BYTE`].
    cost_per_byte: Option<f64>,
    /// When the reading [`Pace::due`] allowed began.
    started: Option<Instant>,
    /// How many pieces go by between two looks at the clock: one while pieces come further
    /// apart than [`MIN_READING_GAP`] (a model's tokens), doubling up to
    /// [`MOST_PIECES_UNTIMED`] while they come closer (a burst, a benchmark), where a look at
    /// the clock on every piece cost more than the reading.
    look_every: u32,
    /// Pieces gone by since the last look.
    unlooked: u32,
    last_look: Option<Instant>,
}

impl Pace {
    /// Whether to read a region of `len` bytes now: when the time since the last reading is
    /// [`READING_SHARE`] times what this one will cost (the last one's cost a byte, at this
    /// length), and at least [`MIN_READING_GAP`]; so readings take at most a 33rd of the
    /// time however fast the region grows.
    fn due(&mut self, len: usize) -> bool {
        match self.pacing {
            Pacing::Whole => false,
            Pacing::EveryPiece => true,
            Pacing::Timed => {
                self.unlooked += 1;
                if self.unlooked < self.look_every {
                    return false;
                }
                self.unlooked = 0;
                let now = Instant::now();
                let close = self
                    .last_look
                    .is_some_and(|last| now - last < MIN_READING_GAP);
                self.look_every = match close {
                    true => (self.look_every * 2).clamp(1, MOST_PIECES_UNTIMED),
                    false => 1,
                };
                self.last_look = Some(now);
                let wait = MIN_READING_GAP.max(Duration::from_secs_f64(
                    READING_SHARE * self.cost_per_byte.unwrap_or(FIRST_COST_PER_BYTE) * len as f64,
                ));
                // The first look starts the clock: a parser fed a whole short region at once
                // does not read it on the way (1 KB calls in 16-byte pieces cost 10–20% more).
                let last_read = *self.last_read.get_or_insert(now);
                let due = now - last_read >= wait;
                self.started = due.then_some(now);
                due
            }
        }
    }

    /// A reading of `len` bytes that [`Pace::due`] allowed is done.
    fn read(&mut self, len: usize) {
        if let Some(started) = self.started.take() {
            let now = Instant::now();
            self.cost_per_byte = Some((now - started).as_secs_f64() / len.max(1) as f64);
            self.last_read = Some(now);
        }
    }
}

/// The least time between two readings of a region being written ([`Pacing::Timed`]).
const MIN_READING_GAP: Duration = Duration::from_millis(1);

/// What a reading is taken to cost a byte before one is timed, in seconds: a reading decodes
/// the region two or three times, at 50–100 MB/s. Assumed free, the first reading of a 1 MB
/// region fed in 16-byte pieces came a millisecond in and cost a third of the parse.
const FIRST_COST_PER_BYTE: f64 = 10e-9;

/// How many times a reading's cost the time between two readings is at least ([`Pace`]).
/// At 16, streamed parsing cost 5–20% more than whole in 1-byte pieces (bench parse
/// `--streamed`), where readings at memory speed are pure cost.
const READING_SHARE: f64 = 32.0;

/// The most pieces that go by without a look at the clock ([`Pace`]): after a burst, a
/// model's next tokens wait at most this many pieces for their reading. At 8, the looks
/// alone cost a few percent in 1-byte pieces.
const MOST_PIECES_UNTIMED: u32 = 64;

/// Text read but not yet decided, read from `start` on: deciding its front moves a mark,
/// not the text after it. Draining the front of the buffer on every decision made a 1 MB
/// output of 3,500 calls, read whole, quadratic; the text decided is dropped once per piece
/// instead, when the next piece comes (bench parse, qwen3_coder, 1 MB of calls read whole:
/// 8.9 → 159 MB/s).
#[derive(Debug, Default)]
struct Held {
    text: String,
    start: usize,
}

impl Held {
    fn push(&mut self, piece: &str) {
        if self.start == self.text.len() {
            self.text.clear();
        } else {
            self.text.drain(..self.start);
        }
        self.start = 0;
        self.text.push_str(piece);
    }

    /// The text held from `at` (an offset into what is held) on.
    fn from(&self, at: usize) -> &str {
        self.text.get(self.start + at..).unwrap_or("")
    }

    fn len(&self) -> usize {
        self.text.len() - self.start
    }

    /// Holds again the last `len` bytes decided, before any more text comes: an inline
    /// region's marker, which its pattern reads.
    fn give_back(&mut self, len: usize) {
        self.start = self.start.saturating_sub(len);
    }

    /// Decides the first `len` bytes held: they are no longer held, and are returned.
    fn take(&mut self, len: usize) -> &str {
        let from = self.start;
        self.start = (from + len).min(self.text.len());
        self.text.get(from..self.start).unwrap_or("")
    }
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A region's text as its pattern reads it: at most [`MAX_REGION`] bytes and a character,
/// then not ended. So a region past the bound is decided on the same text read whole as in
/// pieces (whole, a 1 MB region was read to its end before it was given up).
fn bounded(text: &str, ended: bool) -> (&str, bool) {
    if text.len() <= MAX_REGION {
        return (text, ended);
    }
    let mut end = MAX_REGION + 1;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (&text[..end], false)
}

fn at_start_only(action: &Action) -> bool {
    matches!(
        action,
        Action::Reasoning {
            at_start_only: true,
            ..
        }
    )
}

impl StreamParser for FramedParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        self.pending.push(piece);
        self.run(false);
        std::mem::take(&mut self.events)
    }

    fn finish(&mut self) -> Vec<Event> {
        self.run(true);
        self.writer.finish(&mut self.events);
        std::mem::take(&mut self.events)
    }

    fn finish_cut(&mut self) -> Vec<Event> {
        self.output_cut = true;
        self.finish()
    }

    fn set_pacing(&mut self, pacing: Pacing) {
        self.pace.pacing = pacing;
    }
}

/// Writes content, keeping the whitespace around calls out of it: trailing whitespace is
/// held until text follows (then it is content) or a call stands (then it is layout);
/// whitespace after a call is held the same way and dropped at the end of the output.
#[derive(Debug, Clone, Default)]
struct ContentWriter {
    held_whitespace: String,
    held_follows_call: bool,
    skip_leading_whitespace: bool,
    /// Whether any content has been written.
    wrote: bool,
}

impl ContentWriter {
    /// In 1-byte pieces a piece of content costs two allocations (its event's text and the
    /// events handed back) and little else: its text is copied once, at its size, and the
    /// held text cleared, not drained. Content in 1-byte pieces goes at 17–21 MB/s of CPU
    /// time (bench parse, content), about 50 ns a byte, most of it those two allocations;
    /// a call region's bytes, which make no event, go at 30–40.
    fn write(&mut self, text: &str, events: &mut Vec<Event>) {
        let text = if self.skip_leading_whitespace {
            text.trim_start()
        } else {
            text
        };
        if text.is_empty() {
            return;
        }
        self.skip_leading_whitespace = false;
        let body = text.trim_end();
        if body.is_empty() {
            self.held_whitespace.push_str(text);
            return;
        }
        self.held_follows_call = false;
        self.wrote = true;
        match events.last_mut() {
            Some(Event::Content(previous)) => {
                previous.push_str(&self.held_whitespace);
                previous.push_str(body);
            }
            _ => events.push(Event::Content(
                [self.held_whitespace.as_str(), body].concat(),
            )),
        }
        self.held_whitespace.clear();
        self.held_whitespace.push_str(&text[body.len()..]);
    }

    /// `text` after a line break where content came before it, which the layout around
    /// it (dropped) no longer separates it from.
    fn write_apart(&mut self, text: &str, events: &mut Vec<Event>) {
        if self.wrote {
            self.write(&format!("\n{text}"), events);
        } else {
            self.write(text, events);
        }
    }

    fn end_of_call(&mut self) {
        self.held_whitespace.clear();
        self.held_follows_call = true;
    }

    fn finish(&mut self, events: &mut Vec<Event>) {
        let held = std::mem::take(&mut self.held_whitespace);
        if !held.is_empty() && !self.held_follows_call {
            events.push(Event::Content(held));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse_all, parse_cut};
    use crate::toolkit::json_scan::JsonScanner;
    use crate::toolkit::pattern::{Pat, MAX_PROSE};
    use proptest::prelude::*;

    fn json_array_region() -> Region {
        Region {
            body: Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt("</a>")]),
            decode: Arc::new(|captures| {
                let value: serde_json::Value = serde_json::from_str(captures.first()?).ok()?;
                let name = value.get("name")?.as_str()?.to_string();
                Some(vec![Call::new(name, "{}")])
            }),
        }
    }

    fn parser() -> FramedParser {
        FramedParser::new(vec![
            ("<a>".into(), Action::Call(json_array_region())),
            (
                "<think>".into(),
                Action::Reasoning {
                    close: "</think>".into(),
                    at_start_only: true,
                },
            ),
            ("<end>".into(), Action::Layout),
        ])
    }

    fn joined(events: Vec<Event>) -> Vec<Event> {
        let mut out: Vec<Event> = Vec::new();
        for event in events {
            match (out.last_mut(), event) {
                (Some(Event::Content(a)), Event::Content(b)) => a.push_str(&b),
                (Some(Event::Reasoning(a)), Event::Reasoning(b)) => a.push_str(&b),
                (
                    Some(Event::ToolCallArguments { index, fragment }),
                    Event::ToolCallArguments {
                        index: next,
                        fragment: more,
                    },
                ) if *index == next => fragment.push_str(&more),
                (_, event) => out.push(event),
            }
        }
        out
    }

    fn parse_pieced(text: &str, cuts: &[usize]) -> Vec<Event> {
        parse_pieced_by(parser(), Pacing::Whole, text, cuts)
    }

    fn parse_pieced_by(
        mut parser: FramedParser,
        pacing: Pacing,
        text: &str,
        cuts: &[usize],
    ) -> Vec<Event> {
        parser.set_pacing(pacing);
        let mut events = Vec::new();
        let mut last = 0;
        for &cut in cuts {
            if cut > last && cut < text.len() && text.is_char_boundary(cut) {
                events.extend(parser.push(&text[last..cut]));
                last = cut;
            }
        }
        events.extend(parser.push(&text[last..]));
        events.extend(parser.finish());
        joined(events)
    }

    #[test]
    fn reads_reasoning_a_call_and_layout() {
        let events = joined(parse_all(
            &mut parser(),
            "<think>hm <a>{}</think>\nHi <a>{\"name\": \"f\"}</a> <end>",
        ));
        assert_eq!(
            events,
            [
                Event::Reasoning("hm <a>{}".into()),
                Event::Content("Hi".into()),
                Event::ToolCallStart {
                    index: 0,
                    id: None,
                    name: "f".into()
                },
                Event::ToolCallArguments {
                    index: 0,
                    fragment: "{}".into()
                },
                Event::ToolCallEnd { index: 0 },
            ]
        );
    }

    #[test]
    fn a_call_ends_the_reasoning_the_prompt_opened_only_when_asked() {
        let markers = || parser().markers;
        let text = "plan <a>{\"name\": \"f\"}</a> done";
        let call = [
            Event::ToolCallStart {
                index: 0,
                id: None,
                name: "f".into(),
            },
            Event::ToolCallArguments {
                index: 0,
                fragment: "{}".into(),
            },
            Event::ToolCallEnd { index: 0 },
        ];
        for cut in 0..text.len() {
            let mut until_call =
                FramedParser::in_reasoning(markers(), "</think>").calls_end_reasoning();
            let mut events = until_call.push(&text[..cut]);
            events.extend(until_call.push(&text[cut..]));
            events.extend(until_call.finish());
            let mut expected = vec![Event::Reasoning("plan ".into())];
            expected.extend(call.clone());
            expected.push(Event::Content(" done".into()));
            assert_eq!(joined(events), expected, "cut at {cut}");
        }
        assert_eq!(
            joined(parse_all(
                &mut FramedParser::in_reasoning(markers(), "</think>"),
                text
            )),
            [Event::Reasoning(text.into())]
        );
    }

    #[test]
    fn a_region_that_is_no_call_is_content_as_written() {
        let text = "x <a>{\"nam\": 1} <a>nope <think>";
        assert_eq!(
            joined(parse_all(&mut parser(), text)),
            [Event::Content(text.into())]
        );
    }

    #[test]
    fn an_empty_marker_names_the_region_the_output_may_open_with() {
        let markers = || {
            vec![
                (String::new(), Action::Call(json_array_region())),
                ("<a>".into(), Action::Call(json_array_region())),
            ]
        };
        let bare = "{\"name\": \"f\"} then {\"name\": \"g\"} <a>{\"name\": \"h\"}";
        let events = joined(parse_all(
            &mut FramedParser::after_marker(markers(), ""),
            bare,
        ));
        let names: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                Event::ToolCallStart { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["f", "h"]);
        let prose = "no {\"name\": \"f\"}";
        assert_eq!(
            joined(parse_all(
                &mut FramedParser::after_marker(markers(), ""),
                prose
            )),
            [Event::Content(prose.into())]
        );
    }

    #[test]
    fn an_inline_region_reads_its_marker_and_what_cannot_open_one_streams() {
        let region = Region {
            body: Pat::Seq(vec![Pat::ahead(Pat::lit("{\"name\"")), Pat::Json]),
            decode: json_array_region().decode,
        };
        let mut parser = FramedParser::new(vec![("{".into(), Action::Inline(region))]);
        let text = "a {\"age\": 1} b {\"name\": \"f\"} {\"na";
        assert_eq!(
            joined(parser.push(text)),
            [
                Event::Content("a {\"age\": 1} b".into()),
                Event::ToolCallStart {
                    index: 0,
                    id: None,
                    name: "f".into()
                },
                Event::ToolCallArguments {
                    index: 0,
                    fragment: "{}".into()
                },
                Event::ToolCallEnd { index: 0 },
            ]
        );
        assert_eq!(joined(parser.finish()), [Event::Content(" {\"na".into())]);
    }

    #[test]
    fn a_region_past_the_bound_is_a_call_cut_there_whole_and_in_pieces() {
        let pad = "x".repeat(MAX_REGION);
        let text = format!("<a>{{\"name\": \"f\", \"arguments\": {{\"pad\": \"{pad}\"}}}}</a>");
        // Each piece is read whole (every piece, as tests read): pieces of a megabyte.
        let pieces: Vec<usize> = (0..text.len()).step_by(1 << 20).collect();
        let bound = "<a>".len() + MAX_REGION;
        let written = &text[text.find("{\"pad").expect("arguments")..bound];
        let expected = [
            Event::ToolCallStart {
                index: 0,
                id: None,
                name: "f".into(),
            },
            Event::ToolCallArguments {
                index: 0,
                fragment: format!("{written}\"}}"),
            },
            Event::ToolCallEnd { index: 0 },
            Event::Content(text[bound..].to_string()),
        ];
        let read =
            |cuts: &[usize]| parse_pieced_by(written_parser(), Pacing::EveryPiece, &text, cuts);
        assert_eq!(read(&[]), expected);
        assert_eq!(read(&pieces), expected);
    }

    /// A Hermes-like parser: `<a>` opens a call object read as the model wrote it.
    fn written_parser() -> FramedParser {
        let region = Region {
            body: Pat::Seq(vec![Pat::Json, Pat::Ws, Pat::opt("</a>")]),
            decode: Arc::new(|captures| {
                Some(vec![crate::toolkit::call_json::written_call(
                    captures.first()?,
                )?])
            }),
        };
        FramedParser::new(vec![("<a>".into(), Action::Call(region))]).streaming(true)
    }

    /// The call a text the token limit cut at `end` reads to, as (name, arguments, ended),
    /// and its content.
    fn cut_at(text: &str, end: usize) -> (Vec<(String, String, bool)>, String) {
        let events = joined(parse_cut(&mut written_parser(), &text[..end]));
        let mut calls = Vec::new();
        let mut content = String::new();
        for event in events {
            match event {
                Event::Content(text) => content.push_str(&text),
                Event::ToolCallStart { name, .. } => calls.push((name, String::new(), false)),
                Event::ToolCallArguments { fragment, .. } => {
                    if let Some(call) = calls.last_mut() {
                        call.1.push_str(&fragment);
                    }
                }
                Event::ToolCallEnd { .. } => {
                    if let Some(call) = calls.last_mut() {
                        call.2 = true;
                    }
                }
                Event::Reasoning(_) => {}
            }
        }
        (calls, content)
    }

    #[test]
    fn a_call_cut_anywhere_is_a_call_with_its_arguments_as_written_never_content() {
        let arguments = r#"{"path": "a.py", "n": -12.5e3, "ok": true, "none": null, "list": [1, "x\n\u00e9\ud83d\ude00"], "o": {}}"#;
        let text = format!("Hi <a>{{\"name\": \"write\", \"arguments\": {arguments}}}</a>");
        let name_ends = text.find("write\"").expect("name") + "write\"".len();
        let arguments_start = text.find(arguments).expect("arguments");
        let arguments_end = arguments_start + arguments.len();
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let (calls, content) = cut_at(&text, end);
            // Up to its whole marker, the text is content as written (a marker's start,
            // or a marker with nothing after it, may be prose); after, the blank before
            // the marker is layout.
            let shown = if end <= "Hi <a>".len() {
                &text[..end]
            } else {
                "Hi"
            };
            assert_eq!(content, shown, "content, cut at {end}");
            if end < name_ends {
                assert!(
                    calls.is_empty(),
                    "a call without its name, cut at {end}: {calls:?}"
                );
                continue;
            }
            let [(name, written, ended)] = &calls[..] else {
                panic!("one call, cut at {end}: {calls:?}");
            };
            assert_eq!(name, "write");
            assert_eq!(*ended, end > arguments_end, "ended, cut at {end}");
            let expected = match end {
                _ if end <= arguments_start => "",
                _ if end >= arguments_end => arguments,
                _ => &text[arguments_start..end],
            };
            assert!(
                written == expected || (end <= arguments_start && written == "{}"),
                "cut at {end}: {written:?}, not {expected:?}"
            );
        }
    }

    /// The events of `text` fed one char at a time to `parser`, read on every piece.
    fn char_by_char(mut parser: FramedParser, text: &str) -> Vec<Vec<Event>> {
        parser.set_pacing(Pacing::EveryPiece);
        let mut out: Vec<Vec<Event>> = text
            .char_indices()
            .map(|(at, c)| parser.push(&text[at..at + c.len_utf8()]))
            .collect();
        out.push(parser.finish());
        out
    }

    #[test]
    fn a_call_streams_its_name_once_written_and_its_arguments_as_they_come() {
        let arguments = r#"{"path": "a.py", "n": 12, "content": "line one\nline \"two\" é"}"#;
        let text = format!("<a>{{\"name\": \"write\", \"arguments\": {arguments}}}</a>");
        let steps = char_by_char(written_parser(), &text);
        let name_written = text.find("write\"").expect("name") + "write\"".len();
        let started = steps
            .iter()
            .position(|events| matches!(events.first(), Some(Event::ToolCallStart { .. })))
            .expect("a start");
        assert_eq!(
            started + 1,
            name_written,
            "the name is sent with its last char"
        );
        let fragments: Vec<&str> = steps
            .iter()
            .flatten()
            .filter_map(|event| match event {
                Event::ToolCallArguments { fragment, .. } => Some(fragment.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(fragments.concat(), arguments);
        assert!(fragments.len() >= 30, "{fragments:?}");
        // A number is sent once a byte after it says it is whole.
        assert!(fragments.iter().all(|fragment| !fragment.ends_with('1')));
        let whole = joined(parse_all(&mut written_parser(), &text));
        assert_eq!(joined(steps.concat()), whole);
    }

    #[test]
    fn calls_before_the_cut_one_are_whole_and_a_cut_prose_region_stays_content() {
        let text = "<a>{\"name\": \"f\", \"arguments\": {}}</a>\n<a>{\"name\": \"g\", \"arguments\": {\"q\": \"ab";
        let (calls, content) = cut_at(text, text.len());
        assert_eq!(content, "");
        assert_eq!(
            calls,
            [
                ("f".into(), "{}".into(), true),
                ("g".into(), "{\"q\": \"ab".into(), false)
            ]
        );
        let prose = Region {
            body: Pat::Seq(vec![Pat::until(";", MAX_PROSE), Pat::Json]),
            decode: json_array_region().decode,
        };
        let mut parser = FramedParser::new(vec![("Do:".into(), Action::Call(prose))]);
        let text = "Do: this and that";
        assert_eq!(
            joined(parse_cut(&mut parser, text)),
            [Event::Content(text.into())]
        );
    }

    #[test]
    fn json_closings_hold_the_mark_where_the_text_ended() {
        let close = |text: &str| {
            let mut scanner = JsonScanner::new();
            scanner.push(text);
            let mut mark = Some("M");
            scanner.closing(&mut mark)
        };
        for (text, closing) in [
            ("", "{\"M\":null}"),
            ("{", "\"M\":null}"),
            ("{\"a", "M\":null}"),
            ("{\"a\"", ":\"M\"}"),
            ("{\"a\": ", "\"M\"}"),
            ("{\"a\": [1", ",\"M\"]}"),
            ("{\"a\": tr", "ue,\"M\":null}"),
            ("{\"a\": 1.", "0,\"M\":null}"),
            ("{\"a\": \"x\\", "nM\"}"),
            ("{\"a\": \"x\\u00", "00M\"}"),
            ("{\"a\": \"\\ud83d", "\\uDC00M\"}"),
            ("{\"a\": {}, ", "\"M\":null}"),
            ("{}", ""),
        ] {
            assert_eq!(close(text).as_deref(), Some(closing), "{text}");
            let whole = format!("{text}{closing}");
            assert!(
                serde_json::from_str::<serde_json::Value>(&whole).is_ok(),
                "{whole}"
            );
        }
        // No JSON, or a number or word at the top level, where nothing holds the mark.
        for text in ["{]", "f", "tru", "true", "12", "-"] {
            assert_eq!(close(text), None, "{text}");
        }
    }

    proptest! {
        #[test]
        fn cutting_changes_nothing(
            parts in proptest::collection::vec(prop_oneof![
                Just("<a>".to_string()), Just("</a>".to_string()), Just("<think>".to_string()),
                Just("</think>".to_string()), Just("<end>".to_string()),
                Just("{\"name\": \"f\"}".to_string()), "[a-z {}\"<>/é]{0,5}",
            ], 0..8),
            cuts in proptest::collection::vec(0..80usize, 0..6),
        ) {
            let text = parts.concat();
            let mut cuts = cuts;
            cuts.sort_unstable();
            prop_assert_eq!(parse_pieced(&text, &cuts), parse_pieced(&text, &[]));
            let every: Vec<usize> = (0..text.len()).collect();
            prop_assert_eq!(parse_pieced(&text, &every), parse_pieced(&text, &[]));
        }
    }
}
