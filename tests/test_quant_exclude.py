"""Quantized checkpoints whose ignore / exclude lists keep modules of size unquantized, sized module by module
(kvplan/configs/weight_tables/__init__.py, matched by kvplan/configs/quant_exclude.py).

Test data, each with where it was published:

- data/configs/kimi-k2.5-int4.json: moonshotai/Kimi-K2.5's config.json (compressed-tensors int4, group 32;
  ignore lm_head, re:.*self_attn.*, re:.*shared_experts.*, re:.*mlp\\.(gate|up|gate_up|down)_proj.*) as
  ai-dynamo/aiconfigurator keeps it (src/aiconfigurator/model_configs/moonshotai--Kimi-K2.5_config.json,
  commit 997a02f711679bb20ebad32d8d0952571278f74c);
- data/configs/minimax-m2.5-nvfp4.json: nvidia/MiniMax-M2.5-NVFP4's config.json (ModelOpt NVFP4; ignore lm_head,
  every layer's block_sparse_moe.gate and self_attn*), from the same repository's model_configs/ (a version in
  its git history).

No published byte total of a checkpoint with such a list was found in the sources searched; the totals below
are worked by hand from the configs and laid out tensor by tensor from the formats' layouts.
"""

from __future__ import annotations

import json
import re
import subprocess
import warnings
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.weight_tables import TABLES, split, table
from kvplan.configs.quant_bytes import Unsized
from kvplan.configs.quant_exclude import COMPRESSED_TENSORS, FP8, MODELOPT, Matcher

from kvplan_inprocess import kvplan

DATA = Path(__file__).resolve().parent / "data" / "configs"
SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return kvplan(*args)  # `python -m kvplan ARGS`, in this process


# -- each format's matching ------------------------------------------------------------------------------------

def test_modelopt_wildcards_are_fnmatch_and_a_trailing_star_is_a_subtree():
    m = Matcher(MODELOPT, ("model.layers.1*", "*self_attn*", "lm_head", "*.mlp.shared_expert.*"))
    assert m("model.layers.1.mlp.gate_proj") and m("model.layers.1")
    assert not m("model.layers.10.mlp.gate_proj")  # vLLM's apply_vllm_mapper: `name*` -> name, name.*
    assert m("model.layers.7.self_attn.q_proj") and m("lm_head") and not m("language_model.lm_head.x")
    assert m("model.layers.3.mlp.shared_expert.up_proj") and not m("model.layers.3.mlp.shared_expert_gate")


def test_compressed_tensors_regexes_match_from_the_start_and_names_exactly():
    m = Matcher(COMPRESSED_TENSORS, ("re:.*self_attn.*", "re:self_attn", "model.layers.0.mlp.down_proj"))
    assert m("model.layers.0.self_attn.o_proj")
    assert Matcher(COMPRESSED_TENSORS, ("re:self_attn",))("model.layers.0.self_attn.o_proj") is False  # re.match
    assert m("model.layers.0.mlp.down_proj") and not m("model.layers.0.mlp.down_proj.x")
    assert not m("model.layers.10.mlp.down_proj")


def test_fp8_names_are_exact_or_a_short_name_at_a_component_boundary():
    m = Matcher(FP8, ("gate", "model.layers.0.linear_attn.in_proj_a"))
    assert m("model.layers.4.block_sparse_moe.gate") and not m("model.layers.4.mlp.gate_proj")
    assert m("model.layers.0.linear_attn.in_proj_a") and not m("model.layers.1.linear_attn.in_proj_a")


@pytest.mark.parametrize("style, names, words", [
    (MODELOPT, ("model.layers.3.mlp.experts.7.down_proj",), "single routed experts"),
    (COMPRESSED_TENSORS, ("re:.*experts\\.7\\..*",), "single routed experts"),
    (COMPRESSED_TENSORS, ("Qwen3MoeSparseMoeBlock",), "module class"),
    (COMPRESSED_TENSORS, ("re:(unclosed",), "not a regular expression"),
])
def test_what_cannot_be_matched_exactly_is_refused(style, names, words):
    with pytest.raises(Unsized, match=words):
        Matcher(style, names)


# -- a small config counted by hand ----------------------------------------------------------------------------

# A DeepSeek-V3-style model small enough to count: hidden 64, 2 layers (layer 0 dense, layer 1 MoE with 4 experts
# of 32 and one shared expert), MLA with q_lora 32, kv_lora 16, rope 8, nope 8, v 16, 4 heads; vocab 128, untied.
TINY_MLA = {"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 4, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 8, "v_head_dim": 16, "intermediate_size": 128, "moe_intermediate_size": 32,
            "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
            "vocab_size": 128, "tie_word_embeddings": False, "max_position_embeddings": 16384, "torch_dtype": "bfloat16"}
# per layer, attention: q_a_proj 64x32 = 2,048, q_a_layernorm 32, q_b_proj 32x(4x16) = 2,048,
#   kv_a_proj_with_mqa 64x24 = 1,536, kv_a_layernorm 16, kv_b_proj 16x(4x24) = 1,536, o_proj (4x16)x64 = 4,096:
#   linear 11,264, norms 48; two layer norms 128
# layer 0 dense MLP 3 x 64 x 128 = 24,576
# layer 1: experts 4 x 3 x 64 x 32 = 24,576, router 4 x 64 = 256 + e_score_correction_bias 4, shared expert
#   3 x 64 x 32 = 6,144
# embeddings 128 x 64 = 8,192, head 8,192, final norm 64
# total: 2 x (11,264 + 48 + 128) + 24,576 + 24,576 + 260 + 6,144 + 16,384 + 64 = 94,884
ATTN_LINEAR, ATTN_NORMS, LAYER_NORMS = 11_264, 48, 128
TINY_TOTAL = (2 * (ATTN_LINEAR + ATTN_NORMS + LAYER_NORMS) + 24_576 + 24_576 + 256 + 4 + 6_144 + 8_192 * 2 + 64)


def _tiny(quant: dict) -> dict:
    return dict(TINY_MLA, quantization_config=quant)


