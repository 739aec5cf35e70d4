//! The prompt styles `short`, `long`, `hermes_2_pro`, `thoughtful_steps`, `mixtral` and
//! `functionary_v2` against seed 000: for every
//! section of theirs, the injected system prompt (the second `Prompt` block) and the
//! conversation (the first) byte for byte, the full prompt `prepare` makes from the two,
//! and a grammar that admits the seed's call in the style's syntax and nothing near it.
//! Everything expected is cut out of the seed itself.

use serde_json::{json, Value};
use toolbridge_chat::{ChatRequest, Message, ResponseFormat, Tool};
use toolbridge_dialect::dialects::styles::{
    functionary_v2, hermes_2_pro, long, short, thoughtful_steps,
};
use toolbridge_dialect::toolkit::prompt_style::{PromptStyle, ToolsPrompt};
use toolbridge_dialect::{toolkit::prompt_text::with_system_prompt, Registry};
use toolbridge_dialect::{ChatTemplate, Dialect, PromptParts};
use toolbridge_grammar::check::Validator;
use toolbridge_template::Clock;

use crate::common::{parse_seed, Section, Seed};

/// The seed's tools, cut from the `TOOLS_SHORT` listing (one JSON object after another
/// between `<tools>` lines).
fn seed_tools(seed: &Seed) -> Vec<Tool> {
    let section = seed
        .sections
        .iter()
        .find(|s| s.style == "TOOLS_SHORT" && s.with_tools)
        .expect("a TOOLS_SHORT section with tools");
    let listing = section
        .system
        .split_once("<tools>\n")
        .and_then(|(_, rest)| rest.split_once("\n</tools>"))
        .map(|(listing, _)| listing)
        .expect("a <tools> listing");
    serde_json::Deserializer::from_str(listing)
        .into_iter::<Tool>()
        .collect::<Result<_, _>>()
        .expect("the tools are OpenAI tools")
}

/// The schema a section without tools asks for, cut from its instruction.
fn seed_schema(section: &Section) -> Value {
    let schema = section
        .system
        .strip_prefix("Please respond in JSON format with the following schema: ")
        .unwrap_or_else(|| panic!("{}: no schema instruction", section.title));
    serde_json::from_str(schema).expect("the schema is JSON")
}

/// The seed's request: its messages, its answer schema (the `thoughtful_steps` sections
/// with tools show it as the type of their `result`), and its tools where shown.
fn request(seed: &Seed, section: &Section) -> ChatRequest {
    let mut request = ChatRequest::new("seed", seed.messages.clone());
    let answer = seed
        .sections
        .iter()
        .find(|s| !s.with_tools)
        .expect("a section without tools");
    request.response_format = Some(ResponseFormat::JsonObject {
        schema: Some(seed_schema(answer)),
        extra: Default::default(),
    });
    if section.with_tools {
        request.tools = Some(seed_tools(seed));
    }
    request
}

/// The seed's past call as these styles ask for calls: `<tool_call>{"name", "arguments"}`.
fn seed_call(seed: &Seed) -> (String, Value) {
    let call = &seed.messages[1].calls()[0];
    let arguments = serde_json::to_value(&call.function.arguments).expect("arguments as JSON");
    (call.function.name.clone(), arguments)
}

/// How a style's answer carries a call: in `<tool_call>` tags after free text (the grammar
/// lazy on the tag), the same with markdown's `\_` allowed in the tags (`mixtral`), as
/// the whole answer, a `thoughtful_steps` step, or as a message routed to the tool
/// (`functionary_v2`, whose prompt ends with `<|recipient|>`).
#[derive(Clone, Copy)]
enum Syntax {
    Tagged,
    Escaped,
    Steps,
    Routed,
}

impl Syntax {
    fn call(self, name: &str, arguments: &Value) -> String {
        let call = json!({"name": name, "arguments": arguments});
        match self {
            Syntax::Tagged | Syntax::Escaped => format!("<tool_call>{call}</tool_call>"),
            Syntax::Steps => step(json!({ "tool_calls": [call] })),
            Syntax::Routed => format!("{name}\n<|content|>\n{arguments}\n"),
        }
    }

