#!/usr/bin/env bash
# The load and fault test: `toolbridge serve --parallel 2` on the default model, then
# `toolbridge bench load` against it for SECONDS (default 60) with 8 clients, a third of
# the streams hung up after their first chunk, and a prompt far over the context every few
# seconds; then SIGTERM, which must let the server exit cleanly. Not part of CI (it runs for
# minutes on 2 cores); run it and report its table.
#
# Usage: scripts/load-test.sh [SECONDS] [PORT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
port="${2:-8093}"

scripts/system-packages.sh
scripts/fetch-model.sh
cargo build --release -p toolbridge-cli --features llama
binary=target/release/toolbridge

"$binary" serve --parallel 2 --port "$port" --ctx-size 8192 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 1
done
"$binary" bench load --url "http://127.0.0.1:$port" --seconds "$seconds" --pid "$server"
kill -TERM "$server"
wait "$server"
echo "the server exited cleanly after SIGTERM"
