"""DeepSeek-V4's hybrid compressed attention: what each layer caches.

Read from transformers' configuration_deepseek_v4.py / modeling_deepseek_v4.py
(5.25) and vLLM's DeepSeek-V4 cache specs (0.20-0.33). Every layer keeps ONE
K/V head of head_dim (K and V are the same vector; its last qk_rope_head_dim
columns carry the rope) for the newest sliding_window tokens. On top of that:

- compressed sparse attention (CSA, ratio m = 4): one entry of head_dim per m
  tokens, each pooled from an overlapping window of 2m tokens, plus indexer keys
  of index_head_dim per entry; a step reads the index_topk entries the indexer
  picks (after scoring every indexer key) plus the window;
- heavily compressed attention (HCA, ratio m' = 128): one entry per m' tokens
  (non-overlapping), all read every step, plus the window; no indexer.

Compressed lengths are floor(n / m): the unfinished group waits in the
compressor's state. That state is a fixed per-sequence buffer: for each
compressor (CSA also compresses its indexer keys) vLLM keeps coff x m tokens
(coff = 2 where windows overlap, else 1) of projected kv and score, coff x width
each, in float32 (CompressorStateCache: state_dim = 2 x coff x head_dim).
transformers keeps the same tokens in the model dtype (its overlap gate in
float32); kvplan sizes vLLM's float32 buffer.

The checkpoint lists one ratio per layer (compress_ratios: 0 = sliding only,
4 = CSA, 128 = HCA; one extra entry for the MTP layer, which is not cached);
transformers 5 writes layer_types and compress_rates instead.
"""

from __future__ import annotations

import re

from ..core.layers import LayerSpec, RecurrentState, TokenCache, TokenPolicy
from ..core.storage import FP32
from ..errors import ConfigError
from . import kinds as K
from .param_embeddings import embedding_params
from .fields import Fields

# transformers' _COMPRESS_RATIO_TO_LAYER_TYPE and default_compress_rates
RATIO_KINDS = {0: K.SLIDING, 4: K.CSA, 128: K.HCA}
DEFAULT_RATES = {K.CSA: 4, K.HCA: 128}
LEGACY_RATE_FIELDS = {K.CSA: "compress_rate_csa", K.HCA: "compress_rate_hca"}
DEFAULTS = {"head_dim": 512, "sliding_window": 128, "index_head_dim": 128, "index_topk": 512,
            "num_key_value_heads": 1}


def compress_ratio_kinds(f: Fields, n: int, allowed, rest) -> list[str]:
    """The checkpoint's compress_ratios (n entries, or n + the MTP layers) -> kinds."""
    ratios = f.list("compress_ratios")
    mtp = f.int("num_nextn_predict_layers", default=0, minimum=0)
    if len(ratios) not in (n, n + mtp):
        raise ConfigError(f"{f.source}: 'compress_ratios' has {len(ratios)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", f"give {n} entries (or {n + mtp} with the MTP layers)")
    out = []
    for i, ratio in enumerate(ratios[:n]):
        kind = RATIO_KINDS.get(ratio) if isinstance(ratio, int) and not isinstance(ratio, bool) else None
        if kind is None:
            raise ConfigError(f"{f.source}: compress_ratios[{i}] is {ratio!r}; DeepSeek-V4 layers use 0 (sliding "
                              "window only), 4 (compressed sparse) or 128 (heavily compressed)",
                              "fix the config's compress_ratios")
        out.append(kind)
    return out


def default_kinds(f: Fields, n: int) -> list[str]:
    """transformers' default schedule: two HCA layers, then CSA and HCA alternating."""
    return [K.HCA] * min(n, 2) + [K.CSA if i % 2 else K.HCA for i in range(max(n - 2, 0))]


def compress_rate(f: Fields, kind: str) -> int:
    """compress_rates[kind], else the legacy compress_rate_csa / _hca, else 4 / 128."""
    rates = f.get("compress_rates")
    if isinstance(rates, dict) and kind in rates:
        return f.check_int(f"compress_rates.{kind}", rates[kind], minimum=1)
    return f.int(LEGACY_RATE_FIELDS[kind], default=DEFAULT_RATES[kind], minimum=1)


def rope_dim(f: Fields) -> int:
    """qk_rope_head_dim (the checkpoint's field), else head_dim x partial_rotary_factor (64 of 512)."""
    head = f.int("head_dim")
    if f.has("qk_rope_head_dim"):
        return f.int("qk_rope_head_dim", minimum=0, maximum=head)
    factor = f.get("partial_rotary_factor")
    if isinstance(factor, (int, float)) and not isinstance(factor, bool) and 0 <= factor <= 1:
        return int(head * factor)
    return head // 8


