//! The OpenAI-compatible HTTP surface (`/v1/chat/completions`, `/v1/models`, `/health`,
//! `/metrics`), with OpenAI's Responses API (`/v1/responses`) and Anthropic's Messages API
//! (`/v1/messages`) mapped onto the same path:
//! it wires a dialect to an engine and nothing more, so every behaviour it serves is
//! testable one layer down.
//!
//! One request takes one path, streamed or not, whatever its API ([`pipeline`]); the
//! routes ([`routes`]) only say which handler answers which path:
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
//! 4. the events are folded into one answer or written as server-sent events
//!    ([`sse`]), each API with its own writer (`chat`, `responses`, `messages`). Both read
//!    the same events from the same parser, so a streamed answer reassembles to the
//!    non-streamed one.
//!
//! A client that goes away drops the receiving end of the channel; the engine's next piece
//! finds it closed and answers [`toolbridge_engine::Flow::Stop`], so no token is decoded
//! for nobody. Every failure is answered as an OpenAI error object ([`error`]); every
//! answer is counted ([`metrics`]) and logged in one line.

mod admission;
mod answer;
mod auth;
mod chat;
mod checks;
mod error;
mod generate;
mod inspect;
mod items_answer;
mod left_out;
mod mapping;
mod messages;
mod metrics;
mod model;
mod modelfile;
mod pipeline;
mod repeats;
mod responses;
mod routes;
mod sampling;
mod server;
mod server_error;
mod sse;
mod state;
mod status;

pub use error::Failure;
pub use generate::{Budget, UNSEEN_AFTER_CALL};
pub use model::{choose_dialect, ServedModel, TemplateOverride};
pub use modelfile::ModelfileDefaults;
pub use server::Server;
pub use server_error::{ServerError, ServerErrorKind};
pub use state::ServerOptions;
