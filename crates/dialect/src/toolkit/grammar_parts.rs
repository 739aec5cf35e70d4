//! The parts call grammars are made of: one alternative per tool, a call then more with
//! `parallel`, layout and free text, reasoning before a forced call, arguments in schema
//! order each optional one maybe left out, and the triggers. Every family's grammar is
//! these put together with its own literals, so each rule (what a tool's name may hold,
//! what text may run before a closing tag) is written once.

use toolbridge_chat::Tool;
use toolbridge_grammar::{CharClass, ClassItem, Expr, Grammar, Trigger};

use crate::dialect::{call_object, checked_parameters};
use crate::error::{json_error, DialectError};

/// Word triggers.
pub fn words(words: &[&str]) -> Vec<Trigger> {
    words
        .iter()
        .map(|word| Trigger::Word(word.to_string()))
        .collect()
}

/// A grammar whose root is `root`.
pub fn grammar_of(root: Expr) -> Grammar {
    let mut grammar = Grammar::new("root");
    grammar.set_rule("root", root);
    grammar
}

/// A tool's name as JSON string text without its quotes (`a\"b` for `a"b`).
pub fn json_name(tool: &Tool) -> Result<String, DialectError> {
    let quoted = serde_json::to_string(tool.name()).map_err(json_error("a tool name"))?;
    Ok(quoted[1..quoted.len() - 1].to_string())
}

/// One alternative per tool, each made by `call` from the tool, its JSON-escaped name and
/// its checked parameters schema.
pub fn per_tool(
    tools: &[&Tool],
    call: impl Fn(&Tool, &str, Expr) -> Expr,
) -> Result<Expr, DialectError> {
    let alternatives = tools
        .iter()
        .map(|tool| {
            let name = json_name(tool)?;
            Ok(call(tool, &name, Expr::Json(checked_parameters(tool)?)))
        })
        .collect::<Result<Vec<_>, DialectError>>()?;
    Ok(Expr::group(Expr::Alt(alternatives)))
}

/// `{"name": "<tool>", "<arguments_key>": <its arguments>}`, compact and the name first,
/// as models write a JSON call: one alternative per tool after the opening they share.
pub fn name_first_call(tools: &[&Tool], arguments_key: &str) -> Result<Expr, DialectError> {
    let named = per_tool(tools, |_, name, arguments| {
        let middle = format!("{name}\", \"{arguments_key}\": ");
        Expr::Seq(vec![Expr::literal(middle), arguments])
    })?;
    Ok(Expr::Seq(vec![
        Expr::literal("{\"name\": \""),
        named,
        Expr::literal("}"),
    ]))
}

/// One JSON object schema per tool ([`call_object`]).
pub fn call_objects(
    tools: &[&Tool],
    keys: (&str, &str),
    id: Option<&str>,
) -> Result<Vec<Expr>, DialectError> {
    tools
        .iter()
        .map(|tool| Ok(Expr::Json(call_object(tool, keys, id)?)))
        .collect()
}

/// `first`, then with `parallel` any number of `separator first`.
pub fn one_or_more(first: Expr, separator: Expr, parallel: bool) -> Expr {
    if !parallel {
        return first;
    }
    Expr::Seq(vec![
        first.clone(),
        Expr::repeat(Expr::group(Expr::Seq(vec![separator, first])), 0, None),
    ])
}

/// Optional layout whitespace between the parts of a call.
pub fn ws() -> Expr {
    Expr::repeat(
        Expr::Class(CharClass::new(
            false,
            vec![
                ClassItem::Char(' '),
                ClassItem::Char('\t'),
                ClassItem::Char('\n'),
            ],
        )),
        0,
        Some(24),
    )
}

/// Free text without `<`, for the reasoning a forced grammar lets a model write first.
pub fn free_text() -> Expr {
    text_without('<')
}

/// Free text without `stop`, the first character of the marker that ends it.
pub fn text_without(stop: char) -> Expr {
    Expr::repeat(none_of([stop]), 0, None)
}

/// One character not among `chars`.
pub fn none_of(chars: impl IntoIterator<Item = char>) -> Expr {
    let items = chars.into_iter().map(ClassItem::Char).collect();
    Expr::Class(CharClass::new(true, items))
}

