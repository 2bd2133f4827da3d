"""The Hugging Face Hub: one bounded GET of a repo's config.json (and of its hf_quant_config.json when
config.json has no quantization_config), and the local HF cache.

Why not `hf_hub_download`: it retries timeouts, network errors and 5xx answers
(five times with back-off, then again with a 60 s timeout), which left a command
waiting about 400 s on a Hub that stopped answering, and it folds a 403 or a 500
into "offline". kvplan needs one small file, so it asks once:

- connect and each read time out after `REQUEST_TIMEOUT_S` (or the budget, if less);
- the whole lookup (DNS included) gives up after the budget, `KVPLAN_HUB_TIMEOUT`
  seconds (default 30);
- no retries: a failed answer is reported at once, one line per cause (401, 403,
  404, 429, 5xx, timeout, connection cut mid-file, unreachable, offline);
- the token (HF_TOKEN or `hf auth login`) goes only to the Hub's own host and
  never appears in a message.

What it downloads goes into the standard HF cache layout (refs/, snapshots/,
blobs/ under models--owner--name), so `HF_HUB_OFFLINE=1` and an unreachable Hub
both fall back to the cached copy, and the cache of other HF tools is reused.
huggingface_hub is imported only here, only for its token, cache folder and
cache lookup.
"""

from __future__ import annotations

import http.client
import math
import os
import socket
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from .errors import KvplanWarning, SourceError, UsageError

BUDGET_ENV = "KVPLAN_HUB_TIMEOUT"
DEFAULT_BUDGET_S = 30.0
REQUEST_TIMEOUT_S = 10.0
MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a config.json is kilobytes; refuse anything absurd


def budget_s() -> float:
    """The total time a Hub lookup may take, from KVPLAN_HUB_TIMEOUT (seconds)."""
    text = os.environ.get(BUDGET_ENV, "").strip()
    if not text:
        return DEFAULT_BUDGET_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or value > 3600:
        raise UsageError(f"{BUDGET_ENV}={text!r}: expected seconds, a number in (0, 3600]",
                         f"unset it for the default of {DEFAULT_BUDGET_S:g} s")
    return value


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def endpoint() -> str:
    """The Hub's address: HF_ENDPOINT (an http(s) URL with a host and, if any, a valid port), else huggingface.co."""
    text = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").strip().rstrip("/")
    try:
        parts = urllib.parse.urlsplit(text)
        port_ok = parts.port is None or 0 < parts.port  # .port raises ValueError when out of range
    except ValueError:
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok \
            or any(c.isspace() for c in text):
        raise UsageError(f"HF_ENDPOINT={text!r} is not an http(s) URL of a host", "e.g. https://huggingface.co, "
                         "or unset it for the default")
    return text


class _Failure(Exception):
    """One failed lookup: a message, a hint, whether the cached copy may stand in, and whether the Hub said
    the file is not in the repository (HTTP 404 EntryNotFound)."""

    def __init__(self, message: str, hint: str | None = None, unreachable: bool = False, missing: bool = False):
        super().__init__(message)
        self.message, self.hint, self.unreachable, self.missing = message, hint, unreachable, missing


class _SameHostRedirect(urllib.request.HTTPRedirectHandler):
    """Follow the Hub's redirects (renamed repos), sending the token only to the same host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def _token() -> str | None:
    try:
        from huggingface_hub import get_token
    except ImportError:  # pragma: no cover - a runtime dependency
        return os.environ.get("HF_TOKEN") or None
    try:
        return get_token()
    except Exception:  # an unreadable token file is no reason to fail a public lookup
        return None


def _cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def _repo_folder(repo_id: str) -> Path:
    return _cache_dir() / ("models--" + repo_id.replace("/", "--"))


def cached_config(repo_id: str, revision: str | None, filename: str = "config.json") -> Path | None:
    """The cached config.json (or another small file) for this repo and revision, if the HF cache holds one."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, filename, revision=revision)
    except Exception:  # a malformed id or cache: treat as not cached
        return None
    return Path(found) if isinstance(found, str) and os.path.isfile(found) else None


def _store(repo_id: str, revision: str, headers, body: bytes, filename: str = "config.json") -> None:
    """Put the file into the HF cache: blobs/<etag>, snapshots/<commit>/<filename>, refs/<revision>.

    Best effort: a cache that cannot be written never fails the lookup.
    """
    etag = (headers.get("X-Linked-Etag") or headers.get("ETag") or "").strip()
    etag = etag[2:] if etag.startswith("W/") else etag
    etag = etag.strip('"')
    commit = (headers.get("X-Repo-Commit") or "").strip()
    if not etag or not commit or "/" in etag or "/" in commit or ".." in revision:
        return
    try:
        root = _repo_folder(repo_id)
        blob = root / "blobs" / etag
        blob.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic_bytes(blob, body)
        snapshot = root / "snapshots" / commit / filename
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        if not snapshot.exists():
            try:
                os.symlink(os.path.relpath(blob, snapshot.parent), snapshot)
            except OSError:  # no symlinks (some Windows setups): a copy, as huggingface_hub does
                _write_atomic_bytes(snapshot, body)
        if revision != commit:
            ref = root / "refs" / revision
            ref.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic_bytes(ref, commit.encode())
    except OSError:
        return