def test_a_hand_counted_config_under_a_modelopt_exclude_list():
    quant = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
             "ignore": ["lm_head", "model.layers.0*", "*self_attn*", "*shared_experts*"]}
    model = build_model(_tiny(quant), "tiny")
    assert model.param_count == TINY_TOTAL == 94_884
    # quantized: only layer 1's routed experts, 24,576 parameters at 1/2 + 1/16 B = 13,824 B, + 4 experts x 3
    # tensors x (weight_scale_2 + input_scale, F32 each: vLLM 0.34 modelopt.py KNvfp4Static / KNvfp4Dynamic) = 96 B;
    # everything else, 94,884 - 24,576 = 70,308 parameters, at 2 B = 140,616 B: 154,536 B
    assert model.weight_bytes == 13_824 + 12 * 8 + 140_616 == 154_536
    note = next(n for n in model.notes if n.startswith("weights estimated"))
    assert "attention 22,528; mlp 24,576; shared experts 6,144" in note and "lm_head 8,192" in note


def test_the_same_config_under_compressed_tensors_and_fp8_lists():
    ct = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "ignore": ["lm_head", "re:.*self_attn.*", "re:.*mlp\\.(gate|up|down)_proj"],
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                     "strategy": "group", "group_size": 32}}}}
    model = build_model(_tiny(ct), "ct")
    # quantized: routed experts 24,576 + shared expert 6,144 = 30,720 at 1/2 + 2/32 B = 17,280 B, + an int64
    # weight_shape [2] for each of the 4 x 3 + 3 tensors (vLLM 0.34 CompressedTensorsWNA16.create_weights) = 240 B;
    # 64,164 parameters at 2 B = 128,328 B: 145,848 B
    assert model.weight_bytes == 17_280 + 15 * 16 + 128_328 == 145_848
    fp8 = {"quant_method": "fp8", "weight_block_size": [128, 128],
           "modules_to_not_convert": ["model.layers.1.self_attn.kv_a_proj_with_mqa", "lm_head", "gate"]}
    model = build_model(_tiny(fp8), "fp8")
    # kept: layer 1's kv_a_proj_with_mqa (1,536), the head (FP8 never quantizes it), the routers (never):
    # quantized 2 x 11,264 - 1,536 + 24,576 + 24,576 + 6,144 = 76,288 at 1 + 4/16,384 B = 76,306.625 B;
    # 18,596 parameters at 2 B = 37,192 B: 113,498.625 B, 113,499 rounded
    assert model.weight_bytes == 113_499


# -- real configs ----------------------------------------------------------------------------------------------

def test_kimi_k25_int4_keeps_attention_the_dense_layer_and_the_shared_experts_in_bf16():
    model = build_model(json.loads((DATA / "kimi-k2.5-int4.json").read_text()), "kimi-k2.5")
    # 61 layers, hidden 7,168, vocab 163,840; layer 0 dense (intermediate 18,432), 60 MoE layers of 384 experts
    # of 2,048 with one shared expert. By hand:
    #   attention linears a layer: q_a 7,168 x 1,536 + q_b 1,536 x 64 x 192 + kv_a 7,168 x 576
    #     + kv_b 512 x 64 x 256 + o 64 x 128 x 7,168 = 11,010,048 + 18,874,368 + 4,128,768 + 8,388,608
    #     + 58,720,256 = 101,122,048; x 61 = 6,168,444,928
    #   layer 0 MLP 3 x 7,168 x 18,432 = 396,361,728; shared experts 60 x 3 x 7,168 x 2,048 = 2,642,411,520
    #   routed experts 60 x 384 x 3 x 7,168 x 2,048 = 1,014,686,023,680 (int4: 1/2 + 2/32 B each)
    experts = 60 * 384 * 3 * 7168 * 2048
    assert experts == 1_014_686_023_680
    assert model.param_count - experts == 11_722_208_768  # at 2 B: attention, MLPs, norms, routers, tables
    # compressed-tensors pack-quantized int4 group 32, tensor by tensor: weight_packed int32 [out, in/8],
    # weight_scale bf16 [out, in/32], weight_shape int64 [2] (vLLM 0.34 CompressedTensorsWNA16.create_weights):
    # 16 B a matrix more, 60 x 384 x 3 x 16 = 1,105,920 B
    laid_out = experts // 2 + experts // 32 * 2 + 60 * 384 * 3 * 16 + 11_722_208_768 * 2
    assert model.weight_bytes == laid_out == int(experts * 0.5625 + 11_722_208_768 * 2) + 1_105_920 \
        == 594_206_411_776


def test_minimax_m25_nvfp4_keeps_attention_in_bf16():
    model = build_model(json.loads((DATA / "minimax-m2.5-nvfp4.json").read_text()), "minimax-m2.5-nvfp4")
    # 62 layers, hidden 3,072, 48 query / 8 KV heads of 128, 256 experts of 1,536, vocab 200,064, untied.
    # attention a layer: q 3,072 x 6,144 + k, v 3,072 x 1,024 + o 6,144 x 3,072 = 44,040,192; x 62 = 2,730,491,904
    experts = 62 * 256 * 3 * 3072 * 1536
    kept_linear = 62 * (2 * 3072 * 6144 + 2 * 3072 * 1024)
    assert kept_linear == 2_730_491_904
    # the rest in BF16: embeddings and head 2 x 200,064 x 3,072 = 1,229,193,216; norms a layer 2 x 3,072 +
    # q_norm 6,144 + k_norm 1,024; routers 3,072 x 256 + 256; final norm 3,072
    floats = 2 * 200_064 * 3072 + 62 * (2 * 3072 + 6144 + 1024 + 3072 * 256 + 256) + 3072
    assert model.param_count == experts + kept_linear + floats
    # + per routed expert tensor (62 x 256 x 3 = 47,616) weight_scale_2 and input_scale, F32 each (vLLM 0.34
    # modelopt.py KNvfp4Static / KNvfp4Dynamic): 380,928 B
    assert model.weight_bytes == int(experts * 0.5625 + (kept_linear + floats) * 2) + 62 * 256 * 3 * 8
    assert model.weight_bytes == 134_401_725_440


# -- the tables against the modules transformers builds --------------------------------------------------------

