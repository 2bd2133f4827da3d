"""Which config model_types vLLM and SGLang read without --trust-remote-code: read from the released sources.

    python benchmarks/remote_code_tables.py --vllm VLLM_ROOT TRANSFORMERS_ROOT --sglang SGLANG_ROOT TRANSFORMERS_ROOT \
        [--base kvplan/engines/remote_code_data.py] [--out kvplan/engines/remote_code_data.py]

VLLM_ROOT / SGLANG_ROOT hold an unpacked sdist or wheel (ROOT/vllm/ or ROOT/sglang/, and PKG-INFO or
*.dist-info/METADATA for its transformers requirement); TRANSFORMERS_ROOT an unpacked transformers wheel
(TRANSFORMERS_ROOT/transformers/), the newest release the engine release accepts. Nothing is imported; the files
are parsed with `ast`. Each engine may be given several times (one table per release); --base keeps every table of
a module this script wrote before (its releases, requirements, config and tokenizer lists, and their transformers
releases' config types) and adds or replaces the releases given, so a new release is read without the sources of
the others.

vLLM's HFConfigParser.parse (vllm/transformers_utils/config.py) registers its own config class for a model_type
in `_CONFIG_REGISTRY` and then reads the config with trust_remote_code off. SGLang registers every class of its
`_CONFIG_REGISTRY` (sglang/srt/utils/hf_transformers/common.py, keyed by each class's model_type) and a few more
with AutoConfig at import. Any other model_type goes to transformers' AutoConfig.from_pretrained, which uses its
own class for a model_type in CONFIG_MAPPING (models/auto/configuration_auto.py: has_local_code) and runs the
checkpoint's own configuration code (auto_map's AutoConfig) only with trust_remote_code. So a config needs
--trust-remote-code exactly when its model_type is in neither table and its auto_map names an AutoConfig; with
neither table nor auto_map, no flag helps.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from pathlib import Path

VLLM_CONFIG = "vllm/transformers_utils/config.py"
VLLM_VERSION = "vllm/_version.py"
VLLM_TOKENIZERS = "vllm/tokenizers/registry.py"
SGLANG_COMMON = "sglang/srt/utils/hf_transformers/common.py"
SGLANG_CONFIGS = "sglang/srt/configs"
TF_MAPPINGS = "transformers/models/auto/auto_mappings.py"
TF_AUTO = "transformers/models/auto/configuration_auto.py"
TF_VERSION = "transformers/__init__.py"


def _assigned(tree: ast.Module, name: str) -> ast.expr:
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            return node.value
    raise ValueError(f"no module-level {name}")


def _keys(node: ast.expr) -> list[str]:
    """Keys of a dict literal, a dict(...)/LazyConfigDict(...) call with keywords and **{...}, or an
    OrderedDict([...]) of pairs."""
    if isinstance(node, ast.Dict):
        out = []
        for key, value in zip(node.keys, node.values):
            out += _keys(value) if key is None else [key.value]
        return out
    if isinstance(node, ast.Call):
        out = []
        for arg in node.args:
            if isinstance(arg, (ast.List, ast.Tuple)):
                out += [e.elts[0].value for e in arg.elts]
            else:
                out += _keys(arg)
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name):
                continue  # **OTHER_DICT: another module-level name (the caller reads it)
            out += _keys(kw.value) if kw.arg is None else [kw.arg]
        return out
    raise ValueError(f"not a dict this script reads: {ast.unparse(node)[:100]}")


def vllm_types(root: Path) -> tuple[str, str, list[str], list[str]]:
    """(release, its transformers requirement, model_types it registers a config class for, model_types whose
    tokenizer it loads as transformers' TokenizersBackend without asking AutoTokenizer: vllm/tokenizers/registry.py
    _MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS, so their tokenizer code never runs)."""
    version = re.search(r"version\s*=\s*['\"]([^'\"]+)['\"]", (root / VLLM_VERSION).read_text())
    need = _requirement(root)[1]
    tree = ast.parse((root / VLLM_CONFIG).read_text())
    types = _keys(_assigned(tree, "_CONFIG_REGISTRY"))
    types += [v.value for v in _assigned(tree, "_ARCHITECTURE_TO_MODEL_TYPE").values]
    bypass: list[str] = []
    if (root / VLLM_TOKENIZERS).is_file():  # a release before vllm/tokenizers/ has no such list
        node = _assigned(ast.parse((root / VLLM_TOKENIZERS).read_text()), "_MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS")
        bypass = [e.value for e in node.elts]
    return (version.group(1) if version else "?"), need, sorted(set(types)), sorted(set(bypass))


def _requirement(root: Path) -> tuple[str, str]:
    """(the package's version, its transformers requirement) from PKG-INFO or *.dist-info/METADATA."""
    meta = next((p for p in [root / "PKG-INFO", *root.glob("*.dist-info/METADATA")] if p.is_file()), None)
    text = meta.read_text() if meta else ""
    version = re.search(r"^Version: (\S+)", text, re.M)
    need = re.search(r"^Requires-Dist: transformers([^;\n]*)", text, re.M)
    return (version.group(1) if version else "?"), (need.group(1).strip() if need else "?")


def _class_model_types(folder: Path) -> dict[str, set[str]]:
    """{class name: model_types} of every class under folder that sets `model_type = "..."` in its body."""
    out: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:  # model_type = "x" or model_type: str = "x"
                target = item.targets[0] if isinstance(item, ast.Assign) and len(item.targets) == 1 else (
                    item.target if isinstance(item, ast.AnnAssign) else None)
                if (isinstance(target, ast.Name) and target.id == "model_type"
                        and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)):
                    out.setdefault(node.name, set()).add(item.value.value)
    return out


