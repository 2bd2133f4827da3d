"""Typed errors of the planning core, each mapped once (in the CLI) to one line.

Every error carries what is wrong and, where it helps, a hint saying what to do.
"""

from __future__ import annotations


class KvplanError(Exception):
    """Base class: a user-facing problem, reported as one line, exit 1."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(KvplanError):
    """A bad option value or argument: exit 2, like any command-line usage error."""

    exit_code = 2


class ConfigError(KvplanError):
    """A model config that cannot be read or lacks a field kvplan needs."""


class SourceError(KvplanError):
    """A model source (bundled name, file, Hub repo) that cannot be reached."""


class TechniqueError(UsageError):
    """An unknown technique, a bad parameter, or one that cannot apply to the model."""


class PlanError(KvplanError):
    """A plan that cannot work (weights exceed memory, nothing fits)."""


class BudgetExceeded(KvplanError):
    """A plan that breaks a budget given on the command line or in a scenario."""


class WeightsError(KvplanError):
    """A checkpoint file (safetensors, GGUF, index) that cannot be read as exact weights."""


class KvplanWarning(UserWarning):
    """Something the user should know that does not stop the command (one stderr line,
    every time: the CLI shows these with the 'always' filter)."""
