#!/usr/bin/env bash
# The README's run command: sets up a fresh machine and serves the default model.
#
# Installs the system packages the llama.cpp build needs, builds the release binary with
# the embedded engine, and starts `toolbridge serve`, which fetches and verifies the
# default model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M) on first use and prints the address
# and a curl example. Arguments go to `toolbridge serve` (`--model FILE.gguf`, `--port N`…).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/system-packages.sh
cargo build --release -p toolbridge-cli --features llama
exec "${CARGO_TARGET_DIR:-target}/release/toolbridge" serve "$@"
