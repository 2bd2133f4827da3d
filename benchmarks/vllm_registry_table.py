"""Which vLLM release registers which model architecture: read from the released sources.

    python benchmarks/vllm_registry_table.py /tmp/vsrc [--out kvplan/engines/vllm_registry_data.py]
    python benchmarks/vllm_registry_table.py ROOT --base kvplan/engines/vllm_registry_data.py [--out ...]

ROOT holds one unpacked vLLM wheel per release, each as ROOT/<dir>/vllm/ (the directory name does not
matter: the release is read from vllm/_version.py). For every release from 0.11.0 on, the script parses
vllm/model_executor/models/registry.py with `ast` (vLLM is never imported) and reads, per architecture
name (a Hugging Face config's `architectures[0]`):

- native: a key of `_VLLM_MODELS` whose module is not "transformers" (the text-generation, embedding,
  cross-encoder / classification / reward, multimodal and speculative-decoding dicts it merges; the
  embedding dict's comprehension over the text-generation models is expanded);
- transformers: a key of `_TRANSFORMERS_SUPPORTED_MODELS` (vLLM serves it only through its
  Transformers backend);
- anything else: not registered (vLLM 0.20+ also lists some in `_PREVIOUSLY_SUPPORTED_MODELS` /
  `_OOT_SUPPORTED_MODELS`; those only change its error message, so they are not read).

--base adds the releases under ROOT to a table this script wrote before (the module's RELEASES and REGISTRY,
read with `ast`, give each earlier release's two sets back exactly), so a new release needs only its own
registry.py unpacked. A release both in the table and under ROOT must read the same, or the script stops.

It writes a Python module with, per architecture, the spans of releases in which it is native and in
which it is Transformers-backend only, as (first release, first release without it or None). Without
--out it prints a summary.

Pipeline parallelism: where a release's model sources are unpacked too (vllm/model_executor/models/*.py and
vllm/models/, as in an sdist), each registered class is followed statically through its bases and the imports
under those two folders (platform branches as on CUDA, TYPE_CHECKING false unless a module __getattr__ loads the
class lazily, adapters.py as_*_model(cls) as cls) to tell whether vLLM's interfaces.py supports_pp holds:
SupportsPP in the MRO and a forward taking intermediate_tensors. The module gets PP_RELEASES (the releases read),
NO_PP and PP_UNREAD (spans over PP_RELEASES); --base keeps the releases read before.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import re
import textwrap
import sys
from pathlib import Path

REGISTRY = "vllm/model_executor/models/registry.py"
FIRST = (0, 11, 0)
BACKEND_DICTS = ("_TRANSFORMERS_SUPPORTED_MODELS", "_TRANSFORMERS_BACKEND_MODELS")


def release_of(root: Path) -> tuple[int, int, int] | None:
    """The release an unpacked wheel at root/vllm is, from vllm/_version.py (None: not a release)."""
    path = root / "vllm" / "_version.py"
    if not path.is_file():
        return None
    match = re.search(r"^__version__\s*=\s*version\s*=\s*['\"](\d+)\.(\d+)\.(\d+)['\"]", path.read_text(), re.M)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _dicts(tree: ast.Module) -> dict[str, ast.expr]:
    out = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and node.value is not None:
            out[target.id] = node.value
    return out


def _entries(node: ast.expr, names: dict[str, ast.expr], where: str) -> dict[str, tuple[str, str]]:
    """{architecture: (module, class)} of a dict literal, following ** of other module-level dicts."""
    if isinstance(node, ast.Name):
        return _entries(names[node.id], names, where)
    if isinstance(node, ast.DictComp):
        # {k: (mod, arch) for k, (mod, arch) in _OTHER.items() [if ...]}: keys and modules of _OTHER (the
        # filter is ignored: those keys are in _OTHER, itself merged into _VLLM_MODELS, so the union is the same)
        gen = node.generators[0]
        if (len(node.generators) == 1 and isinstance(gen.iter, ast.Call)
                and isinstance(gen.iter.func, ast.Attribute) and gen.iter.func.attr == "items"
                and isinstance(node.key, ast.Name) and isinstance(gen.target, ast.Tuple)
                and isinstance(gen.target.elts[0], ast.Name) and gen.target.elts[0].id == node.key.id):
            return _entries(gen.iter.func.value, names, where)
        raise ValueError(f"{where}: a dict comprehension this script does not read: {ast.unparse(node)[:120]}")
    if not isinstance(node, ast.Dict):
        raise ValueError(f"{where}: not a dict literal: {ast.unparse(node)[:120]}")
    out: dict[str, tuple[str, str]] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            out.update(_entries(value, names, where))
            continue
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ValueError(f"{where}: a key that is not a string: {ast.unparse(key)}")
        if (isinstance(value, ast.Tuple) and len(value.elts) >= 2
                and all(isinstance(e, ast.Constant) for e in value.elts[:2])):
            out[key.value] = (str(value.elts[0].value), str(value.elts[1].value))
        else:
            raise ValueError(f"{where}: {key.value}'s value is not (module, class): {ast.unparse(value)[:120]}")
    return out


def read_registry(path: Path) -> tuple[set[str], set[str]]:
    """(native architectures, Transformers-backend-only architectures) of one release's registry.py."""
    native, supported, _ = read_registry_classes(path)
    return native, supported


