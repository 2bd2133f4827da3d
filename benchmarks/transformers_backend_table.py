"""Which model classes a transformers release exports, and whether vLLM's Transformers backend would take each.

    python benchmarks/transformers_backend_table.py SRC [--out kvplan/engines/vllm_tf_backend_data.py]
    python benchmarks/transformers_backend_table.py SRC --styles --out kvplan/engines/tf_classes_5_19_0.py

SRC is an unpacked transformers sdist's src/transformers folder (transformers is never imported: every file is
read with `ast`). vLLM 0.34 model_executor/models/registry.py ModelRegistry._try_resolve_transformers falls back,
for an architecture it does not register, to `getattr(transformers, architecture)` and takes it when the class is
a PreTrainedModel with

- `is_backend_compatible()` (transformers modeling_utils.py PreTrainedModel: the class attribute
  `_supports_attention_backend`, False on PreTrainedModel), or
- `_can_set_attn_implementation()` (modeling_utils.py: the source of the module that defines the class; when it
  has a `class *Attention*(nn.Module):` line, whether it calls `ALL_ATTENTION_FUNCTIONS.get_interface(`, else
  True; a class may override the method, as modeling_layers.py's MTP wrapper does with `return True`).

For every class in a models/*/modeling_*.py `__all__` (what `transformers.<Name>` resolves to) that reaches
PreTrainedModel through its bases, the script reads both, following bases and imports across the sources. It also
reads whether the class's config class (its `config: XConfig` annotation or `config_class`) has a non-empty
`base_model_tp_plan`, which the backend follows to shard its linears (vLLM 0.34 transformers/base.py
_recursive_replace; linears it does not name are replicated, and with no plan at TP > 1 the fusers decide), and
whether it has sub-configs (`sub_configs_defaults` or `sub_configs`: a multimodal wrapper, whose plan is left
unread: None).

With --styles each row also names the styles of that plan (sorted) and whether the config class defines
num_key_value_heads (an attribute_map key, a class attribute, or `self.num_key_value_heads =` in a method):
SGLang's Transformers fallback reads both, and pins other transformers releases (kvplan.engines.sglang_served:
0.5.9 transformers 4.57.1, 0.5.23 5.19.0, each read from a wheel's transformers/ folder, which holds the same
sources as the sdist; 4.x spells the config base PretrainedConfig).

Without --out it prints a summary.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

BASE = ("transformers.modeling_utils", "PreTrainedModel")
# PreTrainedConfig; transformers 4.x spells it PretrainedConfig
CONFIG_BASES = {("transformers.configuration_utils", "PreTrainedConfig"),
                ("transformers.configuration_utils", "PretrainedConfig")}
ATTENTION_CLASS = re.compile(r"^class \w*Attention\w*\(nn\.Module\):", re.M)  # modeling_utils.py's heuristic
INTERFACE = "ALL_ATTENTION_FUNCTIONS.get_interface("


class Module:
    def __init__(self, name: str, path: Path):
        self.name = name
        self.source = path.read_text()
        self.tree = ast.parse(self.source)
        self.package = name.rsplit(".", 1)[0]
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        self.classes: dict[str, ast.ClassDef] = {}
        self.exported: list[str] = []
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom):
                base = self._absolute(node)
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1
                  and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__all__"
                  and isinstance(node.value, (ast.List, ast.Tuple))):
                self.exported = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        # the attention heuristic reads the defining module's whole source (inspect.getsource)
        self.can_set = INTERFACE in self.source if ATTENTION_CLASS.search(self.source) else True

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module
        parts = self.name.split(".")[: -node.level]
        return ".".join(parts + ([node.module] if node.module else []))


class Sources:
    def __init__(self, root: Path):
        self.root = root
        self.modules: dict[str, Module] = {}

    def module(self, name: str) -> Module | None:
        if name not in self.modules:
            rel = name.split(".")[1:]
            path = self.root.joinpath(*rel).with_suffix(".py") if rel else None
            self.modules[name] = Module(name, path) if path is not None and path.is_file() else None
        return self.modules[name]

    def resolve(self, module: Module, expr: ast.expr) -> tuple[str, str] | None:
        """(module, class) an expression in `module` names (a Name or a dotted Attribute of an import)."""
        if isinstance(expr, ast.Name):
            if expr.id in module.classes:
                return module.name, expr.id
            return module.imports.get(expr.id)
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):  # a string annotation
            return self.resolve(module, ast.Name(expr.value))
        return None

    def mro(self, ref: tuple[str, str], seen=None):
        """(module, ClassDef) of ref and its bases, depth first (left first), each once; a base that cannot be
        read yields (None, None) and stops that branch."""
        seen = set() if seen is None else seen
        if ref in seen:
            return
        seen.add(ref)
        module = self.module(ref[0])
        node = module.classes.get(ref[1]) if module else None
        if node is None:
            if module is not None and ref[1] in module.imports:  # re-exported
                yield from self.mro(module.imports[ref[1]], seen)
                return
            yield ref, None, None
            return
        yield ref, module, node
        for base in node.bases:
            target = self.resolve(module, base)
            if target is None:
                continue  # e.g. nn.Module, GenerationMixin attribute access
            yield from self.mro(target, seen)


def _assigned(node: ast.ClassDef, name: str):
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return stmt.value
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return stmt.value if stmt.value is not None else stmt.annotation
    return None


def _method(node: ast.ClassDef, name: str):
    return next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def read_class(sources: Sources, ref: tuple[str, str]):
    """(is a PreTrainedModel, _supports_attention_backend, _can_set_attn_implementation, tp plan, sub_configs, the
    plan's styles, num_key_value_heads on the config) of a class;
    None where a value cannot be read."""
    chain = list(sources.mro(ref))
    refs = [r for r, _, _ in chain]
    if BASE not in refs:
        return None
    backend = can_set = config = None
    backend_done = can_set_done = config_done = False
    for r, module, node in chain:
        if r == BASE:
            backend = False if not backend_done else backend
            backend_done = True
            if not can_set_done:
                can_set, can_set_done = sources.module(ref[0]).can_set, True
            break
        if node is None:
            break  # an unread base before PreTrainedModel: leave what is not yet read unknown
        value = _assigned(node, "_supports_attention_backend")
        if value is not None and not backend_done:
            backend = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else None
            backend_done = True
        method = _method(node, "_can_set_attn_implementation")
        if method is not None and not can_set_done:
            body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            simple = (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant))
            can_set, can_set_done = (body[0].value.value if simple else None), True
        for attr in ("config", "config_class"):
            value = _assigned(node, attr)
            if value is not None and not config_done:
                config, config_done = sources.resolve(module, value), True
    return (True, backend, can_set, tp_plan(sources, config) if config else None,
            wrapper(sources, config) if config else None, plan_styles(sources, config) if config else None,
            kv_heads(sources, config) if config else None)


def _sub_configs(node: ast.ClassDef):
    """A config class's own sub-config dict: `sub_configs_defaults` (transformers 5.2x configuration_utils.py
    PreTrainedConfig, which derives `sub_configs` from it) or the older `sub_configs`."""
    value = _assigned(node, "sub_configs_defaults")
    return value if value is not None else _assigned(node, "sub_configs")


def wrapper(sources: Sources, ref: tuple[str, str]) -> bool | None:
    """Whether a config class has non-empty sub_configs (a multimodal wrapper: vLLM's hf_text_config is then
    another config, config/model.py _get_transformers_backend_cls picks TransformersMultiModal*)."""
    for r, module, node in sources.mro(ref):
        if r in CONFIG_BASES:
            return False
        if node is None:
            return None
        value = _sub_configs(node)
        if value is not None:
            return bool(value.keys) if isinstance(value, ast.Dict) else None
    return None


def _plan(sources: Sources, ref: tuple[str, str]):
    """A config class's own base_model_tp_plan, the first along its bases: an ast.Dict, False (none: None, or
    PreTrainedConfig's), or None (a wrapper with sub_configs, or unread)."""
    for r, module, node in sources.mro(ref):
        if r in CONFIG_BASES:
            return False
        if node is None:
            return None
        value = _sub_configs(node)
        if value is not None and not (isinstance(value, ast.Dict) and not value.keys):
            return None
        value = _assigned(node, "base_model_tp_plan")
        if value is not None:
            if isinstance(value, ast.Dict):
                return value
            if isinstance(value, ast.Constant) and value.value is None:
                return False
            return None
    return None


