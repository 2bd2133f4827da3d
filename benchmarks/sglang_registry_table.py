"""Which architectures an SGLang release registers: read from the released sources.

    python benchmarks/sglang_registry_table.py PKG [PKG ...] [--out kvplan/engines/sglang_registry_data.py]

Each PKG is an unpacked `sglang/` package (the release read from its _version.py). SGLang builds its
registry in srt/models/registry.py, import_model_classes: it imports every plain module (not
sub-package) of sglang.srt.models and, for each one with an `EntryClass` (a class or a list of
classes), registers every class under its `__name__`, the class's own name. The script parses
those modules with `ast` (SGLang is never imported) and reads each EntryClass element: a class
defined in the module is its own name; a module-level alias `X = Y` and an import `from M import Y
as X` are followed to the class Y names (into M when M is a module of the package), so the key is
the name SGLang would see.

The registry includes the Transformers fallback classes of srt/models/transformers.py
(TransformersForCausalLM, ...). SGLang routes an architecture it does not register to one of them
(model_loader/utils.py get_model_architecture -> resolve_transformers_arch), which works only when
the installed transformers has the class or the config's auto_map names an AutoModel; those
`Transformers*` names are registry entries, not architectures a config names. Also read: SGLang's own
config classes (srt/configs/*.py) whose __init__ overwrites `architectures` with one name, so the
name looked up for that model_type is SGLang's, not the checkpoint's. Not read: modules that
fail to import at run time (SGLang skips them with a warning) and SGLANG_DISABLED_MODEL_ARCHS.

Pipeline parallelism (read_pp): ModelRunner.__init__ (srt/model_executor/model_runner.py, 0.5.9 and
0.5.23) asserts, with pp_size > 1, that "pp_proxy_tensors" is a parameter of the loaded model's forward
(inspect.signature). The script finds each registered class's forward along its C3 MRO (bases followed
through aliases and imports inside the package) and reads its parameter names; a class whose forward is
decided at run time (a base outside the package before any forward, a forward delegated through
__getattr__, an assigned forward) is listed as not read. Per-model refusals of PP at argument time
(srt/arg_groups) are not read.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

MODELS = "srt/models"
CONFIGS = "srt/configs"


def release_of(pkg: Path) -> str | None:
    """The release of an unpacked sglang/ package, from its _version.py (None: not a release)."""
    path = pkg / "_version.py"
    if not path.is_file():
        return None
    match = re.search(r"^__version__\s*=\s*version\s*=\s*['\"](\d+\.\d+\.\d+)['\"]", path.read_text(), re.M)
    return match.group(1) if match else None


class _Module:
    """One parsed module of the package: its classes, module-level aliases and imported names."""

    def __init__(self, pkg: Path, dotted: str):
        self.pkg, self.dotted = pkg, dotted
        self.path = pkg.joinpath(*dotted.split(".")).with_suffix(".py")
        if not self.path.is_file():
            self.path = pkg.joinpath(*dotted.split("."), "__init__.py")
        self.tree = ast.parse(self.path.read_text(encoding="utf-8-sig"), str(self.path))
        self.classes, self.aliases, self.imports = set(), {}, {}
        self.class_nodes: dict[str, ast.ClassDef] = {}
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes.add(node.name)
                self.class_nodes[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.aliases[node.targets[0].id] = node.value
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:  # relative: from .x import Y
                    parent = dotted.split(".")[:-node.level] if not self.path.name == "__init__.py" \
                        else dotted.split(".")[:len(dotted.split(".")) - node.level + 1]
                    base = ".".join(parent + [node.module])
                elif base.startswith("sglang."):
                    base = base[len("sglang."):]
                else:
                    base = None  # outside the package (torch, transformers): not followed
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (base, alias.name)

    def class_name(self, name: str, seen: frozenset = frozenset()) -> str:
        """The __name__ of the class this module's `name` refers to."""
        where = f"{self.path}: {name}"
        if (self.dotted, name) in seen:
            raise ValueError(f"{where}: a cycle of aliases")
        seen = seen | {(self.dotted, name)}
        if name in self.classes:
            return name
        if name in self.aliases:
            value = self.aliases[name]
            if isinstance(value, ast.Name):
                return self.class_name(value.id, seen)
            raise ValueError(f"{where} = {ast.unparse(value)[:80]}: not a class this script reads")
        if name in self.imports:
            module, original = self.imports[name]
            if module is None:
                return original  # a class from outside the package keeps its own name
            return _parse(self.pkg, module).class_name(original, seen)
        raise ValueError(f"{where}: not defined in the module")

    def class_ref(self, name: str, seen: frozenset = frozenset()) -> tuple[str | None, str]:
        """(module, class) this module's `name` refers to; module None for a class outside the package."""
        if (self.dotted, name) in seen:
            raise ValueError(f"{self.path}: {name}: a cycle of aliases")
        seen = seen | {(self.dotted, name)}
        if name in self.classes:
            return self.dotted, name
        if name in self.aliases and isinstance(self.aliases[name], ast.Name):
            return self.class_ref(self.aliases[name].id, seen)
        if name in self.imports:
            module, original = self.imports[name]
            if module is None:
                return None, original
            return _parse(self.pkg, module).class_ref(original, seen)
        raise ValueError(f"{self.path}: {name}: not a class this script reads")

    def _entry_items(self, node: ast.expr | None = None) -> tuple["_Module", list[ast.expr]]:
        """(the module that defines this module's EntryClass, its elements); no elements when it has none."""
        if node is None:
            if "EntryClass" in self.aliases:
                node = self.aliases["EntryClass"]
            elif "EntryClass" in self.imports:
                module, original = self.imports["EntryClass"]
                other = _parse(self.pkg, module)
                return other._entry_items(other.aliases[original])
            else:
                return self, []
        return self, (node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node])

    def entry_refs(self) -> list[tuple[str | None, str]]:
        """(module, class) of each element of this module's EntryClass ([] when it has none)."""
        owner, items = self._entry_items()
        return [owner.class_ref(item.id) for item in items if isinstance(item, ast.Name)]

    def entry_names(self) -> list[str]:
        """The registry keys of this module's EntryClass ([] when it has none)."""
        owner, items = self._entry_items()
        out = []
        for item in items:
            if not isinstance(item, ast.Name):
                raise ValueError(f"{owner.path}: an EntryClass element this script does not read: {ast.unparse(item)}")
            out.append(owner.class_name(item.id))
        return out


