//! Runs a grammar in-process with llguidance to decide whether a text is in its language.
//! This is how `toolbridge grammar --validate`, the MaskBench run and the tests check
//! grammars: the same engine that will constrain generation, driven byte by byte over a
//! one-byte-per-token vocabulary so no model is needed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};
use serde_json::Value;

pub use llguidance;
pub use llguidance::toktrie;

use crate::error::{GrammarError, GrammarErrorKind};
use crate::lark;
use crate::tree::{Expr, Grammar};

/// A compiled grammar, ready to check any number of texts.
pub struct Validator {
    matcher: Matcher,
    tok_env: TokEnv,
}

impl Validator {
    /// Compiles the tree through its Lark printing.
    pub fn from_grammar(grammar: &Grammar) -> Result<Self, GrammarError> {
        Self::from_lark(&lark::print(grammar))
    }

    pub fn from_lark(lark: &str) -> Result<Self, GrammarError> {
        Self::compile(TopLevelGrammar::from_lark(lark.to_string()))
    }

    /// llguidance's own JSON Schema support, for comparison with our converter.
    pub fn from_llguidance_json_schema(schema: &Value) -> Result<Self, GrammarError> {
        Self::compile(TopLevelGrammar::from_json_schema(schema.clone()))
    }

    fn compile(grammar: TopLevelGrammar) -> Result<Self, GrammarError> {
        let factory = byte_factory()?;
        let parser = llguidance::panic_utils::catch_unwind(std::panic::AssertUnwindSafe(|| {
            factory.create_parser(grammar)
        }))
        .map_err(engine_error)?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(error) = matcher.get_error() {
            return Err(GrammarError::new(GrammarErrorKind::Engine, error));
        }
        Ok(Self {
            matcher,
            tok_env: factory.tok_env().clone(),
        })
    }

    /// Whether the whole text is a sentence of the grammar.
    pub fn accepts(&self, text: &str) -> bool {
        let mut matcher = self.matcher.deep_clone();
        let tokens = self.tok_env.tokenize_bytes(text.as_bytes());
        matcher.consume_tokens(&tokens).is_ok() && matcher.is_accepting().unwrap_or(false)
    }
}

/// Whether the in-process engine can enforce `schema`: llguidance compiles it as the Lark
/// printing embeds it (`%json {…}`, objects closed), or says why not. Tool schemas are
/// checked with this when a request is prepared, so a schema llguidance refuses fails with
/// the tool's name instead of in the engine.
///
/// Compiling costs 1.3–6 ms per schema (more for `pattern`s and number bounds, which
/// become regexes), too much to pay on every request for the same tools; answers are kept
/// per schema, up to 4096 of them, which brings a repeated check to the cost
/// of printing the schema (measured in `crates/dialect/benches/prepare.rs`).
pub fn engine_accepts_schema(schema: &Value) -> Result<(), GrammarError> {
    static ANSWERS: OnceLock<Mutex<HashMap<String, Result<(), String>>>> = OnceLock::new();
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", Expr::Json(schema.clone()));
    let lark = lark::print(&grammar);
    let answers = ANSWERS.get_or_init(Mutex::default);
    let known = answers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&lark)
        .cloned();
    let answer = match known {
        Some(answer) => answer,
        None => {
            let answer = Validator::from_lark(&lark)
                .map(drop)
                .map_err(|error| error.to_string());
            let mut answers = answers.lock().unwrap_or_else(PoisonError::into_inner);
            if answers.len() >= SCHEMA_CACHE {
                answers.clear();
            }
            answers.insert(lark, answer.clone());
            answer
        }
    };
    answer.map_err(|e| GrammarError::new(GrammarErrorKind::Engine, e))
}

/// How many schemas' answers [`engine_accepts_schema`] keeps before starting over.
const SCHEMA_CACHE: usize = 4096;

/// Whether `text` is a sentence of `grammar`.
pub fn accepts(grammar: &Grammar, text: &str) -> Result<bool, GrammarError> {
    Ok(Validator::from_grammar(grammar)?.accepts(text))
}

/// JSON text with the whitespace between tokens removed and everything else (number
/// spellings, string escapes, key order) kept as written, so that an instance is checked
/// exactly as it was given.
pub fn compact_json(text: &str) -> String {
    let mut compact = CompactJson::default();
    compact.push(text);
    compact.text
}

/// [`compact_json`] of text that arrives in pieces: `text` is the compact form of all the
/// pieces pushed so far.
#[derive(Debug, Default)]
pub struct CompactJson {
    pub text: String,
    in_string: bool,
    escaped: bool,
}

impl CompactJson {
    pub fn push(&mut self, piece: &str) {
        for c in piece.chars() {
            if self.in_string {
                self.text.push(c);
                match c {
                    _ if self.escaped => self.escaped = false,
                    '\\' => self.escaped = true,
                    '"' => self.in_string = false,
                    _ => {}
                }
            } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
                self.in_string = c == '"';
                self.text.push(c);
            }
        }
    }
}

