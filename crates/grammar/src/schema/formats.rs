//! String formats. llama.cpp's `date`, `time`, `date-time` and `uuid` rules come from
//! [`super::builtins`]; this module adds `email`, `ipv4`, `ipv6`, `hostname` and `uri`,
//! and the exact `date` (days per month, leap years), each a subset of what format
//! validators (Python's `jsonschema`, ajv) accept, so that enforcing them is sound.

use super::converter::Converter;
use super::exprs::{
    alt, chars, digit_range, group, hex, lit, opt, plus, rep, rf, seq, space, star,
};
use crate::tree::{ClassItem, Expr};

impl Converter<'_> {
    /// The rule for a string of `format`, added as `rule_name` the way llama.cpp adds
    /// its format rules; `None` for a format not known here.
    pub(super) fn format_rule(&mut self, format: &str, rule_name: &str) -> Option<String> {
        if is_uuid_format(format) {
            let name = if rule_name == "root" { "root" } else { format };
            let uuid = super::builtins::primitive("uuid")?;
            return Some(self.add_primitive(name, uuid));
        }
        if matches!(format, "date" | "time" | "date-time") {
            if !self.compat() && !self.rules.contains_key("date") {
                self.add_rule("date", exact_date());
            }
            let string_rule = format!("{format}-string");
            let builtin = super::builtins::string_format(&string_rule)?;
            let added = self.add_primitive(&string_rule, builtin);
            return Some(self.add_rule(rule_name, rf(added)));
        }
        let body = match format {
            "email" => email(),
            "ipv4" => ipv4(),
            "ipv6" => ipv6(),
            "hostname" => hostname(),
            "uri" => uri(),
            _ => return None,
        };
        let inner = self.add_rule(&format!("format-{format}"), body);
        let quoted = seq(vec![lit("\""), rf(inner.clone()), lit("\""), space()]);
        let string_rule = self.add_rule(&format!("{inner}-string"), quoted);
        Some(self.add_rule(rule_name, rf(string_rule)))
    }
}

/// The lengths (in characters) of the strings the rule for `format` admits: the
/// fewest, and the most if bounded.
pub(super) fn lengths(format: &str) -> Option<(u64, Option<u64>)> {
    Some(match format {
        "date" => (10, Some(10)),
        "time" => (9, Some(18)),
        "date-time" => (20, Some(29)),
        "ipv4" => (7, Some(15)),
        "ipv6" => (2, Some(45)),
        "email" => (5, None),
        "hostname" => (1, Some(251)),
        "uri" => (4, None),
        f if is_uuid_format(f) => (36, Some(36)),
        _ => return None,
    })
}

pub(super) fn is_uuid_format(format: &str) -> bool {
    match format.strip_prefix("uuid") {
        Some("") => true,
        Some(rest) => matches!(rest, "1" | "2" | "3" | "4" | "5"),
        None => false,
    }
}

fn digit() -> Expr {
    Expr::range('0', '9')
}

fn class(items: &[(char, char)]) -> Expr {
    super::exprs::class(
        items
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    ClassItem::Char(lo)
                } else {
                    ClassItem::Range(lo, hi)
                }
            })
            .collect(),
    )
}

/// `YYYY-MM-DD` with the right number of days in each month, 29 February in leap years
/// only, and no year 0000. Literals are cut where the branches part (`"-" "02"`, not
/// `"-02-29"`): llguidance lexes greedily and cannot take back a longer literal.
fn exact_date() -> Expr {
    let year = alt(vec![
        seq(vec![digit_range('1', '9'), rep(digit(), 3, Some(3))]),
        seq(vec![
            lit("0"),
            digit_range('1', '9'),
            rep(digit(), 2, Some(2)),
        ]),
        seq(vec![lit("00"), digit_range('1', '9'), digit()]),
        seq(vec![lit("000"), digit_range('1', '9')]),
    ]);
    let day_from_01 = || seq(vec![lit("0"), digit_range('1', '9')]);
    let long = seq(vec![
        group(alt(vec![
            seq(vec![lit("0"), chars("13578")]),
            seq(vec![lit("1"), chars("02")]),
        ])),
        lit("-"),
        group(alt(vec![
            day_from_01(),
            seq(vec![chars("12"), digit()]),
            seq(vec![lit("3"), chars("01")]),
        ])),
    ]);
    let short = seq(vec![
        group(alt(vec![seq(vec![lit("0"), chars("469")]), lit("11")])),
        lit("-"),
        group(alt(vec![
            day_from_01(),
            seq(vec![chars("12"), digit()]),
            lit("30"),
        ])),
    ]);
    let february = seq(vec![
        lit("02"),
        lit("-"),
        group(alt(vec![
            day_from_01(),
            seq(vec![lit("1"), digit()]),
            seq(vec![lit("2"), digit_range('0', '8')]),
        ])),
    ]);
    // Two digits divisible by four, other than 00.
    let by_four = || {
        alt(vec![
            seq(vec![lit("0"), chars("48")]),
            seq(vec![chars("2468"), chars("048")]),
            seq(vec![chars("13579"), chars("26")]),
        ])
    };
    let leap_year = alt(vec![
        seq(vec![rep(digit(), 2, Some(2)), group(by_four())]),
        seq(vec![group(by_four()), lit("00")]),
    ]);
    alt(vec![
        seq(vec![
            group(year),
            lit("-"),
            group(alt(vec![long, short, february])),
        ]),
        seq(vec![
            group(leap_year),
            lit("-"),
            lit("02"),
            lit("-"),
            lit("29"),
        ]),
    ])
}

