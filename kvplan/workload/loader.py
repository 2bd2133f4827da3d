"""Read scenario files: a path, or the name of a bundled scenario.

YAML is parsed once, with libyaml's CSafeLoader when PyYAML has it (else the pure
Python SafeLoader; no Python objects are ever built from a file): the node tree
is composed, checked, then constructed. Aliases may only be used so far: a
document whose nodes, with every alias expanded, would exceed MAX_EXPANDED_NODES
is refused before anything is built or walked (a "billion laughs" alias bomb
grows ninefold per level). The line of every key comes from the node tree,
visiting each node once (an alias is not walked again).
After the schema check, the model, GPU and techniques are resolved here, so a
typo in any of them is reported against its own line before anything is planned.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import yaml

from ..capacity.gpus import lookup
from ..capacity.hardware import Deployment
from ..capacity.shard import check_tp
from ..core.model import ModelSpec
from ..errors import KvplanError
from ..sources import load_model_and_weights
from ..techniques.base import Plan, Technique
from ..techniques.registry import build_all, check_unique
from ..request import DEFAULT_RESERVE_TEXT, DeploymentRequest, online_without_engine
from ..workflows import apply_kv_dtype
from .schema import SCHEMA, Scenario, ScenarioError, build_scenario

SUFFIXES = (".yaml", ".yml")


def bundled_names() -> list[str]:
    """Names of the scenarios shipped in kvplan.scenarios, sorted."""
    folder = resources.files("kvplan.scenarios")
    return sorted(p.name.rsplit(".", 1)[0] for p in folder.iterdir() if p.name.endswith(SUFFIXES))


def _bundled_text(name: str) -> str | None:
    folder = resources.files("kvplan.scenarios")
    for suffix in SUFFIXES:
        item = folder / f"{name}{suffix}"
        if item.is_file():
            return item.read_text(encoding="utf-8")
    return None


MAX_EXPANDED_NODES = 100_000  # a real scenario has a few dozen
MAX_TEXT_BYTES = 1024 * 1024
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ScenarioLoader(_BASE_LOADER):
    """The safe loader without YAML 1.1's base-60 numbers: PyYAML's resolver reads `1:30` as 90 and `1:30.5` as
    90.5, a number nobody meant in a scenario; here they stay text, which the schema check refuses by name."""


LOADER = ScenarioLoader
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
LOADER.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()}
# PyYAML's own int and float patterns (resolver.py), less their sexagesimal alternatives
LOADER.add_implicit_resolver(_INT, re.compile(r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+)$""", re.X), list("-+0123456789"))
LOADER.add_implicit_resolver(_FLOAT, re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X), list("-+0123456789."))


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


class RecursiveAlias(Exception):
    """A YAML alias that refers to a node it sits inside (`&a [*a]`): a structure with no end."""

    def __init__(self, node):
        super().__init__("recursive alias")
        self.node = node


def expanded_size(root) -> int:
    """Nodes the document would have with every alias expanded, counted per distinct
    node (memoised, iterative): linear in the file however the aliases nest. An alias to
    a node it sits inside raises RecursiveAlias (its expansion has no end)."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes on the walk's current path (their children are being counted)
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if ready:
            open_nodes.discard(key)
            size[key] = min(1 + sum(size[id(c)] for c in _children(node)), 2**62)
            continue
        if key in size:
            continue
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise RecursiveAlias(child)
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def _distinct_nodes(root) -> int:
    """Nodes written in the file: each counted once, however many aliases refer to it."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(_children(node))
    return len(seen)


def line_map(node, prefix: str = "", out: dict | None = None) -> dict[str, int]:
    """Dotted key ('workload.prompt_tokens', 'techniques[1]') -> 1-based line.

    Each node is visited once: a node reached again through an alias keeps the
    lines of its first place (no walk through expansions)."""
    out = {} if out is None else out
    if prefix == "" and "" not in out:
        out[""] = node.start_mark.line + 1
    visited: set[int] = set()
    stack = [(node, prefix)]
    while stack:
        current, where = stack.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        if isinstance(current, yaml.MappingNode):
            seen = set()
            for key_node, value_node in current.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark)
                dotted = f"{where}.{key}" if where else key
                if dotted in seen:
                    raise ScenarioError(f"{{file}}:{key_node.start_mark.line + 1}: duplicate key {dotted!r}")
                seen.add(dotted)
                out.setdefault(dotted, key_node.start_mark.line + 1)
                stack.append((value_node, dotted))
        elif isinstance(current, yaml.SequenceNode):
            for i, item in enumerate(current.value):
                out.setdefault(f"{where}[{i}]", item.start_mark.line + 1)
                stack.append((item, f"{where}[{i}]"))
    return out