/// `calls` after optional reasoning, for a forced grammar: the model may still be in the
/// reasoning its prompt opened (then it writes only `close`), or open it itself.
pub fn reasoning_then(open: &str, close: &str, calls: Expr) -> Expr {
    Expr::Seq(vec![
        Expr::optional(Expr::group(Expr::Seq(vec![
            Expr::optional(Expr::literal(open)),
            free_text(),
            Expr::literal(close),
            ws(),
        ]))),
        calls,
    ])
}

/// A grammar's root: `calls`, after the reasoning [`reasoning_then`] admits when the call is
/// `forced` (a lazy grammar starts at its trigger, past any reasoning).
pub fn forced_after_reasoning(forced: bool, (open, close): (&str, &str), calls: Expr) -> Expr {
    if forced {
        reasoning_then(open, close, calls)
    } else {
        calls
    }
}

/// One argument as a grammar writes it (`key=value`), and whether it must be there.
pub struct Argument {
    pub written: Expr,
    pub required: bool,
}

/// `arguments` in order, each optional one maybe left out, joined by `separator`, then
/// `end`. Rule `{prefix}-i` is what may follow once the arguments before `i` are settled,
/// each with its separator before.
pub fn argument_chain(
    grammar: &mut Grammar,
    prefix: &str,
    arguments: &[Argument],
    separator: &str,
    end: &str,
) -> Expr {
    let rest = |at: usize| Expr::reference(format!("{prefix}-{at}"));
    grammar.set_rule(format!("{prefix}-{}", arguments.len()), Expr::literal(end));
    for (at, argument) in arguments.iter().enumerate().rev() {
        let with = Expr::Seq(vec![
            Expr::literal(separator),
            argument.written.clone(),
            rest(at + 1),
        ]);
        let body = if argument.required {
            with
        } else {
            Expr::Alt(vec![with, rest(at + 1)])
        };
        grammar.set_rule(format!("{prefix}-{at}"), body);
    }
    // The first argument written has no separator before it: any argument that only
    // optional ones precede may come first.
    let mut firsts = Vec::new();
    for (at, argument) in arguments.iter().enumerate() {
        firsts.push(Expr::Seq(vec![argument.written.clone(), rest(at + 1)]));
        if argument.required {
            break;
        }
    }
    if arguments.iter().all(|argument| !argument.required) {
        firsts.push(Expr::literal(end));
    }
    Expr::group(Expr::Alt(firsts))
}

/// A string value as text: anything without `end`, the start of its closing tag, so that
/// tag ends it, and nothing more strictly (`<|<` and `<</` are text; `]]` may end a CDATA
/// value). `end` is a run of its first character (`<`, `]]`) and then characters other
/// than that one, as every closing tag is: such an `end` never overlaps itself, so the
/// first `end` after the value is the one that closes it.
pub fn text_value(end: &str) -> Expr {
    text_without_any(&[end])
}

/// A string value as text holding none of `ends`: its closing tag's start and the tags
/// its reader ends a value at when the closing tag is left out (the next argument's), so
/// that what the grammar lets a model write is read as the value it wrote. Each of `ends`
/// is shaped as [`text_value`]'s `end` is, all with the same first character and run of it
/// (an end that is not is left to its reader); the first is the closing tag's. The value
/// is read as runs of the first character, each followed by as much of one of the ends'
/// rests as matches and then a character that breaks every match.
pub fn text_without_any(ends: &[&str]) -> Expr {
    let closing = ends.first().copied().unwrap_or("<");
    let first = closing.chars().next().unwrap_or('<');
    let run_of = |end: &str| end.chars().take_while(|&c| c == first).count().max(1);
    let run = run_of(closing);
    let rests: Vec<Vec<char>> = ends
        .iter()
        .filter(|end| end.starts_with(first) && run_of(end) == run)
        .map(|end| end.chars().skip(run).collect())
        .filter(|rest: &Vec<char>| !rest.contains(&first))
        .collect();
    let run_length = u32::try_from(run).unwrap_or(u32::MAX);
    let rests: Vec<&[char]> = rests.iter().map(Vec::as_slice).collect();
    let full_run = Expr::repeat(Expr::literal(first.to_string()), run_length, None);
    let mut segments = vec![match after_run(first, &rests, true) {
        Some(after) => Expr::Seq(vec![full_run, after]),
        None => full_run,
    }];
    if run > 1 {
        let short_run = Expr::repeat(Expr::literal(first.to_string()), 1, Some(run_length - 1));
        segments.push(Expr::Seq(vec![
            short_run,
            Expr::repeat(none_of([first]), 1, None),
        ]));
    }
    Expr::Seq(vec![
        Expr::repeat(none_of([first]), 0, None),
        Expr::repeat(Expr::group(Expr::Alt(segments)), 0, None),
        Expr::repeat(Expr::literal(first.to_string()), 0, None),
    ])
}