/// `local@domain.tld`: dot-atoms of the characters RFC 5322 allows unquoted, and at
/// least two domain labels (ajv's `email`; Python's `jsonschema` only asks for an `@`).
fn email() -> Expr {
    let atom = || {
        plus(chars(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-",
        ))
    };
    let local = seq(vec![atom(), star(group(seq(vec![lit("."), atom()])))]);
    seq(vec![
        local,
        lit("@"),
        label(),
        plus(group(seq(vec![lit("."), label()]))),
    ])
}

/// A DNS label: letters, digits and inner hyphens, at most 63 characters.
fn label() -> Expr {
    label_of(alnum(), 61)
}

fn label_of(first: Expr, middle: u32) -> Expr {
    seq(vec![
        first,
        opt(group(seq(vec![
            rep(
                class(&[('0', '9'), ('A', 'Z'), ('a', 'z'), ('-', '-')]),
                0,
                Some(middle),
            ),
            alnum(),
        ]))),
    ])
}

fn alnum() -> Expr {
    class(&[('0', '9'), ('A', 'Z'), ('a', 'z')])
}

fn dec_octet() -> Expr {
    alt(vec![
        seq(vec![lit("25"), digit_range('0', '5')]),
        seq(vec![lit("2"), digit_range('0', '4'), digit()]),
        seq(vec![lit("1"), rep(digit(), 2, Some(2))]),
        seq(vec![digit_range('1', '9'), digit()]),
        digit(),
    ])
}

/// Dotted quad without leading zeros.
fn ipv4() -> Expr {
    let octet = || group(dec_octet());
    seq(vec![
        octet(),
        rep(group(seq(vec![lit("."), octet()])), 3, Some(3)),
    ])
}

/// RFC 3986's `IPv6address`, `::` compression and a trailing IPv4 included.
fn ipv6() -> Expr {
    let h16 = || rep(hex(), 1, Some(4));
    let h16_colon = |n: u32| rep(group(seq(vec![h16(), lit(":")])), n, Some(n));
    let ls32 = || group(alt(vec![seq(vec![h16(), lit(":"), h16()]), ipv4()]));
    // Up to `n + 1` groups before a `::`.
    let head = |n: u32| {
        opt(group(seq(vec![
            h16(),
            rep(group(seq(vec![lit(":"), h16()])), 0, Some(n)),
        ])))
    };
    let mut forms = vec![
        seq(vec![h16_colon(6), ls32()]),
        seq(vec![lit("::"), h16_colon(5), ls32()]),
        seq(vec![opt(h16()), lit("::"), h16_colon(4), ls32()]),
    ];
    for (n, tail) in [
        (1, vec![h16_colon(3), ls32()]),
        (2, vec![h16_colon(2), ls32()]),
        (3, vec![h16(), lit(":"), ls32()]),
        (4, vec![ls32()]),
        (5, vec![h16()]),
        (6, vec![]),
    ] {
        let mut form = vec![head(n), lit("::")];
        form.extend(tail);
        forms.push(seq(form));
    }
    alt(forms)
}

/// At most four labels (so at most 251 characters), the last starting with a letter.
fn hostname() -> Expr {
    let inner = label_of(alnum(), 60);
    let last = label_of(class(&[('A', 'Z'), ('a', 'z')]), 60);
    seq(vec![
        rep(group(seq(vec![inner, lit(".")])), 0, Some(3)),
        last,
    ])
}

/// `scheme://host[:port][/path][?query][#fragment]` with only unreserved characters,
/// sub-delimiters, `:` and `@` in the path, query and fragment (no percent escapes).
fn uri() -> Expr {
    let scheme = seq(vec![
        class(&[('A', 'Z'), ('a', 'z')]),
        star(class(&[
            ('0', '9'),
            ('A', 'Z'),
            ('a', 'z'),
            ('+', '+'),
            ('-', '.'),
        ])),
    ]);
    let host = seq(vec![
        label_of(alnum(), 61),
        star(group(seq(vec![lit("."), label_of(alnum(), 61)]))),
    ]);
    let pchar = || {
        class(&[
            ('0', '9'),
            ('A', 'Z'),
            ('a', 'z'),
            ('-', '.'),
            ('_', '_'),
            ('~', '~'),
            ('!', '!'),
            ('$', '$'),
            ('&', ','),
            (';', ';'),
            ('=', '='),
            (':', ':'),
            ('@', '@'),
        ])
    };
    let query_char = || alt(vec![pchar(), chars("/?")]);
    seq(vec![
        scheme,
        lit("://"),
        host,
        opt(group(seq(vec![lit(":"), rep(digit(), 1, Some(5))]))),
        star(group(seq(vec![lit("/"), star(pchar())]))),
        opt(group(seq(vec![lit("?"), star(group(query_char()))]))),
        opt(group(seq(vec![lit("#"), star(group(query_char()))]))),
    ])
}
