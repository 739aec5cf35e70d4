#!/usr/bin/env bash
# The test command: fetch and verify the default model (the template tests read its GGUF
# header), then run every test of the workspace with output shown, so the conformance
# tests' scores (`jinja goldens: …`) appear in the log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/fetch-model.sh
cargo test --workspace -- --nocapture
