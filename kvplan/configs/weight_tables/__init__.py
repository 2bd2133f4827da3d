"""The parameter count module by module, under the names a checkpoint gives the modules: for a quantized
checkpoint whose config keeps some modules unquantized (configs/quant_exclude.py).

Each table mirrors a counter of params*.py term by term (the same config fields, the same defaults) and names
every module as the checkpoint's safetensors do, per layer: attention (q/k/v/o, MLA's LoRA projections, a DSA
indexer, Gated DeltaNet), the dense MLP, the routed experts (one entry per layer for all of them), the shared
experts, the router, the norms; then the embeddings, the final norm and the LM head. `split` sums the
parameters a format quantizes (the weight of every linear layer, routed experts included, that the list does
not name) and checks that the table adds up to the family's own count: a table that does not is not used.

What a format leaves in the float dtype whatever its list says: embeddings, norms (and a LayerNorm's bias),
biases of linear layers, MoE routers (gate weights and e_score_correction_bias: DeepSeek's and GLM's are not
nn.Linear; vLLM builds Qwen's, MiniMax's, Llama 4's and Gemma 4's unquantized), Gated DeltaNet's conv1d, A_log and dt_bias, and the
DSA indexer's weights_proj (vLLM builds it with quant_config=None; transformers keeps it in float32).

Names are relative to the decoder ("layers.3.self_attn.q_proj", "embed_tokens", "norm") or the top ("lm_head");
`ROOTS` are the prefixes checkpoints put before them (a causal LM's `model.`, a multimodal wrapper's
`model.language_model.` or `language_model.model.`). Checked against the modules transformers builds by
tests/test_quant_exclude.py. Llama 4's, Gemma 4's (and Gemma 4 Unified's) and Kimi-Linear's (and Kimi K3's) tables
live in configs/weight_tables/wrapped.py; Gemma 3's, Phi-3's and Qwen3-Next's in configs/weight_tables/more.py;
the Mamba hybrids' (Nemotron-H, Granite 4.0-H, Falcon-H1, Jamba, Zamba2) in configs/weight_tables/hybrid.py;
Nemotron-NAS's, the pure Mamba models', OLMo Hybrid's, Zamba's, GPT-Neo's, RecurrentGemma's, IQuest-Loop's, LFM3's,
DomynEdge's and Moondream 3's in configs/weight_tables/rest.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...weights.record import REPLICATED
from ...weights.roles import is_row_parallel
from ..fields import Fields
from ..param_parts import dense_first, embeddings, mlp_layer_types
from ..quant_bytes import Unsized

if TYPE_CHECKING:
    from ..param_fp32 import Fp32Rule
    from ..param_vllm_load import LoadDelta

# the Qwen-Omni thinkers' and Qwen3-ASR's checkpoints: `thinker.model.layers.N...`, `thinker.lm_head` (vLLM 0.34
# qwen2_5_omni_thinker.py, qwen3_omni_moe_thinker.py, qwen3_asr.py hf_to_vllm_mapper: configs/weight_tables/wrap.py)
ROOTS = ("model.", "model.language_model.", "language_model.model.", "thinker.model.",
         "model.llm.")  # Inkling's TML checkpoints (inkling_model: configs/weight_tables/step_more.py)
TOP_ROOTS = ("", "language_model.", "thinker.")


@dataclass(frozen=True)
class Module:
    name: str  # relative to the decoder ("layers.0.mlp.down_proj"), or to the top when top
    weight: int  # parameters a format quantizes when it quantizes this module (0: never quantized)
    other: int = 0  # parameters that stay in the float dtype with it (a bias, a norm, a router)
    role: str = "attention"  # attention, mlp, experts, shared experts, router, norms, embeddings, lm_head, ...
    experts: int = 0  # routed experts this entry stands for ("{e}" in the name): weight covers all of them
    top: bool = False
    inputs: int = 0  # input features of the weight (each expert's): GPTQ stores an int32 g_idx entry per input row
    # `other` is a RowParallelLinear's bias: vLLM 0.34 linear.py RowParallelLinear.__init__ creates it at the full
    # output_size on every TP rank (loaded whole, added on rank 0 only), so each rank holds it whole
    whole_bias: bool = False
    # vLLM builds the whole module (weight and bias) on every TP rank: MLA's latent down-projections and the DSA
    # indexer's projections (_mla_widths, _indexer say which vLLM 0.34 class or argument makes each whole)
    whole: bool = False
    # parameters of `weight` every TP rank holds whole where vLLM splits the rest of the module: MambaMixer2's
    # in_proj rows for B and C when n_groups is 1 (vLLM 0.34 mamba_mixer2.py pads the one group to tp_size groups,
    # one a rank: configs/weight_tables/hybrid.py _mamba2)
    whole_weight: int = 0
    # vLLM builds this module (weight and `other`) in float32 whatever the checkpoint's dtype: the rule (the vLLM
    # class, the first release, a GPU condition) from configs/param_fp32.py VLLM_FP32, read by engines/vllm_fp32.py;
    # None: in the serving dtype. kvplan's own plan sizes the module as the checkpoint stores it
    vllm_fp32: Fp32Rule | None = None
    # the module's outputs hold the keys and values of kv_heads KV heads (k_proj, v_proj, or the KV share of a fused
    # qkv): kv_weight of `weight` and kv_other of `other` (its bias). vLLM builds them in a QKVParallelLinear
    # (0.11.0-0.34.0 layers/linear.py), which gives every TP rank one whole KV head when TP >= kv_heads
    # (num_kv_heads = 1, num_kv_head_replicas = tp / kv_heads), so each rank holds 1 / kv_heads of this share, not
    # 1 / tp (kv_params; capacity.weights.kv_rank_bytes)
    kv_heads: int = 0
    kv_weight: int = 0
    kv_other: int = 0
    # parameters vLLM holds of this module beyond the checkpoint's (LoadDelta.params; negative: fewer), each from a
    # release on (configs/param_vllm_load.py: Gemma 4's k_eq_v V shard, LongCat-Flash's router bias), which
    # vLLM's profile adds (engines/vllm_load_delta.py); kvplan's own plan counts the checkpoint, without them
    vllm_delta: tuple[LoadDelta, ...] = ()

    def names(self, expert: int = 0) -> list[str]:
        name = self.name.replace("{e}", str(expert))
        return [root + name for root in (TOP_ROOTS if self.top else ROOTS)]


def _linear(name: str, inputs: int, outputs: int, role: str, bias: bool = False, row: bool = False,
            whole: bool = False, kv_heads: int = 0, kv_outputs: int | None = None, top: bool = False) -> Module:
    """row: vLLM builds it as a RowParallelLinear (every o_proj of these families: llama.py, qwen2.py, qwen3.py,
    qwen3_moe.py, qwen2_moe.py, mixtral.py, minimax_m2.py, laguna.py, deepseek_v2.py in 0.34), whose bias each TP
    rank holds whole. whole: every TP rank holds the whole module (Module.whole). kv_heads: the KV heads of a k_proj
    or v_proj (all its outputs), or of a fused qkv projection whose last kv_outputs outputs are its keys and values
    (Module.kv_heads)."""
    kv = (outputs if kv_outputs is None else kv_outputs) if kv_heads else 0
    return Module(name, inputs * outputs, outputs if bias else 0, role, top=top, inputs=inputs,
                  whole_bias=row and bias, whole=whole, kv_heads=kv_heads, kv_weight=inputs * kv,
                  kv_other=kv if bias else 0)


def _float(name: str, params: int, role: str = "norms") -> Module:
    return Module(name, 0, params, role)


def _experts(prefix: str, count: int, hidden: int, inter: int, names=("gate_proj", "up_proj", "down_proj")) -> list:
    gate, up, down = names
    return [Module(f"{prefix}.experts.{{e}}.{gate}", count * hidden * inter, 0, "experts", count, inputs=hidden),
            Module(f"{prefix}.experts.{{e}}.{up}", count * hidden * inter, 0, "experts", count, inputs=hidden),
            Module(f"{prefix}.experts.{{e}}.{down}", count * inter * hidden, 0, "experts", count, inputs=inter)]


def _mlp(prefix: str, hidden: int, inter: int, role: str, bias: bool = False) -> list:
    """A gated MLP: gate_proj, up_proj and down_proj (a RowParallelLinear, whose bias each TP rank holds whole)."""
    return [_linear(f"{prefix}.gate_proj", hidden, inter, role, bias), _linear(f"{prefix}.up_proj", hidden, inter, role, bias),
            _linear(f"{prefix}.down_proj", inter, hidden, role, bias, row=True)]


def _ends(f: Fields, hidden: int, tied_default: bool, vocab_default: int | None, embed: str = "embed_tokens",
          norm: str = "norm", top: bool = False) -> list:
    """Embeddings, the final norm and the LM head (as param_parts.embeddings counts them); embed and norm: their
    names, relative to the decoder, or to the top of the checkpoint with `top` (Mamba's backbone.embeddings)."""
    both = embeddings(f, hidden, tied_default, vocab_default)
    vocab = (f.int("vocab_size", minimum=0) if vocab_default is None
             else f.int("vocab_size", default=vocab_default, minimum=0))
    vocab_x_hidden = vocab * hidden
    out = [Module(embed, 0, vocab_x_hidden, "embeddings", top=top), Module(norm, 0, hidden, "norms", top=top)]
    if both > vocab_x_hidden:
        out.append(Module("lm_head", both - vocab_x_hidden, 0, "lm_head", top=True, inputs=hidden))
    return out


# -- attention decoders (params_generic.count_params) ------------------------------------------------------------------

# the counter's model types whose modules every checkpoint names as below; MoE blocks: mlp.experts.N.gate_proj
# (Qwen) or block_sparse_moe.experts.N.w1 / w3 / w2 (Mixtral, MiniMax-M2)
_GQA = ("llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "qwen2_moe", "mixtral", "minimax_m2")
_BLOCK_SPARSE = ("mixtral", "minimax_m2")


def _gqa(f: Fields, layers: list, dims) -> list:
    from ..param_embeddings import _TIED_BY_DEFAULT
    from ..params_generic import _QKV_BIAS_ONLY, _QK_NORM, _is_moe_layer, dense_mlp_bias

    heads, kv, head_dim, _ = dims
    mt = f.model_type
    hidden = f.int("hidden_size", "n_embd")
    inter = f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)
    qkv_bias = f.flag("attention_bias") or mt in _QKV_BIAS_ONLY
    o_bias = f.flag("attention_bias") and mt not in _QKV_BIAS_ONLY
    out = _ends(f, hidden, mt in _TIED_BY_DEFAULT, 0)
    # read once, not per layer (a table is built for every quantized config and for the TP split of every config)
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    moe_inter = None
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim, qkv_bias, o_bias=o_bias)
        if mt in _QK_NORM:
            out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        if mt == "minimax_m2":  # MiniMaxM2Attention: RMSNorms over all heads' queries and keys, which vLLM 0.34
            # splits over TP with the heads (minimax_m2.py: MiniMaxText01RMSNormTP, hidden_size // tp a rank); above
            # the KV heads k_norm is sharded by KV head instead (weight_shard_world_size=total_num_kv_heads: head_dim
            # a rank), as the keys it normalizes
            out += [_float(f"{a}.q_norm", heads * head_dim, "attention"),
                    Module(f"{a}.k_norm", 0, kv * head_dim, "attention", kv_heads=kv, kv_other=kv * head_dim)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if experts and _is_moe_layer(f, i):
            moe_inter = moe_inter or f.int("moe_intermediate_size", "intermediate_size")
            if mt in _BLOCK_SPARSE:
                m = f"layers.{i}.block_sparse_moe"
                out += _experts(m, experts, hidden, moe_inter, ("w1", "w3", "w2"))
                out.append(_float(f"{m}.gate", hidden * experts, "router"))
                if mt == "minimax_m2":
                    out.append(_float(f"{m}.e_score_correction_bias", experts, "router"))
            else:
                m = f"layers.{i}.mlp"
                out += _experts(m, experts, hidden, moe_inter)
                out.append(_float(f"{m}.gate", hidden * experts, "router"))
                shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
                if shared_inter and not f.int("n_shared_experts", default=0, minimum=0):
                    out += _mlp(f"{m}.shared_expert", hidden, shared_inter, "shared experts")
                    out.append(_float(f"{m}.shared_expert_gate", hidden, "router"))
                elif f.int("n_shared_experts", default=0, minimum=0):
                    return []  # a shared-expert block these types do not build: no table
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp", dense_mlp_bias(f))
    return out


# -- DeepSeek-V2/V3 MLA (params_generic.count_latent_params) -----------------------------------------------------------

_LATENT = ("deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32")


def _mla(f: Fields, a: str, hidden: int, heads: int, q_lora: int | None, bias: bool) -> list:
    return _mla_widths(a, hidden, heads, q_lora, bias, f.int("kv_lora_rank"), f.int("qk_rope_head_dim"),
                       f.int("qk_nope_head_dim"), f.int("v_head_dim"))


def _mla_widths(a: str, hidden: int, heads: int, q_lora: int | None, bias: bool, rank: int, rope: int, nope: int,
                v_dim: int) -> list:
    """MLA's modules for widths a counter has read (kv_lora_rank, qk_rope / qk_nope / v_head_dim). vLLM 0.34 holds
    the latent down-projections q_a_proj and kv_a_proj_with_mqa whole on every TP rank and splits the heads only in
    q_b_proj (or q_proj), kv_b_proj and o_proj: deepseek_v2.py DeepseekV2MLAAttention fuses the two into
    DeepSeekV2FusedQkvAProjLinear (a MergedColumnParallelLinear with disable_tp=True), or builds kv_a_proj_with_mqa
    as a ReplicatedLinear without a q_lora_rank; DeepseekV2Attention builds both as ReplicatedLinear;
    deepseek_v32/attention.py DeepseekV32Attention (DeepSeek-V3.2, GLM-5) and kimi_k3/nvidia/mla.py (Kimi-Linear:
    kv_a_proj_with_mqa a ReplicatedLinear) do the same."""
    if q_lora:
        out = [_linear(f"{a}.q_a_proj", hidden, q_lora, "attention", bias, whole=True),
               _float(f"{a}.q_a_layernorm", q_lora),
               _linear(f"{a}.q_b_proj", q_lora, heads * (nope + rope), "attention")]
    else:
        out = [_linear(f"{a}.q_proj", hidden, heads * (nope + rope), "attention")]
    return out + [_linear(f"{a}.kv_a_proj_with_mqa", hidden, rank + rope, "attention", bias, whole=True),
                  _float(f"{a}.kv_a_layernorm", rank),
                  _linear(f"{a}.kv_b_proj", rank, heads * (nope + v_dim), "attention"),
                  _linear(f"{a}.o_proj", heads * v_dim, hidden, "attention", bias, row=True)]


def _indexer(a: str, hidden: int, q_lora: int, head_dim: int, heads: int) -> list:
    """The DSA indexer, whole on every TP rank in vLLM 0.34 (deepseek_v32/attention.py DeepseekV32Indexer, and
    deepseek_v2.py Indexer: wq_b a ReplicatedLinear, wk and weights_proj fused into wk_weights_proj, a
    MergedColumnParallelLinear with disable_tp=True; k_norm a LayerNorm)."""
    return [_linear(f"{a}.indexer.wq_b", q_lora, heads * head_dim, "attention", whole=True),
            _linear(f"{a}.indexer.wk", hidden, head_dim, "attention", whole=True),
            _float(f"{a}.indexer.k_norm", 2 * head_dim),
            Module(f"{a}.indexer.weights_proj", 0, hidden * heads, "attention", whole=True)]


def _deepseek_moe(m: str, hidden: int, experts: int, inter: int, shared_inter: int, score_bias: bool = True) -> list:
    out = _experts(m, experts, hidden, inter) + [_float(f"{m}.gate", hidden * experts, "router")]
    if score_bias:
        out.append(_float(f"{m}.gate.e_score_correction_bias", experts, "router"))
    return out + (_mlp(f"{m}.shared_experts", hidden, shared_inter, "shared experts") if shared_inter else [])


def _norms_and_ffn(i: int, hidden: int, sparse: bool, experts: int, moe_inter: int, shared_inter: int, inter: int,
                   score_bias: bool = True) -> list:
    """A DeepSeek-style decoder layer after its attention: the two norms, then the MoE block (sparse) or a dense
    mlp of `inter`."""
    out = [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    if sparse:
        return out + _deepseek_moe(f"layers.{i}.mlp", hidden, experts, moe_inter, shared_inter, score_bias)
    return out + _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")


def _latent(f: Fields, layers: list, dims) -> list:
    from ..params_generic import _is_moe_layer

    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    inter = f.int("intermediate_size")
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    if f.int("shared_expert_intermediate_size", default=0, minimum=0) and not f.int("n_shared_experts", default=0):
        return []  # a Qwen-style shared expert on an MLA model: no table
    out = _ends(f, hidden, False, 0)
    widths = (f.int("kv_lora_rank"), f.int("qk_rope_head_dim"), f.int("qk_nope_head_dim"), f.int("v_head_dim"))
    index = (f.int("index_head_dim"), f.int("index_n_heads")) if f.has("index_head_dim") else None
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _mla_widths(a, hidden, heads, q_lora, False, *widths)
        if index:
            out += _indexer(a, hidden, q_lora, *index)
        sparse = bool(experts) and _is_moe_layer(f, i)
        moe_inter = f.int("moe_intermediate_size", "intermediate_size") if sparse else 0
        shared = f.int("n_shared_experts", default=0, minimum=0) * moe_inter if sparse else 0
        out += _norms_and_ffn(i, hidden, sparse, experts, moe_inter, shared, inter,
                              score_bias=f.model_type != "deepseek_v2")
    return out


# -- GLM-5 (params_mla.glm_moe_dsa) ----------------------------------------------------------------------------

def _glm_moe_dsa(f: Fields, layers: list, dims) -> list:
    from .. import params_mla as M

    hidden = f.int("hidden_size", default=6144)
    heads = f.int("num_attention_heads", default=64)
    q_lora = M._need_rank(f, "q_lora_rank", 2048)
    bias = f.flag("attention_bias")
    defaults = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256}
    g = _Defaults(f, defaults)
    inter = f.int("intermediate_size", default=12288, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=2048, minimum=0)
    experts = M._int(f, "num_experts", "num_local_experts", "n_routed_experts", default=256)
    shared = moe_inter * f.int("n_shared_experts", default=1, minimum=0)
    n = len(layers)
    kinds = mlp_layer_types(f, n, dense_first(f.int("first_k_dense_replace", default=3, minimum=0)))
    out = _ends(f, hidden, False, 154880)
    for i, (kind, itype) in enumerate(zip(kinds, M._glm_dsa_indexer_types(f, n))):
        a = f"layers.{i}.self_attn"
        out += _mla(g, a, hidden, heads, q_lora, bias)
        if itype != "shared":
            out += _indexer(a, hidden, q_lora, f.int("index_head_dim", default=128), f.int("index_n_heads", default=32))
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, shared, inter)
    return out


