#!/usr/bin/env bash
# The test command: fetch and verify the default model, then run every test of the
# workspace with output shown, so the conformance tests' scores (`jinja goldens: …`)
# appear in the log. The embedded llama.cpp engine is built in (feature `llama`), so the
# tests against the real model run too: the engine's, the end-to-end test through the
# official OpenAI Python SDK (it installs `openai` from PyPI into a venv under target/), and
# the same checks through a real llama.cpp server (`scripts/llama-server.sh` installs
# llama.cpp's own server, prebuilt in the `xllamacpp` wheel, into another venv there).
# For the fast core tests alone: `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/system-packages.sh
scripts/fetch-model.sh
cargo test --workspace --features toolbridge-cli/llama,toolbridge-engine/llama -- --nocapture
