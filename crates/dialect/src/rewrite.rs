//! History the template accepts.
//!
//! A model without tool training still has to see its past calls and their results, but its
//! template may have no place for them: Mistral 7B Instruct v0.1 raises on anything but
//! strictly alternating `user`/`assistant` turns, Llama 2 knows no `tool` role, ChatML
//! templates print `content` and drop `tool_calls`. So, as seed 000's system does, the
//! conversation is rewritten from what [`TemplateCaps`] found the template can render:
//!
//! - an assistant turn whose calls the template cannot render gets them written into its
//!   content, by the prompt style's [`CallWriter`] (each style writes calls the way it asks
//!   the model to write them, so past turns teach the model its own syntax);
//! - `system` and `tool` turns the template cannot take become user turns,
//!   `[SYS]…[/SYS]` and `[TOOL(name=…, id=…)]…[/TOOL]`;
//! - where alternation is strict, consecutive turns of one role are merged (their texts
//!   joined by a newline) and a conversation opening with the assistant gets an empty user
//!   turn first, so the result always alternates user, assistant, user…
//!
//! The spellings are the seed's, byte for byte. Where the seed's system printed Python's
//! `None` for a missing field, this module prints the empty string (and looks a tool
//! result's missing `name` up in the call it answers); JSON is written without Python's
//! `\uXXXX` escaping of non-ASCII text, as the rest of this project writes it.

use serde_json::{json, Value};
use toolbridge_chat::{Arguments, Message, Role, ToolCall};

use toolbridge_template::{ArgumentsForm, TemplateCaps};

/// How a prompt style writes an assistant turn into plain text.
pub trait CallWriter {
    /// The content standing for an assistant turn that says `content` and makes `calls`,
    /// where the template cannot render the calls.
    fn write_calls(&self, content: &str, calls: &[ToolCall]) -> String;

    /// The content standing for an assistant turn that makes no calls; `None` leaves the
    /// turn as it is.
    fn write_answer(&self, _content: &str) -> Option<String> {
        None
    }
}

/// The content, then each call as `<tool_call>{…}</tool_call>`, one per line; a call is
/// the JSON of its OpenAI form (`id`, `type`, `function`), on one line with Python's
/// `", "` and `": "` separators. Seed 000 writes past calls so for every style but
/// `thoughtful_steps` with tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolCallTags;

impl CallWriter for ToolCallTags {
    fn write_calls(&self, content: &str, calls: &[ToolCall]) -> String {
        let tags = calls
            .iter()
            .map(|call| format!("<tool_call>{}</tool_call>", spaced_json(&call_json(call))));
        let lines: Vec<String> = (!content.is_empty())
            .then(|| content.to_string())
            .into_iter()
            .chain(tags)
            .collect();
        lines.join("\n")
    }
}

/// Every assistant turn as the object the `thoughtful_steps` style makes the model answer
/// with, indented by two spaces: `{"thought_about_next_step_only": …, "next_step":
/// {"tool_calls": […]}}` for calls, `{…, "next_step": {"result": …}}` for an answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThoughtfulSteps;

impl CallWriter for ThoughtfulSteps {
    fn write_calls(&self, content: &str, calls: &[ToolCall]) -> String {
        let calls: Vec<Value> = calls.iter().map(call_json).collect();
        thoughtful_step(content, json!({ "tool_calls": calls }))
    }

    fn write_answer(&self, content: &str) -> Option<String> {
        Some(thoughtful_step("", json!({ "result": content })))
    }
}

fn thoughtful_step(thought: &str, next_step: Value) -> String {
    let step = json!({
        "thought_about_next_step_only": thought,
        "next_step": next_step,
    });
    format!("{step:#}")
}

/// Rewrites `messages` so a template with `caps` renders all of them, writing calls the
/// template cannot render with `writer`.
pub fn rewrite_history(
    messages: &[Message],
    caps: &TemplateCaps,
    writer: &dyn CallWriter,
) -> Vec<Message> {
    let rewritten = messages
        .iter()
        .map(|message| rewrite_message(message, messages, caps, writer));
    if caps.requires_alternation {
        alternate(rewritten)
    } else {
        rewritten.collect()
    }
}

/// One message, rewritten on its own; `history` is where a tool result's call is looked up.
fn rewrite_message(
    message: &Message,
    history: &[Message],
    caps: &TemplateCaps,
    writer: &dyn CallWriter,
) -> Message {
    match message.role {
        Role::Assistant => rewrite_assistant(message, caps, writer),
        ref role if takes_as_is(role, caps) => message.clone(),
        _ => Message::user(folded_text(message, history)),
    }
}

