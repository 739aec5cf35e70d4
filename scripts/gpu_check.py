"""What scripts/gpu-check.sh asks of a running server: one forced call, valid, and how
fast tokens come.

    python3 scripts/gpu_check.py BASE_URL LABEL [--rounds N]

Prints one JSON line: the label, whether the forced call came back valid (the tool's
name, arguments that are a JSON object with the enum value the schema allows), and
the generated tokens per second over `--rounds` greedy answers of up to 256 tokens
(the prompt is the same each round, so after the first it is cached on both servers,
and the figure is decode). Exits non-zero when the call is not valid.

The model is random (scripts/tiny_gguf.py), so answers are noise; only a grammar makes
the call valid, which is the point. Python's standard library only: the device machine
has Python and no network.
"""

import argparse
import json
import sys
import time
import urllib.request

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["unit"],
        },
    },
}


def ask(base, question, max_tokens, **extra):
    """One greedy chat completion of `question`; `extra` goes into the request."""
    body = {
        "model": "tiny",
        "temperature": 0,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": question}],
        **extra,
    }
    request = urllib.request.Request(
        f"{base}/v1/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


def forced_call(base):
    """The first call of a `tool_choice: required` answer, and whether it is valid."""
    answer = ask(
        base, "What is the weather in Paris?", 512, tools=[TOOL], tool_choice="required"
    )
    calls = answer["choices"][0]["message"].get("tool_calls") or []
    if not calls:
        return None, False
    call = calls[0]["function"]
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        return call, False
    valid = (
        call["name"] == "get_weather"
        and isinstance(arguments, dict)
        and arguments.get("unit") in ("c", "f")
    )
    return call, valid


def tokens_per_second(base, rounds):
    tokens, seconds = 0, 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        answer = ask(base, "Write a long story.", 256)
        seconds += time.perf_counter() - started
        tokens += answer["usage"]["completion_tokens"]
    return tokens / seconds if seconds else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("label")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    call, valid = forced_call(args.base)
    speed = tokens_per_second(args.base, args.rounds)
    print(
        json.dumps(
            {
                "server": args.label,
                "forced_call": call,
                "forced_call_valid": valid,
                "tokens_per_second": round(speed, 1),
            }
        )
    )
    sys.exit(0 if valid else 1)


if __name__ == "__main__":
    main()
