#!/usr/bin/env python3
"""Extract llama.cpp's chat parser test cases (tests/test-chat.cpp) as data for our test.

llama.cpp states each case as a C++ builder chain (`tst.test("…").tools({…}).expect(…).run()`)
over named tools and messages. Rather than read C++, this script lets llama.cpp state them:
it patches a copy of the checkout's `test-chat.cpp` so that `run()` prints its case as one
JSON line (template, model output, tools, options, expected message, source line) instead of
running it, builds the `test-chat` target with CMake, runs its parser tests, and writes

    crates/dialect/tests/llama_cpp/test_chat_cases.jsonl

Each case's template is named `corpus:llama.cpp/NAME.jinja` when the shared corpus has a
byte-identical copy, else it is copied to `crates/dialect/tests/llama_cpp/templates/` and
named `repo:NAME.jinja`.

Usage: scripts/extract_llama_cpp_test_chat.py LLAMA_CPP_CHECKOUT [BUILD_DIR]
Needs cmake and a C++ compiler; the checkout's file is restored afterwards.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "crates/dialect/tests/llama_cpp"
CORPUS = REPO.parent / "shared/corpus/jinja/llama.cpp"

DUMP = """        json dumped = {
            { "template", tester_.template_path() },
            { "line", line_ },
            { "input", tc_.input },
            { "tools", common_chat_tools_to_json_oaicompat(tc_.params.tools) },
            { "tool_choice", (int) tc_.params.tool_choice },
            { "parallel_tool_calls", tc_.params.parallel_tool_calls },
            { "reasoning_format", (int) tc_.params.reasoning_format },
            { "enable_thinking", tc_.params.enable_thinking },
            { "json_schema", tc_.params.json_schema },
            { "add_generation_prompt", tc_.params.add_generation_prompt },
            { "continue_final_message", (int) tc_.params.continue_final_message },
            { "messages", common_chat_msgs_to_json_oaicompat(tc_.params.messages) },
            { "chat_template_kwargs", tc_.params.chat_template_kwargs },
            { "is_partial", tc_.is_partial },
            { "expect", common_chat_msgs_to_json_oaicompat({ tc_.expect })[0] },
        };
        std::cout << "@@CASE " << dumped.dump() << std::endl;"""

# (old, new) replacements; each old text must occur in the file.
PATCHES = [
    (
        'LOG_INF("\\n\\x1b[38;5;126m[%s]\\x1b[0m\\n%s\\n\\n", tester_.template_path().c_str(), tc_.input.c_str());\n'
        "        test_peg_parser(tester_.tmpls_.get(), [this](peg_test_case & t) { t = tc_; }, tester_.detailed_debug_);",
        DUMP.lstrip(),
    ),
    (
        "    peg_test_builder(peg_tester & tester, const std::string & input) : tester_(tester) {",
        "    int line_ = 0;\n"
        "    peg_test_builder(peg_tester & tester, const std::string & input, int line) : tester_(tester), line_(line) {",
    ),
    (
        "    peg_test_builder test(const std::string & input);",
        "    peg_test_builder test(const std::string & input, int line = __builtin_LINE());",
    ),
    (
        "peg_test_builder peg_tester::test(const std::string & input) {\n"
        "    return peg_test_builder(*this, input);",
        "peg_test_builder peg_tester::test(const std::string & input, int line) {\n"
        "    return peg_test_builder(*this, input, line);",
    ),
]


def patched(source: str) -> str:
    for old, new in PATCHES:
        if old not in source:
            sys.exit(f"test-chat.cpp has changed: cannot find {old[:80]!r}")
        source = source.replace(old, new)
    # The file's other, direct checks must not abort the listing.
    head, rest = source.split('#include "json.h"', 1)
    soft = (
        '#include "json.h"\n#define SOFT_ASSERT(x) do { if (!(x)) { std::cerr << '
        '"test-chat: a direct check failed at line " << __LINE__ << "\\n"; } } while (0)'
    )
    return head + soft + rest.replace("GGML_ASSERT(", "SOFT_ASSERT(")


def build_and_list(checkout: Path, build: Path) -> list:
    test_file = checkout / "tests/test-chat.cpp"
    original = test_file.read_text()
    try:
        test_file.write_text(patched(original))
        subprocess.run(["cmake", "-S", checkout, "-B", build, "-DLLAMA_BUILD_TESTS=ON",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", build, "--target", "test-chat", "-j", jobs],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        test_file.write_text(original)
    run = subprocess.run([build / "bin/test-chat", "--template", ".jinja"], cwd=checkout,
                         capture_output=True, text=True, check=True)
    return [json.loads(line[len("@@CASE "):]) for line in run.stdout.splitlines()
            if line.startswith("@@CASE ")]


def resolve_template(checkout: Path, path: str) -> str:
    source = (checkout / path).read_bytes()
    name = Path(path).name
    corpus_copy = CORPUS / name
    if corpus_copy.is_file() and sha256(corpus_copy.read_bytes()) == sha256(source):
        return f"corpus:llama.cpp/{name}"
    (OUT_DIR / "templates").mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "templates" / name).write_bytes(source)
    return f"repo:{name}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    checkout = Path(sys.argv[1]).resolve()
    build = Path(sys.argv[2]).resolve() if len(sys.argv) == 3 else checkout / "build-test-chat"
    if not CORPUS.is_dir():
        sys.exit(f"the shared corpus is missing: looked in {CORPUS}")
    cases = build_and_list(checkout, build)
    shutil.rmtree(OUT_DIR / "templates", ignore_errors=True)
    resolved = {}
    with open(OUT_DIR / "test_chat_cases.jsonl", "w") as out:
        for case in cases:
            path = case["template"]
            if path not in resolved:
                resolved[path] = resolve_template(checkout, path)
            case["template"] = resolved[path]
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    copied = sorted(p for p in resolved.values() if p.startswith("repo:"))
    print(f"{len(cases)} cases over {len(resolved)} templates ({len(copied)} copied into the repository)")


if __name__ == "__main__":
    main()
