"""The generator scripts under benchmarks/ as modules, for the tests of their static readers, and a writer of the
small made-up source trees those tests read."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str):
    """benchmarks/<name>.py, executed as a module of that name."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_source(root: Path, rel: str, text: str) -> None:
    """root/rel holding `text` dedented, its folders made."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
