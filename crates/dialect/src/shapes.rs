//! Each message in the shape its template takes.
//!
//! Clients send content as a string or as a list of parts, and instructions as `system` or
//! `developer` turns, whatever the model. Templates take fewer shapes: Qwen 2.5's raises on
//! a user turn given as parts (`+` on a string and a list), prints a tool result given as
//! parts as Python's repr of the list, and skips a `developer` turn without a word. What a
//! template takes is probed once ([`TemplateCaps`]); every request passes through
//! [`fit_request`] before any dialect sees it, so no dialect has to know:
//!
//! - a `developer` turn becomes a `system` turn where the template renders no `developer`
//!   (and from there is folded as any system turn is, where the template has no system
//!   role), so no message is dropped;
//! - content given as parts becomes its text where the template does not render parts for
//!   that role: text (and refusal) parts joined by a newline, as vLLM and llama.cpp's
//!   server join them for templates that take strings. Multimodal templates (Gemma 3,
//!   Llama 4) keep their parts;
//! - a part that has no text (an image, audio, a file) is refused with an error that names
//!   the message, the part and its type, as llama.cpp's server refuses an image to a model
//!   loaded without a projector, rather than dropped: the prompt every engine here is given
//!   is text, so even a template that prints an image's placeholder (Gemma 3's
//!   `<start_of_image>`) would show the model a placeholder and no image.
//!
//! Ollama's Go templates are fitted the same way: the probe renders them through Ollama's
//! own request mapping, which gives a template each text part as a turn of its own.

use std::borrow::Cow;

use toolbridge_chat::{ChatRequest, Content, ContentPart, Message, Role};
use toolbridge_template::TemplateCaps;

use crate::error::{template_refused, DialectError};

/// `request` with each message in the shape a template with `caps` takes; borrowed when
/// every message already is.
pub fn fit_request<'a>(
    request: &'a ChatRequest,
    caps: &TemplateCaps,
) -> Result<Cow<'a, ChatRequest>, DialectError> {
    let fitted = request
        .messages
        .iter()
        .enumerate()
        .map(|(at, message)| fit_message(at, message, caps))
        .collect::<Result<Vec<_>, _>>()?;
    if fitted
        .iter()
        .all(|message| matches!(message, Cow::Borrowed(_)))
    {
        return Ok(Cow::Borrowed(request));
    }
    Ok(Cow::Owned(ChatRequest {
        messages: fitted.into_iter().map(Cow::into_owned).collect(),
        ..request.clone()
    }))
}

/// The message at `at`, its role and content as the template takes them.
fn fit_message<'a>(
    at: usize,
    message: &'a Message,
    caps: &TemplateCaps,
) -> Result<Cow<'a, Message>, DialectError> {
    let role = match message.role {
        Role::Developer if !caps.knows_developer_role => Role::System,
        ref role => role.clone(),
    };
    let text = match &message.content {
        Some(Content::Parts(parts)) => {
            if let Some((index, part)) = parts.iter().enumerate().find(|(_, p)| !has_text(p)) {
                return Err(untaken_part(at, index, part));
            }
            (!caps.renders_text_parts(&role)).then(|| parts_text(parts))
        }
        _ => None,
    };
    if role == message.role && text.is_none() {
        return Ok(Cow::Borrowed(message));
    }
    let mut fitted = message.clone();
    fitted.role = role;
    if let Some(text) = text {
        fitted.content = Some(Content::Text(text));
    }
    Ok(Cow::Owned(fitted))
}

/// Whether `part` is text: a text part, or an assistant's refusal.
fn has_text(part: &ContentPart) -> bool {
    matches!(part, ContentPart::Text { .. } | ContentPart::Refusal { .. })
}