def _name_lists(folder: Path) -> dict[str, list[str]]:
    """{NAME: [class names]} of module-level tuples/lists of names (DEEPSEEK_V41_CONFIG_CLASSES = (A, B))."""
    out: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, (ast.Tuple, ast.List))
                    and node.value.elts and all(isinstance(e, ast.Name) for e in node.value.elts)):
                out[node.targets[0].id] = [e.id for e in node.value.elts]
    return out


def sglang_types(root: Path) -> tuple[str, str, list[str]]:
    """(release, its transformers requirement, model_types SGLang registers a config class for): the classes of
    `_CONFIG_REGISTRY` by their model_type, its string keys set one by one, the tuples it is updated from, and the
    classes registered with AutoConfig.register directly."""
    version, need = _requirement(root)
    classes = _class_model_types(root / SGLANG_CONFIGS)
    lists = _name_lists(root / SGLANG_CONFIGS)
    tree = ast.parse((root / SGLANG_COMMON).read_text())
    names: list[str] = []
    keys: list[str] = []
    registry = _assigned(tree, "_CONFIG_REGISTRY")
    if isinstance(registry, ast.DictComp) and isinstance(registry.generators[0].iter, (ast.List, ast.Tuple)):
        names += [e.id for e in registry.generators[0].iter.elts if isinstance(e, ast.Name)]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript)
                and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "_CONFIG_REGISTRY"
                and isinstance(node.targets[0].slice, ast.Constant)):
            keys.append(node.targets[0].slice.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
            if owner == "_CONFIG_REGISTRY" and node.func.attr == "update" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.DictComp) and isinstance(arg.generators[0].iter, ast.Name):
                    names += lists.get(arg.generators[0].iter.id, [])
            if owner == "AutoConfig" and node.func.attr == "register" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name):
                    names.append(first.value.id)
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register"
                for n in ast.walk(node)):
            names += [e.id for e in node.iter.elts if isinstance(e, ast.Name)]
    types = set(keys)
    for name in names:
        types |= classes.get(name, set())
    return version, need, sorted(types), []  # SGLang asks AutoTokenizer for every tokenizer


def transformers_types(root: Path) -> tuple[str, list[str]]:
    """(release, model_types in CONFIG_MAPPING_NAMES, including those configuration_auto.py adds)."""
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", (root / TF_VERSION).read_text(), re.M)
    types = _keys(_assigned(ast.parse((root / TF_MAPPINGS).read_text()), "CONFIG_MAPPING_NAMES"))
    auto = ast.parse((root / TF_AUTO).read_text())
    try:  # 5.x: CONFIG_MAPPING_NAMES = OrderedDict(**{"gpt-sw3": ...}, **CONFIG_MAPPING_NAMES)
        types += _keys(_assigned(auto, "CONFIG_MAPPING_NAMES"))
    except ValueError:  # a release without that line
        pass
    return (version.group(1) if version else "?"), sorted(set(types))


ENGINES = {
    "vllm": ("vLLM", vllm_types,
             "vllm/transformers_utils/config.py (_CONFIG_REGISTRY, and _ARCHITECTURE_TO_MODEL_TYPE for configs "
             "without a model_type)"),
    "sglang": ("SGLang", sglang_types,
               "sglang/srt/utils/hf_transformers/common.py (_CONFIG_REGISTRY's classes by their model_type, and the "
               "classes it registers with AutoConfig)"),
}


def _block(name: str, items, indent: str = "") -> list[str]:
    lines, line = [indent + name + "frozenset({"], indent + "   "
    for item in sorted(items):
        piece = f" {item!r},"
        if len(line) + len(piece) > 110:
            lines.append(line)
            line = indent + "   "
        line += piece
    return lines + [line, indent + "})"]


# one engine release's table: (transformers release, its transformers requirement, config model_types it
# registers, model_types whose tokenizer it loads without AutoTokenizer)
Table = tuple[str, str, list[str], list[str]]


def _key(release: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in release.split("."))


