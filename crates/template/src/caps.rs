//! What a chat template can render, found by rendering it.
//!
//! A dialect has to write past tool calls, tool results and system turns into a history
//! that the model's own template accepts. Reading the template's text for that is
//! guesswork: the same intent is spelled a hundred ways. So, as the seed's system does,
//! the template is asked: small conversations carrying unique marker strings are rendered,
//! and the output is searched for the markers. A marker that comes out means the template
//! renders that part; a render that raises means the template refuses that shape of
//! conversation. Errors are data here, never panics.
//!
//! The same renders, diffed, give the text around an assistant turn: the generation prompt
//! (`add_generation_prompt` true minus false) and what a finished assistant message is
//! wrapped in (for ChatML, `<|im_start|>assistant\n` before and `<|im_end|>\n` after).
//!
//! Clients send message content in two shapes, a string or a list of parts, and OpenAI's
//! newer clients (Codex, the Agents SDK) send their instructions as `developer` turns. A
//! template written for strings concatenates a list (Qwen 2.5's raises on `+`) or prints it
//! as Python's repr (its tool results); one written for images (Gemma 3, Llama 4) iterates
//! the parts; most know no `developer` role and skip such a turn without a word, or print
//! it as they print any role. So the probe also asks, for each role, whether text given as
//! two parts comes out as text (both parts' markers appear, neither part printed as data),
//! and whether a `developer` turn comes out otherwise than a turn of a made-up role: the
//! dialect gives each message the shape the template takes.

use serde_json::{json, Map, Value};
use toolbridge_chat::Role;

/// A template the probe can render: a chat template's variables in, its text out, `None`
/// where it raises. [`crate::ChatTemplate`] is one; so the probe needs nothing else of it.
pub trait Probed {
    fn render_probe(&self, context: Map<String, Value>) -> Option<String>;
}

/// Marker strings. Each is unique, so one cannot be found inside another or in the
/// template's own text.
const USER_MARKER: &str = "PROBE_USER_x7f3";
const SECOND_USER_MARKER: &str = "PROBE_USER2_x7f3";
const SYSTEM_MARKER: &str = "PROBE_SYSTEM_x7f3";
const ASSISTANT_MARKER: &str = "PROBE_ASSISTANT_x7f3";
const CONTENT_MARKER: &str = "PROBE_CONTENT_x7f3";
const CALL_NAME_MARKER: &str = "probe_call_x7f3";
const ARGUMENT_KEY_MARKER: &str = "probe_arg_x7f3";
const ARGUMENT_VALUE_MARKER: &str = "PROBE_VALUE_x7f3";
const RESULT_MARKER: &str = "PROBE_RESULT_x7f3";
const RESULT_NAME_MARKER: &str = "probe_result_name_x7f3";
const TOOL_NAME_MARKER: &str = "probe_tool_x7f3";
const DEVELOPER_MARKER: &str = "PROBE_DEVELOPER_x7f3";
/// A role no template knows, to tell a template that prints any role from one that knows
/// `developer`.
const UNKNOWN_ROLE: &str = "probe_role_x7f3";
/// The texts of the two parts a content probe sends.
const PART_MARKERS: [&str; 2] = ["PROBE_PART1_x7f3", "PROBE_PART2_x7f3"];
/// What a text part looks like when a template prints the list as data: Python's repr
/// (`{'type': 'text', …}`) or JSON, spaced or not.
const PART_AS_DATA: [&str; 3] = ["'type': 'text'", "\"type\": \"text\"", "\"type\":\"text\""];
/// The roles whose content a template may read as parts, in the order they are probed.
const PART_ROLES: [Role; 5] = [
    Role::System,
    Role::Developer,
    Role::User,
    Role::Assistant,
    Role::Tool,
];
/// Nine alphanumerics: the only id shape Mistral's templates accept.
const CALL_ID: &str = "probe0001";

/// How a template wants a tool call's `arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentsForm {
    /// Only a JSON object renders as arguments.
    Object,
    /// Only a JSON string (as OpenAI sends it) renders as arguments.
    String,
    /// Either renders.
    Either,
}

/// What a chat template can render, as found by [`TemplateCaps::probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateCaps {
    /// The template raises on two user messages in a row.
    pub requires_alternation: bool,
    /// A leading `system` message renders without error and its content appears.
    pub supports_system_role: bool,
    /// The forms of `arguments` under which an assistant's `tool_calls` render (the call's
    /// name and its argument as a key), or `None` when no form does.
    pub tool_call_arguments: Option<ArgumentsForm>,
    /// An assistant message's content appears beside its tool calls.
    pub renders_content_with_tool_calls: bool,
    /// A `tool` message's content appears.
    pub renders_tool_results: bool,
    /// A `tool` message's `name` appears.
    pub renders_tool_name: bool,
    /// Rendering with `tools` puts a tool's name into the prompt.
    pub supports_tools: bool,
    /// What `add_generation_prompt` appends after a user turn, when it renders as an
    /// append.
    pub generation_prompt: Option<String>,
    /// The text that opens a finished assistant message, before its content.
    pub assistant_prefix: Option<String>,
    /// The text that follows a finished assistant message's content.
    pub assistant_suffix: Option<String>,
    /// A `developer` turn renders as a role the template knows by name (GPT-OSS's harmony
    /// template), not skipped (as most templates skip a role they do not know) nor printed
    /// as any role is (ChatML's `<|im_start|>{{ role }}` shows a model a header it never
    /// saw in training).
    pub knows_developer_role: bool,
    /// The roles whose text content renders as text when it is given as a list of text
    /// parts (see [`TemplateCaps::renders_text_parts`]).
    pub text_parts_roles: Vec<Role>,
}

