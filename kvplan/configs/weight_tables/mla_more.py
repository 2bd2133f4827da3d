"""Per-module parameter tables (configs/weight_tables/__init__.py) of more latent-attention decoders: Sarvam-MLA
(sarvam_mla), Mistral Small 4's text model (mistral4) and Youtu-LLM (youtu), named as their checkpoints' safetensors
are and each mirroring its family's counter term by term (params.count_latent_params for sarvam_mla and mistral4,
params_mla.youtu).

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params), for all three: the MLA latent
down-projections q_a_proj and kv_a_proj_with_mqa (as _mla_widths marks them), every RMSNorm, the MoE router and its
e_score_correction_bias, and o_proj's bias where attention_bias gives one (RowParallelLinear). Where it comes from:
- sarvam_mla: vLLM 0.34 sarvam.py SarvamMLAAttention builds q_a_proj and kv_a_proj_with_mqa as ReplicatedLinear,
  q_b_proj / q_proj and kv_b_proj as ColumnParallelLinear, o_proj as RowParallelLinear; SarvamMLAMoE the router as
  GateLinear with e_score_correction_bias an nn.Parameter (moe_router_enable_expert_bias, default true), the
  experts as FusedMoE and shared_experts as a split SarvamMLAMLP. Its checkpoints name the modules as DeepSeek-V3's
  (transformers 5.25 runs the type as DeepseekV3ForCausalLM: models/auto/modeling_auto.py), so the type uses
  DeepSeek-V3's table (weight_tables._latent) as it is.
- youtu: vLLM 0.34 registers no YoutuForCausalLM, so model_executor/models/registry.py resolve_model_cls falls
  back to the Transformers modeling backend, where transformers/base.py _recursive_replace hands each MLA attention
  to fusers/mla.py MLAFuser: q_a_proj and kv_a_proj_with_mqa fused into a MergedColumnParallelLinear with
  disable_tp=True (kv_a_proj_with_mqa alone "replicate", a ReplicatedLinear, without a query LoRA), q_b_proj /
  q_proj and kv_b_proj colwise, o_proj rowwise: DeepSeek-V2's layout. configuration_youtu.py's base_model_tp_plan
  splits the mlp; the RMSNorms become vLLM's RMSNorm (whole).
- mistral4 (Mistral Small 4's text model, in a Mistral3ForConditionalGeneration): vLLM 0.34 has no model of its own
  for the Hugging Face form. mistral3.py builds the text model from text_config (init_vllm_registered_model), and
  config/vllm.py with_hf_config names its class only from MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, which in transformers
  5.25 does not list mistral4 (Mistral4ForCausalLM is registered as a pretraining and image-text-to-text class
  only), so what vLLM runs depends on the architectures the checkpoint's text_config writes (kvplan does not read
  that as known). The table follows what vLLM 0.34 builds for the same modules from the same checkpoint's
  Mistral-format params.json (configs/mistral_params.py: MistralLarge3ForCausalLM, a DeepseekV3ForCausalLM:
  deepseek_v2.py DeepseekV2MLAAttention, as _mla_widths says) and what the Transformers backend's MLAFuser would
  build; not read as served.
"""

from __future__ import annotations

from ..fields import Fields
from . import Module, _ends, _float, _latent, _mla_widths, _mlp


def mistral4(f: Fields, layers: list, dims) -> list[Module]:
    """Mistral4ForCausalLM (transformers 5.25 modeling_mistral4.py: Mistral4Attention is DeepSeek-V2's MLA,
    Mistral4MoE the routed experts, the router mlp.gate (Mistral4TopkRouter, no e_score_correction_bias) and
    shared_experts of moe_intermediate_size x n_shared_experts; a dense Mistral4MLP below first_k_dense_replace):
    DeepSeek-V3's table without the router's score bias, which params._moe leaves out for this type too."""
    return [m for m in _latent(f, layers, dims) if not m.name.endswith(".gate.e_score_correction_bias")]


def youtu(f: Fields, layers: list, dims) -> list[Module]:
    """YoutuForCausalLM (transformers 5.25 modeling_youtu.py YoutuAttention, YoutuMLP) with params_mla.youtu's
    defaults (YoutuConfig's): DeepSeek-V2's MLA modules (q_proj without a q_lora_rank, else q_a_proj,
    q_a_layernorm, q_b_proj; kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj), a dense gated mlp, two norms a layer; embeddings, final norm, the head tied
    unless tie_word_embeddings is false."""
    from ..params_mla import _opt_rank

    hidden, heads = f.int("hidden_size", default=2048), f.int("num_attention_heads", default=16)
    q_lora = _opt_rank(f, "q_lora_rank", 1536)
    widths = (f.int("kv_lora_rank", default=512), f.int("qk_rope_head_dim", default=64),
              f.int("qk_nope_head_dim", default=128), f.int("v_head_dim", default=128))
    bias = f.flag("attention_bias")
    inter = f.int("intermediate_size", default=6144, minimum=0)
    out = _ends(f, hidden, True, 128256)
    for i in range(len(layers)):
        out += _mla_widths(f"layers.{i}.self_attn", hidden, heads, q_lora, bias, *widths)
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


MLA_MORE = {"sarvam_mla": _latent, "mistral4": mistral4, "youtu": youtu}