_PARSED: dict[tuple[Path, str], _Module] = {}


def _parse(pkg: Path, dotted: str) -> _Module:
    if (pkg, dotted) not in _PARSED:
        _PARSED[pkg, dotted] = _Module(pkg, dotted)
    return _PARSED[pkg, dotted]


def read_registry(pkg: Path) -> dict[str, str]:
    """{registered architecture: module file} of one release's srt/models (plain modules only, as
    pkgutil.iter_modules with ispkg False gives them)."""
    out: dict[str, str] = {}
    for path in sorted((pkg / MODELS).glob("*.py")):
        if path.name == "__init__.py":
            continue
        module = _parse(pkg, f"{MODELS.replace('/', '.')}.{path.stem}")
        for name in module.entry_names():
            if name in out:  # SGLang asserts on a duplicate
                raise ValueError(f"{path}: {name} is also registered by {out[name]}")
            out[name] = path.name
    return out


# bases outside the package that define no forward of their own (nn.Module's comes last in every MRO here)
_PLAIN_BASES = {"ABC", "abc.ABC", "object", "Generic", "Protocol"}
_MODULE_BASES = {"nn.Module", "torch.nn.Module", "Module"}


def _c3(seqs: list[list]) -> list:
    out = []
    seqs = [list(s) for s in seqs if s]
    while seqs:
        head = next((s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)), None)
        if head is None:
            raise ValueError("no consistent MRO")
        out.append(head)
        seqs = [[c for c in s if c != head] for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def _mro(pkg: Path, ref: tuple[str | None, str], memo: dict) -> list:
    """C3 linearisation of a class of the package; a class outside it is ("", its written name), a leaf."""
    if ref in memo:
        return memo[ref]
    module, name = ref
    if module is None or module == "":
        memo[ref] = [("", name)]
        return memo[ref]
    mod = _parse(pkg, module)
    node = mod.class_nodes[name]
    bases = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            found = mod.class_ref(base.id)
            bases.append(("", found[1]) if found[0] is None else found)
        elif isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name):  # Generic[T], Foo[T]
            found = mod.class_ref(base.value.id)
            bases.append(("", found[1]) if found[0] is None else found)
        else:
            bases.append(("", ast.unparse(base)))
    memo[ref] = [ref] + _c3([_mro(pkg, b, memo) for b in bases] + [bases])
    return memo[ref]