impl TemplateCaps {
    /// Probes `template` by rendering small conversations.
    pub fn probe(template: &impl Probed) -> TemplateCaps {
        let prober = Prober { template };
        let tool_call_arguments = prober.tool_call_arguments();
        let arguments = tool_call_arguments.unwrap_or(ArgumentsForm::Object);
        let turn = prober.assistant_turn();
        TemplateCaps {
            requires_alternation: prober.requires_alternation(),
            supports_system_role: prober.renders_opening(Role::System, SYSTEM_MARKER),
            tool_call_arguments,
            renders_content_with_tool_calls: prober.renders_content_with_tool_calls(arguments),
            renders_tool_results: prober.renders_tool_result(arguments, RESULT_MARKER),
            renders_tool_name: prober.renders_tool_result(arguments, RESULT_NAME_MARKER),
            supports_tools: prober.supports_tools(),
            generation_prompt: prober.generation_prompt(),
            assistant_prefix: turn.as_ref().map(|(prefix, _)| prefix.clone()),
            assistant_suffix: turn.map(|(_, suffix)| suffix),
            knows_developer_role: prober.knows_developer_role(),
            text_parts_roles: PART_ROLES
                .into_iter()
                .filter(|role| prober.renders_text_parts(role, arguments))
                .collect(),
        }
    }

    /// Whether the template renders an assistant's tool calls in any form.
    pub fn renders_tool_calls(&self) -> bool {
        self.tool_call_arguments.is_some()
    }

    /// Whether the template renders the text of a `role` message whose content is a list
    /// of text parts, every part's text and none of it as data. Multimodal templates
    /// iterate the parts; templates written for strings do not (they raise, print the
    /// list, or keep only its first part).
    pub fn renders_text_parts(&self, role: &Role) -> bool {
        self.text_parts_roles.contains(role)
    }
}

/// One template, ready to render probe conversations.
struct Prober<'a, T> {
    template: &'a T,
}