# kvplan's table names modules as the checkpoints do; transformers 5 folds each layer's routed experts into
# experts.gate_up_proj / experts.down_proj and renames Mixtral's and MiniMax's block_sparse_moe to mlp
_TF_TYPES = ["llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "qwen2_moe", "mixtral", "minimax_m2",
             "deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa", "qwen3_5_text", "qwen3_5_moe_text",
             "llama4_text", "gemma4_text", "laguna", "glm4_moe", "glm4_moe_lite", "gpt_oss",
             "gemma3_text", "phi3", "qwen3_next",
             "qwen3_vl", "qwen3_vl_moe", "qwen2_5_vl", "ernie4_5", "ernie4_5_moe", "granite", "internlm3",  # vl
             "gemma2", "cohere2", "exaone4", "glm4", "olmo3", "gemma", "glm", "lfm2", "lfm2_moe",  # dense
             "deepseek_v4", "minicpm3", "longcat_flash",  # mla
             "nemotron_h", "granitemoehybrid", "falcon_h1", "jamba", "zamba2",  # hybrid
             "minimax", "dbrx", "bailing_hybrid",  # moe
             "qwen2_5_omni_thinker", "qwen3_omni_moe_thinker", "mllama", "gemma3n", "mimo_v2_flash",  # wrap
             "falcon", "stablelm", "gpt_bigcode", "gpt_neox", "mpt", "bloom", "opt", "gptj", "gpt2", "persimmon", "xglm",  # classic
             "mamba", "falcon_mamba", "mamba2", "olmo_hybrid", "zamba", "gpt_neo", "recurrent_gemma", "lfm3",  # rest
             "cohere", "starcoder2", "phi", "olmo2", "olmo", "seed_oss", "smollm3", "ministral3", "ministral", "exaone", "nemotron", "apertus", "arcee", "helium", "vaultgemma", "cwm", "iquestcoder", "jais2", "nanochat", "granite_swa", "hunyuan_v1_dense", "diffllama", "bitnet", "apertus1p5_text",  # dense_more
             "sarvam_mla", "youtu", "mistral_large4", "hy_v4", "axk1",
             "dots3_note_text", "axk2", "kolibri1_1", "dory",  # mla_more
             "qwen2_vl", "glm4v", "glm_ocr", "ernie4_5_vl_moe", "minimax_m3_vl", "molmo2", "paddleocr_vl", "granite4_vision", "phi4_multimodal", "hyperclovax", "cosmos3_edge", "glm_image", "cohere_compass", "muse_glimmer", "higgs_audio_v2", "codegen", "hrm_text", "gpt_neox_japanese", "ctrl", "biogpt", "modernbert-decoder", "git", "emu3", "granite_docling", "deepseek_ocr2", "kosmos-2", "kosmos-2.5",  # vl_more
             "bamba", "qwen4_exp_text", "glm5_next", "inkling_text", "inkling2", "inkling2_loop",  # hybrid_more
             "lara_mini", "zaya", "rwkv",  # hybrid_more
             "dots1", "hunyuan_v1_moe", "olmoe", "phimoe", "granitemoe", "granitemoeshared", "granitemoe_swa",
             "jetmoe", "solar_open", "afmoe", "exaone_moe", "minicpm5_moe", "hy_v3", "cohere2_moe",
             "flex_olmo", "aria_text", "mellum", "doge", "beam", "flint", "kolibri1", "ergo",  # moe_more
             "step3p7", "muse_spark",  # step_more
             ]
# image-text wrappers whose text model transformers 5.25 builds only inside the wrapper (no *ForCausalLM for
# qwen3_vl_text, qwen3_vl_moe_text, qwen2_5_vl_text): the whole model is built and its text model's parameters
# (model.language_model.X, lm_head) compared under the causal LM's names (model.X, lm_head)
_IN_WRAPPER = ("qwen3_vl", "qwen3_vl_moe", "qwen2_5_vl")
# the Qwen-Omni thinkers and Llama 3.2 Vision likewise (no causal LM for qwen2_5_omni_text, qwen3_omni_moe_text,
# mllama_text_model's MllamaTextConfig): configs/weight_tables/wrap.py
_IN_WRAPPER += ("qwen2_5_omni_thinker", "qwen3_omni_moe_thinker", "mllama")
# configs/weight_tables/vl_more.py
_IN_WRAPPER += ("qwen2_vl", "glm4v", "glm_ocr", "ernie4_5_vl_moe", "molmo2",
                "paddleocr_vl", "granite4_vision", "cosmos3_edge", "glm_image", "muse_glimmer", "deepseek_ocr2")
# ERNIE-4.5-VL: transformers splits each MoE layer into text_moe and vision_moe (conversion_mapping.py), which the
# checkpoint and the table hold as one router module (gate.weight, gate.weight_1), one [2, E] score bias and one
# block of 2E experts: their parameters are summed under the checkpoint's names (regular expressions, in order)
_THEIRS_MERGED = {"ernie4_5_vl_moe": ((r"\.(text|vision)_moe\.gate\.moe_statics\.", ".moe_statics."),
                                      (r"\.(text|vision)_moe\.", ".")),
                  # Molmo2: the checkpoints fuse q/k/v into att_proj and gate/up into ff_proj (conversion_mapping.py)
                  "molmo2": ((r"\.self_attn\.[qkv]_proj$", ".self_attn.att_proj"),
                             (r"\.mlp\.(gate|up)_proj$", ".mlp.ff_proj")),
                  # HRM-Text: the checkpoints fuse gate/q/k/v into attn.gqkv_proj and gate/up into mlp.gate_up_proj
                  "hrm_text": ((r"\.self_attn\.(gate|q|k|v)_proj$", ".attn.gqkv_proj"),
                               (r"\.self_attn\.o_proj$", ".attn.o_proj"),
                               (r"\.mlp\.(gate|up)_proj$", ".mlp.gate_up_proj"))}
# GLM-5-Next likewise (transformers 5.25 has no causal LM for glm5_next_text: configs/weight_tables/hybrid_more.py)
_IN_WRAPPER += ("glm5_next", "inkling2", "inkling2_loop")
# Step-3.7's wrapper builds Step-3.5's text model (no causal LM for step3p5 in transformers 5.25), whose checkpoint
# names it renames on load (conversion_mapping.py "step3p7": configs/weight_tables/step_more.py)
_IN_WRAPPER += ("step3p7", "muse_spark")
_STEP3P5_NAMES = ((".moe.gate_proj", ".mlp.experts.gate_up_proj"), (".moe.up_proj", ".mlp.experts.gate_up_proj"),
                  (".moe.down_proj", ".mlp.experts.down_proj"),
                  (".moe.router_bias", ".mlp.gate.e_score_correction_bias"), (".moe.gate", ".mlp.gate"),
                  (".share_expert.", ".mlp.shared_experts."))
