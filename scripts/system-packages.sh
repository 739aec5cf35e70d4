#!/usr/bin/env bash
# Installs the system packages the llama.cpp build needs (cmake, libclang-dev) and the
# browser the /inspect page is tested in (chromium), on Debian
# or Ubuntu, when they are missing. Root runs apt-get directly, others through sudo.
# Elsewhere it says what to install and fails, rather than letting the build fail later
# with a less helpful message.
set -euo pipefail

missing=()
command -v cmake >/dev/null || missing+=(cmake)
{ dpkg -s libclang-dev >/dev/null 2>&1 || ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; } || missing+=(libclang-dev)
# Debian's chromium: the /inspect page's browser test (crates/cli/tests/inspect_page.rs).
command -v chromium >/dev/null || missing+=(chromium)
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "system-packages: install ${missing[*]} (libclang-dev: clang's development files), then run again" >&2
    exit 1
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    SUDO="sudo"
fi
echo "system-packages: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