def tp_plan(sources: Sources, ref: tuple[str, str]) -> bool | None:
    """Whether a config class has a non-empty base_model_tp_plan (None: a wrapper with sub_configs, or unread)."""
    plan = _plan(sources, ref)
    return bool(plan.keys) if isinstance(plan, ast.Dict) else plan


def plan_styles(sources: Sources, ref: tuple[str, str]) -> tuple[str, ...] | None:
    """The styles a config class's base_model_tp_plan names, sorted (() none; None: a wrapper, a value that is not
    a string, or unread). SGLang's Transformers fallback reads them: 0.5.23 srt/models/transformers.py
    _normalize_tp_style raises for a style it does not know, 0.5.9 TransformersForCausalLM.tensor_parallel shards
    "colwise" and "rowwise" only."""
    plan = _plan(sources, ref)
    if not isinstance(plan, ast.Dict):
        return () if plan is False else None
    if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in plan.values):
        return None
    return tuple(sorted({v.value for v in plan.values}))


def kv_heads(sources: Sources, ref: tuple[str, str]) -> bool | None:
    """Whether a config class gives its instances num_key_value_heads whatever config.json holds (SGLang 0.5.9
    srt/models/transformers.py TransformersForCausalLM.__init__ reads config.num_key_value_heads): an attribute_map
    key, a class attribute or annotation, or a `self.num_key_value_heads =` in any of its methods, along its bases
    (None: a base not read)."""
    name = "num_key_value_heads"
    for r, module, node in sources.mro(ref):
        if r in CONFIG_BASES:
            return False
        if node is None:
            return None
        mapped = _assigned(node, "attribute_map")
        if isinstance(mapped, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == name for k in mapped.keys):
            return True
        if _assigned(node, name) is not None:
            return True
        for sub in ast.walk(node):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] if isinstance(
                sub, (ast.AnnAssign, ast.AugAssign)) else []
            if any(isinstance(t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name)
                   and t.value.id == "self" for t in targets):
                return True
    return None


