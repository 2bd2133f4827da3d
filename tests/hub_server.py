"""A tiny stand-in for the Hugging Face Hub on loopback, for real HTTP tests.

Serves `/{owner}/{name}/resolve/{revision}/config.json` for the repos it is
given, and any other file given in `files` (safetensors shards, the index),
answering HTTP Range requests with 206 and the slice; answers 401 for gated
repos and 404 for unknown ones, with the headers the Hub sends (X-Error-Code,
X-Repo-Commit, ETag). Every request is logged in `requests`, every Range request
also in `ranges` as (path, range header). Misbehaviour on demand, per repo:
`status` answers a fixed HTTP status (and X-Error-Code), `hang` accepts the
connection and never answers (until the server stops), `cut` announces the full
Content-Length, sends half the body and closes the connection.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer:
    def __init__(self, repos: dict[str, dict], gated: set[str] = frozenset(),
                 files: dict[str, dict[str, bytes]] | None = None,
                 status: dict[str, tuple[int, str]] | None = None, hang: set[str] = frozenset(),
                 cut: set[str] = frozenset()):
        self.repos = repos
        self.gated = set(gated)
        self.files = files or {}
        self.status = dict(status or {})
        self.hang = set(hang)
        self.cut = set(cut)
        self.release = threading.Event()  # set on exit: hanging handlers return
        self.requests: list[tuple[str, str, str | None]] = []
        self.ranges: list[tuple[str, str]] = []
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _answer(self, body: bool):
                server.requests.append((self.command, self.path, self.headers.get("authorization")))
                parts = self.path.split("?")[0].strip("/").split("/")
                if len(parts) < 5 or parts[2] != "resolve":
                    return self._error(404, "EntryNotFound", body)
                repo, filename = f"{parts[0]}/{parts[1]}", "/".join(parts[4:])
                if repo in server.hang:
                    server.release.wait(60)
                    return None
                if repo in server.status:
                    code, kind = server.status[repo]
                    return self._error(code, kind, body, f"status {code}")
                if repo in server.gated:
                    return self._error(401, "GatedRepo", body, f"Access to model {repo} is restricted.")
                if repo not in server.repos:
                    return self._error(404, "RepoNotFound", body, "Repository Not Found")
                if filename == "config.json":
                    payload = json.dumps(server.repos[repo]).encode()
                elif filename in server.files.get(repo, {}):
                    payload = server.files[repo][filename]
                else:
                    return self._error(404, "EntryNotFound", body, "Entry not found")
                etag = '"' + hashlib.sha1(payload).hexdigest() + '"'
                wanted = self.headers.get("range")
                status, start, end = 200, 0, len(payload)
                if wanted:
                    server.ranges.append((self.path.split("?")[0], wanted))
                    m = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted.strip())
                    if m:
                        start = int(m.group(1))
                        end = min(len(payload), int(m.group(2)) + 1 if m.group(2) else len(payload))
                        status = 206
                chunk = payload[start:end]
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if filename != "config.json" else "application/json")
                self.send_header("Content-Length", str(len(chunk)))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{max(end - 1, start)}/{len(payload)}")
                self.send_header("ETag", etag)
                self.send_header("X-Repo-Commit", COMMIT)
                self.end_headers()
                if body and repo in server.cut:
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return None
                if body:
                    self.wfile.write(chunk)

            def _error(self, status, code, body, message="error"):
                payload = json.dumps({"error": message}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if code:
                    self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", message)
                self.end_headers()
                if body:
                    self.wfile.write(payload)

            def do_GET(self):
                self._answer(True)

            def do_HEAD(self):
                self._answer(False)

        return Handler
