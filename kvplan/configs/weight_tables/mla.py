"""Per-module parameter tables (configs/weight_tables/__init__.py) of DeepSeek-V4 (deepseek_v4), DeepSeek-V4.1
(deepseek_v41_text), MiniCPM3 (minicpm3) and LongCat-Flash (longcat_flash), named as the checkpoints'
safetensors are. Each mirrors its family's counter term by term (params_mla_more.deepseek_v4,
params_mla_more.deepseek_v41_parts,
params_mla_more.minicpm3, params_mla.longcat_flash); DeepSeek-V4.1's, MiniCPM3's and LongCat-Flash's say what vLLM 0.34
holds whole in their docstrings. DeepSeek-V4.1 shares V4's attention, MoE and mixer modules (_v4_attention,
_v4_ffn, _v4_layer_rest) and differs in its compressors, indexers, Engram, router biases and hc_head
(deepseek_v41); both are sized module by module in their stored dtypes (compressed._by_module).

DeepSeek-V4 (deepseek-ai/DeepSeek-V4-Flash, -Pro) keeps DeepSeek's own tensor names, with no `model.` prefix:
`embed`, `head`, `norm`, `hc_head_fn / _base / _scale`, and per layer `layers.N.attn.wq_a / q_norm / wq_b / wkv /
kv_norm / wo_a / wo_b / attn_sink`, `attn.compressor.wkv / wgate / ape / norm`, `attn.indexer.wq_b /
weights_proj` and `attn.indexer.compressor.*`, `ffn.gate` (and `ffn.gate.bias`), `ffn.experts.E.w1 / w2 / w3`,
`ffn.shared_experts.w1 / w2 / w3`, `attn_norm`, `ffn_norm`, `hc_attn_* / hc_ffn_*` (transformers 5.25
conversion_mapping.py "deepseek_v4" renames them on load; vLLM 0.34 models/deepseek_v4/nvidia/model.py
_make_deepseek_v4_weights_mapper puts them under `model.` and renames a few: head, embed, ffn.gate.bias). The
table's modules are therefore `top` (weight_tables TOP_ROOTS: the bare name, or under a wrapper's
`language_model.`), so a list of unquantized modules written against the checkpoint ("*.attn.*") matches them.

What vLLM 0.34 (models/deepseek_v4) holds whole on every TP rank (Module.whole, or a norm / router role):
- attention.py DeepseekV4Attention: wq_a and wkv fused into fused_wqa_wkv, a MergedColumnParallelLinear with
  disable_tp=True (FP8); q_norm and kv_norm (RMSNorm). wq_b (ColumnParallelLinear), wo_a
  (common/grouped_wo_a.py DeepseekV4GroupedWoA, a ColumnParallelLinear) and wo_b (RowParallelLinear, no bias)
  split; attn_sink is made per rank for its heads (make_attention_sink(padded_heads)), so it splits with them;
- compressor.py DeepseekCompressor (the attention's, and the indexer's own): wkv and wgate fused into
  fused_wkv_wgate with quant_config=None and disable_tp=True (BF16, whole), ape an nn.Parameter (float32), norm
  an RMSNorm;
- attention.py DeepseekV4Indexer: wq_b a ReplicatedLinear (FP8), weights_proj a ReplicatedLinear with
  quant_config=None (BF16);
- nvidia/model.py DeepseekV4MoE: the router gate (GateLinear) and its float32 e_score_correction_bias (the
  checkpoint's ffn.gate.bias, on the layers that are not hash-routed); DeepseekV4DecoderLayer's attn_norm,
  ffn_norm and hc_attn_* / hc_ffn_* (float32 nn.Parameters); DeepseekV4Model's norm and hc_head_*.
Routed and shared experts split (FusedMoE; DeepseekV4MLP's MergedColumnParallelLinear / RowParallelLinear, or
replicated under sequence parallelism with expert parallelism, which kvplan does not model); embed and head split
by vocabulary. Not in the table: the hash layers' tid2eid routing table (an integer buffer, not a parameter:
vocab_size x num_experts_per_tok int32 a hash layer in vLLM) and the MTP layer (mtp.*), which the counter leaves
out.
"""

from __future__ import annotations

from dataclasses import replace

