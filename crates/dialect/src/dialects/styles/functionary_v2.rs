//! The `functionary_v2` style (seed 000's `TYPESCRIPT_FUNCTIONARY_V2`): the tools as a
//! TypeScript namespace, and every assistant message routed by its `<|recipient|>`.
//!
//! Functionary's template ends the prompt with `<|from|>assistant\n<|recipient|>`, so the
//! model's first word says where its message goes: `all` for the user (content follows
//! `\n<|content|>`), or a tool's name (its JSON arguments follow). Further messages each
//! open with `<|from|>assistant\n<|recipient|>` again. The seed's grammar admits content
//! messages, then calls, then content (`content+ (tool-call+ content*)? | tool-call+
//! content*`), a call written `name\n<|content|>\n{…}\n`; content is any text without
//! `<|from|>`. So the grammar holds from the first byte (no trigger). It admits an answer
//! without calls even when `tool_choice` requires one, as the seed's does.
//!
//! Past calls are written in `<tool_call>` tags ([`ToolCallTags`]) as the seed shows them:
//! the template concatenates arguments as text and cannot render OpenAI's calls.
//!
//! The parser ([`RoutedParser`]) cuts the output at each `<|from|>assistant\n<|recipient|>`
//! and reads each message's header with the toolkit's [`HeaderReader`]: `all` streams its
//! text as content at once; a tool's name holds the message until it ends, because only a
//! whole body tells a call (one JSON object) from garbage, which is given back as content,
//! exactly as written.

use serde_json::Value;
use toolbridge_chat::Tool;
use toolbridge_grammar::render::typescript::functionary_namespace;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar};

use crate::dialect::checked_parameters;
use crate::error::DialectError;
use crate::events::Event;
use crate::parser::StreamParser;
use crate::rewrite::{CallWriter, ToolCallTags};
use crate::toolkit::header::{Header, HeaderReader};
use crate::toolkit::prompt_style::{CallSyntax, PromptStyle, ToolsPrompt};
use crate::toolkit::tag_scan::{Piece, Placement, TagScanner};

/// What opens every assistant message after the first (the prompt opens the first).
const START: &str = "<|from|>assistant\n<|recipient|>";

/// What ends a message's header, its recipient.
const SEPARATOR: &str = "\n<|content|>";

/// The recipient of content for the user.
const ALL: &str = "all";

/// The word content may not contain: it would open a message.
const FROM: &str = "<|from|>";

/// The `functionary_v2` style's system prompt: the tools' TypeScript namespace.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionaryV2;

impl ToolsPrompt for FunctionaryV2 {
    fn name(&self) -> &'static str {
        "functionary_v2"
    }

    fn describe(&self, tools: &[Value], _answer: Option<&Value>) -> String {
        functionary_namespace(tools)
    }
}

/// The `functionary_v2` dialect: the namespace prompt, messages routed by recipient.
pub fn dialect() -> PromptStyle<FunctionaryV2> {
    PromptStyle::new(FunctionaryV2, &RoutedCalls)
}

/// Messages routed by `<|recipient|>`; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoutedCalls;

impl CallSyntax for RoutedCalls {
    fn writer(&self) -> &dyn CallWriter {
        &ToolCallTags
    }

    fn trigger(&self) -> Option<&'static str> {
        None
    }

    /// `root ::= first-content content* (call+ content*)? | first-call call* content*`,
    /// each `first-` rule a message without its opening [`START`].
    fn grammar(&self, tools: &[&Tool], _answer: Option<&Value>) -> Result<Grammar, DialectError> {
        let calls = tools
            .iter()
            .map(|tool| call(tool))
            .collect::<Result<Vec<_>, DialectError>>()?;
        let mut grammar = Grammar::new("root");
        let star = |name: &str| Expr::repeat(Expr::reference(name), 0, None);
        let plus = |name: &str| Expr::repeat(Expr::reference(name), 1, None);
        grammar.set_rule(
            "root",
            Expr::Alt(vec![
                Expr::Seq(vec![
                    Expr::reference("first-content"),
                    star("content"),
                    Expr::optional(Expr::Seq(vec![plus("call"), star("content")])),
                ]),
                Expr::Seq(vec![
                    Expr::reference("first-call"),
                    star("call"),
                    star("content"),
                ]),
            ]),
        );
        grammar.set_rule(
            "first-content",
            Expr::Seq(vec![
                Expr::literal(format!("{ALL}{SEPARATOR}")),
                Expr::reference(text_without_rule(0)),
            ]),
        );
        grammar.set_rule("first-call", Expr::Alt(calls));
        for message in ["content", "call"] {
            let first = Expr::reference(format!("first-{message}"));
            grammar.set_rule(message, Expr::Seq(vec![Expr::literal(START), first]));
        }
        add_text_without(&mut grammar, FROM);
        Ok(grammar)
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        Box::new(RoutedParser::new())
    }
}

