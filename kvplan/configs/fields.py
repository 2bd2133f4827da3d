"""Read fields of a Hugging Face config.json with errors that name the field."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError


class Fields:
    """A config dict plus the model_type and source, for error messages."""

    def __init__(self, raw: dict, source: str, defaults: dict | None = None):
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: the config is not a JSON object")
        self.raw = raw
        self.defaults = defaults or {}
        self.source = source
        self.model_type = str(raw.get("model_type", "unknown"))

    def has(self, *names: str) -> bool:
        return any(self.raw.get(n) is not None for n in names)

    def get(self, *names: str, default: Any = None) -> Any:
        for name in names:
            if self.raw.get(name) is not None:
                return self.raw[name]
        for name in names:
            if self.defaults.get(name) is not None:
                return self.defaults[name]
        return default

    def int(self, *names: str, default: Any = ..., minimum: int = 1) -> int:
        value = self.get(*names)
        if value is None:
            if default is ...:
                raise ConfigError(
                    f"{self.source}: config (model_type {self.model_type!r}) has no {names[0]!r}",
                    f"add {names[0]!r} to the config or pass --set {names[0]}=VALUE",
                )
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            raise ConfigError(
                f"{self.source}: {names[0]!r} must be an integer, got {value!r} (model_type {self.model_type!r})"
            )
        if int(value) < minimum:
            raise ConfigError(
                f"{self.source}: {names[0]!r} must be >= {minimum}, got {value!r} (model_type {self.model_type!r})"
            )
        return int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name)
        return default if value is None else bool(value)

    def sub(self, name: str, defaults: dict | None = None) -> "Fields":
        nested = self.raw.get(name)
        if not isinstance(nested, dict):
            nested = {}
        merged_type = nested.get("model_type")
        sub = Fields(nested, self.source, defaults)
        if merged_type is None:
            sub.model_type = self.model_type
        return sub