/// Whether the template takes a turn of `role` (not the assistant's) as it is.
fn takes_as_is(role: &Role, caps: &TemplateCaps) -> bool {
    match role {
        Role::User => true,
        _ if caps.requires_alternation => false,
        Role::System | Role::Developer => caps.supports_system_role,
        Role::Tool | Role::Function => caps.renders_tool_results,
        _ => true,
    }
}

fn rewrite_assistant(message: &Message, caps: &TemplateCaps, writer: &dyn CallWriter) -> Message {
    let content = message.content_text();
    if message.calls().is_empty() {
        writer
            .write_answer(&content)
            .map_or_else(|| message.clone(), Message::assistant)
    } else if renders_calls(caps, &content) {
        with_arguments_for(message, caps)
    } else {
        Message::assistant(writer.write_calls(&content, message.calls()))
    }
}

/// Whether the template renders a turn's calls (and the `content` said beside them). The
/// arguments must render as an object, as seed 000's system probed them: Functionary
/// v2.2's template prints only text arguments (`'<|content|>' + arguments`), and the seed
/// shows its calls written into the content.
fn renders_calls(caps: &TemplateCaps, content: &str) -> bool {
    matches!(
        caps.tool_call_arguments,
        Some(ArgumentsForm::Object | ArgumentsForm::Either)
    ) && (content.is_empty() || caps.renders_content_with_tool_calls)
}

/// `message` with its calls' text arguments parsed, for templates that render only objects.
fn with_arguments_for(message: &Message, caps: &TemplateCaps) -> Message {
    let mut message = message.clone();
    if caps.tool_call_arguments == Some(ArgumentsForm::Object) {
        for call in message.tool_calls.iter_mut().flatten() {
            if let Ok(object) = call.function.arguments.to_object() {
                call.function.arguments = Arguments::Object(object);
            }
        }
    }
    message
}

/// The text of a turn folded into a user turn.
fn folded_text(message: &Message, history: &[Message]) -> String {
    let text = message.content_text();
    match &message.role {
        Role::System | Role::Developer => format!("[SYS]{text}[/SYS]"),
        Role::Tool | Role::Function => {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            let name = message
                .name
                .as_deref()
                .or_else(|| called_name(history, id))
                .unwrap_or_default();
            format!("[TOOL(name={name}, id={id})]{text}[/TOOL]")
        }
        other => {
            let tag = other.as_str().to_uppercase();
            format!("[{tag}]{text}[/{tag}]")
        }
    }
}

/// The name of the function the call `id` called, if some message made that call.
fn called_name<'a>(history: &'a [Message], id: &str) -> Option<&'a str> {
    history
        .iter()
        .flat_map(Message::calls)
        .find(|call| !id.is_empty() && call.id.as_deref() == Some(id))
        .map(ToolCall::name)
}

/// Merges turns of one role and opens with a user turn, for templates that demand
/// alternation. Every message is by now a user or an assistant turn.
fn alternate(messages: impl Iterator<Item = Message>) -> Vec<Message> {
    let mut merged: Vec<Message> = Vec::new();
    for message in messages {
        match merged.last_mut() {
            Some(last) if last.role == message.role => merge_into(last, message),
            None if message.role != Role::User => {
                merged.push(Message::user(""));
                merged.push(message);
            }
            _ => merged.push(message),
        }
    }
    merged
}

/// Appends `next`'s text (after a newline) and calls to `last`.
fn merge_into(last: &mut Message, next: Message) {
    let text = format!("{}\n{}", last.content_text(), next.content_text());
    last.content = Some(text.into());
    if let Some(calls) = next.tool_calls {
        last.tool_calls.get_or_insert_with(Vec::new).extend(calls);
    }
}

/// A call as seed 000's system printed it: `{"id", "type", "function": {"name",
/// "arguments"}}`, the arguments as a JSON value where they parse. (`function` is the
/// only type a chat completions call has.)
fn call_json(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {
            "name": call.name(),
            "arguments": arguments_json(&call.function.arguments),
        },
    })
}

fn arguments_json(arguments: &Arguments) -> Value {
    arguments
        .to_value()
        .unwrap_or_else(|_| Value::String(arguments.as_json_string().into_owned()))
}

/// A call's arguments as a model writes them after its call's name: the text as sent, or
/// an object as Python's `json.dumps` prints it.
pub fn arguments_text(arguments: &Arguments) -> String {
    match arguments {
        Arguments::Text(text) => text.clone(),
        Arguments::Object(object) => spaced_json(&Value::Object(object.clone())),
    }
}

/// JSON on one line with a space after each `,` and `:`, as Python's `json.dumps` prints.
fn spaced_json(value: &Value) -> String {
    let mut out = String::new();
    write_spaced(value, &mut out);
    out
}

