//! GBNF, llama.cpp's grammar notation: printing the tree for llama.cpp servers, and
//! reading the GBNF users send into the same tree.

pub mod parse;
pub mod print;

pub use parse::parse;
pub use print::print;