class _Defaults:
    """Fields with a family's defaults for the MLA widths _mla reads."""

    def __init__(self, f: Fields, defaults: dict):
        self.f, self.defaults = f, defaults

    def int(self, name: str, **kw) -> int:
        return self.f.int(name, default=self.defaults[name], **kw)


# -- Qwen3.5 / 3.6 (params_linear_mixers.qwen3_5) ----------------------------------------------------------------------

def _qkvo(a: str, hidden: int, heads: int, kv: int, head_dim: int, bias: bool = False, q_width: int | None = None,
          o_bias: bool | None = None, inputs: int | None = None) -> list:
    """q/k/v/o_proj of one attention layer (biases on q/k/v with `bias`, on o_proj with `o_bias`, `bias` unless
    given; o_proj a RowParallelLinear, whose bias every TP rank holds whole, k/v_proj split by KV head); q_width:
    the query projection's outputs where they are not heads x head_dim (Qwen3-Next's and Qwen3.5's output gate
    doubles them); inputs: the q/k/v projections' input width where it is not hidden (Zamba's shared block)."""
    inputs = inputs or hidden
    return [_linear(f"{a}.q_proj", inputs, q_width or heads * head_dim, "attention", bias),
            _linear(f"{a}.k_proj", inputs, kv * head_dim, "attention", bias, kv_heads=kv),
            _linear(f"{a}.v_proj", inputs, kv * head_dim, "attention", bias, kv_heads=kv),
            _linear(f"{a}.o_proj", heads * head_dim, hidden, "attention", bias if o_bias is None else o_bias,
                    row=True)]