def forward_takes_pp(pkg: Path, module: str, name: str) -> bool:
    """Whether SGLang's ModelRunner would find `pp_proxy_tensors` among the parameters of the class's
    forward (0.5.9 / 0.5.23 model_executor/model_runner.py: "pp_proxy_tensors" in
    inspect.signature(self.model.forward).parameters): the first class of its MRO that defines forward. Its
    decorators here (torch.no_grad(), torch.inference_mode(), torch.compile) keep the signature
    (functools.wraps; inspect.signature follows __wrapped__). ValueError where it cannot be read."""
    ref = _parse(pkg, module).class_ref(name)
    for mod_name, cls in _mro(pkg, ref, {}):
        if mod_name == "":
            if cls in _PLAIN_BASES:
                continue
            if cls in _MODULE_BASES:
                return False  # nn.Module's forward (_forward_unimplemented(self, *input))
            raise ValueError(f"{module}.{name}: base {cls} outside the package, before any forward")
        node = _parse(pkg, mod_name).class_nodes[cls]
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward":
                args = item.args
                return "pp_proxy_tensors" in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
            targets = item.targets if isinstance(item, ast.Assign) else \
                [item.target] if isinstance(item, ast.AnnAssign) and item.value is not None else []
            if any(isinstance(t, ast.Name) and t.id == "forward" for t in targets):
                raise ValueError(f"{mod_name}.{cls}: forward is assigned, not defined")
    raise ValueError(f"{module}.{name}: no forward in its MRO")


def read_pp(pkg: Path) -> tuple[set[str], set[str]]:
    """(registered architectures whose class's forward takes no pp_proxy_tensors, those not read)."""
    without, unread = set(), set()
    for path in sorted((pkg / MODELS).glob("*.py")):
        if path.name == "__init__.py":
            continue
        module = _parse(pkg, f"{MODELS.replace('/', '.')}.{path.stem}")
        for where, entry in module.entry_refs():
            try:
                if where is None:
                    raise ValueError(f"{path}: {entry} is a class from outside the package")
                if not forward_takes_pp(pkg, where, entry):
                    without.add(entry)
            except (ValueError, KeyError):
                unread.add(entry)
    return without, unread


