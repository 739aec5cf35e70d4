"""The /inspect page in headless Chromium, driven over the Chrome DevTools Protocol.

Run by `crates/cli/tests/inspect_page.rs`, which starts `toolbridge serve` on the default
model with an API key and passes its base URL, the key and where to save a screenshot:

    python inspect_page.py http://127.0.0.1:PORT KEY SCREENSHOT.png

It loads the page (whose first prepare is refused without the key), types the key,
prepares the weather request with `tool_choice: required` (the prompt shows its special
tokens marked, the grammar is GBNF naming the tool), runs it and waits for the parsed
call in the events and the final message. Each step prints `ok STEP` or fails with what
the page showed. Needs Debian's `chromium` (`scripts/system-packages.sh` installs it) and
`websocket-client`.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

WIDTH, HEIGHT = 1280, 900


def launch(profile):
    """Chromium, headless, with its DevTools port written to the profile folder."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        sys.exit("chromium not found on PATH (scripts/system-packages.sh installs it)")
    args = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--remote-debugging-port=0",
        "--remote-allow-origins=*",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        "about:blank",
    ]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def devtools_port(profile, deadline):
    path = os.path.join(profile, "DevToolsActivePort")
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as file:
                first = file.readline().strip()
            if first:
                return int(first)
        time.sleep(0.1)
    sys.exit("chromium did not open its DevTools port")


class Page:
    """One tab, spoken to over its DevTools websocket."""

    def __init__(self, port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
            targets = json.load(answer)
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(url, timeout=60)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def eval(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for_state(self, wanted, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            state = self.eval("document.body && document.body.dataset.state")
            if state in wanted:
                return state
            time.sleep(0.2)
        status = self.eval("document.getElementById('status').textContent")
        raise AssertionError(f"the page stayed {state!r} (status: {status!r}), not {wanted}")


def check(name, condition, shown):
    if not condition:
        raise AssertionError(f"{name}: the page shows {shown!r}")
    print(f"ok {name}", flush=True)


def drive(page, base_url, key, screenshot):
    page.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
              deviceScaleFactor=1, mobile=False)
    page.call("Page.enable")
    page.call("Page.navigate", url=f"{base_url}/inspect?example=weather_required")
    state = page.wait_for_state({"error", "prepared"}, 30)
    status = page.eval("document.getElementById('status').textContent")
    check("without the key the page says so", state == "error" and "API key" in status, status)

    page.eval(f"document.getElementById('key').value = {json.dumps(key)}")
    page.eval("document.getElementById('prepare').click()")
    page.wait_for_state({"prepared"}, 30)
    marked = page.eval("[...document.querySelectorAll('#prompt .special')].map(e => e.textContent)")
    check("the prompt marks special tokens", "<|im_start|>" in marked and "<|im_end|>" in marked, marked)
    dialect = page.eval("document.getElementById('dialect-name').textContent")
    why = page.eval("document.getElementById('why').textContent")
    check("the dialect and why", dialect == "hermes" and "<tool_call>" in why, (dialect, why))
    grammar = page.eval("document.getElementById('grammar').textContent")
    check("the grammar is shown", grammar.startswith("root ::=") and "get_weather" in grammar, grammar[:200])
    mode = page.eval("document.getElementById('grammar-mode').textContent")
    check("a required call is forced", mode.startswith("forced"), mode)

    page.eval("document.getElementById('run').click()")
    page.wait_for_state({"done", "error"}, 240)
    status = page.eval("document.getElementById('status').textContent")
    check("the run ends", page.eval("document.body.dataset.state") == "done", status)
    raw = page.eval("document.getElementById('raw').textContent")
    check("the raw text streamed", "get_weather" in raw, raw)
    events = page.eval("document.getElementById('events').textContent")
    check("the parsed call starts", "call 0 starts: get_weather" in events, events)
    message = json.loads(page.eval("document.getElementById('message').textContent"))
    call = message["tool_calls"][0]["function"]
    arguments = json.loads(call["arguments"])
    check("the final message has the call", call["name"] == "get_weather" and "city" in arguments, message)

    shot = page.call("Page.captureScreenshot", format="png")
    with open(screenshot, "wb") as file:
        file.write(base64.b64decode(shot["data"]))
    print(f"screenshot: {screenshot}", flush=True)


def main():
    base_url, key, screenshot = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as profile:
        browser = launch(profile)
        try:
            page = Page(devtools_port(profile, time.time() + 60))
            drive(page, base_url, key, screenshot)
        finally:
            browser.terminate()
            try:
                browser.wait(10)
            except subprocess.TimeoutExpired:
                browser.kill()


if __name__ == "__main__":
    main()