def _gdn_after_inputs(a: str, key_dim: int, value_dim: int, value_heads: int, value_head_dim: int, kernel: int,
                      hidden: int) -> list:
    """A Gated DeltaNet's parameters after its input projections (Qwen3-Next and Qwen3.5 alike): conv1d over
    keys, queries and values (no bias), dt_bias, A_log, the gated norm over head_v_dim, out_proj."""
    return [_float(f"{a}.conv1d", (2 * key_dim + value_dim) * kernel, "linear attention"),
            _float(f"{a}.dt_bias", value_heads, "linear attention"),
            _float(f"{a}.A_log", value_heads, "linear attention"),
            _float(f"{a}.norm", value_head_dim),
            _linear(f"{a}.out_proj", value_dim, hidden, "linear attention")]


def _qwen3_5_gdn(a: str, key_dim: int, value_dim: int, value_heads: int, value_head_dim: int, kernel: int,
                 hidden: int) -> list:
    """Qwen3.5's Gated DeltaNet (Qwen4-Exp's too): its four input projections stored apart (in_proj_qkv, in_proj_z,
    in_proj_b, in_proj_a; Qwen3-Next fuses them as in_proj_qkvz / in_proj_ba), then _gdn_after_inputs."""
    return [_linear(f"{a}.in_proj_qkv", hidden, 2 * key_dim + value_dim, "linear attention"),
            _linear(f"{a}.in_proj_z", hidden, value_dim, "linear attention"),
            _linear(f"{a}.in_proj_b", hidden, value_heads, "linear attention"),
            _linear(f"{a}.in_proj_a", hidden, value_heads, "linear attention"),
            *_gdn_after_inputs(a, key_dim, value_dim, value_heads, value_head_dim, kernel, hidden)]


