"""`--emit vllm`: the `vllm serve` command that realises a plan, and what it cannot.

vLLM applies at runtime only serving settings and its own KV dtypes: fp8
(e4m3, per-tensor scales), fp8_e5m2, paging (block size), prefix caching, CPU
offloading and parallelism. Architecture what-ifs need a checkpoint trained for
them; eviction and Quest need engine support vLLM does not have; integer and
KIVI formats are not vLLM KV cache dtypes.
"""

from __future__ import annotations

import shlex

from .._record import record
from ..core.model import ModelSpec
from ..render import Report
from ..techniques.architecture import HybridWhatIf, LatentWhatIf, RegroupHeads, ShareLayers
from ..techniques.quantize import Quantize
from ..techniques.tokens import CompressedSparse, Evict, Pyramid, Quest, Window
from ..units import GIB

# vLLM's --block-size choices on CUDA
VLLM_BLOCK_SIZES = (1, 8, 16, 32, 64, 128)
TRAINED = "needs a checkpoint trained for it; vLLM serves the architecture a checkpoint has"
UPTRAINED = "needs an uptrained checkpoint with fewer KV heads (GQA/MQA)"
NO_ENGINE = "needs engine support that vLLM does not have"
NOT_A_DTYPE = "is not a vLLM KV cache dtype (vLLM offers auto, fp8 = fp8_e4m3, fp8_e5m2)"


@record
class NotApplied:
    spec: str
    reason: str


def _unsupported(technique) -> str | None:
    """Why vLLM cannot realise this technique at serving time (None: it can)."""
    if isinstance(technique, (ShareLayers, LatentWhatIf, HybridWhatIf, CompressedSparse)):
        return TRAINED
    if isinstance(technique, Window):
        return TRAINED + " (vLLM uses the sliding_window of the model's config)"
    if isinstance(technique, RegroupHeads):
        return UPTRAINED
    if isinstance(technique, (Evict, Pyramid)):
        return NO_ENGINE + " (token eviction)"
    if isinstance(technique, Quest):
        return NO_ENGINE + " (Quest page selection)"
    if isinstance(technique, Quantize) and not technique.storage.name.startswith("fp8"):
        return f"{technique.storage.name}{' (KIVI layout)' if technique.storage.granularity == 'kivi' else ''} {NOT_A_DTYPE}"
    return None


def _kv_cache_dtype(model: ModelSpec, kv_dtype_name: str) -> tuple[str, bool, list[str]]:
    """(--kv-cache-dtype value, skip sliding-window layers?, notes) from the final caches."""
    notes: list[str] = []
    quantized, native_windows = set(), False
    for layer in model.layers:
        for cache in layer.caches:
            if cache.kind not in ("attention", "latent"):
                continue
            name = cache.storage.name
            if name.startswith("fp8"):
                quantized.add(name)
                if cache.storage.granularity == "head":
                    notes.append("vLLM's fp8 KV cache uses per-tensor scales, not per-head ones")
            elif cache.policy.window_tokens is not None:
                native_windows = True
    if not quantized:
        expected = {"float32": "fp32", "float16": "fp16"}.get(model.weight_dtype, "bf16")
        if kv_dtype_name in ("bf16", "fp16", "fp32") and kv_dtype_name != expected:
            notes.append(f"vLLM's auto KV dtype follows the model dtype ({model.weight_dtype}); "
                         f"use --dtype to store the cache as {kv_dtype_name}")
        return "auto", False, notes
    value = "fp8_e5m2" if quantized == {"fp8_e5m2"} else "fp8"
    return value, native_windows, sorted(set(notes))


def command(result, techniques, kv_dtype_name: str, max_model_len_tokens: int) -> tuple[list[str], list[NotApplied], list[str]]:
    """(argv of `vllm serve`, techniques vLLM cannot apply, notes)."""
    plan, dep, cap = result.plan, result.deployment, result.capacity
    model = plan.model
    argv = ["vllm", "serve", model.name]
    dtype, skip_windows, notes = _kv_cache_dtype(model, kv_dtype_name)
    argv += ["--kv-cache-dtype", dtype]
    if skip_windows:
        argv += ["--kv-cache-dtype-skip-layers", "sliding_window"]
        notes.append("--kv-cache-dtype-skip-layers needs a vLLM release newer than 0.11")
    if plan.block_size is not None:
        argv += ["--block-size", str(plan.block_size)]
        if plan.block_size not in VLLM_BLOCK_SIZES:
            notes.append(f"--block-size {plan.block_size} is not one of vLLM's choices {VLLM_BLOCK_SIZES}")
    argv += ["--max-model-len", str(max_model_len_tokens)]
    if cap is not None:
        if cap.max_concurrency >= 1:
            argv += ["--max-num-seqs", str(cap.max_concurrency)]
        else:
            notes.append("not one sequence of --context fits the KV pool: vLLM would refuse to start")
    if plan.prefix is not None:
        argv.append("--enable-prefix-caching")
    if plan.offload is not None:
        argv += ["--kv-offloading-size", f"{plan.offload.cpu_bytes / GIB:g}", "--kv-offloading-backend", "native"]
        notes.append("--kv-offloading-size is in GiB, summed over TP ranks; the offloading connector "
                     "turns vLLM's hybrid KV cache manager off")
    if dep is not None:
        if dep.tp > 1:
            argv += ["--tensor-parallel-size", str(dep.tp)]
        if dep.pp > 1:
            argv += ["--pipeline-parallel-size", str(dep.pp)]
        if dep.kv_memory_bytes is not None:
            argv += ["--kv-cache-memory-bytes", str(dep.kv_memory_bytes)]
        elif dep.gpu is not None:
            argv += ["--gpu-memory-utilization", f"{dep.mem_util:g}"]
    skipped = [NotApplied(t.spec, reason) for t in techniques if (reason := _unsupported(t)) is not None]
    if skipped and "--max-num-seqs" in argv:
        notes.append("--max-num-seqs comes from kvplan's capacity, which counts the techniques vLLM does not apply")
    return argv, skipped, notes


def add_to_report(report: Report, result, techniques, kv_dtype_name: str, max_model_len_tokens: int) -> None:
    """`--emit vllm`: the command under report.data["emit"] and as lines."""
    argv, skipped, notes = command(result, techniques, kv_dtype_name, max_model_len_tokens)
    text = shlex.join(argv)
    report.data["emit"] = {
        "engine": "vllm",
        "command": text,
        "argv": argv,
        "not_applied": [{"spec": s.spec, "reason": s.reason} for s in skipped],
        "notes": notes,
    }
    report.lines.append("vLLM command that realises the plan:")
    report.lines.append(f"  {text}")
    for s in skipped:
        report.lines.append(f"  not applied by vLLM: {s.spec}: {s.reason}")
    report.lines.extend(f"  note: {n}" for n in notes)


__all__ = ["command", "add_to_report", "NotApplied"]
