"""Family records of Llama-like decoders vLLM serves through remote-code configs (configs/remote_decoders.py: heads,
widths, parameters); kvplan/configs/families.py joins them after families_decoders' generic-rule rows."""

from __future__ import annotations

from . import kinds as K
from . import (audio_wrappers, domyn_edge, kolibri, looped, nemotron_nas, params, remote_decoders, step5,
               vl_wrappers, vla_wrappers)
from . import params_dense_special, params_generic, params_moe_more
from .attention import (gqa_from_hidden, step3_kv_heads)
from .family import Family
from .keye import KEYE_VL1_5_TEXT_DEFAULTS
from . import params_step  # Muse Spark's and Step-3.5's counters
from .params_moondream import moondream3_params
from .markers import (from_max_window_layers, smollm3_windows)
from .family_common import (ATTN, FULL_ONLY)


ROWS: list[Family] = [
    # -- Llama-like decoders vLLM 0.33 serves through remote-code configs (remote_decoders.py: heads, widths, parameters)
    Family(("minicpm",), kinds=ATTN, dims=remote_decoders.minicpm_dims, params=remote_decoders.minicpm_params,
           notes=remote_decoders.minicpm_notes,
           rules=("vLLM 0.33 minicpm.py MiniCPMAttention: K/V of num_key_value_heads (absent: num_attention_heads, "
                  "the remote MiniCPMConfig) x hidden_size / num_attention_heads (head_dim is not read) on every "
                  "layer; sliding_window, when set, on every layer (vLLM's cache_config); MiniCPM4's sparse_config "
                  "(InfLLM v2) is not read by vLLM: every token is cached",)),
    Family(("mimo",), kinds=ATTN, dims=gqa_from_hidden, window_gate="use_sliding_window", refine=remote_decoders.mimo_kinds,
           params=remote_decoders.mimo_params,
           rules=("vLLM 0.33 mimo.py (Qwen2Model): K/V of num_key_value_heads x hidden_size / num_attention_heads "
                  "on every layer; MiMoConfig (a Qwen2Config) drops sliding_window unless use_sliding_window, and "
                  "then vLLM slides every layer (max_window_layers below the layer count is refused, as vLLM "
                  "asserts); the num_nextn_predict_layers MTP layers are not loaded or cached",)),
    Family(("telechat",), kinds=ATTN, aliases=remote_decoders.TELECHAT_NAMES, kv_rule=remote_decoders.telechat_kv_heads,
           params=remote_decoders.telechat_params,
           refuse=(("num_moe_experts", "a TeleChat MoE variant: vLLM 0.33's TeleChat2ForCausalLM builds dense MLPs "
                                       "only"),),
           rules=("vLLM 0.33 telechat2.py (LlamaModel with n_layer, n_head, ffn_hidden_size): K/V of "
                  "num_key_value_heads (which the config must give: Telechat2Config keeps it None otherwise) x "
                  "head_dim (else hidden_size / n_head) on every layer; layer_types / sliding_window as Llama",)),
    Family(("orion",), kinds=ATTN, dims=gqa_from_hidden, params=remote_decoders.orion_params,
           rules=("vLLM 0.33 orion.py: K/V of num_key_value_heads x hidden_size / num_attention_heads on every "
                  "layer (sliding_window, when set, on every layer)",)),
    Family(("qwen",), kinds=FULL_ONLY, dims=remote_decoders.qwen_dims, params=remote_decoders.qwen_params,
           rules=("Qwen (1), remote QWenConfig, as SGLang 0.5.23 qwen.py serves it (vLLM until 0.23): K/V of "
                  "num_attention_heads x hidden_size / num_attention_heads on every layer, no window (kv_channels, "
                  "use_dynamic_ntk and use_logn_attn change no cache; use_cache_quantization is not read)",)),
    Family(("solar",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 solar.py: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every "
                  "layer (sliding_window, when set, on every layer); the bskcn_* skip connections cache nothing",)),
    Family(("telechat3",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 registers TeleChat3ForCausalLM as LlamaForCausalLM (llama.py): Llama's cache rule "
                  "(layer_types, else sliding_window on every layer); its telechat3-yarn rope is read as yarn",)),
    Family(("teleflm",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 teleflm.py (LlamaForCausalLM): Llama's cache rule (layer_types, else sliding_window on "
                  "every layer); the muP fields scale the logits only",)),
    Family(("PanguEmbedded",), kinds=ATTN, derive=remote_decoders.pangu_embedded_kinds, window=remote_decoders.pangu_embedded_window,
           params=remote_decoders.pangu_embedded_params,
           refuse=(("param_sink_number", "openPangu's sink attention (StaticSinkAttention, K and V of different "
                                         "widths plus static sink tokens) is not read yet"),
                   ("kv_lora_rank", "openPangu's MLA attention is not read under this model_type")),
           rules=("vLLM 0.33 openpangu.py OpenPanguEmbeddedAttention: K/V of num_key_value_heads x head_dim (else "
                  "hidden_size / heads) on every layer; layer i slides over interleaved_sliding_window[i % len] (an "
                  "int: every layer; a null entry: full), else sliding_window on every layer; sink-attention and "
                  "MLA configs are refused",)),
    Family(("domynedge",), kinds=ATTN, derive=domyn_edge.kinds, window=domyn_edge.window,
           per_layer=domyn_edge.per_layer, params=domyn_edge.params, defaults=domyn_edge.DEFAULTS,
           rules=("vLLM 0.33 domyn_edge.py DomynEdgeAttention (model_type from DomynEdgeConfig): K/V of "
                  "num_key_value_heads (8) x layer i's head_dim (per_layer_config[i].head_dim, else head_sizes[i]: "
                  "256 on NoPE layers, 64 on RoPE layers by default) on every layer; layer i slides over "
                  "window_sizes[i][0] + 1 tokens when that is above 0 (1,025 by default; vLLM adds the query "
                  "itself), else full; parameters: sandwich RMSNorms, k_norm, Qwen2MLP (domyn_edge.params)",)),
    Family(("plamo3",), kinds=ATTN, derive=remote_decoders.plamo3_kinds, window=remote_decoders.plamo3_window,
           params=remote_decoders.plamo3_params, defaults=remote_decoders.PLAMO3_DEFAULTS,
           rules=("vLLM 0.33 plamo3.py: K/V of num_key_value_heads (4) x head_dim (128) on every layer; layer i full "
                  "when (i + 1) % sliding_window_pattern == 0 (8), else sliding over window_size (2048) tokens "
                  "(Plamo3Config's interleaved_sliding_window; a saved list is read as written)",)),
    Family(("step1",), kinds=ATTN, dims=remote_decoders.step1_dims, params=remote_decoders.step1_params,
           defaults={"num_attention_groups": 8}, aliases={"max_position_embeddings": ("max_seq_len",)},
           refuse=(("use_moe", "vLLM 0.33's Step1ForCausalLM builds dense MLPs only"),),
           rules=("vLLM 0.33 step1.py StepAttention: K/V of num_attention_groups (StepConfig: 8) x hidden_size / "
                  "num_attention_heads on every layer, ALiBi positions (sliding_window, when set, on every "
                  "layer)",)),
    Family(("dory",), kinds=frozenset({K.FULL, K.SLIDING, K.NONE}), derive=looped.default_kinds, layers=looped.layers,
           defaults={"head_dim": 256, "sliding_window": 1024, "num_key_value_heads": 4},
           params=params_dense_special.dory,
           rules=("layer_types (released configs interleave 'mlp' blocks); else sliding, sliding, sliding, full "
                  "repeated. The n_recurrent_layers after n_input_layers run n_recurrent_loops times: per_loop "
                  "(default) keeps a cache per loop, last_loop one cache read by every loop",)),
    Family(("kolibri1_1",), kinds=frozenset({K.SLIDING, K.INDEXED}), derive=kolibri.default_kinds,
           layers=kolibri.layers, params=params_moe_more.kolibri1_1, defaults={"sliding_window": 513, "head_dim": 128},
           rules=("layer_types; else every 5th layer indexed_attention, the rest sliding (sliding_window 513). "
                  "indexed_attention here is plain NoPE K/V of every token (no latent, no index keys), shared by "
                  "the layers kv_source_layers points at an earlier one; a step attends to index_topk + local + "
                  "sink tokens (2,184)",)),
    Family(("iquestloopcoder",), kinds=FULL_ONLY, dims=gqa_from_hidden, repeat=looped.iquest_loops,
           params=params_dense_special.iquest_loop,
           rules=("the stack runs loop_num (2) times: loop 0 keeps K/V of every token (num_key_value_heads x "
                  "hidden / heads), each later loop its own K/V over loop_window_size (64) tokens and reads loop 0's",)),
    Family(("step3_vl",), text="step3_text", rules=("Step-3: its text model in text_config",)),
    Family(("step3_text",), kinds=FULL_ONLY, kv_rule=step3_kv_heads, defaults={"head_dim": 256},
           aliases={"max_position_embeddings": ("max_position_embedding", "max_seq_len")},
           rules=("multi-matrix factorization attention: K/V of one head of head_dim (256) on every layer, as "
                  "vLLM 0.33's Step3TextForCausalLM keeps it",)),
    Family(("step5_vl",), text="step5", rules=("Step-5: its text model in text_config",)),
    Family(("step5",), kinds=frozenset({K.FULL, K.SLIDING}), derive=step5.default_kinds, layers=step5.layers,
           trailing="num_nextn_predict_layers", params=params_step.step5,
           rules=("layer_types (else even layers sliding); K/V of num_attention_groups x head_dim, sliding over "
                  "sliding_window; the full_attention layers are DSA: one 256-B FP8 region summary per 8 tokens and "
                  "a per-request ring of the open region's 7 index rows (bf16), as vLLM 0.33 keeps them; a step "
                  "reads the top sparse_config.topk regions plus the open one",)),
    Family(("nemotron-nas",), kinds=frozenset({K.FULL, K.NONE}), derive=nemotron_nas.kinds, dims=nemotron_nas.dims,
           per_layer=nemotron_nas.layer_dims, params=params_dense_special.nemotron_nas, notes=nemotron_nas.notes,
           refuse=(("layer_types", "neither the remote code nor vLLM reads it: block_configs gives each layer"),),
           rules=("block_configs, one a layer (DeciLMForCausalLM's remote code, vLLM's nemotron_nas.py): K/V of "
                  "num_attention_heads // n_heads_in_group heads x head_dim (else hidden / heads) on every "
                  "attention that is neither no_op nor replace_with_linear, nothing elsewhere; a window_length, "
                  "attention sinks or a block field block_config.py lacks are refused; --engine vllm and sglang refuse "
                  "linear replacements, which neither builds",)),
    Family(("doge",), kinds=ATTN, params=params.by_type,
           rules=("K/V of every token on every layer (sliding_window, when set, on every layer); keep_window_size "
                  "only picks which cached keys a query attends to (dynamic mask attention), it evicts nothing",)),
    Family(("smollm3",), kinds=ATTN, window_gate="use_sliding_window", derive=smollm3_windows,
           params=params_generic.attention_decoder,
           rules=("with use_sliding_window the NoPE layers (every no_rope_layer_interval-th) slide",)),
    Family(("fuyu",), text="persimmon", rules=("text model (persimmon) in text_config, or flat",)),
    # image-text wrappers: the text model in text_config is read by its own family (its model_type, or the
    # wrapper's default below); image tokens are ordinary cached tokens
    *(Family((name,), text=text, rules=(f"text model in text_config ({text} by default)",)) for name, text in (
        ("aya_vision", "cohere2"), ("cohere2_vision", "cohere2"), ("blip-2", "opt"), ("instructblip", "opt"),
        ("instructblipvideo", "opt"), ("cosmos3_omni", "qwen3_vl_text"), ("deepseek_vl", "llama"),
        ("deepseek_vl_hybrid", "llama"), ("idefics3", "llama"), ("janus", "llama"), ("llava_next_video", "llama"),
        ("perception_lm", "llama"), ("smolvlm", "llama"), ("video_llava", "llama"), ("vipllava", "llama"),
        ("fast_vlm", "qwen2"), ("internvl", "qwen2"), ("ovis2", "qwen2"), ("pp_chart2table", "qwen2"),
        ("video_llama_3", "qwen2"), ("idefics2", "mistral"), ("kimi_k25", "deepseek_v3"),
        ("lighton_ocr", "qwen3"), ("qianfan_ocr", "qwen3"), ("nemotron_h_omni", "nemotron_h"),
        ("paligemma", "gemma"), ("shieldgemma2", "gemma3_text"), ("exaone4_5", "exaone4"), ("lfm2_vl", "lfm2"),
        ("lfm3_vl", "lfm3"), ("hyperclovax_vision_v2", "hyperclovax"), ("inkling_mm_model", "inkling_text"),
        ("got_ocr2", "qwen2"), ("moss_transcribe_diarize", "qwen3"), ("emu3", "emu3_text_model"),
        ("inkling2", "inkling2_text"), ("llava_onevision1_5", "qwen3"), ("ovis2_5", "qwen3"),
        ("hy_v4_vl", "hy_v4_vl_text"), ("apertus1p5", "apertus1p5_text"),
        ("minicpm_ocr", "qwen3_5_text"), ("minicpmv4_6", "qwen3_5_text"), ("minicpmv4_7", "qwen3_5_text"))),
    # image/audio-text wrappers vLLM 0.33 serves through its own or remote-code configs (configs/vl_wrappers.py);
    # as for every wrapper, the parameters counted are the text model's: vision/audio towers and projectors are not
    Family(("kimi_vl",), text="deepseek_v2", text_rule=vl_wrappers.nested_only("text_config", "kimi_vl", "deepseek_v2"),
           rules=("Kimi-VL: text model in text_config, a DeepseekV2Config (vLLM 0.33 configs/kimi_vl.py; kimi_vl.py "
                  "builds DeepseekV2ForCausalLM): one MLA latent of kv_lora_rank + qk_rope_head_dim per token and "
                  "layer; parameters: the text model only; the weights add MoonViT and its projector "
                  "(configs/vision_towers.py)",)),
    Family(("deepseek_vl_v2",), text="deepseek_v2", text_key="language_config", text_rule=vl_wrappers.deepseek_vl2_text,
           rules=("DeepSeek-VL2: text model in language_config, a DeepseekV2Config (vLLM 0.33 configs/deepseek_vl2.py "
                  "DeepseekVLV2TextConfig): one MLA latent of kv_lora_rank + qk_rope_head_dim per token and layer; "
                  "qk_nope_head_dim and qk_rope_head_dim both 0 (DeepSeek-OCR, DeepseekOCRForCausalLM: vLLM 0.33 "
                  "deepseek_v2.py use_mha, DeepseekAttention) is read as deepseek: K/V of num_key_value_heads x "
                  "hidden_size / num_attention_heads on every layer (DeepSeek-VL2-Tiny: use_mla false, both qk dims 0, "
                  "as in DeepSeek-OCR's); kv_lora_rank null with nonzero qk dims is refused (DeepseekV2Attention "
                  "cannot build kv_a_proj_with_mqa with a null rank, so vLLM 0.33 does not load it); parameters: "
                  "the text model only (SigLIP or SAM + CLIP towers and projector not counted)",)),
    # vision-language(-action) wrappers vLLM 0.33 serves through its own config classes (configs/vla_wrappers.py)
    Family(("openvla",), text="llama", text_rule=vl_wrappers.fixed_text("llama", "text_config", "openvla"),
           rules=("OpenVLA (vLLM 0.33 configs/openvla.py OpenVLAConfig): text_config is always read as a LlamaConfig "
                  "(its model_type is not consulted; LlamaConfig's defaults fill the sparse text_config the "
                  "checkpoints ship), openvla.py builds it with init_vllm_registered_model: K/V of "
                  "num_key_value_heads (absent: num_attention_heads) x head_dim (else hidden_size / heads) on every "
                  "layer; a config without text_config is refused (the class would run LlamaConfig's defaults); "
                  "parameters: the Llama text model only (DINOv2 + SigLIP towers and projector not counted)",)),
    Family(("moondream3",), kinds=FULL_ONLY, aliases=vla_wrappers.MOONDREAM3_NAMES,
           defaults=vla_wrappers.MOONDREAM3_DEFAULTS, dims=vla_wrappers.moondream3_dims, params=moondream3_params,
           rules=("Moondream 3 (HfMoondream, Moondream3ForCausalLM; vLLM 0.33 configs/moondream3.py Moondream3Config): "
                  "the text model is config.text with Moondream's names (n_layers 24, dim 2048, n_heads 32, "
                  "n_kv_heads 32 by default); moondream3.py Moondream3Attention keeps K/V of n_kv_heads x dim / "
                  "n_heads on every layer, no window (prefix_attn only masks the image prefix bidirectionally); "
                  "parameters: the text model as moondream3.py builds it (params_moondream.py: MoE from "
                  "config.text.moe start_layer 4, n_experts 64, n_experts_per_tok 8, expert_inner_dim 1024 by "
                  "default; vision encoder and projection not counted)",)),
    Family(("alpamayo2_super",), text="qwen3_vl", text_key="vlm_config",
           text_rule=vl_wrappers.fixed_text("qwen3_vl", "vlm_config", "alpamayo2_super"),
           rules=("Alpamayo 2 Super (vLLM 0.33 configs/alpamayo2_super.py Alpamayo2SuperConfig, a Qwen3VLConfig): "
                  "vlm_config is a Qwen3-VL config whose text_config (qwen3_vl_text) is the model vLLM caches "
                  "(alpamayo2_super.py, a Qwen3VLForConditionalGeneration); the trajectory expert is not built; a "
                  "config without vlm_config is refused; parameters: the text model only (vision tower and "
                  "expert not counted)",)),
    # llm_config wrappers (remote code): no default text model (their config classes need llm_config); vLLM 0.33
    # renames llm_config to text_config (transformers_utils/config.py _CONFIG_ATTRS_MAPPING) and builds that model
    *(Family((name,), text_key="llm_config",
             rules=(f"{who}: text model in llm_config, read by its model_type's family ({texts}); vLLM 0.33 "
                    f"{where} builds it from text_config (renamed from llm_config); parameters: the text model "
                    + (f"only ({tower} not counted)" if name not in ("internvl_chat", "NVLM_D", "h2ovl_chat", "skywork_chat") else
                       f"only; the weights add {tower} (configs/vision_towers.py)"),))
      for name, who, texts, where, tower in (
          ("internvl_chat", "InternVL 1.5/2/2.5/3 (InternVLChatConfig)", "qwen2, llama, internlm2, phi3, qwen3 ...",
           "internvl.py InternVLChatModel", "InternViT and mlp1"),
          ("NVLM_D", "NVLM-D (NVLM_D_Config)", "qwen2", "nvlm_d.py NVLM_D_Model (an InternVLChatModel)",
           "InternViT and mlp1"),
          ("h2ovl_chat", "H2OVL Mississippi (H2OVLChatConfig, an InternVLChatConfig)", "llama ...",
           "h2ovl.py H2OVLChatModel (an InternVLChatModel)", "InternViT and mlp1"),
          ("skywork_chat", "Skywork-R1V (SkyworkChatConfig)", "qwen2 ...", "skyworkr1v.py SkyworkR1VChatModel",
           "InternViT and mlp1"),
          ("Llama_Nemotron_Nano_VL", "Llama Nemotron Nano VL", "llama", "nemotron_vl.py LlamaNemotronVLChatModel",
           "RADIO tower and mlp1"),
          ("NemotronH_Nano_VL_V2", "Nemotron Nano VL V2", "nemotron_h", "nano_nemotron_vl.py NemotronH_Nano_VL_V2",
           "RADIO tower and projector"),
          # registry.py maps the three Omni V3 architectures to the same NemotronH_Nano_VL_V2 class; its Parakeet
          # sound encoder (parakeet.py ProjectedParakeet) runs outside the KV pool
          *((name, f"Nemotron {size} Omni V3", "nemotron_h", "nano_nemotron_vl.py NemotronH_Nano_VL_V2",
             "RADIO tower, Parakeet sound encoder and projectors")
            for name, size in (("NemotronH_Nano_Omni_Reasoning_V3", "3 Nano"),
                               ("NemotronH_Super_Omni_Reasoning_V3", "3 Super"),
                               ("NemotronH_Omni_Reasoning_V3", "3"))),
          # vLLM's own OvisConfig (transformers_utils/configs/ovis.py) builds text_config from llm_config by its
          # model_type (AutoConfig.for_model) and ovis.py Ovis builds config.get_text_config()
          ("ovis", "Ovis 1.6/2 (vLLM 0.33 configs/ovis.py OvisConfig)", "gemma2, llama, qwen2 ...", "ovis.py Ovis",
           "visual tokenizer and its embedding table"))),
    Family(("ultravox",), text="llama", text_rule=vl_wrappers.ultravox_text,
           rules=("Ultravox: text model in text_config (llama by default), which vLLM 0.33 ultravox.py builds "
                  "(UltravoxConfig.wrapped_model_config); a text_model_id makes vLLM read that repository's config "
                  "instead, so such a file is refused with the id to plan; parameters: the text model only "
                  "(Whisper encoder and projector not counted)",)),
    Family(("minicpmv",), text="llama", text_rule=vl_wrappers.minicpmv_text,
           rules=("MiniCPM-V (remote code, saved flat): its version picks the text model vLLM 0.33 builds "
                  "(minicpmv.py): 2.0 minicpm, 2.5 and 4.0 llama, 2.6 qwen2, 4.5 qwen3; no version: 2.0 when "
                  "hidden_size 2304 and query_num 64, else 2.5; the flat fields are read by that family; "
                  "parameters: the text model only (the weights add the SigLIP tower and resampler from 2.5 on: "
                  "configs/vision_towers.py), with the text model's "
                  "modules (Qwen2's q/k/v biases for 2.6, Qwen3's q/k norms for 4.5)",)),
    Family(("phi3_v",), kinds=ATTN, params=params_generic.attention_decoder,
           rules=("Phi-3/3.5-vision (remote code, saved flat): vLLM 0.33 phi3v.py runs the text model as "
                  "LlamaForCausalLM: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every "
                  "layer; without layer_types its attention takes the model-level sliding_window "
                  "(cache_config.sliding_window, layers/attention/attention.py) on every layer; parameters: the "
                  "text model only; the weights add the CLIP tower and projection (configs/vision_towers.py)",)),
    Family(("molmo",), kinds=ATTN, dims=gqa_from_hidden,
           rules=("Molmo (remote code, saved flat): vLLM 0.33 molmo.py MolmoAttention keeps K/V of "
                  "num_key_value_heads (null or absent: num_attention_heads) x hidden_size / heads on every layer "
                  "(a model-level sliding_window, when set, on every layer); parameters not counted (kvplan has no "
                  "counter for its text model)",)),
    # more wrappers vLLM 0.33 serves (configs/vl_wrappers.py): flat ones read by the family of the text model
    # vLLM builds; nested ones by the class their config reads the nested fields as
    Family(("minicpmo",), text="qwen2", text_rule=vl_wrappers.minicpmo_text,
           rules=("MiniCPM-o (remote code, saved flat): its version picks the text model vLLM 0.33 builds "
                  "(minicpmo.py MiniCPMO.__new__): 2.6 (also when absent) qwen2, 4.5 qwen3; the flat fields are read "
                  "by that family; parameters: the text model (the weights add SigLIP, the resampler and the Whisper "
                  "encoder: configs/vision_towers.py; the TTS is not built), with the text model's modules (Qwen2's q/k/v biases for 2.6, Qwen3's q/k norms "
                  "for 4.5)",)),
    Family(("phi4mm",), kinds=ATTN, params=params_generic.attention_decoder,
           rules=("Phi-4-multimodal (remote code, saved flat): vLLM 0.33 phi4mm.py Phi4MMForCausalLM builds a "
                  "LlamaModel on the flat config: K/V of num_key_value_heads x head_dim (else hidden_size / "
                  "heads) on every layer; without layer_types its attention takes the model-level sliding_window "
                  "(cache_config.sliding_window) on every layer; parameters: the text model (the weights add the "
                  "image and audio encoders and projectors: configs/vision_towers.py; LoRA adapters not counted)",)),
    Family(("dots_ocr",), text="qwen2",
           rules=("dots.ocr (vLLM 0.33 configs/dotsocr.py DotsOCRConfig, a Qwen2Config, saved flat): dots_ocr.py "
                  "builds Qwen2ForCausalLM on the config itself, so its flat fields are read by qwen2 with "
                  "Qwen2Config's defaults; parameters: the text model only (vision tower not counted)",)),
    Family(("bagel",), text="qwen2", text_key="llm_config",
           text_rule=vl_wrappers.fixed_text("qwen2", "llm_config", "bagel"),
           rules=("BAGEL (vLLM 0.33 configs/bagel.py BagelConfig): llm_config read as a Qwen2Config whatever its "
                  "model_type says, and bagel.py builds Qwen2ForCausalLM on it; a config without llm_config would "
                  "run Qwen2Config's defaults and is refused; parameters: the text model only (SigLIP, VAE and "
                  "connectors not counted)",)),
    # Kosmos-2 / Kosmos-2.5 (transformers 5.20 Kosmos2Config / Kosmos2_5Config): the text model in text_config
    # (absent: the class's default text config, so such a file is refused, not read flat); image tokens are
    # prompt tokens of the text model. vLLM 0.33 registers neither (no native model)
    *(Family((name,), text=text, text_rule=vl_wrappers.nested_only("text_config", name),
             rules=(f"text model in text_config ({text}); a config without text_config is refused (its config "
                    "class would build the default text model); vLLM 0.33 has no native model for it (registry.py); "
                    "parameters not counted",))
      for name, text in (("kosmos-2", "kosmos_2_text_model"), ("kosmos-2.5", "kosmos_2_5_text_model"))),
    Family(("qwen2_audio",), text="qwen2", text_rule=vl_wrappers.nested_only("text_config", "qwen2_audio"),
           rules=("Qwen2-Audio (transformers Qwen2AudioConfig): text model in text_config (qwen2 when it names no "
                  "model_type; absent: Qwen2Config's defaults, so such a file is refused), which vLLM 0.33 "
                  "qwen2_audio.py builds as Qwen2ForCausalLM; parameters: the text model only (Whisper-style "
                  "encoder and projector not counted)",)),
    # audio-text wrappers whose config class fills the text model from its own defaults
    Family(("glmasr",), text="llama", text_rule=vl_wrappers.fixed_text("llama"),
           text_defaults={  # transformers GlmAsrConfig._default_text_config_kwargs (GLM-ASR-Nano-2512's decoder)
               "vocab_size": 59264, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 28,
               "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 8192,
               "rms_norm_eps": 1e-05},
           rules=("GLM-ASR (transformers GlmAsrConfig): text_config over GlmAsrConfig's own text defaults (28 "
                  "layers, 16 heads, 4 KV heads, hidden 2048; absent: those alone), which vLLM 0.33 glmasr.py "
                  "builds as LlamaForCausalLM; parameters: the text model only (audio encoder and projector not "
                  "counted)",)),
    Family(("midashenglm",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2"),
           text_defaults={  # transformers Qwen2_5OmniTextConfig's defaults (Qwen2.5-Omni-7B's thinker)
               "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
               "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
               "rms_norm_eps": 1e-06, "use_sliding_window": False, "sliding_window": 32768,
               "max_window_layers": 28, "tie_word_embeddings": True},
           rules=("MiDashengLM (vLLM 0.33 configs/midashenglm.py MiDashengLMConfig): text_config read as a "
                  "Qwen2_5OmniTextConfig (its defaults; absent or empty: those alone), which midashenglm.py builds "
                  "as Qwen2ForCausalLM; parameters: the text model only (Dasheng audio encoder and projector not "
                  "counted)",)),
    # audio-text models of configs/audio_wrappers.py; parameters: the text model only, as for every wrapper
    Family(("qwen3_asr",), text="qwen3_asr_thinker", text_key="thinker_config", text_rule=audio_wrappers.qwen3_asr_text,
           rules=("Qwen3-ASR (vLLM 0.33 configs/qwen3_asr.py Qwen3ASRConfig; qwen3_asr.py and qwen3_asr_realtime.py): "
                  "the thinker's text model (thinker_config.text_config, read as Qwen3ASRTextConfig) is built as "
                  "Qwen3ForCausalLM and is the only cache; the audio encoder keeps none, and the realtime class sends "
                  "each 5-second segment as its own prompt; a file without thinker_config is refused; parameters: "
                  "the text model only (audio encoder not counted)",)),
    Family(("qwen3_asr_thinker",), text="qwen3_asr_text", text_rule=vl_wrappers.fixed_text("qwen3_asr_text"),
           text_defaults=audio_wrappers.QWEN3_ASR_TEXT_DEFAULTS,
           rules=("Qwen3-ASR's thinker (Qwen3ASRThinkerConfig): text_config read as Qwen3ASRTextConfig whatever its "
                  "model_type says (absent: that class's defaults alone)",)),
    Family(("qwen3_asr_text",), kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults=audio_wrappers.QWEN3_ASR_TEXT_DEFAULTS, params=params_generic.attention_decoder,
           rules=("Qwen3ASRTextConfig (defaults: 32 layers, 32 KV heads of head_dim 128) run as Qwen3ForCausalLM: "
                  "K/V of num_key_value_heads x head_dim on every layer; the class defines no window, so one counts "
                  "only where the file adds qwen3's use_sliding_window",)),
    Family(("voxtral",), text="llama", text_rule=audio_wrappers.voxtral_text,
           text_defaults=audio_wrappers.VOXTRAL_TEXT_DEFAULTS,
           rules=("Voxtral (transformers VoxtralConfig): text_config by its model_type (llama when it names none) "
                  "over VoxtralConfig's own text defaults (30 layers, 8 KV heads of 128, hidden 3072; absent: those "
                  "alone), which vLLM 0.33 voxtral.py builds; its Whisper encoder is non-causal and keeps no cache; "
                  "Voxtral Realtime (VoxtralRealtimeGeneration or audio_config.is_causal: a causal encoder with its "
                  "own block-pooled sliding-window K/V in the pool) is refused; parameters: the text model only "
                  "(Whisper encoder and adapter not counted)",)),
    Family(("kimi_audio", "moonshot_kimia"), kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults=audio_wrappers.KIMI_AUDIO_DEFAULTS, params=params_generic.attention_decoder,
           rules=("Kimi-Audio (model_type moonshot_kimia, as moonshotai/Kimi-Audio-7B-Instruct's config.json writes "
                  "it by a public guide that quotes the file; kimi_audio read alike; vLLM 0.33 has no config class "
                  "of its own and loads the remote code KimiAudioConfig, a Qwen2Config saved flat; kimi_audio.py builds "
                  "Qwen2ForCausalLM on it): qwen2's rules over KimiAudioConfig's defaults (32 layers, 32 heads, KV "
                  "heads = heads); the kimia_mimo_layers speech-output layers are dropped at load, so they keep no "
                  "cache, and the Whisper encoder keeps none; parameters: the text model only (Whisper encoder, "
                  "VQ adaptor and MIMO layers not counted)",)),
    Family(("moss_audio",), text="qwen3", text_key="language_config",
           text_rule=vl_wrappers.fixed_text("qwen3", "language_config", "moss_audio"),
           rules=("MOSS-Audio (vLLM 0.33 moss_audio.py MossAudioConfig): language_config read as a Qwen3Config "
                  "whatever its model_type says and built as Qwen3ForCausalLM (deepstack audio features are added to "
                  "its first layers' hidden states, no cache of their own); a config without language_config would "
                  "run Qwen3Config's defaults and is refused; parameters: the text model only (audio encoder, "
                  "adapter and deepstack mergers not counted)",)),
    # transformers 5.20 speech-to-text wrappers (configs/audio_wrappers.py): the text model in text_config, by its
    # model_type (the class's default type when it names none); absent, the config class builds a default text
    # model, so such a file is refused; parameters: the text model only
    *(Family((name,), text=text, text_rule=vl_wrappers.nested_only("text_config", name), rules=(rule,))
      for name, text, rule in audio_wrappers.SPEECH_TEXT_WRAPPERS),
    Family(("isaac",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3"),
           rules=("Isaac (vLLM 0.33 configs/isaac.py IsaacConfig): text_config read as a Qwen3Config whatever its "
                  "model_type says (absent: the top-level fields, as IsaacConfig builds Qwen3Config(**kwargs)); "
                  "isaac.py builds Qwen3ForCausalLM; parameters: the text model only (SigLIP2 tower not counted), "
                  "Qwen3's q/k norms included, nested or flat",)),
    # more image-text wrappers vLLM 0.33 serves (remote-code configs); parameters: the text model only
    Family(("KeyeVL1_5",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3"), defaults=KEYE_VL1_5_TEXT_DEFAULTS,
           rules=("Keye-VL-1.5 (remote code KeyeVL1_5Config, configs/keye.py): text_config, else the top-level fields, "
                  "read as a KeyeVL1_5TextConfig (its defaults: 8 KV heads, no head_dim so hidden_size / heads, no "
                  "window unless use_sliding_window); vLLM 0.33 keye_vl1_5.py builds Qwen3ForCausalLM on it: K/V of "
                  "num_key_value_heads x head_dim on every layer; parameters: the text model only (SigLIP tower and "
                  "mlp_AR projector not counted; Qwen3's q/k norms counted, nested or flat)",)),
    Family(("opencua",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2", "text_config", "opencua"),
           rules=("OpenCUA (remote code OpenCUAConfig): text_config read as a Qwen2Config whatever its model_type "
                  "says (absent: Qwen2Config's defaults, so such a file is refused); vLLM 0.33 opencua.py builds "
                  "Qwen2ForCausalLM on it; parameters: the text model only (Qwen2.5-VL-style vision tower with 1D "
                  "RoPE and its merger not counted)",)),
    Family(("kanana-1.5-v",), text="llama", text_rule=vl_wrappers.fixed_text("llama", "text_config", "kanana-1.5-v"),
           rules=("Kanana-1.5-V (remote code KananaVConfig): text_config read as a KananaLanguageConfig, a "
                  "LlamaConfig (its defaults fill a sparse one; absent: LlamaConfig's defaults alone, so such a file "
                  "is refused); vLLM 0.33 kanana_v.py builds LlamaForCausalLM on it; parameters: the text model only "
                  "(Qwen2-VL vision encoder and C-Abstractor projector not counted)",)),
    Family(("step_robotics",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3", "text_config", "step_robotics"),
           rules=("Step3-VL-10B (remote code StepRoboticsConfig): text_config read as a Qwen3Config whatever its "
                  "model_type says (absent: Qwen3Config's defaults, so such a file is refused); vLLM 0.33 step_vl.py "
                  "StepVLForConditionalGeneration builds the text_config's architecture (a Qwen3Config names "
                  "Qwen3ForCausalLM); parameters: the text model only (Perception Encoder tower and projector not "
                  "counted)",)),
    Family(("phi4-siglip",), text="phi3",
           rules=("Phi-4-reasoning-vision (remote code Phi4VisionRConfig, a Phi3Config, saved flat): vLLM 0.33 "
                  "phi4siglip.py Phi4ForCausalLMV builds Phi3ForCausalLM on the config itself, so its flat fields are "
                  "read by phi3: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every layer (sliding_window, "
                  "when set, on every layer); parameters: the text model only (SigLIP2 tower and projector not "
                  "counted)",)),
    Family(("mistral",), kinds=ATTN, defaults={"sliding_window": 4096}, params=params_generic.attention_decoder,
           rules=("MistralConfig's default window is 4096 on every layer; an explicit null means none",)),
    Family(("ministral3",), kinds=ATTN, defaults={"head_dim": 128}, params=params_generic.attention_decoder,
           rules=("as mistral, with no default window",)),
    # GlmConfig's and Glm4Config's defaults (transformers 5.25 configuration_glm.py, configuration_glm4.py)
    Family(("glm", "glm4"), kinds=FULL_ONLY, params=params_generic.attention_decoder,
           defaults={"num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552, "intermediate_size": 13696,
                     "attention_bias": True},
           rules=("GQA; an absent num_key_value_heads means 2 (GlmConfig)",)),
    Family(("internlm3",), kinds=FULL_ONLY, defaults={"num_key_value_heads": 2, "head_dim": 128},
           params=params_generic.attention_decoder, rules=("an absent num_key_value_heads means 2 (InternLM3Config)",)),
    Family(("minimax_m2",), kinds=FULL_ONLY, defaults={"head_dim": 128}, markers=("attn_type_list",),
           params=params_generic.attention_decoder,
           rules=("full attention everywhere (attn_type_list must be all 1); head_dim 128 by default",)),
]