def _qwen_sparse_moe(f: Fields, m: str, experts: int, hidden: int, inter: int) -> list:
    """Qwen2-MoE / Qwen3-Next / Qwen3.5's sparse block: the routed experts, the router mlp.gate, and a
    shared_expert with its one-output shared_expert_gate where shared_expert_intermediate_size is set."""
    out = _experts(m, experts, hidden, inter) + [_float(f"{m}.gate", hidden * experts, "router")]
    shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
    if shared_inter:
        out += _mlp(f"{m}.shared_expert", hidden, shared_inter, "shared experts")
        out.append(_float(f"{m}.shared_expert_gate", hidden, "router"))
    return out


def _qwen3_5(f: Fields, layers: list, dims) -> list:
    from ..param_parts import _kinds_of

    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    gate = 2 if f.flag("attn_output_gate", default=True) else 1
    experts = f.int("num_experts", default=0, minimum=0)
    kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    kernel = f.int("linear_conv_kernel_dim", default=4)
    key_dim, value_dim = kh * kd, vh * vd
    out = _ends(f, hidden, False, 0)
    for i, kind in enumerate(_kinds_of(layers)):
        if kind == "attention":
            a = f"layers.{i}.self_attn"
            out += _qkvo(a, hidden, heads, kv, head_dim, q_width=heads * head_dim * gate)
            out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        else:
            a = f"layers.{i}.linear_attn"
            out += _qwen3_5_gdn(a, key_dim, value_dim, vh, vd, kernel, hidden)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        m = f"layers.{i}.mlp"
        if experts:
            out += _qwen_sparse_moe(f, m, experts, hidden, f.int("moe_intermediate_size"))
        else:
            out += _mlp(m, hidden, f.int("intermediate_size"), "mlp")
    return out


