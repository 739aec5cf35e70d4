#!/usr/bin/env bash
# Installs what the llama.cpp build needs and the browser the /inspect page is tested in,
# on Debian or Ubuntu, when it is missing. Root runs apt-get directly, others through sudo.
# Elsewhere it says what to install and fails, rather than letting the build fail later
# with a less helpful message.
#
# Each check looks for exactly what is used, never for something that merely resembles it:
# a fresh machine ships `libclang-cpp14` (/usr/lib/llvm-14/lib/libclang-cpp.so.14, clang's
# C++ interface), which bindgen cannot load; bindgen needs the C library `libclang`
# (libclang.so / libclang-N.so, or its versioned names) and clang's own headers
# (stddef.h under lib/clang/N/include), which `libclang-dev` brings together.
set -euo pipefail

# The library bindgen (through clang-sys) loads: the names clang-sys searches for, in the
# directories it searches, or where LIBCLANG_PATH points.
has_libclang() {
    local dirs=(/usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib)
    [[ -n ${LIBCLANG_PATH:-} ]] && dirs=("$LIBCLANG_PATH" "${dirs[@]}")
    local dir file
    for dir in "${dirs[@]}"; do
        for file in "$dir"/libclang.so "$dir"/libclang.so.[0-9]* "$dir"/libclang-[0-9]*.so "$dir"/libclang-[0-9]*.so.[0-9]*; do
            [[ -e $file ]] && return 0
        done
    done
    return 1
}

# clang's builtin headers, which bindgen's parse of llama.cpp's headers includes.
has_clang_headers() {
    compgen -G '/usr/lib/llvm-*/lib/clang/*/include/stddef.h' >/dev/null
}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || missing+=(g++)
{ has_libclang && has_clang_headers; } || missing+=(libclang-dev)
# The OpenAI SDK and llama-server tests make virtual environments.
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# Debian's chromium: the /inspect page's browser test (crates/cli/tests/inspect_page.rs).
command -v chromium >/dev/null || missing+=(chromium)
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "system-packages: install ${missing[*]} (libclang-dev: clang's C library and headers, which bindgen loads), then run again" >&2
    exit 1
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    SUDO="sudo"
fi
echo "system-packages: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
