//! Grammars as xgrammar takes them, for vLLM and SGLang (both enforce with xgrammar): a
//! forced grammar as EBNF, a lazy one as a structural tag whose `triggered_tags` leave
//! text free until a trigger, then hold the rest to what the grammar admits after it.
//! Formats from xgrammar's `docs/structural_tag/structural_tag.md` and its EBNF parser
//! (`cpp/grammar_parser.cc`).

use serde_json::{json, Value};
use toolbridge_grammar::schema::{expand_embedded, Options};
use toolbridge_grammar::{gbnf, Constraint, Expr, Grammar, Token, Trigger};

use crate::error::constraint_error;
use crate::EngineError;

/// The constraint as xgrammar takes it: a forced grammar as EBNF (`grammar`), a lazy one
/// as a structural tag (`structural_tag`, its JSON as a string), with the field's name.
pub(super) fn constraint(constraint: &Constraint) -> Result<(&'static str, Value), EngineError> {
    if !constraint.is_lazy() {
        return Ok(("grammar", json!(ebnf(constraint.grammar())?)));
    }
    let tag = structural_tag(constraint)?;
    Ok(("structural_tag", json!(tag.to_string())))
}

/// `triggered_tags`: free text until a trigger, then the tag that begins with it, whose
/// content is what the grammar admits after the trigger. A tag's end is empty because the
/// rest of the grammar already says how a call ends. A trigger known only by its token
/// id has no text to match and is left out.
fn structural_tag(constraint: &Constraint) -> Result<Value, EngineError> {
    let mut triggers = Vec::new();
    let mut tags = Vec::new();
    for trigger in constraint.triggers() {
        let (Trigger::Word(word) | Trigger::Token(Token::Text(word))) = trigger else {
            continue;
        };
        let Some(rest) = constraint.after_trigger(trigger) else {
            continue;
        };
        triggers.push(json!(word));
        tags.push(json!({
            "type": "tag",
            "begin": word,
            "content": {"type": "grammar", "grammar": ebnf(&rest)?},
            "end": "",
        }));
    }
    if tags.is_empty() {
        return Err(constraint_error("no trigger of the lazy grammar begins its root as text; xgrammar's structural tags need one",
        ));
    }
    Ok(json!({
        "type": "structural_tag",
        "format": {"type": "triggered_tags", "triggers": triggers, "tags": tags},
    }))
}

/// The grammar in xgrammar's EBNF: GBNF with embedded schemas expanded, each special
/// token written as its text (xgrammar's EBNF has no token syntax), each empty
/// alternative as `""` (its parser wants an element in every alternative), and each rule
/// name that begins with a digit (GBNF allows it, a grammar a client sent may have one)
/// prefixed, as xgrammar's lexer refuses it.
fn ebnf(grammar: &Grammar) -> Result<String, EngineError> {
    let constraint =
        |error: toolbridge_grammar::GrammarError| constraint_error("").with_source(error);
    let (mut expanded, _warnings) =
        expand_embedded(grammar, &Options::default()).map_err(constraint)?;
    for rule in &mut expanded.rules {
        for_xgrammar(&mut rule.body)?;
    }
    name_rules_for_xgrammar(&mut expanded);
    gbnf::print(&expanded).map_err(constraint)
}

/// Renames each rule whose name begins with a digit to a free `r-` name.
fn name_rules_for_xgrammar(grammar: &mut Grammar) {
    let leading_digit: Vec<String> = grammar
        .rules
        .iter()
        .map(|rule| rule.name.clone())
        .filter(|name| name.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    for name in leading_digit {
        let mut renamed = format!("r-{name}");
        while grammar.rule(&renamed).is_some() {
            renamed.push('-');
        }
        grammar.rename_rule(&name, &renamed);
    }
}

fn for_xgrammar(e: &mut Expr) -> Result<(), EngineError> {
    match e {
        Expr::Empty => *e = Expr::literal(""),
        Expr::Token(Token::Text(text)) => *e = Expr::literal(text.as_str()),
        Expr::Token(Token::Id(id)) => {
            return Err(constraint_error(format!(
                "the grammar names token {id} by its id, which xgrammar's EBNF cannot say"
            )))
        }
        Expr::Seq(items) | Expr::Alt(items) => {
            for item in items {
                for_xgrammar(item)?;
            }
        }
        Expr::Group { inner: item, .. } | Expr::Repeat { item, .. } => for_xgrammar(item)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EngineErrorKind;

    fn lazy() -> Constraint {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>\n"),
                Expr::Json(json!({"type": "object"})),
                Expr::literal("\n</tool_call>"),
                Expr::Token(Token::Text("<|im_end|>".into())),
            ]),
        );
        Constraint::new(
            grammar,
            vec![
                Trigger::Word("<tool_call>".into()),
                Trigger::Token(Token::Id(7)),
            ],
            true,
        )
    }

    #[test]
    fn a_lazy_grammar_is_a_structural_tag_per_text_trigger() {
        let (key, value) = constraint(&lazy()).expect("built");
        assert_eq!(key, "structural_tag");
        let tag: Value = serde_json::from_str(value.as_str().unwrap()).unwrap();
        assert_eq!(tag["format"]["triggers"], json!(["<tool_call>"]));
        let grammar = tag["format"]["tags"][0]["content"]["grammar"]
            .as_str()
            .unwrap();
        assert!(
            grammar.starts_with("root ::= \"\\n\" json-0 \"\\n</tool_call>\" \"<|im_end|>\""),
            "{grammar}"
        );
        assert_eq!(tag["format"]["tags"][0]["end"], "");
    }

    #[test]
    fn token_ids_cannot_be_said_in_ebnf() {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("root", Expr::Token(Token::Id(3)));
        assert!(
            matches!(&ebnf(&grammar), Err(e) if matches!(e.kind(), EngineErrorKind::Constraint))
        );
    }

    #[test]
    fn rule_names_begin_with_a_letter() {
        let mut grammar = Grammar::new("root");
        let digit_led = Expr::Json(json!({
            "type": "object",
            "properties": {"1st": {"type": "integer"}, "2nd": {"$ref": "#/$defs/9lives"}},
            "$defs": {"9lives": {"type": "boolean"}}
        }));
        grammar.set_rule("root", Expr::Seq(vec![digit_led, Expr::reference("3x")]));
        grammar.set_rule("3x", Expr::literal("x"));
        grammar.set_rule("r-3x", Expr::literal("y"));
        let printed = ebnf(&grammar).unwrap();
        let names: Vec<&str> = printed
            .lines()
            .filter_map(|line| line.split_once(" ::= ").map(|(name, _)| name))
            .collect();
        assert!(
            names
                .iter()
                .all(|name| name.starts_with(|c: char| c.is_ascii_alphabetic())),
            "{printed}"
        );
        assert!(printed.contains("r-3x- ::= \"x\""), "{printed}");
    }

    #[test]
    fn empty_alternatives_are_empty_strings() {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("root", Expr::Alt(vec![Expr::Empty, Expr::literal("x")]));
        assert_eq!(ebnf(&grammar).unwrap(), "root ::= \"\" | \"x\"\n");
    }
}
