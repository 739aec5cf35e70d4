//! The grammar crate's two readers of user input. GBNF a user sends: when it parses,
//! printing it and parsing the print gives the same tree, and printing that again the same
//! text (what llama.cpp servers are sent is what the user meant). A JSON schema, in each
//! conversion mode: no panic, and a grammar it compiles to prints within a size bound, as
//! GBNF our own parser reads back.

use serde_json::Value;
use toolbridge_grammar::gbnf;
use toolbridge_grammar::lark;
use toolbridge_grammar::schema::{compile, Options};

/// Printed grammars above this size count as unbounded (as in the hostile-schema tests).
const MAX_PRINTED: usize = 8 << 20;

pub fn gbnf(data: &[u8]) {
    let Ok(first) = gbnf::parse::parse_bytes(data, "root") else {
        return;
    };
    let printed = gbnf::print(&first).unwrap_or_else(|e| panic!("a parsed grammar: {e}"));
    let second = gbnf::parse(&printed)
        .unwrap_or_else(|e| panic!("the print of a parsed grammar: {e}\n{printed}"));
    assert_eq!(
        first, second,
        "print then parse changed the tree:\n{printed}"
    );
    let reprinted = gbnf::print(&second).expect("printed once");
    assert_eq!(printed, reprinted, "printing is not stable");
    lark::print(&first);
}

/// Byte 0 picks the mode (llama.cpp, exact, strict, open); the rest is the schema.
pub fn schema(data: &[u8]) {
    let Some((&mode, json)) = data.split_first() else {
        return;
    };
    let Ok(schema) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let Ok(compiled) = compile(&schema, &mode_options(mode)) else {
        return;
    };
    let grammar = &compiled.grammar;
    if let Ok(printed) = gbnf::print(grammar) {
        assert!(printed.len() < MAX_PRINTED, "{} bytes", printed.len());
        if let Err(error) = gbnf::parse::parse_with_root(&printed, &grammar.root) {
            panic!("the grammar of a schema does not parse back: {error}\n{printed}");
        }
    }
    lark::print(grammar);
}

fn mode_options(mode: u8) -> Options {
    match mode % 4 {
        0 => Options::default(),
        1 => Options::exact(),
        2 => Options::strict(),
        _ => Options {
            extra_properties_by_default: true,
            openapi_nullable: true,
            ..Options::exact()
        },
    }
}
