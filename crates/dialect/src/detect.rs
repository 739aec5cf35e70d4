//! Which dialect a chat template speaks, read from its text, so a model works with no
//! configuration.
//!
//! A family's template gives itself away by the markers it writes a past call with
//! (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`, `functools[`, `<｜tool▁calls▁begin｜>`,
//! …) or by the instructions it shows the model. [`RULES`] lists those tells, most specific
//! first: several families share a marker (Qwen3-Coder's XML calls sit inside Hermes'
//! `<tool_call>` tags, Functionary v3.1 writes `<|python_tag|>` like Llama 3.1), so the
//! first rule that matches wins and the more particular families come before the general
//! ones. The rules read the template's text only, never render it, so they work on Jinja
//! and on Ollama's Go templates alike (seed 001's FireFunction template is a Go template).
//!
//! [`family`] names the family; [`resolve`] turns that into a dialect the registry has. A
//! family without a dialect of its own yet, and a template with no tool support at all, get
//! the prompt style [`FALLBACK`], which describes the tools in a system prompt of its own;
//! [`Detection::fallback`] says when that happened, so the checked-in detection table shows
//! which families still lack a dialect.
//!
//! [`choose`] goes further where the compiled template is at hand, because markers are a
//! guess: the chosen dialect must read back the calls the template itself writes (the
//! proof, [`crate::proof`]). A template whose text shows no family with a dialect, but
//! which renders tool calls, gets a dialect learned from its own renders
//! ([`LearnedDialect`]); so does one whose family's dialect fails the proof, where the
//! learned dialect reads more of the renderings back. The prompt style stands in only when
//! learning is refused, and [`Chosen`] says why, with the proof's result.

use std::sync::Arc;

use crate::dialect::{ChatTemplate, Dialect};
use crate::dialects::learned::LearnedDialect;
use crate::error::DialectError;
use crate::proof::{self, Proof};
use crate::registry::Registry;
use crate::toolkit::native::NativeDialect;

/// The prompt style for templates whose family has no dialect here (or no tool support).
pub const FALLBACK: &str = "hermes_2_pro";

/// One tell: the template is of `family` when it contains every string of `all`, at least
/// one of `any` (when `any` is not empty), and none of `none`.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub family: &'static str,
    pub all: &'static [&'static str],
    pub any: &'static [&'static str],
    pub none: &'static [&'static str],
}

impl Rule {
    /// Whether `source` shows this rule's tells.
    pub fn matches(&self, source: &str) -> bool {
        self.all.iter().all(|tell| source.contains(tell))
            && (self.any.is_empty() || self.any.iter().any(|tell| source.contains(tell)))
            && !self.none.iter().any(|tell| source.contains(tell))
    }
}

const fn rule(
    family: &'static str,
    all: &'static [&'static str],
    any: &'static [&'static str],
    none: &'static [&'static str],
) -> Rule {
    Rule {
        family,
        all,
        any,
        none,
    }
}

