#!/usr/bin/env bash
# A toolbridge to copy to other machines: target/dist/toolbridge/ holds the binary and
# llama.cpp's shared libraries, its CPU backend once per CPU generation (SSE4.2, AVX2,
# AVX-512, AVX-VNNI, AMX …: GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS, as llama.cpp's own
# releases are built). At start llama.cpp scores each variant against the CPU and loads
# the best, and `toolbridge serve` logs which (`llama.cpp kernels=CPU : … AVX2 = 1 …`).
#
# The Rust code is built for x86-64-v2 (any x86-64 CPU since 2009), overriding the
# `target-cpu=native` of .cargo/config.toml that every local build uses. The binary
# finds its libraries beside itself (rpath $ORIGIN). Builds every CPU variant: about
# 30 minutes on 2 cores, so it is not part of the tests.
#
#   scripts/build-dist.sh            # then: target/dist/toolbridge/toolbridge serve
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/system-packages.sh
case "$(uname -m)" in
    x86_64) cpu="x86-64-v2" ;;
    aarch64) cpu="generic" ;;
    *) echo "build-dist: no portable target is set for $(uname -m)" >&2; exit 1 ;;
esac
build=target/dist-build
RUSTFLAGS="-C target-cpu=$cpu -C link-arg=-Wl,-rpath,\$ORIGIN" \
    cargo build --release -p toolbridge-cli --features cpu-variants --target-dir "$build"

out=target/dist/toolbridge
rm -rf "$out"
mkdir -p "$out"
cp "$build/release/toolbridge" "$out/"
# llama.cpp's libraries (libllama, libggml, libggml-base, with their soname links) and
# every CPU variant, all where llama.cpp's build put them.
libllama=$(ls -t "$build"/release/build/llama-cpp-sys-2-*/out/build/bin/libllama.so 2>/dev/null | head -1)
if [[ -z "$libllama" ]]; then
    echo "build-dist: llama.cpp's libraries were not built (looked under $build/release/build)" >&2
    exit 1
fi
cp -P "$(dirname "$libllama")"/lib*.so* "$out/"
variants=$(find "$out" -name 'libggml-cpu-*.so' | wc -l)
if [[ "$variants" -eq 0 ]]; then
    echo "build-dist: no CPU variants were built (looked beside $libllama)" >&2
    exit 1
fi
if ldd "$out/toolbridge" | grep -q 'not found'; then
    echo "build-dist: the binary does not find its libraries:" >&2
    ldd "$out/toolbridge" >&2
    exit 1
fi
echo "build-dist: $out ($variants CPU variants)"
ls -l "$out"