def _compose_once(text: str, source: str):
    """(root node, data) from one parse; ScenarioError for bad YAML or an alias bomb."""
    loader = LOADER(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        try:
            nodes = expanded_size(root)
        except RecursiveAlias as exc:
            line = exc.node.start_mark.line + 1
            raise ScenarioError(f"{source}:{line}: a YAML alias refers to the node it sits in (a structure with no "
                                "end is not a scenario)", "write the values out instead of the alias") from None
        if nodes > MAX_EXPANDED_NODES:
            written = _distinct_nodes(root)
            if written > MAX_EXPANDED_NODES:  # no alias needed: "aliases expand" misled about 60,000 plain keys
                raise ScenarioError(f"{source}: the file holds {written:,} YAML nodes (keys, values and items), "
                                    f"more than a scenario's {MAX_EXPANDED_NODES:,}",
                                    "check that the path names a scenario file (a real one has a few dozen keys)")
            raise ScenarioError(f"{source}: YAML aliases expand to {nodes:,} nodes (at most {MAX_EXPANDED_NODES:,})",
                                "write the values out instead of nesting aliases")
        return root, loader.construct_document(root)
    finally:
        loader.dispose()


def parse(text: str, source: str, default_name: str) -> Scenario:
    if len(text) > MAX_TEXT_BYTES:
        raise ScenarioError(f"{source}: {len(text):,} characters is not a scenario file (at most {MAX_TEXT_BYTES:,})")
    try:
        root, data = _compose_once(text, source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"{where}: not valid YAML: {problem}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: not valid YAML: nested too deeply") from None
    except ValueError as exc:  # a value YAML reads as a date that is none (2024-13-45), an integer too long
        raise ScenarioError(f"{source}: a value cannot be read: {str(exc).split(';')[0]}",
                            "write it in quotes to keep it as text") from None
    try:
        lines = line_map(root) if root is not None else {}
    except ScenarioError as exc:
        raise ScenarioError(exc.message.replace("{file}", source)) from None
    return build_scenario(data, source, lines, default_name)


def read(ref: str) -> Scenario:
    """A scenario from a file path or a bundled name (see `bundled_names`)."""
    if not ref.strip():  # Path('') is '.': "is a folder" named no folder the user gave
        raise ScenarioError("the scenario is an empty string", f"give a .yaml file or a bundled name: {', '.join(bundled_names())}")
    from ..files import check_path_name

    path = Path(ref).expanduser()
    check_path_name(path, "the scenario", ScenarioError)
    if path.exists() and not path.is_dir():  # a device or a pipe is refused, not opened
        from ..files import read_bounded

        raw = read_bounded(path, "a scenario file", MAX_TEXT_BYTES, ScenarioError)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            from ..files import not_utf8_hint

            raise ScenarioError(f"{path}: not UTF-8 text", not_utf8_hint(raw)) from None
        return parse(text, str(path), path.name.rsplit(".", 1)[0])
    if path.is_dir():
        raise ScenarioError(f"{ref}: is a folder, not a scenario file", f"pass the .yaml files inside it, e.g. {ref.rstrip('/')}/*.yaml")
    text = None if path.suffix in SUFFIXES or "/" in ref else _bundled_text(ref)
    if text is None and path.is_symlink():  # exists() is False for a link to nothing or a loop of links
        raise ScenarioError(f"{ref}: a symlink that leads to no file (dangling, or a loop of links)",
                            "fix the link, or give the scenario's real path")
    if text is None:
        names = bundled_names()
        close = difflib.get_close_matches(ref, names, n=2, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise ScenarioError(f"{ref}: no such file or bundled scenario", f"{hint}bundled: {', '.join(names)}")
    return parse(text, f"bundled:{ref}", ref)


@dataclass(frozen=True)
class Resolved:
    """A scenario with its model, techniques and deployment built."""

    scenario: Scenario
    model: ModelSpec
    kv_dtype: str
    techniques: list[Technique]
    deployment: Deployment
    request: object = None  # request.EstimateRequest where the scenario names estimate options (run.plan_one)


# the command-line flags the shared checks name, as a scenario names the same settings
_FLAG_KEYS = re.compile(r"--(tp|pp|kv-dtype|gpu-memory|gpu|mem-util|reserve|weights|quantization)\b")
# the scenario keys that are `kvplan estimate` options (Field.flag): flag -> dotted key
OPTION_KEYS = {spec.flag: f"{section}.{name}" for section in ("deployment", "engine")
               for name, spec in SCHEMA[section].children.items() if spec.flag}
# estimate's own lines (workflows.warn_batch) name the flags a scenario's workload and budgets set
_ESTIMATE_WORDS = {"--batch": "workload.concurrency", "--context": "prompt + output",
                   "--min-concurrency": "budgets.min_concurrency", "--max-kv-gib": "budgets.max_kv_gib_per_gpu"}
_ESTIMATE_FLAGS = re.compile("(" + "|".join(map(re.escape, _ESTIMATE_WORDS)) + r")(?![\w-])")
_OPTION_WORDS = {flag: "engine" if key == "engine.name" else key.rpartition(".")[2] for flag, key in OPTION_KEYS.items()}
# a whole flag only: SGLang's own --ep-size or --dp-size, named in its rules' messages, stay as they are
_OPTION_FLAGS = re.compile("(" + "|".join(sorted(map(re.escape, OPTION_KEYS), key=len, reverse=True)) + r")(?![\w-])")


def scenario_words(message: str) -> str:
    """A message of a check the commands share, in the scenario's own words (`--tp 3` -> `tp 3`, `--dp 3` -> `dp 3`)."""
    message = _FLAG_KEYS.sub(lambda m: m.group(1).replace("-", "_"), message)
    message = estimate_words(message)
    return _OPTION_FLAGS.sub(lambda m: _OPTION_WORDS[m.group(1)], message)


def estimate_words(line: str) -> str:
    """A line of estimate's report with the workload's and budgets' flags in the scenario's words (`--batch 64` ->
    `workload.concurrency 64`); every other flag kept, as an emitted launch command must be."""
    return _ESTIMATE_FLAGS.sub(lambda m: _ESTIMATE_WORDS[m.group(1)], line)


def option_error(scenario: Scenario, exc: KvplanError, default: str | None = None) -> ScenarioError | None:
    """A shared check's refusal of a `kvplan estimate` option, against the scenario key that sets it (a split's
    refusal, which opens with its --tp / --pp, against that key; else the first option its message, then its hint,
    names; else `default`); None when it names none and there is no default."""
    split = re.match(r"--(tp|pp) \d", exc.message)  # a split's refusal ("--tp 8 with --engine vllm: ...")
    found = None if split else _OPTION_FLAGS.search(f"{exc.message} {exc.hint or ''}")
    key = f"deployment.{split.group(1)}" if split else OPTION_KEYS[found.group(1)] if found else default
    return _rewrap(scenario, key, exc) if key else None


def estimate_request(scenario: Scenario):
    """The scenario as `kvplan estimate` takes the same settings: EstimateRequest.from_options, whose checks refuse a
    bad option (in the scenario's words, naming its key). Unwritten keys are estimate's defaults: mem_util the
    engine's own (vLLM's gpu_memory_utilization of the release, SGLang's mem_fraction_static for the card)."""
    from ..request import EstimateRequest

    s = scenario
    written = {key for key in s.lines if key.startswith("deployment.")}
    options = dict(s.options)
    try:
        return EstimateRequest.from_options(
            model=s.model, context=str(s.context_tokens), batch=str(s.concurrency), kv_dtype=s.kv_dtype,
            techniques=s.technique_specs, gpu=s.gpu, tp=s.tp, pp=s.pp,
            gpu_memory=f"{s.gpu_memory_bytes}B" if s.gpu_memory_bytes is not None else None,
            mem_util=s.mem_util if "deployment.mem_util" in written else None,
            reserve=f"{s.reserve_bytes}B" if "deployment.reserve" in written else DEFAULT_RESERVE_TEXT,
            weights=f"{s.weight_bytes}B" if s.weight_bytes is not None else "auto",
            quantization=s.quantization, **options)
    except KvplanError as exc:
        default = ("deployment.quantization" if "--quantization" in exc.message else
                   "engine.name" if "engine.name" in s.lines else "deployment")
        raise option_error(s, exc, default) from None


def _rewrap(scenario: Scenario, key: str, exc: KvplanError) -> ScenarioError:
    hint = scenario_words(exc.hint) if exc.hint else exc.hint
    return ScenarioError(f"{scenario.where(key)}: {key}: {scenario_words(exc.message)}", hint)


def _beside_the_file(scenario: Scenario) -> str | None:
    """The path a relative model path names beside the scenario file, when there is a file there and none
    from the working folder (a scenario's model path is read from the working folder, as on the command line)."""
    if scenario.source.startswith("bundled:"):
        return None
    try:  # a name too long for the file system, or one holding a NUL: refused already, by its own line
        relative = Path(scenario.model).expanduser()
        if relative.is_absolute() or relative.exists():
            return None
        beside = Path(scenario.source).parent / relative
        return str(beside) if beside.exists() else None
    except (OSError, ValueError):
        return None


def resolve(scenario: Scenario) -> Resolved:
    """Build the model, the techniques and the deployment; errors name their line."""
    request = None
    if scenario.options:  # an engine, dp, ep, ...: the request `kvplan estimate` builds of the same settings
        try:  # the GPU first, in the scenario's words (estimate's hint names --hbm-gbps, which no key sets)
            lookup(scenario.gpu)
        except KvplanError as exc:
            raise _rewrap(scenario, "deployment.gpu", exc) from None
        request = estimate_request(scenario)
    try:  # deployment.quantization: checked as `kvplan estimate --quantization` (without --engine: vLLM 0.34's)
        online = online_without_engine(scenario.quantization) if request is None else request.model.quantization
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment.quantization", exc) from None
    try:
        model, weights = load_model_and_weights(scenario.model, quantization=online)
    except KvplanError as exc:
        if online is not None and "--quantization" in exc.message:  # the engine refuses it for this checkpoint
            raise _rewrap(scenario, "deployment.quantization", exc) from None
        beside = _beside_the_file(scenario)
        if beside is not None:  # "cfg.json: no such file" of the config the user sees next to the scenario
            raise ScenarioError(f"{scenario.where('model')}: model: {scenario.model}: no such file in the working "
                                f"folder (a relative path is read from there, not from the scenario's folder)",
                                f"write model: {beside}, or run kvplan from the scenario's folder") from None
        raise _rewrap(scenario, "model", exc) from None
    try:
        model, dtype = apply_kv_dtype(model, scenario.kv_dtype)
    except KvplanError as exc:
        raise _rewrap(scenario, "kv_dtype", exc) from None
    try:
        check_unique(scenario.technique_specs)
    except KvplanError as exc:
        raise _rewrap(scenario, "techniques", exc) from None
    chain, plan = [], Plan(model)
    for i, spec in enumerate(scenario.technique_specs):
        key = f"techniques[{i}]" if i < len(scenario.techniques) else "workload.shared_prefix_tokens"
        try:
            technique = build_all([spec])[0]
            plan = technique.apply(plan)  # fails here when it cannot apply to this model
        except KvplanError as exc:
            raise _rewrap(scenario, key, exc) from None
        chain.append(technique)
    try:
        check_tp(plan.model, scenario.tp if request is None else request.deployment.tp)  # SGLang's attention TP
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment.tp", exc) from None
    if scenario.pp > plan.model.num_layers:
        raise ScenarioError(f"{scenario.where('deployment.pp')}: deployment.pp: pp {scenario.pp:,} exceeds the "
                            f"model's {plan.model.num_layers} layers", "use at most one pipeline stage per layer")
    try:
        lookup(scenario.gpu)
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment.gpu", exc) from None
    try:
        wanted = DeploymentRequest(  # weights: auto -> the checkpoint's own bytes (kvplan.weights)
            gpu=scenario.gpu, gpu_memory_bytes=scenario.gpu_memory_bytes, tp=scenario.tp, pp=scenario.pp,
            mem_util=scenario.mem_util, reserve_bytes=scenario.reserve_bytes, weight_bytes=scenario.weight_bytes) \
            if request is None else replace(request.deployment, weight_bytes=scenario.weight_bytes)
        deployment = wanted.build(weights)
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment", exc) from None
    return Resolved(scenario, model, dtype, chain, deployment, request)


def load(refs) -> list[Resolved]:
    """Read and resolve every scenario first, so a bad file fails before any plan prints."""
    return [resolve(read(ref)) for ref in refs]
