"""What a tensor is for, read from its name (Hugging Face and GGUF naming), and
the fold of a tensor table into a Weights record."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .record import NO_LAYER, REPLICATED, DtypeBytes, Weights
from .vision_tp import per_output_row, sglang_vision_whole, vision_whole

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks|blk|layer|decoder_layers)\.(\d+)\.")
_VISION = ("vision", "visual", "image_", "mm_projector", "multi_modal_projector", "audio")
_VISION_PREFIX = ("vit.", "mm.", "v.", "a.")  # GGUF projector files (mmproj) name towers so
_EMBED = ("embed_tokens", "wte.", "wpe.", "word_embeddings", "token_embd", "embed_in", "tok_embeddings", "embeddings.")
_LN = re.compile(r"ln(_\w+)?")
_HEAD = ("lm_head", "embed_out", "output.weight", "output.bias")
# a multi-token-prediction module's own namespace: `mtp.` (Qwen3-Next, Qwen3.5, Nemotron-H), `mtp_layers.`
# (MiMo), GGUF's `nextn.` tensors (llama.cpp's GLM-4.5 conversion)
_MTP = re.compile(r"(?:^|\.)(?:mtp|mtp_layers|nextn)\.")
# families whose MTP tensors are told apart by the family: ERNIE-4.5 stores its module flat as
# model.mtp_block.0.*, model.mtp_linear_proj.0.*, model.mtp_emb_norm.0.*, model.mtp_hidden_norm.0.* (vLLM 0.34.0
# ernie_mtp.py ErnieMTP.hf_to_vllm_mapper); the target's loaders drop every name containing "mtp" (ernie45_moe.py
# hf_to_vllm_mapper orig_to_new_substr {"mtp": None}; ernie45_vl_moe.py load_weights), and so does kvplan
MTP_SUBSTRING_FAMILIES = frozenset({"ernie4_5_moe", "ernie4_5_vl_moe"})
# inside an MTP module: the projection joining the embedding and the hidden state (eh_proj, MiMo's input_proj,
# ERNIE's mtp_linear_proj), latent projections (Nemotron-H), a MoE router gate (Nemotron-H's mixer.gate)
_MTP_PROJ = re.compile(r"(?:^|\.)(?:eh_proj|input_proj|mtp_linear_proj)\.")
_ROUTER_GATE = re.compile(r"\.gate\.(?:weight|bias|e_score)")
_MOE_GATE = re.compile(r"\.(?:mlp|block_sparse_moe|moe|mixer)\.gate\.(?:weight|bias|e_score)|\.shared_expert_gate\.")


# tensors of a split role that vLLM 0.34 holds whole on every TP rank (with their scales): MLA's latent
# down-projections (deepseek_v2.py DeepseekV2MLAAttention: fused_qkv_a_proj, a MergedColumnParallelLinear with
# disable_tp=True, or kv_a_proj_with_mqa a ReplicatedLinear; DeepseekV2Attention, deepseek_v32/attention.py,
# minicpm3.py, longcat_flash.py, bailing_moe_v3.py, openpangu.py, sarvam.py, kimi_k3 likewise), the DSA indexer's
# wq_b (ReplicatedLinear), wk and weights_proj (wk_weights_proj, disable_tp=True), and the bias of o_proj, a
# RowParallelLinear in every family but ZAYA (linear.py: created at the full output size on every rank). In a
# GGUF the same tensors as llama.cpp's gguf-py 0.19.0 names them (constants.py TENSOR_NAMES, tensor_mapping.py:
# q_a_proj -> blk.N.attn_q_a, kv_a_proj_with_mqa -> attn_kv_a_mqa, indexer wq_b / wk / weights_proj ->
# indexer.attn_q_b / attn_k / proj, o_proj -> attn_output); vLLM builds its own model classes for a GGUF and
# maps these names onto their modules (0.22.0 model_loader/gguf_loader.py _get_gguf_weights_map, deepseek_v2 /
# v3 as gguf's deepseek2 through gguf.get_tensor_name_map; in 0.34.0 the out-of-tree vllm-gguf-plugin, not read).
# These names hold for any family (and a GGUF); where kvplan has the family's per-module table, the modules it holds
# whole (configs/weight_tables Module.whole, held_whole) are read from it as well (table_whole_bytes)
_TP_WHOLE = re.compile(r"\.(?:q_a_proj|kv_a_proj_with_mqa|fused_qkv_a_proj(?:_with_mqa)?)\."
                       r"|\.indexer\.(?:wq_b|wk|weights_proj)\.|\.o_proj\.bias$"
                       r"|^blk\.\d+\.(?:attn_q_a|attn_kv_a_mqa|indexer\.(?:attn_q_b|attn_k|proj))\."
                       r"|^blk\.\d+\.attn_output\.bias$")
# scalars vLLM 0.34 holds whole on every TP rank, whatever their layer's split, read by name and size (one element,
# shape [] or [1]): per-tensor scales (parameter.py PerTensorScaleParameter: loaded as they are by column- and
# row-parallel layers, one a logical shard of a merged layer; a FusedMoE's per-expert ones hold every local
# expert's: modelopt.py w13_weight_scale_2 [num_experts, 2]) of FP8 (weight_scale, input_scale), ModelOpt NVFP4
# (weight_scale_2) and compressed-tensors NVFP4 (compressed_tensors_w4a4_nvfp4.py weight_global_scale,
# input_global_scale), the KV-cache scales (kv_cache.py KVCacheScaleParameter: a 0-dim tensor on every rank), and
# per-tensor int8 zero points (quark/schemes/quark_w8a8_int8.py QuarkW8A8Int8.create_weights: weight_zero_point a
# PerTensorScaleParameter like its weight_scale, a static input's input_zero_point a one-element BasevLLMParameter
# loaded as it is; torchao 0.18.0 quantize_/workflows/int8/int8_tensor.py Int8Tensor's aten.slice keeps a
# one-element scale and zero_point whole)
_SCALAR_SCALES = (".weight_scale", ".weight_scale_2", ".input_scale", ".weight_global_scale", ".input_global_scale",
                  ".q_scale", ".k_scale", ".v_scale", ".prob_scale", ".weight_zero_point", ".input_zero_point")
# a linear's per-output-row tensors beside its weight: the weight scale, and an int8 zero point made the same way
# (quark_w8a8_int8.py create_weights per_channel: weight_zero_point a ChannelQuantScaleParameter [rows, 1] like
# weight_scale; compressed_tensors_wNa16.py channelwise and asymmetric: a PackedColumnParameter [rows / 8, 1], no
# input dim; torchao's Int8Tensor slices zero_point as it slices scale: int8_tensor.py aten.slice)
_ROW_SCALE_SUFFIXES = (".weight_scale", ".weight_zero_point")
# modules vLLM 0.34 builds as a RowParallelLinear (split over TP by input only) or as a FusedMoE's w2, under the
# names the checkpoints give them. Their per-output-row weight scales sit whole on every rank:
# layers/linear.py RowParallelLinear.__init__ sets output_size_per_partition = output_size, and its weight_loader_v2
# calls load_row_parallel_weight, which for a parameter.py ChannelQuantScaleParameter (a _ColumnvLLMParameter, no
# input_dim) is BasevLLMParameter's: the tensor copied as it is (compressed-tensors' create_fp8_scale_parameter,
# Quark's quark_w8a8_fp8 / _int8); the MoE's w2_weight_scale is [num_experts, hidden_size, 1], unsplit
# (compressed_tensors_moe_w8a8_fp8.py create_weights, strategy CHANNEL), while w13's has the rank's 2 x intermediate.
# SGLang 0.5.23 does the same (srt/layers/linear.py RowParallelLinear.__init__ passes output_partition_sizes
# [output_size]; its weight_loader_v2 falls back to BasevLLMParameter.load_row_parallel_weight, a plain copy, for a
# ChannelQuantScaleParameter, which is no RowvLLMParameter: srt/layers/parameter.py).
# ROW_PARALLEL: the names that are row-parallel (or whole: ZAYA's ReplicatedLinear o_proj, down_proj, out_proj, fc2)
# in every family kvplan sizes that has them, and column-parallel in none of vLLM 0.34's model files:
#   o_proj, down_proj          llama.py, qwen2.py, qwen3_moe.py, glm4_moe.py, deepseek_v2.py ... (every family's)
#   w2, output_linear          FusedMoE w2 (Mixtral's block_sparse_moe.experts.N.w2; Granite MoE's output_linear:
#                              granitemoe.py hf_to_vllm_mapper to experts.down_proj); InternLM2's feed_forward.w2
#                              (internlm2.py InternLM2MLP), Granite MoE shared's shared_mlp.output_linear
#   out_proj                   the Mamba mixers (layers/mamba/mamba_mixer.py, mamba_mixer2.py, short_conv.py: LFM2),
#                              MiniMax's linear attention (mamba/linear/minimax_linear_attn.py), Qwen3-Next's and
#                              Qwen3.5's Gated DeltaNet (mamba/gdn/qwen_gdn_linear_attn.py), OPT (opt.py), DBRX
#                              (dbrx.py DbrxAttention), Moondream 3 (moondream3.py)
#   c_proj, dense_4h_to_h      GPT-2 (gpt2.py attn.c_proj, mlp.c_proj), BLOOM, Falcon, ChatGLM (bloom.py, falcon.py,
#                              chatglm.py), GPT-NeoX (transformers 5.25 GPTNeoXConfig.base_model_tp_plan "rowwise",
#                              which vLLM 0.34's Transformers backend builds as a RowParallelLinear: transformers/
#                              utils.py replace_linear_class; SGLang 0.5.23 models/transformers.py the same)
#   fc2, fc_out                OPT (opt.py), Phi (PhiConfig.base_model_tp_plan mlp.fc2 "rowwise"), Moondream 3,
#                              GPT-J (gpt_j.py fc_out)
#   wo, wo_b, wo_ud            InternLM2's attention.wo (internlm2.py), ModernBERT's Wo (modernbert.py), DeepSeek-V4's
#                              wo_b (vllm/models/deepseek_v4/attention.py; wo_a is column-parallel), Inkling's wo_ud
#                              (vllm/models/inkling/nvidia/attention.py)
ROW_PARALLEL = re.compile(r"(?:^|\.)(?:o_proj|down_proj|w2|output_linear|out_proj|c_proj|dense_4h_to_h|fc2|fc_out|wo"
                          r"|wo_b|wo_ud)$", re.IGNORECASE)
# names row-parallel in some families only (by model_type), where the same name is column-parallel or something else
# in another: `dense` (BERT-style intermediate.dense and GIT's are column-parallel, a head's dense whole)
_ATTENTION_DENSE = re.compile(r"\.(?:attention|self_attention|self_attn)\.dense$")
_ROW_PARALLEL_BY_FAMILY = {
    # the attention output projection: bloom.py BloomAttention.dense, falcon.py FalconAttention.dense, chatglm.py
    # GLMAttention.dense, bailing_moe.py BailingAttention.dense (Ling 2.0, and Sarvam-MoE: sarvam.py
    # SarvamMoEForCausalLM subclasses it), bailing_moe_v3.py / mamba/linear/bailing_linear_attn.py (Ling 3.0's dense),
    # param2moe.py (hf_to_vllm_mapper .attention.dense. -> .self_attn.o_proj.), GPT-NeoX and Phi through the
    # Transformers backend (base_model_tp_plan layers.*.attention.dense / self_attn.dense "rowwise"; SGLang 0.5.23
    # phi.py PhiAttention.dense); Persimmon, which vLLM no longer registers from 0.26.0 on, as SGLang 0.5.23 builds it
    # (persimmon.py PersimmonAttention.dense)
    **{t: _ATTENTION_DENSE for t in ("bloom", "falcon", "chatglm", "bailing_moe", "sarvam_moe", "bailing_hybrid",
                                     "param2moe", "gpt_neox", "phi", "persimmon")},
    # Mamba-1's x_proj (layers/mamba/mamba_mixer.py MambaMixer: a RowParallelLinear; mamba.py, jamba.py; SGLang
    # 0.5.23 srt/layers/attention/mamba/mamba1.py MambaMixer1 likewise)
    **{t: re.compile(r"\.x_proj$") for t in ("mamba", "falcon_mamba", "jamba")},
    "moondream3": re.compile(r"\.attn\.proj$"),  # moondream3.py load_weights: .attn.proj. -> .attn.out_proj.
    # Inkling's TML checkpoints: the dense MLP's w2_md (vllm/models/inkling/nvidia/model.py hf_to_vllm_mapper:
    # .w2_md -> .down_proj, InklingDenseMLP.down_proj a RowParallelLinear; SGLang 0.5.23 inkling.py the same)
    "inkling_model": re.compile(r"\.mlp\.w2_md$"),
    # a wrapper's text model under both model_types (a tensor table reads the top config's, a per-module count the
    # text config's): gemma3n.py Gemma3nLaurelBlock.linear_right; molmo2.py hf_to_vllm_mapper attn_out -> o_proj,
    # ff_out -> down_proj (Molmo2Attention, LanguageModelMLP); cosmos3_edge.py .self_attn.to_out. -> .self_attn.o_proj.
    **{t: re.compile(r"\.laurel\.linear_right$") for t in ("gemma3n", "gemma3n_text")},
    **{t: re.compile(r"\.(?:attn_out|ff_out)$") for t in ("molmo2", "molmo2_text")},
    **{t: re.compile(r"\.self_attn\.to_out$") for t in ("cosmos3_edge", "cosmos3_edge_text")},
}

# GPTQ's activation-order index (int32 per input row), which vLLM 0.31.0 and later drop at load (base_config.py
# QuantizationConfig.get_checkpoint_weight_mapper); the tensor table keeps it apart (Weights.g_idx)
G_IDX_SUFFIX = ".g_idx"
# norms that vLLM splits over TP with the heads: MiniMax-M2's q_norm / k_norm over all heads (minimax_m2.py
# MiniMaxText01RMSNormTP: hidden_size // tp a rank)
_TP_SPLIT_NORMS = {"minimax_m2": re.compile(r"\.self_attn\.[qk]_norm\.")}


# torchao's flattened tensor-subclass weights: transformers (5.x quantizers/quantizer_torchao.py) saves a torchao
# model through torchao's flatten_tensor_state_dict (0.18.0 prototype/safetensors/safetensors_support.py), which
# writes a module's `weight` (an Int8Tensor, Float8Tensor, Int4Tensor ...) as one tensor per set tensor-data
# attribute, `<module>._weight_<attribute>`: qdata (the quantized values), scale, zero_point, act_pre_scale ...
_TORCHAO_FLAT = re.compile(r"\._weight_([a-z0-9_]+)$")


def param_name(name: str) -> str:
    """The tensor's name as the module parameter it stands for: a torchao flattened weight's
    (`<module>._weight_qdata` -> `<module>.weight`, `._weight_scale` -> `.weight_scale`, `._weight_zero_point` ->
    `.weight_zero_point`), so that roles, KV shares and what TP holds whole read it as any checkpoint's; any other
    name as it is."""
    m = _TORCHAO_FLAT.search(name)
    if m is None:
        return name
    attribute = m.group(1)
    return name[: m.start()] + (".weight" if attribute == "qdata" else f".weight_{attribute}")


def is_torchao_flat(name: str) -> bool:
    """A torchao flattened weight's quantized values (`<module>._weight_qdata`: param_name)."""
    return name.endswith("._weight_qdata")


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: str
    elements: int
    bytes: int
    shape: tuple[int, ...] = ()


