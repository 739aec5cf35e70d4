//! The fixed rules every converted grammar draws from: JSON's primitive values and the
//! string formats llama.cpp knows, written exactly as llama.cpp writes them so that the
//! GBNF comes out byte-identical. A builtin lists the builtins it refers to, which the
//! converter adds alongside it.

use super::exprs::{
    alt, chars, class, digit_range, group, hex, lit, not_class, opt, padded, rep, rf, seq, space,
    star,
};
use crate::tree::{ClassItem, Expr};

/// A builtin rule: its body and the builtins that body refers to.
pub(super) struct Builtin {
    pub body: Expr,
    pub deps: &'static [&'static str],
}

/// Names of the JSON primitives llama.cpp predefines, in its `PRIMITIVE_RULES`.
const PRIMITIVES: &[&str] = &[
    "boolean",
    "decimal-part",
    "integral-part",
    "number",
    "integer",
    "value",
    "object",
    "array",
    "uuid",
    "char",
    "string",
    "null",
];

/// Names of llama.cpp's string format rules, in its `STRING_FORMAT_RULES`.
const STRING_FORMATS: &[&str] = &[
    "date",
    "time",
    "date-time",
    "date-string",
    "time-string",
    "date-time-string",
];

/// Names a schema's own rules may not take: llama.cpp appends `-` to them.
pub(super) fn is_reserved_name(name: &str) -> bool {
    name == "root" || PRIMITIVES.contains(&name) || STRING_FORMATS.contains(&name)
}

/// [`space_rule`] as a regex, for llguidance's `whitespace_pattern` (it matches what is
/// there, the empty alternative being the option not to skip).
pub(super) const SPACE_PATTERN: &str = r"( |\n[ \t]{0,20})";

/// `| " " | "\n" [ \t]{0,20}`: the whitespace allowed between JSON tokens. (Newer
/// llama.cpp writes `"\n"{1,2}`; the reference cases predate that.)
pub(super) fn space_rule() -> Expr {
    Expr::Alt(vec![
        Expr::Empty,
        lit(" "),
        seq(vec![lit("\n"), rep(chars(" \t"), 0, Some(20))]),
    ])
}

/// A JSON primitive by name.
pub(super) fn primitive(name: &str) -> Option<Builtin> {
    let digits = || Expr::range('0', '9');
    let (body, deps): (Expr, &'static [&'static str]) = match name {
        "boolean" => (
            seq(vec![group(alt(vec![lit("true"), lit("false")])), space()]),
            &[],
        ),
        "decimal-part" => (rep(digits(), 1, Some(16)), &[]),
        "integral-part" => (
            alt(vec![
                one_digit('0'),
                seq(vec![Expr::range('1', '9'), rep(digits(), 0, Some(15))]),
            ]),
            &[],
        ),
        "number" => (
            seq(vec![
                group(seq(vec![opt(lit("-")), rf("integral-part")])),
                opt(group(seq(vec![lit("."), rf("decimal-part")]))),
                opt(group(seq(vec![
                    chars("eE"),
                    opt(chars("-+")),
                    rf("integral-part"),
                ]))),
                space(),
            ]),
            &["integral-part", "decimal-part"],
        ),
        "integer" => (
            seq(vec![
                group(seq(vec![opt(lit("-")), rf("integral-part")])),
                space(),
            ]),
            &["integral-part"],
        ),
        "value" => (
            alt(["object", "array", "string", "number", "boolean", "null"]
                .into_iter()
                .map(rf)
                .collect()),
            &["object", "array", "string", "number", "boolean", "null"],
        ),
        "object" => (
            seq(vec![
                lit("{"),
                space(),
                opt(padded(seq(vec![
                    rf("string"),
                    lit(":"),
                    space(),
                    rf("value"),
                    star(group(seq(vec![
                        lit(","),
                        space(),
                        rf("string"),
                        lit(":"),
                        space(),
                        rf("value"),
                    ]))),
                ]))),
                lit("}"),
                space(),
            ]),
            &["string", "value"],
        ),
        "array" => (
            seq(vec![
                lit("["),
                space(),
                opt(padded(seq(vec![
                    rf("value"),
                    star(group(seq(vec![lit(","), space(), rf("value")]))),
                ]))),
                lit("]"),
                space(),
            ]),
            &["value"],
        ),
        "uuid" => {
            let mut items = vec![lit("\"")];
            for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
                if i > 0 {
                    items.push(lit("-"));
                }
                items.push(rep(hex(), n, Some(n)));
            }
            items.push(lit("\""));
            items.push(space());
            (seq(items), &[])
        }
        "char" => (char_rule(), &[]),
        "string" => (
            seq(vec![lit("\""), star(rf("char")), lit("\""), space()]),
            &["char"],
        ),
        "null" => (seq(vec![lit("null"), space()]), &[]),
        _ => return None,
    };
    Some(Builtin { body, deps })
}