def read_registry_classes(path: Path) -> tuple[set[str], set[str], dict[str, tuple[str, str]]]:
    """read_registry's two sets and {architecture: (module, class)} of every architecture in either."""
    names = _dicts(ast.parse(path.read_text(), str(path)))
    every = _entries(names["_VLLM_MODELS"], names, str(path))
    backend = set()
    for name in BACKEND_DICTS:
        if name in names:
            backend |= set(_entries(names[name], names, str(path)))
    supported = set(_entries(names["_TRANSFORMERS_SUPPORTED_MODELS"], names, str(path))) \
        if "_TRANSFORMERS_SUPPORTED_MODELS" in names else set()
    native = {arch for arch, (module, _) in every.items() if arch not in backend and module != "transformers"}
    classes = dict(every)
    for name in BACKEND_DICTS:
        if name in names:
            classes.update(_entries(names[name], names, str(path)))
    return native, supported, {arch: classes[arch] for arch in native | supported}


# --- pipeline parallelism: does the registered class implement SupportsPP? -------------------------------------
# vLLM (0.34 config/model.py ModelConfig.verify_with_parallel_config) refuses pipeline_parallel_size > 1 unless
# ModelRegistry.is_pp_supported_model (registry.py) says the class supports it: _ModelInfo.from_model_cls sets
# supports_pp = interfaces.supports_pp(cls), True when SupportsPP is in the class's MRO (or the class carries the
# protocol's attributes) and its forward accepts `intermediate_tensors` (func_utils.supports_kw: that keyword or
# **kwargs). Read here without importing vLLM: the class and its bases are followed through the imports of the
# modules under vllm/ (a base from outside vllm/, such as torch's nn.Module, is neither SupportsPP nor read further).
SEARCHED = ("vllm/model_executor/models", "vllm/models")


CUDA_TRUE = {"is_cuda", "is_cuda_alike"}
CUDA_FALSE = {"is_rocm", "is_xpu", "is_cpu", "is_tpu", "is_hpu", "is_neuron", "is_out_of_tree", "is_mps"}