from ..fields import Fields
from . import Module, _ends, _experts, _float, _linear, _mla_widths, _mlp
from ..param_vllm_load import longcat_router_bias


def _whole_float(name: str, params: int, role: str = "attention") -> Module:
    """Float parameters every TP rank holds whole that are neither a norm nor a router (vLLM builds them as plain
    nn.Parameters, or as linear layers with quant_config=None and disable_tp / ReplicatedLinear)."""
    return Module(name, 0, params, role, top=True, whole=True)


def _norm(name: str, params: int) -> Module:
    return Module(name, 0, params, "norms", top=True)


def _top(m: Module) -> Module:
    return replace(m, top=True)


def _compressor(c: str, hidden: int, width: int, coff: int, ratio: int) -> list[Module]:
    """DeepseekCompressor: wkv and wgate to coff x width (BF16, whole), ape [ratio, coff x width] (float32,
    whole), norm over width."""
    return [_whole_float(f"{c}.wkv", hidden * coff * width), _whole_float(f"{c}.wgate", hidden * coff * width),
            _whole_float(f"{c}.ape", ratio * coff * width), _norm(f"{c}.norm", width)]


def _v4_attention(a: str, hidden: int, q_rank: int, heads: int, head: int, o_rank: int, groups: int) -> list[Module]:
    """DeepseekV4Attention's own modules, the same in V4 and V4.1 (vLLM 0.34 models/deepseek_v4/attention.py and
    models/deepseek_v41/attention.py DeepseekV4Attention.__init__): wq_a and wkv whole (fused_wqa_wkv,
    disable_tp=True), q_norm, wq_b, kv_norm, wo_a, wo_b, attn_sink (split with the heads). wkv is the one shared
    K/V head, built whole, so it carries no Module.kv_heads (kv_params leaves whole modules out)."""
    return [_top(_linear(f"{a}.wq_a", hidden, q_rank, "attention", whole=True)), _norm(f"{a}.q_norm", q_rank),
            _top(_linear(f"{a}.wq_b", q_rank, heads * head, "attention")),
            _top(_linear(f"{a}.wkv", hidden, head, "attention", whole=True)), _norm(f"{a}.kv_norm", head),
            _top(_linear(f"{a}.wo_a", heads * head // groups, groups * o_rank, "attention")),
            _top(_linear(f"{a}.wo_b", groups * o_rank, hidden, "attention")),
            Module(f"{a}.attn_sink", 0, heads, "attention", top=True)]


def _v4_ffn(m: str, experts: int, hidden: int, inter: int, shared: int) -> list[Module]:
    """DeepseekV4MoE's routed experts (w1, w3, w2), shared experts (shared x moe_intermediate_size wide) and router
    gate (GateLinear, whole); its biases are the caller's."""
    out = [_top(e) for e in _experts(m, experts, hidden, inter, ("w1", "w3", "w2"))]
    if shared:
        out += [_top(_linear(f"{m}.shared_experts.w1", hidden, shared, "shared experts")),
                _top(_linear(f"{m}.shared_experts.w3", hidden, shared, "shared experts")),
                _top(_linear(f"{m}.shared_experts.w2", shared, hidden, "shared experts"))]
    return out + [Module(f"{m}.gate", 0, experts * hidden, "router", top=True)]


def _v4_layer_rest(i: int, hidden: int, hc: int) -> list[Module]:
    """A decoder layer's attn_norm, ffn_norm and its two hyper-connection mixers hc_attn_* / hc_ffn_* (fn, base,
    scale: float32 nn.Parameters, whole; DeepseekV4DecoderLayer in both models' nvidia/model.py)."""
    mix = (2 + hc) * hc
    out = [_norm(f"layers.{i}.attn_norm", hidden), _norm(f"layers.{i}.ffn_norm", hidden)]
    for hc_name in ("hc_attn", "hc_ffn"):
        out += [_whole_float(f"layers.{i}.{hc_name}_fn", mix * hc * hidden, "mixer"),
                _whole_float(f"layers.{i}.{hc_name}_base", mix, "mixer"),
                _whole_float(f"layers.{i}.{hc_name}_scale", 3, "mixer")]
    return out


def deepseek_v4(f: Fields, layers: list, dims) -> list[Module]:
    """DeepseekV4ForCausalLM as params_mla_more.deepseek_v4 counts it, under the checkpoint's names (module
    docstring)."""
    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1, minimum=0) * inter
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=64)
    vocab = f.int("vocab_size")
    from ..params_mla_more import deepseek_v4_hashed

    by_hash = deepseek_v4_hashed(f, len(layers))
    out = [Module("embed", 0, vocab * hidden, "embeddings", top=True), _norm("norm", hidden),
           _whole_float("hc_head_fn", hc * hc * hidden, "mixer"), _whole_float("hc_head_base", hc, "mixer"),
           _whole_float("hc_head_scale", 1, "mixer")]
    if not f.flag("tie_word_embeddings"):
        out.append(Module("head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i, spec in enumerate(layers):
        a, m = f"layers.{i}.attn", f"layers.{i}.ffn"
        out += _v4_attention(a, hidden, q_rank, heads, head, o_rank, groups)
        ratio = next((c.policy.compress_ratio for c in spec.caches if c.policy.compress_ratio), None)
        if ratio is not None:
            csa = any(c.kind == "indexer" for c in spec.caches)
            out += _compressor(f"{a}.compressor", hidden, head, 2 if csa else 1, ratio)
            if csa:
                out += _compressor(f"{a}.indexer.compressor", hidden, index, 2, ratio)
                out += [_top(_linear(f"{a}.indexer.wq_b", q_rank, index_heads * index, "attention", whole=True)),
                        _whole_float(f"{a}.indexer.weights_proj", hidden * index_heads)]
        out += _v4_ffn(m, experts, hidden, inter, shared)
        if not by_hash[i]:
            out.append(Module(f"{m}.gate.bias", 0, experts, "router", top=True))
        out += _v4_layer_rest(i, hidden, hc)
    return out


# -- DeepSeek-V4.1 (params_mla_more.deepseek_v41_parts) ----------------------------------------------------------------

def deepseek_v41(f: Fields, layers: list, dims) -> list[Module]:
    """DeepSeek-V4.1's text model (deepseek_v41_text) as params_mla_more.deepseek_v41_parts counts it, under the
    checkpoint's names, which are V4's (vLLM 0.34 models/deepseek_v41/nvidia/model.py
    _make_deepseek_v4_weights_mapper: the same layers. / embed / head / norm names and the packed
    fused_wqa_wkv = wq_a + wkv, fused_wkv_wgate = wkv + wgate). Per layer: V4's attention modules
    (_v4_attention), V4's MoE (_v4_ffn) with two float32 router biases on every layer (DeepseekV4MoE is built
    with num_hash_layers=0; deepseek_v4/nvidia/model.py DeepseekV4MoE: gate.e_score_correction_bias, the
    checkpoint's ffn.gate.bias, and gate.bias_vl, which vLLM builds where the config has a vision tower), the
    norms and mixers (_v4_layer_rest). What differs from V4 (models/deepseek_v41):
    - a KV source (kv_source_layer_ids; compressor.py DeepseekCompressor) holds compressor.wkv, compressor.wgate
      at ratio 2 only (ratio 1 "carries no gate"), head_dim wide each, built with quant_config=None and
      disable_tp=True (BF16, whole), and compressor.norm; no ape;
    - an index source (index_source_layer_ids; attention.py DeepseekV4Indexer) holds indexer.wq_b (a
      ReplicatedLinear, FP8, whole) and indexer.weights_proj (ReplicatedLinear, quant_config=None: BF16, whole);
      one that is also a KV source (owns_k) holds indexer.wk, head_dim -> index_head_dim (ReplicatedLinear,
      quant_config=None: BF16, whole), and indexer.k_norm; the indexer has no compressor of its own;
    - an Engram layer (engram_layer_ids; common/engram.py Engram) holds engram.wkv, (max_ngram - 1) x heads x
      head_dim -> (hc_mult + 1) x hidden (a ColumnParallelLinear, FP8, split over TP), and engram.q_weight and
      engram.k_weight, [hc_mult, hidden] bfloat16 nn.Parameters (whole); its n-gram table engram.embed is not
      counted (kept in host memory by default: shared_compressed.engram_note);
    - no hc_head (DeepseekV4Model: "v4.1 has no learned hc_head").
    Not in the table, as the counter leaves them out: the DSpark drafter (mtp.*) and the vision tower."""
    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1, minimum=0) * inter
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=32)
    vocab = f.int("vocab_size")
    engram = set(f.list("engram_layer_ids")) if f.has("engram_layer_ids") else set()
    out = [Module("embed", 0, vocab * hidden, "embeddings", top=True), _norm("norm", hidden)]
    if not f.flag("tie_word_embeddings"):
        out.append(Module("head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i, spec in enumerate(layers):
        a, m = f"layers.{i}.attn", f"layers.{i}.ffn"
        out += _v4_attention(a, hidden, q_rank, heads, head, o_rank, groups)
        main = spec.caches[0] if spec.caches and not spec.borrows else None
        ratio = main.policy.compress_ratio if main is not None else None
        if ratio:  # a KV source (shared_compressed.layers: only a KV source stores compressed entries)
            c = f"{a}.compressor"
            out.append(_whole_float(f"{c}.wkv", hidden * head))
            if ratio > 1:
                out.append(_whole_float(f"{c}.wgate", hidden * head))
            out += [_norm(f"{c}.norm", head), _whole_float(f"{a}.indexer.wk", head * index),
                    _norm(f"{a}.indexer.k_norm", index)]
        if any(c.kind == "indexer" for c in spec.caches + spec.borrows):  # an index source
            out += [_top(_linear(f"{a}.indexer.wq_b", q_rank, index_heads * index, "attention", whole=True)),
                    _whole_float(f"{a}.indexer.weights_proj", hidden * index_heads)]
        if i in engram:
            e = f"layers.{i}.engram"
            ngram, e_heads = f.int("engram_max_ngram_size", minimum=2), f.int("engram_n_heads", minimum=1)
            e_dim = f.int("engram_head_dim", minimum=1)
            out += [_top(_linear(f"{e}.wkv", (ngram - 1) * e_heads * e_dim, (hc + 1) * hidden, "engram")),
                    _whole_float(f"{e}.q_weight", hc * hidden, "engram"),
                    _whole_float(f"{e}.k_weight", hc * hidden, "engram")]
        out += _v4_ffn(m, experts, hidden, inter, shared)
        out += [Module(f"{m}.gate.bias", 0, experts, "router", top=True),
                Module(f"{m}.gate.bias_vl", 0, experts, "router", top=True)]
        out += _v4_layer_rest(i, hidden, hc)
    return out


# -- MiniCPM3 (params_mla_more.minicpm3) -------------------------------------------------------------------------------

def minicpm3(f: Fields, layers: list, dims) -> list[Module]:
    """MiniCPM3ForCausalLM (transformers 5.25 modeling_minicpm3.py MiniCPM3Attention, MiniCPM3MLP; checkpoint
    names model.layers.N.self_attn.q_a_proj ...): DeepSeek-V2's MLA modules (q_a_proj, q_a_layernorm, q_b_proj,
    or q_proj without a q_lora_rank; kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; attention_bias on
    q_a_proj, kv_a_proj_with_mqa and o_proj) with v_head_dim defaulting to hidden / heads, the gated mlp
    (mlp_bias on all three), two norms; embeddings, final norm, the head tied unless tie_word_embeddings is
    false. vLLM 0.34 minicpm3.py MiniCPM3Attention builds q_a_proj and kv_a_proj_with_mqa as ReplicatedLinear
    (whole on every TP rank, as _mla_widths marks them), q_a_layernorm and kv_a_layernorm as RMSNorm, q_b_proj
    and kv_b_proj ColumnParallelLinear, o_proj RowParallelLinear; the decoder layer (minicpm.py
    MiniCPMDecoderLayer) its two RMSNorms and the MLP split over TP."""
    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    inter = f.int("intermediate_size")
    v_dim = f.int("v_head_dim", default=hidden // heads)
    q_lora = f.int("q_lora_rank", default=0, minimum=0) or None
    widths = (f.int("kv_lora_rank"), f.int("qk_rope_head_dim"), f.int("qk_nope_head_dim"), v_dim)
    bias, mlp_bias = f.flag("attention_bias"), f.flag("mlp_bias")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        m = f"layers.{i}.mlp"
        out += _mla_widths(f"layers.{i}.self_attn", hidden, heads, q_lora, bias, *widths)
        out += _mlp(m, hidden, inter, "mlp", mlp_bias)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


# -- LongCat-Flash (params_mla.longcat_flash) -------------------------------------------------------------------

def longcat_flash(f: Fields, layers: list, dims) -> list[Module]:
    """LongcatFlashForCausalLM (transformers 5.25 modeling_longcat_flash.py LongcatFlashDecoderLayer; vLLM 0.34
    longcat_flash.py FlashDecoderLayer), with params_mla.longcat_flash's defaults. kvplan's layers are the
    2 x num_layers MLA sublayers; decoder layer N holds, for s in 0 and 1, self_attn.s (DeepSeek's MLA modules,
    always with a query LoRA, q_b_proj to qk_head_dim a head; attention_bias on q_a_proj, kv_a_proj_with_mqa and
    o_proj), mlps.s (a dense gated mlp of ffn_hidden_size), input_layernorm.s and post_attention_layernorm.s;
    and one MoE, mlp: the routed experts mlp.experts.E.gate_proj / up_proj / down_proj (the zero-computation
    experts, zero_expert_num of them, hold no weights), mlp.router.classifier over n_routed_experts +
    zero_expert_num (bias only with router_bias) and its e_score_correction_bias.

    vLLM 0.34 holds whole on every TP rank: the MLA latent projections (DeepseekV2MLAAttention, as _mla_widths
    says), every RMSNorm, the router's classifier (GateLinear, a ReplicatedLinear) and e_score_correction_bias;
    it builds both in float32 (LongcatMoe router_params_dtype): sized here at the checkpoint's dtype, vLLM's profile
    adds the rest (configs/param_fp32.py). The classifier's bias a router_bias checkpoint stores (transformers 5.25
    LongcatFlashTopkRouter: nn.Linear(bias=router_bias)) is counted here; vLLM 0.32.0 and later do not build it
    (GateLinear(bias=False)), so the module carries it as Module.vllm_delta (configs/param_vllm_load.py) and
    vLLM's profile leaves it out. The dense mlps and the experts split."""
    from ..params_mla import _experts as routed_experts
    from ..params_mla import _int, longcat_mla_fields

    hidden, nope, rope, qk_head, heads, q_lora, rank, v_dim, bias = longcat_mla_fields(f)
    inter = _int(f, "intermediate_size", "ffn_hidden_size", default=12288)
    experts = routed_experts(f, 512)
    routed = experts + f.int("zero_expert_num", default=256, minimum=0)
    expert_inter = _int(f, "moe_intermediate_size", "expert_ffn_hidden_size", default=2048)
    out = _ends(f, hidden, False, 131072)
    for i in range(len(layers)):
        d, s = i // 2, i % 2
        a = f"layers.{d}.self_attn.{s}"
        out += [_linear(f"{a}.q_b_proj", q_lora, heads * qk_head, "attention") if m.name == f"{a}.q_b_proj" else m
                for m in _mla_widths(a, hidden, heads, q_lora, bias, rank, rope, nope, v_dim)]
        out += _mlp(f"layers.{d}.mlps.{s}", hidden, inter, "mlp")
        out += [_float(f"layers.{d}.input_layernorm.{s}", hidden),
                _float(f"layers.{d}.post_attention_layernorm.{s}", hidden)]
        if s == 0:
            m = f"layers.{d}.mlp"
            out += _experts(m, experts, hidden, expert_inter) if experts else []
            classifier = _float(f"{m}.router.classifier", hidden * routed + (routed if f.flag("router_bias") else 0),
                                "router")
            if f.flag("router_bias"):  # stored by the checkpoint, not built by vLLM from 0.32 (param_vllm_load.py)
                classifier = replace(classifier, vllm_delta=(longcat_router_bias(routed),))
            out += [classifier,
                    _float(f"{m}.router.e_score_correction_bias", routed, "router")]
    return out


MLA = {"deepseek_v4": deepseek_v4, "deepseek_v41_text": deepseek_v41, "minicpm3": minicpm3,
       "longcat_flash": longcat_flash}