# transformers 5 renames Laguna's checkpoint names on load (conversion_mapping.py)
_RENAMED = {"laguna": ((".mlp.shared_expert.", ".mlp.shared_experts."),
                       (".mlp.experts.e_score_correction_bias", ".mlp.gate.e_score_correction_bias")),
            "ernie4_5_moe": ((".mlp.moe_statics.", ".mlp.gate.moe_statics."),),
            # Nemotron-H's routed experts are not gated: transformers merges experts.N.up_proj into experts.up_proj;
            # Granite 4.0-H's checkpoints keep the experts as block_sparse_moe.input_linear / output_linear and the
            # router as router.layer (both conversion_mapping.py renames; _as_transformers has made block_sparse_moe
            # mlp, which transformers keeps as block_sparse_moe for Granite)
            "nemotron_h": ((".experts.gate_up_proj", ".experts.up_proj"),),
            "granitemoehybrid": ((".mlp.input_linear", ".block_sparse_moe.experts.gate_up_proj"),
                                 (".mlp.output_linear", ".block_sparse_moe.experts.down_proj"),
                                 (".mlp.router.layer", ".block_sparse_moe.router")),
            # Ling 3.0's checkpoint names (vLLM 0.34 bailing_moe_v3.py), which transformers renames on load and
            # whose three KDA convolutions it packs into one conv1d
            "bailing_hybrid": (("model.word_embeddings", "model.embed_tokens"), (".attention.", ".self_attn."),
                               (".self_attn.dense", ".self_attn.o_proj"),
                               *((f".self_attn.{p}", f".self_attn.forget_gate.{p}") for p in ("f_proj", "dt_bias",
                                                                                              "A_log")),
                               *((f".self_attn.{c}_conv1d", ".self_attn.conv1d") for c in "qkv"),
                               (".mlp.gate.expert_bias", ".mlp.gate.e_score_correction_bias")),
            "gpt_neox": (("embed_out", "lm_head"),)}  # GPT-NeoX's head, embed_out in the checkpoints


# DeepSeek-V4's checkpoints keep DeepSeek's own names (no model. prefix: its table's modules are top), which
# transformers 5.25 renames on load (conversion_mapping.py "deepseek_v4"): the same renames, as regular expressions
# applied in order to the table's names (the indexer's before the attention's, the leaves' before attn. -> self_attn.)
_CHECKPOINT_NAMES = {"deepseek_v4": (
    (r"^embed$", "model.embed_tokens"), (r"^head$", "lm_head"), (r"^norm$", "model.norm"),
    (r"^hc_head_(fn|base|scale)$", r"model.hc_head.hc_\1"), (r"^layers\.", "model.layers."),
    (r"\.attn_norm$", ".input_layernorm"), (r"\.ffn_norm$", ".post_attention_layernorm"),
    (r"\.hc_(attn|ffn)_(fn|base|scale)$", r".\1_hc.\2"),
    (r"compressor\.wkv$", "compressor.kv_proj"), (r"compressor\.wgate$", "compressor.gate_proj"),
    (r"compressor\.ape$", "compressor.position_bias"), (r"compressor\.norm$", "compressor.kv_norm"),
    (r"\.attn\.indexer\.compressor\.", ".self_attn.compressor.indexer."),
    (r"\.attn\.indexer\.wq_b$", ".self_attn.compressor.indexer.q_b_proj"),
    (r"\.attn\.indexer\.weights_proj$", ".self_attn.compressor.indexer.scorer.weights_proj"),
    (r"\.attn\.", ".self_attn."), (r"\.ffn\.", ".mlp."),
    (r"\.wq_a$", ".q_a_proj"), (r"\.q_norm$", ".q_a_norm"), (r"\.wq_b$", ".q_b_proj"), (r"\.wkv$", ".kv_proj"),
    (r"\.wo_a$", ".o_a_proj"), (r"\.wo_b$", ".o_b_proj"), (r"\.attn_sink$", ".sinks"),
    (r"\.gate\.bias$", ".gate.e_score_correction_bias"), (r"shared_experts\.w1$", "shared_experts.gate_proj"),
    (r"shared_experts\.w3$", "shared_experts.up_proj"), (r"shared_experts\.w2$", "shared_experts.down_proj"))}
# Inkling2's TML checkpoint names (conversion_mapping.py "inkling2_text": model.llm.* renamed on load), here after the
# test's "model." (configs/weight_tables/hybrid_more.py names them relative to model.llm.); an attention-residual
# query attn_res.attn_queries.K is layer K + 1's
_CHECKPOINT_NAMES["inkling2"] = (
    (r"^model\.unembed$", "lm_head"), (r"^model\.embed$", "model.embed_tokens"),
    (r"^model\.embed_norm$", "model.embed_tokens.embed_norm"),
    (r"attn_res\.attn_queries\.(\d+)$", lambda m: f"layers.{int(m.group(1)) + 1}.attention_input.query"),
    (r"attn_res\.mlp_queries\.(\d+)$", r"layers.\1.mlp_input.query"),
    (r"attn_res\.output_query$", "final_input.query"),
    (r"\.attn\.wq_du$", ".self_attn.q_proj.linear"), (r"\.attn\.wk_dv$", ".self_attn.k_proj.linear"),
    (r"\.attn\.wv_dv$", ".self_attn.v_proj.linear"), (r"\.attn\.wo_ud$", ".self_attn.o_proj.linear"),
    (r"\.attn\.gate_attn$", ".self_attn.o_proj.gate_proj"), (r"\.attn\.attn_sink_proj$", ".self_attn.sink_proj"),
    (r"\.attn\.wr_du$", ".self_attn.relative_position_bias.linear"),
    (r"\.attn\.rel_logits_proj\.proj$", ".self_attn.relative_position_bias.proj"),
    (r"\.attn\.q_l2_clip\.scale$", ".self_attn.q_proj.norm.scale"),
    (r"\.attn\.rel_l2_clip\.scale$", ".self_attn.relative_position_bias.norm.scale"),
    (r"\.attn\.([kv])_sconv\.weight$", r".self_attn.\1_proj.sconv.conv1d"),
    (r"\.attn\.([kv])_sconv\.static_w$", r".self_attn.\1_proj.sconv.static_weight"),
    (r"\.attn\.([kv])_sconv\.weight_proj$", r".self_attn.\1_proj.sconv.weight_proj"),
    (r"\.attn_norm$", ".input_layernorm"), (r"\.([qkv])_input_norm$", r".\1_input_layernorm"),
    (r"\.mlp_norm$", ".post_attention_layernorm"),
    (r"\.attn_sconv\.weight$", ".post_attention_convolution.conv1d"),
    (r"\.mlp_sconv\.weight$", ".post_mlp_convolution.conv1d"),
    (r"\.mlp\.gate\.bias$", ".mlp.gate.e_score_correction_bias"),
    (r"\.mlp\.experts\.w13_weight$", ".mlp.experts.gate_up_proj"),
    (r"\.mlp\.experts\.w2_weight$", ".mlp.experts.down_proj"))