def build(root: Path, styles: bool = False) -> tuple[str, dict[str, tuple]]:
    """(transformers release, class name -> its row); styles: add the columns SGLang's fallback reads (the plan's
    styles, num_key_value_heads on the config)."""
    version = re.search(r'^__version__\s*=\s*"([^"]+)"', (root / "__init__.py").read_text(), re.M).group(1)
    sources = Sources(root)
    table = {}
    for path in sorted((root / "models").glob("*/modeling_*.py")):
        name = "transformers.models." + path.parent.name + "." + path.stem
        module = sources.module(name)
        for exported in module.exported:
            if exported not in module.classes:
                continue
            read = read_class(sources, (name, exported))
            if read is None:
                continue
            _, backend, can_set, plan, wrapped, named, kv = read
            if exported in table:
                sys.exit(f"{exported} is exported by two modules")
            table[exported] = (path.parent.name, backend, can_set, plan, wrapped) + ((named, kv) if styles else ())
    return version, table


def write(version: str, table: dict, out: Path, styles: bool = False) -> None:
    lines = [
        '"""Generated by benchmarks/transformers_backend_table.py from the transformers '
        f'{version} sources: do not edit.',
        "",
        "ARCHITECTURES: class name -> (model folder, _supports_attention_backend, _can_set_attn_implementation,",
        "a non-empty base_model_tp_plan on its config, non-empty sub_configs on its config"
        + (",\nthe styles that plan names (sorted), whether the config class defines num_key_value_heads)" if styles
           else ")") + " for every",
        "PreTrainedModel class a models/*/modeling_*.py exports; None where the script could not read a value.",
        '"""',
        "",
        f'TRANSFORMERS_RELEASE = "{version}"',
        "",
        "ARCHITECTURES = {",
    ]
    lines += [f"    {name!r}: {value!r}," for name, value in sorted(table.items())]
    lines += ["}", ""]
    out.write_text("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="an unpacked transformers sdist's src/transformers")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--styles", action="store_true",
                        help="add what SGLang's fallback reads: the styles of the config's base_model_tp_plan and "
                        "whether the config class defines num_key_value_heads")
    args = parser.parse_args(argv)
    if not (args.src / "modeling_utils.py").is_file():
        print(f"{args.src} is not a transformers source folder (no modeling_utils.py)", file=sys.stderr)
        return 2
    version, table = build(args.src, args.styles)
    if args.out:
        write(version, table, args.out, args.styles)
    compatible = sum(1 for _, b, c, *_ in table.values() if b or c)
    unread = sum(1 for _, b, c, *_ in table.values() if not (b or c) and None in (b, c))
    print(f"transformers {version}: {len(table)} model classes, {compatible} backend-compatible, "
          f"{unread} unread")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