def render(tables: dict[str, dict[str, Table]], tf: dict[str, list[str]]) -> str:
    """One module: per engine and release its transformers release and requirement, config types and tokenizer
    bypass list; per transformers release its config types, the largest set written whole and each other as that
    set plus / less its differences."""
    releases = {r: set(types) for r, types in tf.items()}
    base = max(releases, key=lambda r: (len(releases[r]), _key(r)))
    lines = ['"""Config model_types vLLM and SGLang read without --trust-remote-code: GENERATED by',
             "benchmarks/remote_code_tables.py, do not edit.", ""]
    for engine, (label, _, where) in ENGINES.items():
        for release, (tf_release, need, _, _) in sorted(tables.get(engine, {}).items(), key=lambda i: _key(i[0])):
            lines += textwrap.wrap(f"{label} {release}: {where}; with transformers {tf_release}, the newest it "
                                   f"accepts (transformers{need}).", 110) + [""]
    lines += ["TABLES[engine][release] = (transformers release, its transformers requirement, the config model_types",
              "the engine registers a class for, the model_types whose tokenizer it loads without AutoTokenizer",
              "(vLLM: vllm/tokenizers/registry.py _MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS), so no tokenizer code",
              "runs). TRANSFORMERS_CONFIG_TYPES: models/auto/auto_mappings.py CONFIG_MAPPING_NAMES of each",
              "transformers release.", '"""', "", "TABLES = {"]
    for engine in ENGINES:
        if engine not in tables:
            continue
        lines.append(f"    {engine!r}: {{")
        for release, (tf_release, need, types, bypass) in sorted(tables[engine].items(), key=lambda i: _key(i[0])):
            lines.append(f"        {release!r}: ({tf_release!r}, {need!r},")
            lines += _block("", types, "            ")
            lines[-1] += ","
            if bypass:
                lines += _block("", bypass, "            ")
                lines[-1] += "),"
            else:
                lines.append("            frozenset()),")
        lines.append("    },")
    lines += ["}", ""]
    lines += _block(f"_{base.replace('.', '_')} = ", releases[base])
    lines += ["TRANSFORMERS_CONFIG_TYPES = {", f"    {base!r}: _{base.replace('.', '_')},"]
    for release, types in sorted(releases.items(), key=lambda i: _key(i[0])):
        if release != base:
            extra, missing = types - releases[base], releases[base] - types
            expr = f"_{base.replace('.', '_')}"
            lines.append(f"    {release!r}: {expr}")
            if extra:
                lines += _block("| ", extra, "        ")
            if missing:
                lines += _block("- ", missing, "        ")
            lines[-1] += ","
    return "\n".join(lines + ["}", ""])


def read_base(path: Path) -> tuple[dict[str, dict[str, Table]], dict[str, list[str]]]:
    """(tables, transformers types) of a module this script wrote (run: it is plain data); the one-release-per-engine
    form it wrote before 2026-12 (ENGINES, TOKENIZER_BYPASS) is read too."""
    import runpy

    data = runpy.run_path(str(path))
    tables: dict[str, dict[str, Table]] = {}
    if "TABLES" in data:
        for engine, by_release in data["TABLES"].items():
            tables[engine] = {r: (t, need, sorted(types), sorted(bypass))
                              for r, (t, need, types, bypass) in by_release.items()}
    else:
        for engine, (release, t, need, types) in data["ENGINES"].items():
            tables[engine] = {release: (t, need, sorted(types), sorted(data["TOKENIZER_BYPASS"][engine]))}
    used = {t for by_release in tables.values() for t, _, _, _ in by_release.values()}
    return tables, {t: sorted(data["TRANSFORMERS_CONFIG_TYPES"][t]) for t in used}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for engine in ENGINES:
        parser.add_argument(f"--{engine}", nargs=2, type=Path, metavar=("ROOT", "TRANSFORMERS_ROOT"), action="append",
                            help="an engine release and the newest transformers it accepts (repeat for several)")
    parser.add_argument("--base", type=Path, help="a module this script wrote: keep its tables, add the releases given")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    tables: dict[str, dict[str, Table]] = {}
    tf: dict[str, list[str]] = {}
    if args.base is not None:
        if not args.base.is_file():
            parser.error(f"--base {args.base}: no such file (give a module this script wrote)")
        tables, tf = read_base(args.base)
    for engine, (label, read, _) in ENGINES.items():
        for root, tf_root in getattr(args, engine) or []:
            release, need, types, bypass = read(root)
            tf_release, tf_types = transformers_types(tf_root)
            tables.setdefault(engine, {})[release] = (tf_release, need, types, bypass)
            tf[tf_release] = tf_types
            print(f"{label} {release} (transformers{need}): {len(types)} config types; transformers {tf_release}: "
                  f"{len(tf_types)}")
    if not tables:
        parser.error("give --vllm and/or --sglang (or --base)")
    if args.out is not None:
        args.out.write_text(render(tables, tf), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
