//! Chat templates rendered exactly as their makers render them.