def _truth(test: ast.expr, typing: bool = False) -> bool | None:
    """An `if` test's value when vLLM runs on an NVIDIA GPU: TYPE_CHECKING is False at run time (True with
    `typing`), current_platform.is_cuda() True, is_rocm() / is_xpu() / is_cpu() ... False; None: not known (both
    branches are read)."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return typing
    if isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        return typing
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, typing)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and not test.args:
        if test.func.attr in CUDA_TRUE:
            return True
        if test.func.attr in CUDA_FALSE:
            return False
    return None


def _bound(node: ast.stmt) -> set[str]:
    """The names a module-level assignment or import binds."""
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name for alias in node.names}
    return set()


class _Unread(Exception):
    """A class the static reader could not find: its PP support is left unknown."""


def _module_path(src: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")
    for path in (src.joinpath(*parts).with_suffix(".py"), src.joinpath(*parts, "__init__.py")):
        if path.is_file():
            return path
    return None


class _Classes:
    """Static class lookup over one release's vllm/ (src: the folder holding vllm/)."""

    def __init__(self, src: Path):
        self.src = src
        self._trees: dict[str, ast.Module] = {}
        self._pp: dict[tuple[str, str], bool] = {}

    def _tree(self, dotted: str) -> ast.Module | None:
        if dotted not in self._trees:
            path = _module_path(self.src, dotted)
            inside = path is not None and any(
                str(path.relative_to(self.src)).startswith(root + "/") for root in SEARCHED)
            self._trees[dotted] = ast.parse(path.read_text(), str(path)) if inside else None
        return self._trees[dotted]

    def _statements(self, tree: ast.Module, typing: bool = False):
        """Module-level statements in order, entering if/try blocks: a branch that runs on CUDA (_truth), both
        where the test is not known."""
        stack = list(reversed(tree.body))
        while stack:
            node = stack.pop()
            if isinstance(node, ast.If):
                truth = _truth(node.test, typing)
                inner = (node.body if truth is not False else []) + (node.orelse if truth is not True else [])
                stack.extend(reversed(inner))
            elif isinstance(node, ast.Try):
                inner = node.body + [s for h in node.handlers for s in h.body] + node.orelse
                stack.extend(reversed(inner))
            else:
                yield node

    def find_all(self, module: str, name: str, depth: int = 0) -> list[tuple[str, ast.ClassDef] | None]:
        """Every (module, ClassDef) `name` can be in `module`, one per platform branch (if/else, TYPE_CHECKING)
        that defines or imports it; None for one from outside vllm/ (not read). `Name = None` (a class a
        platform lacks) is skipped."""
        if depth > 20:
            raise _Unread(f"{module}.{name}: import chain too long")
        tree = self._tree(module)
        if tree is None:
            return [None]
        is_package = _module_path(self.src, module).name == "__init__.py"
        found: list = []
        lazy = any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body)
        statements = list(self._statements(tree))
        if lazy and not any(getattr(node, "name", None) == name or name in _bound(node) for node in statements):
            # a module __getattr__ imports it on first lookup (vllm/models/step5, inkling, flint): the module's
            # TYPE_CHECKING imports name the same classes, read as a type checker would (platform tests as on CUDA)
            statements = list(self._statements(tree, typing=True))
        for node in statements:
            if isinstance(node, ast.ClassDef) and node.name == name:
                found.append((module, node))
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                value = node.value
                if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                        and value.func.id.startswith("as_") and len(value.args) == 1 and not value.keywords):
                    value = value.args[0]  # adapters.py as_embedding_model(cls) / as_seq_cls_model(cls): a subclass
                if isinstance(value, ast.Name):
                    found += self.find_all(module, value.id, depth + 1)
                elif not (isinstance(node.value, ast.Constant) and node.value.value is None):
                    raise _Unread(f"{module}.{name}: assigned from {ast.unparse(node.value)[:60]}")
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        origin = self._origin(module, node, is_package)
                        if _module_path(self.src, f"{origin}.{alias.name}") is not None:
                            raise _Unread(f"{module}.{name}: a module, not a class")
                        found += self.find_all(origin, alias.name, depth + 1)
        if not found and name in dir(builtins):
            return [None]  # object, ...: not read
        if not found:
            raise _Unread(f"{module}: no class {name}")
        return found

    def find(self, module: str, name: str) -> tuple[str, ast.ClassDef] | None:
        """The first of find_all (a base class: platform branches of a base are not compared)."""
        return self.find_all(module, name)[0]

    def _origin(self, module: str, node: ast.ImportFrom, is_package: bool) -> str:
        if not node.level:
            return node.module or ""
        package = module.split(".")
        package = package[: len(package) - node.level + (1 if is_package else 0)]
        return ".".join(package + ([node.module] if node.module else []))

    def _base(self, module: str, base: ast.expr) -> tuple[str, str] | None:
        """(module, name) a base expression names; None: not a plain name (a call, a generic's argument...)."""
        if isinstance(base, ast.Subscript):
            return self._base(module, base.value)  # Generic[...] / SupportsX[...]
        if (isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id.startswith("as_")
                and len(base.args) == 1 and not base.keywords):
            return self._base(module, base.args[0])  # adapters.py as_embedding_model(cls): a subclass of cls
        if isinstance(base, ast.Name):
            return module, base.id
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            # module_alias.Class: resolve the alias through `import a.b as alias` / `from a import b`
            tree = self._tree(module)
            for node in self._statements(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if (alias.asname or alias.name) == base.value.id:
                            return alias.name, base.attr
                if isinstance(node, ast.ImportFrom):
                    is_package = _module_path(self.src, module).name == "__init__.py"
                    for alias in node.names:
                        if (alias.asname or alias.name) == base.value.id:
                            return f"{self._origin(module, node, is_package)}.{alias.name}", base.attr
            return None
        return None

    def mro(self, module: str, name: str, found: tuple[str, ast.ClassDef] | None = None) -> list:
        """The classes read under vllm/ in C3 order (classes from outside vllm/ are left out: none of them is
        SupportsPP or, for the check below, a forward that takes intermediate_tensors)."""
        found = found or self.find(module, name)
        if found is None:
            return []
        where, node = found
        parents = []
        for base in node.bases:
            named = self._base(where, base)
            if named is None:
                continue
            parent = self.mro(*named)
            if parent:
                parents.append(parent)
        return [(where, node)] + _merge([list(p) for p in parents] + [[p[0] for p in parents]])

    def supports_pp(self, module: str, name: str) -> bool:
        key = (module, name)
        if key not in self._pp:
            answers = set()
            for found in self.find_all(module, name):  # one per platform branch: they must agree
                if found is None:
                    raise _Unread(f"{module}.{name}: not found under vllm/")
                chain = self.mro(module, name, found)
                pp = any(node.name == "SupportsPP" and where.endswith("models.interfaces") for where, node in chain)
                answers.add(pp and _forward_takes_intermediate(chain))
            if len(answers) > 1:
                raise _Unread(f"{module}.{name}: its platform branches disagree")
            self._pp[key] = answers.pop()
        return self._pp[key]


def _merge(seqs: list[list]) -> list:
    """C3 linearisation's merge (Python's MRO), on (module, ClassDef) pairs compared by identity."""
    out: list = []
    seqs = [s for s in seqs if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head[1] is other[1] for s in seqs for other in s[1:]):
                break
        else:
            raise _Unread("no consistent MRO")
        out.append(head)
        seqs = [[c for c in s if c[1] is not head[1]] for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def _forward_takes_intermediate(chain: list[tuple[str, ast.ClassDef]]) -> bool:
    """The first `forward` along the MRO accepts intermediate_tensors by keyword (func_utils.supports_kw)."""
    for _, node in chain:
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward":
                args = item.args
                named = [a.arg for a in args.args + args.kwonlyargs]
                return "intermediate_tensors" in named or args.kwarg is not None
            if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "forward"
                                                     for t in item.targets):
                raise _Unread(f"{node.name}.forward is assigned, not defined")
    return False


def read_pp(src: Path, entries: dict[str, tuple[str, str]]) -> tuple[set[str], set[str]]:
    """(architectures whose class does not support PP, architectures not read) of one release: src holds vllm/,
    entries is {architecture: (module as in registry.py, class)}."""
    classes = _Classes(src)
    without, unread = set(), set()
    for arch, (module, cls) in entries.items():
        dotted = module if module.startswith("vllm.") else f"vllm.model_executor.models.{module}"
        try:
            if not classes.supports_pp(dotted, cls):
                without.add(arch)
        except _Unread as err:
            print(f"{arch}: PP support not read ({err})", file=sys.stderr)
            unread.add(arch)
    return without, unread


def spans(present: list[bool], releases: list[str]) -> list[tuple[str, str | None]]:
    out, start = [], None
    for i, here in enumerate(present + [False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            out.append((releases[start], releases[i] if i < len(releases) else None))
            start = None
    return out


def _text(v: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in v)


def _version(text: str) -> tuple[int, int, int]:
    major, minor, patch = (int(p) for p in text.split("."))
    return major, minor, patch


def read_table(path: Path) -> dict[tuple[int, int, int], tuple[set[str], set[str]]]:
    """{release: (native, Transformers-backend-only)} of every release of a module this script wrote, from its
    RELEASES and REGISTRY spans (parsed with ast, not imported)."""
    names = _dicts(ast.parse(path.read_text(), str(path)))
    if "RELEASES" not in names or "REGISTRY" not in names:
        raise ValueError(f"{path}: not a table this script wrote (no RELEASES and REGISTRY)")
    releases = [_version(r) for r in ast.literal_eval(names["RELEASES"])]
    table = ast.literal_eval(names["REGISTRY"])
    found: dict[tuple[int, int, int], tuple[set[str], set[str]]] = {v: (set(), set()) for v in releases}
    for arch, pair in table.items():
        for kind, spans_ in enumerate(pair):
            for first, end in spans_:
                for v in releases:
                    if _version(first) <= v and (end is None or v < _version(end)):
                        found[v][kind].add(arch)
    return found


def read_pp_table(path: Path) -> dict[tuple[int, int, int], tuple[set[str], set[str]]]:
    """{release: (architectures without PP support, architectures not read)} of a module this script wrote
    (empty for a table written before PP support was read)."""
    names = _dicts(ast.parse(path.read_text(), str(path)))
    if "PP_RELEASES" not in names:
        return {}
    releases = [_version(r) for r in ast.literal_eval(names["PP_RELEASES"])]
    found: dict[tuple[int, int, int], tuple[set[str], set[str]]] = {v: (set(), set()) for v in releases}
    for kind, name in enumerate(("NO_PP", "PP_UNREAD")):
        for arch, spans_ in (ast.literal_eval(names[name]) if name in names else {}).items():
            for first, end in spans_:
                for v in releases:
                    if _version(first) <= v and (end is None or v < _version(end)):
                        found[v][kind].add(arch)
    return found


def build(root: Path, base: Path | None = None) -> tuple[list[str], dict[str, dict[str, list]]]:
    releases, table, _ = build_with_pp(root, base)
    return releases, table


def build_with_pp(root: Path, base: Path | None = None):
    """(releases, table, pp): pp is {release text: (architectures without PP support, not read)} for the
    releases whose model sources were read (a release under ROOT with vllm/model_executor/models/interfaces.py,
    or one the base table had read)."""
    found = read_table(base) if base is not None else {}
    pp_found = read_pp_table(base) if base is not None else {}
    read_here: set[tuple[int, int, int]] = set()
    for sub in sorted(root.iterdir()):
        version = release_of(sub)
        if version is not None and version >= FIRST and (sub / REGISTRY).is_file():
            if version in read_here:
                continue  # the same release unpacked twice
            read_here.add(version)
            native, supported, classes = read_registry_classes(sub / REGISTRY)
            sets = (native, supported)
            if version in found and found[version] != sets:
                raise ValueError(f"{sub / REGISTRY}: release {_text(version)} reads otherwise than in {base}")
            found[version] = sets
            if (sub / "vllm" / "model_executor" / "models" / "interfaces.py").is_file():
                pp = read_pp(sub, classes)
                if version in pp_found and pp_found[version] != pp:
                    raise ValueError(f"{sub}: release {_text(version)}'s PP support reads otherwise than in {base}")
                pp_found[version] = pp
    versions = sorted(found)
    releases = [_text(v) for v in versions]
    archs = sorted(set().union(*(n | t for n, t in found.values())))
    table = {}
    for arch in archs:
        native = spans([arch in found[v][0] for v in versions], releases)
        backend = spans([arch in found[v][1] for v in versions], releases)
        table[arch] = {"native": native, "transformers": backend}
    return releases, table, {_text(v): pp_found[v] for v in sorted(pp_found)}


def render(releases: list[str], table: dict[str, dict[str, list]], pp: dict | None = None) -> str:
    lines = [
        '"""vLLM\'s model registry per release: GENERATED by benchmarks/vllm_registry_table.py, do not edit.',
        "",
        "    python benchmarks/vllm_registry_table.py ROOT [--base kvplan/engines/vllm_registry_data.py] \\",
        "        --out kvplan/engines/vllm_registry_data.py",
        "",
        *textwrap.wrap(f"Read statically (ast, vLLM not imported) from {REGISTRY} of each release: an unpacked "
                       "wheel or sdist under ROOT (one vllm/ per release, the release read from its "
                       "vllm/_version.py), or, with --base, a release of the table given, whose releases are kept:",
                       100),
        *textwrap.wrap(", ".join(releases) + ".", 100),
        "REGISTRY[architecture] = (native spans, transformers-backend spans); a span is (first release that",
        "registers it, first release that no longer does or None). 'native': a vLLM implementation in",
        "_VLLM_MODELS; 'transformers': listed in _TRANSFORMERS_SUPPORTED_MODELS (served only by the",
        "Transformers backend). An architecture in neither is refused unless the Transformers backend",
        "can load it from the installed transformers (kvplan does not model that backend).",
        *(["",
           *textwrap.wrap("Pipeline parallelism (vLLM refuses --pipeline-parallel-size > 1 for a class that does not "
                          "implement SupportsPP: config/model.py ModelConfig.verify_with_parallel_config), read from "
                          "the model sources of the releases in PP_RELEASES only (PyPI has no sdist of some). "
                          "NO_PP[architecture]: spans over PP_RELEASES (first, first without, or None) in which its "
                          "registered class lacks SupportsPP in its MRO or has a forward that takes no "
                          "intermediate_tensors (interfaces.py supports_pp); PP_UNREAD: the same for classes the "
                          "reader could not follow. An architecture registered in a release of PP_RELEASES and in "
                          "neither supports PP; for a release not in PP_RELEASES it is not known.", 100)]
          if pp else []),
        '"""',
        "",
        f"RELEASES = {tuple(releases)!r}",
        "",
        "REGISTRY = {",
    ]
    for arch, entry in table.items():
        native = tuple(tuple(s) for s in entry["native"])
        backend = tuple(tuple(s) for s in entry["transformers"])
        lines.append(f"    {arch!r}: ({native!r}, {backend!r}),")
    lines.append("}")
    if pp:
        read = list(pp)
        lines += ["", f"PP_RELEASES = {tuple(read)!r}"]
        for name, index in (("NO_PP", 0), ("PP_UNREAD", 1)):
            archs = sorted(set().union(*(sets[index] for sets in pp.values())))
            lines += ["", f"{name} = {{"]
            for arch in archs:
                found = tuple(tuple(x) for x in spans([arch in pp[r][index] for r in read], read))
                lines.append(f"    {arch!r}: {found!r},")
            lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="directory holding one unpacked vLLM wheel per sub-directory")
    parser.add_argument("--base", type=Path, help="a table this script wrote: add the releases under ROOT to it")
    parser.add_argument("--out", type=Path, help="write the generated module here (e.g. kvplan/engines/vllm_registry_data.py)")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root}: not a directory (give the folder of unpacked vLLM wheels)", file=sys.stderr)
        return 2
    if args.base is not None and not args.base.is_file():
        print(f"{args.base}: no such file (give a table this script wrote, or leave --base out)", file=sys.stderr)
        return 2
    try:
        releases, table, pp = build_with_pp(args.root, args.base)
    except (ValueError, SyntaxError) as err:
        print(f"{err}", file=sys.stderr)
        return 2
    if not releases:
        print(f"{args.root}: no vLLM release >= {_text(FIRST)} found (expected <dir>/vllm/_version.py)", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(render(releases, table, pp))
        print(f"{args.out}: {len(table)} architectures over {len(releases)} releases ({releases[0]} .. {releases[-1]})")
        for release, (without, unread) in pp.items():
            registered = sum(1 for entry in table.values() for kind in entry.values() for first, end in kind
                             if _version(first) <= _version(release) and (end is None or _version(release) < _version(end)))
            print(f"  {release}: {registered - len(without) - len(unread)} architectures support PP, "
                  f"{len(without)} do not, {len(unread)} not read")
    else:
        for arch, entry in table.items():
            print(arch, entry["native"], entry["transformers"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
