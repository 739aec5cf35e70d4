#!/usr/bin/env python3
"""What replica affinity buys: a conversation's next turn on the replica that served its
earlier turns, against the other replica (which holds another conversation with the same
tools, as it would under round-robin).

Two toolbridges, each in front of one llama-server, stand for the two routes:

    scripts/llama-server.sh --model M --port 8081 --ctx-size 8192 &
    scripts/llama-server.sh --model M --port 8082 --ctx-size 8192 &
    toolbridge serve --engine http://127.0.0.1:8081 --port 8091 &
    toolbridge serve --engine http://127.0.0.1:8082 --port 8092 &
    python3 scripts/bench_affinity.py http://127.0.0.1:8091 http://127.0.0.1:8092

Each round builds two conversations (a call, a long tool result, an answer, a follow-up
question) with the tools of examples/tools/seed-000.json, conversation X on the first
replica and Y on the second, then asks each its next turn (one token) on its own replica
or on the other. Printed: prompt tokens, tokens the replica had cached, and the time.
"""

import json
import pathlib
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = json.loads((ROOT / "examples/tools/seed-000.json").read_text())["tools"]
REPORT = " ".join(
    f"Line {n}: the sensor read {n * 7 % 100} units at station {n % 13}." for n in range(120)
)


def post(base, messages, max_tokens):
    body = {"model": "m", "messages": messages, "tools": TOOLS, "temperature": 0, "max_tokens": max_tokens}
    request = urllib.request.Request(
        base + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.time()
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.load(response)
    return answer, (time.time() - started) * 1000


def message_of(answer):
    message = answer["choices"][0]["message"]
    return {key: value for key, value in message.items() if value is not None}


def conversation(question, base):
    """The prompt of a conversation's third turn, its first two served by `base`."""
    messages = [{"role": "user", "content": question}]
    first = message_of(post(base, messages, 60)[0])
    messages.append(first)
    for call in first.get("tool_calls") or []:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": REPORT})
    if not first.get("tool_calls"):
        messages.append({"role": "user", "content": "Here is the report: " + REPORT})
    second = message_of(post(base, messages, 30)[0])
    messages.append({"role": "assistant", "content": second.get("content") or "Done."})
    messages.append({"role": "user", "content": "Thanks. Which station read the most?"})
    return messages


def main():
    first, second = sys.argv[1], sys.argv[2]
    rows = []
    questions = [
        ("Add 17 and 25 for me, please.", "Say hello to the audience."),
        ("What is 1234 plus 4321?", "Tell everyone the meeting starts at noon."),
        ("Please add 7 and 8.", "Announce that dinner is ready."),
    ]
    for n, (x, y) in enumerate(questions):
        for label, routes in [("other replica", (second, first)), ("same replica", (first, second))]:
            xs = conversation(f"{x} (round {n}, {label})", first)
            ys = conversation(f"{y} (round {n}, {label})", second)
            for messages, route in zip((xs, ys), routes):
                answer, ms = post(route, messages, 1)
                usage = answer["usage"]
                cached = usage["prompt_tokens_details"]["cached_tokens"]
                rows.append((label, usage["prompt_tokens"], cached, ms))
                print(f"{label:14} prompt {usage['prompt_tokens']:5} cached {cached:5} {ms:9.1f} ms", flush=True)
    for label in ["same replica", "other replica"]:
        chosen = [row for row in rows if row[0] == label]
        mean = lambda i: sum(row[i] for row in chosen) / len(chosen)  # noqa: E731
        print(f"{label}: prompt {mean(1):.0f} tokens, {mean(2):.0f} cached, next turn {mean(3):.0f} ms (mean of {len(chosen)})")


if __name__ == "__main__":
    main()