/// The tells, most specific first; the first rule that matches names the family.
pub const RULES: &[Rule] = &[
    // LLM-jp 4.1: harmony with a space after every special token.
    rule(
        "llm_jp_harmony",
        &["chat_format=llm-jp-harmony-v1"],
        &[],
        &[],
    ),
    // GPT-OSS: the harmony format's channels.
    rule("gpt_oss", &["<|channel|>"], &[], &[]),
    // DeepSeek V4: DSML calls in a `tool_calls` block (V3.2's is `function_calls`).
    rule("deepseek_v4", &["DSML"], &[], &["function_calls"]),
    // DeepSeek V3.2: calls in DSML markup.
    rule("deepseek_v3_2", &["DSML"], &[], &[]),
    // DeepSeek V3.1: `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{…}`, the name first.
    rule(
        "deepseek_v3_1",
        &["tool▁calls▁begin"],
        &[
            "<｜tool▁call▁begin｜>' + tool['function']['name']",
            "<｜tool▁call▁begin｜>'+ tool['function']['name']",
        ],
        &[],
    ),
    // DeepSeek R1 (and its distills): V3's calls, with `<think>` reasoning.
    rule("deepseek_r1", &["tool▁calls▁begin", "</think>"], &[], &[]),
    // DeepSeek V3 / V2.5: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json …```.
    rule("deepseek_v3", &["tool▁calls▁begin"], &[], &[]),
    rule("kimi_k2", &["<|tool_calls_section_begin|>"], &[], &[]),
    rule("minimax_m2", &["<minimax:tool_call>"], &[], &[]),
    rule("dots", &["<dots_function_call>"], &[], &[]),
    // StepFun Step 3: `<steptml:invoke name="f">` calls in DeepSeek-style frames.
    rule("step3", &["<steptml:invoke"], &[], &[]),
    // IFM K2 Horizon: `<ifm|tool_call>` calls in an `<ifm|tool_calls>` block.
    rule("k2_horizon", &["<ifm|tool_call"], &[], &[]),
    // MiniMax M3: `]<]minimax[>[` before every tag of an `<invoke>` call.
    rule("minimax_m3", &["]<]minimax[>[", "<invoke name="], &[], &[]),
    // Tencent Hy3: GLM's `<arg_key>` pairs after `<tool_call>name<tool_sep>`, in a
    // `<tool_calls>` block; its template may build the tags (`'<tool_sep{}>'.format(…)`),
    // so the tells are their openings.
    rule("hy3", &["<tool_sep", "<tool_calls"], &[], &[]),
    // Ling 3: GLM's calls in `<role>…<|role_end|>` turns.
    rule("ling", &["<arg_key>", "<|role_end|>"], &[], &[]),
    // GLM 4.5 / 4.6 / 4.7: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`.
    rule("glm", &["<arg_key>"], &[], &[]),
    rule("seed_oss", &["<seed:tool_call>"], &[], &[]),
    // Functionary v3.1: `<function=name>{…}</function>`, and `<|python_tag|>` for code.
    rule(
        "functionary_v3_1",
        &["<function=", "<|python_tag|>"],
        &[],
        &[],
    ),
    // Functionary v3.2: `>>>name\n{…}`, with `all` for text.
    rule(
        "functionary_v3",
        &[">>>"],
        &["'all'", "\"all\"", ">>>all"],
        &[],
    ),
    rule("functionary_v2", &["<|recipient|>"], &[], &[]),
    // MiniCPM5: `<function name="f"><param name="k">v</param></function>`.
    rule(
        "minicpm5",
        &[
            "Tool usage guidelines:",
            "<function name=\"",
            "<param name=\"",
        ],
        &[],
        &[],
    ),
    // Qwen3-Coder, Qwen 3.5, Nemotron 3, Step 3.5: `<function=name><parameter=k>v</parameter>`.
    rule("qwen3_coder", &["<function=", "<parameter="], &[], &[]),
    // Command R7B and Command A: `<|START_ACTION|>[…]<|END_ACTION|>`.
    rule("command_r7b", &["<|START_ACTION|>"], &[], &[]),
    // Command-R / R+: `Action: ```json […]```` with `directly-answer`.
    rule(
        "cohere",
        &["Action:"],
        &["directly-answer", "directly_answer"],
        &[],
    ),
    rule("mistral", &["[TOOL_CALLS]"], &[], &[]),
    // Phi-4-mini writes calls as FireFunction does, `functools[…]`, in its own turns.
    rule(
        "phi4_mini",
        &["functools"],
        &["<|tool|>", "<|system|>"],
        &[],
    ),
    rule("firefunction_v2", &["functools"], &[], &[]),
    rule("phi4_mini", &["<|tool|>", "<|/tool|>"], &[], &[]),
    // xLAM: a JSON list of calls, `[{"name": …, "arguments": …}]`.
    rule("xlam", &["[{\"name\""], &["xLAM", "xlam"], &[]),
    // Llama 4 with pythonic calls `[f(a=1)]`.
    rule(
        "llama4_pythonic",
        &["<|header_start|>"],
        &["python list", "[func_name1("],
        &[],
    ),
    // Llama 3.1 / 3.2 / 3.3 (and Llama 4's JSON template): `{"name": …, "parameters": …}`,
    // `<|python_tag|>`, the `ipython` role.
    rule(
        "llama3",
        &[],
        &[
            "<|python_tag|>",
            "\"parameters\": dictionary of argument name",
        ],
        &[],
    ),
    // Llama 3.2 with pythonic calls (vLLM's template).
    rule("llama3_pythonic", &["ipython"], &["python list"], &[]),
    rule("granite", &["<|tool_call|>"], &[], &[]),
    rule("granite_20b_fc", &["<function_call>"], &[], &[]),
    rule("nemotron", &["<TOOLCALL>"], &[], &[]),
    rule(
        "lfm2",
        &[],
        &[
            "<|tool_list_start|>",
            "<|tool_call_start|>",
            // LFM2.5-Instruct lists the tools bare and renders no past calls.
            "List of tools: [",
        ],
        &["```python"],
    ),
    rule("minicpm3", &["<|tool_call_start|>"], &[], &[]),
    rule("gemma4", &["<|tool_call>"], &[], &[]),
    rule("functiongemma", &["<start_function_call>"], &[], &[]),
    rule(
        "gemma3_pythonic",
        &["python list of the function calls"],
        &[],
        &[],
    ),
    rule("apertus", &["<|tools_prefix|>"], &[], &[]),
    rule("internlm2", &["<|action_start|>"], &[], &[]),
    rule("firefunction_v1", &["<functioncall>"], &[], &[]),
    rule("muse_glimmer", &["<atem:function_calls>"], &[], &[]),
    rule("solar_open", &["<|tool_calls|>"], &[], &[]),
    rule(
        "minimax_m1",
        &["<tool_calls>"],
        &["MiniMax", "ipython"],
        &[],
    ),
    rule(
        "apriel",
        &["<tool_calls>"],
        &["Apriel", "[BEGIN FINAL RESPONSE]"],
        &[],
    ),
    rule(
        "hunyuan",
        &["<tool_calls>"],
        &["<|extra_0|>", "hunyuan", "Hunyuan"],
        &[],
    ),
    rule("jamba", &["<tool_calls>"], &[], &[]),
    // Kimi K3: `<|open|>call tool="…" index="…"<|sep|>` regions.
    rule("kimi_k3", &["open_tag('call'"], &[], &[]),
    // GigaChat 3: a `function call` turn holding `{"name", "arguments"}`.
    rule(
        "gigachat",
        &["<|role_sep|>"],
        &["<|function_call|>", "function call"],
        &[],
    ),
    // GLM-4 (9B, ChatGLM's format): tools under `# 可用工具`, calls as `name\n{…}`.
    rule("glm4", &["# 可用工具"], &[], &[]),
    // Nemotron Mini: tools in `<tool>` tags, results in `<extra_id_1>Tool` turns.
    rule("nemotron_mini", &["<extra_id_1>"], &["<tool>"], &[]),
    // Hammer: a JSON list of calls, `[{"name": …, "arguments": …}]`.
    rule("hammer", &["You are a tool calling assistant"], &[], &[]),
    // Cogito (Llama 3.2 based): tools after `Available Tools:`, calls as JSON objects.
    rule(
        "cogito",
        &["Available Tools:", "ipython"],
        &[],
        &["<tool_call>"],
    ),
    // xLAM as Ollama writes it: `{"tool_calls": [{"name", "arguments"}, …]}`.
    rule("xlam", &["{\"tool_calls\": ["], &[], &["<tool_call>"]),
    rule("longcat", &["<longcat_tool_call>"], &[], &[]),
    rule("olmo3", &["<function_calls>"], &[], &[]),
    // Hermes 2 Pro, Qwen 2.5 / 3, Granite 4, SmolLM3…: `<tool_call>{"name", "arguments"}`.
    rule("hermes", &["<tool_call>"], &[], &[]),
];

