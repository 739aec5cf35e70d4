#!/usr/bin/env python3
"""Run llama.cpp's own HTTP server (llama-server) from the xllamacpp wheel.

Used by tests and benchmarks of the remote llama.cpp engine: the wheel embeds
llama.cpp's C++ server prebuilt, so nothing has to be compiled. Normally started
through scripts/llama-server.sh, which creates the virtual environment.

Usage:
  llama_server.py --model PATH [--port N] [--parallel N] [--ctx-size N]
                  [--threads N] [--host H] [--kv-unified] [--exit-with-stdin]

--port 0 (the default) lets the server bind a free port; the line below
names it. --ctx-size is the total context, which llama-server splits evenly
across the --parallel slots (at least 256 tokens each) unless --kv-unified
is given; 0 means the model's training context. Once GET /health answers 200
the script prints exactly one line to stdout:

  listening on http://127.0.0.1:PORT

and then stays alive until SIGTERM/SIGINT, or, with --exit-with-stdin, until
its stdin reaches end of file (so a test that spawned it and died does not
leave it behind). Everything else (llama.cpp's log) goes to stderr.
"""

import argparse
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request


def wait_healthy(base, deadline_s):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(0.05)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="path of a GGUF model")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = let the server bind a free port")
    ap.add_argument("--parallel", type=int, default=1, help="number of slots")
    ap.add_argument("--ctx-size", type=int, default=0,
                    help="total context (0 = the model's), split across slots")
    ap.add_argument("--threads", type=int, default=0,
                    help="CPU threads for generation and prompt batches (0 = default)")
    ap.add_argument("--kv-unified", action="store_true",
                    help="one KV cache shared by all slots (each slot gets the full --ctx-size)")
    ap.add_argument("--startup-timeout", type=float, default=300.0)
    ap.add_argument("--exit-with-stdin", action="store_true",
                    help="exit when stdin is closed")
    args = ap.parse_args()

    if not os.path.isfile(args.model):
        sys.exit(f"llama_server.py: model not found: {args.model}")

    # Before the (slow) import: a parent that dies while we load still stops us.
    stop = threading.Event()
    if args.exit_with_stdin:
        def watch_stdin():
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    def on_signal(signum, _frame):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.hostnames = [args.host]
    params.port = args.port  # 0: the server binds a free port and reports it
    params.n_parallel = args.parallel
    if args.ctx_size:
        params.n_ctx = args.ctx_size
    params.kv_unified = args.kv_unified
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    # What the remote engine relies on: /props, /slots, /metrics, prompt cache.
    params.endpoint_props = True
    params.endpoint_slots = True
    params.endpoint_metrics = True
    params.cache_prompt = True
    params.ui = False

    server = xlc.Server(params)  # loads the model; HTTP runs on its own threads
    base = server.listening_address.rstrip("/")  # e.g. http://127.0.0.1:44699
    if not wait_healthy(base, args.startup_timeout):
        sys.exit(f"llama_server.py: {base}/health did not answer 200 in time")
    sys.stdout.write(f"listening on {base}\n")
    sys.stdout.flush()

    while not stop.wait(0.5):
        pass
    # Skip interpreter teardown: the server's native threads make a clean
    # shutdown slow and it holds nothing that needs flushing.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
