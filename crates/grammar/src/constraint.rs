//! The constraint on one generation, as dialects make it and engines enforce it. It lives
//! here, below both, so that the engine crate never needs to know about dialects.
//!
//! Engines read it in their own notation: llguidance in-process takes Lark
//! ([`crate::lark`]), a llama.cpp server takes GBNF with its triggers ([`Constraint::gbnf`]),
//! and engines whose lazy grammars are tags (xgrammar's structural tags in vLLM and SGLang)
//! take what follows each trigger ([`Constraint::after_trigger`]).

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::error::GrammarError;
use crate::gbnf;
use crate::schema::{expand_embedded, Options};
use crate::tree::{Expr, Grammar, Token, Trigger};

/// A grammar tree, and when it is lazy, the triggers that switch it on (text before the
/// first trigger is free). Made whole and never changed after, so its Lark text is printed
/// once, however many times a request asks for it.
#[derive(Clone)]
pub struct Constraint {
    grammar: Grammar,
    triggers: Vec<Trigger>,
    lazy: bool,
    /// The Lark text, printed when first asked for: a request asks three times (the
    /// server's size check, the engine's compile and its matcher, both keyed by the text).
    lark: OnceLock<Arc<str>>,
}

/// A constraint printed as GBNF.
#[derive(Debug, Clone, PartialEq)]
pub struct Gbnf {
    pub text: String,
    /// What the schemas' conversion cannot enforce (a grammar admits more there).
    pub warnings: Vec<String>,
}

impl Constraint {
    /// `grammar`, free until one of `triggers` when `lazy`; else followed from the first
    /// byte (`tool_choice` forcing a call).
    pub fn new(grammar: Grammar, triggers: Vec<Trigger>, lazy: bool) -> Constraint {
        Constraint {
            grammar,
            triggers,
            lazy,
            lark: OnceLock::new(),
        }
    }

    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// Whether generation is free until a trigger appears.
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// The constraint as the Lark program llguidance compiles: free text up to a trigger
    /// when lazy, the grammar from the first byte otherwise. The one place this is decided,
    /// so the scripted engine checks exactly the language the embedded engine enforces.
    ///
    /// Asked three times per request, it costs one printing: 11.1 µs against 30.7 µs for
    /// three printings, one tool in Hermes 2 Pro's grammar (`cargo bench -p
    /// toolbridge-dialect --bench prepare -- Lark`, both measured in one run).
    pub fn lark(&self) -> &str {
        self.lark.get_or_init(|| {
            if self.lazy {
                crate::lark::print_lazy(&self.grammar, &self.triggers).into()
            } else {
                crate::lark::print(&self.grammar).into()
            }
        })
    }

    /// The grammar as GBNF, every embedded schema expanded into rules the way llama.cpp's
    /// json-schema-to-grammar writes them. A lazy grammar's root starts with its trigger,
    /// as llama.cpp's lazy grammars do.
    pub fn gbnf(&self) -> Result<Gbnf, GrammarError> {
        let (grammar, warnings) = expand_embedded(&self.grammar, &Options::default())?;
        Ok(Gbnf {
            text: gbnf::print(&grammar)?,
            warnings,
        })
    }

    /// The grammar of what follows `trigger`, its root named `root`: for engines that take
    /// a lazy grammar as a trigger and a grammar for the rest. `None` when the grammar
    /// cannot begin with `trigger`.
    pub fn after_trigger(&self, trigger: &Trigger) -> Option<Grammar> {
        let root = self.grammar.rule(&self.grammar.root)?;
        let rest = self.grammar.after_trigger(&root.body, trigger)?;
        let mut grammar = self.grammar.clone();
        grammar.set_rule(grammar.root.clone(), rest);
        Some(grammar)
    }

    /// The text of every trigger and special token the grammar names: the markers an engine
    /// must keep in its output text (llama.cpp's `preserved_tokens`), in first-seen order.
    pub fn markers(&self) -> Vec<String> {
        let mut markers: Vec<String> = Vec::new();
        let mut add = |text: &str| {
            if !text.is_empty() && !markers.iter().any(|known| known == text) {
                markers.push(text.to_owned());
            }
        };
        for trigger in &self.triggers {
            match trigger {
                Trigger::Word(word) => add(word),
                Trigger::Token(Token::Text(text)) => add(text),
                Trigger::Token(Token::Id(_)) => {}
            }
        }
        for rule in &self.grammar.rules {
            rule.body.walk(&mut |e| {
                if let Expr::Token(Token::Text(text)) = e {
                    add(text);
                }
            });
        }
        markers
    }

    /// Texts inside the grammar's literals that look like a model's special markers
    /// (`<tool_call>`, `<|python_tag|>`, `</s>`, `[TOOL_CALLS]`), in first-seen order: the
    /// ones an engine whose vocabulary has them as single tokens must match as those
    /// tokens ([`Constraint::with_tokens`]). Embedded schemas are not looked into: their
    /// literals are the caller's data, not the dialect's syntax.
    pub fn marker_candidates(&self) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for rule in &self.grammar.rules {
            rule.body.walk(&mut |e| {
                if let Expr::Literal(text) = e {
                    for marker in tag_like(text) {
                        if !found.iter().any(|known| known == marker) {
                            found.push(marker.to_owned());
                        }
                    }
                }
            });
        }
        found
    }

    /// The constraint with every occurrence of `tokens` inside a literal matched as that
    /// special token or spelled as text, whichever the model writes. llama.cpp's grammars
    /// match a quoted literal only with text tokens, so `"</tool_call>"` alone would make
    /// a model spell out the tag it was trained to write as one token; the token alone
    /// turns a model that spells it away from the path it prefers. Measured on the default
    /// model with a forced call on llama-server: offered only the `</tool_call>` token, it
    /// wrote the token and then call after call until `max_tokens`; offered both, it spelled
    /// the tag and ended after one call, as it does on the embedded engine, whose
    /// vocabulary trie admits either for a literal.
    pub fn with_tokens(&self, tokens: &[String]) -> Constraint {
        if tokens.is_empty() {
            return self.clone();
        }
        let mut grammar = self.grammar.clone();
        for rule in &mut grammar.rules {
            rule.body
                .map_literals(&mut |text| split_at_tokens(text, tokens));
        }
        Constraint::new(grammar, self.triggers.clone(), self.lazy)
    }
}