/// What detection found for one template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detection {
    /// The family the template's text shows, or `None` when it shows no tool-call syntax
    /// this detector knows.
    pub family: Option<&'static str>,
    /// The registry's dialect used for it.
    pub dialect: &'static str,
    /// Whether the registry has a dialect for the family itself (under its name or as an
    /// alias), rather than a prompt style standing in.
    pub native: bool,
}

impl Detection {
    /// Whether the family has no dialect of its own (yet), so a prompt style stands in.
    pub fn fallback(&self) -> bool {
        !self.native
    }
}

/// The family whose tool-call syntax the template `source` shows, if any.
pub fn family(source: &str) -> Option<&'static str> {
    RULES
        .iter()
        .find(|rule| rule.matches(source))
        .map(|rule| rule.family)
}

/// The family of `source`, and the dialect of `registry` that serves it: the family's own
/// when registered, else [`FALLBACK`].
pub fn resolve(source: &str, registry: &Registry) -> Detection {
    let family = family(source);
    let own = family.and_then(|name| registry.get(name).map(|dialect| dialect.name()));
    Detection {
        family,
        dialect: own.unwrap_or(FALLBACK),
        native: own.is_some(),
    }
}

/// The registry name of the dialect for the template `source`, in the default registry.
pub fn dialect_name(source: &str) -> &'static str {
    resolve(source, &Registry::default()).dialect
}

