"""Streams one tool question through the three APIs of a running server and prints each
call delta with the time it came: whether a call streams (its name, then its arguments
piece by piece) on /v1/chat/completions, /v1/responses and /v1/messages alike.

usage: python3 scripts/stream_check.py PORT [auto|required] [question]"""
import json, sys, time, urllib.request

port = sys.argv[1]
choice = sys.argv[2] if len(sys.argv) > 2 else "auto"
question = sys.argv[3] if len(sys.argv) > 3 else "What is the weather in Paris?"
base = f"http://127.0.0.1:{port}"
tool = {"name": "get_weather", "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}

def stream(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    t0 = time.time()
    with urllib.request.urlopen(req) as r:
        for line in r:
            line = line.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                yield time.time() - t0, json.loads(line[6:])

def chat():
    body = {"model": "default", "stream": True, "temperature": 0, "tool_choice": choice,
            "messages": [{"role": "user", "content": question}],
            "tools": [{"type": "function", "function": tool}]}
    out = []
    for t, ev in stream("/v1/chat/completions", body):
        for c in ev.get("choices", []):
            d = c.get("delta", {})
            if d.get("content"):
                out.append((t, "content", d["content"]))
            for tc in d.get("tool_calls") or []:
                f = tc.get("function", {})
                if f.get("name"):
                    out.append((t, "name", f["name"]))
                if f.get("arguments"):
                    out.append((t, "args", f["arguments"]))
    return out

def responses():
    body = {"model": "default", "stream": True, "temperature": 0, "tool_choice": choice,
            "input": question, "tools": [dict(type="function", **tool)]}
    out = []
    for t, ev in stream("/v1/responses", body):
        if ev.get("type") == "response.output_item.added" and ev["item"].get("type") == "function_call":
            out.append((t, "name", ev["item"]["name"]))
        if ev.get("type") == "response.function_call_arguments.delta":
            out.append((t, "args", ev["delta"]))
        if ev.get("type") == "response.output_text.delta":
            out.append((t, "content", ev["delta"]))
    return out

def messages():
    tc = {"auto": {"type": "auto"}, "required": {"type": "any"}}[choice]
    body = {"model": "default", "stream": True, "temperature": 0, "max_tokens": 256, "tool_choice": tc,
            "messages": [{"role": "user", "content": question}],
            "tools": [{"name": tool["name"], "description": tool["description"], "input_schema": tool["parameters"]}]}
    out = []
    for t, ev in stream("/v1/messages", body):
        if ev.get("type") == "content_block_start" and ev["content_block"].get("type") == "tool_use":
            out.append((t, "name", ev["content_block"]["name"]))
        if ev.get("type") == "content_block_delta":
            d = ev["delta"]
            if d.get("type") == "input_json_delta":
                out.append((t, "args", d["partial_json"]))
            if d.get("type") == "text_delta":
                out.append((t, "content", d["text"]))
    return out

for api in (chat, responses, messages):
    out = api()
    args = [x for _, k, x in out if k == "args"]
    print(f"{api.__name__}: {len(args)} argument deltas, joined {''.join(args)!r}")
    for t, k, x in out:
        print(f"  {t:7.3f} {k:7} {x!r}")