def _model_type(cls: ast.ClassDef) -> str | None:
    for node in cls.body:
        if (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "model_type":
                return node.value.value
    return None


def read_config_architectures(pkg: Path) -> dict[str, str]:
    """{model_type: architecture} of SGLang's own config classes (srt/configs/*.py) whose __init__ sets
    `self.architectures = ["X"]` unconditionally (a statement of the __init__ body itself): SGLang loads
    that config class for the model_type and looks up X, whatever the checkpoint's config.json names
    (e.g. deepseekvl2.py DeepseekVL2Config). One set only when the config names none is not read."""
    out = {}
    for path in sorted((pkg / CONFIGS).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8-sig"), str(path))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            model_type = _model_type(cls)
            init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            if model_type is None or init is None:
                continue
            for node in init.body:
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and ast.unparse(node.targets[0]) == "self.architectures"
                        and isinstance(node.value, ast.List) and len(node.value.elts) == 1
                        and isinstance(node.value.elts[0], ast.Constant)):
                    out[model_type] = node.value.elts[0].value
    return out


def build(pkgs: list[Path]):
    """(releases, registry table, config architectures, no-PP table, unread-PP table) of the packages."""
    found, renamed, no_pp, unread_pp = {}, {}, {}, {}
    for pkg in pkgs:
        release = release_of(pkg)
        if release is None:
            raise ValueError(f"{pkg}: no sglang/_version.py with a release (give an unpacked sglang/ package)")
        found[release] = read_registry(pkg)
        renamed[release] = read_config_architectures(pkg)
        no_pp[release], unread_pp[release] = read_pp(pkg)
    releases = sorted(found, key=lambda r: tuple(int(p) for p in r.split(".")))
    archs = sorted(set().union(*found.values()))
    table = {arch: [r for r in releases if arch in found[r]] for arch in archs}
    configs = {}
    for model_type in sorted(set().union(*renamed.values())):
        names = {renamed[r][model_type] for r in releases if model_type in renamed[r]}
        if len(names) > 1:
            raise ValueError(f"{model_type}: SGLang's config class names {sorted(names)} in different releases")
        configs[model_type] = (names.pop(), [r for r in releases if model_type in renamed[r]])
    without = {a: [r for r in releases if a in no_pp[r]] for a in archs if any(a in no_pp[r] for r in releases)}
    unread = {a: [r for r in releases if a in unread_pp[r]] for a in archs
              if any(a in unread_pp[r] for r in releases)}
    return releases, table, configs, without, unread


def render(releases: list[str], table: dict[str, list[str]], configs: dict[str, tuple[str, list[str]]],
           without: dict[str, list[str]], unread: dict[str, list[str]]) -> str:
    lines = [
        '"""SGLang\'s model registry per release: GENERATED by benchmarks/sglang_registry_table.py, do not edit.',
        "",
        "    python benchmarks/sglang_registry_table.py PKG [PKG ...] --out kvplan/engines/sglang_registry_data.py",
        "",
        f"Read statically (ast, SGLang not imported) from the EntryClass of every module of sglang/{MODELS}",
        "(srt/models/registry.py import_model_classes registers each entry class under its __name__) of the",
        "unpacked sglang/ packages of releases " + ", ".join(releases) + ".",
        "REGISTRY[architecture] = the releases that register it. Transformers* names are SGLang's Transformers",
        "fallback (srt/models/transformers.py), used for an architecture it does not register when the",
        "installed transformers or the config's auto_map can load it (not modelled by kvplan).",
        "CONFIG_ARCHITECTURES[model_type] = (architecture, releases): SGLang's own config class for that",
        f"model_type (sglang/{CONFIGS}) sets `self.architectures` to that one name in its __init__, so SGLang",
        "looks it up instead of the checkpoint's.",
        "NO_PP[architecture] = the releases in which the registered class's forward takes no",
        "pp_proxy_tensors: ModelRunner then refuses --pp-size > 1 (model_executor/model_runner.py: support_pp =",
        '"pp_proxy_tensors" in inspect.signature(self.model.forward).parameters; assert support_pp, "Pipeline',
        'Parallel is not compatible with this model."). PP_UNREAD: the same for classes whose forward the',
        "reader could not follow. A registered architecture in neither passes that check.",
        '"""',
        "",
        f"RELEASES = {tuple(releases)!r}",
        "",
        "REGISTRY = {",
    ]
    for arch, present in table.items():
        lines.append(f"    {arch!r}: {tuple(present)!r},")
    lines.append("}")
    lines.append("")
    lines.append("CONFIG_ARCHITECTURES = {")
    for model_type, (arch, present) in configs.items():
        lines.append(f"    {model_type!r}: ({arch!r}, {tuple(present)!r}),")
    lines.append("}")
    for title, found in (("NO_PP", without), ("PP_UNREAD", unread)):
        lines.append("")
        lines.append(f"{title} = {{")
        for arch, present in found.items():
            lines.append(f"    {arch!r}: {tuple(present)!r},")
        lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pkgs", type=Path, nargs="+", help="unpacked sglang/ package directories, one per release")
    parser.add_argument("--out", type=Path, help="write the generated module here")
    args = parser.parse_args(argv)
    try:
        releases, table, configs, without, unread = build(args.pkgs)
    except (ValueError, OSError, SyntaxError) as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(render(releases, table, configs, without, unread))
        print(f"{args.out}: {len(table)} architectures over {len(releases)} releases ({', '.join(releases)})")
    else:
        for arch, present in table.items():
            print(arch, *present)
        for model_type, (arch, present) in configs.items():
            print(f"config {model_type} -> {arch}", *present)
        for arch, present in without.items():
            print(f"no PP {arch}", *present)
        for arch, present in unread.items():
            print(f"PP not read {arch}", *present)
    return 0


if __name__ == "__main__":
    sys.exit(main())
