"""The scenario schema: every key a scenario file may hold, its type and meaning.

One table (`SCHEMA`) drives validation, the error messages and the field list
in docs/scenarios.md (a test checks that every key is documented there).

A scenario is checked at the end of its longest sequence: context = prompt
tokens + output tokens, with `concurrency` such sequences resident at once.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

from ..errors import UsageError
from ..units import MAX_COUNT, parse_size, parse_tokens


class ScenarioError(UsageError):
    """A scenario file that cannot be read or does not follow the schema (exit 2)."""


@dataclass(frozen=True)
class Field:
    kind: str  # a key of EXPECT: text | tokens | tokens0 | count | ratio | number | size | size0 | weights | techniques | switch | word | section
    doc: str
    required: bool = False
    default: object = None
    children: dict | None = None  # kind "section"
    # the `kvplan estimate` option the key is (its keyword in EstimateRequest.from_options: the flag's words):
    # a scenario holding any such key is planned as that estimate request (loader.estimate_request)
    flag: str | None = None

    @property
    def option(self) -> str | None:
        """'--all2all-backend' -> 'all2all_backend', EstimateRequest.from_options' keyword."""
        return self.flag.lstrip("-").replace("-", "_") if self.flag else None


EXPECT = {
    "text": "a string",
    "tokens": "a positive token count such as 4096 or 128k",
    "tokens0": "a token count >= 0 such as 2000 or 2k",
    "count": "a positive integer",
    "ratio": "a number in (0, 1]",
    "number": "a positive number",
    "size": "a size with a unit such as 2GiB or 80GB",
    "size0": "0 or a size with a unit such as 2GiB",
    "weights": "auto or a size with a unit such as 140GB",
    "techniques": "a list of technique specs such as [fp8, page:16]",
    "switch": "true or false",
    "word": "a word or an integer, as the flag takes it",
    "section": "a mapping of keys",
}