/// What may follow a run of `first` once some of the ends' `rests` matched so far: a
/// character that breaks every match (then anything up to the next run), or the next
/// character of some rests, never the last of one (that would complete an end). Right
/// after the run something must follow (the value's last run is its tail); deeper, the
/// value or its next run may come at once. `None` where no rest is left.
fn after_run(first: char, rests: &[&[char]], at_run: bool) -> Option<Expr> {
    if rests.is_empty() {
        return None;
    }
    let mut nexts: Vec<char> = rests
        .iter()
        .filter_map(|rest| rest.first().copied())
        .collect();
    nexts.sort_unstable();
    nexts.dedup();
    let broken = Expr::Seq(vec![
        none_of([first].into_iter().chain(nexts.iter().copied())),
        Expr::repeat(none_of([first]), 0, None),
    ]);
    let mut ways = vec![broken];
    for &next in &nexts {
        let deeper: Vec<&[char]> = rests
            .iter()
            .filter(|rest| rest.first() == Some(&next))
            .map(|rest| &rest[1..])
            .collect();
        if deeper.iter().any(|rest| rest.is_empty()) {
            continue;
        }
        let mut way = vec![Expr::literal(next.to_string())];
        way.extend(after_run(first, &deeper, false));
        ways.push(Expr::Seq(way));
    }
    let ways = Expr::group(Expr::Alt(ways));
    Some(match at_run {
        true => ways,
        false => Expr::optional(ways),
    })
}

#[cfg(test)]
mod tests {
    use toolbridge_grammar::check::Validator;

    use super::*;

    /// Every string up to `length` characters over `alphabet`.
    fn strings(alphabet: &[char], length: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..length {
            last = last
                .iter()
                .flat_map(|text| alphabet.iter().map(move |&c| format!("{text}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn a_text_value_is_exactly_the_text_without_any_of_its_ends() {
        for ends in [
            &["</p>", "<p="][..],
            &["</a>", "<ab", "<b"],
            &["<|c|>", "<|o|>"],
        ] {
            let mut grammar = Grammar::new("root");
            grammar.set_rule("root", text_without_any(ends));
            let validator = Validator::from_grammar(&grammar)
                .unwrap_or_else(|error| panic!("{ends:?}: compiles: {error}"));
            let mut alphabet: Vec<char> = ends.iter().flat_map(|end| end.chars()).collect();
            alphabet.sort_unstable();
            alphabet.dedup();
            alphabet.push('x');
            for text in strings(&alphabet, 5) {
                let holds_one = ends.iter().any(|end| text.contains(end));
                assert_eq!(validator.accepts(&text), !holds_one, "{ends:?}: {text:?}");
            }
        }
    }

    #[test]
    fn a_text_value_is_exactly_the_text_without_its_end() {
        for end in ["</p>", "<|c|>a", "]]>", "]<"] {
            let mut grammar = Grammar::new("root");
            grammar.set_rule("root", text_value(end));
            let validator = Validator::from_grammar(&grammar)
                .unwrap_or_else(|error| panic!("{end}: compiles: {error}"));
            let mut alphabet: Vec<char> = end.chars().collect();
            alphabet.sort_unstable();
            alphabet.dedup();
            alphabet.push('x');
            for text in strings(&alphabet, 6) {
                assert_eq!(
                    validator.accepts(&text),
                    !text.contains(end),
                    "{end}: {text:?}"
                );
            }
        }
    }
}