def _shared_kv(f: Fields, policy: TokenPolicy, label: str) -> TokenCache:
    """One K/V vector of head_dim per entry (K and V are the same tensor)."""
    return TokenCache(kind="latent", heads=1, key_dim=f.int("head_dim"), rope_dim=rope_dim(f), policy=policy,
                      label=label)


def _compressor_state(f: Fields, kind: str, ratio: int) -> RecurrentState:
    """vLLM's CompressorStateCache: coff x ratio tokens of kv and score (coff x width each), float32;
    CSA's indexer has its own compressor over index_head_dim."""
    coff = 2 if kind == K.CSA else 1
    widths = (f.int("head_dim"), f.int("index_head_dim")) if kind == K.CSA else (f.int("head_dim"),)
    elements = sum(coff * ratio * 2 * coff * width for width in widths)
    # replicated under TP, as the one K/V head it compresses (max_tp_shards=1 on vLLM's specs)
    return RecurrentState("compressor", 0, elements, conv_storage=FP32, ssm_storage=FP32, tp_replicated=True)


def compressed_layer(f: Fields, kind: str) -> LayerSpec:
    window = f.int("sliding_window", minimum=1)
    if f.int("num_key_value_heads", minimum=1) != 1:
        raise ConfigError(f"{f.source}: DeepSeek-V4 attention has one shared K/V head, but num_key_value_heads is "
                          f"{f.int('num_key_value_heads')}", "fix the config (num_key_value_heads 1)")
    if kind == K.SLIDING:
        return LayerSpec(caches=(_shared_kv(f, TokenPolicy(window_tokens=window), f"shared K/V window {window}"),))
    ratio = compress_rate(f, kind)
    if kind == K.CSA:
        topk = f.int("index_topk", minimum=1)
        main = _shared_kv(f, TokenPolicy(compress_ratio=ratio, compress_topk=topk, compress_window=window,
                                         compress_selector_keys=False), f"CSA 1/{ratio} + window {window}")
        indexer = TokenCache(kind="indexer", heads=1, key_dim=f.int("index_head_dim", minimum=1),
                             policy=TokenPolicy(compress_ratio=ratio, compress_selector_keys=False),
                             label=f"indexer keys 1/{ratio}")
        return LayerSpec(caches=(main, indexer), state=_compressor_state(f, kind, ratio))
    main = _shared_kv(f, TokenPolicy(compress_ratio=ratio, compress_window=window, compress_selector_keys=False),
                      f"HCA 1/{ratio} + window {window}")
    return LayerSpec(caches=(main,), state=_compressor_state(f, kind, ratio))


# Bytes per parameter of a routed expert by the checkpoint's expert_dtype: FP4 with one E8M0 scale per
# 32 values (MXFP4), FP8, BF16.
EXPERT_BYTES = {"fp4": 0.5 + 1 / 32, "fp8": 1.0, "bf16": 2.0}


# DeepSeek-V4's float parameters held in float32 (the rest, norms and the BF16 linears, in bfloat16), as vLLM 0.34
# builds them (models/deepseek_v4): nvidia/model.py DeepseekV4DecoderLayer hc_attn_* / hc_ffn_* and DeepseekV4Model
# hc_head_* (torch.float32 nn.Parameters), DeepseekV4MoE gate.e_score_correction_bias (the checkpoint's
# ffn.gate.bias, torch.float32), compressor.py DeepseekCompressor ape (state_dtype float32), attention.py attn_sink
# (make_attention_sink(..., torch.float32)); and DeepSeek-V4.1's gate.bias_vl (the same DeepseekV4MoE, a torch.float32
# nn.Parameter where the config has a vision tower)
_FP32 = re.compile(r"(?:^|\.)hc_\w+$|\.ape$|\.attn_sink$|\.gate\.bias(?:_vl)?$")


def weight_format(f: Fields, layers: list, total: int, rest_dtype: str, rest_bytes: float):
    """(label, average bytes per parameter, bytes each TP rank holds whole): module by module from kvplan's
    table of the family (configs/weight_tables/mla.py) where it adds up to the count (_by_module), else the
    routed experts in expert_dtype, the embeddings and head in BF16 and the rest at the quantized width
    (_by_share, with nothing counted whole)."""
    expert_dtype = (f.text("expert_dtype") or "fp4").lower()
    if expert_dtype not in EXPERT_BYTES or not total or not rest_bytes:
        return rest_dtype, rest_bytes, 0
    by_module = _by_module(f, layers, total, expert_dtype, rest_bytes)
    if by_module is not None:
        experts = "nvfp4" if _nvfp4_experts(f, expert_dtype) else expert_dtype
        return (f"{experts} experts + {rest_dtype}",) + by_module
    return _by_share(f, total, len(layers), expert_dtype, rest_dtype, rest_bytes) + (0,)


