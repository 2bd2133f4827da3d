"""Read scenario files: a path, or the name of a bundled scenario.

YAML is parsed with `yaml.safe_load` (no Python objects are ever built from a
file); a second pass over the node tree (`yaml.compose` with the safe loader)
only records the line of every key, so errors can say file:line.
After the schema check, the model, GPU and techniques are resolved here, so a
typo in any of them is reported against its own line before anything is planned.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import yaml

from ..capacity.gpus import lookup
from ..capacity.hardware import Deployment, make_deployment
from ..core.model import ModelSpec
from ..errors import KvplanError
from ..sources import load_model_and_weights
from ..techniques.base import Plan, Technique
from ..techniques.registry import build_all
from ..workflows import apply_kv_dtype
from .schema import Scenario, ScenarioError, build_scenario

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


def line_map(node, prefix: str = "", out: dict | None = None) -> dict[str, int]:
    """Dotted key ('workload.prompt_tokens', 'techniques[1]') -> 1-based line."""
    out = {} if out is None else out
    if prefix == "" and "" not in out:
        out[""] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark)
            dotted = f"{prefix}.{key}" if prefix else key
            if dotted in seen:
                raise ScenarioError(f"{{file}}:{key_node.start_mark.line + 1}: duplicate key {dotted!r}")
            seen.add(dotted)
            out[dotted] = key_node.start_mark.line + 1
            line_map(value_node, dotted, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out[f"{prefix}[{i}]"] = item.start_mark.line + 1
            line_map(item, f"{prefix}[{i}]", out)
    return out


def parse(text: str, source: str, default_name: str) -> Scenario:
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"{where}: not valid YAML: {problem}") from None
    try:
        lines = line_map(root) if root is not None else {}
    except ScenarioError as exc:
        raise ScenarioError(exc.message.replace("{file}", source)) from None
    return build_scenario(data, source, lines, default_name)


def read(ref: str) -> Scenario:
    """A scenario from a file path or a bundled name (see `bundled_names`)."""
    path = Path(ref).expanduser()
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(f"{path}: cannot read ({exc})") from None
        return parse(text, str(path), path.name.rsplit(".", 1)[0])
    if path.is_dir():
        raise ScenarioError(f"{ref}: is a folder, not a scenario file", f"pass the .yaml files inside it, e.g. {ref.rstrip('/')}/*.yaml")
    text = None if path.suffix in SUFFIXES or "/" in ref else _bundled_text(ref)
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


def _rewrap(scenario: Scenario, key: str, exc: KvplanError) -> ScenarioError:
    return ScenarioError(f"{scenario.where(key)}: {key}: {exc.message}", exc.hint)


def resolve(scenario: Scenario) -> Resolved:
    """Build the model, the techniques and the deployment; errors name their line."""
    try:
        model, weights = load_model_and_weights(scenario.model)
    except KvplanError as exc:
        raise _rewrap(scenario, "model", exc) from None
    try:
        model, dtype = apply_kv_dtype(model, scenario.kv_dtype)
    except KvplanError as exc:
        raise _rewrap(scenario, "kv_dtype", exc) from None
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
        lookup(scenario.gpu)
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment.gpu", exc) from None
    try:
        deployment = make_deployment(
            scenario.gpu, gpu_memory=scenario.gpu_memory_bytes, tp=scenario.tp, pp=scenario.pp,
            mem_util=scenario.mem_util, reserve_bytes=scenario.reserve_bytes, weight_bytes=scenario.weight_bytes,
        )
        if scenario.weight_bytes is None:  # weights: auto -> the checkpoint's own bytes (kvplan.weights)
            deployment = replace(deployment, weights=weights)
    except KvplanError as exc:
        raise _rewrap(scenario, "deployment", exc) from None
    return Resolved(scenario, model, dtype, chain, deployment)


def load(refs) -> list[Resolved]:
    """Read and resolve every scenario first, so a bad file fails before any plan prints."""
    return [resolve(read(ref)) for ref in refs]
