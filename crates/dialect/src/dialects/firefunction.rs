//! FireFunction v2 (Llama 3 based, seed 001): calls as one JSON list after `functools`,
//! `functools[{"name": "f", "arguments": {…}}, …]`, with no closing marker.
//!
//! Its template does not read `tools`: it shows `functions`, the tools as JSON text (printed
//! with two-space indents, as llama.cpp passes them), and `datetime`, today as
//! `Jul 26 2024 10:30:00 GMT`, in a system prompt of its own; both are passed here, with the
//! history's past calls' arguments as objects (the template writes `arguments|tojson`).
//! Seed 001's Ollama template shows the same prompt.
//!
//! Grammar (llama.cpp's): `functools[` then one call object per tool alternative, more after
//! `, ` with `parallel_tool_calls`, then `]`; lazy on `functools[` for `auto`, from the first
//! byte for `required` and a named function. The parser ([`FunctoolsParser`], which serves
//! any family writing calls this way) reads the list when it is complete; text around it
//! is content, and a list that is not calls is content as written.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use toolbridge_chat::{ChatRequest, Tool};
use toolbridge_grammar::{Expr, Grammar, Trigger};

use crate::dialect::{ChatTemplate, Constraint, Dialect, DialectError, Prepared};
use crate::dialects::prep::{history, named_alternatives, render, repeated};
use crate::events::Event;
use crate::parser::StreamParser;
use crate::toolkit::choice::Choice;
use crate::toolkit::inline_calls::{json_call, Layout};
use crate::toolkit::json_scan::{JsonScanner, Scan};
use crate::toolkit::tag_scan::{Piece, Placement, TagScanner};

/// What opens the list of calls.
pub const FUNCTOOLS: &str = "functools[";

/// The FireFunction v2 dialect; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct FireFunctionDialect {
    /// Seconds since the epoch to print as `datetime`; `None` is now.
    pub now: Option<u64>,
}

impl Dialect for FireFunctionDialect {
    fn name(&self) -> &'static str {
        "firefunction_v2"
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let messages = history(request)?;
        let mut extra = Map::new();
        extra.insert("functions".into(), functions(choice.shown)?.into());
        let now = self.now.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs())
        });
        extra.insert("datetime".into(), datetime(now).into());
        let prompt = render(template, &messages, &[], extra)?;
        choice.prepared(
            request,
            prompt,
            Box::new(FunctoolsParser::new()),
            constraint,
        )
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(FunctoolsParser::new())
    }
}

/// The tools as the template's `functions`: JSON with two-space indents, `""` for none.
fn functions(tools: &[Tool]) -> Result<String, DialectError> {
    if tools.is_empty() {
        return Ok(String::new());
    }
    serde_json::to_string_pretty(tools).map_err(|source| DialectError::Json {
        what: "the tools",
        source,
    })
}

/// `%b %d %Y %H:%M:%S GMT` of `seconds` since the epoch.
pub fn datetime(seconds: u64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {day:02} {year} {:02}:{:02}:{:02} GMT",
        MONTHS[(month - 1) as usize],
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

fn constraint(tools: &[&Tool], lazy: bool, parallel: bool) -> Result<Constraint, DialectError> {
    let mut grammar = Grammar::new("root");
    grammar.set_rule(
        "call",
        Expr::Seq(vec![
            Expr::literal("{\"name\": \""),
            named_alternatives(tools, "\", \"arguments\": ")?,
            Expr::literal("}"),
        ]),
    );
    grammar.set_rule(
        "root",
        Expr::Seq(vec![
            Expr::literal(FUNCTOOLS),
            repeated(Expr::reference("call"), ", ", parallel),
            Expr::literal("]"),
        ]),
    );
    Ok(Constraint {
        grammar,
        triggers: vec![Trigger::Word(FUNCTOOLS.to_string())],
        lazy,
    })
}

/// Reads `functools[…]` call lists among content; see the module docs.
#[derive(Debug, Clone)]
pub struct FunctoolsParser {
    tags: TagScanner,
    layout: Layout,
    /// The list being read, from its marker on.
    list: Option<(String, JsonScanner)>,
    events: Vec<Event>,
    next_index: u32,
}

impl Default for FunctoolsParser {
    fn default() -> Self {
        FunctoolsParser::new()
    }
}

impl FunctoolsParser {
    pub fn new() -> Self {
        let tags = TagScanner::new([FUNCTOOLS], Placement::Anywhere)
            .unwrap_or_else(|error| unreachable!("the marker is not empty: {error}"));
        FunctoolsParser {
            tags,
            layout: Layout::default(),
            list: None,
            events: Vec::new(),
            next_index: 0,
        }
    }

    fn read(&mut self, pieces: Vec<Piece>) {
        for piece in pieces {
            match piece {
                Piece::Text(text) => self.on_text(&text),
                Piece::Marker(_) => self.on_marker(),
            }
        }
    }

    fn on_marker(&mut self) {
        if let Some((_, scanner)) = &mut self.list {
            let mut trial = scanner.clone();
            if matches!(trial.push(FUNCTOOLS), Scan::NeedMore) {
                self.on_text(FUNCTOOLS);
                return;
            }
            self.give_back();
        }
        let mut scanner = JsonScanner::new();
        scanner.push("[");
        self.list = Some((FUNCTOOLS.to_string(), scanner));
    }

    fn on_text(&mut self, text: &str) {
        let mut rest = text.to_string();
        while !rest.is_empty() {
            let Some((raw, scanner)) = &mut self.list else {
                self.layout.write(&rest, &mut self.events);
                return;
            };
            match scanner.push(&rest) {
                Scan::NeedMore => {
                    raw.push_str(&rest);
                    return;
                }
                Scan::Invalid { .. } => {
                    raw.push_str(&rest);
                    self.give_back();
                    return;
                }
                Scan::Complete { rest_at } => {
                    let (read, after) = rest.split_at_checked(rest_at).unwrap_or((&rest, ""));
                    raw.push_str(read);
                    let after = after.to_string();
                    let list = raw.get(FUNCTOOLS.len() - 1..).unwrap_or("").to_string();
                    match calls(&list) {
                        Some(calls) => {
                            self.list = None;
                            self.emit(calls);
                        }
                        None => self.give_back(),
                    }
                    rest = after;
                }
            }
        }
    }

    fn emit(&mut self, calls: Vec<(String, String)>) {
        self.layout.before_call();
        for (name, arguments) in calls {
            let index = self.next_index;
            self.next_index = self.next_index.saturating_add(1);
            self.events.push(Event::ToolCallStart {
                index,
                id: None,
                name,
            });
            self.events.push(Event::ToolCallArguments {
                index,
                fragment: arguments,
            });
            self.events.push(Event::ToolCallEnd { index });
        }
        self.layout.after_call();
    }

    fn give_back(&mut self) {
        if let Some((raw, _)) = self.list.take() {
            self.layout.write(&raw, &mut self.events);
        }
    }
}

/// `[{"name", "arguments"}, …]` as calls; an empty list or anything else is none.
fn calls(text: &str) -> Option<Vec<(String, String)>> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(items) if !items.is_empty() => items.iter().map(json_call).collect(),
        _ => None,
    }
}

impl StreamParser for FunctoolsParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let pieces = self.tags.push(piece);
        self.read(pieces);
        std::mem::take(&mut self.events)
    }

    fn finish(&mut self) -> Vec<Event> {
        let pieces = self.tags.finish();
        self.read(pieces);
        self.give_back();
        self.layout.finish(&mut self.events);
        std::mem::take(&mut self.events)
    }
}
