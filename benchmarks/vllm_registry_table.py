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
"""

from __future__ import annotations

import argparse
import ast
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


def _entries(node: ast.expr, names: dict[str, ast.expr], where: str) -> dict[str, str]:
    """{architecture: module} of a dict literal, following ** of other module-level dicts."""
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
    out: dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            out.update(_entries(value, names, where))
            continue
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ValueError(f"{where}: a key that is not a string: {ast.unparse(key)}")
        if isinstance(value, ast.Tuple) and value.elts and isinstance(value.elts[0], ast.Constant):
            out[key.value] = str(value.elts[0].value)
        else:
            raise ValueError(f"{where}: {key.value}'s value is not (module, class): {ast.unparse(value)[:120]}")
    return out


def read_registry(path: Path) -> tuple[set[str], set[str]]:
    """(native architectures, Transformers-backend-only architectures) of one release's registry.py."""
    names = _dicts(ast.parse(path.read_text(), str(path)))
    every = _entries(names["_VLLM_MODELS"], names, str(path))
    backend = set()
    for name in BACKEND_DICTS:
        if name in names:
            backend |= set(_entries(names[name], names, str(path)))
    supported = set(_entries(names["_TRANSFORMERS_SUPPORTED_MODELS"], names, str(path))) \
        if "_TRANSFORMERS_SUPPORTED_MODELS" in names else set()
    native = {arch for arch, module in every.items() if arch not in backend and module != "transformers"}
    return native, supported


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


def build(root: Path, base: Path | None = None) -> tuple[list[str], dict[str, dict[str, list]]]:
    found = read_table(base) if base is not None else {}
    read_here: set[tuple[int, int, int]] = set()
    for sub in sorted(root.iterdir()):
        version = release_of(sub)
        if version is not None and version >= FIRST and (sub / REGISTRY).is_file():
            if version in read_here:
                continue  # the same release unpacked twice
            read_here.add(version)
            sets = read_registry(sub / REGISTRY)
            if version in found and found[version] != sets:
                raise ValueError(f"{sub / REGISTRY}: release {_text(version)} reads otherwise than in {base}")
            found[version] = sets
    versions = sorted(found)
    releases = [_text(v) for v in versions]
    archs = sorted(set().union(*(n | t for n, t in found.values())))
    table = {}
    for arch in archs:
        native = spans([arch in found[v][0] for v in versions], releases)
        backend = spans([arch in found[v][1] for v in versions], releases)
        table[arch] = {"native": native, "transformers": backend}
    return releases, table


def render(releases: list[str], table: dict[str, dict[str, list]]) -> str:
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
        releases, table = build(args.root, args.base)
    except (ValueError, SyntaxError) as err:
        print(f"{err}", file=sys.stderr)
        return 2
    if not releases:
        print(f"{args.root}: no vLLM release >= {_text(FIRST)} found (expected <dir>/vllm/_version.py)", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(render(releases, table))
        print(f"{args.out}: {len(table)} architectures over {len(releases)} releases ({releases[0]} .. {releases[-1]})")
    else:
        for arch, entry in table.items():
            print(arch, entry["native"], entry["transformers"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
