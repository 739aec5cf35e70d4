#!/usr/bin/env python3
"""Run vLLM's OpenAI-compatible server on the CPU, on the default model.

Used by the tests of `toolbridge serve --engine URL` in front of a real vLLM; started
through scripts/vllm.sh, which installs vLLM into its virtual environment first.

  vllm_server.py serve [--model GGUF] [--port N] [--exit-with-stdin] [--install-only]
                       [-- vLLM arguments...]
  vllm_server.py convert GGUF DIR
  vllm_server.py requirements WHEEL TORCH_PIN

`serve` converts the GGUF once into Hugging Face safetensors (vLLM's CPU build does not
read our Q4_K_M GGUF; `transformers` dequantizes it to float32) in
target/vllm-model/NAME, then starts `vllm.entrypoints.openai.api_server` on it. Once
GET /v1/models answers 200 it prints exactly one line to stdout:

  listening on http://127.0.0.1:PORT

and stays alive until SIGTERM/SIGINT or, with --exit-with-stdin, until its stdin
reaches end of file; then it stops vLLM (its whole process group). vLLM's log goes to
stderr. `--port 0` (the default) picks a free port.

`requirements` prints the wheel's requirements for this platform, with its `+cpu`
torch pin (served only by PyTorch's own index) replaced by TORCH_PIN from PyPI.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "models", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")


def requirements(wheel, torch_pin):
    from pip._vendor.packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    for line in lines:
        if not line.startswith("Requires-Dist: "):
            continue
        requirement = Requirement(line[len("Requires-Dist: "):])
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        if requirement.name == "torch":
            print(torch_pin)
            continue
        requirement.marker = None
        print(requirement)


def convert(gguf, out):
    """Dequantizes GGUF into a safetensors model directory `out`, atomically."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = os.path.split(os.path.abspath(gguf))
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    AutoTokenizer.from_pretrained(directory, gguf_file=name).save_pretrained(partial)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name)
    # The weights are already dequantized; only the marker of where they came from is
    # left, and `save_pretrained` refuses a model marked GGUF-quantized.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(partial)
    os.replace(partial, out)


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_ready(base, server, deadline_s):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(base + "/v1/models", timeout=2) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(0.2)
    return False


def serve(args, vllm_args):
    if not os.path.isfile(args.model):
        sys.exit(f"vllm_server.py: model not found: {args.model} (scripts/fetch-model.sh)")
    name = os.path.splitext(os.path.basename(args.model))[0]
    converted = os.path.join(ROOT, "target", "vllm-model", name)
    if not os.path.isfile(os.path.join(converted, "config.json")):
        print(f"vllm_server.py: converting {args.model} into {converted}", file=sys.stderr)
        os.makedirs(os.path.dirname(converted), exist_ok=True)
        subprocess.run([sys.executable, __file__, "convert", args.model, converted], check=True)
    if args.install_only:
        return

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
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    port = args.port or free_port(args.host)
    env = dict(os.environ)
    # KV cache in GiB: a few test conversations need far less than vLLM's default.
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", converted, "--served-model-name", name,
        "--host", args.host, "--port", str(port),
        "--dtype", "float32", "--enforce-eager", "--max-model-len", str(args.max_model_len),
        *vllm_args,
    ]
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                              env=env, start_new_session=True)
    try:
        base = f"http://{args.host}:{port}"
        if not wait_ready(base, server, args.startup_timeout):
            sys.exit(f"vllm_server.py: {base}/v1/models did not answer 200 "
                     f"(vLLM exit status {server.poll()})")
        sys.stdout.write(f"listening on {base}\n")
        sys.stdout.flush()
        while not stop.wait(0.5) and server.poll() is None:
            pass
    finally:
        stop_group(server)


def stop_group(server):
    """Stops vLLM and the engine processes it started, by their process group."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass


def main():
    argv = sys.argv[1:]
    vllm_args = []
    if "--" in argv:
        at = argv.index("--")
        argv, vllm_args = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = ap.add_subparsers(dest="command", required=True)
    s = commands.add_parser("serve")
    s.add_argument("--model", default=DEFAULT_MODEL, help="path of a GGUF model")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=0, help="0 = a free port")
    s.add_argument("--max-model-len", type=int, default=4096)
    s.add_argument("--startup-timeout", type=float, default=900.0)
    s.add_argument("--exit-with-stdin", action="store_true", help="exit when stdin is closed")
    s.add_argument("--install-only", action="store_true",
                   help="install and convert the model, then exit")
    c = commands.add_parser("convert")
    c.add_argument("gguf")
    c.add_argument("out")
    r = commands.add_parser("requirements")
    r.add_argument("wheel")
    r.add_argument("torch_pin")
    args = ap.parse_args(argv)
    if args.command == "requirements":
        requirements(args.wheel, args.torch_pin)
    elif args.command == "convert":
        convert(args.gguf, args.out)
    else:
        serve(args, vllm_args)


if __name__ == "__main__":
    main()
