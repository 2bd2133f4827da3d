"""Where configs come from: bundled copies, local files or folders, GGUF files, the Hugging Face Hub.

I/O lives here and nowhere else in the planning path. huggingface_hub is
imported only when a Hub lookup is needed, to keep `kvplan estimate` fast.
"""

from __future__ import annotations

import difflib
import json
import os

from functools import lru_cache
from pathlib import Path

from ._record import record
from .configs import build_model
from .core.model import ModelSpec
from .errors import ConfigError, SourceError, UsageError


@record
class BundledEntry:
    alias: str
    hf_id: str
    notes: str = ""
    source: str = ""  # where the bundled config.json came from (model_specs/index.json)

    @property
    def provenance(self) -> str:
        """In words: a copy of the published config.json, or rebuilt from published values."""
        return "rebuilt from published values" if self.source.startswith("reconstructed:") else "published config.json (copy)"


def _specs_dir():
    """The bundled configs' folder (importlib.resources only for an unusual install:
    importing it costs the cold start a few milliseconds)."""
    from . import model_specs

    if getattr(model_specs, "__file__", None):
        return Path(model_specs.__file__).parent
    from importlib import resources

    return resources.files("kvplan.model_specs")


@lru_cache(maxsize=1)
def bundled_index() -> dict[str, BundledEntry]:
    """alias -> entry, from model_specs/index.json."""
    raw = json.loads((_specs_dir() / "index.json").read_text(encoding="utf-8"))
    return {alias: BundledEntry(alias, meta.get("hf_id", alias), meta.get("notes", ""), meta.get("source", ""))
            for alias, meta in raw.items()}


def resolve_bundled(name: str) -> BundledEntry | None:
    key = name.strip().lower()
    index = bundled_index()
    if key in index:
        return index[key]
    for entry in index.values():
        if entry.hf_id.lower() == key:
            return entry
    return None


def bundled_config(entry: BundledEntry) -> dict:
    return json.loads((_specs_dir() / f"{entry.alias}.json").read_text(encoding="utf-8"))


def suggest(name: str) -> list[str]:
    names = list(bundled_index()) + [e.hf_id for e in bundled_index().values()]
    lowered = {n.lower(): n for n in names}
    return [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)]


def read_json_file(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _hub_config(repo_id: str, revision: str | None) -> tuple[dict, str]:
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import (
            EntryNotFoundError,
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )
    except ImportError:  # pragma: no cover - a runtime dependency
        raise SourceError("huggingface_hub is not installed", "pip install huggingface-hub") from None
    where = f"{repo_id}@{revision}" if revision else repo_id
    try:
        path = hf_hub_download(repo_id, "config.json", revision=revision)
    except GatedRepoError:
        raise SourceError(
            f"{where}: the repository is gated and this token has no access",
            "accept its licence on huggingface.co and log in (hf auth login) or set HF_TOKEN",
        ) from None
    except RepositoryNotFoundError:
        raise SourceError(
            f"{where}: no such repository on the Hub (or it is private)",
            "check the name, or log in / set HF_TOKEN for a private repository",
        ) from None
    except RevisionNotFoundError:
        raise SourceError(f"{where}: no such revision", "check --revision") from None
    except LocalEntryNotFoundError:
        raise SourceError(
            f"{where}: not in the local Hugging Face cache and the Hub cannot be reached (offline)",
            "unset HF_HUB_OFFLINE, or download the config once, or pass a local config.json",
        ) from None
    except EntryNotFoundError:
        raise SourceError(f"{where}: the repository has no config.json") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 401:
            raise SourceError(
                f"{where}: the Hub refused access (401: gated or private repository)",
                "log in (hf auth login) or set HF_TOKEN with access to it",
            ) from None
        raise SourceError(f"{where}: the Hub answered an error ({status or exc})") from None
    except OSError as exc:
        raise SourceError(f"{where}: cannot reach the Hub ({exc})", "check the network or set HF_HUB_OFFLINE=1") from None
    return read_json_file(Path(path)), f"hf://{where}"


def load_config(name: str, revision: str | None = None) -> tuple[dict, str, str]:
    """(raw config, display name, source) for a bundled name, a path, or a Hub repo id."""
    path = Path(name).expanduser()
    if path.suffix == ".gguf":
        from .weights import gguf
        from .weights.gguf_config import to_config

        return to_config(gguf.read(path)), path.stem, str(path)
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file():
            raise SourceError(f"{path}: folder has no config.json")
        return read_json_file(config), path.name, str(config)
    if path.suffix == ".json" or path.exists():
        return read_json_file(path), path.stem if path.name != "config.json" else path.parent.name, str(path)
    entry = resolve_bundled(name)
    if entry is not None and revision is None:
        return bundled_config(entry), entry.hf_id, f"bundled:{entry.alias}"
    if "/" in name and not name.startswith((".", "/")) and name.count("/") == 1:
        raw, source = _hub_config(name, revision)
        return raw, name, source
    close = suggest(name)
    hint = f"did you mean {', '.join(close)}?" if close else "run 'kvplan models' to list the bundled models"
    raise SourceError(f"unknown model {name!r}: not a bundled name, a file, or a Hub repo id (owner/name)", hint)


def parse_override(item: str) -> tuple[str, object]:
    if "=" not in item:
        raise UsageError(f"--set {item!r}: expected key=value", "for example --set num_key_value_heads=64")
    key, text = item.split("=", 1)
    key = key.strip()
    if not key:
        raise UsageError(f"--set {item!r}: empty key")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    return key, value


def apply_overrides(raw: dict, overrides: list[str] | tuple[str, ...]) -> dict:
    """--set key=value on the config; keys nested under text_config go there."""
    out = dict(raw)
    for item in overrides:
        key, value = parse_override(item)
        nested = out.get("text_config")
        if isinstance(nested, dict) and key not in out:
            out["text_config"] = {**nested, key: value}
        else:
            out[key] = value
    return out


def load_model(name: str, *, revision: str | None = None, overrides=()) -> ModelSpec:
    raw, display, source = load_config(name, revision)
    if overrides:
        raw = apply_overrides(raw, overrides)
    return build_model(raw, display, source)


def load_model_and_weights(name: str, *, revision: str | None = None, overrides=(), weights: str | None = "auto"):
    """(ModelSpec, Weights): the cache description and the checkpoint's exact
    bytes (kvplan.weights chooses the reader: GGUF, safetensors, index, bundled,
    Hub headers, else the config estimate)."""
    from .weights.load import resolve

    raw, display, source = load_config(name, revision)
    if overrides:
        raw = apply_overrides(raw, overrides)
    spec = build_model(raw, display, source)
    return spec, resolve(weights, model=spec, raw=raw, source=source, revision=revision)


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
