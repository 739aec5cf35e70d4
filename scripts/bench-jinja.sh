#!/usr/bin/env bash
# Compile and render time of our Jinja renderer next to Python jinja2 3.1.6, on the same
# rows (every `ok` row of ../shared/corpus/goldens/jinja.jsonl) in the same run.
#
#   scripts/bench-jinja.sh
#
# Rust: `cargo bench -p toolbridge-template --bench render -- --summary` (release build,
# TOOLBRIDGE_BENCH_REPS repetitions, default 30). Python: scripts/bench_jinja_python.py
# (jinja2 configured as transformers configures it; extra arguments are passed to it).
# Prints both summaries and `speedup = python / ours` for compile and render.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if ! python3 -c 'import jinja2, sys; sys.exit(jinja2.__version__ != "3.1.6")' 2>/dev/null; then
    echo "installing jinja2==3.1.6" >&2
    python3 -m pip install --quiet jinja2==3.1.6
fi

echo "== ours (toolbridge-template, release) ==" >&2
ours_out="$(cargo bench --quiet -p toolbridge-template --bench render -- --summary)"
printf '%s\n' "$ours_out"

echo "== python jinja2 ==" >&2
python_out="$(python3 scripts/bench_jinja_python.py "$@")"
printf '%s\n' "$python_out"

OURS_JSON="$(printf '%s\n' "$ours_out" | grep '^{"impl":"toolbridge"' | tail -n 1)" \
PYTHON_JSON="$(printf '%s\n' "$python_out" | grep '^{"impl": "python-jinja2"' | tail -n 1)" \
python3 - <<'EOF'
import json, os

ours = json.loads(os.environ["OURS_JSON"])
py = json.loads(os.environ["PYTHON_JSON"])
if (ours["rows"], ours["templates"]) != (py["rows"], py["templates"]):
    raise SystemExit(f"row sets differ: ours {ours['rows']}/{ours['templates']}, python {py['rows']}/{py['templates']}")

def line(what, key, goal):
    speedup = py[key] / ours[key]
    best = py[key + "_min"] / ours[key + "_min"]
    verdict = "meets" if speedup >= goal else "BELOW"
    print(f"{what} speedup = python/ours = {py[key]:.2f} / {ours[key]:.2f} µs = {speedup:.2f}x "
          f"(fastest reps: {best:.2f}x; goal {goal}x: {verdict})")

print(f"== {ours['rows']} rows, {ours['templates']} templates ==")
line("render ", "render_us", 4)
line("compile", "compile_us", 20)
print(json.dumps({
    "rows": ours["rows"], "templates": ours["templates"],
    "ours_compile_us": ours["compile_us"], "python_compile_us": py["compile_us"],
    "ours_render_us": ours["render_us"], "python_render_us": py["render_us"],
    "compile_speedup": round(py["compile_us"] / ours["compile_us"], 2),
    "render_speedup": round(py["render_us"] / ours["render_us"], 2),
}))
EOF
