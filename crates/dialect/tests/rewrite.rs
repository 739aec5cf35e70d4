//! History rewriting against seed 000: its conversation, rewritten for each of its
//! templates from what probing finds, must render to the conversation each section shows
//! (the first `Prompt` block; the second is the style's system prompt, which the seed
//! renders apart).

use serde_json::json;
use toolbridge_chat::Message;
use toolbridge_dialect::{
    rewrite::{rewrite_history, CallWriter, ThoughtfulSteps, ToolCallTags},
    ChatTemplate,
};
use toolbridge_template::JinjaTemplate;
use toolbridge_template::TemplateCaps;

use crate::common::{parse_seed, Section};

/// The writer the seed's style uses for past turns: `thoughtful_steps` writes its JSON
/// object when tools are given; every other case writes `<tool_call>` tags.
fn writer_for(section: &Section) -> &'static dyn CallWriter {
    if section.style == "TOOLS_THOUGHTFUL_STEPS" && section.with_tools {
        &ThoughtfulSteps
    } else {
        &ToolCallTags
    }
}

fn render(template: &JinjaTemplate, messages: &[Message]) -> String {
    let context = json!({
        "messages": messages,
        "add_generation_prompt": true,
        "bos_token": "<s>",
        "eos_token": "</s>",
    });
    template
        .render(&context)
        .unwrap_or_else(|err| panic!("rewritten history does not render: {err:?}"))
}

fn check_sections(only: Option<&str>) -> usize {
    let seed = parse_seed();
    let mut checked = 0;
    for (name, source) in &seed.templates {
        if only.is_some_and(|only| only != name) {
            continue;
        }
        let template = JinjaTemplate::new(source)
            .unwrap_or_else(|err| panic!("template {name} does not compile: {err:?}"));
        let caps = TemplateCaps::probe(&ChatTemplate::new(source, "<s>", "</s>").unwrap());
        for section in seed.sections.iter().filter(|s| &s.template == name) {
            let history = rewrite_history(&seed.messages, &caps, writer_for(section));
            let rendered = render(&template, &history);
            assert_eq!(rendered, section.conversation, "{}", section.title);
            checked += 1;
        }
    }
    checked
}

#[test]
fn mistral_instruct_v0_1_sections_render_the_seed_conversation() {
    let checked = check_sections(Some("mistral_instruct_v0_1"));
    assert_eq!(checked, 4, "mistral_instruct_v0_1 has four sections");
}

#[test]
fn every_seed_section_renders_the_seed_conversation() {
    let total = parse_seed().sections.len();
    let checked = check_sections(None);
    println!("seed 000: {checked}/{total} conversations");
    assert_eq!(checked, total);
}

mod properties {
    use proptest::prelude::*;
    use toolbridge_chat::{Arguments, Message, Role, ToolCall};
    use toolbridge_dialect::rewrite::{rewrite_history, CallWriter, ThoughtfulSteps, ToolCallTags};
    use toolbridge_template::{ArgumentsForm, TemplateCaps};

    fn role() -> impl Strategy<Value = Role> {
        prop::sample::select(vec![
            "system",
            "developer",
            "user",
            "assistant",
            "tool",
            "function",
            "ipython",
        ])
        .prop_map(Role::from)
    }

    fn call() -> impl Strategy<Value = ToolCall> {
        let arguments = prop_oneof![
            any::<String>().prop_map(Arguments::Text),
            "[a-z]{1,4}".prop_map(|key| {
                let mut object = serde_json::Map::new();
                object.insert(key, serde_json::Value::from(1));
                Arguments::Object(object)
            }),
        ];
        ("[a-z0-9]{0,9}", ".{0,8}", arguments)
            .prop_map(|(id, name, arguments)| ToolCall::new(id, name, arguments))
    }

    fn message() -> impl Strategy<Value = Message> {
        (
            role(),
            proptest::option::of(".{0,12}"),
            proptest::option::of(proptest::collection::vec(call(), 0..3)),
            proptest::option::of("[a-z0-9]{0,9}"),
            proptest::option::of(".{0,8}"),
        )
            .prop_map(|(role, content, tool_calls, tool_call_id, name)| Message {
                content: content.map(Into::into),
                tool_calls,
                tool_call_id,
                name,
                ..Message::new(role)
            })
    }

    fn caps() -> impl Strategy<Value = TemplateCaps> {
        let form = proptest::option::of(prop::sample::select(vec![
            ArgumentsForm::Object,
            ArgumentsForm::String,
            ArgumentsForm::Either,
        ]));
        (any::<[bool; 5]>(), form).prop_map(|(flags, tool_call_arguments)| TemplateCaps {
            requires_alternation: flags[0],
            supports_system_role: flags[1],
            tool_call_arguments,
            renders_content_with_tool_calls: flags[2],
            renders_tool_results: flags[3],
            renders_tool_name: flags[4],
            supports_tools: false,
            generation_prompt: None,
            assistant_prefix: None,
            assistant_suffix: None,
            knows_developer_role: false,
            text_parts_roles: Vec::new(),
        })
    }

    fn writer(thoughtful: bool) -> &'static dyn CallWriter {
        if thoughtful {
            &ThoughtfulSteps
        } else {
            &ToolCallTags
        }
    }

    proptest! {
        #[test]
        fn strict_templates_always_get_alternation(
            messages in proptest::collection::vec(message(), 0..10),
            caps in caps(),
            thoughtful in any::<bool>(),
        ) {
            let caps = TemplateCaps { requires_alternation: true, ..caps };
            let out = rewrite_history(&messages, &caps, writer(thoughtful));
            for (index, message) in out.iter().enumerate() {
                let expected = if index % 2 == 0 { Role::User } else { Role::Assistant };
                prop_assert_eq!(&message.role, &expected, "turn {} of {:?}", index, out);
            }
        }

        #[test]
        fn lenient_templates_keep_every_turn(
            messages in proptest::collection::vec(message(), 0..10),
            caps in caps(),
            thoughtful in any::<bool>(),
        ) {
            let caps = TemplateCaps { requires_alternation: false, ..caps };
            let out = rewrite_history(&messages, &caps, writer(thoughtful));
            prop_assert_eq!(out.len(), messages.len());
        }
    }
}
