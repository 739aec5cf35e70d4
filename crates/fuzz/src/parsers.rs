//! Every dialect's stream parser on any text, cut anywhere: the message it reads is the
//! same whole, cut at fuzz-chosen points and fed one char at a time, whether the output
//! ended by itself or at the token limit ([`StreamParser::finish_cut`]), and its events
//! keep the order contract on the way. A server sees whatever cuts its engine makes, so
//! one cut that reads differently loses or garbles some user's call. Where the text reads
//! as calls and the dialect's own call grammar accepts it, for tools named and typed as
//! those calls read, the calls the prepared parser streams as written, char by char, are
//! the calls it reads whole: the server streams calls only under that grammar, and a
//! piece of a call once sent cannot be taken back.
//!
//! Input: byte 0 picks the dialect (registry order), byte 1 mod 8 is how many cut bytes
//! follow, each placing a cut at its share of the text's length; the rest is the text
//! (invalid UTF-8 replaced, as an engine's detokenizer would).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};
use toolbridge_chat::{ChatRequest, Message, Tool};
use toolbridge_dialect::{
    assemble, ChatTemplate, Dialect, Pacing, Registry, SequentialIds, StreamParser,
};
use toolbridge_grammar::check::Validator;

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
    let bounds = bounds(&text, cuts);
    let pieces: Vec<&str> = bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    let chars: Vec<&str> = text
        .char_indices()
        .map(|(at, c)| &text[at..at + c.len_utf8()])
        .collect();
    let [finished, _] = [End::Finished, End::Cut].map(|end| {
        let read = |pieces: &[&str]| message_of(name, dialect.parser().as_mut(), pieces, end);
        let whole = read(&[&text]);
        assert_eq!(
            read(&pieces),
            whole,
            "{name}, {end:?}: cut at {bounds:?}: {text:?}"
        );
        assert_eq!(
            read(&chars),
            whole,
            "{name}, {end:?}: char by char: {text:?}"
        );
        whole
    });
    if let Some(request) = held_by_grammar(dialect, &text, &finished) {
        let read = |pieces: &[&str], pacing| {
            let mut parser = dialect
                .prepare(&request, template())
                .expect("prepared once")
                .parser;
            parser.set_pacing(pacing);
            without_ids(message_of(name, parser.as_mut(), pieces, End::Finished))
        };
        assert_eq!(
            read(&chars, Pacing::EveryPiece),
            read(&[&text], Pacing::Whole),
            "{name}: calls streamed char by char: {text:?}"
        );
    }
}

/// How an output ended: by itself, or at the token limit.
#[derive(Debug, Clone, Copy)]
enum End {
    Finished,
    Cut,
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

/// The message `parser` reads from `pieces`, ended as `end` says; `assemble` checks the
/// order contract.
fn message_of(name: &str, parser: &mut dyn StreamParser, pieces: &[&str], end: End) -> Message {
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(parser.push(piece));
    }
    events.extend(match end {
        End::Finished => parser.finish(),
        End::Cut => parser.finish_cut(),
    });
    assemble(events.clone(), SequentialIds::default())
        .unwrap_or_else(|error| panic!("{name}: {error}: {events:?}"))
}

/// The request under whose call grammar the server would stream `text`, if there is one:
/// `text` (read whole as `message`) read as calls and nothing else, each naming a tool a request may declare (the
/// server's own check of `tools`), with tools typed as those calls' arguments read, and
/// the dialect's grammar for them accepting `text`.
fn held_by_grammar(dialect: &dyn Dialect, text: &str, message: &Message) -> Option<ChatRequest> {
    if message.calls().is_empty() || !message.content_text().trim().is_empty() {
        return None;
    }
    let mut tools: Vec<(&str, Map<String, Value>)> = Vec::new();
    for call in message.calls() {
        let arguments = call.function.arguments.to_object().ok()?;
        if !tools.iter().any(|(name, _)| *name == call.name()) {
            tools.push((call.name(), arguments));
        }
    }
    let tools = tools
        .into_iter()
        .map(|(name, arguments)| serde_json::from_value(tool_typed_as(name, &arguments)).ok())
        .collect::<Option<Vec<Tool>>>()?;
    let mut request = ChatRequest::new("m", vec![Message::user("?")]);
    request.tools = Some(tools);
    request.validate().ok()?;
    let constraint = dialect.prepare(&request, template()).ok()?.constraint?;
    let validator = Validator::from_lark(constraint.lark()).ok()?;
    validator.accepts(text).then_some(request)
}

/// A tool named `name` whose parameters are `arguments`' keys, each typed as its value is
/// and none required: the grammar then admits the most texts that read as these calls.
fn tool_typed_as(name: &str, arguments: &Map<String, Value>) -> Value {
    let properties: Map<String, Value> = arguments
        .iter()
        .map(|(key, value)| (key.clone(), json!({"type": json_type(value)})))
        .collect();
    json!({"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties}}})
}

/// The JSON Schema type of `value`.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A plain template every dialect prepares with: the call grammar is the dialect's.
fn template() -> &'static ChatTemplate {
    static TEMPLATE: OnceLock<ChatTemplate> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
                      {% if add_generation_prompt %}<|assistant|>{% endif %}";
        ChatTemplate::new(source, "", "").expect("compiles")
    })
}

/// `message` with its calls' ids taken out: an id the model writes after a call's
/// arguments comes too late for a call streamed as written, which keeps a generated one.
fn without_ids(mut message: Message) -> Message {
    for call in message.tool_calls.iter_mut().flatten() {
        call.id = None;
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether Qwen3-Coder's grammar holds `text`, read whole as the fuzz target reads it.
    fn held(text: &str) -> Option<ChatRequest> {
        let dialect = registry().get("qwen3_coder").expect("registered");
        let message = message_of(
            "qwen3_coder",
            dialect.parser().as_mut(),
            &[text],
            End::Finished,
        );
        held_by_grammar(dialect, text, &message)
    }

    const QWEN3_CODER: &str = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n\
                               </parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>";

    #[test]
    fn calls_a_grammar_writes_are_streamed_and_compared() {
        let request = held(QWEN3_CODER).expect("held");
        let tools = request.tools.expect("tools");
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name(), "get_weather");
    }

    #[test]
    fn text_no_grammar_writes_is_not_held() {
        // The same parameter twice: read whole, the second wins; no grammar writes it.
        let twice = QWEN3_CODER.replace("days>\n2", "city>\nLyon");
        assert!(held(&twice).is_none());
        // Prose before the call: content, not only calls.
        let prose = format!("Sure.\n{QWEN3_CODER}");
        assert!(held(&prose).is_none());
    }
}