def layer_of(name: str) -> int:
    m = _LAYER.search(name)
    return int(m.group(1)) if m else NO_LAYER


def role_of(name: str, family: str = "") -> str:
    """The tensor's role; family: the config's model_type, where the family decides what is MTP."""
    low = name.lower()
    if _MTP.search(low) or (family in MTP_SUBSTRING_FAMILIES and "mtp" in low):
        return "mtp"
    return _plain_role(low)


def is_scalar_scale(name: str, elements: int) -> bool:
    """A per-tensor or KV-cache scale of one element (_SCALAR_SCALES), which vLLM holds whole on every TP rank."""
    return elements == 1 and name.lower().endswith(_SCALAR_SCALES)


# names of ROW_PARALLEL that a family builds column-parallel: Qwen (1)'s mlp.w2 is shard 0 of its gate_up_proj, a
# MergedColumnParallelLinear (SGLang 0.5.23 qwen.py QWenMLP, load_weights stacked_params_mapping ("gate_up_proj", "w2",
# 0); vLLM's qwen.py the same until 0.23)
_COLUMN_PARALLEL_BY_FAMILY = {"qwen": re.compile(r"\.mlp\.w2$")}


def is_row_parallel(module: str, family: str = "") -> bool:
    """The module (its name without .weight / .weight_scale) is built as a RowParallelLinear or a FusedMoE's w2 by
    vLLM 0.34 and SGLang 0.5.23 in the family (the config's model_type): ROW_PARALLEL, _ROW_PARALLEL_BY_FAMILY, less
    _COLUMN_PARALLEL_BY_FAMILY."""
    low = module.lower()
    column = _COLUMN_PARALLEL_BY_FAMILY.get(family)
    if column is not None and column.search(low):
        return False
    if ROW_PARALLEL.search(low):
        return True
    rule = _ROW_PARALLEL_BY_FAMILY.get(family)
    return bool(rule and rule.search(low))