# Inkling2-Loop's: Inkling2's and the loop's message gates and queries (conversion_mapping.py "inkling2_loop_text";
# transformers merges the two query tensors into message_input.query)
_CHECKPOINT_NAMES["inkling2_loop"] = (
    (r"\.controllers\.attn\.", ".q_message_gate."), (r"\.controllers\.(k|v|mlp)\.", r".\1_message_gate."),
    (r"_message_gate\.down_weight$", "_message_gate.down_proj"),
    (r"_message_gate\.gain_weight$", "_message_gate.message_gate_proj"),
    (r"_message_gate\.forget_weight$", "_message_gate.forget_gate_proj"),
    (r"^model\.middle_cycle_cross_pass_(kv_)?queries$", "model.message_input.query"),
    *_CHECKPOINT_NAMES["inkling2"])
# Lara mini's checkpoints: the gated norm out_norm, and one in_proj that transformers splits on load into four
# (conversion_mapping.py "lara_mini"): transformers' four are summed under the checkpoint's name (_THEIRS_MERGED)
_RENAMED["lara_mini"] = ((".linear_attn.out_norm", ".linear_attn.norm"),)
_THEIRS_MERGED["lara_mini"] = ((r"\.linear_attn\.in_proj_(qkv|z|b|a)$", ".linear_attn.in_proj"),)
# RWKV's checkpoints put rwkv. before its modules (the table's, here after the test's "model.")
_CHECKPOINT_NAMES["rwkv"] = ((r"^model\.", "rwkv."),)
# MiMo-V2's checkpoints name the sinks attention_sink_bias (conversion_mapping.py "mimo_v2_flash")
_RENAMED["mimo_v2_flash"] = ((".self_attn.attention_sink_bias", ".self_attn.sinks"),)
# OLMo Hybrid's checkpoint names, which transformers renames on load and whose three convolutions it packs into one
# conv1d (conversion_mapping.py "olmo_hybrid"); LFM3's attention gate, gate_proj in the checkpoints (g_proj in
# transformers); Zamba's dt_proj_bias, which this test keys as its module's bias (it drops "_bias" from "_proj_bias")
_RENAMED.update({"olmo_hybrid": ((".attention_layer_norm", ".input_layernorm"),
                                 (".feedforward_layer_norm", ".post_attention_layernorm"),
                                 *((f".{c}_conv1d", ".conv1d") for c in "qkv")),
                 "lfm3": ((".self_attn.gate_proj", ".self_attn.g_proj"),), "zamba": ((".dt_proj_bias", ".dt_proj"),)})
# EXAONE 3 / 3.5's checkpoint names, which transformers renames on load (conversion_mapping.py "exaone")
_RENAMED["exaone"] = (("transformer.wte", "model.embed_tokens"), ("transformer.ln_f", "model.norm"),
                      ("transformer.h.", "model.layers."), (".attn.attention.out_proj", ".self_attn.o_proj"),
                      (".attn.attention.", ".self_attn."), (".ln_1", ".input_layernorm"),
                      (".ln_2", ".post_attention_layernorm"), (".mlp.c_fc_0", ".mlp.gate_proj"),
                      (".mlp.c_fc_1", ".mlp.up_proj"), (".mlp.c_proj", ".mlp.down_proj"))

# Mistral Large 4's checkpoints keep Mistral's own names at the top, which transformers 5.25 renames on load
# (conversion_mapping.py "mistral_large4", "mistral_large4_text"); its text model is built inside the wrapper only
_IN_WRAPPER += ("mistral_large4",)
_CHECKPOINT_NAMES["mistral_large4"] = (
    (r"^tok_embeddings$", "model.embed_tokens"), (r"^output$", "lm_head"), (r"^norm$", "model.norm"),
    (r"^lerope\.alpha$", "model.rotary_emb.alpha"), (r"^layers\.", "model.layers."),
    (r"\.attention_norm$", ".input_layernorm"), (r"\.ffn_norm$", ".post_attention_layernorm"),
    (r"\.attention\.", ".self_attn."), (r"\.wq$", ".q_proj"), (r"\.wkv_a_with_mqa$", ".kv_a_proj_with_mqa"),
    (r"\.kv_a_norm$", ".kv_a_layernorm"), (r"\.wkv_b$", ".kv_b_proj"), (r"\.wo$", ".o_proj"),
    (r"\.ssmax_scaling\.s$", ".softmax_scaling.scale"), (r"\.ssmax_scaling\.b$", ".softmax_scaling"),
    (r"\.(feed_forward|shared_experts)\.w1$", r".\1.gate_proj"),
    (r"\.(feed_forward|shared_experts)\.w3$", r".\1.up_proj"),
    (r"\.(feed_forward|shared_experts)\.w2$", r".\1.down_proj"), (r"\.feed_forward\.", ".mlp."),
    (r"\.shared_experts\.", ".mlp.shared_experts."), (r"\.gate$", ".mlp.gate"), (r"\.experts\.", ".mlp.experts."))
