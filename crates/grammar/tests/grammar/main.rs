//! The grammar crate's tests, one binary: each module checks one conversion or printer
//! against data nobody here wrote (llama.cpp's GBNF fixtures and schema converter,
//! CPython's `repr`, JSON Schema's verdicts) or against hostile schemas.

mod gbnf_parse;
mod hostile_schemas;
mod maskbench_sample;
mod pyrepr;
mod renderings;
mod schema2gbnf;