def is_row_scale(name: str, shape: tuple[int, ...], family: str = "") -> bool:
    """A per-output-row weight scale or zero point (_ROW_SCALE_SUFFIXES: [rows, 1], [experts, rows, 1] or [rows]) of a
    row-parallel module of the family (is_row_parallel), which vLLM holds whole on every TP rank."""
    low = name.lower()
    suffix = next((s for s in _ROW_SCALE_SUFFIXES if low.endswith(s)), None)
    if suffix is None or not is_row_parallel(low[: -len(suffix)], family):
        return False
    return per_output_row(shape)


# the families whose image (and audio) encoders and embedders vLLM 0.34 holds whole on every TP rank: gemma4_mm.py
# builds each tower with transformers' AutoModel and recursive_replace_linear (every nn.Linear a ReplicatedLinear)
# and Gemma4MultimodalEmbedder's embedding_projection as a ReplicatedLinear, as the config estimate counts it
# (configs/vision_gemma.py gemma4); the towers of weights/vision_tp.py RULE_FAMILIES by module, as the config
# estimate counts them; elsewhere a checkpoint's "vision" tensors are split over TP
_VISION_WHOLE_FAMILIES = frozenset({"gemma4"})


def against_role(name: str, role: str, family: str = "", elements: int | None = None,
                 shape: tuple[int, ...] = ()) -> bool:
    """vLLM splits this tensor over TP though its role is held whole (REPLICATED), or holds it whole though its
    role is split (_TP_WHOLE, a one-element scale: is_scalar_scale, a row-parallel module's per-row scale:
    is_row_scale, _TP_SPLIT_NORMS), or an image encoder's tensor a family holds whole (_VISION_WHOLE_FAMILIES).
    elements, shape: the tensor's element count and shape, where known."""
    low = name.lower()
    if role in REPLICATED:
        split = _TP_SPLIT_NORMS.get(family)
        return bool(split and split.search(low))
    if role == "vision":
        by_module = vision_whole(name, family, elements, shape)
        return family in _VISION_WHOLE_FAMILIES if by_module is None else by_module
    return role != "mtp" and (bool(_TP_WHOLE.search(low)) or is_scalar_scale(low, elements or 0)
                              or is_row_scale(low, shape, family))