# HY-V4's checkpoint names (conversion_mapping.py "hy_v4")
_CHECKPOINT_NAMES["hy_v4"] = (
    (r"\.hc_pre\.hc_", ".hc_"), (r"\.hc_attn_layer\.hc_", ".attn_hc."), (r"\.hc_mlp_layer\.hc_", ".ffn_hc."),
    (r"\.hc_head\.hc_head_", ".hc_head.hc_"), (r"\.linear_gate$", ".gate_proj"), (r"\.learnable_sink_param$", ".sinks"))

# A.X-K1's checkpoints keep post_mlp_layernorm at the decoder layer (conversion_mapping.py "axk1")
_RENAMED["axk1"] = ((".post_mlp_layernorm", ".mlp.post_mlp_layernorm"),)

# A.X-K2's checkpoint names (conversion_mapping.py "axk2")
_RENAMED["axk2"] = ((".self_attn.q_b_proj", ".self_attn.q_gate_proj"), (".W_down", ".mlp.fc1"), (".W_up", ".mlp.fc2"))

# Kolibri 1.1's checkpoint names (conversion_mapping.py "kolibri1")
_RENAMED["kolibri1_1"] = ((".moe.router.expert_bias", ".mlp.gate.e_score_correction_bias"),
                          (".post_attn_norm", ".post_self_attn_layernorm"), (".post_ffn_norm", ".post_mlp_layernorm"))

# Dory's checkpoints store decoder layer i as layers.{2i} (attention) and layers.{2i+1} (MLP) under backbone.
# (conversion_mapping.py "dory" LayerPairCollapse): the index halved, mixer the block it is
_CHECKPOINT_NAMES["dory"] = (
    (r"^backbone\.layers\.(\d+)\.mixer\.",
     lambda m: f"model.layers.{int(m[1]) // 2}.{('self_attn', 'mlp')[int(m[1]) % 2]}."),
    (r"^backbone\.layers\.(\d+)\.(attn|mlp)_alpha$",
     lambda m: f"model.layers.{int(m[1]) // 2}.lambda_{1 if m[2] == 'attn' else 2}"),
    (r"\.self_attn\.g_proj$", ".self_attn.gate_proj"), (r"^backbone\.embeddings$", "model.embed_tokens"))

# GLM-5-Next's checkpoint names, which transformers renames on load (conversion_mapping.py "glm5_next": the KDA forget
# gate's tensors into forget_gate, the three convolutions packed into conv1d, hc_attn_fn into attn_hc.fn, ...)
_RENAMED["glm5_next"] = (*((f".self_attn.{p}", f".self_attn.forget_gate.{p}") for p in ("f_a_proj", "f_b_proj",
                                                                                         "dt_bias", "A_log")),
                         *((f".self_attn.{c}_conv1d", ".self_attn.conv1d") for c in "qkv"),
                         *((f".hc_{h}_{p}", f".{h}_hc.{p}") for h in ("attn", "ffn") for p in ("fn", "base", "scale")))
# configs/weight_tables/moe_more.py: PhiMoE's router, block_sparse_moe.gate in the checkpoints (conversion_mapping.py
# "phimoe"); the Granite MoE checkpoints' experts and router (conversion_mapping.py "granitemoe", which
# granitemoeshared and granitemoe_swa reuse; _as_transformers has made block_sparse_moe mlp)
_RENAMED["step3p7"] = _STEP3P5_NAMES
_RENAMED["phimoe"] = ((".mlp.gate", ".mlp.router"),)
# EXAONE MoE's router bias, mlp.e_score_correction_bias in the checkpoints (conversion_mapping.py "exaone_moe")
_RENAMED["exaone_moe"] = ((".mlp.e_score_correction_bias", ".mlp.gate.e_score_correction_bias"),)
# MiniCPM5-MoE's query-and-gate projection, self_attn.q_proj in the checkpoints (conversion_mapping.py)
_RENAMED["minicpm5_moe"] = ((".self_attn.q_proj", ".self_attn.q_gate_proj"),)
# Aria's expert tensors, fc1 / fc2 in the checkpoints (conversion_mapping.py "aria_text")
_RENAMED["aria_text"] = ((".mlp.experts.fc1", ".mlp.experts.gate_up_proj"),
                         (".mlp.experts.fc2", ".mlp.experts.down_proj"))
_RENAMED["flint"] = ((".self_attn.softmax_offset", ".self_attn.sinks"),)  # conversion_mapping.py "flint"
# Kolibri 1's checkpoint names, which transformers renames on load (conversion_mapping.py "kolibri1")
_RENAMED["kolibri1"] = ((".post_attn_norm", ".post_self_attn_layernorm"), (".post_ffn_norm", ".post_mlp_layernorm"),
                        (".moe.router.expert_bias", ".mlp.gate.e_score_correction_bias"))
# Hunyuan 3's router, router bias and shared MLP under their checkpoint names (conversion_mapping.py "hy_v3")
_RENAMED["hy_v3"] = ((".mlp.router.gate", ".mlp.gate"), (".mlp.expert_bias", ".mlp.e_score_correction_bias"),
                     (".mlp.shared_mlp.", ".mlp.shared_experts."))
# Ergo's checkpoint names, from the top, which transformers renames on load (conversion_mapping.py "ergo")
_CHECKPOINT_NAMES["ergo"] = (
    (r"^tok_embeddings$", "model.embed_tokens"), (r"^output$", "lm_head"), (r"^norm$", "model.norm"),
    (r"^layers\.", "model.layers."), (r"\.attention_norm$", ".input_layernorm"),
    (r"\.post_attention_norm$", ".post_attention_layernorm"), (r"\.ffn_norm$", ".pre_feedforward_layernorm"),
    (r"\.post_ffn_norm$", ".post_feedforward_layernorm"), (r"\.post_attention_residual$", ".attention_residual_gate"),
    (r"\.post_ffn_residual$", ".feedforward_residual_gate"), (r"\.attention\.wqkv$", ".self_attn.qkv_proj"),
    (r"\.attention\.wo$", ".self_attn.o_proj"), (r"\.attention\.(q|k)_norm$", r".self_attn.\1_norm"),
    (r"\.feed_forward\.up$", ".mlp.up_proj"), (r"\.feed_forward\.down$", ".mlp.down_proj"),
    (r"\.feed_forward\.gate_kernel$", ".mlp.gate.linear"),
    (r"\.feed_forward\.router_bias$", ".mlp.gate.e_score_correction_bias"),
    (r"\.feed_forward\.up_proj$", ".mlp.experts.up_proj"), (r"\.feed_forward\.down_proj$", ".mlp.experts.down_proj"),
    (r"\.feed_forward\.expert_output_norm$", ".mlp.experts.post_expert_norm"),
    (r"\.feed_forward\.shared_up_proj$", ".mlp.shared_experts.up_proj"),
    (r"\.feed_forward\.shared_down_proj$", ".mlp.shared_experts.down_proj"),
    (r"\.feed_forward\.shared_expert_output_norm$", ".mlp.shared_experts.norm"))
