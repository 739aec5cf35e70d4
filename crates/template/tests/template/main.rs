//! The template crate's integration tests, one binary of modules (as ripgrep's are): one
//! link instead of thirteen, and one place for what the suites share (`common`, `bounded`).

#[macro_use]
mod bounded;
mod common;

mod gotmpl_goldens;
mod gotmpl_hostile;
mod gotmpl_ollama_testdata;
mod gotmpl_render;
mod gotmpl_seeds;
mod hostile;
mod jinja_goldens;
mod limits_corpus;
mod modelfile_source;
mod ollama_store;
mod probe;
mod render_goldens;
mod source;
