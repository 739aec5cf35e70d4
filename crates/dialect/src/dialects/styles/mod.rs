//! Prompt styles: one file per way seed 000 tells a model whose template knows nothing of
//! tools about them, its prompt text and its choice of call syntax, joined into a dialect
//! by [`crate::toolkit::prompt_style::PromptStyle`].

pub mod functionary_v2;
pub mod hermes_2_pro;
pub mod long;
pub mod short;
pub mod thoughtful_steps;
