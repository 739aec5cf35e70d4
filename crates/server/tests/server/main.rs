//! The server's tests, one binary: each module tests one API or guard through the router,
//! over the shared harness in `common` (a scripted engine and request helpers).

mod common;

mod chat;
mod faults;
mod guards;
mod hostile_requests;
mod inspect;
mod messages;
mod metrics;
mod ollama;
mod responses;