def mtp_role_of(name: str) -> str:
    """The role of a tensor inside an MTP module: a plain role, or "mtp_proj" / "latent_proj" for the
    projections whose TP split an engine decides per family."""
    low = name.lower()
    if _MTP_PROJ.search(low):
        return "mtp_proj"
    if ".shared_head_head." in low:  # llama.cpp's GGUF name of the layer's own head (blk.N.nextn.shared_head_head)
        return "lm_head"
    if "latent_proj" in low:
        return "latent_proj"
    if _ROUTER_GATE.search(low):
        return "router"
    return _plain_role(low)


def _plain_role(low: str) -> str:
    if any(key in low for key in _VISION) or low.startswith(_VISION_PREFIX):
        return "vision"
    if low.startswith(_HEAD) or ".lm_head." in low or ".shared_head.head." in low:  # an MTP layer's own head
        return "lm_head"
    if any(key in low for key in _EMBED):
        return "embeddings"
    if any("norm" in c or _LN.fullmatch(c) for c in low.split(".")[-2:]):
        return "norms"
    # a MoE router gate; Nemotron-H's sits in its mixer (vLLM 0.34 nemotron_h.py NemotronHMoE.gate: GateLinear, a
    # ReplicatedLinear, so whole on every TP rank); Qwen2-MoE / Qwen3-Next's shared_expert_gate (hidden -> 1) is a
    # ReplicatedLinear too (qwen2_moe.py, qwen3_next.py)
    if ".router." in low or "ffn_gate_inp" in low or _MOE_GATE.search(low):
        return "router"
    if ".experts." in low or "_exps" in low or ".experts_" in low:
        return "experts"
    if any(k in low for k in ("attn", "attention", "q_proj", "k_proj", "v_proj", "o_proj", "qkv", "query_key_value")):
        return "attention"
    if any(k in low for k in ("mixer", "ssm", "mamba", "conv1d", "linear_attn")):
        return "mixer"
    if any(k in low for k in ("mlp", "ffn", "feed_forward", "shared_expert", "gate_proj", "up_proj", "down_proj")):
        return "mlp"
    if "norm" in low:
        return "norms"
    return "other"