impl<T: Probed> Prober<'_, T> {
    /// Renders `messages` (and `tools`, when given); `None` when the template raises.
    fn render(&self, messages: Value, tools: Option<Value>, generation: bool) -> Option<String> {
        let mut context = Map::new();
        context.insert("messages".into(), messages);
        context.insert("add_generation_prompt".into(), generation.into());
        if let Some(tools) = tools {
            context.insert("tools".into(), tools);
        }
        self.template.render_probe(context)
    }

    /// Renders `messages` and reports whether `marker` appears in the output.
    fn shows(&self, messages: Value, marker: &str) -> bool {
        self.render(messages, None, false)
            .is_some_and(|out| out.contains(marker))
    }

    fn requires_alternation(&self) -> bool {
        let messages = json!([user(USER_MARKER), user(SECOND_USER_MARKER)]);
        self.render(messages, None, false).is_none()
    }

    /// Whether a `role` turn saying `marker`, before a user turn, comes out.
    fn renders_opening(&self, role: Role, marker: &str) -> bool {
        self.shows(turn_before_user(role, marker.into()), marker)
    }

    /// A `developer` turn comes out, and not as a turn of an unknown role would (compared
    /// without case: OpenChat prints any role title-cased).
    fn knows_developer_role(&self) -> bool {
        let Some(developer) = self
            .render(
                turn_before_user(Role::Developer, DEVELOPER_MARKER.into()),
                None,
                false,
            )
            .filter(|out| out.contains(DEVELOPER_MARKER))
        else {
            return false;
        };
        let unknown = Role::from(UNKNOWN_ROLE);
        self.render(
            turn_before_user(unknown, DEVELOPER_MARKER.into()),
            None,
            false,
        )
        .is_none_or(|out| {
            let as_developer = out
                .to_lowercase()
                .replace(UNKNOWN_ROLE, Role::Developer.as_str());
            as_developer != developer.to_lowercase()
        })
    }

    fn tool_call_arguments(&self) -> Option<ArgumentsForm> {
        let object = self.renders_call(ArgumentsForm::Object);
        let string = self.renders_call(ArgumentsForm::String);
        match (object, string) {
            (true, true) => Some(ArgumentsForm::Either),
            (true, false) => Some(ArgumentsForm::Object),
            (false, true) => Some(ArgumentsForm::String),
            (false, false) => None,
        }
    }

    /// A call renders when its name, its argument's key and its argument's value appear,
    /// in whatever syntax (JSON, Python keywords, XML parameters). Arguments escaped into
    /// a JSON string (`\"key\"`) do not count: the model would learn to write them so.
    fn renders_call(&self, form: ArgumentsForm) -> bool {
        let messages = json!([user(USER_MARKER), tool_call_message("", form)]);
        let Some(out) = self.render(messages, None, false) else {
            return false;
        };
        let escaped_key = format!("\\\"{ARGUMENT_KEY_MARKER}");
        out.contains(CALL_NAME_MARKER)
            && out.contains(ARGUMENT_KEY_MARKER)
            && out.contains(ARGUMENT_VALUE_MARKER)
            && !out.contains(escaped_key.as_str())
    }

    fn renders_content_with_tool_calls(&self, form: ArgumentsForm) -> bool {
        let messages = json!([user(USER_MARKER), tool_call_message(CONTENT_MARKER, form)]);
        self.shows(messages, CONTENT_MARKER)
    }

    /// Renders a call and its result, and looks for `marker` (the result's content or
    /// its name, which differs from the call's name so the two cannot be confused).
    fn renders_tool_result(&self, form: ArgumentsForm, marker: &str) -> bool {
        let messages = json!([
            user(USER_MARKER),
            tool_call_message("", form),
            {
                "role": "tool",
                "tool_call_id": CALL_ID,
                "name": RESULT_NAME_MARKER,
                "content": RESULT_MARKER,
            },
        ]);
        self.shows(messages, marker)
    }

    /// Renders a `role` turn whose content is two text parts, in the conversation that role
    /// takes (a tool result after a call written in `form`), and looks for both parts'
    /// texts, printed as text.
    fn renders_text_parts(&self, role: &Role, form: ArgumentsForm) -> bool {
        let parts: Vec<Value> = PART_MARKERS
            .iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        let messages = match role {
            Role::Assistant => json!([
                user(USER_MARKER),
                {"role": "assistant", "content": parts},
            ]),
            Role::Tool => json!([
                user(USER_MARKER),
                tool_call_message("", form),
                {"role": "tool", "tool_call_id": CALL_ID, "content": parts},
            ]),
            Role::User => json!([{"role": "user", "content": parts}]),
            other => turn_before_user(other.clone(), Value::Array(parts)),
        };
        self.render(messages, None, false).is_some_and(|out| {
            PART_MARKERS.iter().all(|marker| out.contains(marker))
                && !PART_AS_DATA.iter().any(|data| out.contains(data))
        })
    }

    fn supports_tools(&self) -> bool {
        let tools = json!([{
            "type": "function",
            "function": {
                "name": TOOL_NAME_MARKER,
                "description": "A probe.",
                "parameters": {
                    "type": "object",
                    "properties": {ARGUMENT_KEY_MARKER: {"type": "string"}},
                    "required": [ARGUMENT_KEY_MARKER],
                },
            },
        }]);
        self.render(json!([user(USER_MARKER)]), Some(tools), true)
            .is_some_and(|out| out.contains(TOOL_NAME_MARKER))
    }

    /// The text `add_generation_prompt` appends to a conversation ending in a user turn.
    fn generation_prompt(&self) -> Option<String> {
        let without = self.render(json!([user(USER_MARKER)]), None, false)?;
        let with = self.render(json!([user(USER_MARKER)]), None, true)?;
        with.strip_prefix(without.as_str()).map(str::to_string)
    }

    /// The text before and after a final assistant message's content: the conversation
    /// with the message, minus the conversation without it, split at the marker.
    fn assistant_turn(&self) -> Option<(String, String)> {
        let without = self.render(json!([user(USER_MARKER)]), None, false)?;
        let messages = json!([
            user(USER_MARKER),
            {"role": "assistant", "content": ASSISTANT_MARKER},
        ]);
        let with = self.render(messages, None, false)?;
        let turn = with.strip_prefix(without.as_str())?;
        let (prefix, suffix) = turn.split_once(ASSISTANT_MARKER)?;
        Some((prefix.to_string(), suffix.to_string()))
    }
}

fn user(content: &str) -> Value {
    json!({"role": "user", "content": content})
}

/// A conversation that opens with a `role` turn saying `content`, then a user turn.
fn turn_before_user(role: Role, content: Value) -> Value {
    json!([{"role": role.as_str(), "content": content}, user(USER_MARKER)])
}

/// An assistant message with `content` and one call, its arguments written in `form`
/// (`Either` writes them as an object).
fn tool_call_message(content: &str, form: ArgumentsForm) -> Value {
    let object = json!({ ARGUMENT_KEY_MARKER: ARGUMENT_VALUE_MARKER });
    let arguments = match form {
        ArgumentsForm::String => Value::String(object.to_string()),
        ArgumentsForm::Object | ArgumentsForm::Either => object,
    };
    json!({
        "role": "assistant",
        "content": content,
        "tool_calls": [{
            "id": CALL_ID,
            "type": "function",
            "function": {"name": CALL_NAME_MARKER, "arguments": arguments},
        }],
    })
}