_RENAMED.update(dict.fromkeys(("granitemoe", "granitemoeshared", "granitemoe_swa"), (
    (".mlp.input_linear", ".block_sparse_moe.experts.gate_up_proj"),
    (".mlp.output_linear", ".block_sparse_moe.experts.down_proj"),
    (".mlp.router.layer", ".block_sparse_moe.router"))))

# MiniMax-M3's checkpoint names (conversion_mapping.py "minimax_m3_vl"): the indexer's index_* projections and norms,
# the score bias beside the router, and the MLPs' gate_proj and up_proj, which transformers fuses into gate_up_proj
_RENAMED["minimax_m3_vl"] = (*((f".self_attn.index_{p}", f".self_attn.indexer.{p}") for p in
                               ("q_proj", "k_proj", "q_norm", "k_norm")),
                             (".mlp.e_score_correction_bias", ".mlp.gate.e_score_correction_bias"),
                             *((f"{m}.{p}", f"{m}.gate_up_proj") for m in (".mlp", ".mlp.shared_experts")
                               for p in ("gate_proj", "up_proj")))


def _m3_shrunk(text) -> None:
    """vLLM builds MiniMax-M3's shared experts of intermediate_size (the shrunk config's shared width differs: no
    table); layer 1 made block-sparse, so that the indexer's modules are built and checked too."""
    text.shared_intermediate_size = text.intermediate_size
    text.layer_types = ["full_attention", "minimax_m3_sparse"] + list(text.layer_types[2:])


# Molmo2's checkpoint names (conversion_mapping.py "molmo2", "Molmo2TextModel"), as transformers names the modules
_RENAMED["molmo2"] = (("model.transformer.blocks.", "model.layers."), (".self_attn.attn_out", ".self_attn.o_proj"),
                      (".mlp.ff_out", ".mlp.down_proj"), (".attn_norm", ".input_layernorm"),
                      (".ff_norm", ".post_attention_layernorm"), ("model.transformer.ln_f", "model.norm"),
                      ("model.transformer.wte.new_embedding", "model.embed_tokens"),
                      ("model.transformer.wte.embedding", "model.embed_tokens"))


# Cosmos3-Edge's Diffusers names at the top of its checkpoints (conversion_mapping.py "cosmos3_edge")
_CHECKPOINT_NAMES["cosmos3_edge"] = ((r"^layers\.", "model.layers."), (r"^embed_tokens$", "model.embed_tokens"),
                                     (r"^norm$", "model.norm"), (r"\.self_attn\.to_out$", ".self_attn.o_proj"),
                                     *((rf"\.self_attn\.to_{p}$", f".self_attn.{p}_proj") for p in "qkv"),
                                     (r"\.mlp\.up_proj$", ".mlp.fc1"), (r"\.mlp\.down_proj$", ".mlp.fc2"))


# wrappers no auto class builds (GLM-Image's generator: GlmImageForConditionalGeneration is not an image-text-to-text
# model in transformers 5.25's auto mappings)
_WRAPPER_CLASS = {"glm_image": "GlmImageForConditionalGeneration"}
# models whose causal-LM class is not in transformers' auto mappings for their text config, built by class name
# (Higgs Audio v2; Emu3's text model, whose Emu3TextConfig no auto class takes); Granite Docling's wrapper, whose text
# model keeps its own names (model.text_model.) and whose vision model is dropped (_THEIRS_DROPPED); Kosmos-2's
# likewise (text_model.model.)
_CAUSAL_CLASS = {"higgs_audio_v2": "HiggsAudioV2ForConditionalGeneration", "emu3": "Emu3ForCausalLM",
                 "granite_docling": "GraniteDoclingForConditionalGeneration",
                 "kosmos-2": "Kosmos2ForConditionalGeneration", "kosmos-2.5": "Kosmos2_5ForConditionalGeneration"}


# parameters of the model transformers builds that are not its text model's (configs/weight_tables/vl_more.py)
_THEIRS_DROPPED = {"phi4_multimodal": ("model.embed_tokens_extend.",),
                   "git": ("git.image_encoder.", "git.visual_projection.", "git.img_temporal_embedding"),
                   "granite_docling": ("model.vision_model.",),
                   "kosmos-2": ("vision_model.", "image_to_text_projection."),
                   "kosmos-2.5": ("vision_model.", "image_to_text_projection.")}


# edits of a shrunk text config before the model is built (configs/weight_tables/vl_more.py)
_SHRUNK_EDITS = {"minimax_m3_vl": _m3_shrunk}

def _as_transformers(name: str) -> str:
    name = name.replace(".block_sparse_moe.", ".mlp.")
    if ".experts.{e}." in name:
        head, tail = name.split(".experts.{e}.")
        return f"{head}.experts." + ("down_proj" if tail in ("down_proj", "w2") else "gate_up_proj")
    return name


