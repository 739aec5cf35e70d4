"""The part of the Hugging Face hub's HTTP API that model downloads use, over a folder.

    python3 hf_hub_server.py ROOT LOG

serves each folder ROOT/owner/repo as the model repository owner/repo, at one commit
(a hash of its files' names and contents), and prints `listening on http://127.0.0.1:PORT`.

- GET /api/models/owner/repo[/revision/REV]: the repository's `sha` and `siblings`, as the
  hub answers (hf-hub's `info`, huggingface_hub's `model_info`);
- GET and HEAD /owner/repo/resolve/REV/PATH: the file, with the hub's `ETag` (the sha256
  of the content, quoted, as for LFS files), `X-Repo-Commit`, `Accept-Ranges`, and a
  206 with `Content-Range` for a `Range: bytes=A-[B]` request (hf-hub asks for bytes 0-0
  to learn the size, then resumes with `bytes=N-`);
- anything else: 404 with the hub's `X-Error-Code`.

Each request is appended to LOG as `METHOD PATH RANGE`, so a test can see what was asked.
With `HUB_STALL=1` in the environment, a GET of a whole file (no `Range`) sends the first
half and then nothing more, as a connection that died mid-download: a client killed then
leaves its partial file behind.
"""

import hashlib
import http.server
import json
import os
import sys
import time
import urllib.parse

ROOT = sys.argv[1]
LOG = sys.argv[2]


def repo_files(repo):
    base = os.path.join(ROOT, repo)
    found = []
    for folder, _, names in os.walk(base):
        for name in names:
            found.append(os.path.relpath(os.path.join(folder, name), base).replace(os.sep, "/"))
    return sorted(found)


def commit(repo):
    digest = hashlib.sha1()
    for path in repo_files(repo):
        digest.update(path.encode())
        with open(os.path.join(ROOT, repo, path), "rb") as file:
            digest.update(file.read())
    return digest.hexdigest()


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.answer(body=True)

    def do_HEAD(self):
        self.answer(body=False)

    def answer(self, body):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        with open(LOG, "a") as log:
            log.write(f"{self.command} {path} {self.headers.get('Range', '-')}\n")
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            return self.info("/".join(parts[2:4]))
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve("/".join(parts[:2]), "/".join(parts[4:]), body)
        self.missing("RepoNotFound")

    def info(self, repo):
        if not os.path.isdir(os.path.join(ROOT, repo)):
            return self.missing("RepoNotFound")
        siblings = [{"rfilename": path} for path in repo_files(repo)]
        data = json.dumps({"id": repo, "modelId": repo, "sha": commit(repo), "siblings": siblings})
        self.send(200, {"Content-Type": "application/json"}, data.encode(), True)

    def resolve(self, repo, file, body):
        path = os.path.join(ROOT, repo, file)
        if not os.path.isdir(os.path.join(ROOT, repo)):
            return self.missing("RepoNotFound")
        if not os.path.isfile(path):
            return self.missing("EntryNotFound")
        with open(path, "rb") as handle:
            content = handle.read()
        headers = {
            "ETag": '"%s"' % hashlib.sha256(content).hexdigest(),
            "X-Repo-Commit": commit(repo),
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            start, _, end = wanted[len("bytes="):].partition("-")
            start = int(start)
            end = int(end) if end else len(content) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
            return self.send(206, headers, content[start : end + 1], body)
        if body and os.environ.get("HUB_STALL") == "1":
            return self.stall(headers, content)
        self.send(200, headers, content, body)

    def stall(self, headers, content):
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content[: len(content) // 2])
        self.wfile.flush()
        time.sleep(3600)

    def missing(self, code):
        self.send(404, {"X-Error-Code": code}, b"", True)

    def send(self, status, headers, content, body):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        if body:
            self.wfile.write(content)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
