#!/usr/bin/env python3
"""Compile and render time of Python jinja2 over the corpus's Jinja goldens.

The Python side of `scripts/bench-jinja.sh`, measuring what
`crates/template/benches/render.rs` measures on the same rows: every `ok` row of
`goldens/jinja.jsonl`, with jinja2 configured as `transformers.apply_chat_template`
configures it.

- compile: `env.from_string(source)` once per distinct template per repetition
  (`from_string` bypasses jinja2's template cache; checked below);
- render: `template.render(**context)` once per row per repetition, templates compiled
  beforehand.

Prints µs per compile (mean over templates) and µs per render (mean over rows), the
median and the fastest of the repetitions, then one JSON line with the numbers.

Usage: bench_jinja_python.py [--corpus DIR] [--reps N] [--compile-reps N] [--per-row FILE]
(the corpus defaults to $TOOLBRIDGE_CORPUS, else ../shared/corpus beside the repository)
"""

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

FIXED_NOW = datetime(2024, 7, 26, 10, 30, 0)


class GenerationTracker(Extension):
    """`{% generation %}…{% endgeneration %}`: renders its body, as transformers' does."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        call = self.call_method("_render_generation")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _render_generation(self, context, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def strftime_now(format):
    return FIXED_NOW.strftime(format)


def make_environment():
    """The environment of transformers' `_compile_jinja_template`."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTracker, loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def default_corpus():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "shared", "corpus"))


def load_corpus(corpus):
    goldens = os.path.join(corpus, "goldens", "jinja.jsonl")
    if not os.path.isfile(goldens):
        sys.exit(f"benchmark corpus not found: looked for {goldens}")
    templates = {}  # path -> source, in order of first appearance
    contexts = {}
    rows = []
    with open(goldens, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("ok") is not True:
                continue
            path, name = row["template"], row["context"]
            if path not in templates:
                with open(os.path.join(corpus, path), encoding="utf-8") as f:
                    templates[path] = f.read()
            if name not in contexts:
                with open(os.path.join(corpus, "contexts", name + ".json"), encoding="utf-8") as f:
                    contexts[name] = json.load(f)
            rows.append((path, name, row["output"]))
    return templates, contexts, rows


def per_item_us(totals, items):
    return statistics.median(totals) * 1e6 / items, min(totals) * 1e6 / items


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get("TOOLBRIDGE_CORPUS", default_corpus()))
    parser.add_argument("--reps", type=int, default=20, help="render repetitions")
    parser.add_argument(
        "--compile-reps", type=int, default=5, help="compile repetitions (about 3.5 s each)"
    )
    parser.add_argument(
        "--per-row", metavar="FILE", help="also write each row's fastest render time (JSON lines)"
    )
    args = parser.parse_args()

    templates, contexts, rows = load_corpus(args.corpus)
    env = make_environment()
    sources = list(templates.values())

    # from_string must compile every time: no cache may make a repeated compile free.
    first, second = env.from_string(sources[0]), env.from_string(sources[0])
    assert first is not second, "from_string returned a cached template"
    assert first.root_render_func is not second.root_render_func, "compiled code was shared"

    # Untimed pass: compiles, and checks the outputs against the goldens.
    compiled = {path: env.from_string(source) for path, source in templates.items()}
    identical = differ = raised = 0
    for path, name, expected in rows:
        try:
            output = compiled[path].render(**contexts[name])
        except Exception:  # noqa: BLE001 - counted, the row is still timed
            raised += 1
            continue
        if output == expected:
            identical += 1
        else:
            differ += 1

    jobs = [(compiled[path].render, contexts[name]) for path, name, _ in rows]
    compile_totals, render_totals = [], []
    perf_counter = time.perf_counter
    for _ in range(args.compile_reps):
        start = perf_counter()
        for source in sources:
            env.from_string(source)
        compile_totals.append(perf_counter() - start)
    for _ in range(args.reps):
        start = perf_counter()
        for render, context in jobs:
            try:
                render(**context)
            except Exception:  # noqa: BLE001
                pass
        render_totals.append(perf_counter() - start)

    if args.per_row:
        with open(args.per_row, "w", encoding="utf-8") as out:
            for (path, name, _), (render, context) in zip(rows, jobs):
                best = float("inf")
                for _ in range(10):
                    start = perf_counter()
                    try:
                        render(**context)
                    except Exception:  # noqa: BLE001
                        pass
                    best = min(best, perf_counter() - start)
                out.write(json.dumps({"row": f"{path} [{name}]", "us": best * 1e6}) + "\n")

    compile_us, compile_min = per_item_us(compile_totals, len(sources))
    render_us, render_min = per_item_us(render_totals, len(rows))
    reps, compile_reps = args.reps, args.compile_reps
    print(
        f"python jinja2 {jinja2.__version__} ({sys.implementation.name} "
        f"{sys.version.split()[0]}): {len(rows)} ok rows, {len(sources)} distinct templates, "
        f"{len(contexts)} contexts, {compile_reps} compile / {reps} render repetitions"
    )
    print(f"  conformance: {identical} identical to the goldens, {differ} differ, {raised} raised")
    print(f"  compile: {compile_us:.2f} µs per template (median of {compile_reps}; fastest {compile_min:.2f})")
    print(f"  render:  {render_us:.2f} µs per row (median of {reps}; fastest {render_min:.2f})")
    print(
        json.dumps(
            {
                "impl": "python-jinja2",
                "jinja2": jinja2.__version__,
                "rows": len(rows),
                "templates": len(sources),
                "reps": reps,
                "compile_reps": compile_reps,
                "compile_us": round(compile_us, 3),
                "compile_us_min": round(compile_min, 3),
                "render_us": round(render_us, 3),
                "render_us_min": round(render_min, 3),
                "identical": identical,
                "differ": differ,
                "raised": raised,
            }
        )
    )


if __name__ == "__main__":
    main()