/// One tool's call without its opening: `name\n<|content|>\n{arguments}\n`.
fn call(tool: &Tool) -> Result<Expr, DialectError> {
    Ok(Expr::Seq(vec![
        Expr::literal(format!("{}{SEPARATOR}\n", tool.name())),
        Expr::Json(checked_parameters(tool)?),
        Expr::literal("\n"),
    ]))
}

/// The name of the rule for text without [`FROM`] that has just read its first `matched`
/// characters.
fn text_without_rule(matched: usize) -> String {
    format!("not-from-{matched}")
}

/// Rules `not-from-0` … that admit exactly the texts without `word`, one state per prefix
/// of `word` just read: each may end, go on with `word`'s next character, restart on its
/// first, or fall back to `not-from-0` on any other. Restarting only on the first
/// character is exact for words whose first character does not recur, as `<|from|>`.
fn add_text_without(grammar: &mut Grammar, word: &str) {
    let chars: Vec<char> = word.chars().collect();
    let Some(&first) = chars.first() else {
        return;
    };
    for (matched, &next) in chars.iter().enumerate() {
        let mut ways = vec![Expr::Empty];
        let mut excluded = vec![ClassItem::Char(next)];
        if next != first {
            excluded.push(ClassItem::Char(first));
        }
        let others = CharClass::new(true, excluded);
        ways.push(Expr::Seq(vec![
            Expr::Class(others),
            Expr::reference(text_without_rule(0)),
        ]));
        if matched > 0 {
            ways.push(Expr::Seq(vec![
                Expr::literal(first.to_string()),
                Expr::reference(text_without_rule(1)),
            ]));
        }
        if matched + 1 < chars.len() {
            ways.push(Expr::Seq(vec![
                Expr::literal(next.to_string()),
                Expr::reference(text_without_rule(matched + 1)),
            ]));
        }
        grammar.set_rule(text_without_rule(matched), Expr::Alt(ways));
    }
}

/// Whether `c` may be in a recipient: OpenAI's tool-name characters.
fn recipient_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Reads output routed by `<|recipient|>`; see the module docs.
pub struct RoutedParser {
    starts: TagScanner,
    message: Message,
    /// The text that opened the current message: none for the first, else [`START`].
    opening: &'static str,
    calls: u32,
}

/// Where the current message stands.
enum Message {
    /// Its recipient is still being read.
    Header(HeaderReader),
    /// Content (for `all`, or text that is no message): passed on as it comes.
    Content,
    /// A call to `name`, its body read so far.
    Call { name: String, body: String },
}

impl Default for RoutedParser {
    fn default() -> Self {
        Self::new()
    }
}

impl RoutedParser {
    pub fn new() -> Self {
        let starts = TagScanner::new([START], Placement::Anywhere)
            .unwrap_or_else(|error| unreachable!("the message opening is not empty: {error}"));
        RoutedParser {
            starts,
            message: Message::Header(header_reader()),
            opening: "",
            calls: 0,
        }
    }

