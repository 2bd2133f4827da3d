"""Bytes a quantized checkpoint stores per weight, read from its config's quantization_config.

The last-resort weights estimate is parameters x bytes. For a quantized checkpoint that
needs three things the config does say: the bytes of one quantized weight with its share
of scales and zero points, which modules stay in the checkpoint's float dtype, and
whether the format quantizes every linear layer or only some. Layouts, as the formats'
own code writes them (per weight of a linear layer with `in` inputs, group g):

  AWQ (AutoAWQ WQLinear_GEMM/GEMV)  qweight b/8 + qzeros (b-bit, one per group and output) +
                                    scales (fp16, one per group and output): b/8 + (2 + b/8)/g
  GPTQ (AutoGPTQ QuantLinear)       the same three tensors + g_idx (int32 per input row: 4/out B per
                                    weight, left out; about 0.1% of an 8B model)
  FP8 block (DeepSeek, transformers FineGrainedFP8)  1 B + one float32 weight_scale_inv per a x b block
                                    (scale_fmt ue8m0: a 1-byte exponent)
  FP8 per-tensor / per-channel      1 B + one float32 scale per tensor / output row (< 0.1%)
  compressed-tensors (0.20)         pack-quantized: weight_packed b/8 + weight_scale (the model's
                                    dtype; fp8 for FP4) per group + weight_zero_point (packed b-bit)
                                    when asymmetric; int-/float-quantized: 1 B + its scales (channel:
                                    one float32 per output row);
                                    nvfp4-pack-quantized: 1/2 + an fp8 scale per 16; mxfp4: 1/2 + 1/32
  ModelOpt                          NVFP4: 1/2 + an F8_E4M3 scale per 16 (+ two F32 scalars); FP8: 1 B;
                                    MXFP8 (also quant_method "mxfp8", MiniMax-M3): 1 B + a uint8 E8M0 scale per 32
  bitsandbytes                      4-bit: 1/2 + absmax per 64 (float32, or with double quantization
                                    uint8 plus a float32 per 256 blocks); 8-bit: 1 B + SCB per row
  Quark, AutoRound (inc)            configs/quant_quark.py, configs/quant_autoround.py: FP8, OCP MX (MXFP4/6/8),
                                    NVFP4, W8A8 int8 and int4 group schemes; GPTQ / AWQ packing without g_idx, MXFP4 /
                                    MXFP8
  torchao                           configs/quant_torchao.py: Int8WeightOnly, Float8 dynamic activation + float8
                                    weight, Int4WeightOnly (plain); linear layers only (routed experts kept)
  MXFP4 (gpt-oss)                   the routed experts' weights only: 16 B of FP4 + one E8M0 scale
                                    per 32 (17/32 B); their biases and every other tensor in BF16
  FP8 with store_dtype "mxfp4"      the linear layers FP8 as above, the routed experts MXFP4 (17/32 B):
                                    vLLM 0.24.0-0.34.0 fp8.py Fp8Config.get_quant_method gives RoutedExperts
                                    Mxfp4MoEMethod, whose create_weights makes w13 / w2 uint8 [.., in / 2] and
                                    uint8 E8M0 scales [.., in / 32]; the checkpoint stores them so (MiMo-V2.x)

Embeddings are never quantized; the LM head is unless the format says it is kept (AWQ,
GPTQ without lm_head: true, bitsandbytes, FP8) or an ignore list names it. Norms, biases
and MoE routers stay in the float dtype where kvplan has a per-module count of the family
(configs/weight_tables/__init__.py), which also counts the quantized tensors for what a format stores
once per tensor (QuantBytes.per_tensor_bytes); elsewhere they are counted with the quantized
linears (under 0.1% of the bytes) and per-tensor bytes are left out. An ignore
list of ModelOpt, compressed-tensors or FP8 that keeps more (attention, a dense layer, the
shared experts) is handed on whole (QuantBytes.exclusions) and read module by module
(configs/weight_tables/__init__.py, configs/quant_exclude.py). A format or a list kvplan cannot map
gives no figure, with the reason: a guess must not look exact.

A ModelOpt config is read in either layout: config.json's (quant_method "modelopt", quant_algo,
ignore, kv_cache_scheme) or hf_quant_config.json's, which ModelOpt up to 0.29 writes beside
config.json and kvplan.sources puts in its place ({"producer": ..., "quantization": {quant_algo,
kv_cache_quant_algo, exclude_modules, group_size}}).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class QuantBytes:
    label: str  # the format in words, as a weights table shows it
    dtype: str  # short name for the quantized weights: int4, fp8, nvfp4, mxfp4 ...
    bytes_per_weight: float  # one quantized weight with its share of scales and zero points
    keeps_lm_head: bool = True  # the LM head stays in the float dtype
    experts_only: bool = False  # only the routed experts' weights are quantized (gpt-oss MXFP4)
    # a list of unquantized modules that keeps more than the head, routers and norms: the format's name for it
    # ("ModelOpt", "compressed-tensors", "FP8": configs/quant_exclude.py) and its entries, read module by module
    # (configs/weight_tables/__init__.py); keeps_lm_head then says whether the format keeps the head whatever the list says
    exclusions: tuple[str, tuple[str, ...]] | None = None
    # bytes stored once per quantized weight tensor: NVFP4's float32 global scales, per-tensor FP8's weight and
    # static input scales, compressed-tensors pack-quantized's int64 weight_shape; counted tensor by tensor where
    # kvplan's per-module count names the tensors (configs/weight_tables/__init__.py)
    per_tensor_bytes: int = 0
    # bytes stored once per input row of each quantized tensor: GPTQ's int32 g_idx (AutoGPTQ's QuantLinear
    # registers g_idx [in_features] int32, saved with the weights whatever desc_act says)
    per_input_row_bytes: int = 0
    # bytes stored once per attention layer for the KV cache: ModelOpt's k_scale and v_scale (float32 scalars,
    # self_attn.k_proj.k_scale / v_proj.v_scale) when its kv_cache_quant_algo is FP8
    kv_scale_bytes: int = 0
    # bytes stored once per output row of each quantized tensor: bitsandbytes 8-bit's float32 SCB, a channel
    # scale (compressed-tensors' and Quark's per-channel weight_scale), GPTQ's one group per row (group_size -1: a
    # 16-bit scale and a packed b-bit zero point, 2 + b/8 B, a fraction for b < 8)
    per_output_row_bytes: float = 0
    # those per-row scales sit whole on every TP rank for row-parallel modules (weights.roles.is_row_parallel), as vLLM
    # 0.34 loads a channel scale (ChannelQuantScaleParameter: compressed-tensors, Quark); False: split with their rows
    # (bitsandbytes 8-bit's SCB, which vLLM 0.34 does not load: no load_in_8bit anywhere in it)
    row_scales_whole: bool = True
    # what such a checkpoint also stores that the config does not size, for the note ("" when nothing)
    unsized: str = ""
    # the routed experts' bytes per weight where the format stores them in a format of their own (FP8's
    # store_dtype "mxfp4": 17/32), with its short name; None: at bytes_per_weight like every quantized linear
    experts_bytes_per_weight: float | None = None
    experts_dtype: str = ""
    # the 16-bit dtype the format's tool stores the unquantized tensors in when the config's torch_dtype says
    # float32 (a value copied from the source model's config); None: torch_dtype as written
    float32_stored_as: str | None = None
    # bytes of scales per routed expert in place of the experts' per-tensor and per-row scales: an engine's online FP8
    # that keeps one float32 scale for each expert's fused w13 and one for its w2 (configs/quant_online.py); every TP
    # rank holds them whole. None: the experts' scales as the format's other tensors'
    expert_scale_bytes: int | None = None
    # model_types whose MoE router (the `.gate` linear) the engine quantizes like any linear layer
    # (configs/quant_online.py); elsewhere routers stay in the float dtype
    quantized_router_families: tuple[str, ...] = ()
    # a checkpoint whose quantized linears are in more than one format (configs/quant_mixed.py): an ordered tuple of
    # (key, that format's QuantBytes), where formats_style says how a module's names find its key (ModelOpt
    # MIXED_PRECISION's quantized_layers names, compressed-tensors' config-group targets); read module by module
    # (configs/weight_mixed.py). Empty: every quantized linear at bytes_per_weight
    formats: tuple[tuple[str, "QuantBytes"], ...] = ()
    formats_style: str = ""


class Unsized(Exception):
    """The config names a quantization whose bytes kvplan cannot work out from the config alone."""


# ignore-list entries that leave nothing of size unquantized, or only what the estimate already keeps:
# the head, embeddings, routers and gates (< 0.1%), vision or audio towers (not in the text count), and
# one-dimensional tensors no format quantizes: norms of every naming (norm, input_layernorm, k_norm,
# kv_a_layernorm, GPT-2's ln_1 / ln_f) and biases (MiniMax-M2's bare 'e_score_correction_bias')
_HEAD = re.compile(r"lm_head|output_layer|embed_out")
_HARMLESS = re.compile(r"embed|wte|\bgate$|\.gate\b|router|shared_expert_gate|visual|vision|mm_projector|"
                       r"multi_modal_projector|audio|norm|(?:^|[._*])ln_\w*$|bias$")


def _kept(names, method: str) -> bool:
    """Whether an ignore list keeps the LM head; Unsized when it names anything else of size."""
    if names is None:
        return False
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Unsized(f"{method}: its list of unquantized modules is not a list of names")
    head = False
    for name in names:
        if _HEAD.search(name):
            head = True
        elif not _HARMLESS.search(name):
            raise Unsized(f"{method} leaves {name!r} unquantized, and kvplan's parameter count does not split "
                          "out that module")
    return head


def _ignored(names, method: str, head_kept: bool) -> tuple[bool, tuple[str, tuple[str, ...]] | None]:
    """(the LM head stays unquantized, the list for a per-module count): a list of the head, routers, norms
    and towers only is read as before (_kept); one that keeps anything else is kept whole for
    configs/weight_tables/__init__.py, which reads each entry as the format does. head_kept: the format never quantizes
    the head."""
    try:
        kept = _kept(names, method)
    except Unsized:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise
        return head_kept, (method, tuple(names))
    return head_kept or kept, None


def _positive_int(value, what: str, method: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise Unsized(f"{method}: {what} is {value!r}, not a positive integer")
    return value


def _group(value, method: str) -> int:
    """A group size: a positive integer, or -1 for one group per row."""
    if value == -1 and not isinstance(value, bool):
        return -1
    return _positive_int(value, "group_size", method)


def _grouped(bits: int, group: int, scale_bytes: float, zero_point: bool) -> float:
    """Packed b-bit weights with one scale (and zero point) per group of inputs; group -1: one per output row,
    which GPTQ counts per row (_gptq) and AWQ leaves out (below 0.1%)."""
    if group <= 0:
        return bits / 8
    return bits / 8 + (scale_bytes + (bits / 8 if zero_point else 0)) / group


def _awq(q: dict) -> QuantBytes:
    bits = _positive_int(q.get("bits", q.get("w_bit", 4)), "bits", "AWQ")
    group = _group(q.get("group_size", q.get("q_group_size", 128)), "AWQ")
    version = str(q.get("version") or "gemm").lower()
    if version not in ("gemm", "gemv", "exllama"):
        raise Unsized(f"AWQ version {version!r}: kvplan knows the gemm, gemv and exllama layouts")
    _kept(q.get("modules_to_not_convert"), "AWQ")
    zero = q.get("zero_point", True) is not False
    # AutoAWQ loads the model to quantize in float16 (awq/models/base.py BaseAWQForCausalLM.from_pretrained,
    # torch_dtype=torch.float16: "May not work with other values than float16") and saves its tensors as loaded,
    # while the config keeps the source's torch_dtype: TheBloke/tulu-13B-AWQ's config says float32 and its
    # model.safetensors is 7.25 GB, the embeddings, head and norms at 2 B
    return QuantBytes(f"AWQ int{bits}, group {group}", f"int{bits}", _grouped(bits, group, 2, zero),
                      float32_stored_as="float16")


def _gptq(q: dict) -> QuantBytes:
    bits = _positive_int(q.get("bits", 4), "bits", "GPTQ")
    group = _group(q.get("group_size", 128), "GPTQ")
    fmt = str(q.get("checkpoint_format") or "gptq").lower()
    if fmt not in ("gptq", "gptq_v2"):
        raise Unsized(f"GPTQ checkpoint_format {fmt!r}: kvplan knows the gptq and gptq_v2 layouts")
    _kept(q.get("modules_to_not_convert"), "GPTQ")
    # group_size -1 is one group of all `in` inputs (AutoGPTQ QuantLinear: self.group_size = infeatures): qzeros
    # int32 [1, out // 32 * bits] and scales float16 [1, out], 2 + b/8 B per output row (vLLM 0.34 auto_gptq.py
    # create_weights: scales and qzeros [input_size // group_size, ...] with group_size = input_size); their share
    # is 0.03-0.08% of a 13B-70B checkpoint's bytes (8-bit: 3 B a row)
    rows = 2 + bits / 8 if group == -1 else 0
    return QuantBytes(f"GPTQ int{bits}, group {group}", f"int{bits}", _grouped(bits, group, 2, True),
                      keeps_lm_head=q.get("lm_head") is not True, per_input_row_bytes=4, per_output_row_bytes=rows,
                      unsized=_GPTQ_ZERO_BIASES)


# What both engines refuse in a GPTQ or AWQ config when they read it (vLLM 0.34 auto_gptq.py
# AutoGPTQConfig.from_config, auto_awq.py AutoAWQConfig.from_config; SGLang 0.5.23 gptq/gptq.py GPTQConfig.from_config,
# awq/awq.py AWQConfig.from_config): a key read with get_from_keys ("Cannot find any of [...] in the model's
# quantization config"), and bits neither takes: SGLang's GPTQConfig.__init__ takes 2, 3, 4 or 8 ("only 2/3/4/8-bit"),
# vLLM 0.22-0.34 AutoGPTQConfig.TYPE_MAP only 4 or 8 with sym (engines/vllm_quant_support.py, a note per release);
# AWQ: vLLM 0.34 AutoAWQConfig.TYPE_MAP 4, SGLang 0.5.23 AWQConfig 4 and AWQMarlinConfig.TYPE_MAP 4 or 8. SGLang
# reaches AWQMarlinConfig only from a config naming bits and group_size: awq/awq.py is_awq_marlin_compatible reads
# quant_config.get("bits") / .get("group_size") (None: no conversion) and AWQMarlinConfig.from_config
# get_from_keys(["bits"]) / (["group_size"]), so AutoAWQ's w_bit / q_group_size layout stays on AWQConfig, 4 bits only
_REQUIRED = {"gptq": (("bits",), ("group_size",), ("desc_act",)),
             "awq": (("w_bit", "bits"), ("q_group_size", "group_size"), ("zero_point",))}
_BITS = {"gptq": (2, 3, 4, 8), "awq": (4, 8)}
_AWQ_MARLIN_KEYS = ("bits", "group_size")  # SGLang's AWQMarlinConfig, the one AWQ class of either engine taking 8


def _listed(values) -> str:
    """2, 3, 4 or 8"""
    *head, last = map(str, values)
    return f"{', '.join(head)} or {last}" if head else last


def refusal(quant: dict) -> str | None:
    """Why vLLM 0.34 and SGLang 0.5.23 both refuse this GPTQ or AWQ quantization config, naming the field and what
    they accept (None: another format, or one they read; a value of the wrong type is left to _gptq / _awq)."""
    method = str(quant.get("quant_method") or "").lower()
    kind = "gptq" if method in ("gptq", "auto_gptq", "gptq_marlin") else "awq" if method in (
        "awq", "auto_awq", "awq_marlin") else None
    if kind is None:
        return None
    for keys in _REQUIRED[kind]:
        if not any(key in quant for key in keys):
            return (f"{kind.upper()} config without {' or '.join(keys)}, which vLLM 0.34 and SGLang 0.5.23 require "
                    f"(\"Cannot find any of {list(keys)} in the model's quantization config\")")
    field = next(key for key in _REQUIRED[kind][0] if key in quant)
    bits, accepted, why = quant[field], _BITS[kind], ""
    if kind == "awq" and not all(key in quant for key in _AWQ_MARLIN_KEYS):
        accepted, why = (4,), (" (8 only through AWQMarlinConfig, which reads bits and group_size, not AutoAWQ's "
                               "w_bit / q_group_size)")
    if isinstance(bits, int) and not isinstance(bits, bool) and bits not in accepted:
        return (f"{field} is {bits}; SGLang 0.5.23 loads {kind.upper()} with {_listed(accepted)} "
                f"bits{why}, vLLM 0.34 with {'4 or 8' if kind == 'gptq' else '4'}")
    return None


# AutoGPTQ up to 0.7.1, its last release, stores a zero float16 bias [out] beside each quantized linear of a
# bias-less model (auto_gptq/modeling/_utils.py make_quant built every QuantLinear with bias=True until PR #602,
# commit 82070a1 of 2024-03-25, after v0.7.1); the config does not say which release made the checkpoint. vLLM 0.34 skips them at load (models/utils.py
# AutoWeightsLoader.load_weights: "Ignore unexpected biases (typically from GPTQ models)")
_GPTQ_ZERO_BIASES = ("the zero float16 biases AutoGPTQ up to 0.7.1 stores beside each quantized linear of a "
                     "bias-less model (2 B an output row), which vLLM skips at load")


# quant_method values vLLM 0.34 accepts (quantization/__init__.py) whose bytes the config cannot give, and why
_NOT_FROM_CONFIG = {
    "experts_int8": "vLLM quantizes a float checkpoint's routed experts to int8 when it loads them (experts_int8.py "
                    "ExpertsInt8Config: Int8OnlineMoEMethod, the linear layers unquantized), so the checkpoint holds "
                    "them in its float dtype; vLLM then holds them at 1 B a weight plus a float32 scale per output row",
    "online": "vLLM quantizes a float checkpoint when it loads it, and 0.34 refuses it in a checkpoint's config "
              "(online/base.py OnlineQuantizationConfig.from_config raises)",
    "moe_wna16": "vLLM's kernel for a GPTQ or AWQ checkpoint's experts, not a checkpoint format: 0.34 moe_wna16.py "
                 "MoeWNA16Config.from_config reads the format from quant_method, which must be gptq or awq",
    # vLLM 0.34 w4afp8.py W4AFP8Config.get_checkpoint_weight_mapper: each routed expert projection is stored as an
    # int8 `weight` (two int4 a byte) with a `weight_scale_inv` per 128 inputs and an `input_scale` (dropped); the
    # scales' dtype is not fixed by either reader: vLLM 0.34 CompressedTensorsW4A8Fp8MoEMethod.create_weights holds
    # them in the model dtype, SGLang 0.5.23 W4AFp8MoEMethod.create_weights in float32, and both copy_ (cast) what
    # the file has; PhalaCloud/GLM-5.2-W4AFP8 is reported (by a third-party converter, not a listing read here) to
    # ship BF16, and no published tensor listing settles other producers'
    "w4afp8": "FP8 block-scaled 128 x 128 linears and int4 routed experts packed two a byte with a weight_scale_inv "
              "per 128 inputs and an input_scale each (vLLM 0.34 w4afp8.py); the expert scales' dtype is the "
              "producer's, not the config's (vLLM 0.34 loads them into the model dtype, SGLang 0.5.23 into float32, "
              "both casting), so an expert weight is 1/2 + 2/128 or 1/2 + 4/128 B",
}


def _fp8(q: dict) -> QuantBytes:
    # vLLM 0.34 fp8.py Fp8Config.from_config: ignored_layers, else (absent or empty) modules_to_not_convert
    _, exclusions = _ignored(q.get("ignored_layers") or q.get("modules_to_not_convert"), "FP8", True)
    # store_dtype: vLLM's Fp8Config only (fbgemm_fp8's FBGEMMFp8Config does not read it)
    experts = _store_dtype(q) if str(q.get("quant_method") or "").lower() == "fp8" else {}
    block = q.get("weight_block_size")
    if isinstance(block, list) and len(block) == 2:
        a, b = (_positive_int(x, "weight_block_size", "FP8") for x in block)
        scale = 1 if str(q.get("scale_fmt", "")).lower() == "ue8m0" else 4  # UE8M0 exponents, else float32
        return QuantBytes(f"FP8 block-scaled {a}x{b}", "fp8", 1 + scale / (a * b), exclusions=exclusions,
                          **experts)
    # vLLM's Fp8LinearMethod: a float32 weight_scale per tensor, and an input_scale when activation_scheme is static
    static = str(q.get("activation_scheme") or "").lower() == "static"
    return QuantBytes("FP8", "fp8", 1.0, exclusions=exclusions, per_tensor_bytes=8 if static else 4, **experts)


# FP8's store_dtype: the format the routed experts are stored in. vLLM 0.24.0-0.34.0 fp8.py Fp8Config.from_config
# reads it and get_quant_method compares it with "mxfp4" only (exactly), giving RoutedExperts Mxfp4MoEMethod (its
# create_weights: w13_weight [E, 2I, H / 2] and w2_weight [E, H, I / 2] uint8, two FP4 values a byte, and
# w13_ / w2_weight_scale [.., in / 32] uint8 E8M0): 16 B + 1 B per 32 weights. Linear layers stay FP8
# (Fp8LinearMethod), ignored modules unquantized. The checkpoint stores the experts so (the loader copies them
# into those uint8 tensors; MiMo-V2.x writes *.weight_scale as uint8 E8M0, as a public SGLang loading note on
# MiMoV2 MXFP4 checkpoints states): the same bytes on disk and in vLLM.
STORE_DTYPE_EXPERT_BYTES = {"mxfp4": 17 / 32}


def _store_dtype(q: dict) -> dict:
    store = q.get("store_dtype")
    # "fp8" (XiaomiMiMo/MiMo-V2.5's config): the experts in FP8 like every other linear; vLLM 0.34 reads no other
    # value than "mxfp4", so its Fp8MoEMethod loads them at the block-scaled FP8 bytes
    if store is None or store == "fp8":
        return {}
    if store not in STORE_DTYPE_EXPERT_BYTES:
        raise Unsized(f"FP8 store_dtype {store!r}: kvplan knows 'mxfp4' and 'fp8' (vLLM 0.34 Fp8Config reads 'mxfp4' "
                      "only)")
    return {"experts_bytes_per_weight": STORE_DTYPE_EXPERT_BYTES[store], "experts_dtype": store}


def _compressed_tensors(q: dict) -> QuantBytes:
    fmt = str(q.get("format") or "").lower()
    config_groups = q.get("config_groups")
    groups = [g for g in config_groups.values() if isinstance(g, dict)] if isinstance(config_groups, dict) else []
    if not groups:
        raise Unsized("compressed-tensors: no config_groups")
    sizes, each = set(), []
    for name, group in ((n, g) for n, g in config_groups.items() if isinstance(g, dict)):
        w = group.get("weights")
        if not isinstance(w, dict):
            raise Unsized("compressed-tensors: a config group without weights")
        # a group's own "format" (vLLM 0.34 compressed_tensors.py get_scheme_dict: the config's where it has none)
        own = str(group.get("format") or fmt).lower()
        sized = _ct_weight(own, w) + (_ct_per_tensor(own, group), _ct_per_row(own, w))
        sizes.add(sized)
        each.append((str(name), own, sized, group.get("targets")))
    head, exclusions = _ignored(q.get("ignore"), "compressed-tensors", False)
    # a kv_cache_scheme stores k_scale / v_scale (and zero points) per attention layer, whose dtype and shape
    # depend on the producer (vLLM 0.34 CompressedTensorsKVCacheMethod takes one or num_kv_heads values)
    unsized = "the KV-cache scales of its kv_cache_scheme" if isinstance(q.get("kv_cache_scheme"), dict) else ""
    if len(sizes) != 1 or any(targets not in (["Linear"], "Linear") for *_, targets in each):
        # groups of different formats, or targets other than every linear: a format per module
        from .quant_mixed import compressed_tensors_mixed
        return compressed_tensors_mixed(
            [(name, QuantBytes(f"compressed-tensors {own} ({label})", dtype, size, per_tensor_bytes=scalars,
                               per_output_row_bytes=rows), targets)
             for name, own, (label, dtype, size, scalars, rows), targets in each],
            exclusions or ("compressed-tensors", ()), head, unsized, fmt)
    label, dtype, size, scalars, rows = sizes.pop()
    return QuantBytes(f"compressed-tensors {fmt} ({label})", dtype, size, keeps_lm_head=head, exclusions=exclusions,
                      per_tensor_bytes=scalars, per_output_row_bytes=rows, unsized=unsized)


def _ct_per_row(fmt: str, w: dict) -> int:
    """Bytes an 8-bit int- / float-quantized group with strategy "channel" stores per output row: one float32
    weight_scale [out, 1] a quantized tensor, as vLLM 0.34 creates it (compressed_tensors_w8a8_fp8.py
    CompressedTensorsW8A8Fp8.create_weights -> utils/fp8_utils.py create_fp8_scale_parameter, float32 unless
    told; compressed_tensors_w8a8_int8.py CompressedTensorsW8A8Int8.create_weights) and llm-compressor saves it
    (GLM-4.5-FP8: float32 [rows, 1] scales, 0.13% of its bytes, its down_proj experts 0.26%)."""
    quantized = fmt in ("int-quantized", "naive-quantized", "float-quantized")
    return 4 if quantized and str(w.get("strategy") or "tensor") == "channel" else 0


def _ct_per_tensor(fmt: str, group: dict) -> int:
    """Bytes a group stores once per quantized tensor, as vLLM 0.34 loads them: NVFP4's float32
    weight_global_scale, and its input_global_scale when the group quantizes the input activations
    (CompressedTensorsW4A4Fp4.create_weights; NVFP4A16 has none); pack-quantized int's weight_shape, two int64
    (CompressedTensorsWNA16.create_weights). Left out: an 8-bit strategy "tensor" weight or static input scale,
    whose dtype the config does not always say (a few bytes a tensor)."""
    if fmt == "nvfp4-pack-quantized":
        return 8 if isinstance(group.get("input_activations"), dict) else 4
    w = group.get("weights")
    return 16 if fmt == "pack-quantized" and str(w.get("type") or "int") == "int" else 0


def _ct_weight(fmt: str, w: dict) -> tuple[str, str, float]:
    bits = _positive_int(w.get("num_bits"), "num_bits", "compressed-tensors")
    kind = str(w.get("type") or "int")
    strategy = str(w.get("strategy") or "tensor")
    group = (_positive_int(w.get("group_size"), "group_size", "compressed-tensors")
             if strategy in ("group", "tensor_group") else -1)
    label = f"{kind}{bits} {strategy}" + (f" {group}" if group > 0 else "")
    if fmt == "nvfp4-pack-quantized":
        return label, "nvfp4", 0.5 + 1 / 16
    if fmt == "mxfp4-pack-quantized":
        return label, "mxfp4", 0.5 + 1 / 32
    scale = {"float8_e4m3fn": 1, "float32": 4}.get(str(w.get("scale_dtype") or "").replace("torch.", ""), 2)
    if fmt == "pack-quantized" and kind == "int":
        return label, f"int{bits}", _grouped(bits, group, scale, w.get("symmetric", True) is False)
    if fmt in ("int-quantized", "naive-quantized", "float-quantized") and bits == 8:
        if strategy == "block":
            block = w.get("block_structure")
            if not isinstance(block, list) or len(block) != 2:
                raise Unsized(f"compressed-tensors: block_structure is {block!r}, not [rows, columns]")
            a, b = (_positive_int(x, "block_structure", "compressed-tensors") for x in block)
            return label, f"{kind}8", 1 + scale / (a * b)
        return label, "fp8" if kind == "float" else "int8", 1 + (scale / group if group > 0 else 0)
    raise Unsized(f"compressed-tensors format {fmt!r} with {label} weights is not a layout kvplan has read")


def _modelopt(q: dict) -> QuantBytes:
    inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
    algo = str(inner.get("quant_algo") or "").upper()
    excluded = inner.get("exclude_modules", inner.get("ignore"))
    # the hf_quant_config.json layout (no quant_method, the algorithm under "quantization"): say where it came from
    where = ", hf_quant_config.json" if inner is not q and not q.get("quant_method") else ""
    kv_bytes, kv_unsized = _modelopt_kv_scales(q)
    if algo == "NVFP4":
        head, exclusions = _ignored(excluded, "ModelOpt", False)
        # weight_scale_2 and input_scale, float32 each (vLLM 0.34 modelopt.py KNvfp4Static / KNvfp4Dynamic)
        return QuantBytes(f"NVFP4 (modelopt{where})", "nvfp4", 0.5 + 1 / 16, keeps_lm_head=head, exclusions=exclusions,
                          per_tensor_bytes=8, kv_scale_bytes=kv_bytes, unsized=kv_unsized)
    if algo == "FP8":
        head, exclusions = _ignored(excluded, "ModelOpt", False)
        # weight_scale and input_scale, float32 each (modelopt.py's per-tensor static FP8 scheme, both slots)
        return QuantBytes(f"FP8 (modelopt{where})", "fp8", 1.0, keeps_lm_head=head, exclusions=exclusions,
                          per_tensor_bytes=8, kv_scale_bytes=kv_bytes, unsized=kv_unsized)
    if algo == "MXFP8":
        # vLLM 0.34 modelopt.py LINEAR_ALGOS "MXFP8" (ModelOptMxFp8Config): e4m3 weights with one uint8 E8M0 scale
        # per 32 inputs (utils/mxfp8_utils.py MXFP8_VALUE_DTYPE / MXFP8_SCALE_DTYPE / MXFP8_BLOCK_SIZE; the MoE's
        # ModelOptMxFp8FusedMoE.create_weights makes w13 / w2 so), no per-tensor scale
        if inner.get("moe_quant_algo"):
            raise Unsized(f"ModelOpt MXFP8 with moe_quant_algo {inner.get('moe_quant_algo')!r}: kvplan has not read "
                          "how those experts are stored")
        head, exclusions = _ignored(excluded, "ModelOpt", False)
        return QuantBytes(f"MXFP8 (modelopt{where})", "mxfp8", 1 + 1 / 32, keeps_lm_head=head, exclusions=exclusions,
                          kv_scale_bytes=kv_bytes, unsized=kv_unsized)
    if algo == "MIXED_PRECISION":  # a format per module (configs/quant_mixed.py)
        from .quant_mixed import modelopt_mixed
        return modelopt_mixed(inner, excluded, kv_bytes, kv_unsized, where)
    raise Unsized(f"ModelOpt quant_algo {algo or None!r}: kvplan knows NVFP4, FP8, MXFP8 and MIXED_PRECISION")


def _mxfp8(q: dict) -> QuantBytes:
    """quant_method "mxfp8" (MiniMax-M3's checkpoints): vLLM 0.34 quantization/__init__.py maps it to
    ModelOptMxFp8Config, whose from_config rewrites it as ModelOpt's MXFP8 with ignored_layers for
    exclude_modules and its kv_cache_quant_algo and moe_quant_algo; read as that."""
    return _modelopt({"quant_method": "modelopt", "quantization": {
        "quant_algo": "MXFP8", "kv_cache_quant_algo": q.get("kv_cache_quant_algo"),
        "exclude_modules": q.get("ignored_layers") or [], "moe_quant_algo": q.get("moe_quant_algo")}})


def _modelopt_kv_scales(quant: dict) -> tuple[int, str]:
    """(bytes a ModelOpt checkpoint stores per attention layer for its KV cache, what it stores that kvplan does
    not size): with an FP8 KV cache ModelOpt writes self_attn.k_proj.k_scale and self_attn.v_proj.v_scale, a
    float32 scalar each (the layout of nvidia/Qwen3-30B-A3B-NVFP4, tests/test_hf_quant_config.py); another KV
    algorithm's scales are not read."""
    kv = modelopt_kv_cache(quant)
    if kv is None:
        return 0, ""
    if kv == "fp8":
        return 8, ""
    return 0, f"the KV-cache scales of its {kv} KV cache"


def modelopt_kv_cache(quant) -> str | None:
    """The KV cache a ModelOpt quantization config names, read as vLLM reads it (0.14-0.33
    vllm/utils/torch_utils.py get_kv_cache_quant_algo_string): only for a quant_method starting "modelopt",
    which an hf_quant_config.json gets from its producer (model_arch_config_convertor.py
    _normalize_quantization_config: producer "modelopt" with a quantization.quant_algo); the first of
    kv_cache_scheme and kv_cache_quant_algo, in "quantization" or at the top, that is set. A scheme dict of
    8-bit floats, not dynamic, is "fp8", of 4-bit floats "nvfp4" (read from 0.20), another "unknown"; a name
    is given lower-case ("fp8"). None: not ModelOpt, or no KV cache named."""
    if not isinstance(quant, dict):
        return None
    inner = quant.get("quantization") if isinstance(quant.get("quantization"), dict) else quant
    method = str(quant.get("quant_method") or "").lower()
    producer = quant.get("producer") if isinstance(quant.get("producer"), dict) else {}
    if not method and producer.get("name") == "modelopt" and inner.get("quant_algo") is not None:
        method = "modelopt"
    if not method.startswith("modelopt"):
        return None
    kv = (inner.get("kv_cache_scheme") or quant.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
          or quant.get("kv_cache_quant_algo"))
    if isinstance(kv, dict):
        if kv.get("dynamic") is False and kv.get("num_bits") == 8 and kv.get("type") == "float":
            return "fp8"
        return "nvfp4" if kv.get("num_bits") == 4 and kv.get("type") == "float" else "unknown"
    return kv.lower() if isinstance(kv, str) else None


def _bitsandbytes(q: dict) -> QuantBytes:
    _kept(q.get("llm_int8_skip_modules"), "bitsandbytes")
    # bitsandbytes' QuantState.as_dict(packed=True), which transformers saves beside each 4-bit weight: absmax per
    # block of 64 (float32; with double quantization uint8 plus a float32 nested_absmax per 256 blocks), the
    # 16-entry float32 quant_map, with double quantization the 256-entry float32 nested_quant_map, and the
    # non-tensor fields (shape, dtype, nested_offset ...) packed as JSON into a uint8
    # quant_state.bitsandbytes__<type>, whose length the config does not give
    if q.get("load_in_4bit"):
        double = q.get("bnb_4bit_use_double_quant") is True
        absmax = 1 / 64 + 4 / (64 * 256) if double else 4 / 64
        kind = q.get("bnb_4bit_quant_type", "fp4")
        return QuantBytes(f"bitsandbytes 4-bit ({kind})", str(kind), 0.5 + absmax,
                          per_tensor_bytes=16 * 4 + (256 * 4 if double else 0),
                          unsized=f"each quantized tensor's packed JSON quant_state.bitsandbytes__{kind}")
    if q.get("load_in_8bit"):
        # Linear8bitLt._save_to_state_dict: the int8 weight, SCB (one float32 per output row) and weight_format,
        # a uint8 scalar
        return QuantBytes("bitsandbytes 8-bit", "int8", 1.0, per_output_row_bytes=4, per_tensor_bytes=1,
                          row_scales_whole=False)
    raise Unsized("bitsandbytes without load_in_4bit or load_in_8bit")


def _mxfp4(q: dict, model_type: str) -> QuantBytes:
    if model_type != "gpt_oss":
        raise Unsized(f"MXFP4 on model_type {model_type!r}: kvplan knows gpt-oss's layout (experts only)")
    return QuantBytes("MXFP4 (MoE experts; the rest BF16)", "mxfp4", 17 / 32, experts_only=True)


def read(quant: dict, model_type: str) -> QuantBytes:
    """The bytes of the format a quantization_config names; Unsized with the reason when kvplan cannot say."""
    method = str(quant.get("quant_method") or "").lower()
    # vLLM 0.34 quantization/__init__.py get_quantization_config: "auto_awq" and "awq_marlin" are AutoAWQConfig,
    # "auto_gptq" and "gptq_marlin" AutoGPTQConfig; the checkpoints are the same
    if method in ("awq", "auto_awq", "awq_marlin"):
        return _awq(quant)
    if method in ("gptq", "auto_gptq", "gptq_marlin"):
        return _gptq(quant)
    if method == "quark":
        from . import quant_quark
        return quant_quark.read(quant)
    if method in ("auto-round", "inc"):
        from . import quant_autoround
        return quant_autoround.read(quant)
    if method == "torchao":
        from . import quant_torchao
        return quant_torchao.read(quant)
    if method in _NOT_FROM_CONFIG:
        raise Unsized(f"quant_method {method!r}: {_NOT_FROM_CONFIG[method]}")
    if method in ("fp8", "fbgemm_fp8"):
        return _fp8(quant)
    if method == "compressed-tensors":
        return _compressed_tensors(quant)
    # "modelopt_fp4" / "modelopt_mixed": the names vLLM's config normaliser gives ModelOpt's NVFP4 / mixed configs;
    # no quant_method and a nested "quantization": the hf_quant_config.json layout (kvplan.sources)
    if method.startswith("modelopt") or (not method and ("quant_algo" in quant
                                                           or isinstance(quant.get("quantization"), dict))):
        return _modelopt(quant)
    if method == "bitsandbytes" or "load_in_4bit" in quant or "load_in_8bit" in quant:
        return _bitsandbytes(quant)
    if method in ("mxfp4", "gpt_oss_mxfp4"):  # vLLM 0.34 mxfp4.py GptOssMxfp4Config: gpt-oss's "mxfp4", renamed
        return _mxfp4(quant, model_type)
    if method == "mxfp8":
        return _mxfp8(quant)
    raise Unsized(f"quant_method {method or None!r} is not a format whose bytes kvplan knows")
