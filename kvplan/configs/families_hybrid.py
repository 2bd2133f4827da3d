"""Family records of hybrid and recurrent models: Mamba, Mamba-2, linear attention, DeltaNet, RG-LRU, RWKV and the
other fixed states beside attention (kvplan/configs/families.py joins them)."""

from __future__ import annotations

from . import kinds as K
from . import looped, params, qsa
from . import params_linear_mixers, params_ssm
from .attention import zamba_dims
from .family import Family
from . import zaya_layout
from .hybrid import (gated_deltanet_state, inkling_conv_state, inkling_mtp, mamba1_state, mamba2_state,
                     nemotron_h_mtp_attention, olmo_hybrid_state, rwkv_state, short_conv_state, zaya_cca_state)
from .markers import (every_period, inkling2_kinds, inkling_dims, inkling_kinds, lfm2_kinds, lfm3_kinds,
                      olmo_hybrid_default, zamba2_default, zamba_default)
from .family_common import (MAMBA_HYBRID, MAMBA2_MIXER_DEFAULTS, marker_layers)


ROWS: list[Family] = [
    # -- hybrids and recurrent models
    Family(("qwen3_next",), kinds=MAMBA_HYBRID, state=gated_deltanet_state, params=params_ssm.hybrid,
           derive=every_period("full_attention_interval", 4, hit=K.FULL, one_based=True),
           rules=("full attention when (i + 1) % full_attention_interval == 0, else Gated DeltaNet state",)),
    Family(("lara_mini",), kinds=frozenset({K.LINEAR, K.SLIDING, K.FULL}),
           state=lambda f: gated_deltanet_state(f, fp32_state=True), params=params_linear_mixers.lara_mini,
           derive=lambda f, n: [(K.LINEAR, K.SLIDING, K.LINEAR, K.FULL, K.SLIDING)[i % 5] for i in range(n)],
           defaults={"sliding_window": 512, "head_dim": 128, "tie_word_embeddings": True},
           rules=("layer_types; else linear, sliding, linear, full, sliding repeated. Linear layers keep a Gated "
                  "DeltaNet state (conv in the model dtype, the recurrent state in float32, as transformers' kernels "
                  "keep it); sliding layers sliding_window tokens (512); full layers (NoPE) every token",)),
    Family(("jamba",), kinds=frozenset({K.FULL, K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           derive=every_period("attn_layer_period", 8, "attn_layer_offset", 4),
           rules=("attention (always full: JambaConfig reads no sliding_window) when "
                  "i % attn_layer_period == attn_layer_offset, else Mamba state",)),
    Family(("qwen4_exp", "qwen3_8_flash_next"), text="qwen4_exp_text",
           rules=("Qwen4-Exp (Qwen3.8-Flash-Next): its text model in text_config",)),
    Family(("qwen4_exp_text", "qwen3_8_flash_next_text"), kinds=frozenset({K.LINEAR, K.FULL, K.INDEXED}),
           derive=every_period("full_attention_interval", 4, hit=K.INDEXED, one_based=True),
           layers=qsa.layers, state=gated_deltanet_state, params=params_linear_mixers.qwen4_exp,
           rules=("layer_types; else indexed (QSA) every full_attention_interval-th layer (4), Gated DeltaNet "
                  "state elsewhere. QSA: K/V of num_key_value_heads x head_dim per token, one bf16 index key of "
                  "indexer_head_dim per indexer_compress_ratio tokens and a per-request ring of the open group's "
                  "raw keys (+ MRoPE positions), as vLLM 0.33 and 0.34 keep them; a step reads the tokens of the top "
                  "indexer_budget / ratio groups plus the open group. ple_layer_ids (one-based) add the PLE's "
                  "short conv (hc_count x hidden_size channels, (ple_conv_kernel_size - 1) x ngram_size rows), "
                  "whole on every TP rank",)),
    Family(("qwen3_5", "qwen3_5_moe"), text="qwen3_5_text", rules=("text model in text_config",)),
    Family(("qwen3_5_text", "qwen3_5_moe_text"), kinds=MAMBA_HYBRID, state=gated_deltanet_state,
           params=params_linear_mixers.qwen3_5,
           derive=every_period("full_attention_interval", 4, hit=K.FULL, one_based=True),
           nested_defaults={"num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 256, "hidden_size": 4096, "linear_conv_kernel_dim": 4,
                            "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                            "linear_num_value_heads": 32},
           rules=("layer_types; full every full_attention_interval-th layer, Gated DeltaNet state elsewhere "
                  "(its SSM dtype from mamba_ssm_dtype)",)),
    Family(("lfm2", "lfm2_moe"), kinds=frozenset({K.FULL, K.CONV}), conv=short_conv_state, derive=lfm2_kinds,
           params=params_linear_mixers.lfm2,
           rules=("layer_types 'conv' / 'full_attention', or full_attn_idxs; conv layers keep a short-conv "
                  "state of (conv_L_cache - 1) x hidden_size",)),
    Family(("lfm3",), kinds=frozenset({K.FULL, K.SLIDING, K.CONV}), conv=short_conv_state, derive=lfm3_kinds,
           params=params.by_type,
           defaults={"num_key_value_heads": 4, "head_dim": 128, "sliding_window": 256, "conv_L_cache": 7},
           rules=("layer_types 'conv' / 'sliding_attention' / 'full_attention'; absent: full when i % 4 == 2, "
                  "sliding (256) when i % 4 == 0 and i > 0, else conv; conv layers keep (conv_L_cache - 1) x "
                  "hidden_size (conv_L_cache 7 by default)",)),
    Family(("olmo_hybrid",), kinds=MAMBA_HYBRID, state=olmo_hybrid_state, derive=olmo_hybrid_default,
           params=params.by_type,
           rules=("layer_types; by default full attention where i % 4 == 3, Gated DeltaNet (fp32 state) elsewhere",)),
    Family(("zamba",), kinds=frozenset({K.LINEAR, K.HYBRID}), state=mamba1_state, dims=zamba_dims,
           markers=("layers_block_type",), derive=zamba_default, params=params_ssm.zamba,
           aliases={"head_dim": ("attention_head_dim",)},
           rules=("a Mamba state on every layer; 'hybrid' layers also keep K/V of the shared attention block "
                  "(each its own cache), heads attention_head_dim = 2 x hidden / heads wide",)),
    Family(("zamba2",), kinds=frozenset({K.LINEAR, K.HYBRID}), state=lambda f: mamba2_state(f, "mamba_"),
           dims=zamba_dims, markers=("layers_block_type",), derive=zamba2_default, params=params_ssm.zamba2,
           aliases={"head_dim": ("attention_head_dim",), "mamba_n_heads": ("n_mamba_heads",),
                    "mamba_d_head": ("mamba_headdim",), "mamba_n_groups": ("mamba_ngroups",)},
           defaults={"mamba_d_head": "auto", "n_mamba_heads": 8, "mamba_d_state": 64, "mamba_d_conv": 4,
                     "mamba_expand": 2},
           rules=("a Mamba-2 state on every layer; 'hybrid' layers also keep K/V of a shared transformer "
                  "block (each its own cache)",)),
    Family(("zaya",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), state=zaya_cca_state,
           derive=lambda f, n: [K.HYBRID] * n, params=params.by_type, layers_rule=zaya_layout.zaya_layers,
           dims=zaya_layout.zaya_head_dims, notes=zaya_layout.zaya_notes,
           defaults={"num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2},
           rules=("layer_types 'hybrid' / 'hybrid_sliding' (absent: all 'hybrid'): K/V of num_key_value_heads x "
                  "head_dim (full, or sliding_window) plus the CCA state: (cca_time0 - 1) + (cca_time1 - 1) conv "
                  "columns of (heads + KV heads) x head_dim and the delayed value half, KV heads x head_dim / 2",
                  "Megatron-style configs (zaya_layers, as ZAYA1-base): one full-attention layer per 'a' entry "
                  "(MoE half-layers cache nothing), heads the first non-zero cca_num_q_heads, KV heads the first "
                  "non-zero num_query_groups_list, head_dim kv_channels (SGLang 0.5.23's ZayaConfig); swa_layers "
                  "refused; parameters not counted",)),
    Family(("inkling_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           mtp=inkling_mtp,
           derive=inkling_kinds, per_layer=inkling_dims, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 16, "swa_head_dim": 128,
                     "sliding_window": 512, "conv_kernel_size": 4},
           rules=("layer_types 'hybrid' / 'hybrid_sliding' (else local_layer_ids, else sliding when (i + 1) % 6 "
                  "!= 0): K/V of num_key_value_heads x head_dim, or on sliding layers swa_num_key_value_heads x "
                  "swa_head_dim over sliding_window_size tokens; plus four short-conv states (K, V and twice "
                  "hidden_size), conv_kernel_size - 1 columns each",)),
    Family(("inkling2_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           derive=inkling2_kinds, per_layer=inkling_dims, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 8, "swa_head_dim": 128,
                     "sliding_window": 1024, "conv_kernel_size": 4},
           rules=("as inkling_text (K/V plus four short-conv states a layer; the full layers' K/V convolutions "
                  "are dynamic, the same state); absent layer_types: 'hybrid' when (i + 1) % 6 == 0, else "
                  "'hybrid_sliding' over sliding_window_size (1024) tokens",)),
    Family(("inkling2_loop_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           derive=inkling2_kinds, per_layer=inkling_dims, repeat=looped.inkling2_passes, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 8, "swa_head_dim": 128,
                     "sliding_window": 1024, "conv_kernel_size": 4},
           rules=("as inkling2_text, and layers [loop_layer_index_start, loop_layer_index_end) (6, 18) run "
                  "loop_num_passes (3) times, each pass with its own K/V and conv states",)),
    Family(("inkling2_loop",), text="inkling2_loop_text", rules=("text model in text_config",)),
    Family(("rwkv",), kinds=frozenset({K.LINEAR}), state=rwkv_state, derive=lambda f, n: [K.LINEAR] * n,
           aliases={"max_position_embeddings": ("context_length",)}, params=params_ssm.rwkv,
           rules=("no KV cache: per layer two token-shift vectors (model dtype) and the WKV numerator, "
                  "denominator and max (float32)",)),
    Family(("falcon_mamba",), kinds=frozenset({K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           aliases={"mamba_d_inner": ("intermediate_size",), "mamba_expand": ("expand",)},
           derive=lambda f, n: [K.LINEAR] * n,
           rules=("a Mamba state on every layer; d_inner = intermediate_size when set (not expand x hidden)",)),
    Family(("falcon_h1",), kinds=frozenset({K.HYBRID}), state=lambda f: mamba2_state(f, "mamba_"),
           params=params_ssm.hybrid, derive=lambda f, n: [K.HYBRID] * n,
           rules=("every layer keeps attention K/V and a Mamba-2 state side by side",)),
    Family(("nemotron_h",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"), params=params.by_type,
           markers=("layers_block_type", "hybrid_override_pattern"),
           layers_rule=marker_layers("layer_types", "layers_block_type", "hybrid_override_pattern"),
           defaults={"head_dim": 128, "mamba_ssm_cache_dtype": "float32"}, mtp_attention=nemotron_h_mtp_attention,
           rules=("layers_block_type (or the older hybrid_override_pattern: M Mamba-2, * attention, - MLP, E MoE); "
                  "NemotronHConfig's default SSM cache dtype is float32",)),
    Family(("granitemoehybrid",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"),
           params=params_ssm.granite_hybrid,
           derive=lambda f, n: [K.LINEAR] * n, defaults=MAMBA2_MIXER_DEFAULTS,
           rules=("layer_types 'mamba' / 'attention'; absent: every layer Mamba-2",)),
    Family(("bamba",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"), params=params_ssm.bamba,
           markers=("attn_layer_indices",), derive=lambda f, n: [K.LINEAR] * n, defaults=MAMBA2_MIXER_DEFAULTS,
           rules=("attention on attn_layer_indices, Mamba-2 elsewhere",)),
    Family(("mamba",), kinds=frozenset({K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           aliases={"mamba_d_inner": ("intermediate_size",), "mamba_expand": ("expand",)},
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba state on every layer",)),
    Family(("mamba2",), kinds=frozenset({K.LINEAR}), state=lambda f: mamba2_state(f, ""), params=params_ssm.hybrid,
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba-2 state on every layer",)),
]