# tensors of a k/v module that do not follow its output rows: GPTQ's g_idx (one entry per input row), the
# shape and maps compressed-tensors and bitsandbytes store per tensor
_KV_NOT_ROWS = (G_IDX_SUFFIX, ".weight_shape", ".quant_map", ".nested_quant_map")


def kv_module_of(name: str, kv_modules: dict) -> tuple[int, int, int] | None:
    """(KV heads, KV rows, rows) of the k/v module a tensor belongs to (its name less one to three trailing
    components: `.weight`, `.qweight`, `.weight.absmax`, `.weight.quant_state.bitsandbytes__nf4`), from kv_modules
    (configs.module_counts.kv_modules: the family's per-module table); None for any other tensor."""
    parts = name.split(".")
    for cut in (1, 2, 3):
        found = kv_modules.get(".".join(parts[:-cut]))
        if found is not None:
            return found
    return None


def table_whole_bytes(name: str, size: int, whole_modules: dict | None) -> int | None:
    """Of a tensor's size bytes, those vLLM holds whole on every TP rank by the family's per-module table
    (configs.module_counts.whole_modules), the tensor read as the deepest module of the table its name falls in (its name,
    or less one to three trailing components: `.weight`, `.weight_scale`, `.weight.absmax`): a linear module's
    `.bias` as its float parameters, its other tensors as its weight, a float module's (a norm, an nn.Parameter)
    as its float parameters; None where the table names no such module."""
    if not whole_modules:
        return None
    parts = name.split(".")
    for cut in range(4):
        found = whole_modules.get(".".join(parts[:len(parts) - cut]))
        if found is not None:
            held_weight, weight, held_other, other = found
            if weight and not (cut and parts[-1] == "bias"):
                return size * held_weight // weight
            return size * held_other // other if other else 0
    return None