@pytest.mark.parametrize("model_type", _TF_TYPES)
def test_every_table_names_and_sizes_the_modules_transformers_builds(model_type):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    from kvplan.configs.build import _read
    from parity import harness

    top = harness.shrunk_config(model_type)
    text = top.get_text_config(decoder=True)
    if model_type in _SHRUNK_EDITS:
        _SHRUNK_EDITS[model_type](text)
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        if model_type in _IN_WRAPPER:
            from transformers import AutoModelForImageTextToText

            model = (getattr(transformers, _WRAPPER_CLASS[model_type])._from_config(top)
                     if model_type in _WRAPPER_CLASS else AutoModelForImageTextToText.from_config(top))
        else:
            model = (getattr(transformers, _CAUSAL_CLASS[model_type])._from_config(
                top if model_type in ("granite_docling", "kosmos-2", "kosmos-2.5") else text)
                     if model_type in _CAUSAL_CLASS
                     else AutoModelForCausalLM.from_config(text if text is not top else top))
    theirs: dict[str, int] = {}
    # a router's per-expert bias, a buffer in transformers and a tensor in the checkpoints (LFM2-MoE's expert_bias)
    tensors = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers()
                                                if n.endswith(("e_score_correction_bias", ".expert_bias"))]
    if model_type in _IN_WRAPPER:
        tensors = [(n.replace("model.language_model.", "model.", 1), t) for n, t in tensors
                   if n.startswith(("model.language_model.", "lm_head."))]
    # the towers a causal LM builds beside its text model (Phi-4-multimodal's embed_tokens_extend), not counted
    tensors = [(n, t) for n, t in tensors if not n.startswith(_THEIRS_DROPPED.get(model_type, ()))]
    for name, tensor in tensors:  # a module's weight and bias under its name; a bare parameter under its own
        key = name.rsplit(".", 1)[0] if name.endswith((".weight", ".bias")) else name
        key = key[: -len("_bias")] if key.endswith("_proj_bias") else key  # gpt-oss: experts.gate_up_proj_bias
        for pattern, merged in _THEIRS_MERGED.get(model_type, ()):
            key = re.sub(pattern, merged, key)
        theirs[key] = theirs.get(key, 0) + tensor.numel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = harness.saved_form(top)
        if model_type in _IN_WRAPPER and "tie_word_embeddings" in saved:
            # the shrunk text_config writes out Qwen3VLMoeTextConfig's default tie_word_embeddings True, which the
            # wrapper (whose False transformers 5.25 ties by) overrides; the real checkpoints' text_config leaves it
            # out (model_specs/qwen3-vl-30b-a3b.json), so kvplan reads the wrapper's
            saved["text_config"].pop("tie_word_embeddings", None)
        if model_type == "cohere_compass":
            # theirs is the text CohereCompassForCausalLM (CohereCompassTextConfig ties by default, and vLLM 0.34
            # asserts the tie); the saved wrapper writes CohereCompassConfig's default False, whose value kvplan
            # takes over the nested one (build._WRAPPER_WINS): dropped so both sides describe the tied text model
            saved.pop("tie_word_embeddings", None)
        family, f, _, layers, dims = _read(saved, f"modules:{model_type}")
    assert f.model_type in TABLES
    ours: dict[str, int] = {}
    for m in table(f, layers, dims):
        name = ("" if m.top else "model.") + _as_transformers(m.name)
        for theirs_old, theirs_new in _RENAMED.get(model_type, ()):
            name = name.replace(theirs_old, theirs_new)
        for pattern, theirs_new in _CHECKPOINT_NAMES.get(model_type, ()):
            name = re.sub(pattern, theirs_new, name)
        ours[name] = ours.get(name, 0) + m.weight + m.other
    assert ours == theirs
    assert sum(ours.values()) == family.params(f, layers, dims)[0]


# -- refusals: one line, with the --weights hint ---------------------------------------------------------------

def _refused(tmp_path, raw: dict, reason: str) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(raw))
    plan = _cli("estimate", str(path), "--gpu", "h100", "--context", "8k")
    assert plan.returncode == 2, plan.stderr
    assert len(plan.stderr.strip().splitlines()) == 1 and "Traceback" not in plan.stderr
    assert "not known from its config" in plan.stderr and reason in plan.stderr and "--weights" in plan.stderr


def test_a_model_type_without_a_per_module_count_is_refused(tmp_path, monkeypatch):
    # (falcon had no table before configs/weight_tables/classic.py, GPT-Neo before weight_tables/rest.py, RWKV before
    # weight_tables/hybrid_more.py: its table is taken away here, so that it stands for a family without one)
    from kvplan.configs import weight_tables

    monkeypatch.delitem(weight_tables.TABLES, "rwkv")
    raw = json.loads((SPECS / "rwkv-4-430m-pile.json").read_text())
    raw["context_length"] = 8192  # no context warning at --context 8k: the refusal is the one line
    raw["quantization_config"] = {
        "quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["re:.*self_attn.*"],
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
                                                                   "strategy": "channel"}}}}
    _refused(tmp_path, raw, "no per-module count of model_type 'rwkv'")


def test_a_list_that_picks_some_experts_is_refused(tmp_path):
    quant = {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["*experts.[0-1].*"]}
    _refused(tmp_path, _tiny(quant), "single routed experts")
    regex = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["re:.*experts\\.(0|1)\\."],
             "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                        "strategy": "group", "group_size": 32}}}}
    _refused(tmp_path, _tiny(regex), "names some of the experts of layers.1.mlp")


def test_a_table_that_does_not_add_up_is_not_used(monkeypatch):
    from kvplan.configs import weight_tables

    real = weight_tables.TABLES["deepseek_v3"]
    monkeypatch.setitem(weight_tables.TABLES, "deepseek_v3", lambda *a: real(*a)[1:])  # drops the embeddings
    quant = {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["*self_attn*"]}
    model = build_model(_tiny(quant), "tiny")
    assert model.weight_bytes == 0
    assert any("per-module count of model_type 'deepseek_v3' (86,692 parameters) differs from its parameter "
               "count (94,884)" in n for n in model.notes)


def test_a_split_of_a_table_is_the_sum_of_its_linear_weights():
    from kvplan.configs.weight_tables import Module

    modules = [Module("layers.0.a", 10), Module("layers.0.b", 20, 5), Module("norm", 0, 7, "norms"),
               Module("layers.0.mlp.experts.{e}.w", 8 * 4, 0, "experts", 8), Module("lm_head", 6, 0, "lm_head", top=True)]
    s = split(modules, Matcher(MODELOPT, ("*.b",)), quantizes_head=False)
    assert s.quantized == 10 + 32 and s.kept == {"attention": 20, "lm_head": 6}