SCHEMA: dict[str, Field] = {
    "name": Field("text", "Short name; defaults to the file name without .yaml."),
    "description": Field("text", "One or two sentences: who sends these requests and why the numbers matter."),
    "model": Field("text", "A bundled model alias or HF id (see `kvplan models`), or a path to a config.json.", required=True),
    "kv_dtype": Field("text", "KV storage before techniques: auto (the model's dtype), bf16, fp16, fp32, fp8, int8, int4, int2.", default="auto"),
    "deployment": Field("section", "Where it runs.", required=True, children={
        "gpu": Field("text", "GPU kind from `kvplan gpus` (h100, h200, a100-80gb, ...).", required=True),
        "tp": Field("count", "Tensor-parallel GPUs per replica.", default=1),
        "pp": Field("count", "Pipeline-parallel stages per replica.", default=1),
        "mem_util": Field("ratio", "Fraction of GPU memory the engine may use (vLLM's gpu_memory_utilization).", default=0.9),
        "reserve": Field("size0", "Activations and CUDA graphs per GPU, kept out of the KV pool.", default="2GiB"),
        "weights": Field("weights", "Weight bytes of the whole model: auto (read from the checkpoint, else parameters x dtype) or a size.", default="auto"),
        "gpu_memory": Field("size", "Memory per GPU, overriding the catalog (for example nvidia-smi's figure)."),
        "quantization": Field("text", "The engine's online quantization of a float checkpoint, as `kvplan estimate --quantization` takes it without --engine (vLLM 0.34's fp8, fp8_per_tensor, fp8_per_channel, fp8_per_block, experts_int8): the weights sized as vLLM holds them."),
        "dp": Field("count", "Data-parallel ranks, as `kvplan estimate --dp` (vLLM's --data-parallel-size; SGLang's attention DP).", flag="--dp"),
        "ep": Field("switch", "Routed experts split by expert, as `kvplan estimate --ep` (vLLM's --enable-expert-parallel).", flag="--ep"),
        "all2all_backend": Field("text", "vLLM's MoE all-to-all backend, as `kvplan estimate --all2all-backend`.", flag="--all2all-backend"),
        "moe_a2a_backend": Field("text", "SGLang's MoE all-to-all backend, as `kvplan estimate --moe-a2a-backend`.", flag="--moe-a2a-backend"),
        "gpus_per_node": Field("count", "GPUs a node has (default 8), as `kvplan estimate --gpus-per-node`.", flag="--gpus-per-node"),
        "redundant_experts": Field("word", "EPLB's redundant experts R or auto, as `kvplan estimate --redundant-experts`.", flag="--redundant-experts"),
        "enable_dp_lm_head": Field("switch", "SGLang's LM head over the attention TP group, as `kvplan estimate --enable-dp-lm-head`.", flag="--enable-dp-lm-head"),
        "moe_dense_tp_size": Field("count", "SGLang's TP of a MoE model's dense MLPs, as `kvplan estimate --moe-dense-tp-size`.", flag="--moe-dense-tp-size"),
        "mm_enable_dp_encoder": Field("switch", "SGLang's vision encoder data parallel, as `kvplan estimate --mm-enable-dp-encoder`.", flag="--mm-enable-dp-encoder"),
        "mm_encoder_tp_mode": Field("text", "vLLM's vision encoder TP mode (weights or data), as `kvplan estimate --mm-encoder-tp-mode`.", flag="--mm-encoder-tp-mode"),
    }),
    "engine": Field("section", "The serving engine whose own pool is planned, as `kvplan estimate --engine` (its section of the report).", default=None, children={
        "name": Field("text", "Engine and release, as `kvplan estimate --engine` takes it: vllm, vllm@0.11, sglang, sglang@0.5.9.", required=True, flag="--engine"),
        "max_model_len": Field("tokens", "The engine's max model length (default: prompt + output), as `kvplan estimate --max-model-len`.", flag="--max-model-len"),
        "max_num_seqs": Field("count", "vLLM's --max-num-seqs / SGLang's --max-running-requests, as `kvplan estimate --max-num-seqs`.", flag="--max-num-seqs"),
        "kv_memory": Field("size", "KV pool per GPU given directly, as `kvplan estimate --kv-memory`.", flag="--kv-memory"),
        "emit": Field("text", "Print the launch flags of this engine (vllm[@VERSION] or sglang), as `kvplan estimate --emit`.", flag="--emit"),
    }),
    "workload": Field("section", "What the requests look like.", required=True, children={
        "prompt_tokens": Field("tokens", "Prompt tokens per request, shared prefix included.", required=True),
        "output_tokens": Field("tokens", "Generated tokens per request.", required=True),
        "concurrency": Field("count", "Target number of sequences resident at once (the batch planned).", required=True),
        "shared_prefix_tokens": Field("tokens0", "Leading prompt tokens identical across requests (system prompt, tool definitions); 0 = none.", default=0),
        "prefix_sharers": Field("count", "How many of the concurrent requests share that prefix (default: all of them)."),
    }),
    "techniques": Field("techniques", "Technique specs applied in order, as with `kvplan estimate -t` (see `kvplan techniques`).", default=()),
    "budgets": Field("section", "Limits the plan must meet; `kvplan plan` exits 1 when any is broken.", default=None, children={
        "max_kv_gib_per_gpu": Field("number", "Most KV cache (GiB, 2^30 bytes) the planned batch may hold on any one GPU."),
        "min_concurrency": Field("count", "Fewest sequences of the full context that must fit in the KV pool at once."),
        "max_tpot_ms": Field("number", "Slowest allowed time per output token (ms): the memory-bound decode floor of the planned batch."),
    }),
}


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str  # the file, or bundled:NAME
    model: str
    description: str = ""
    kv_dtype: str = "auto"
    gpu: str = "h100"
    tp: int = 1
    pp: int = 1
    mem_util: float = 0.9
    reserve_bytes: int = 2 * 1024**3
    weight_bytes: int | None = None
    gpu_memory_bytes: int | None = None
    quantization: str | None = None  # deployment.quantization as written (checked against vLLM's rule on load)
    prompt_tokens: int = 0
    output_tokens: int = 0
    concurrency: int = 1
    shared_prefix_tokens: int = 0
    prefix_sharers: int | None = None
    techniques: tuple[str, ...] = ()
    max_kv_gib_per_gpu: float | None = None
    min_concurrency: int | None = None
    max_tpot_ms: float | None = None
    # the `kvplan estimate` options the file names (from_options keyword -> value as that option takes it), for
    # the keys with a Field.flag (the engine section, dp, ep, ...): non-empty, the scenario is planned as that request
    options: tuple[tuple[str, object], ...] = ()
    lines: dict = field(default_factory=dict, compare=False, repr=False)  # dotted key -> line

    @property
    def context_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def technique_specs(self) -> tuple[str, ...]:
        """The techniques as written, plus prefix sharing from the workload."""
        if not self.shared_prefix_tokens:
            return self.techniques
        sharers = self.prefix_sharers or self.concurrency
        return (*self.techniques, f"prefix:tokens={self.shared_prefix_tokens},requests={sharers}")

    def where(self, key: str) -> str:
        """'file:line' of a dotted key such as 'techniques[1]' (or of its section)."""
        for candidate in (key, key.partition("[")[0], key.rpartition(".")[0], ""):
            if candidate in self.lines:
                return f"{self.source}:{self.lines[candidate]}"
        return self.source