/// `[^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`: one character of a
/// JSON string, raw or escaped.
fn char_rule() -> Expr {
    alt(vec![
        not_class(vec![
            ClassItem::Char('"'),
            ClassItem::Char('\\'),
            ClassItem::Char('\x7f'),
            ClassItem::Range('\0', '\x1f'),
        ]),
        seq(vec![
            one_digit('\\'),
            group(alt(vec![
                chars("\"\\bfnrt"),
                seq(vec![lit("u"), rep(hex(), 4, Some(4))]),
            ])),
        ]),
    ])
}

/// One of llama.cpp's string format rules by name.
pub(super) fn string_format(name: &str) -> Option<Builtin> {
    let d = |lo, hi| digit_range(lo, hi);
    let digits = || Expr::range('0', '9');
    let (body, deps): (Expr, &'static [&'static str]) = match name {
        "date" => (
            seq(vec![
                rep(digits(), 4, Some(4)),
                lit("-"),
                padded(alt(vec![
                    seq(vec![lit("0"), d('1', '9')]),
                    seq(vec![lit("1"), d('0', '2')]),
                ])),
                lit("-"),
                padded(alt(vec![
                    seq(vec![lit("0"), d('1', '9')]),
                    seq(vec![d('1', '2'), digits()]),
                    seq(vec![lit("3"), d('0', '1')]),
                ])),
            ]),
            &[],
        ),
        "time" => (time_rule(), &[]),
        "date-time" => (
            seq(vec![rf("date"), lit("T"), rf("time")]),
            &["date", "time"],
        ),
        "date-string" => (quoted("date"), &["date"]),
        "time-string" => (quoted("time"), &["time"]),
        "date-time-string" => (quoted("date-time"), &["date-time"]),
        _ => return None,
    };
    Some(Builtin { body, deps })
}

/// `([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | … )`
fn time_rule() -> Expr {
    let digits = || Expr::range('0', '9');
    let hour = || {
        alt(vec![
            seq(vec![chars("01"), digits()]),
            seq(vec![lit("2"), Expr::range('0', '3')]),
        ])
    };
    let sixty = || vec![Expr::range('0', '5'), digits()];
    let mut items = vec![group(hour()), lit(":")];
    items.extend(sixty());
    items.push(lit(":"));
    items.extend(sixty());
    items.push(opt(padded(seq(vec![lit("."), rep(digits(), 3, Some(3))]))));
    let mut offset = vec![
        padded(alt(vec![lit("+"), lit("-")])),
        padded(hour()),
        lit(":"),
    ];
    offset.extend(sixty());
    items.push(padded(alt(vec![lit("Z"), seq(offset)])));
    seq(items)
}

/// `"\"" inner "\"" space`
fn quoted(inner: &str) -> Expr {
    seq(vec![lit("\""), rf(inner), lit("\""), space()])
}

/// `[c]` for a single character.
fn one_digit(c: char) -> Expr {
    class(vec![ClassItem::Char(c)])
}
