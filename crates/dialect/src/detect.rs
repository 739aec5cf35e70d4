//! Which dialect a chat template speaks, read from its text, so a model works with no
//! configuration.
//!
//! This is the first rule of the detector, the one the default model needs: a template
//! that writes calls in `<tool_call>` tags is trained on Hermes-style calls (Hermes 2 Pro,
//! Qwen 2.5). Every other template gets a prompt style, `hermes_2_pro`, which describes the
//! tools in a system prompt and asks for the same tags; the native families will get rules
//! of their own here.

/// The registry name of the dialect for the template `source`.
pub fn dialect_name(source: &str) -> &'static str {
    if source.contains("<tool_call>") {
        "hermes"
    } else {
        "hermes_2_pro"
    }
}

#[cfg(test)]
mod tests {
    use super::dialect_name;

    #[test]
    fn tool_call_tags_mean_hermes_and_anything_else_a_prompt_style() {
        assert_eq!(dialect_name("{{ '<tool_call>' }}"), "hermes");
        assert_eq!(dialect_name("{{ messages[0].content }}"), "hermes_2_pro");
    }
}
