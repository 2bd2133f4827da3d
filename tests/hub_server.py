"""A tiny stand-in for the Hugging Face Hub on loopback, for real HTTP tests.

Serves `/{owner}/{name}/resolve/{revision}/config.json` for the repos it is
given; answers 401 for gated repos and 404 for unknown ones, with the headers
the Hub sends (X-Error-Code, X-Repo-Commit, ETag). Misbehaviour on demand, per
repo: `status` answers a fixed HTTP status (and X-Error-Code), `hang` accepts the
connection and never answers (until the server stops), `cut` announces the full
Content-Length, sends half the body and closes the connection.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer:
    def __init__(self, repos: dict[str, dict], gated: set[str] = frozenset(),
                 status: dict[str, tuple[int, str]] | None = None, hang: set[str] = frozenset(),
                 cut: set[str] = frozenset()):
        self.repos = repos
        self.gated = set(gated)
        self.status = dict(status or {})
        self.hang = set(hang)
        self.cut = set(cut)
        self.release = threading.Event()  # set on exit: hanging handlers return
        self.requests: list[tuple[str, str, str | None]] = []
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
                if filename != "config.json":
                    return self._error(404, "EntryNotFound", body, "Entry not found")
                payload = json.dumps(server.repos[repo]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("ETag", '"' + hashlib.sha1(payload).hexdigest() + '"')
                self.send_header("X-Repo-Commit", COMMIT)
                self.end_headers()
                if body and repo in server.cut:
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return None
                if body:
                    self.wfile.write(payload)

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