/// The text of `parts` (all of them [`has_text`]), each part's on its own line.
fn parts_text(parts: &[ContentPart]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } => Some(text.as_str()),
            ContentPart::Refusal { refusal, .. } => Some(refusal.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// The model cannot be shown `part`, the `index`th of message `at`: the prompt is text,
/// and no engine here takes images, audio or files beside it. The request is refused,
/// as a template would have refused it, but saying which part and why.
fn untaken_part(at: usize, index: usize, part: &ContentPart) -> DialectError {
    let kind = part.kind().unwrap_or("(none)");
    template_refused(format!(
        "messages[{at}].content[{index}]: content parts of type '{kind}' are not \
         supported: the model is given a text prompt, without image, audio or file input"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolbridge_template::ArgumentsForm;

    use super::*;

    /// ChatML with Hermes calls, written for strings: Qwen 2.5's template.
    fn strings_only() -> TemplateCaps {
        TemplateCaps {
            requires_alternation: false,
            supports_system_role: true,
            tool_call_arguments: Some(ArgumentsForm::Object),
            renders_content_with_tool_calls: true,
            renders_tool_results: true,
            renders_tool_name: false,
            supports_tools: true,
            generation_prompt: None,
            assistant_prefix: None,
            assistant_suffix: None,
            knows_developer_role: false,
            text_parts_roles: Vec::new(),
        }
    }

    fn request(messages: serde_json::Value) -> ChatRequest {
        serde_json::from_value(json!({ "messages": messages })).expect("a request")
    }

    fn texts(request: &ChatRequest) -> Vec<(String, String)> {
        request
            .messages
            .iter()
            .map(|m| (m.role.to_string(), m.content_text().into_owned()))
            .collect()
    }

    #[test]
    fn messages_a_template_takes_are_borrowed() {
        let sent =
            request(json!([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]));
        let fitted = fit_request(&sent, &strings_only()).expect("fits");
        assert!(matches!(fitted, Cow::Borrowed(_)));
    }

    #[test]
    fn parts_become_their_text_joined_by_newlines() {
        let sent = request(json!([
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "c"}, {"type": "refusal", "refusal": "no"}]},
        ]));
        let fitted = fit_request(&sent, &strings_only()).expect("fits");
        assert_eq!(
            texts(&fitted),
            [
                ("user".into(), "a\nb".into()),
                ("assistant".into(), "c\nno".into())
            ]
        );
        assert!(matches!(fitted.messages[0].content, Some(Content::Text(_))));
    }

    #[test]
    fn parts_stay_where_the_template_renders_them() {
        let caps = TemplateCaps {
            text_parts_roles: vec![Role::User],
            ..strings_only()
        };
        let sent = request(json!([
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "r"}]},
        ]));
        let fitted = fit_request(&sent, &caps).expect("fits");
        assert_eq!(fitted.messages[0], sent.messages[0]);
        assert_eq!(fitted.messages[1].content, Some(Content::Text("r".into())));
    }

    #[test]
    fn developer_turns_become_system_turns_unless_the_template_renders_them() {
        let sent = request(json!([
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "U"},
        ]));
        let fitted = fit_request(&sent, &strings_only()).expect("fits");
        assert_eq!(texts(&fitted)[0], ("system".into(), "Be brief.".into()));
        let caps = TemplateCaps {
            knows_developer_role: true,
            text_parts_roles: vec![Role::Developer],
            ..strings_only()
        };
        let fitted = fit_request(&sent, &caps).expect("fits");
        assert!(matches!(fitted, Cow::Borrowed(_)));
    }

    #[test]
    fn parts_without_text_are_refused_whatever_the_template() {
        let sent = request(json!([
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
        ]));
        let multimodal = TemplateCaps {
            text_parts_roles: vec![Role::User],
            ..strings_only()
        };
        for caps in [strings_only(), multimodal] {
            let error = fit_request(&sent, &caps).expect_err("refused");
            assert_eq!(
                error.to_string(),
                "chat template: messages[1].content[1]: content parts of type 'image_url' are \
                 not supported: the model is given a text prompt, without image, audio or \
                 file input"
            );
        }
    }
}
