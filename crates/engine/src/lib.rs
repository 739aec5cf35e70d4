//! Engines turn a prompt and a constraint into a stream of text: the embedded llama.cpp
//! (behind the `llama` feature, so the core crates build and test in seconds) and remote
//! servers over HTTP. It knows chat types and grammars, never dialects.