impl PartialEq for Constraint {
    /// The same grammar and triggers, lazy alike; whether either was printed yet is no
    /// matter.
    fn eq(&self, other: &Constraint) -> bool {
        (&self.grammar, &self.triggers, self.lazy) == (&other.grammar, &other.triggers, other.lazy)
    }
}

impl fmt::Debug for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Constraint")
            .field("grammar", &self.grammar)
            .field("triggers", &self.triggers)
            .field("lazy", &self.lazy)
            .finish()
    }
}

/// The substrings of `text` shaped like special markers: `<…>` without blanks or a
/// second `<` inside (at most 64 bytes), and `[UPPER_CASE]`.
fn tag_like(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let close = match bytes[start] {
            b'<' => b'>',
            b'[' => b']',
            _ => {
                start += 1;
                continue;
            }
        };
        let inside = |b: u8| {
            if close == b'>' {
                !b.is_ascii_whitespace() && b != b'<'
            } else {
                b.is_ascii_uppercase() || b == b'_'
            }
        };
        let end = bytes[start + 1..]
            .iter()
            .take(64)
            .position(|&b| b == close || !inside(b))
            .map(|n| start + 1 + n)
            .filter(|&n| bytes[n] == close && n > start + 1);
        match end {
            Some(end) => {
                found.push(&text[start..=end]);
                start = end + 1;
            }
            None => start += 1,
        }
    }
    found
}

/// `text` as literals and the special tokens found in it, leftmost (then longest) first.
fn split_at_tokens(text: &str, tokens: &[String]) -> Option<Expr> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next = tokens
            .iter()
            .filter(|token| !token.is_empty())
            .filter_map(|token| rest.find(token.as_str()).map(|at| (at, token)))
            .min_by_key(|(at, token)| (*at, std::cmp::Reverse(token.len())));
        let Some((at, token)) = next else {
            parts.push(Expr::literal(rest));
            break;
        };
        if at > 0 {
            parts.push(Expr::literal(&rest[..at]));
        }
        parts.push(Expr::Group {
            inner: Box::new(Expr::Alt(vec![
                Expr::Token(Token::Text(token.clone())),
                Expr::literal(token),
            ])),
            padded: false,
        });
        rest = &rest[at + token.len()..];
    }
    match parts.len() {
        1 if parts[0] == Expr::literal(text) => None,
        1 => parts.pop(),
        _ => Some(Expr::Seq(parts)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_call() -> Constraint {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>\n"),
                Expr::Json(serde_json::json!({"type": "object"})),
                Expr::Token(Token::Text("<|im_end|>".into())),
            ]),
        );
        Constraint::new(grammar, vec![Trigger::Word("<tool_call>".into())], true)
    }

    #[test]
    fn gbnf_expands_embedded_schemas() {
        let gbnf = tool_call().gbnf().expect("prints");
        assert!(
            gbnf.text
                .starts_with("root ::= \"<tool_call>\\n\" json-0 <|im_end|>\n"),
            "{}",
            gbnf.text
        );
        assert!(gbnf.text.contains("json-0 ::="), "{}", gbnf.text);
    }

    #[test]
    fn the_rest_after_a_trigger_is_a_grammar_of_its_own() {
        let constraint = tool_call();
        let rest = constraint
            .after_trigger(&Trigger::Word("<tool_call>".into()))
            .expect("the root starts with the trigger");
        let root = rest.rule("root").expect("root");
        assert!(matches!(&root.body, Expr::Seq(items) if items[0] == Expr::literal("\n")));
        assert!(constraint
            .after_trigger(&Trigger::Word("[TOOL_CALLS]".into()))
            .is_none());
    }

    #[test]
    fn tag_like_texts_are_marker_candidates() {
        assert_eq!(
            tag_like("\n</tool_call> a < b > [TOOL_CALLS][x]<|im_end|><｜tool▁sep｜>"),
            vec![
                "</tool_call>",
                "[TOOL_CALLS]",
                "<|im_end|>",
                "<｜tool▁sep｜>"
            ]
        );
    }

    #[test]
    fn literals_split_at_special_tokens() {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::literal("<tool_call>\n{\"a\": 1}\n</tool_call>"),
        );
        let constraint = Constraint::new(grammar, vec![Trigger::Word("<tool_call>".into())], true);
        assert_eq!(
            constraint.marker_candidates(),
            vec!["<tool_call>", "</tool_call>"]
        );
        let tokens = vec!["<tool_call>".to_string(), "</tool_call>".to_string()];
        let gbnf = constraint.with_tokens(&tokens).gbnf().expect("prints").text;
        assert_eq!(
            gbnf,
            "root ::= (<tool_call> | \"<tool_call>\") \"\\n{\\\"a\\\": 1}\\n\" (</tool_call> | \"</tool_call>\")\n"
        );
        assert_eq!(constraint.with_tokens(&[]), constraint);
    }

    #[test]
    fn markers_are_triggers_and_tokens() {
        assert_eq!(tool_call().markers(), vec!["<tool_call>", "<|im_end|>"]);
    }
}