def _table_against(t: TensorEntry, role: str, whole_modules: dict | None) -> int:
    """Bytes of t held otherwise than its role by the family's per-module table (table_whole_bytes): of a split
    role, what the table holds whole (Gemma 3n's altup.*, DeepSeek-V4's wq_a / wkv / hc_*_fn, Kimi-Linear's KDA
    f_a_proj); of a whole role (a norm by its name), a float module the table splits (Nemotron-H's mixer.norm,
    MambaMixer2's Mixer2RMSNormGated: full_hidden_size // tp a rank in vLLM 0.34 layers/mamba/mamba_mixer2.py)."""
    if role in ("vision", "mtp"):
        return 0
    held = table_whole_bytes(t.name, t.bytes, whole_modules)
    if held is None:
        return 0
    return t.bytes - held if role in REPLICATED else held


def fold(entries: list[TensorEntry], *, source: str, origin: str, quantization: str, files: int,
         notes: tuple[str, ...] = (), family: str = "", kv_modules: dict | None = None,
         whole_modules: dict | None = None) -> Weights:
    """One Weights record from a tensor table: totals by dtype, by (role, layer), and the MTP module's by
    (role inside it, its layer); GPTQ's g_idx tensors again as a record of their own (Weights.g_idx). family: the
    config's model_type (see role_of). kv_modules: the k/v modules of the family's per-module table by name
    (configs.module_counts.kv_modules), which give the KV shares (Weights.kv_split); None: not known. whole_modules: the
    family's per-module table's whole parameters by name (configs.module_counts.whole_modules), which add to what
    against_role reads by name (table_whole_bytes)."""
    g_idx = [t for t in entries if t.name.lower().endswith(G_IDX_SUFFIX)]
    sums = _sums(entries, family, kv_modules, whole_modules)
    return Weights(source=source, origin=origin, quantization=quantization, files=files, notes=notes, **sums,
                   g_idx=Weights(source=source, origin=origin, **_sums(g_idx, family)) if g_idx else None)


