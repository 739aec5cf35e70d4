#!/usr/bin/env bash
# Coverage-guided fuzzing of the targets in crates/fuzz with AFL++, through afl.rs's
# `cargo afl` on stable Rust. Not part of CI: run it, read its table, and turn every crash
# into a file under crates/fuzz/regressions/<target>/ (replayed by `cargo test -p
# toolbridge-fuzz`) once its bug is fixed.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 180 s, every target)
#
# It installs cargo-afl and builds AFL++ if missing, writes each target's seed corpus from
# ../shared (fuzz-seeds), builds the AFL binaries of fuzz/ (release, with overflow checks
# and debug assertions), runs each target alone for the set time and prints executions,
# paths found, crashes and hangs from AFL's fuzzer_stats. Runs and crashes stay under
# $FUZZ_DIR (default: $CARGO_TARGET_DIR/afl, or target/afl).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-180}
shift || true
all_targets=(stream_parser gbnf schema jinja go_template gguf request)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
fuzz_dir=${FUZZ_DIR:-${CARGO_TARGET_DIR:-$root/target}/afl}
model=$root/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

if ! cargo afl --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-afl" >&2
    cargo install --locked cargo-afl
fi
# Builds AFL++ for this rustc once; it refuses (and we go on) when that is done.
cargo afl config --build >/dev/null 2>&1 || true

echo "fuzz: writing seed corpora" >&2
rm -rf "$fuzz_dir/seeds"
(cd "$root" && cargo run -q -p toolbridge-fuzz --bin fuzz-seeds -- "$fuzz_dir/seeds" \
    $([[ -f $model ]] && echo "$model")) >&2

echo "fuzz: building the AFL binaries" >&2
(cd "$root/fuzz" && CARGO_TARGET_DIR=$fuzz_dir cargo afl build --release -q)

# Containers rarely let AFL tune the CPU governor, pin cores or read core_pattern.
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1

stat() { sed -n "s/^$1 *: //p" "$2"; }
mkdir -p "$fuzz_dir/runs"
summary=()
for target in "${targets[@]}"; do
    out=$fuzz_dir/runs/$target
    rm -rf "$out"
    echo "fuzz: $target for ${seconds}s" >&2
    # -t: 5 s per input (the production render budgets are seconds), seeds that time out
    # skipped; -m: 2 GiB of address space, far above every bound the code under test keeps.
    cargo afl fuzz -i "$fuzz_dir/seeds/$target" -o "$out" -V "$seconds" -t 5000+ -m 2048 \
        -- "$fuzz_dir/release/$target" >"$out.log" 2>&1 || {
        echo "fuzz: afl-fuzz failed on $target, see $out.log" >&2
        tail -20 "$out.log" >&2
        exit 1
    }
    stats=$out/default/fuzzer_stats
    summary+=("$(printf '%-14s %12s %9s %7s %8s %6s' "$target" "$(stat execs_done "$stats")" \
        "$(stat execs_per_sec "$stats")" "$(stat corpus_count "$stats")" \
        "$(stat saved_crashes "$stats")" "$(stat saved_hangs "$stats")")")
done

printf '%-14s %12s %9s %7s %8s %6s\n' target executions execs/s corpus crashes hangs
printf '%s\n' "${summary[@]}"
echo "crash inputs: $fuzz_dir/runs/<target>/default/crashes/"
