//! The OpenAI-compatible HTTP surface (`/v1/chat/completions`, `/v1/models`, `/health`,
//! `/metrics`), with OpenAI's Responses API (`/v1/responses`) and Anthropic's Messages API
//! (`/v1/messages`) mapped onto the same path:
//! it wires a dialect to an engine and nothing more, so every behaviour it serves is
//! testable one layer down.
//!
//! One request takes one path, streamed or not:
//!
//! 1. the body is parsed and checked ([`checks`]), sampling settings mapped
//!    ([`sampling`]);
//! 2. the chosen dialect prepares the prompt, constraint, stops and parser
//!    ([`model::ServedModel::prepare`]), with the `response_format` schema as the
//!    constraint when the dialect leaves the answer free, on a blocking thread and within
//!    a time limit;
//! 3. a permit is taken ([`admission`]) and the blocking engine runs on its own thread,
//!    feeding each piece to the parser there and sending the events over a channel
//!    ([`generate`]);
//! 4. the events are folded into one message ([`respond`]) or written as SSE deltas
//!    ([`stream`]). Both read the same events from the same parser, so a streamed answer
//!    reassembles to the non-streamed one.
//!
//! A client that goes away drops the receiving end of the channel; the engine's next piece
//! finds it closed and answers [`toolbridge_engine::Flow::Stop`], so no token is decoded
//! for nobody. Every failure is answered as an OpenAI error object ([`error`]); every
//! answer is counted ([`metrics`]) and logged in one line.

pub mod admission;
pub mod answer;
pub mod checks;
pub mod error;
pub mod generate;
mod inspect;
mod items_answer;
mod left_out;
mod mapping;
mod messages;
pub mod metrics;
pub mod model;
pub mod modelfile;
pub mod repeats;
pub mod respond;
mod responses;
pub mod routes;
pub mod sampling;
pub mod server;
pub mod stream;

pub use error::Failure;
pub use generate::Budget;
pub use model::{choose_dialect, ServedModel, SetupError, TemplateOverride};
pub use modelfile::{ModelfileDefaults, ParameterError};
pub use server::{Server, ServerOptions};
