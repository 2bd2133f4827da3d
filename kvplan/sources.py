"""Where configs come from: bundled copies, local files or folders, the Hugging Face Hub.

I/O lives here and nowhere else in the planning path. huggingface_hub is
imported only when a Hub lookup is needed, to keep `kvplan estimate` fast.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .configs import build_model
from .core.model import ModelSpec
from .errors import ConfigError, SourceError, UsageError


@dataclass(frozen=True)
class BundledEntry:
    alias: str
    hf_id: str
    notes: str = ""


def _specs_dir():
    return resources.files("kvplan.model_specs")


@lru_cache(maxsize=1)
def bundled_index() -> dict[str, BundledEntry]:
    """alias -> entry, from model_specs/index.json."""
    raw = json.loads((_specs_dir() / "index.json").read_text(encoding="utf-8"))
    return {alias: BundledEntry(alias, meta.get("hf_id", alias), meta.get("notes", "")) for alias, meta in raw.items()}


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
    except IsADirectoryError:
        raise SourceError(f"{path}: is a folder, not a JSON file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_json_text(text, str(path))


def parse_json_text(text: str, where: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(f"{where}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object, found {type(data).__name__}")
    return data


def _hub_config(repo_id: str, revision: str | None) -> tuple[dict, str]:
    """A Hub repo's config.json: one bounded request, or the local HF cache (kvplan/hub.py)."""
    from .hub import config_text

    text, source = config_text(repo_id, revision)
    return parse_json_text(text, source), source


def load_config(name: str, revision: str | None = None) -> tuple[dict, str, str]:
    """(raw config, display name, source) for a bundled name, a path, or a Hub repo id."""
    path = Path(name).expanduser()
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


def offline() -> bool:
    from .hub import offline as hub_offline

    return hub_offline()