def _write_atomic_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".kvplan-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _http_failure(exc: urllib.error.HTTPError, where: str, filename: str = "config.json") -> _Failure:
    code = exc.code
    kind = (exc.headers.get("X-Error-Code") or "") if exc.headers else ""
    login = "log in with 'hf auth login' or set HF_TOKEN"
    if kind == "GatedRepo" or code == 403:
        if code == 401:
            return _Failure(f"{where}: the repository is gated and no token was accepted (HTTP 401)",
                            f"{login}, with an account that has accepted its terms")
        return _Failure(f"{where}: no access to this gated repository (HTTP {code})",
                        "accept its terms on its page on huggingface.co, with the account of your token")
    if kind == "RevisionNotFound":
        return _Failure(f"{where}: no such revision on the Hub (HTTP {code})", "check --revision")
    if kind == "EntryNotFound":
        return _Failure(f"{where}: the repository has no {filename} (HTTP {code})",
                        "pass a local config.json instead", missing=True)
    if kind == "RepoNotFound" or code == 404:
        return _Failure(f"{where}: no such repository on the Hub, or it is private (HTTP {code})",
                        f"check the name; for a private repository {login}")
    if code == 401:
        return _Failure(f"{where}: the Hub refused the credentials (HTTP 401)", f"{login} with a valid token")
    if code == 429:
        return _Failure(f"{where}: the Hub is rate-limiting requests (HTTP 429)", "wait a minute and try again")
    if 500 <= code < 600:
        return _Failure(f"{where}: the Hub is failing (HTTP {code})", "try again later", unreachable=True)
    return _Failure(f"{where}: the Hub answered HTTP {code}")


def _fetch(repo_id: str, revision: str | None, timeout_s: float, where: str,
           filename: str = "config.json") -> tuple[bytes, object]:
    url = (f"{endpoint()}/{urllib.parse.quote(repo_id)}/resolve/"
           f"{urllib.parse.quote(revision or 'main', safe='')}/{filename}")
    request = urllib.request.Request(url, headers={"User-Agent": "kvplan", "Accept-Encoding": "identity"})
    token = _token()
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    opener = urllib.request.build_opener(_SameHostRedirect())
    try:
        with opener.open(request, timeout=timeout_s) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > MAX_CONFIG_BYTES:
                raise _Failure(f"{where}: {filename} is {int(length):,} bytes, not a model config")
            body = response.read(MAX_CONFIG_BYTES + 1)
            if len(body) > MAX_CONFIG_BYTES:
                raise _Failure(f"{where}: {filename} is over {MAX_CONFIG_BYTES:,} bytes, not a model config")
            if length is not None and length.isdigit() and len(body) < int(length):
                raise _Failure(f"{where}: the connection was cut mid-file ({len(body):,} of {int(length):,} bytes)",
                               "try again", unreachable=True)
            return body, response.headers
    except urllib.error.HTTPError as exc:
        raise _http_failure(exc, where, filename) from None
    except http.client.IncompleteRead as exc:
        raise _Failure(f"{where}: the connection was cut mid-file ({len(exc.partial):,} bytes received)",
                       "try again", unreachable=True) from None
    except (socket.timeout, TimeoutError):
        raise _Failure(f"{where}: the Hub did not answer within {timeout_s:g} s", "try again later, or set "
                       "HF_HUB_OFFLINE=1 to use the local cache", unreachable=True) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise _Failure(f"{where}: no connection to the Hub within {timeout_s:g} s", "check the network, or set "
                           "HF_HUB_OFFLINE=1 to use the local cache", unreachable=True) from None
        text = getattr(reason, "strerror", None) or str(reason)
        raise _Failure(f"{where}: cannot reach the Hub at {endpoint()} ({text})",
                       "check the network, or set HF_HUB_OFFLINE=1 to use the local cache", unreachable=True) from None
    except (http.client.HTTPException, ConnectionError) as exc:  # reset or closed while reading the body
        raise _Failure(f"{where}: the connection was cut mid-file ({type(exc).__name__})", "try again",
                       unreachable=True) from None
    except OSError as exc:
        raise _Failure(f"{where}: cannot reach the Hub at {endpoint()} ({exc.strerror or exc})",
                       "check the network, or set HF_HUB_OFFLINE=1 to use the local cache", unreachable=True) from None