def _sums(entries: list[TensorEntry], family: str, kv_modules: dict | None = None,
          whole_modules: dict | None = None) -> dict:
    dtypes: dict[str, list[int]] = {}
    parts: dict[tuple[str, int], int] = {}
    mtp: dict[tuple[str, int], int] = {}
    against: dict[tuple[str, int], int] = {}
    kv: dict[tuple[str, int, int], int] = {}
    vision_sglang = [0, 0]
    has_head = has_embed = False
    for t in entries:
        name = param_name(t.name)  # torchao's flattened names read as the parameters they stand for
        if name != t.name:
            t = replace(t, name=name)
        d = dtypes.setdefault(t.dtype, [0, 0, 0])
        d[0] += t.bytes
        d[1] += t.elements
        d[2] += 1
        role = role_of(t.name, family)
        if role == "mtp":
            key = (mtp_role_of(t.name), layer_of(t.name))
            mtp[key] = mtp.get(key, 0) + t.bytes
        has_head |= role == "lm_head"
        has_embed |= role == "embeddings"
        layer = NO_LAYER if role in ("vision", "mtp") else layer_of(t.name)
        parts[(role, layer)] = parts.get((role, layer), 0) + t.bytes
        held_against = against_role(t.name, role, family, t.elements, t.shape)
        # held otherwise by the family's table (in part: Mamba-2's one-group B and C rows of in_proj)
        by_table = 0 if held_against else _table_against(t, role, whole_modules)
        if held_against or by_table:
            against[(role, layer)] = against.get((role, layer), 0) + (t.bytes if held_against else by_table)
        sglang = sglang_vision_whole(t.name, family) if role == "vision" else None
        if sglang is not None and sglang != held_against:  # SGLang holds it the other way (vision_tp SGLANG_TOWERS)
            vision_sglang[0 if sglang else 1] += t.bytes
        # split over TP (a split role, or a whole one held against it: MiniMax-M2's k_norm), so perhaps by KV head
        if (kv_modules and (role in REPLICATED) == held_against and not by_table and role not in ("vision", "mtp")
                and not t.name.lower().endswith(_KV_NOT_ROWS)):
            found = kv_module_of(t.name, kv_modules)
            if found is not None:  # the keys' and values' rows of it: all of a k_proj, a share of a fused qkv
                heads, kv_rows, rows = found
                key = (role, layer, heads)
                kv[key] = kv.get(key, 0) + t.bytes * kv_rows // rows
    by_dtype = tuple(
        sorted((DtypeBytes(k, v[0], v[1], v[2]) for k, v in dtypes.items()), key=lambda d: (-d.bytes, d.dtype))
    )
    return dict(
        total_bytes=sum(t.bytes for t in entries),
        by_dtype=by_dtype,
        parts=tuple((role, layer, n) for (role, layer), n in sorted(parts.items(), key=lambda kv: (kv[0][1], kv[0][0]))),
        tied_embeddings=has_embed and not has_head,
        tensors=len(entries),
        mtp_parts=tuple((role, layer, n) for (role, layer), n in
                        sorted(mtp.items(), key=lambda kv: (kv[0][1], kv[0][0]))),
        against_role=tuple((role, layer, n) for (role, layer), n in sorted(against.items())),
        vision_sglang=tuple(vision_sglang),
        # known where the table names k/v modules and some tensor is one of them (a checkpoint named otherwise
        # than the table is not known, rather than taken to hold none)
        kv_split=tuple((role, layer, n, heads) for (role, layer, heads), n in sorted(kv.items()))
        if kv or kv_modules == {} else None,
    )
