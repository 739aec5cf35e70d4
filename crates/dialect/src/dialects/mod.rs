//! One file per family of models: its call syntax and the stream parser that reads it. A
//! family imports no other family: what several share is in [`crate::toolkit`].

pub mod cohere;
pub mod deepseek;
pub mod firefunction;
pub mod functionary;
pub mod gemma_calls;
pub mod gigachat;
pub mod glm4;
pub mod gpt_oss;
pub mod hermes_dialect;
pub mod json_list;
pub mod kimi;
pub mod learned;
pub mod lfm2;
pub mod llama3;
pub mod minicpm3;
pub mod minimax_m3;
pub mod mistral;
pub mod olmo3;
pub mod react;
pub mod solar_open;
pub mod styles;
pub mod xml_calls;
