"""Modules SGLang holds whole on every TP rank where vLLM 0.34 splits them, or splits where vLLM holds them whole.

kvplan's per-GPU weights follow vLLM 0.34's split (the per-module tables' Module.whole, configs/weight_tables, and
weights/roles.py for a tensor table); SGLang's plan starts from the same figure (sglang_report._stage_weights) and
corrects it here, family by family, for the modules SGLang 0.5.23 builds otherwise. Read in the 0.5.23 wheel
(python/sglang/srt/...) beside vLLM 0.34's model files, for the families whose whole modules vLLM builds as
ReplicatedLinear or with disable_tp=True (docs/weights.md):
- the same in both: MLA's q_a_proj / kv_a_proj_with_mqa (models/deepseek_v2.py DeepseekV2AttentionMLA:
  fused_qkv_a_proj_with_mqa, kv_a_proj_with_mqa ReplicatedLinear; kimi_k3.py KimiK3MLAAttention), the DSA indexer
  (layers/attention/dsa/dsa_indexer.py: wq_b, wk, weights_proj ReplicatedLinear), DeepSeek-V4's wq_a / wkv
  (models/deepseek_v4.py MqaAttentionBase), compressor (layers/attention/dsv4/compressor.py wkv_gate, ape) and
  indexer (dsv4/indexer.py wq_b, weights_proj), KDA's f_a_proj / g_a_proj (kimi_linear.py, kimi_k3.py,
  glm5_next.py), Kimi K3's routed_expert_down_proj / _up_proj and attention-residual projections (kimi_k3.py),
  Nemotron-H's fc1 / fc2_latent_proj (nemotron_h.py), Qwen4-Exp's PLE key_proj / value_proj (qwen4_exp.py), Gemma 3n's
  AltUp and per-layer input gate / projection (gemma3n_causal.py), Gemma 4's per-layer input gate / projection
  (gemma4_causal.py Gemma4DecoderLayer);
- different: Gemma 4's per_layer_model_projection, a ReplicatedLinear in SGLang (gemma4_causal.py Gemma4TextModel,
  first pipeline rank) and a ColumnParallelLinear in vLLM (gemma4.py). ZAYA's o_proj is a RowParallelLinear in
  SGLang (models/zaya.py ZayaAttention) and a ReplicatedLinear in vLLM, but SGLang serves Megatron-style ZAYA
  checkpoints only, which kvplan has no per-module table of (sglang_zaya.py), so nothing is corrected there.

Sized from the family's per-module table where it adds up (engines/vllm_load.module_table), at the checkpoint's float
width, or in SGLang's online layout under --quantization (_sized): for a quantized checkpoint nothing is corrected
(the module's stored width is not known here) and a note says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class WholeRule:
    module: re.Pattern  # the table's module names (Module.name) the rule covers
    whole: bool  # True: SGLang holds it whole where vLLM splits it; False: the reverse
    source: str  # the SGLang class that builds it so


# model_type of the per-module table (a wrapper's text model) -> its rules
SGLANG_WHOLE: dict[str, tuple[WholeRule, ...]] = {
    "gemma4_text": (WholeRule(re.compile(r"^per_layer_model_projection$"), True,
                              "gemma4_causal.py Gemma4TextModel.per_layer_model_projection, a ReplicatedLinear"),),
}


@dataclass(frozen=True)
class SglangWhole:
    stage_bytes: tuple[int, ...]  # bytes to add on one GPU of each pipeline stage (negative: fewer)
    note: str


def _layer_of(name: str) -> int | None:
    parts = name.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[0] == "layers" and parts[1].isdigit() else None


def _sized(model, width: int):
    """Bytes of a table module as SGLang 0.5.23 holds it: at the float width, or under its --quantization fp8 in the
    online layout (configs/quant_online.py: the weight at bytes_per_weight with a float32 scale an output row, `other`
    at the float width; gemma4_causal.py builds per_layer_model_projection with the quant_config)."""
    if not getattr(model, "online_quantization", ""):
        return lambda m: (m.weight + m.other) * width
    from ..configs.quant_bytes import read
    from ..configs.quant_online import scheme

    q = read(scheme(model.online_quantization, "sglang").config, model.model_type)

    def size(m) -> int:
        rows = m.weight // m.inputs if m.inputs else 0
        return (int(round(m.weight * q.bytes_per_weight)) + rows * q.per_output_row_bytes
                + (q.per_tensor_bytes if m.weight else 0) + m.other * width)

    return size


def whole_delta(model, tp: int, pp: int = 1, served_16bit: bool = False) -> SglangWhole | None:
    """What SGLang 0.5.23 holds on one GPU of each stage of a (tp, pp) replica beyond kvplan's vLLM-split weights, for
    the modules SGLANG_WHOLE names; None where nothing differs (TP 1, no rule, no table that adds up)."""
    from ..capacity.shard import sglang_stage_bounds
    from ..configs.checkpoint_dtype import float_width_bytes
    from .vllm_load import module_table, raw_config

    if tp <= 1:
        return None
    checked = module_table(model)
    if checked is None:
        return None
    f, modules = checked
    rules = SGLANG_WHOLE.get(f.model_type, ())
    hits = [(m, r) for m in modules for r in rules if r.module.search(m.name)]
    if not hits:
        return None
    sources = "; ".join(dict.fromkeys(r.source for _, r in hits))
    raw = raw_config(model) or {}
    if raw.get("quantization_config") or (raw.get("text_config") or {}).get("quantization_config"):
        return SglangWhole((0,) * pp, f"SGLang 0.5.23 splits over TP otherwise than vLLM ({sources}); not corrected "
                                      "for a quantized checkpoint, whose stored width of the module is not known here")
    width = 2 if served_16bit else float_width_bytes(f)
    size = _sized(model, width)
    decoder = 1 + max((i for i in map(_layer_of, (m.name for m, _ in hits)) if i is not None), default=0)
    bounds = sglang_stage_bounds(max(decoder, pp), pp)
    stage = {i: s for s, (start, end) in enumerate(bounds) for i in range(start, end)}
    out = [0] * pp
    for m, rule in hits:
        n = size(m)
        moved = n - -(-n // tp)  # whole minus the rank's share
        layer = _layer_of(m.name)
        s = stage.get(layer, 0) if layer is not None else 0
        out[s] += moved if rule.whole else -moved
    added = max(out, key=abs)
    return SglangWhole(tuple(out), f"weights {'+' if added >= 0 else '-'} {abs(added) / 2**20:,.1f} MiB a GPU that "
                                   f"SGLang 0.5.23 holds {'whole' if added >= 0 else 'split'} where vLLM does not "
                                   f"({sources})")


__all__ = ["SGLANG_WHOLE", "SglangWhole", "WholeRule", "whole_delta"]
