"""openPangu-Ultra-MoE (model_type pangu_ultra_moe) as vLLM 0.33 serves it: PanguUltraMoEForCausalLM in
vllm/model_executor/models/openpangu.py (OpenPanguMoEModel, OpenPanguDecoderLayer).

What vLLM caches: OpenPanguDecoderLayer picks its attention from the config. With qk_nope_head_dim,
qk_rope_head_dim, v_head_dim and kv_lora_rank all present it builds OpenPanguMLAAttention (vLLM's
MultiHeadLatentAttentionWrapper: an MLAAttentionSpec of one latent of kv_lora_rank + qk_rope_head_dim per token
and layer, and param_sink_number is then not read). Without them it would build OpenPanguSinkAttention when
param_sink_number > 0 (StaticSinkAttention: K of qk_nope_dim + qk_rope_dim, V of v_channels, and
param_sink_number sink tokens kept in fixed blocks of a SinkFullAttentionSpec) or else the dense model's
OpenPanguEmbeddedAttention. kvplan reads the MLA layout only and refuses the others under this model_type.

The remote OpenPanguMoEConfig names its fields attention_kv_lora_dim, attention_qk_rope_dim, num_routed_experts,
num_dense_layers ...; vLLM 0.33 reads none of those (it reads kv_lora_rank, n_routed_experts,
first_k_dense_replace ...), so a config that carries only the remote names is refused rather than translated.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import embeddings, gated_mlp

MLA_FIELDS = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank")


def ultra_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """Every layer is one MLA layer (no window); configs without vLLM's four MLA fields are refused by name."""
    missing = [name for name in MLA_FIELDS if not f.has(name)]
    if not missing:
        return kinds
    if (f.get("param_sink_number") or 0) > 0:
        raise ConfigError(f"{f.source}: no {', '.join(missing)} but param_sink_number {f.get('param_sink_number')}: "
                          "vLLM 0.33 builds openPangu's sink attention (OpenPanguSinkAttention: K and V of different "
                          "widths, the sink tokens in fixed blocks of a SinkFullAttentionSpec), which kvplan cannot "
                          f"size yet (model_type {f.model_type!r})", "this layout is not supported yet")
    remote = [name for name in ("attention_kv_lora_dim", "attention_qk_rope_dim") if f.has(name)]
    why = (f" (it writes the remote OpenPanguMoEConfig's {', '.join(remote)}, which vLLM 0.33 does not read)"
           if remote else "")
    raise ConfigError(f"{f.source}: config has no {', '.join(missing)}{why}: vLLM 0.33's openpangu.py builds MLA "
                      f"only from those fields (model_type {f.model_type!r})",
                      "add them (--set-new kv_lora_rank=512 ...) as the checkpoint's vLLM config writes them")


def ultra_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """PanguUltraMoEForCausalLM's modules (vLLM 0.33 openpangu.py):
    - OpenPanguMLAAttention: fused_qkv_a_proj (hidden -> q_lora_rank + kv_lora_rank + qk_rope_head_dim),
      q_a_layernorm, q_b_proj (q_lora_rank -> heads x (nope + rope)) -- or q_proj and kv_a_proj_with_mqa without
      q_lora_rank --, kv_a_layernorm, kv_b_proj (kv_lora_rank -> heads x (nope + v)), o_proj; no biases.
    - layer i >= first_k_dense_replace (with n_routed_experts): OpenPanguMoE: router (GateLinear hidden ->
      experts, no bias; an e_score_correction_bias of one value an expert with router_enable_expert_bias),
      n_routed_experts experts of gate/up/down at moe_intermediate_size, and one shared MLP of
      moe_intermediate_size x n_shared_experts (when n_shared_experts is not None); else OpenPanguMLP at
      intermediate_size (biased with mlp_bias).
    - RMSNorms: two a layer, two more with sandwich_norm; a final norm; the head unless tie_word_embeddings
      (OpenPanguMoEConfig: False). The num_nextn_predict_layers MTP layers are skipped by the loader."""
    hidden = f.int("hidden_size")
    heads = f.int("num_attention_heads")
    nope, rope, v_dim = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim"), f.int("v_head_dim")
    rank = f.int("kv_lora_rank")
    q_lora = f.opt_int("q_lora_rank")
    if q_lora:
        q = hidden * q_lora + q_lora + q_lora * heads * (nope + rope)
    else:
        q = hidden * heads * (nope + rope)
    attn = q + hidden * (rank + rope) + rank + rank * heads * (nope + v_dim) + heads * v_dim * hidden
    norms = hidden * (4 if f.flag("sandwich_norm") else 2)
    experts = f.opt_int("n_routed_experts")
    dense = gated_mlp(hidden, f.int("intermediate_size", maximum=10**8), bias=f.flag("mlp_bias"))
    total = active = embeddings(f, hidden, tied_default=False) + hidden
    first_dense = f.int("first_k_dense_replace", minimum=0) if experts else len(layers)
    for i in range(len(layers)):
        if i < first_dense:
            total += attn + norms + dense
            active += attn + norms + dense
            continue
        inter = f.int("moe_intermediate_size", maximum=10**8)
        top_k = f.int("num_experts_per_tok", maximum=experts)
        router = hidden * experts + (experts if f.flag("router_enable_expert_bias") else 0)
        shared_n = f.get("n_shared_experts")
        shared = gated_mlp(hidden, inter * f.int("n_shared_experts")) if shared_n is not None else 0
        total += attn + norms + router + shared + experts * gated_mlp(hidden, inter)
        active += attn + norms + router + shared + top_k * gated_mlp(hidden, inter)
    return total, active