/// The dialect chosen for a compiled template, and how.
pub struct Chosen {
    /// What the template's text showed.
    pub detection: Detection,
    /// The dialect learned from the template, or why none was, where learning was tried:
    /// the family has no dialect of its own, or its dialect failed the proof. Whether the
    /// learned one is used is [`Chosen::uses_learned`].
    pub learned: Option<Result<LearnedDialect, DialectError>>,
    /// The proof of the chosen dialect: the template's own calls, read back.
    pub proof: Proof,
    /// Where the family's dialect failed the proof and another took its place or was tried:
    /// its proof.
    pub family_proof: Option<Proof>,
    uses_learned: bool,
}

/// The dialect for `template`, whose text is `source`, proven on the template's own
/// renders of calls ([`crate::proof`]): its family's when the registry has one and it reads
/// them back; else the one learned from the template where that reads them (or, the family
/// having none, where one could be learned); else the family's again, its failure recorded;
/// else [`FALLBACK`].
pub fn choose(source: &str, template: &ChatTemplate, registry: &Registry) -> Chosen {
    let detection = resolve(source, registry);
    let own = registry.get(detection.dialect);
    let family_proof = own
        .filter(|_| detection.native)
        .map(|dialect| proof::prove(template, dialect));
    if let Some(proof) = family_proof.as_ref().filter(|proof| !proof.failed()) {
        return Chosen {
            detection,
            learned: None,
            proof: proof.clone(),
            family_proof: None,
            uses_learned: false,
        };
    }
    let learned = LearnedDialect::learn(template);
    let learned_proof = learned
        .as_ref()
        .ok()
        .map(|learned| proof::prove(template, &NativeDialect(learned.clone())));
    let (proof, uses_learned) = match (family_proof.clone(), learned_proof) {
        // The learned dialect takes a failing family's place only where it reads more.
        (Some(family), Some(learned)) if learned.score() > family.score() => (learned, true),
        (Some(family), _) => (family, false),
        (None, Some(learned)) => (learned, true),
        (None, None) => (
            own.map_or(Proof::NotProvable, |dialect| {
                proof::prove(template, dialect)
            }),
            false,
        ),
    };
    Chosen {
        detection,
        learned: Some(learned),
        proof,
        family_proof,
        uses_learned,
    }
}

impl Chosen {
    /// Whether the dialect learned from the template is the one chosen.
    pub fn uses_learned(&self) -> bool {
        self.uses_learned
    }

    /// The dialect learned from the template, where it is the one chosen.
    pub fn learned_dialect(&self) -> Option<&LearnedDialect> {
        match &self.learned {
            Some(Ok(learned)) if self.uses_learned => Some(learned),
            _ => None,
        }
    }

