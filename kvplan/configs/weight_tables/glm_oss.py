"""Per-module parameter tables (configs/weight_tables/__init__.py) of GLM-4.5 / 4.6 / 4.7 (glm4_moe), GLM-4.7-Flash
(glm4_moe_lite) and gpt-oss (gpt_oss), named as their checkpoints' safetensors are (`model.layers.N...`,
`lm_head`). Each mirrors its counter term by term: params_generic.count_params (glm4_moe, gpt_oss) and
params_mla.glm4_moe_lite. The multi-token-prediction layers (num_nextn_predict_layers) are not in them, as the
counters leave them out.

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params): the RMSNorms (layernorm.py
RMSNorm, q_norm / k_norm included), the routers (GLM's mlp.gate and its e_score_correction_bias, gpt-oss's
mlp.router weight and bias: GateLinear, a ReplicatedLinear), gpt-oss's o_proj bias (oss_attention: a
RowParallelLinear with bias=True) and GLM-4.7-Flash's latent down-projections (deepseek_v2.py's MLA attention,
which glm4_moe_lite.py builds). gpt-oss's attention sinks are split with the heads (gpt_oss.py OAIAttention:
make_attention_sink(num_attention_heads // tp_size)), its experts' biases with the experts.
"""

from __future__ import annotations

from ..fields import Fields
from . import Module, _ends, _float, _mla_widths, _norms_and_ffn, _qkvo
from ..param_parts import dense_first, mlp_layer_types


# -- GLM-4.5 / 4.6 / 4.7 (params_generic.count_params) -----------------------------------------------------------------

def glm4_moe(f: Fields, layers: list, dims) -> list[Module]:
    """Glm4MoeForCausalLM (transformers 5.25 modeling_glm4_moe.py Glm4MoeAttention / Glm4MoeMoE; vLLM 0.34
    glm4_moe.py): per layer q/k/v_proj with a bias under attention_bias, o_proj never biased (nn.Linear
    bias=False; vLLM's RowParallelLinear bias=False), q_norm and k_norm of head_dim under use_qk_norm, two norms;
    from first_k_dense_replace (every moe_layer_freq-th) the routed experts, mlp.gate (weight [E, hidden]) and
    mlp.gate.e_score_correction_bias [E], and mlp.shared_experts of n_shared_experts x moe_intermediate_size;
    the other layers a dense mlp of intermediate_size."""
    from ..params_generic import _is_moe_layer

    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    bias = f.flag("attention_bias")
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    # params_generic._moe: no e_score_correction_bias where a config names a topk_method other than noaux_tc
    score_bias = f.raw.get("topk_method", "noaux_tc") == "noaux_tc"
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias, o_bias=False)
        if f.flag("use_qk_norm"):
            out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        sparse = bool(experts) and _is_moe_layer(f, i)
        moe_inter = f.int("moe_intermediate_size", "intermediate_size") if sparse else 0
        shared = f.int("n_shared_experts", default=0, minimum=0) * moe_inter if sparse else 0
        out += _norms_and_ffn(i, hidden, sparse, experts, moe_inter, shared, inter, score_bias)
    return out


# -- GLM-4.7-Flash (params_mla.glm4_moe_lite) ------------------------------------------------------------------

def glm4_moe_lite(f: Fields, layers: list, dims) -> list[Module]:
    """Glm4MoeLiteForCausalLM (transformers 5.25 modeling_glm4_moe_lite.py; vLLM 0.34 glm4_moe_lite.py, whose
    attention is deepseek_v2.py's DeepseekV2MLAAttention / DeepseekV2Attention): DeepSeek's MLA modules (q_proj
    where q_lora_rank is null, else q_a_proj, q_a_layernorm, q_b_proj; attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj), two norms, and by mlp_layer_types (else layer 0 dense) a dense mlp or the
    routed experts, mlp.gate, its e_score_correction_bias and mlp.shared_experts, with params_mla's defaults."""
    from .. import params_mla as M

    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=20)
    q_lora = M._opt_rank(f, "q_lora_rank", 768)
    widths = (f.int("kv_lora_rank", default=512), M._int(f, "head_dim", "qk_rope_head_dim", default=64),
              f.int("qk_nope_head_dim", default=192), f.int("v_head_dim", default=256))
    bias = f.flag("attention_bias")
    inter = f.int("intermediate_size", default=10240, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=1536, minimum=0)
    experts = M._experts(f, 64)
    shared = moe_inter * f.int("n_shared_experts", default=1, minimum=0)
    out = _ends(f, hidden, False, 154880)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), dense_first(1))):
        out += _mla_widths(f"layers.{i}.self_attn", hidden, heads, q_lora, bias, *widths)
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, shared, inter)
    return out


# -- gpt-oss (params_generic.count_params) -----------------------------------------------------------------------------

def gpt_oss(f: Fields, layers: list, dims) -> list[Module]:
    """GptOssForCausalLM (transformers 5.25 modeling_gpt_oss.py GptOssAttention / GptOssExperts /
    GptOssTopKRouter; vLLM 0.34 gpt_oss.py): per layer q/k/v/o_proj (biases under attention_bias, o_proj's held
    whole: a RowParallelLinear), self_attn.sinks (one a head), two norms, mlp.router (weight [E, hidden] and
    bias [E]) and the experts as the checkpoints store them, all of a layer's in one tensor each:
    mlp.experts.gate_up_proj [E, hidden, 2 x intermediate] with gate_up_proj_bias [E, 2 x intermediate] and
    mlp.experts.down_proj [E, intermediate, hidden] with down_proj_bias [E, hidden] (MXFP4: _blocks and
    _scales in place of each weight). Every layer is MoE, as the counter has it."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size", "n_embd")
    inter = f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)
    bias = f.flag("attention_bias")
    experts = f.int("num_local_experts")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias)
        out += [_float(f"{a}.sinks", heads, "attention"),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"{m}.router", hidden * experts + experts, "router"),
                Module(f"{m}.experts.gate_up_proj", experts * hidden * 2 * inter, experts * 2 * inter, "experts",
                       experts, inputs=hidden),
                Module(f"{m}.experts.down_proj", experts * inter * hidden, experts * hidden, "experts", experts,
                       inputs=inter)]
    return out


TABLES = {"glm4_moe": glm4_moe, "glm4_moe_lite": glm4_moe_lite, "gpt_oss": gpt_oss}