    /// The call as the syntax allows it to be spaced.
    fn spaced(self, name: &str, arguments: &Value) -> String {
        let call = json!({"name": name, "arguments": arguments});
        match self {
            Syntax::Tagged => format!("<tool_call> {call} </tool_call>"),
            Syntax::Escaped => format!("<tool\\_call> {call} </tool\\_call>"),
            Syntax::Steps => format!(
                "{:#}",
                json!({"thought_about_next_step_only": "Add.", "next_step": {"tool_calls": [call]}})
            ),
            Syntax::Routed => format!(
                "all\n<|content|>Adding.{START}{name}\n<|content|>\n{arguments:#}\n{START}all\n<|content|>Done."
            ),
        }
    }

    fn lazy(self) -> bool {
        !matches!(self, Syntax::Steps | Syntax::Routed)
    }
}

/// What opens each `functionary_v2` message after the first.
const START: &str = "<|from|>assistant\n<|recipient|>";

fn step(next_step: Value) -> String {
    json!({"thought_about_next_step_only": "", "next_step": next_step}).to_string()
}

/// The grammar admits the seed's call and rejects a wrong name, a missing required
/// argument and a wrongly typed one.
fn check_call_grammar(validator: &Validator, syntax: Syntax, seed: &Seed, title: &str) {
    let (name, arguments) = seed_call(seed);
    let a = arguments["a"].clone();
    for good in [
        syntax.call(&name, &arguments),
        syntax.spaced(&name, &arguments),
    ] {
        assert!(validator.accepts(&good), "{title}: rejects {good}");
    }
    let bad = [
        syntax.call("superSecretTools", &arguments),
        syntax.call(&name, &json!({ "a": a })),
        syntax.call(&name, &json!({"a": a.to_string(), "b": arguments["b"]})),
    ];
    for bad in bad {
        assert!(!validator.accepts(&bad), "{title}: accepts {bad}");
    }
}

/// Without tools the grammar is the schema's: the seed's `{"type": "integer"}`.
fn check_schema_grammar(validator: &Validator, title: &str) {
    assert!(
        validator.accepts("32222002938"),
        "{title}: rejects an integer"
    );
    for bad in ["\"42\"", "4.2", "<tool_call>"] {
        assert!(!validator.accepts(bad), "{title}: accepts {bad}");
    }
}

/// A step's grammar also takes the result, typed by the answer schema, and nothing else.
fn check_step_grammar(validator: &Validator, title: &str) {
    let good = step(json!({"result": 42}));
    assert!(validator.accepts(&good), "{title}: rejects {good}");
    for bad in [
        step(json!({"result": "42"})),
        step(json!({"tool_calls": []})),
        step(json!({"result": 42, "tool_calls": []})),
        "42".to_string(),
    ] {
        assert!(!validator.accepts(&bad), "{title}: accepts {bad}");
    }
}

fn check_section<P: ToolsPrompt>(
    style: &PromptStyle<P>,
    syntax: Syntax,
    seed: &Seed,
    section: &Section,
    template: &ChatTemplate,
) {
    let title = &section.title;
    let request = request(seed, section);
    let system = style.system_prompt(&request).expect("a system prompt");
    assert_eq!(system.as_deref(), Some(section.system.as_str()), "{title}");
    let conversation = style.conversation(&request, template).expect("renders");
    assert_eq!(conversation, section.conversation, "{title}");

    let prepared = style.prepare(&request, template).expect("prepares");
    let mut injected = request.clone();
    injected.messages = with_system_prompt(&request.messages, &section.system);
    let expected = style.conversation(&injected, template).expect("renders");
    assert_eq!(prepared.prompt, expected, "{title}: the full prompt");
    assert!(
        prepared.prompt.contains(&section.system),
        "{title}: prompt lacks the system prompt"
    );

    let constraint = prepared.constraint.expect("a constraint");
    assert_eq!(
        constraint.is_lazy(),
        section.with_tools && syntax.lazy(),
        "{title}"
    );
    let validator = Validator::from_grammar(constraint.grammar())
        .unwrap_or_else(|err| panic!("{title}: grammar does not compile: {err}"));
    if section.with_tools {
        check_call_grammar(&validator, syntax, seed, title);
        if matches!(syntax, Syntax::Steps) {
            check_step_grammar(&validator, title);
        }
    } else {
        check_schema_grammar(&validator, title);
    }
}

