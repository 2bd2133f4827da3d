"""Family records whose KV heads follow a rule of their own, and the latent-attention (MLA) families
(kvplan/configs/families.py joins them)."""

from __future__ import annotations

from . import kinds as K
from . import bailing, compressed, deepseek_moe, k2_horizon, openpangu, params, pooled_sparse, shared_compressed
from . import params_decoder, params_generic, params_linear_mixers, params_mla_more
from .attention import (chatglm_kv_heads, decompressed_latent_dims, falcon_kv_heads, gqa_from_hidden,
                        multi_query_kv_heads)
from .family import Family
from . import sarvam
from . import params_classic  # StableLM, ChatGLM, OPT counters
from . import vllm34_text  # vLLM 0.34's new text architectures
from .hybrid import (kda_state, lightning_state)
from .markers import (bailing_kinds, dots3_dsa, dots3_kinds, dots3_layer_dims, glm_dsa_indexers, hy_v4_indexers,
                      kimi_default, mistral_large4_indexers, mistral_large4_rope)
from .family_common import (SARVAM_NAMES, ATTN, FULL_ONLY, longcat_layers)


ROWS: list[Family] = [
    # -- other KV-head rules
    Family(("falcon",), kinds=FULL_ONLY, kv_rule=falcon_kv_heads, params=params.by_type,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",)},
           rules=("KV heads: num_kv_heads only with new_decoder_architecture; multi_query means 1",)),
    Family(("gpt_bigcode",), kinds=FULL_ONLY, kv_rule=multi_query_kv_heads, params=params_decoder.bigcode,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embd",),
                    "max_position_embeddings": ("n_positions",), "intermediate_size": ("n_inner",)},
           rules=("multi_query (default true): one KV head",)),
    Family(("chatglm",), kinds=FULL_ONLY, kv_rule=chatglm_kv_heads, params=params_classic.chatglm,
           refuse=(("pre_seq_len", "P-tuning prefix tokens on every layer"),),
           aliases={"num_hidden_layers": ("num_layers",), "head_dim": ("kv_channels",),
                    "intermediate_size": ("ffn_hidden_size",), "vocab_size": ("padded_vocab_size",),
                    "max_position_embeddings": ("seq_length",)},
           rules=("KV heads = multi_query_group_num when multi_query_attention; head width kv_channels",)),
    Family(("phi3small",), kinds=FULL_ONLY, params=params_classic.phi3small,
           aliases={"intermediate_size": ("ff_intermediate_size",), "rope_theta": ("rope_embedding_base",)},
           rules=("Phi-3-small (remote code; SGLang 0.5.23 phi3_small.py): RadixAttention on every layer, the "
                  "blocksparse ones too: K/V of num_key_value_heads x hidden_size / heads on every layer",)),
    # -- latent attention (MLA)
    Family(("deepseek_v2", "deepseek_v3", "kimi_k2", "mistral4"), kinds=FULL_ONLY, attention="latent",
           params=params_generic.latent, rules=("one latent of kv_lora_rank + qk_rope_head_dim per token and layer",)),
    Family(("deepseek",), kinds=ATTN, dims=gqa_from_hidden, params=deepseek_moe.params,
           refuse=(("rswa_window", "vLLM 0.33's DeepseekAttention then builds RSWAAttention, which kvplan does not "
                                   "size"),),
           rules=("vLLM 0.33 deepseek_v2.py DeepseekAttention (DeepSeek-MoE, model_type deepseek: no MLA): K/V of "
                  "num_key_value_heads x hidden_size / num_attention_heads on every layer",)),
    Family(("pangu_ultra_moe",), kinds=FULL_ONLY, attention="latent", refine=openpangu.ultra_kinds,
           params=openpangu.ultra_params,
           rules=("vLLM 0.33 openpangu.py OpenPanguMLAAttention (PanguUltraMoEForCausalLM): one latent of "
                  "kv_lora_rank + qk_rope_head_dim per token and layer (MLAAttentionSpec), no window; a config "
                  "without kv_lora_rank / qk_nope_head_dim / qk_rope_head_dim / v_head_dim is refused (vLLM "
                  "would build sink or plain attention instead)",)),
    Family(("sarvam_mla",), kinds=FULL_ONLY, attention="latent", params=params_generic.latent, aliases=SARVAM_NAMES,
           rules=("DeepSeek-V3's MLA (transformers runs it as DeepseekV3ForCausalLM): one latent of kv_lora_rank + "
                  "qk_rope_head_dim per token and layer; the original configs' num_experts / num_shared_experts "
                  "are read as n_routed_experts / n_shared_experts",)),
    Family(("param2moe",), kinds=ATTN, params=params_generic.attention_decoder, aliases=SARVAM_NAMES,
           rules=("GLM-4-MoE's model (GQA K/V on every layer); Sarvam's original num_experts / num_shared_experts "
                  "are read as n_routed_experts / n_shared_experts",)),
    Family(("sarvam_moe",), kinds=FULL_ONLY, dims=sarvam.dims, params=bailing.moe_params, defaults=sarvam.DEFAULTS,
           aliases=sarvam.NAMES,
           rules=("vLLM 0.33 sarvam.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoeForCausalLM: K/V of "
                  "num_key_value_heads x head_dim on every layer (BailingAttention); defaults from the checkpoint's "
                  "remote SarvamMoEConfig (sarvamai/mlx-lm configuration_sarvam_moe.py), num_attention_heads and "
                  "head_dim required (transformers' later SarvamMoeConfig defaults them differently); parameters "
                  "as BailingMoeForCausalLM builds them: fused query_key_value, query / key norms (LayerNorm with "
                  "a bias unless use_rmsnorm), the router's expert_bias, one shared expert of moe_intermediate_size "
                  "x num_shared_experts",)),
    Family(("youtu", "axk1"), kinds=FULL_ONLY, attention="latent", params=params.by_type,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64},
           rules=("one latent of kv_lora_rank (512) + qk_rope_head_dim (64) per token and layer",)),
    Family(("deepseek_v32",), kinds=frozenset({K.INDEXED}), attention="latent", params=params_generic.latent,
           derive=lambda f, n: [K.INDEXED] * n,
           rules=("MLA latent plus indexer keys (index_head_dim, fp8 + fp32 scale per 128) on every layer",)),
    Family(("deepseek_v4",), kinds=frozenset({K.SLIDING, K.CSA, K.HCA}), attention="compressed",
           markers=("compress_ratios",), derive=compressed.default_kinds, trailing="num_nextn_predict_layers",
           defaults=compressed.DEFAULTS, params=params_mla_more.deepseek_v4,
           weight_format=compressed.weight_format,
           rules=("one shared K/V head (head_dim, rope in its last qk_rope_head_dim columns) for the newest "
                  "sliding_window tokens on every layer; compressed sparse layers (compress_ratios 4) add one "
                  "entry per 4 tokens plus indexer keys (index_head_dim) per entry and read index_topk of them; "
                  "heavily compressed layers (128) add one entry per 128 tokens, all read; compressor state "
                  "float32 as vLLM keeps it; the MTP layer is not cached",)),
    Family(("deepseek_v41",), text="deepseek_v41_text", rules=("text model in text_config",)),
    Family(("deepseek_v41_text",), kinds=frozenset({K.SLIDING, K.CSA}), attention="compressed",
           derive=shared_compressed.kinds, layers=shared_compressed.layers, defaults=shared_compressed.DEFAULTS,
           params=params_mla_more.deepseek_v41, weight_format=shared_compressed.weight_format,
           notes=shared_compressed.engram_note,
           rules=("one shared K/V head (head_dim) for the newest sliding_window tokens on every layer; "
                  "compress_ratios 1 or 2: the KV sources (kv_source_layer_ids) store one entry per 1 or 2 tokens "
                  "and its index keys (index_head_dim), the later layers read the newest source's entries and "
                  "store only their window; a step reads index_topk entries, and index sources "
                  "(index_source_layer_ids) every index key of their source; ratio-2 sources keep the open group "
                  "(2 rows of kv and score, float32); the MTP layers are not cached",)),
    Family(("axk2",), kinds=frozenset({K.INDEXED}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n,
           defaults={"kv_lora_rank": 128, "qk_rope_head_dim": 32, "index_head_dim": 128},
           rules=("as deepseek_v32: MLA latent (kv_lora_rank 128 + qk_rope_head_dim 32 by default) plus indexer "
                  "keys (index_head_dim 128, fp8 + fp32 scale per 128) on every layer",)),
    Family(("glm4_moe_lite",), kinds=FULL_ONLY, attention="latent", params=params.by_type,
           rules=("one latent of kv_lora_rank + qk_rope_head_dim per token and layer (head_dim is not a width)",)),
    Family(("glm_moe_dsa",), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n, refine=glm_dsa_indexers,
           rules=("MLA latent on every layer; indexer keys only on layers whose indexer_types is 'full'",)),
    Family(("hy_v4", "hy_v4_vl_text"), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent",
           params=params_mla_more.hy_v4,
           derive=lambda f, n: [K.INDEXED] * n, refine=hy_v4_indexers,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("MLA latent on every layer; indexer keys only where indexer_types is 'full' (absent: layer 0 "
                  "and every layer with (i - 1) % 4 == 0)",)),
    Family(("mistral_large4",), text="mistral_large4_text", rules=("text model in text_config",)),
    Family(("mistral_large4_text",), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n, refine=mistral_large4_indexers, per_layer=mistral_large4_rope,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("as glm_moe_dsa: MLA latent on every layer, indexer keys where indexer_types is 'full'; NoPE "
                  "layers (no_rope_layers 0, else every 4th) cache the latent without the rope key; KV sharing "
                  "between layers (kv_source_layers) is refused",)),
    Family(("dots3_note",), text="dots3_note_text", rules=("text model in text_config, or flat",)),
    Family(("dots3_note_text",), kinds=frozenset({K.INDEXED, K.FULL, K.SLIDING}), attention="latent",
           params=params.by_type, derive=dots3_kinds, refine=dots3_dsa, per_layer=dots3_layer_dims,
           window=lambda f: f.opt_int("sliding_window") or f.int("sliding_window_size", default=512),
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("MLA on every layer: DSA layers (latent + indexer keys; 'full_attention' with use_dsa) where "
                  "i < 2 or i % 4 == 1, sliding-window latents (sliding_window, else sliding_window_size 512) "
                  "elsewhere, their own kv_lora_rank / qk_rope_head_dim (per_layer_config, else swa_* fields)",)),
    Family(("longcat_flash",), kinds=FULL_ONLY, attention="latent", params=params.by_type, layers_rule=longcat_layers,
           aliases={"intermediate_size": ("ffn_hidden_size",), "moe_intermediate_size": ("expert_ffn_hidden_size",),
                    "num_experts_per_tok": ("moe_topk",)},
           rules=("two MLA sublayers per decoder layer: 2 x num_layers latent caches",)),
    Family(("minicpm3",), kinds=FULL_ONLY, dims=decompressed_latent_dims, params=params_mla_more.minicpm3,
           rules=("vLLM decompresses the latent: K and V of heads x (qk_nope + qk_rope) per token "
                  "(transformers caches the 288-wide latent: a parity rule)",)),
    Family(("glm5_next",), text="glm5_next_text", rules=("GLM-5-Next: its text model in text_config",)),
    Family(("glm5_next_text",), kinds=frozenset({K.LINEAR, K.INDEXED}), attention="latent",
           derive=pooled_sparse.require_layer_types, layers=pooled_sparse.layers, state=kda_state,
           params=params_linear_mixers.glm5_next,
           rules=("layer_types: linear_attention = Kimi Delta Attention (conv in the model dtype, float32 "
                  "heads x head_dim^2 state, from linear_attn_config); deepseek_sparse_attention = an MLA latent "
                  "(kv_lora_rank + qk_rope_head_dim) per token, one fp8 index key (index_head_dim + an fp32 scale) "
                  "per index_kpool tokens, and a ring of the unfinished pool (kpool rows of 2 x index_head_dim, "
                  "bf16), as vLLM 0.33 keeps them; a step reads the top index_topk / kpool pools",)),
    Family(("kimi_k3",), text="kimi_linear", rules=("Kimi K3: its text model (kimi_linear) in text_config",)),
    Family(("alice_ai",), kinds=frozenset({K.FULL, K.LINEAR}), state=kda_state, aliases=k2_horizon.ALICE_NAMES,
           refine=k2_horizon.alice_kinds, params=k2_horizon.alice_params,
           rules=("vLLM 0.33 alice_ai.py: layer_types (which vLLM requires): full_attention is Qwen3NextAttention, K/V "
                  "of num_key_value_heads x head_dim; linear_attention is Kimi Delta Attention, a conv of "
                  "(linear_conv_kernel_dim - 1) x 3 x linear_num_key_heads x linear_key_head_dim and an fp32 state "
                  "of heads x head_dim x head_dim; parameters: Qwen3NextAttention, KDA, the MoE and the attention-residual "
                  "projections and norms (k2_horizon.alice_params)",)),
    Family(("k2_horizon",), kinds=ATTN, params=k2_horizon.k2_horizon_params, defaults=k2_horizon.K2_HORIZON_DEFAULTS,
           window_gate="use_sliding_window",
           rules=("vLLM 0.33 k2_horizon.py K2HorizonAttention / K2HorizonMoVAAttention: K/V of num_key_value_heads "
                  "(8) x head_dim (64: vLLM reads config.head_dim, K2HorizonConfig's default when absent) on every "
                  "layer, no per-layer window (sliding_window on every layer only with use_sliding_window, which "
                  "K2HorizonConfig.__post_init__ requires); parameters with MoVA value experts, MoE and shared "
                  "experts (k2_horizon.k2_horizon_params)",)),
    Family(("kimi_linear",), kinds=frozenset({K.FULL, K.LINEAR}), attention="latent", state=kda_state,
           markers=("linear_attn_config.full_attn_layers",), derive=kimi_default, params=params.by_type,
           aliases={"max_position_embeddings": ("model_max_length",)},
           refuse=(("dsa_config", vllm34_text.KIMI_DSA_REFUSED),),
           rules=("MLA latent on full_attn_layers (1-based), KDA state (conv + fp32 recurrent) on kda_layers",)),
    Family(("bailing_hybrid",), kinds=frozenset({K.FULL, K.LINEAR}), attention="latent", state=bailing.hybrid_state,
           derive=bailing_kinds, params=bailing.hybrid_params, layers_rule=bailing.hybrid_layer_count,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64}, nested_defaults=bailing.V3_VL_TEXT_DEFAULTS,
           rules=("layer_types; else full when (i + 1) % layer_group_size == 0 (6; 5 for BailingMoeV2_5ForCausalLM), "
                  "and on Ling 3.0 (BailingMoeV3ForCausalLM) the n % layer_group_size trailing layers: MLA latent "
                  "(kv_lora_rank + qk_rope_head_dim); the rest, on Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM, vLLM "
                  "0.33 bailing_moe_linear.py), lightning attention: heads x head_dim^2 in the model dtype, no conv; "
                  "else (Ling 3.0, or no architecture) Kimi Delta Attention: conv (short_conv_kernel_size - 1) x 3 x "
                  "heads x linear_head_dim, fp32 state heads x linear_head_dim^2 (linear_head_dim = head_dim, 128)",)),
    Family(("bailing_moe_v3_vl",), text="bailing_hybrid",
           rules=("Ling 3.0 VL (BailingMoeV3VLForConditionalGeneration, vLLM 0.33 bailing_moe_v3_vl.py): its text "
                  "model (BailingMoeV3TextConfig, built as BailingMoeV3ForCausalLM) in text_config",)),
    Family(("bailing_moe",), kinds=FULL_ONLY, dims=bailing.moe_dims, layers_rule=bailing.layer_count,
           params=bailing.moe_params, notes=bailing.window_note,
           rules=("Ling / Ring 1.x and 2.0 (BailingMoeForCausalLM, BailingMoeV2ForCausalLM; vLLM 0.33 "
                  "bailing_moe.py BailingAttention): K/V of num_key_value_heads x head_dim (else hidden / heads) on "
                  "every layer, no window (BailingMoeConfig's use_sliding_window is false); partial rotary and qk "
                  "norm change no cache; the MTP layers (num_nextn_predict_layers) are not built",)),
    Family(("minimax", "minimax_m1", "minimax_text_01"), kinds=frozenset({K.FULL, K.LINEAR}), state=lightning_state,
           markers=("attn_type_list",), derive=lambda f, n: [K.FULL if i % 2 == 0 else K.LINEAR for i in range(n)],
           params=params_linear_mixers.minimax,
           rules=("layer_types or attn_type_list (1 softmax, 0 lightning); lightning keeps heads x head_dim^2",)),
]
