//! The OpenAI-compatible HTTP surface (`/v1/chat/completions`, `/v1/models`, `/health`):
//! it wires a dialect to an engine and nothing more, so every behaviour it serves is
//! testable one layer down.