fn byte_factory() -> Result<Arc<ParserFactory>, GrammarError> {
    static FACTORY: OnceLock<Result<Arc<ParserFactory>, String>> = OnceLock::new();
    FACTORY
        .get_or_init(|| {
            let tok_env = ApproximateTokEnv::single_byte_env();
            let mut factory = ParserFactory::new_simple(&tok_env).map_err(|e| e.to_string())?;
            factory.quiet();
            Ok(Arc::new(factory))
        })
        .clone()
        .map_err(|e| GrammarError::new(GrammarErrorKind::Engine, e))
}

fn engine_error(error: impl std::fmt::Display) -> GrammarError {
    GrammarError::new(GrammarErrorKind::Engine, error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{CharClass, ClassItem, Expr, Token, Trigger};

    fn digits_then_word() -> Grammar {
        let mut g = Grammar::new("root");
        g.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::repeat(Expr::range('0', '9'), 1, Some(3)),
                Expr::Alt(vec![Expr::Empty, Expr::literal(" ok")]),
                Expr::reference("tail"),
            ]),
        );
        let not_quote = CharClass::new(true, vec![ClassItem::Char('"'), ClassItem::Char('\n')]);
        g.set_rule("tail", Expr::repeat(Expr::Class(not_quote), 0, None));
        g
    }

    #[test]
    fn accepts_exactly_the_language() {
        let v = Validator::from_grammar(&digits_then_word()).unwrap();
        for good in ["1", "123", "12 ok", "7 ok then more"] {
            assert!(v.accepts(good), "{good}");
        }
        for bad in ["", "x", "1 \"", "1\n"] {
            assert!(!v.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn a_literal_sharing_a_start_with_another_path_does_not_hide_it() {
        // `"a"` and `"ab"` both start `"a`; a greedy multi-character lexeme for the
        // listed key would fail at `b` and lose the other path.
        let mut g = Grammar::new("root");
        let lower = Expr::repeat(Expr::range('a', 'z'), 1, None);
        g.set_rule(
            "root",
            Expr::Alt(vec![
                Expr::literal("\"a\""),
                Expr::Seq(vec![Expr::literal("\""), lower, Expr::literal("\"")]),
            ]),
        );
        let v = Validator::from_grammar(&g).unwrap();
        assert!(v.accepts("\"a\""));
        assert!(v.accepts("\"ab\""));
        assert!(!v.accepts("\"a"));
    }

    #[test]
    fn a_lazy_grammar_is_free_until_its_trigger() {
        let mut g = Grammar::new("root");
        g.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>"),
                Expr::Json(serde_json::json!({"type": "object", "properties": {"name": {"const": "f"}}, "required": ["name"]})),
                Expr::literal("</tool_call>"),
            ]),
        );
        let lark = lark::print_lazy(&g, &[Trigger::Word("<tool_call>".into())]);
        let v = Validator::from_lark(&lark).unwrap();
        assert!(v.accepts("Just text, no call."));
        assert!(v.accepts("Sure.<tool_call>{\"name\":\"f\"}</tool_call>"));
        assert!(!v.accepts("Sure.<tool_call>{\"name\":\"g\"}</tool_call>"));
        assert!(!v.accepts("<tool_call>{\"name\":\"f\"}"));
    }

    #[test]
    fn token_triggers_print_as_special_tokens() {
        let mut g = Grammar::new("root");
        let tag = Token::Text("<|python_tag|>".into());
        g.set_rule(
            "root",
            Expr::Seq(vec![Expr::Token(tag.clone()), Expr::literal("x")]),
        );
        let lark = lark::print_lazy(&g, &[Trigger::Token(tag)]);
        assert!(lark.contains("free_text <|python_tag|> \"x\""), "{lark}");
    }

    #[test]
    fn compact_json_keeps_strings_and_numbers_as_written() {
        let text = "{ \"a b\" : [1.0, 2e3,\n -0 ],\t\"c\\\" d\": \" x \" }";
        assert_eq!(
            compact_json(text),
            "{\"a b\":[1.0,2e3,-0],\"c\\\" d\":\" x \"}"
        );
    }

    #[test]
    fn schemas_are_checked_as_the_engine_compiles_them() {
        let fine = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        assert!(engine_accepts_schema(&fine).is_ok());
        let unique = serde_json::json!({"type": "array", "uniqueItems": true});
        for _ in 0..2 {
            let error = engine_accepts_schema(&unique).err().map(|e| e.to_string());
            assert!(
                error.as_deref().is_some_and(|e| e.contains("uniqueItems")),
                "{error:?}"
            );
        }
        let lookaround = serde_json::json!({"type": "string", "pattern": "^(?!x)"});
        assert!(engine_accepts_schema(&lookaround).is_err());
    }

    #[test]
    fn a_broken_grammar_is_an_engine_error() {
        let err = Validator::from_lark("start: undefined_rule").err();
        assert!(
            matches!(&err, Some(e) if e.kind() == &GrammarErrorKind::Engine),
            "{err:?}"
        );
    }
}