# the longest text a scenario key takes: a model path, a technique spec or a description is far shorter; a
# longer one is a paste gone wrong, and it would be echoed whole in every message that names it
MAX_TEXT_CHARS = 4096


def shown(value) -> str:
    """A value from the file for a message: its repr, clipped (a 500 KB string is not repeated whole)."""
    from ..files import clipped

    return clipped(repr(value), 80)


_EXPONENT_TEXT = re.compile(r"[-+]?\d+[eE][-+]?\d+")


def suggest_key(key: str, valid) -> str:
    close = difflib.get_close_matches(str(key)[:100], list(valid), n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"


class Checker:
    """Walks parsed YAML beside its line map and turns it into plain values."""

    def __init__(self, source: str, lines: dict[str, int]):
        self.source = source
        self.lines = lines

    def fail(self, key: str, message: str, hint: str | None = None) -> ScenarioError:
        line = self.lines.get(key) or self.lines.get(key.rpartition(".")[0]) or self.lines.get("")
        where = f"{self.source}:{line}" if line else self.source
        return ScenarioError(f"{where}: {message}", hint)

    def expect(self, key: str, kind: str, value) -> ScenarioError:
        hint = None
        if isinstance(value, str) and _EXPONENT_TEXT.fullmatch(value.strip()):
            # YAML 1.1 (PyYAML) reads a float in exponent form only with a dot before the e: 1e-3 is text
            hint = f"YAML reads {value.strip()} as text: write it with a dot (1.0e-3) or as a plain number (0.001)"
        return self.fail(key, f"{key}: expected {EXPECT[kind]}, got {shown(value)}", hint)

    def text(self, key: str, kind: str, value) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.expect(key, kind, value)
        if len(value) > MAX_TEXT_CHARS:
            raise self.fail(key, f"{key}: {shown(value)} is longer than the {MAX_TEXT_CHARS:,} characters a scenario's "
                                 "text takes", "check the file: a value ran on")
        return value.strip()

    def section(self, key: str, value, fields: dict[str, Field]) -> dict:
        where = key or "the file"
        if not isinstance(value, dict):
            required = [k for k, f in fields.items() if f.required]
            what = "a mapping with " + (", ".join(required) if required else "any of " + ", ".join(fields))
            raise self.fail(key, f"{where}: expected {what}, got {type(value).__name__} {shown(value)}")
        if not key and ("model_type" in value or "architectures" in value) and "model_type" not in fields:
            # a Hugging Face config.json (JSON is YAML) given where a scenario goes: say so, not "did you mean
            # 'techniques'?" for its first key
            raise self.fail("", "this is a model config (it has 'model_type' / 'architectures'), not a scenario",
                            "plan it with `kvplan estimate FILE`, or name it as the scenario's `model:`; "
                            "docs/scenarios.md")
        for name in value:
            if name not in fields:
                dotted = f"{key}.{name}" if key else str(name)
                raise self.fail(dotted, f"unknown key {shown(name)} in {where}", suggest_key(name, fields))
        out = {}
        for name, spec in fields.items():
            dotted = f"{key}.{name}" if key else name
            if name not in value or value[name] is None:
                if spec.required:
                    raise self.fail(key, f"{where}: missing required key {name!r} ({spec.doc})")
                out[name] = spec.default
                continue
            out[name] = self.value(dotted, spec, value[name])
        return out

    def value(self, key: str, spec: Field, value):
        kind = spec.kind
        if kind == "section":
            return self.section(key, value, spec.children)
        if kind == "text":
            return self.text(key, kind, value)
        if kind in ("tokens", "tokens0"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise self.expect(key, kind, value)
            if kind == "tokens0" and value in (0, "0"):
                return 0
            try:
                return parse_tokens(value, key)
            except UsageError:
                raise self.expect(key, kind, value) from None
        if kind == "count":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
                raise self.expect(key, kind, value)
            return value
        if kind in ("ratio", "number"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise self.expect(key, kind, value)
            if kind == "ratio" and value > 1:
                raise self.expect(key, kind, value)
            return float(value)
        if kind in ("size", "size0", "weights"):
            if kind == "weights" and value == "auto":
                return None
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise self.expect(key, kind, value)
            try:
                return parse_size(value, key, allow_zero=kind == "size0")
            except UsageError:
                raise self.expect(key, kind, value) from None
        if kind == "switch":
            if not isinstance(value, bool):
                raise self.expect(key, kind, value)
            return value
        if kind == "word":  # checked by the option's own parser (EstimateRequest.from_options)
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise self.expect(key, kind, value)
            return self.text(key, kind, value) if isinstance(value, str) else str(value)
        if kind == "techniques":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list):
                raise self.expect(key, kind, value)
            return tuple(self.text(f"{key}[{i}]", kind, item) for i, item in enumerate(value))
        raise AssertionError(kind)  # pragma: no cover - SCHEMA holds only the kinds above


def build_scenario(data, source: str, lines: dict[str, int], default_name: str) -> Scenario:
    """Check parsed YAML against SCHEMA and cross-field rules; return a Scenario."""
    check = Checker(source, lines)
    if data is None:
        raise ScenarioError(f"{source}: the file is empty", "a scenario needs model, deployment and workload; see docs/scenarios.md")
    top = check.section("", data, SCHEMA)
    dep, work, budgets = top["deployment"], top["workload"], top["budgets"] or {}
    if work["shared_prefix_tokens"] > work["prompt_tokens"]:
        raise check.fail(
            "workload.shared_prefix_tokens",
            f"workload.shared_prefix_tokens ({work['shared_prefix_tokens']:,}) exceeds workload.prompt_tokens ({work['prompt_tokens']:,})",
        )
    if work["prefix_sharers"] is not None:
        if not work["shared_prefix_tokens"]:
            raise check.fail("workload.prefix_sharers", "workload.prefix_sharers needs workload.shared_prefix_tokens > 0")
        if work["prefix_sharers"] > work["concurrency"]:
            raise check.fail(
                "workload.prefix_sharers",
                f"workload.prefix_sharers ({work['prefix_sharers']}) exceeds workload.concurrency ({work['concurrency']})",
            )
    if work["shared_prefix_tokens"]:
        for i, spec in enumerate(top["techniques"]):
            if spec.split(":", 1)[0].strip().lower() in ("prefix", "prefix_cache"):
                raise check.fail(
                    f"techniques[{i}]", f"techniques[{i}]: {spec!r} repeats workload.shared_prefix_tokens",
                    "give the shared prefix once, as workload.shared_prefix_tokens",
                )
    return Scenario(
        name=top["name"] or default_name,
        source=source,
        model=top["model"],
        description=top["description"] or "",
        kv_dtype=top["kv_dtype"],
        gpu=dep["gpu"],
        tp=dep["tp"],
        pp=dep["pp"],
        mem_util=dep["mem_util"],
        reserve_bytes=parse_size(dep["reserve"], "deployment.reserve") if isinstance(dep["reserve"], str) else dep["reserve"],
        weight_bytes=None if dep["weights"] == "auto" else dep["weights"],
        gpu_memory_bytes=dep["gpu_memory"],
        quantization=dep["quantization"],
        prompt_tokens=work["prompt_tokens"],
        output_tokens=work["output_tokens"],
        concurrency=work["concurrency"],
        shared_prefix_tokens=work["shared_prefix_tokens"],
        prefix_sharers=work["prefix_sharers"],
        techniques=top["techniques"],
        max_kv_gib_per_gpu=budgets.get("max_kv_gib_per_gpu"),
        min_concurrency=budgets.get("min_concurrency"),
        max_tpot_ms=budgets.get("max_tpot_ms"),
        options=estimate_options(top),
        lines=dict(lines),
    )


def estimate_options(top: dict) -> tuple[tuple[str, object], ...]:
    """The values of the keys that are `kvplan estimate` options (Field.flag), written in the file, as the option
    takes them: a token count or a size as text ("4096", "42949672960B"), a count or a switch as is."""
    out = []
    for section in ("deployment", "engine"):
        values = top[section] or {}
        for name, spec in SCHEMA[section].children.items():
            value = values.get(name)
            if spec.flag is None or value is None:
                continue
            text = f"{value}B" if spec.kind == "size" else str(value) if spec.kind == "tokens" else value
            out.append((spec.option, text))
    return tuple(out)
