"""Read fields of a Hugging Face config.json: the one validation layer every reader uses.

A family names its fields with transformers' canonical names (`num_hidden_layers`,
`num_key_value_heads`, ...); `aliases` maps a canonical name to the names a family
really writes (GPT-2's `n_layer`, MPT's `attn_config.kv_n_heads`), the way
transformers' `attribute_map` does, and `defaults` fills what a sparse config
leaves out with transformers' defaults.

Every value is checked where it is read: integers are real JSON integers (not
booleans, floats, NaN or strings) within bounds, flags are booleans, lists and
objects have the expected type, and each message names the field, the file, the
model_type and the expected form. Nothing unchecked reaches arithmetic.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import ConfigError

_MISSING = object()

# Upper bounds that no real model comes near; anything above is a typo or junk.
MAX_LAYERS = 10_000
MAX_WIDTH = 10_000_000
MAX_TOKENS = 2**40
MAXIMUM = {
    "num_hidden_layers": MAX_LAYERS,
    "hidden_size": MAX_WIDTH,
    "intermediate_size": 10 * MAX_WIDTH,
    "num_attention_heads": 100_000,
    "num_key_value_heads": 100_000,
    "head_dim": 1_000_000,
    "vocab_size": 100_000_000,
}
DEFAULT_MAXIMUM = MAX_TOKENS


def _lookup(raw: Mapping, name: str) -> tuple[bool, Any]:
    """(present, value) by name; a dotted name reads inside nested objects (attn_config.kv_n_heads)."""
    node: Any = raw
    for part in name.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


class Fields:
    """A config dict with its family's aliases and defaults, for checked reads."""

    def __init__(self, raw: dict, source: str, defaults: Mapping | None = None,
                 aliases: Mapping[str, tuple[str, ...]] | None = None, model_type: str | None = None,
                 text_type: str | None = None):
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: the config is not a JSON object")
        self.raw = raw
        self.defaults = dict(defaults or {})
        self.aliases = dict(aliases or {})
        self.source = source
        self.model_type = model_type or str(raw.get("model_type", "unknown"))
        # the text model's model_type when a multimodal wrapper is saved flat (MiniCPM-V, MiniCPM-o, Isaac): the
        # wrapper's type stays model_type (per-file engine rules key on it), the modules are the text model's
        self.text_type = text_type or self.model_type

    # -- lookup ---------------------------------------------------------------
    def _names(self, names: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for name in names:
            for real in self.aliases.get(name, ()) + (name,):
                if real not in out:
                    out.append(real)
        return out

    def where(self, *names: str) -> str | None:
        """The name under which the config really holds the first of `names` (not null)."""
        for real in self._names(names):
            present, value = _lookup(self.raw, real)
            if present and value is not None:
                return real
        return None

    def has(self, *names: str) -> bool:
        return self.where(*names) is not None

    def get(self, *names: str, default: Any = None) -> Any:
        """Raw value (unchecked): the config's; else, when the config does not name the
        field at all, the family default; else `default`. An explicit null stays null."""
        written = False
        for real in self._names(names):
            present, value = _lookup(self.raw, real)
            if present and value is not None:
                return value
            written = written or present
        if not written:
            for name in names:
                if self.defaults.get(name) is not None:
                    return self.defaults[name]
        return default

    def _fail(self, name: str, value: Any, expected: str) -> ConfigError:
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return ConfigError(
            f"{self.source}: {name!r} must be {expected}, got {shown} (model_type {self.model_type!r})",
            f"fix the config or pass --set {name}=VALUE",
        )

    def _missing(self, name: str) -> ConfigError:
        return ConfigError(
            f"{self.source}: config (model_type {self.model_type!r}) has no {name!r}",
            f"add {name!r} to the config or pass --set {name}=VALUE",
        )

    # -- typed reads ----------------------------------------------------------
    def int(self, *names: str, default: Any = _MISSING, minimum: int = 1, maximum: int | None = None) -> int:
        """A JSON integer within [minimum, maximum]."""
        value = self.get(*names)
        name = self.where(*names) or names[0]
        if value is None:
            if default is _MISSING or default is ...:
                raise self._missing(names[0])
            return default
        return self.check_int(name, value, minimum, maximum)

    def check_int(self, name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
        if maximum is None:
            maximum = MAXIMUM.get(name.split(".")[-1], DEFAULT_MAXIMUM)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) < 2**53:
                raise self._fail(name, value, "an integer (written without a decimal point)")
            raise self._fail(name, value, "an integer")
        if value < minimum:
            raise self._fail(name, value, f">= {minimum}")
        if value > maximum:
            raise self._fail(name, value, f"<= {maximum:,}")
        return value

    def opt_int(self, *names: str, minimum: int = 1, maximum: int | None = None) -> int | None:
        """An integer, or None when absent or null."""
        return self.int(*names, default=None, minimum=minimum, maximum=maximum)

    def number(self, *names: str, default: Any = _MISSING, minimum: float = 0.0, positive: bool = True) -> float:
        """A finite JSON number (int or float)."""
        value = self.get(*names)
        name = self.where(*names) or names[0]
        if value is None:
            if default is _MISSING:
                raise self._missing(names[0])
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self._fail(name, value, "a finite number")
        if value < minimum or (positive and value <= 0) or value > MAX_WIDTH:
            raise self._fail(name, value, "a positive number" if positive else f">= {minimum}")
        return float(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise self._fail(self.where(name) or name, value, "true or false")

    def text(self, *names: str, default: Any = None) -> str | None:
        value = self.get(*names)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._fail(self.where(*names) or names[0], value, "a string")
        return value

    def list(self, name: str, length: int | None = None, default: Any = None) -> list | None:
        """A JSON list (of `length` entries when given), or `default` when absent."""
        value = self.get(name)
        if value is None:
            return default
        real = self.where(name) or name
        if not isinstance(value, list):
            raise self._fail(real, value, "a list" + (f" of {length} entries" if length is not None else ""))
        if length is not None and len(value) != length:
            raise ConfigError(
                f"{self.source}: {real!r} must list {length} entries (one per layer), got {len(value)} "
                f"(model_type {self.model_type!r})",
                f"fix the config or pass --set {real}=[...]",
            )
        return value

    def int_list(self, name: str, length: int | None = None, minimum: int = 0, maximum: int | None = None) -> list[int] | None:
        values = self.list(name, length)
        if values is None:
            return None
        real = self.where(name) or name
        return [self.check_int(f"{real}[{i}]", v, minimum, maximum) for i, v in enumerate(values)]

    def obj(self, name: str) -> dict | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self._fail(name, value, "a JSON object")
        return value

    def sub(self, name: str, defaults: Mapping | None = None) -> "Fields":
        nested = self.obj(name) or {}
        return Fields(nested, self.source, defaults, model_type=str(nested.get("model_type", self.model_type)))