fn write_spaced(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                out.push_str(if index == 0 { "" } else { ", " });
                write_spaced(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (index, (key, item)) in object.iter().enumerate() {
                out.push_str(if index == 0 { "" } else { ", " });
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                write_spaced(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;
    use toolbridge_chat::Arguments;

    use super::*;

    /// A template that renders everything: ChatML with Hermes tool calls.
    fn permissive() -> TemplateCaps {
        TemplateCaps {
            requires_alternation: false,
            supports_system_role: true,
            tool_call_arguments: Some(ArgumentsForm::Object),
            renders_content_with_tool_calls: true,
            renders_tool_results: true,
            renders_tool_name: true,
            supports_tools: true,
            generation_prompt: None,
            assistant_prefix: None,
            assistant_suffix: None,
            knows_developer_role: false,
            text_parts_roles: Vec::new(),
        }
    }

    /// Mistral 7B Instruct v0.1: alternation, no system role, no tools.
    fn strict() -> TemplateCaps {
        TemplateCaps {
            requires_alternation: true,
            supports_system_role: false,
            tool_call_arguments: None,
            renders_content_with_tool_calls: false,
            renders_tool_results: false,
            renders_tool_name: false,
            ..permissive()
        }
    }

    fn add_call() -> ToolCall {
        let arguments = json!({"a": 2535, "b": 32222000403_u64});
        let Value::Object(arguments) = arguments else {
            unreachable!("a literal object")
        };
        ToolCall::new(
            "call_531873",
            "superSecretTool",
            Arguments::Object(arguments),
        )
    }

    fn tool_result(name: Option<&str>) -> Message {
        Message {
            name: name.map(str::to_string),
            ..Message::tool("call_531873", "32222002938")
        }
    }

    fn texts(messages: &[Message]) -> Vec<(String, String)> {
        messages
            .iter()
            .map(|m| (m.role.to_string(), m.content_text().into_owned()))
            .collect()
    }

    #[test]
    fn tags_write_each_call_on_its_own_line_after_the_content() {
        let text = ToolCallTags.write_calls("Let me add.", &[add_call(), add_call()]);
        let tag = r#"<tool_call>{"id": "call_531873", "type": "function", "function": {"name": "superSecretTool", "arguments": {"a": 2535, "b": 32222000403}}}</tool_call>"#;
        assert_eq!(text, format!("Let me add.\n{tag}\n{tag}"));
        assert_eq!(ToolCallTags.write_calls("", &[add_call()]), tag);
        assert_eq!(ToolCallTags.write_answer("hi"), None);
    }

    #[test]
    fn arguments_are_written_as_sent_or_as_python_prints_them() {
        let object = add_call().function.arguments;
        assert_eq!(arguments_text(&object), r#"{"a": 2535, "b": 32222000403}"#);
        let text = Arguments::Text(r#"{"a":1}"#.into());
        assert_eq!(arguments_text(&text), r#"{"a":1}"#);
    }

    #[test]
    fn tags_keep_arguments_that_are_not_json_as_a_string() {
        let call = ToolCall::new("x", "f", Arguments::Text("{oops".into()));
        let text = ToolCallTags.write_calls("", &[call]);
        assert!(text.contains(r#""arguments": "{oops""#), "{text}");
    }

    #[test]
    fn thoughtful_steps_write_calls_and_answers_as_steps() {
        let calls = ThoughtfulSteps.write_calls("", &[add_call()]);
        assert!(calls.starts_with("{\n  \"thought_about_next_step_only\": \"\",\n  \"next_step\": {\n    \"tool_calls\": [\n"));
        let answer = ThoughtfulSteps.write_answer("42");
        assert_eq!(
            answer.as_deref(),
            Some("{\n  \"thought_about_next_step_only\": \"\",\n  \"next_step\": {\n    \"result\": \"42\"\n  }\n}")
        );
    }

    #[test]
    fn calls_stay_where_the_template_renders_them() {
        let message = Message::assistant_calls(vec![add_call()]);
        let out = rewrite_history(std::slice::from_ref(&message), &permissive(), &ToolCallTags);
        assert_eq!(out, vec![message]);
    }

    #[test]
    fn calls_are_written_where_content_beside_them_would_be_lost() {
        let caps = TemplateCaps {
            renders_content_with_tool_calls: false,
            ..permissive()
        };
        let message = Message {
            content: Some("Adding.".into()),
            ..Message::assistant_calls(vec![add_call()])
        };
        let out = rewrite_history(&[message], &caps, &ToolCallTags);
        assert_eq!(out[0].tool_calls, None);
        assert!(out[0].content_text().starts_with("Adding.\n<tool_call>"));
    }

    #[test]
    fn calls_are_written_where_arguments_only_render_as_text() {
        let caps = TemplateCaps {
            tool_call_arguments: Some(ArgumentsForm::String),
            ..permissive()
        };
        let out = rewrite_history(
            &[Message::assistant_calls(vec![add_call()])],
            &caps,
            &ToolCallTags,
        );
        assert!(out[0].content_text().starts_with("<tool_call>"));
    }

    #[test]
    fn text_arguments_become_objects_for_templates_that_need_them() {
        let call = ToolCall::new("x", "f", Arguments::Text(r#"{"a": 1}"#.into()));
        let out = rewrite_history(
            &[Message::assistant_calls(vec![call])],
            &permissive(),
            &ToolCallTags,
        );
        let mut expected = Map::new();
        expected.insert("a".into(), json!(1));
        assert_eq!(
            out[0].calls()[0].function.arguments,
            Arguments::Object(expected)
        );
    }

    #[test]
    fn strict_templates_get_system_and_tool_turns_folded_into_user_turns() {
        let messages = [
            Message::system("Be brief."),
            Message::user("Add."),
            Message::assistant_calls(vec![add_call()]),
            tool_result(Some("superSecretTool")),
        ];
        let out = rewrite_history(&messages, &strict(), &ToolCallTags);
        let call = ToolCallTags.write_calls("", &[add_call()]);
        assert_eq!(
            texts(&out),
            [
                ("user".into(), "[SYS]Be brief.[/SYS]\nAdd.".into()),
                ("assistant".into(), call),
                (
                    "user".into(),
                    "[TOOL(name=superSecretTool, id=call_531873)]32222002938[/TOOL]".into()
                ),
            ]
        );
    }

    #[test]
    fn a_tool_result_without_a_name_takes_its_calls_name() {
        let messages = [
            Message::user("Add."),
            Message::assistant_calls(vec![add_call()]),
            tool_result(None),
        ];
        let out = rewrite_history(&messages, &strict(), &ToolCallTags);
        assert!(out[2]
            .content_text()
            .starts_with("[TOOL(name=superSecretTool, id=call_531873)]"));
    }

    #[test]
    fn lenient_templates_fold_only_what_they_cannot_render() {
        let caps = TemplateCaps {
            supports_system_role: false,
            ..permissive()
        };
        let messages = [Message::system("S"), Message::user("U"), tool_result(None)];
        let out = rewrite_history(&messages, &caps, &ToolCallTags);
        assert_eq!(out[0], Message::user("[SYS]S[/SYS]"));
        assert_eq!(out[1..], messages[1..]);
        let caps = TemplateCaps {
            renders_tool_results: false,
            ..permissive()
        };
        let out = rewrite_history(&messages, &caps, &ToolCallTags);
        assert_eq!(out[..2], messages[..2]);
        assert_eq!(
            out[2],
            Message::user("[TOOL(name=, id=call_531873)]32222002938[/TOOL]")
        );
    }

    #[test]
    fn strict_templates_get_turns_of_one_role_merged_with_a_newline() {
        let messages = [
            Message::user("a"),
            Message::user("b"),
            Message::assistant("c"),
            Message::assistant("d"),
        ];
        let out = rewrite_history(&messages, &strict(), &ToolCallTags);
        assert_eq!(
            texts(&out),
            [
                ("user".into(), "a\nb".into()),
                ("assistant".into(), "c\nd".into())
            ]
        );
    }

    #[test]
    fn strict_templates_get_an_empty_user_turn_before_an_opening_assistant() {
        let out = rewrite_history(&[Message::assistant("hi")], &strict(), &ToolCallTags);
        assert_eq!(out, vec![Message::user(""), Message::assistant("hi")]);
    }

    #[test]
    fn merged_turns_keep_calls_the_template_renders() {
        let caps = TemplateCaps {
            requires_alternation: true,
            ..permissive()
        };
        let messages = [
            Message::user("a"),
            Message::assistant("thinking"),
            Message::assistant_calls(vec![add_call()]),
        ];
        let out = rewrite_history(&messages, &caps, &ToolCallTags);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].content_text(), "thinking\n");
        assert_eq!(out[1].calls(), [add_call()]);
    }

    #[test]
    fn other_roles_are_folded_under_their_own_tag() {
        let messages = [Message::with_text(Role::from("ipython"), "out")];
        let out = rewrite_history(&messages, &strict(), &ToolCallTags);
        assert_eq!(out, vec![Message::user("[IPYTHON]out[/IPYTHON]")]);
    }
}
