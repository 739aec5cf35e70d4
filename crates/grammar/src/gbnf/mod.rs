//! GBNF, llama.cpp's grammar notation: printing the tree for llama.cpp servers.

pub mod print;

pub use print::print;