#[test]
fn seed_000_sections_of_the_styles() {
    let seed = parse_seed();
    let pinned = Clock::fixed_from_str("2024-03-30T00:00").expect("a date");
    let hermes = hermes_2_pro::dialect(pinned);
    let (short, long) = (short::dialect(), long::dialect());
    let (steps, mixtral) = (thoughtful_steps::dialect(), long::mixtral());
    let functionary = functionary_v2::dialect();
    let mut covered = 0;
    for section in &seed.sections {
        let source = &seed
            .templates
            .iter()
            .find(|(name, _)| *name == section.template)
            .unwrap_or_else(|| panic!("{}: no template {}", section.title, section.template))
            .1;
        let template = ChatTemplate::new(source, "<s>", "</s>").expect("the template compiles");
        match section.style.as_str() {
            "TOOLS_SHORT" => check_section(&short, Syntax::Tagged, &seed, section, &template),
            "TOOLS_LONG" => check_section(&long, Syntax::Tagged, &seed, section, &template),
            "TOOLS_HERMES_2_PRO" => {
                check_section(&hermes, Syntax::Tagged, &seed, section, &template)
            }
            "TOOLS_MIXTRAL" => check_section(&mixtral, Syntax::Escaped, &seed, section, &template),
            "TOOLS_THOUGHTFUL_STEPS" => {
                check_section(&steps, Syntax::Steps, &seed, section, &template)
            }
            "TYPESCRIPT_FUNCTIONARY_V2" => {
                check_section(&functionary, Syntax::Routed, &seed, section, &template)
            }
            _ => continue,
        }
        covered += 1;
    }
    println!("seed 000: {covered}/{} sections", seed.sections.len());
    assert_eq!(covered, 22, "the seed has 22 sections of these styles");
}

#[test]
fn the_registry_knows_the_styles_by_name() {
    let registry = Registry::default();
    for name in [
        "short",
        "long",
        "hermes_2_pro",
        "thoughtful_steps",
        "mixtral",
        "functionary_v2",
    ] {
        let dialect = registry.get(name).unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(dialect.name(), name);
    }
}

#[test]
fn hermes_2_pro_takes_todays_date_when_not_pinned() {
    let today = Clock::Local.strftime_now("%Y-%m-%d").expect("a date");
    let style = hermes_2_pro::dialect(Clock::Local);
    let mut request = ChatRequest::new("m", vec![Message::user("hi")]);
    request.tools = Some(seed_tools(&parse_seed()));
    let system = style
        .system_prompt(&request)
        .expect("renders")
        .expect("a prompt");
    assert!(
        system.contains(&format!("The current date is: {today}.")),
        "{system}"
    );
}

#[test]
fn an_existing_system_turn_follows_the_style_prompt() {
    let messages = vec![Message::system("Be brief."), Message::user("hi")];
    let injected = with_system_prompt(&messages, "TOOLS");
    assert_eq!(injected.len(), 2);
    assert_eq!(injected[0].content_text(), "TOOLS\nBe brief.");
}

/// `tool_choice` decides as in the native dialects: `none` shows no tools and frees the
/// output, `required` makes the grammar start at the first byte.
#[test]
fn tool_choice_none_and_required() {
    use toolbridge_chat::{ToolChoice, ToolChoiceMode};
    let seed = parse_seed();
    let template = ChatTemplate::new(&seed.templates[0].1, "<s>", "</s>").expect("compiles");
    let style = short::dialect();
    let mut request = ChatRequest::new("m", vec![Message::user("hi")]);
    request.tools = Some(seed_tools(&seed));

    request.tool_choice = Some(ToolChoice::Mode(ToolChoiceMode::None));
    assert_eq!(style.system_prompt(&request).expect("renders"), None);
    let prepared = style.prepare(&request, &template).expect("prepares");
    assert!(prepared.constraint.is_none());
    assert!(!prepared.prompt.contains("<tools>"));

    request.tool_choice = Some(ToolChoice::Mode(ToolChoiceMode::Required));
    let prepared = style.prepare(&request, &template).expect("prepares");
    assert!(!prepared.constraint.expect("a constraint").is_lazy());
}