    /// Takes decided pieces: text goes to the current message, an opening ends it.
    fn take(&mut self, pieces: Vec<Piece>) -> Vec<Event> {
        let mut events = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Text(text) => events.extend(self.read(&text)),
                Piece::Marker(_) => {
                    events.extend(self.end_message());
                    self.opening = START;
                }
            }
        }
        events
    }

    /// Reads `text` of the current message.
    fn read(&mut self, text: &str) -> Option<Event> {
        match &mut self.message {
            Message::Content => content(text.to_string()),
            Message::Call { body, .. } => {
                body.push_str(text);
                None
            }
            Message::Header(reader) => match reader.push(text) {
                Header::Pending => None,
                Header::Found { name, rest } => self.route(name, rest),
                Header::Invalid(text) => {
                    self.message = Message::Content;
                    content(format!("{}{text}", self.opening))
                }
            },
        }
    }

    /// Starts the message to `name`, its body beginning with `rest`.
    fn route(&mut self, name: String, rest: String) -> Option<Event> {
        if name == ALL {
            self.message = Message::Content;
            return content(rest);
        }
        self.message = Message::Call { name, body: rest };
        None
    }

    /// Ends the current message: a call whose body is one JSON object is a call, and any
    /// other unfinished message is content as written.
    fn end_message(&mut self) -> Vec<Event> {
        let message = std::mem::replace(&mut self.message, Message::Header(header_reader()));
        let written = match message {
            Message::Content => return Vec::new(),
            Message::Header(mut reader) => reader.finish(),
            Message::Call { name, body } => match arguments(&body) {
                Some(arguments) => return self.call(name, arguments),
                None => format!("{name}{SEPARATOR}{body}"),
            },
        };
        content(format!("{}{written}", self.opening))
            .into_iter()
            .collect()
    }

    /// The events of one whole call.
    fn call(&mut self, name: String, arguments: &str) -> Vec<Event> {
        let index = self.calls;
        self.calls += 1;
        vec![
            Event::ToolCallStart {
                index,
                id: None,
                name,
            },
            Event::ToolCallArguments {
                index,
                fragment: arguments.to_string(),
            },
            Event::ToolCallEnd { index },
        ]
    }
}

impl StreamParser for RoutedParser {
    fn push(&mut self, piece: &str) -> Vec<Event> {
        let pieces = self.starts.push(piece);
        self.take(pieces)
    }

    fn finish(&mut self) -> Vec<Event> {
        let pieces = self.starts.finish();
        let mut events = self.take(pieces);
        events.extend(self.end_message());
        events
    }
}

fn header_reader() -> HeaderReader {
    HeaderReader::new(SEPARATOR, recipient_char)
}

/// `text` as content, unless it is empty.
fn content(text: String) -> Option<Event> {
    (!text.is_empty()).then_some(Event::Content(text))
}

/// A call's arguments: its body without surrounding whitespace, if that is one JSON
/// object.
fn arguments(body: &str) -> Option<&str> {
    let text = body.trim();
    let value: Value = serde_json::from_str(text).ok()?;
    value.is_object().then_some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolbridge_grammar::check::Validator;

    use super::*;

    fn validator() -> Validator {
        let tool: Tool = serde_json::from_value(json!({
            "type": "function",
            "function": {"name": "say", "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            }},
        }))
        .unwrap_or_else(|error| panic!("a tool: {error}"));
        let grammar = RoutedCalls
            .grammar(&[&tool], None)
            .unwrap_or_else(|error| panic!("a grammar: {error}"));
        Validator::from_grammar(&grammar).unwrap_or_else(|error| panic!("compiles: {error}"))
    }

    #[test]
    fn content_may_hold_anything_but_an_opening() {
        let validator = validator();
        for text in [
            "all\n<|content|>a <b <| <|fro <<|from|x |>",
            "all\n<|content|><|from|",
        ] {
            assert!(validator.accepts(text), "rejects {text:?}");
        }
        for text in ["all\n<|content|>x<|from|>user", "all\n<|content|><<|from|>"] {
            assert!(!validator.accepts(text), "accepts {text:?}");
        }
    }

    #[test]
    fn calls_come_after_content_and_before_the_last_of_it() {
        let validator = validator();
        let call = "say\n<|content|>\n{\"text\": \"hi\"}\n";
        let content = "all\n<|content|>ok";
        let good = [
            call.to_string(),
            format!("{content}{START}{call}{START}{content}"),
        ];
        for text in good {
            assert!(validator.accepts(&text), "rejects {text:?}");
        }
        let bad = format!("{call}{START}{content}{START}{call}");
        assert!(!validator.accepts(&bad), "accepts {bad:?}");
    }
}