def _nvfp4_experts(f: Fields, expert_dtype: str) -> bool:
    """FP4 experts in NVFP4 rather than MXFP4: vLLM 0.34 models/deepseek_v4/quant_config.py DeepseekV4FP8Config
    reads quantization_config's moe_quant_algo and, for "NVFP4" with expert_dtype fp4, loads the routed experts
    with ModelOptNvFp4FusedMoE (group_size 16) instead of Mxfp4MoEMethod."""
    quant = f.raw.get("quantization_config")
    return (expert_dtype == "fp4" and isinstance(quant, dict)
            and str(quant.get("moe_quant_algo") or "").upper() == "NVFP4")


def _by_module(f: Fields, layers: list, total: int, expert_dtype: str, rest_bytes: float):
    """(average bytes per parameter, bytes each TP rank holds whole) of a DeepSeek-V4 checkpoint (or V4.1's:
    shared_compressed.weight_format passes its expert_dtype and FP8 width), module by module: the routed
    experts in expert_dtype (FP4: MXFP4, 1/2 B + one E8M0 scale per 32 values, or with
    moe_quant_algo NVFP4, 1/2 B + one F8_E4M3 scale per 16 and float32 weight_scale_2 and input_scale for each
    expert's w1, w2 and w3, held whole on every TP rank: vLLM 0.34 modelopt.py ModelOptNvFp4FusedMoE.create_weights,
    w13_ / w2_weight_scale_2 and input_scale [experts(, 2)] float32; FP8: block scaled as the other linears, vLLM
    0.34 models/deepseek_v4/quant_config.py DeepseekV4FP8Config; BF16: 2 B),
    the head in BF16 (Fp8Config never quantizes it), every other weight a table marks quantized (wq_a, wq_b,
    wkv, wo_a, wo_b, the shared experts, the indexer's wq_b) at rest_bytes (FP8 with its block scales, UE8M0
    where scale_fmt says so), and the float parameters in float32 (_FP32) or bfloat16 (embed, norms, the
    router gate, the compressors' wkv / wgate and the indexer's weights_proj, which vLLM builds with
    quant_config=None; V4.1's indexer wk, also quant_config=None, and its Engram q_weight / k_weight, bfloat16
    nn.Parameters). Whole on each TP rank: the modules weight_tables.replicated_params names, at these
    rates. None where the table does not add up to `total`."""
    from .weight_tables import _whole_floats, table

    modules = table(f, layers, None)
    if not modules or sum(m.weight + m.other for m in modules) != total:
        return None
    nvfp4 = _nvfp4_experts(f, expert_dtype)
    expert = rest_bytes if expert_dtype == "fp8" else 0.5 + 1 / 16 if nvfp4 else EXPERT_BYTES[expert_dtype]
    # NVFP4's two float32 scalars an expert tensor, whole on every rank
    stored = whole = 8.0 * sum(m.experts for m in modules) if nvfp4 else 0.0
    for m in modules:
        rate = expert if m.experts else 2.0 if m.role == "lm_head" else rest_bytes
        floats = m.other * (4 if _FP32.search(m.name) else 2)
        stored += m.weight * rate + floats
        if m.whole:
            whole += m.weight * rate + floats
        elif _whole_floats(m):
            whole += floats
    return stored / total, int(whole)


def _by_share(f: Fields, total: int, num_layers: int, expert_dtype: str, rest_dtype: str, rest_bytes: float):
    """(label, average bytes per parameter): the routed experts in expert_dtype (absent: FP4, as the model cards
    say of V4-Flash and V4-Pro: 'MoE expert weights in FP4, most other parameters in FP8'), the embeddings and
    head in BF16, the rest as the quantization_config says."""
    experts = num_layers * f.int("n_routed_experts") * 3 * f.int("hidden_size") * f.int("moe_intermediate_size")
    tables = sum(embedding_params(f))  # embeddings and LM head: BF16
    average = (experts * EXPERT_BYTES[expert_dtype] + tables * 2 + (total - experts - tables) * rest_bytes) / total
    return f"{expert_dtype} experts + {rest_dtype}", average