# -- Laguna (params_moe.laguna) --------------------------------------------------------------------------------

def _laguna(f: Fields, layers: list, dims) -> list:
    """LagunaForCausalLM (transformers modeling_laguna.py, vLLM laguna.py), named as the checkpoints are
    (transformers renames mlp.shared_expert. and mlp.experts.e_score_correction_bias on load: conversion_mapping):
    per layer q/k/v/o_proj with num_attention_heads_per_layer[i] query heads (attention_bias on all four),
    q_norm, k_norm, g_proj (one gate per head, or per head x head_dim), two norms; sparse layers (mlp_layer_types,
    else all but layer 0) the routed experts, the router mlp.gate (vLLM's GateLinear, never quantized) and its
    e_score_correction_bias, and mlp.shared_expert; dense layers mlp.gate_proj / up_proj / down_proj."""
    from ..params_moe import laguna_fields

    n = len(layers)
    hidden, heads, kv, hd, bias, per_head, per_layer, inter, moe_inter, shared_inter, experts, _ = laguna_fields(f)
    out = _ends(f, hidden, False, None)
    for i, kind in enumerate(mlp_layer_types(f, n, dense_first(1))):
        h = per_layer[i] if i < len(per_layer) else heads
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += [_linear(f"{a}.q_proj", hidden, h * hd, "attention", bias),
                _linear(f"{a}.k_proj", hidden, kv * hd, "attention", bias, kv_heads=kv),
                _linear(f"{a}.v_proj", hidden, kv * hd, "attention", bias, kv_heads=kv),
                _linear(f"{a}.o_proj", h * hd, hidden, "attention", bias, row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _linear(f"{a}.g_proj", hidden, h if per_head else h * hd, "attention"),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind == "sparse":
            out += _experts(m, experts, hidden, moe_inter)
            out += [_float(f"{m}.gate", hidden * experts, "router"),
                    _float(f"{m}.experts.e_score_correction_bias", experts, "router")]
            if shared_inter:
                out += _mlp(f"{m}.shared_expert", hidden, shared_inter, "shared experts")
        else:
            out += _mlp(m, hidden, inter, "mlp")
    return out


from .glm_oss import TABLES as GLM_OSS  # noqa: E402 (GLM-4.5, GLM-4.7-Flash, gpt-oss)
from .wrapped import WRAPPED  # noqa: E402 (Llama 4, Gemma 4: built from the helpers above)
from .more import MORE  # noqa: E402 (Gemma 3, Phi-3, Qwen3-Next)
from .vl import VL  # noqa: E402 (Qwen3-VL / Qwen2.5-VL text models, ERNIE 4.5, MiMo)
from .dense import DENSE  # noqa: E402 (Gemma, Gemma 2, Cohere2, EXAONE 4, GLM-4, GLM-4-0414, OLMo 3)
from .mla import MLA  # noqa: E402 (DeepSeek-V4, DeepSeek-V4.1, LongCat-Flash, MiniCPM3)
from .hybrid import HYBRID  # noqa: E402 (Nemotron-H, Granite 4.0-H, Falcon-H1, Jamba, Zamba2)
from .moe import MOE  # noqa: E402 (MiniMax-Text-01 / M1, Ling / Ring 2.0 and 3.0, DBRX, DeepSeek-MoE)
from .wrap import WRAP  # noqa: E402 (wrappers' text models, TeleChat3, Gemma 3n, MiMo-V2)
from .classic import CLASSIC  # noqa: E402 (InternLM2, Falcon, ChatGLM, GPT-2, OPT, BLOOM, ...)
from .rest import REST  # noqa: E402 (Nemotron-NAS, Mamba, Mamba-2, OLMo Hybrid, Zamba, GPT-Neo, ...)
from .dense_more import DENSE_MORE  # noqa: E402 (Command R, StarCoder2, Phi, OLMo, OLMo 2, Seed-OSS, ...)
from .mla_more import MLA_MORE  # noqa: E402 (Sarvam-MLA, Mistral Small 4, Youtu-LLM, ...: latent attention)
from .vl_more import VL_MORE  # noqa: E402 (more wrappers' text models: Qwen2-VL, GLM-4.1V, GLM-OCR, ...)
from .hybrid_more import HYBRID_MORE  # noqa: E402 (Bamba, ...: more hybrid and recurrent models)
from .moe_more import MOE_MORE  # noqa: E402 (dots.llm1, HunYuan-MoE, OLMoE, PhiMoE, Granite MoE, ...)
from .step_more import STEP_MORE  # noqa: E402 (Step-3.5 / 3.7's text model, ...)

TABLES = {**{t: _gqa for t in _GQA}, **{t: _latent for t in _LATENT}, "glm_moe_dsa": _glm_moe_dsa,
          "qwen3_5_text": _qwen3_5, "qwen3_5_moe_text": _qwen3_5, "laguna": _laguna, **WRAPPED,
          **GLM_OSS, **MORE, **VL, **DENSE, **MLA, **HYBRID, **WRAP,
          **MOE, **CLASSIC, **REST,
          **DENSE_MORE,  # dense decoders (dense_more.py)
          **MLA_MORE,  # latent-attention / sparse decoders (mla_more.py)
          **VL_MORE,  # configs/weight_tables/vl_more.py
          **HYBRID_MORE,  # more hybrid and recurrent models (hybrid_more.py)
          **MOE_MORE,  # mixture-of-experts decoders with ordinary K/V attention (moe_more.py)
          **STEP_MORE}  # StepFun's and the last MoE text models (step_more.py)


def checked_table(raw: dict, source: str):
    """(the config's Fields, its module table) where kvplan has a table of the family that adds up to the family's
    own parameter count, else None (nor for a config kvplan cannot read): what the engines' additions beyond the
    checkpoint (engines/vllm_fp32.py, sglang_fp32.py, vllm_load_delta.py) are sized from."""
    from ...errors import KvplanError
    from ..layer_assembly import _read
    from ..module_counts import counted_params

    try:
        family, f, _, layers, dims = _read(raw, source)
        modules = table(f, layers, dims)
        if not modules or family.params is None or sum(m.weight + m.other for m in modules) != counted_params(
                family, f, layers, dims)[0]:
            return None
    except KvplanError:
        return None
    return f, modules


def table(f: Fields, layers: list, dims) -> list[Module]:
    """The model's modules, or [] where kvplan has no per-module count of its model_type; those vLLM builds in
    float32 marked (Module.vllm_fp32); a pooling architecture's with no lm_head and its head (pooled)."""
    modules = causal_table(f, layers, dims)
    try:
        return pooled(f, modules) if modules else modules
    except ConfigError:
        return []


def causal_table(f: Fields, layers: list, dims) -> list[Module]:
    """The family's modules as its causal LM builds them (table, before a pooling architecture's head)."""
    from ..param_fp32 import mark

    build = TABLES.get(f.model_type)
    if build is None:
        return []
    try:
        return mark(f, build(f, layers, dims))
    except ConfigError:
        return []


def pooled(f: Fields, modules: list[Module]) -> list[Module]:
    """modules with a pooling architecture's head in place of the LM head (configs/pooling_heads.py), each part
    whole or split over TP as vLLM builds it (HeadPart.split); unchanged for any other architecture."""
    from ..pooling_heads import pooling_head

    head = pooling_head(f)
    if head is None:
        return modules
    out = [m for m in modules if m.role != "lm_head"]
    for p in head.parts:
        out.append(Module(p.name, p.inputs * p.outputs, p.outputs if p.bias else 0, "other", top=True,
                          inputs=p.inputs, whole=p.split == "whole", whole_bias=p.split == "row" and p.bias))
    return out


def replicated_params(modules: list[Module]) -> int:
    """Parameters each TP rank holds whole, of an unquantized checkpoint: norms and MoE routers
    (weights.record.REPLICATED: vLLM 0.34 layernorm.py RMSNorm's weight is [hidden_size] on every rank; routers are
    ReplicatedLinear, or its subclass fused_moe/router/gate_linear.py GateLinear), RowParallelLinear biases
    (Module.whole_bias) and the modules vLLM builds whole (Module.whole: MLA's q_a_proj / kv_a_proj_with_mqa, the
    DSA indexer's wq_b / wk / weights_proj), and the parts of modules vLLM holds whole (Module.whole_weight)."""
    return sum(sum(held_whole(m)) for m in modules)


def held_whole(m: Module) -> tuple[int, int]:
    """(parameters of m.weight, parameters of m.other) each TP rank holds whole: all of a module vLLM builds whole
    (Module.whole), the floats of a norm or router (REPLICATED) and a RowParallelLinear's bias (_whole_floats), the
    whole part of a module split in part (Module.whole_weight). The one rule replicated_params sums for the config
    estimate and configs.module_counts.whole_modules applies to a checkpoint's tensors."""
    return (m.weight if m.whole else m.whole_weight), (m.other if _whole_floats(m) else 0)


def kv_params(modules: list[Module]) -> dict[int, int]:
    """KV heads -> parameters (weights and biases) of the modules' KV shares (Module.kv_heads) that vLLM splits by
    KV head; modules built whole on every rank (Module.whole) are left out, as they are held whole anyway."""
    out: dict[int, int] = {}
    for m in modules:
        if m.kv_heads and not m.whole:
            out[m.kv_heads] = out.get(m.kv_heads, 0) + m.kv_weight + m.kv_other
    return out


def _kv_scale_holder(m: Module) -> bool:
    """m is an attention layer's key projection on which ModelOpt stores the KV cache's k_scale (and its v_proj
    v_scale): a decoder layer's `self_attn.k_proj`, or a `k_proj` the table marks as holding KV heads
    (Module.kv_heads) under `mixer.` (Nemotron-H's attention layers). vLLM 0.34 quantization/base_config.py
    QuantizationConfig.get_cache_scale_mapper reads ModelOpt's scales at `.self_attn.{k,v}_proj.{k,v}_scale` and,
    for NemotronH, `.mixer.{k,v}_proj.{k,v}_scale`; other prefixes (Mllama's `cross_attn.k_proj`, which vLLM 0.34
    no longer serves) are not read, so their scales are not counted."""
    return m.name.startswith("layers.") and (m.name.endswith(".self_attn.k_proj")
                                             or (m.name.endswith(".mixer.k_proj") and bool(m.kv_heads)))


def _whole_floats(m: Module) -> bool:
    """m's float parameters (m.other) are held whole on every TP rank."""
    return (not m.weight and m.role in REPLICATED) or m.whole_bias or m.whole


@dataclass(frozen=True)
class Split:
    quantized: int  # parameters stored in the quantized format
    kept: dict  # role -> parameters the list keeps in the float dtype (linear weights only)
    tensors: int = 0  # quantized weight tensors (each routed expert's own): what per-tensor scales are counted by
    # input rows of the quantized tensors, summed (each expert's own): GPTQ's g_idx holds one int32 a row;
    # None where a quantized module of the table does not give its input width
    input_rows: int | None = 0
    output_rows: int | None = 0  # the same for output rows (bitsandbytes 8-bit's SCB)
    # parameters each TP rank holds whole, in the float dtype: norms, MoE routers (weights.record.REPLICATED),
    # RowParallelLinear biases and the kept weights of modules vLLM builds whole (Module.whole)
    replicated: int = 0
    # decoder layers whose attention k_proj and v_proj are both quantized (ModelOpt stores a KV cache's k_scale and
    # v_scale on them: self_attn's, or Nemotron-H's mixer.k_proj marked with kv_heads, _kv_scale_holder), and the
    # other layers with such a k_proj (no v_proj, or attention kept unquantized), whose KV scales kvplan does not
    # count
    kv_layers: int = 0
    kv_unsure_layers: int = 0
    # quantized parameters of modules vLLM builds whole on every TP rank (Module.whole), stored in the format
    replicated_quantized: int = 0
    # of quantized and tensors, the routed experts' (a format may store them in a format of their own: FP8's
    # store_dtype, configs/quant_bytes.py)
    experts: int = 0
    expert_tensors: int = 0
    # the KV shares vLLM splits by KV head (Module.kv_heads): (KV heads, parameters quantized, parameters kept in
    # the float dtype: biases, and the weights the list keeps, output rows of the quantized ones: their per-row
    # scales and zero points follow the KV heads too)
    kv: tuple[tuple[int, int, int, int], ...] = ()
    # of output_rows, those of row-parallel modules of the family (weights.roles.is_row_parallel) and of modules vLLM
    # builds whole (Module.whole): their per-row scales sit whole on every TP rank (QuantBytes.row_scales_whole)
    whole_output_rows: int | None = 0
    # of output_rows and whole_output_rows, the routed experts' (QuantBytes.expert_scale_bytes replaces their scales)
    expert_output_rows: int | None = 0
    expert_whole_output_rows: int | None = 0
    # routed experts counted once per MoE block (a layer's experts, whatever their projections): the experts whose
    # scales QuantBytes.expert_scale_bytes counts
    expert_blocks: int = 0


def split(modules: list[Module], excluded, quantizes_head: bool, family: str = "",
          routed_experts_only: bool = False) -> Split:
    """The quantized parameters of a module table under a list of unquantized modules (excluded(name) -> bool:
    a quant_exclude.Matcher). Routed experts: the list must name all or none of a layer's experts. family: the
    config's model_type, which decides which modules are row-parallel (weights.roles.is_row_parallel).
    routed_experts_only: every module but the routed experts (Module.experts) is kept, whatever its name."""
    quantized, kept, tensors, rows, outs, whole_quantized, whole_outs = 0, {}, 0, 0, 0, 0, 0
    experts = expert_tensors = 0
    expert_outs, expert_whole_outs, blocks = 0, 0, {}
    replicated = replicated_params(modules)  # less the whole modules' weights the format quantizes, below
    attention = {m.name[: -len(".k_proj")] for m in modules if _kv_scale_holder(m)}
    kv_quantized: dict[str, int] = {}
    kv_shares: dict[int, list[int]] = {}
    for m in modules:
        if not m.weight:
            if m.kv_heads and not m.whole and m.kv_other:  # a float module split by KV head (MiniMax-M2's k_norm)
                kv_shares.setdefault(m.kv_heads, [0, 0, 0])[1] += m.kv_other
            continue
        if m.experts:
            samples = sorted({0, 1, m.experts // 2, m.experts - 1} & set(range(m.experts)))
            hits = {any(excluded(n) for n in m.names(e)) for e in samples}
            if len(hits) > 1:
                raise Unsized(f"the list of unquantized modules names some of the experts of {m.name.split('.experts')[0]}"
                              ", which kvplan's per-module count holds as one block")
            out = hits.pop()
        else:
            out = any(excluded(n) for n in m.names())
        if routed_experts_only and not m.experts:
            out = True
        if m.role == "lm_head" and not quantizes_head:
            out = True
        if m.kv_heads and not m.whole:
            share = kv_shares.setdefault(m.kv_heads, [0, 0, 0])
            share[0 if not out else 1] += m.kv_weight
            share[1] += m.kv_other
            if not out and m.inputs:
                share[2] += m.kv_weight // m.inputs
        if out:
            kept[m.role] = kept.get(m.role, 0) + m.weight
        else:
            quantized += m.weight
            tensors += m.experts or 1
            if m.experts:
                experts += m.weight
                expert_tensors += m.experts
                blocks[m.name.split(".experts")[0]] = m.experts
                expert_outs = expert_outs + m.weight // m.inputs if expert_outs is not None and m.inputs else None
                if is_row_parallel(m.name, family):
                    expert_whole_outs = (expert_whole_outs + m.weight // m.inputs
                                         if expert_whole_outs is not None and m.inputs else None)
            whole_quantized += m.weight if m.whole else m.whole_weight
            if m.name.endswith((".k_proj", ".v_proj")) and m.name[: -len(".k_proj")] in attention:
                kv_quantized[m.name[: -len(".k_proj")]] = kv_quantized.get(m.name[: -len(".k_proj")], 0) + 1
            rows = rows + (m.experts or 1) * m.inputs if rows is not None and m.inputs else None
            outs = outs + m.weight // m.inputs if outs is not None and m.inputs else None
            if m.whole or is_row_parallel(m.name, family):
                whole_outs = whole_outs + m.weight // m.inputs if whole_outs is not None and m.inputs else None
    kv_layers = sum(1 for n in kv_quantized.values() if n == 2)
    return Split(quantized, kept, tensors, rows, outs, replicated - whole_quantized, kv_layers,
                 len(attention) - kv_layers, whole_quantized, experts, expert_tensors,
                 tuple((heads, q, f, r) for heads, (q, f, r) in sorted(kv_shares.items())), whole_outs, expert_outs,
                 expert_whole_outs, sum(blocks.values()))


def quantized_routers(modules: list[Module], hidden: int) -> list[Module]:
    """The table with each MoE router (a `.gate` float module of role router, [experts, hidden]) as a linear weight
    the format quantizes, held whole on every TP rank (a ReplicatedLinear): where the engine builds the router with
    the quantization config (QuantBytes.quantized_router_families, configs/quant_online.py)."""
    return [replace(m, weight=m.other, other=0, inputs=hidden, whole=True)
            if m.role == "router" and not m.weight and m.name.endswith(".gate") and hidden and m.other % hidden == 0
            else m for m in modules]
