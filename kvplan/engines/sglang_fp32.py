"""The bytes SGLang's weights hold beyond the checkpoint's because SGLang builds some parameters in float32 whatever
the checkpoint's dtype: MoE routers and score-correction biases, the DSA indexer's k_norm, recurrent layers' A_log,
Kimi-Linear's KDA conv1d and dt_bias. configs/param_fp32.py names them family by family, with the SGLang class of
each and the releases (0.5.9, 0.5.23) that do so; the records SGLang shares with vLLM are vLLM's own
(Fp32Rule.sglang). Each such parameter loads into a 4 B float32 where kvplan's plan sizes it at the checkpoint's
float width, so SGLang's weights hold (4 - width) B more per parameter.

Where SGLang holds them, read in the 0.5.23 wheel (python/sglang/srt/layers/linear.py, models/*.py): routers
(ReplicatedLinear or a bare nn.Parameter such as deepseek_v2.py MoEGate, glm4_moe.py Glm4MoeGate), their biases and
norms whole on every TP rank, as vLLM; the recurrent layers' A_log / dt_bias / conv1d split over TP (MambaMixer2 A
divide(num_heads, tp_size); qwen3_next.py A_log num_v_heads // attn_tp_size; kimi_linear.py MergedColumnParallelLinear
qkv_conv1d). Each stage of a pipeline holds its own layers' (capacity.shard.sglang_stage_bounds), so the bytes are
added stage by stage.

Sized from kvplan's per-module table of the family (configs/weight_tables/__init__.py), only where it adds up to the
family's parameter count. A checkpoint's tensor table that stores any float32 tensor may store these in float32
already: then nothing is added and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from .vllm_fp32 import FP32_BYTES  # 4 B a float32 parameter


@dataclass(frozen=True)
class SglangFp32:
    params: int  # parameters SGLang holds in float32 (the whole model)
    extra_bytes_per_param: int  # 4 - the width kvplan sizes them at
    stage_bytes: tuple[int, ...]  # the extra bytes on one GPU of each pipeline stage
    sources: tuple[str, ...]  # the SGLang classes that build them

    def describe(self) -> str:
        """'+ X MiB ...' for the pool's note."""
        added = max(self.stage_bytes)
        size = f"{added / 2**20:,.1f} MiB" if added >= 2**20 else f"{added:,} B"
        return (f"{size} a GPU for the {self.params:,} parameters SGLang holds in float32 "
                f"(+ {self.extra_bytes_per_param} B each: {'; '.join(self.sources)}; configs/param_fp32.py)")


def _layer_of(name: str) -> int | None:
    parts = name.split(".")
    if len(parts) > 1 and parts[0] == "layers" and parts[1].isdigit():
        return int(parts[1])
    return None


def upcast(model, release: str, tp: int = 1, pp: int = 1, served_16bit: bool = False) -> SglangFp32 | None:
    """What SGLang `release` ("0.5.9", "0.5.23") holds in float32 of `model` beyond kvplan's plan, on a (tp, pp)
    replica; None where kvplan cannot say (no config, no per-module table that adds up) or SGLang holds nothing in
    float32. served_16bit: a float32 checkpoint SGLang loads in 16 bits (sglang_report.served_16bit), whose other
    floats are 2 B; else nothing is added to a float32 checkpoint."""
    from ..capacity.shard import sglang_stage_bounds
    from ..configs import weight_tables
    from ..configs.checkpoint_dtype import float_width_bytes
    from ..configs.param_fp32 import SGLANG_FP32, live, matching
    from .vllm_load import module_table

    checked = module_table(model) if model.model_type in SGLANG_FP32 else None
    if checked is None:
        return None
    f, modules = checked
    rules = [r for r in live(f, SGLANG_FP32.get(f.model_type, ())) if r.held_by_sglang(release)]
    if not rules:
        return None
    extra = FP32_BYTES - (2 if served_16bit else float_width_bytes(f))
    if extra <= 0:
        return None
    tp, pp = max(tp, 1), max(pp, 1)
    # the stages split the checkpoint's decoder layers (get_pp_indices over them): the table's, which for LongCat-Flash
    # (two attention blocks a decoder layer) are half the cache layers kvplan plans
    decoder = 1 + max((i for i in map(_layer_of, (m.name for m in modules)) if i is not None), default=0)
    bounds = sglang_stage_bounds(max(decoder, pp), pp)
    stage = {i: s for s, (start, end) in enumerate(bounds) for i in range(start, end)}
    per_stage = [0] * pp
    params, sources = 0, []
    for m in modules:
        rule = matching(m, rules)
        if rule is None:
            continue
        n = m.weight + m.other
        params += n
        if rule.sglang_source not in sources:
            sources.append(rule.sglang_source)
        layer = _layer_of(m.name)
        # a module outside the decoder layers: the LM head (and final norm) on the last stage, the embeddings on the
        # first (SGLang 0.5.23 bailing_moe_linear.py: lm_head only `if self.pp_group.is_last_rank`)
        s = stage.get(layer, 0) if layer is not None else pp - 1 if m.role in ("lm_head", "norms") else 0
        # held whole on every TP rank (routers, norms, biases: weight_tables._whole_floats) or split over TP
        per_stage[s] += n * extra if weight_tables._whole_floats(m) else -(-n * extra // tp)
    if not params:
        return None
    return SglangFp32(params, extra, tuple(per_stage), tuple(sources))


def stores_float32(record) -> bool:
    """Whether a checkpoint's tensor table may already store these parameters in float32 (it holds a float32
    tensor, or gives no dtypes): then kvplan's figure holds them at 4 B already, or cannot tell."""
    from .vllm_fp32 import stores_no_float32

    return record is not None and record.source != "estimated from config" and not stores_no_float32(record)


__all__ = ["SglangFp32", "upcast", "stores_float32", "FP32_BYTES"]
