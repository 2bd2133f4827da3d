"""Family records of decoder-only text models: one window for all layers or none (the generic rule), and the MHA
families whose attention reads neither num_key_value_heads nor
head_dim (kvplan/configs/families.py joins every row module into FAMILIES)."""

from __future__ import annotations

from . import kinds as K
from . import params
from . import params_decoder, params_dense_special, params_generic, params_moe_more
from .attention import (gqa_from_hidden, jetmoe_dims, mha_from_hidden, mimo_v2_flash_window,
                        mpt_dims, window_plus_one)
from .family import Family
from . import params_classic  # StableLM, ChatGLM, OPT counters
from .markers import (alternate_sliding_first, cohere2_moe_windows, every_period, first_of_four_full, from_max_window_layers, gpt_neo_attention_types,
                      mimo_v2_flash_dims, mimo_v2_flash_kinds, olmo3_windows, pattern_default,
                      qwen2_moe_windows)
from .family_common import (ATTN, ATTN_CHUNKED, GEMMA3_TEXT_DEFAULTS, GPT2_NAMES, FULL_ONLY, CROSS_ATTENTION, KOSMOS_TEXT_NAMES)


GENERIC_RULE_ROWS: list[Family] = [
    # -- decoders with one window for all layers or none (transformers' generic rule)
    Family(("llama",), kinds=ATTN, params=params_generic.attention_decoder,
           nested_defaults={"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
                            "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048},
           rules=("K/V on every layer; sliding_window (when set) on every layer; LlamaConfig defaults fill a "
                  "sparse text_config",)),
    Family(("mixtral", "phi3", "phi4_multimodal", "granite", "olmo2", "starcoder2", "internlm2",
            "phi", "gemma", "glm4_moe", "ministral", "qwen3_vl_text"),
           kinds=ATTN, params=params.by_type,
           rules=("K/V on every layer; sliding_window (when set) on every layer",)),
    # EXAONE 3.0 / 3.5's config.json writes num_layers (its remote ExaoneConfig; transformers 5.25 ExaoneConfig's
    # attribute_map reads it as num_hidden_layers)
    Family(("exaone",), kinds=ATTN, params=params.by_type, aliases={"num_hidden_layers": ("num_layers",)},
           rules=("K/V on every layer; sliding_window (when set) on every layer; num_layers is the layer count",)),
    # decoders whose cache follows transformers' generic rule exactly (layer_types, else sliding_window on
    # every layer, else full), each checked against the cache transformers builds by tests/parity
    Family(("afmoe", "apertus", "apertus1p5_text", "arcee", "aria_text", "beam", "biogpt", "bitnet", "cohere", "cwm",
            "diffllama",
            "ernie4_5", "ernie4_5_moe", "flex_olmo", "flint", "git", "gpt_neox_japanese", "granitemoe",
            "granitemoeshared", "helium", "hrm_text", "hy_v3", "hyperclovax", "iquestcoder", "jais2", "kolibri1",
            "mellum", "modernbert-decoder", "nanochat", "olmo", "olmoe", "phimoe", "seed_oss", "solar_open",
            "vaultgemma", "dots1", "hunyuan_v1_dense", "hunyuan_v1_moe", "nemotron"),
           kinds=ATTN_CHUNKED, params=params.by_type,
           rules=("transformers' generic cache rule (layer_types, else sliding_window on every layer), "
                  "checked against transformers' own cache by tests/parity",)),
    Family(("ergo",), kinds=ATTN, aliases={"sliding_window": ("local_attention_window",)},
           defaults={"sliding_window": 512},
           derive=every_period("global_attention_every_n_layers", 4, hit=K.FULL, miss=K.SLIDING, one_based=True),
           params=params_moe_more.ergo,
           rules=("layer_types; else full every global_attention_every_n_layers-th layer (4), sliding_window (512; "
                  "the checkpoints write local_attention_window) elsewhere",)),
    Family(("minicpm5_moe",), kinds=FULL_ONLY, defaults={"head_dim": 128}, params=params_moe_more.minicpm5_moe,
           rules=("K/V of num_key_value_heads x head_dim on every layer, no window",)),
]

MHA_ROWS: list[Family] = [
    # -- MHA families whose attention reads neither num_key_value_heads nor head_dim
    # gpt-sw3: transformers 5.20 configuration_auto.py maps it to GPT2Config and modeling_auto.py to GPT2LMHeadModel;
    # vLLM 0.33 serves that architecture natively (registry.py GPT2LMHeadModel -> gpt2.py)
    Family(("gpt2", "gpt-sw3"), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden, refuse=(CROSS_ATTENTION,),
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True,
                                         positions="max_position_embeddings"),
           rules=("MHA: n_head heads of n_embd / n_head (gpt-sw3 is GPT2Config with GPT-SW3's tokenizer)",)),
    Family(("gptj", "codegen"), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden,
           params=params_decoder.decoder(mlp="plain", mlp_bias=True, norms=1, head_bias=True, tied=False),
           rules=("MHA: n_head heads of n_embd / n_head",)),
    Family(("ctrl",), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden,
           params=params.by_type, rules=("MHA: n_head heads of n_embd / n_head",)),
    Family(("gpt_neox",), kinds=FULL_ONLY, dims=mha_from_hidden,
           # GPTNeoXAttention: query_key_value and dense biased with attention_bias (default true)
           params=params_decoder.decoder(mlp="plain", qkv_bias=("attention_bias", True),
                                         o_bias=("attention_bias", True), mlp_bias=True, tied=False),
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("opt",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_classic.opt,
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("persimmon",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_classic.persimmon,
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("baichuan",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_generic.attention_decoder,
           aliases={"max_position_embeddings": ("model_max_length",)},
           rules=("MHA (fused W_pack); remote code",)),
    Family(("bloom",), kinds=FULL_ONLY, dims=mha_from_hidden,
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True, embed_norm=True),
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embed",)},
           rules=("MHA with ALiBi: no position limit",)),
    Family(("xglm",), kinds=FULL_ONLY, dims=mha_from_hidden, refuse=(CROSS_ATTENTION,),
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True),
           aliases={"num_hidden_layers": ("num_layers",), "num_attention_heads": ("attention_heads",),
                    "hidden_size": ("d_model",), "intermediate_size": ("ffn_dim",)},
           rules=("MHA: attention_heads heads of d_model / heads",)),
    # Kosmos-2 / Kosmos-2.5 text models (transformers 5.20 configuration_kosmos2.py Kosmos2TextConfig,
    # configuration_kosmos2_5.py Kosmos2_5TextConfig: attribute_map layers / attention_heads / embed_dim)
    Family(("kosmos_2_text_model",), kinds=FULL_ONLY, aliases=KOSMOS_TEXT_NAMES, dims=mha_from_hidden,
           refuse=(CROSS_ATTENTION,),
           defaults={"num_hidden_layers": 24, "num_attention_heads": 32, "hidden_size": 2048,
                     "intermediate_size": 8192, "vocab_size": 65037, "max_position_embeddings": 2048},
           params=params.by_type,  # params_dense.kosmos_2_text
           rules=("MHA: attention_heads heads of embed_dim / attention_heads on every layer (transformers 5.20 "
                  "modeling_kosmos2.py KosmosTextAttention; defaults 24 layers, 32 heads, embed_dim 2048); "
                  "add_cross_attention is refused; parameters: the text model and its head (the vision model and "
                  "image-to-text projection not counted)",)),
    Family(("kosmos_2_5_text_model",), kinds=FULL_ONLY, aliases=KOSMOS_TEXT_NAMES, dims=mha_from_hidden,
           defaults={"num_hidden_layers": 24, "num_attention_heads": 16, "hidden_size": 1536,
                     "intermediate_size": 6144, "vocab_size": 108481, "max_position_embeddings": 4096},
           params=params.by_type,  # params_dense.kosmos_2_text
           rules=("MHA: attention_heads heads of embed_dim / attention_heads on every layer (transformers 5.20 "
                  "modeling_kosmos2_5.py Kosmos2_5TextAttention; defaults 24 layers, 16 heads, embed_dim 1536); "
                  "parameters: the text model and its head (the vision model and image-to-text projection not "
                  "counted)",)),
    Family(("gpt_neo",), kinds=ATTN, dims=mha_from_hidden, derive=gpt_neo_attention_types,
           params=params_decoder.decoder(mlp="plain", o_bias=True, mlp_bias=True, positions="max_position_embeddings"),
           aliases={"num_hidden_layers": ("num_layers",), "num_attention_heads": ("num_heads",),
                    "sliding_window": ("window_size",)},
           defaults={"sliding_window": 256},
           rules=("attention_types: 'global' layers full, 'local' layers keep window_size tokens "
                  "(transformers' cache keeps every token on local layers too: a parity rule)",)),
    Family(("stablelm",), kinds=FULL_ONLY, dims=gqa_from_hidden, params=params_classic.stablelm,
           rules=("GQA; width hidden_size / heads (a head_dim key is not read)",)),
    Family(("mpt",), kinds=FULL_ONLY, dims=mpt_dims,
           params=params_decoder.decoder(mlp="plain", norm_bias=False, inter=(), expansion="expansion_ratio"),
           aliases={"num_hidden_layers": ("n_layers",), "num_attention_heads": ("n_heads",), "hidden_size": ("d_model",),
                    "max_position_embeddings": ("max_seq_len",)},
           rules=("KV heads attn_config.kv_n_heads when set (vLLM), else n_heads; width d_model / n_heads",)),
    Family(("dbrx",), kinds=FULL_ONLY, dims=gqa_from_hidden, params=params_moe_more.dbrx,
           aliases={"num_hidden_layers": ("n_layers",), "num_attention_heads": ("n_heads",), "hidden_size": ("d_model",),
                    "max_position_embeddings": ("max_seq_len",), "num_key_value_heads": ("attn_config.kv_n_heads",)},
           defaults={"num_key_value_heads": 1},
           rules=("KV heads attn_config.kv_n_heads (default 1); width d_model / n_heads",)),
    Family(("jetmoe",), kinds=FULL_ONLY, dims=jetmoe_dims, params=params.by_type,
           aliases={"head_dim": ("kv_channels",)},
           rules=("num_key_value_heads heads of kv_channels; query heads derived from the experts",)),
    # Qwen2Config / Qwen3Config (transformers 5.20): num_key_value_heads defaults to 32 (heads only when given as
    # null), and Qwen3Config's head_dim to 128, which vLLM 0.33's Qwen3Attention reads from the config
    Family(("qwen2",),
           kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults={"num_key_value_heads": 32}, params=params_generic.attention_decoder,
           rules=("sliding_window counts only with use_sliding_window; then layers >= max_window_layers slide",)),
    Family(("qwen3",),
           kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults={"num_key_value_heads": 32, "head_dim": 128}, params=params_generic.attention_decoder,
           rules=("sliding_window counts only with use_sliding_window; then layers >= max_window_layers slide; "
                  "Qwen3Config's head_dim 128 when the config leaves it out",)),
    Family(("qwen2_moe",), kinds=ATTN, window_gate="use_sliding_window", derive=qwen2_moe_windows,
           params=params_generic.attention_decoder,
           rules=("with use_sliding_window: even layers below max_window_layers slide, the rest are full",)),
    Family(("qwen3_moe",), kinds=ATTN, window_gate="use_sliding_window", params=params_generic.attention_decoder,
           rules=("with use_sliding_window every layer slides (max_window_layers is not read)",)),
    Family(("exaone4", "exaone_moe"), kinds=ATTN, markers=("sliding_window_pattern",), derive=pattern_default(4),
           params=params.by_type,
           rules=("sliding_window_pattern (int, or letters L local / G global); no window: all full",)),
    Family(("olmo3",), kinds=ATTN, derive=olmo3_windows, params=params_generic.attention_decoder,
           rules=("layer_types; by default every 4th layer full, the rest sliding",)),
    Family(("gemma2",), kinds=ATTN, derive=alternate_sliding_first, params=params_generic.attention_decoder,
           rules=("even layers slide, odd layers are full",)),
    Family(("gpt_oss",), kinds=ATTN, derive=alternate_sliding_first, params=params_generic.attention_decoder,
           defaults={"attention_bias": True},  # GptOssConfig's default
           rules=("layer_types; even layers slide (window 128), odd layers are full",)),
    Family(("gemma3_text",), kinds=ATTN, defaults=GEMMA3_TEXT_DEFAULTS, markers=("sliding_window_pattern",),
           derive=pattern_default(6), params=params_generic.attention_decoder,
           rules=("layer i is full when (i + 1) % sliding_window_pattern == 0 (default 6), else sliding",
                  "a config naming Rnj1ForCausalLM is read by vLLM 0.33's rnj1.py rule instead (BY_ARCHITECTURE: "
                  "only chunked_attention layers keep a window)")),
    # Gemma3nTextConfig's num_kv_shared_layers defaults to 15 (transformers 5.25 configuration_gemma3n.py)
    Family(("gemma3n_text",), kinds=ATTN, derive=pattern_default(5), params=params_dense_special.gemma3n,
           defaults={"num_kv_shared_layers": 15},
           rules=("full every 5th layer; the last num_kv_shared_layers reuse an earlier layer's cache",)),
    Family(("cohere2_moe",), kinds=ATTN, derive=cohere2_moe_windows, params=params.by_type,
           defaults={"head_dim": 128, "sliding_window": 4096}, window=window_plus_one,
           rules=("layer_types; else the first first_k_dense_replace layers by prefix_dense_sliding_window_pattern "
                  "(default 1: full), the rest full when (i + 1) % sliding_window_pattern == 0 (default 4); "
                  "head_dim 128 and sliding_window 4096 by default; a sliding layer keeps sliding_window + 1 tokens "
                  "(vLLM 0.33 cohere2_moe.py Cohere2MoeAttention)",)),
    *(Family((name,), kinds=ATTN, derive=first_of_four_full, params=params.by_type,  # granite_swa's sinks
             defaults={"sliding_window": 128, **kv},
             rules=("layer_types; else layer i full when i % 4 == 0, the rest sliding (sliding_window 128 by "
                    f"default); KV heads {kv_text} by default (the attention sink is a weight, not cached)",))
      for name, kv, kv_text in (("granite_swa", {"num_key_value_heads": 4}, "4"),
                                ("granitemoe_swa", {}, "= query heads"))),
    Family(("mimo_v2_flash", "mimo_v2"), kinds=ATTN, derive=mimo_v2_flash_kinds, per_layer=mimo_v2_flash_dims,
           window=mimo_v2_flash_window, params=params.by_type, aliases={"value_head_dim": ("v_head_dim",)},
           defaults={"num_key_value_heads": 4, "head_dim": 192, "value_head_dim": 128, "sliding_window": 129},
           rules=("layer_types; else layer 0 and every 6th layer full, the rest sliding; sliding layers keep "
                  "2 x num_key_value_heads; K head_dim (192) and V v_head_dim (128) wide; window "
                  "sliding_window_size + 1 when given, else sliding_window (129); mimo_v2 (MiMo-V2.x, remote code) "
                  "as vLLM 0.34 mimo_v2.py reads it: hybrid_layer_pattern (1 sliding) and swa_num_key_value_heads",)),
    Family(("laguna",), kinds=ATTN, derive=lambda f, n: [K.FULL] * n, params=params.by_type,
           defaults={"num_key_value_heads": 8, "head_dim": 128, "sliding_window": 512},
           rules=("layer_types (absent: every layer full); sliding layers keep sliding_window (512 by default); "
                  "num_attention_heads_per_layer varies the query heads only: K/V num_key_value_heads (8) x "
                  "head_dim (128) on every layer",)),
    Family(("cohere2",), kinds=ATTN, markers=("sliding_window_pattern",), derive=pattern_default(4),
           # Cohere2Attention: q/k/v/o_proj biased with attention_bias (transformers 5.25 modeling_cohere2.py)
           params=params_decoder.decoder(norm_bias=False, norms=1, qkv_bias=("attention_bias", False),
                                         o_bias=("attention_bias", False)), window=window_plus_one,
           rules=("layer i is full when (i + 1) % sliding_window_pattern == 0; a sliding layer keeps sliding_window "
                  "+ 1 tokens (vLLM 0.33 commandr.py CohereAttention: it sees [pos - sliding_window, pos])",)),
    # Cohere Compass (North Vision): vLLM 0.34 cohere_compass.py CohereCompassForConditionalGeneration (0.30+) builds
    # its own attention, Attention(per_layer_sliding_window=sliding_window) on 'sliding_attention' layers: no +1 as
    # commandr.py's; transformers 5.25 CohereCompassTextConfig.__post_init__ fills layer_types with full_attention
    # (its sliding_window_pattern branch never runs) and sets head_dim = hidden_size // heads whatever the file says
    Family(("cohere_compass",), text="cohere_compass_text",
           rules=("Cohere Compass: the text model in text_config (cohere_compass_text by default); the vision tower "
                  "and its deepstack features keep no cache",)),
    Family(("cohere_compass_text",), kinds=ATTN, derive=lambda f, n: [K.FULL] * n, dims=gqa_from_hidden,
           params=params_decoder.decoder(qkv_bias=("attention_bias", False), o_bias=("attention_bias", False),
                                         norm_bias=False, norms=1),
           rules=("layer_types (absent: every layer full, sliding_window_pattern is not read); a sliding layer "
                  "keeps sliding_window tokens (4096 by default); K/V of num_key_value_heads (default: the heads) x "
                  "hidden_size / heads (a head_dim key is overwritten); parameters: the text model with its LM "
                  "head tied, as vLLM 0.34 builds it (CohereCompassForCausalLM asserts tie_word_embeddings)",)),
]