    /// Why this dialect, a line each, as `toolbridge detect --explain` prints it and the
    /// `/inspect` page shows it: the family and the tell that named it, the dialect, what
    /// was learned from the template or why learning was refused, and the proof.
    pub fn explain(&self, source: &str) -> Vec<String> {
        let detection = &self.detection;
        let mut lines = vec![format!("family: {}", detection.family.unwrap_or("none"))];
        if let Some(rule) = RULES.iter().find(|rule| rule.matches(source)) {
            lines.push(format!("because: {}", rule.tells(source)));
        }
        if let Some(family) = self.family_proof.as_ref().filter(|_| self.uses_learned) {
            lines.push(format!(
                "the {} dialect failed the proof: {family}",
                detection.dialect
            ));
        }
        match &self.learned {
            Some(Ok(learned)) if self.uses_learned => {
                lines.push(
                    "dialect: learned (from the template's own renders of past calls)".into(),
                );
                lines.extend(learned.learned().describe());
            }
            Some(Ok(_)) => {
                lines.push(format!(
                    "dialect: {} (the learned dialect read no more renderings back)",
                    detection.dialect
                ));
            }
            Some(Err(why)) => {
                lines.push(if detection.fallback() {
                    fallback_line(detection)
                } else {
                    format!("dialect: {}", detection.dialect)
                });
                lines.push(format!("learning refused: {why}"));
            }
            None if detection.fallback() => lines.push(fallback_line(detection)),
            None => lines.push(format!("dialect: {}", detection.dialect)),
        }
        lines.push(format!("proof: {}", self.proof));
        lines
    }

    /// The name of the chosen dialect, with the learned one added to `registry` when it is
    /// the one chosen.
    pub fn register_into(self, registry: &mut Registry) -> &'static str {
        match self.learned {
            Some(Ok(learned)) if self.uses_learned => {
                let dialect = Arc::new(NativeDialect(learned));
                let name = dialect.name();
                registry.register(dialect, &[]);
                name
            }
            _ => self.detection.dialect,
        }
    }
}

fn fallback_line(detection: &Detection) -> String {
    format!(
        "dialect: {} (prompt style: no dialect for this family yet)",
        detection.dialect
    )
}

impl Rule {
    /// What `source` showed to match this rule, in words: the tells it contains, and
    /// those it lacks.
    fn tells(&self, source: &str) -> String {
        let quoted = |tells: &mut dyn Iterator<Item = &&str>| {
            tells
                .map(|tell| format!("`{tell}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let found = &mut self
            .all
            .iter()
            .chain(self.any.iter().filter(|tell| source.contains(**tell)));
        let mut said = format!("the template contains {}", quoted(found));
        if !self.none.is_empty() {
            said.push_str(&format!(" and none of {}", quoted(&mut self.none.iter())));
        }
        format!("{said} (the {} rule)", self.family)
    }
}

/// The dialect learned from `template`, added to `registry` under its own name; the name,
/// or why nothing was learned. For a template whose family has no dialect
/// ([`Detection::fallback`]), as the server and `toolbridge parse` set a model up.
pub fn learn_into(
    template: &ChatTemplate,
    registry: &mut Registry,
) -> Result<&'static str, DialectError> {
    let dialect = Arc::new(NativeDialect(LearnedDialect::learn(template)?));
    let name = dialect.name();
    registry.register(dialect, &[]);
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_tags_mean_hermes_and_anything_else_a_prompt_style() {
        assert_eq!(dialect_name("{{ '<tool_call>' }}"), "hermes");
        assert_eq!(dialect_name("{{ messages[0].content }}"), "hermes_2_pro");
    }

    #[test]
    fn the_more_particular_family_wins() {
        let qwen3_coder = "<tool_call>\n<function=' + name + '>\n<parameter=";
        assert_eq!(family(qwen3_coder), Some("qwen3_coder"));
        assert_eq!(
            family("<|python_tag|><function=x>"),
            Some("functionary_v3_1")
        );
        assert_eq!(family("<|python_tag|>{{ x }}"), Some("llama3"));
        assert_eq!(family("' functools[' + calls"), Some("firefunction_v2"));
        assert_eq!(family("'[TOOL_CALLS]'"), Some("mistral"));
    }

    #[test]
    fn a_family_without_a_dialect_falls_back_and_says_so() {
        let detection = resolve("<|START_ACTION|>", &Registry::default());
        assert_eq!(detection.family, Some("command_r7b"));
        if detection.dialect == FALLBACK {
            assert!(detection.fallback());
        }
        assert!(!resolve("<tool_call>", &Registry::default()).fallback());
    }
}