def _within(budget: float, work):
    """Run work() in a daemon thread; give up after `budget` seconds (a stuck DNS
    lookup or a server that trickles bytes cannot hold the command)."""
    box: dict = {}

    def target():
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="kvplan-hub", daemon=True)
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        return None, True
    if "error" in box:
        raise box["error"]
    return box["value"], False


def _scrub(text: str | None, token: str | None) -> str | None:
    if text and token and token in text:
        return text.replace(token, "***")
    return text


def config_text(repo_id: str, revision: str | None) -> tuple[str, str]:
    """(text of config.json, source label) for a Hub repo id, from the Hub or the HF cache."""
    text, source, _ = config_lookup(repo_id, revision)
    return text, source


def config_lookup(repo_id: str, revision: str | None) -> tuple[str, str, bool]:
    """(text of config.json, source label, whether the Hub answered) for a Hub repo id: from the Hub, or the
    HF cache offline or when the Hub cannot be reached."""
    import warnings

    where = f"{repo_id}@{revision}" if revision else repo_id
    source = f"hf://{where}"
    if offline():
        cached = cached_config(repo_id, revision)
        if cached is None:
            raise SourceError(f"{where}: offline (HF_HUB_OFFLINE is set) and not in the local Hugging Face cache",
                              "unset HF_HUB_OFFLINE to download it once, or pass a local config.json")
        return _read_cached(cached, where), source, False
    budget = budget_s()
    timeout_s = min(REQUEST_TIMEOUT_S, budget)
    try:
        result, timed_out = _within(budget, lambda: _fetch(repo_id, revision, timeout_s, where))
        if timed_out:
            raise _Failure(f"{where}: no answer from the Hub within {budget:g} s ({BUDGET_ENV})",
                           "try again later, or set HF_HUB_OFFLINE=1 to use the local cache", unreachable=True)
    except _Failure as failure:
        token = _token()
        message, hint = _scrub(failure.message, token), _scrub(failure.hint, token)
        cached = cached_config(repo_id, revision) if failure.unreachable else None
        if cached is None:
            raise SourceError(message, hint) from None
        warnings.warn(f"{message}; using the copy in the local Hugging Face cache", KvplanWarning, stacklevel=2)
        return _read_cached(cached, where), source, False
    body, headers = result
    _store(repo_id, revision or "main", headers, body)
    try:
        return body.decode("utf-8"), source, True
    except UnicodeDecodeError:
        raise SourceError(f"{where}: config.json from the Hub is not UTF-8 text") from None


def side_file_text(repo_id: str, revision: str | None, filename: str, hub_answered: bool) -> str | None:
    """A small file beside config.json (hf_quant_config.json, tokenizer_config.json), or None where the
    repository has none.

    After the Hub answered for config.json: one more bounded GET (same budget, no retries); HTTP 404 means
    absent, and is remembered in the cache as huggingface_hub does (.no_exist/<commit>/<filename>). Offline,
    or when config.json itself came from the cache: the cached copy, else None. A failed request (5xx, time
    out, cut) is one warning and the cached copy, else None: the config still plans."""
    import warnings

    where = f"{repo_id}@{revision}" if revision else repo_id
    cached = cached_config(repo_id, revision, filename)
    if offline() or not hub_answered:
        return _read_cached(cached, where, filename) if cached is not None else None
    budget = budget_s()
    timeout_s = min(REQUEST_TIMEOUT_S, budget)
    try:
        result, timed_out = _within(budget, lambda: _fetch(repo_id, revision, timeout_s, where, filename))
        if timed_out:
            raise _Failure(f"{where}: no answer from the Hub within {budget:g} s ({BUDGET_ENV})", unreachable=True)
    except _Failure as failure:
        if failure.missing:
            _store_missing(repo_id, revision or "main", filename)
            return None
        token = _token()
        warnings.warn(f"{_scrub(failure.message, token)}; {filename} not read"
                      + ("" if cached is None else ", using the copy in the local Hugging Face cache"),
                      KvplanWarning, stacklevel=2)
        return _read_cached(cached, where, filename) if cached is not None else None
    body, headers = result
    _store(repo_id, revision or "main", headers, body, filename)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{where}: {filename} from the Hub is not UTF-8 text") from None


def _store_missing(repo_id: str, revision: str, filename: str) -> None:
    """Remember that the revision has no such file, where the cache already names its commit (best effort)."""
    try:
        root = _repo_folder(repo_id)
        ref = root / "refs" / revision
        commit = ref.read_text().strip() if ref.is_file() else revision
        if len(commit) != 40 or "/" in commit or ".." in commit:
            return
        marker = root / ".no_exist" / commit / filename
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        return


def _read_cached(path: Path, where: str, filename: str = "config.json") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{where}: the cached {filename} cannot be read ({exc})") from None
