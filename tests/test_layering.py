"""The layering of docs/architecture.md: the planning core (core/, weights/, techniques/, capacity/) never imports
the engine layer (kvplan/engines), neither at the top of a module nor inside a function. Engines build on the core;
request.py, workflows.py, fit/ and cli/ sit on top and hand the core an engine's placement
(capacity/placement.py Placement) where it must differ from vLLM 0.34's split.

Every module is parsed with ast (nothing is imported), so a lazy import inside a function counts as well."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kvplan"
ENGINE_FREE = ("core", "weights", "techniques", "capacity")


def _engine_imports(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """'path:line: text' of each import of kvplan.engines in the module at `path` (absolute or relative; root: the
    folder that holds the kvplan package)."""
    package = path.relative_to(root).with_suffix("").parts[:-1]  # ('kvplan', 'capacity')
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the module's own package
                base = list(package[:len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from .. import engines` names the package itself
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        if any(name == "kvplan.engines" or name.startswith("kvplan.engines.") for name in names):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_checker_finds_every_spelling(tmp_path):
    """The checker itself: absolute, relative, lazy (inside a function) and `from .. import engines`."""
    module = tmp_path / "kvplan" / "capacity" / "probe.py"
    module.parent.mkdir(parents=True)
    source = ("import kvplan.engines.vllm\n"
              "from ..engines.sglang_groups import moved\n"
              "def f():\n    from ..engines import sglang_report\n    from .. import engines\n"
              "from ..weights.record import Weights\nfrom .shard import stage_bounds\n")
    module.write_text(source, encoding="utf-8")
    got = _engine_imports(module, tmp_path)
    assert [line.split(":")[1] for line in got] == ["1", "2", "4", "5"]


@pytest.mark.parametrize("folder", ENGINE_FREE)
def test_core_layers_do_not_import_engines(folder):
    found = [line for path in sorted((PACKAGE / folder).rglob("*.py")) for line in _engine_imports(path)]
    assert found == [], "engine imports in the engine-free core:\n" + "\n".join(found)


# configs/ reads configs; the one module that still asks the engine layer is pooling_heads.py, whose question
# ("is this architecture a pooling model?") is answered by vLLM's registry (engines/vllm_pooling.py,
# engines/vllm_registry_data.py). Any other engine import in configs/ fails here.
CONFIGS_ENGINE_IMPORTS_ALLOWED = {"pooling_heads.py"}


def test_config_readers_do_not_import_engines():
    found = [line for path in sorted((PACKAGE / "configs").rglob("*.py"))
             if path.name not in CONFIGS_ENGINE_IMPORTS_ALLOWED for line in _engine_imports(path)]
    assert found == [], "engine imports in configs/:\n" + "\n".join(found)
