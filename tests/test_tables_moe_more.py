"""Per-module tables of dots.llm1 (dots1), HunYuan-MoE (hunyuan_v1_moe), OLMoE, PhiMoE, the Granite MoEs (granitemoe,
granitemoeshared, granitemoe_swa) and JetMoE (configs/weight_tables/moe_more.py), and the parameter counts they
mirror. The configs below carry the fields of published checkpoints as public files quote them (each says where);
every figure is worked out by hand from the config and the module shapes of transformers 5.25 (modeling_dots1.py,
modeling_hunyuan_v1_moe.py, modeling_olmoe.py, modeling_phimoe.py, modeling_granitemoe*.py). What vLLM builds whole
on every TP rank: the module's docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_load import config_weights_per_gpu
from tests.weight_table_checks import adds_up as _adds_up, per_gpu as _per_gpu

# rednote-hilab/dots.llm1.inst, as the trimmed config.json of its MLX conversion (dots.llm1.inst-mixed-4-6bit) is
# quoted in a public test file, the MLX quantization block left out
DOTS_LLM1 = {
    "model_type": "dots1", "architectures": ["Dots1ForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 62,
    "intermediate_size": 10944, "num_attention_heads": 32, "num_key_value_heads": 32, "rms_norm_eps": 1e-05,
    "vocab_size": 152064, "first_k_dense_replace": 1, "moe_intermediate_size": 1408, "n_routed_experts": 128,
    "n_shared_experts": 2, "num_experts_per_tok": 6, "norm_topk_prob": True, "routed_scaling_factor": 2.5,
    "max_position_embeddings": 32768, "rope_theta": 10000000, "scoring_func": "sigmoid", "attention_bias": False,
    "tie_word_embeddings": False}
# tencent/Hunyuan-A13B-Instruct's config.json fields as a public test file quotes them (tie_word_embeddings not
# among them: HunYuanMoEV1Config's default, False)
HUNYUAN_A13B = {
    "architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan_v1_moe", "hidden_size": 4096,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "intermediate_size": 3072, "vocab_size": 128167, "torch_dtype": "bfloat16", "num_experts": 64,
    "moe_intermediate_size": [3072] * 32, "moe_topk": [8] * 32, "num_shared_expert": [1] * 32,
    "max_position_embeddings": 32768}
# allenai/OLMoE-1B-7B-0924's config.json fields as public test files quote them
OLMOE_1B_7B = {
    "model_type": "olmoe", "architectures": ["OlmoeForCausalLM"], "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 1024, "num_hidden_layers": 16, "num_experts": 64, "num_experts_per_tok": 8,
    "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 50304, "tie_word_embeddings": False,
    "max_position_embeddings": 4096}
# microsoft/Phi-3.5-MoE-instruct's widths as a public test file quotes them (a config trimmed for an MLX port);
# attention_bias and lm_head_bias set here (PhimoeConfig's defaults are False)
PHI_35_MOE = {
    "model_type": "phimoe", "architectures": ["PhiMoEForCausalLM"], "hidden_size": 4096, "intermediate_size": 6400,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 16,
    "num_experts_per_tok": 2, "vocab_size": 32064, "attention_bias": True, "lm_head_bias": True,
    "tie_word_embeddings": False, "max_position_embeddings": 131072}
# ibm-granite/granite-3.1-3b-a800m-instruct's config.json fields as a public test file quotes them
GRANITE_31_3B = {
    "architectures": ["GraniteMoeForCausalLM"], "hidden_act": "silu", "hidden_size": 1536, "intermediate_size": 512,
    "max_position_embeddings": 131072, "model_type": "granitemoe", "num_attention_heads": 24,
    "num_experts_per_tok": 8, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 40,
    "rope_theta": 10000000.0, "tie_word_embeddings": True, "vocab_size": 49155}


# -- dots.llm1 ---------------------------------------------------------------------------------------------------

def test_dots_llm1_counts_its_dense_first_layer_q_k_norms_and_score_bias():
    # hidden 4,096, 62 layers, 32 heads and 32 KV heads of 128, no biases. Every layer: q/k/v/o 4 x 4,096 x 4,096 =
    # 67,108,864, q_norm and k_norm 2 x 128, two norms 8,192: 67,117,312. Layer 0 (first_k_dense_replace 1) a dense
    # MLP 3 x 4,096 x 10,944 = 134,479,872; layers 1-61 the MoE: 128 experts 128 x 3 x 4,096 x 1,408 =
    # 2,214,592,512, router 128 x 4,096 = 524,288, its e_score_correction_bias 128, shared experts of 2 x 1,408:
    # 3 x 4,096 x 2,816 = 34,603,008, together 2,249,719,936. Embeddings and an untied head 2 x 152,064 x 4,096 =
    # 1,245,708,288, the final norm 4,096. (Before: every layer a MoE, no q/k norms, no bias: 144,889,597,952)
    total = 62 * 67_117_312 + 134_479_872 + 61 * 2_249_719_936 + 1_245_708_288 + 4_096
    model = build_model(DOTS_LLM1, "dots1")
    assert model.param_count == total == 142_774_381_696
    _adds_up(DOTS_LLM1, "dots1")


def test_dots_llm1_keeps_norms_routers_and_score_biases_whole():
    model = build_model(DOTS_LLM1, "dots1")
    # whole: 62 x (two norms 8,192 + q/k norms 256) + 61 x (router 524,288 + bias 128) + the final norm 4,096
    whole = 62 * 8_448 + 61 * 524_416 + 4_096
    assert whole == 32_517_248 and model.weight_replicated_bytes == 2 * whole == 65_034_496
    # TP 2: (285,548,763,392 - 65,034,496) / 2 + 65,034,496 (before: 144,889,597,952, an even split of the old count)
    assert model.weight_bytes == 2 * 142_774_381_696
    assert _per_gpu(model, 62, 2) == 142_741_864_448 + 65_034_496 == 142_806_898_944


def test_dots1_with_another_topk_method_has_no_score_bias_and_moe_layer_freq_is_refused():
    # vLLM's dots1.py builds gate.e_score_correction_bias only for topk_method noaux_tc: 61 x 128 fewer
    assert build_model(dict(DOTS_LLM1, topk_method="greedy"), "dots1-greedy").param_count == 142_774_381_696 - 61 * 128
    _adds_up(dict(DOTS_LLM1, topk_method="greedy"), "dots1-greedy")
    family, f, _, layers, dims = _read(dict(DOTS_LLM1, moe_layer_freq=2), "dots1-freq")
    assert table(f, layers, dims) == []


# -- HunYuan-MoE -------------------------------------------------------------------------------------------------

def test_hunyuan_a13b_keeps_its_norms_and_routers_whole():
    # hidden 4,096, 32 layers, 32 heads and 8 KV heads of 128: q/o 2 x 4,096 x 4,096 + k/v 2 x 4,096 x 1,024 =
    # 41,943,040, query/key_layernorm 2 x 128, two norms 8,192, router mlp.gate.wg 64 x 4,096 = 262,144, 64 experts
    # of 3,072 64 x 3 x 4,096 x 3,072 = 2,415,919,104, shared_mlp 3 x 4,096 x 3,072 = 37,748,736: 2,495,881,472 a
    # layer; embeddings and an untied head 2 x 128,167 x 4,096 = 1,049,944,064, the final norm 4,096
    model = build_model(HUNYUAN_A13B, "hunyuan")
    assert model.param_count == 32 * 2_495_881_472 + 1_049_944_064 + 4_096 == 80_918_155_264
    _adds_up(HUNYUAN_A13B, "hunyuan")
    # whole: 32 x (8,192 + 256 + 262,144) + 4,096 = 8,663,040 parameters
    assert model.weight_replicated_bytes == 2 * (32 * 270_592 + 4_096) == 17_326_080
    # TP 2: (161,836,310,528 - 17,326,080) / 2 + 17,326,080, in kvplan's plan and vLLM 0.34's profile (the
    # Transformers backend: nothing of this family in the float32 rules)
    assert _per_gpu(model, 32, 2) == 80_909_492_224 + 17_326_080 == 80_926_818_304
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 80_926_818_304


# -- OLMoE -------------------------------------------------------------------------------------------------------

def test_olmoe_1b_7b_counts_q_norm_and_k_norm_over_the_whole_projections():
    # hidden 2,048, 16 layers, 16 heads and 16 KV heads of 128: q/k/v/o 4 x 2,048 x 2,048 = 16,777,216, q_norm over
    # hidden 2,048 and k_norm over 128 x 16 = 2,048 (OlmoeAttention; uncounted before), two norms 4,096, router
    # 64 x 2,048 = 131,072, 64 experts of 1,024 64 x 3 x 2,048 x 1,024 = 402,653,184: 419,569,664 a layer;
    # embeddings and head 2 x 50,304 x 2,048 = 206,045,184, final norm 2,048 (published: 6.92B)
    model = build_model(OLMOE_1B_7B, "olmoe")
    assert model.param_count == 16 * 419_569_664 + 206_045_184 + 2_048 == 6_919_161_856
    _adds_up(OLMOE_1B_7B, "olmoe")


def test_olmoe_1b_7b_keeps_its_whole_width_q_k_norms_and_routers_whole():
    model = build_model(OLMOE_1B_7B, "olmoe")
    # whole: 16 x (4,096 + 2,048 + 2,048 + 131,072) + 2,048 = 2,230,272 parameters
    assert model.weight_replicated_bytes == 2 * (16 * 139_264 + 2_048) == 4_460_544
    # TP 2: (13,838,323,712 - 4,460,544) / 2 + 4,460,544
    assert _per_gpu(model, 16, 2) == 6_916_931_584 + 4_460_544 == 6_921_392_128
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 6_921_392_128


# -- PhiMoE ------------------------------------------------------------------------------------------------------

def test_phi_3_5_moe_counts_layernorm_and_head_biases_and_keeps_o_proj_bias_whole():
    # hidden 4,096, 32 layers, 32 heads and 8 KV heads of 128: q/o 2 x 4,096 x 4,096 + k/v 2 x 4,096 x 1,024 =
    # 41,943,040 and their biases 4,096 + 2 x 1,024 + 4,096 = 10,240; two LayerNorms, weight and bias, 4 x 4,096
    # (the biases uncounted before); router 16 x 4,096 = 65,536; 16 experts of 6,400 16 x 3 x 4,096 x 6,400 =
    # 1,258,291,200: 1,300,326,400 a layer. Embeddings 32,064 x 4,096 and the head with its bias 32,064 x 4,097,
    # the final LayerNorm 2 x 4,096 (published: 41.9B)
    model = build_model(PHI_35_MOE, "phimoe")
    total = 32 * 1_300_326_400 + 32_064 * 4_096 + 32_064 * 4_097 + 8_192
    assert model.param_count == total == 41_873_153_344
    _adds_up(PHI_35_MOE, "phimoe")
    # whole: 32 x (LayerNorms 16,384 + router 65,536 + o_proj's bias 4,096: a RowParallelLinear's) + 8,192; the
    # head's bias splits with the vocabulary
    assert model.weight_replicated_bytes == 2 * (32 * 86_016 + 8_192) == 5_521_408
    # TP 4: (83,746,306,688 - 5,521,408) / 4 + 5,521,408
    assert _per_gpu(model, 32, 4) == 20_935_196_320 + 5_521_408 == 20_940_717_728


# -- Granite MoE -------------------------------------------------------------------------------------------------

def test_granite_3_1_3b_a800m_keeps_norms_and_routers_whole():
    # hidden 1,536, 32 layers, 24 heads and 8 KV heads of 64: q/o 2 x 1,536 x 1,536 + k/v 2 x 1,536 x 512 =
    # 6,291,456, two norms 3,072, router 40 x 1,536 = 61,440, 40 experts of 512 40 x 3 x 1,536 x 512 = 94,371,840:
    # 100,727,808 a layer; the tied embeddings 49,155 x 1,536 = 75,502,080, the final norm 1,536 (published: 3.3B)
    model = build_model(GRANITE_31_3B, "granitemoe")
    assert model.param_count == 32 * 100_727_808 + 75_502_080 + 1_536 == 3_298_793_472
    modules = _adds_up(GRANITE_31_3B, "granitemoe")
    assert {m.name for m in modules if m.experts} >= {"layers.0.block_sparse_moe.input_linear",
                                                      "layers.0.block_sparse_moe.output_linear"}
    # whole: 32 x (3,072 + 61,440) + 1,536 = 2,065,920 parameters
    assert model.weight_replicated_bytes == 2 * (32 * 64_512 + 1_536) == 4_131_840
    # TP 2: (6,597,586,944 - 4,131,840) / 2 + 4,131,840
    assert _per_gpu(model, 32, 2) == 3_296_727_552 + 4_131_840 == 3_300_859_392
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 3_300_859_392


def test_granitemoe_shared_counts_its_shared_mlp_and_swa_its_sinks():
    # Granite 3.1 3B-A800M's widths with a shared MLP of 1,024 (a config written here): shared_mlp input_linear
    # 1,536 x 2,048 and output_linear 1,024 x 1,536 = 4,718,592 a layer (uncounted before)
    shared = dict(GRANITE_31_3B, model_type="granitemoeshared", shared_intermediate_size=1024,
                  architectures=["GraniteMoeSharedForCausalLM"])
    assert build_model(shared, "shared").param_count == 3_298_793_472 + 32 * 4_718_592 == 3_449_788_416
    _adds_up(shared, "shared")
    # GraniteMoe-SWA: besides, one sink a query head on every layer, 24 (split with the heads in vLLM: not whole)
    swa = dict(shared, model_type="granitemoe_swa", architectures=["GraniteMoeSWAForCausalLM"])
    model = build_model(swa, "swa")
    assert model.param_count == 3_449_788_416 + 32 * 24 == 3_449_789_184
    _adds_up(swa, "swa")
    assert model.weight_replicated_bytes == 4_131_840


def test_granite_fp8_keeps_routers_norms_and_embeddings_in_bf16():
    # compressed-tensors FP8 (per-channel weights, dynamic per-token activations) with llm-compressor's Granite MoE
    # ignore list (lm_head and re:.*block_sparse_moe.router, as its granite4 examples write it): a config written
    # here, not a published checkpoint's. Quantized: 32 x (6,291,456 + 94,371,840) = 3,221,225,472 weights at 1 B;
    # in BF16 the tied embeddings 75,502,080, the norms 32 x 3,072 + 1,536 and the routers 32 x 61,440: 77,568,000
    # and a float32 scale per output row: 32 x (q 1,536 + k 512 + v 512 + o 1,536 + 40 experts x (1,024 + 1,536))
    quant = {"quant_method": "compressed-tensors", "format": "float-quantized",
             "ignore": ["lm_head", "re:.*block_sparse_moe.router"],
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                 "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False},
                 "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True,
                                       "symmetric": True}}}}
    model = build_model(dict(GRANITE_31_3B, quantization_config=quant), "granite-fp8")
    assert model.param_count == 3_221_225_472 + 77_568_000
    rows = 32 * (1536 + 512 + 512 + 1536 + 40 * (1024 + 1536))
    assert model.weight_bytes == 3_221_225_472 + rows * 4 + 2 * 77_568_000 == 3_389_992_960
    assert any("read module by module" in n for n in model.notes)
    # whole on every TP rank: the BF16 norms and routers (4,131,840 B, as unquantized) and the channel scales of the
    # row-parallel o_proj and the experts' output_linear (vLLM's FusedMoE w2): 32 x (1,536 + 40 x 1,536) x 4 B
    assert model.weight_replicated_bytes == 4_131_840 + 4 * 32 * (1536 + 40 * 1536) == 12_192_768


# -- JetMoE ------------------------------------------------------------------------------------------------------

def test_jetmoe_table_names_the_attention_experts_and_holds_their_output_biases_whole():
    # JetMoeConfig's widths (jetmoe/JetMoE-8B: hidden 2,048, 24 layers, 16 KV heads of 128, 8 experts of 5,632,
    # the head tied by default). A layer: kv_proj 2,048 x 4,096 = 8,388,608; attention experts 8 x 2 x 2,048 x
    # 2,048 = 67,108,864, their router 8 x 2,048 = 16,384 and output bias 2,048; MLP experts 8 x 3 x 2,048 x 5,632
    # = 276,824,064, router 16,384, bias 2,048; two norms 4,096: 352,362,496; embeddings 32,000 x 2,048
    raw = {"model_type": "jetmoe", "architectures": ["JetMoeForCausalLM"], "hidden_size": 2048,
           "num_hidden_layers": 24, "num_key_value_heads": 16, "kv_channels": 128, "intermediate_size": 5632,
           "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000, "max_position_embeddings": 4096}
    model = build_model(raw, "jetmoe")
    assert model.param_count == 24 * 352_362_496 + 32_000 * 2_048 + 2_048 == 8_522_237_952
    _adds_up(raw, "jetmoe")
    # whole (vLLM serves no JetMoE: kvplan's reading): 24 x (norms 4,096 + routers 32,768 + biases 4,096) + 2,048
    assert model.weight_replicated_bytes == 2 * (24 * 40_960 + 2_048) == 1_970_176


# -- Solar Open --------------------------------------------------------------------------------------------------

# upstage/Solar-Open-100B's config.json as a public test file quotes it ("a faithful slice"; no attention_bias)
SOLAR_OPEN_100B = {
    "model_type": "solar_open", "architectures": ["SolarOpenForCausalLM"], "partial_rotary_factor": 1.0,
    "hidden_size": 4096, "num_hidden_layers": 48, "num_attention_heads": 64, "head_dim": 128,
    "num_key_value_heads": 8, "vocab_size": 196608, "intermediate_size": 10240, "moe_intermediate_size": 1280,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000, "max_position_embeddings": 131072, "n_routed_experts": 128,
    "n_shared_experts": 1, "norm_topk_prob": True, "routed_scaling_factor": 1.0, "num_experts_per_tok": 8,
    "tie_word_embeddings": False, "first_k_dense_replace": 0}


def test_solar_open_100b_counts_the_score_bias_and_keeps_it_whole_with_the_router():
    # hidden 4,096, 48 layers, 64 heads and 8 KV heads of 128: q/o 2 x 4,096 x 8,192 + k/v 2 x 4,096 x 1,024 =
    # 75,497,472, two norms 8,192, 128 experts of 1,280 128 x 3 x 4,096 x 1,280 = 2,013,265,920, router 128 x
    # 4,096 = 524,288 and its e_score_correction_bias 128 (uncounted before), one shared expert 3 x 4,096 x 1,280
    # = 15,728,640: 2,105,024,640 a layer; embeddings and head 2 x 196,608 x 4,096 = 1,610,612,736, final norm
    model = build_model(SOLAR_OPEN_100B, "solar_open")
    assert model.param_count == 48 * 2_105_024_640 + 1_610_612_736 + 4_096 == 102_651_799_552
    _adds_up(SOLAR_OPEN_100B, "solar_open")
    # whole: 48 x (8,192 + 524,288 + 128) + 4,096 = 25,569,280 parameters
    assert model.weight_replicated_bytes == 2 * (48 * 532_608 + 4_096) == 51_138_560
    # TP 4: (205,303,599,104 - 51,138,560) / 4 + 51,138,560
    assert _per_gpu(model, 48, 4) == 51_313_115_136 + 51_138_560 == 51_364_253_696


# -- Sarvam-MoE (Ling's table: vLLM's SarvamMoEForCausalLM is BailingMoeForCausalLM) ---------------------------

def test_sarvam_moe_reads_with_lings_table_under_the_checkpoint_names():
    # transformers 5.25 SarvamMoeConfig's defaults (tests/data/configs/transformers-5.25-defaults.json): hidden
    # 4,096, 19 layers, 64 heads and 4 KV heads of 64, layer 0 dense (8,192), 18 MoE layers of 128 experts of 1,024
    # and one shared, vocab 262,144, untied. A layer: attention.query_key_value 4,096 x (64 + 8) x 64 = 18,874,368,
    # attention.dense 4,096 x 4,096 = 16,777,216, query / key_layernorm nn.LayerNorms of 64 with biases (vLLM's
    # bailing_moe.py without use_rmsnorm) 256, two norms 8,192: 35,660,032. Dense MLP 3 x 4,096 x 8,192 =
    # 100,663,296; MoE: experts 128 x 3 x 4,096 x 1,024 = 1,610,612,736, router 524,288, expert_bias 128, shared
    # 3 x 4,096 x 1,024 = 12,582,912: 1,623,720,064
    defaults = json.loads((Path(__file__).parent / "data/configs/transformers-5.25-defaults.json").read_text())
    raw = dict(defaults["sarvam_moe"], architectures=["SarvamMoEForCausalLM"])
    model = build_model(raw, "sarvam")
    total = 19 * 35_660_032 + 100_663_296 + 18 * 1_623_720_064 + 2 * 262_144 * 4_096 + 4_096
    assert model.param_count == total == 32_152_652_800
    modules = _adds_up(raw, "sarvam")
    assert "layers.1.attention.query_key_value" in {m.name for m in modules}
    # whole: 19 x (8,192 + 256) + 18 x (router 524,288 + expert_bias 128) + the final norm: 9,604,096 parameters
    assert model.weight_replicated_bytes == 2 * (19 * 8_448 + 18 * 524_416 + 4_096) == 19_208_192
    # TP 4: (64,305,305,600 - 19,208,192) / 4 + 19,208,192
    assert _per_gpu(model, 19, 4) == 16_071_524_352 + 19_208_192 == 16_090_732_544


# -- AFMoE -------------------------------------------------------------------------------------------------------

# arcee-ai/Trinity-Nano-Preview's config.json as a public test file quotes it (the fields the count reads)
TRINITY_NANO = {
    "architectures": ["AfmoeForCausalLM"], "model_type": "afmoe", "global_attn_every_n_layers": 4, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072, "max_position_embeddings": 131072,
    "moe_intermediate_size": 256, "num_attention_heads": 8, "num_dense_layers": 2, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 56, "num_key_value_heads": 2, "num_shared_experts": 1,
    "rms_norm_eps": 1e-05, "rope_theta": 10000, "sliding_window": 2048, "tie_word_embeddings": False,
    "vocab_size": 200192}


def test_trinity_nano_keeps_four_norms_q_k_norms_router_and_expert_bias_whole():
    # hidden 1,024, 56 layers, 8 heads and 2 KV heads of 128: q/o 2 x 1,024 x 1,024 + k/v 2 x 1,024 x 256 =
    # 2,621,440, q/k norms 256, the output gate self_attn.gate_proj 1,024 x 1,024 = 1,048,576, four norms 4,096:
    # 3,674,368. Layers 0-1 a dense MLP 3 x 1,024 x 3,072 = 9,437,184; layers 2-55 router 128 x 1,024 = 131,072,
    # expert_bias 128, one shared expert 3 x 1,024 x 256 = 786,432, experts 128 x 3 x 1,024 x 256 = 100,663,296:
    # 101,580,928. Embeddings and head 2 x 200,192 x 1,024 = 409,993,216, final norm 1,024
    model = build_model(TRINITY_NANO, "afmoe")
    total = 56 * 3_674_368 + 2 * 9_437_184 + 54 * 101_580_928 + 409_993_216 + 1_024
    assert model.param_count == total == 6_120_003_328
    _adds_up(TRINITY_NANO, "afmoe")
    # whole: 56 x (4,096 + 256) + 54 x (131,072 + 128) + 1,024 = 7,329,536 parameters
    assert model.weight_replicated_bytes == 2 * (56 * 4_352 + 54 * 131_200 + 1_024) == 14_659_072
    # TP 2: (12,240,006,656 - 14,659,072) / 2 + 14,659,072
    assert _per_gpu(model, 56, 2) == 6_112_673_792 + 14_659_072 == 6_127_332_864


# -- EXAONE MoE --------------------------------------------------------------------------------------------------

def test_exaone_moe_keeps_q_k_norms_router_and_score_bias_whole():
    # the widths of vLLM's own EXAONE-MoE test config (tests/models/.../exaone_moe, 4 layers: hidden 6,144, 64 heads
    # and 8 KV heads of 128, dense 18,432, 128 experts of 2,048 and one shared, vocab 153,600), its is_moe_layer
    # written as first_k_dense_replace 1. A layer: q/o 2 x 6,144 x 8,192 + k/v 2 x 6,144 x 1,024 = 113,246,208,
    # q/k norms 256, two norms 12,288: 113,258,752. Layer 0 a dense MLP 3 x 6,144 x 18,432 = 339,738,624; layers
    # 1-3 experts 128 x 3 x 6,144 x 2,048 = 4,831,838,208, router 786,432, e_score_correction_bias 128, shared
    # 3 x 6,144 x 2,048 = 37,748,736: 4,870,373,504. Embeddings and head 2 x 153,600 x 6,144 = 1,887,436,800
    raw = {"architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "first_k_dense_replace": 1,
           "head_dim": 128, "hidden_act": "silu", "hidden_size": 6144, "intermediate_size": 18432,
           "layer_types": ["sliding_attention"] * 3 + ["full_attention"], "max_position_embeddings": 262144,
           "moe_intermediate_size": 2048, "num_attention_heads": 64, "num_experts": 128, "num_experts_per_tok": 8,
           "num_hidden_layers": 4, "num_key_value_heads": 8, "num_shared_experts": 1, "sliding_window": 4,
           "tie_word_embeddings": False, "topk_method": "noaux_tc", "vocab_size": 153600}
    model = build_model(raw, "exaone_moe")
    total = 4 * 113_258_752 + 339_738_624 + 3 * 4_870_373_504 + 1_887_436_800 + 6_144
    assert model.param_count == total == 17_291_337_088
    modules = _adds_up(raw, "exaone_moe")
    assert "layers.1.mlp.e_score_correction_bias" in {m.name for m in modules}
    # whole: 4 x (12,288 + 256) + 3 x (786,432 + 128) + 6,144 = 2,416,000 parameters
    assert model.weight_replicated_bytes == 2 * (4 * 12_544 + 3 * 786_560 + 6_144) == 4_832_000
    # TP 8: (34,582,674,176 - 4,832,000) / 8 + 4,832,000
    assert _per_gpu(model, 4, 8) == 4_322_230_272 + 4_832_000 == 4_327_062_272


# -- MiniCPM5-MoE ------------------------------------------------------------------------------------------------

def test_minicpm5_moe_counts_the_score_bias_and_names_the_gated_q_proj():
    # transformers 5.25 MiniCPM5MoeConfig's defaults (tests/data/configs/transformers-5.25-defaults.json): hidden
    # 2,048, 28 layers (layer 0 dense), 32 heads and 2 KV heads of 128, no biases, 160 experts of 512 and one shared,
    # vocab 130,560, untied. A layer: q_proj (queries and gates) 2,048 x 8,192 = 16,777,216, k/v 2 x 2,048 x 256,
    # o_proj 4,096 x 2,048: 26,214,400, two norms 4,096. Dense MLP 3 x 2,048 x 8,192 = 50,331,648; MoE: experts
    # 160 x 3 x 2,048 x 512 = 503,316,480, router 327,680, e_score_correction_bias 160 (uncounted before), shared
    # 3 x 2,048 x 512 = 3,145,728: 506,790,048. Embeddings and head 2 x 130,560 x 2,048 = 534,773,760
    defaults = json.loads((Path(__file__).parent / "data/configs/transformers-5.25-defaults.json").read_text())
    raw = dict(defaults["minicpm5_moe"], architectures=["MiniCPM5MoeForCausalLM"])
    model = build_model(raw, "minicpm5")
    total = 28 * 26_218_496 + 50_331_648 + 27 * 506_790_048 + 534_773_760 + 2_048
    assert model.param_count == total == 15_002_556_640
    modules = _adds_up(raw, "minicpm5")
    assert next(m for m in modules if m.name == "layers.0.self_attn.q_proj").weight == 16_777_216
    # whole: 28 x 4,096 + 27 x (327,680 + 160) + 2,048 = 8,968,416 parameters
    assert model.weight_replicated_bytes == 2 * (28 * 4_096 + 27 * 327_840 + 2_048) == 17_936_832
    # TP 2: (30,005,113,280 - 17,936,832) / 2 + 17,936,832
    assert _per_gpu(model, 28, 2) == 14_993_588_224 + 17_936_832 == 15_011_525_056


# -- Hunyuan 3 ---------------------------------------------------------------------------------------------------

def test_hy_v3_keeps_q_k_norms_router_and_expert_bias_whole():
    # HYV3Config's defaults (transformers 5.25 configuration_hy_v3.py), written out: hidden 4,096, 80 layers (layer
    # 0 dense), 64 heads and 8 KV heads of 128, dense 13,312, 192 experts of 1,536 and one shared, vocab 120,832,
    # untied. A layer: q/o 2 x 4,096 x 8,192 + k/v 2 x 4,096 x 1,024 = 75,497,472, q/k norms 256, two norms 8,192.
    # Dense MLP 3 x 4,096 x 13,312 = 163,577,856; MoE: router 192 x 4,096 = 786,432, expert_bias 192, experts
    # 192 x 3 x 4,096 x 1,536 = 3,623,878,656, shared_mlp 3 x 4,096 x 1,536 = 18,874,368: 3,643,539,648
    raw = {"model_type": "hy_v3", "architectures": ["HYV3ForCausalLM"], "vocab_size": 120832, "hidden_size": 4096,
           "intermediate_size": 13312, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
           "head_dim": 128, "num_experts": 192, "num_experts_per_tok": 8, "num_shared_experts": 1,
           "moe_intermediate_size": 1536, "max_position_embeddings": 131072}
    model = build_model(raw, "hy_v3")
    total = 80 * 75_505_920 + 163_577_856 + 79 * 3_643_539_648 + 2 * 120_832 * 4_096 + 4_096
    assert model.param_count == total == 295_033_543_488
    modules = _adds_up(raw, "hy_v3")
    assert {"layers.1.mlp.router.gate", "layers.1.mlp.expert_bias"} <= {m.name for m in modules}
    # whole: 80 x (8,192 + 256) + 79 x (786,432 + 192) + 4,096 = 62,823,232 parameters
    assert model.weight_replicated_bytes == 2 * (80 * 8_448 + 79 * 786_624 + 4_096) == 125_646_464
    # TP 8: (590,067,086,976 - 125,646,464) / 8 + 125,646,464
    assert _per_gpu(model, 80, 8) == 73_742_680_064 + 125_646_464 == 73_868_326_528


# -- Cohere2-MoE -------------------------------------------------------------------------------------------------

def test_cohere2_moe_counts_one_norm_a_layer_and_its_shared_expert():
    # Cohere2MoeConfig's defaults (hidden 8,192, 40 layers, 64 heads of 128, 8 experts of 22,528, vocab 256,000,
    # the head tied) with 8 KV heads and one shared expert written here. A layer (a parallel block): q/o 2 x 8,192 x
    # 8,192 + k/v 2 x 8,192 x 1,024 = 150,994,944, one input_layernorm 8,192 (two before); router 8 x 8,192 =
    # 65,536, experts 8 x 3 x 8,192 x 22,528 = 4,429,185,024, shared 3 x 8,192 x 22,528 = 553,648,128 (uncounted
    # before): 5,133,901,824. Tied embeddings 256,000 x 8,192, final norm 8,192
    raw = {"model_type": "cohere2_moe", "architectures": ["Cohere2MoeForCausalLM"], "vocab_size": 256000,
           "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40, "num_attention_heads": 64,
           "num_key_value_heads": 8, "head_dim": 128, "num_experts": 8, "num_experts_per_tok": 2,
           "num_shared_experts": 1, "max_position_embeddings": 8192, "sliding_window": 4096}
    model = build_model(raw, "cohere2_moe")
    assert model.param_count == 40 * 5_133_901_824 + 256_000 * 8_192 + 8_192 == 207_453_233_152
    _adds_up(raw, "cohere2_moe")
    # whole: 40 x (8,192 + 65,536) + 8,192 = 2,957,312 parameters
    assert model.weight_replicated_bytes == 2 * (40 * 73_728 + 8_192) == 5_914_624
    # TP 8: (414,906,466,304 - 5,914,624) / 8 + 5,914,624
    assert _per_gpu(model, 40, 8) == 51_862_568_960 + 5_914_624 == 51_868_483_584


# -- FlexOlmo ----------------------------------------------------------------------------------------------------

def test_flex_olmo_counts_whole_width_q_k_norms_and_keeps_them_whole():
    # FlexOlmoConfig's defaults, written out (hidden 4,096, 32 layers, 32 heads and 32 KV heads of 128, 7 experts
    # of 11,008, vocab 100,352, untied). A layer: q/k/v/o 4 x 4,096 x 4,096 = 67,108,864, q_norm over 32 x 128 and
    # k_norm over 32 x 128 (uncounted before) 8,192, post_attention / post_feedforward_layernorm 8,192, router 7 x
    # 4,096 = 28,672, experts 7 x 3 x 4,096 x 11,008 = 946,864,128: 1,014,018,048
    raw = {"model_type": "flex_olmo", "architectures": ["FlexOlmoForCausalLM"], "vocab_size": 100352,
           "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 32, "num_experts": 7, "num_experts_per_tok": 5, "max_position_embeddings": 4096}
    model = build_model(raw, "flex_olmo")
    assert model.param_count == 32 * 1_014_018_048 + 2 * 100_352 * 4_096 + 4_096 == 33_270_665_216
    _adds_up(raw, "flex_olmo")
    # whole (vLLM's Transformers backend keeps a norm's full width): 32 x (8,192 + 8,192 + 28,672) + 4,096
    assert model.weight_replicated_bytes == 2 * (32 * 45_056 + 4_096) == 2_891_776
    # TP 4: (66,541,330,432 - 2,891,776) / 4 + 2,891,776
    assert _per_gpu(model, 32, 4) == 16_634_609_664 + 2_891_776 == 16_637_501_440


# -- Mellum ------------------------------------------------------------------------------------------------------

def test_mellum_counts_q_k_norms_and_keeps_them_whole_with_the_router():
    # MellumConfig's defaults, written out: hidden 2,304, 28 layers (all sparse), 32 heads and 4 KV heads of 128, 64
    # experts of 896, vocab 98,304, untied. A layer: q/o 2 x 2,304 x 4,096 + k/v 2 x 2,304 x 512 = 21,233,664, q/k
    # norms 2 x 128 (uncounted before), two norms 4,608, router 64 x 2,304 = 147,456, experts 64 x 3 x 2,304 x 896
    # = 396,361,728: 417,747,712. Embeddings and head 2 x 98,304 x 2,304 = 452,984,832, final norm 2,304
    raw = {"model_type": "mellum", "architectures": ["MellumForCausalLM"], "vocab_size": 98304, "hidden_size": 2304,
           "intermediate_size": 7168, "num_hidden_layers": 28, "num_attention_heads": 32, "num_key_value_heads": 4,
           "head_dim": 128, "moe_intermediate_size": 896, "num_experts": 64, "num_experts_per_tok": 8,
           "max_position_embeddings": 131072}
    model = build_model(raw, "mellum")
    assert model.param_count == 28 * 417_747_712 + 452_984_832 + 2_304 == 12_149_923_072
    _adds_up(raw, "mellum")
    # whole: 28 x (4,608 + 256 + 147,456) + 2,304 = 4,267,264 parameters
    assert model.weight_replicated_bytes == 2 * (28 * 152_320 + 2_304) == 8_534_528
    # TP 4: (24,299,846,144 - 8,534,528) / 4 + 8,534,528
    assert _per_gpu(model, 28, 4) == 6_072_827_904 + 8_534_528 == 6_081_362_432


# -- Doge --------------------------------------------------------------------------------------------------------

def test_doge_moe_holds_its_expert_embeddings_whole():
    # DogeConfig's defaults with is_moe: hidden 1,024, 32 layers, 8 heads and 8 KV heads of 128, MLP 2,048, 16,384
    # experts, vocab 32,768, untied. A layer: q/k/v/o 4 x 1,024 x 1,024 = 4,194,304, A 8, dt_proj 1,024 x 8 =
    # 8,192, q/k norms 256, two norms and two residual scales 4,096; the shared MLP 3 x 1,024 x 2,048 = 6,291,456,
    # router_gate 1,024 x 2 x floor(sqrt(16,384)) = 262,144, down_embed and up_embed 2 x 16,384 x 1,024 =
    # 33,554,432: 44,314,888. Embeddings and head 2 x 32,768 x 1,024, final norm 1,024
    raw = {"model_type": "doge", "architectures": ["DogeForCausalLM"], "vocab_size": 32768, "hidden_size": 1024,
           "intermediate_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 8, "is_moe": True,
           "num_experts": 16384, "num_experts_per_tok": 64, "max_position_embeddings": 2048}
    model = build_model(raw, "doge")
    assert model.param_count == 32 * 44_314_888 + 2 * 32_768 * 1_024 + 1_024 == 1_485_186_304
    _adds_up(raw, "doge")
    # whole on vLLM's Transformers backend: A, the q/k norms, norms and residual scales, and the two expert
    # embedding tables (nn.Embedding, which recursive_replace leaves as they are): 32 x 33,558,792 + 1,024
    assert model.weight_replicated_bytes == 2 * (32 * 33_558_792 + 1_024) == 2_147_764_736
    # TP 2: (2,970,372,608 - 2,147,764,736) / 2 + 2,147,764,736
    assert _per_gpu(model, 32, 2) == 411_303_936 + 2_147_764_736 == 2_559_068_672


# -- Beam --------------------------------------------------------------------------------------------------------

def test_beam_keeps_four_norms_q_k_norms_router_and_score_bias_whole():
    # BeamConfig's defaults, written out: hidden 5,120, 52 layers (the first 3 dense), 48 heads and 8 KV heads of 128,
    # dense 20,480, 256 experts of 2,560, vocab 151,936, untied. A layer: q/o 2 x 5,120 x 6,144 + k/v 2 x 5,120 x
    # 1,024 = 73,400,320, q/k norms 256, gate_proj 5,120 x 6,144 = 31,457,280, gate_bias 48, four norms 20,480:
    # 104,878,384. Dense MLP 3 x 5,120 x 20,480 = 314,572,800; MoE: experts 256 x 3 x 5,120 x 2,560 =
    # 10,066,329,600, router 1,310,720, e_score_correction_bias 256: 10,067,640,576
    raw = {"model_type": "beam", "architectures": ["BeamForCausalLM"], "vocab_size": 151936, "hidden_size": 5120,
           "intermediate_size": 20480, "num_hidden_layers": 52, "num_attention_heads": 48, "num_key_value_heads": 8,
           "head_dim": 128, "moe_intermediate_size": 2560, "num_experts": 256, "num_experts_per_tok": 8,
           "sliding_window": 512,
           "max_position_embeddings": 8192}
    model = build_model(raw, "beam")
    total = 52 * 104_878_384 + 3 * 314_572_800 + 49 * 10_067_640_576 + 2 * 151_936 * 5_120 + 5_120
    assert model.param_count == total == 501_267_612_352
    _adds_up(raw, "beam")
    # whole: 52 x (20,480 + 256) + 49 x (1,310,720 + 256) + 5,120 = 65,321,216 parameters (gate_bias splits)
    assert model.weight_replicated_bytes == 2 * (52 * 20_736 + 49 * 1_310_976 + 5_120) == 130_642_432
    # TP 8: (1,002,535,224,704 - 130,642,432) / 8 + 130,642,432
    assert _per_gpu(model, 52, 8) == 125_300_572_784 + 130_642_432 == 125_431_215_216


# -- Flint -------------------------------------------------------------------------------------------------------

def test_flint_splits_its_sinks_with_the_heads_and_keeps_the_router_whole():
    # FlintConfig's defaults, written out: hidden 2,048, 49 layers (0 and 1 dense: mlp_only_layers), 32 heads and 4
    # KV heads of 128, dense 6,144, 256 experts of 512 and a shared expert of 1,024, vocab 150,144, untied. A layer:
    # q/o 2 x 2,048 x 4,096 + k/v 2 x 2,048 x 512 = 18,874,368, q/k norms 256, 32 sinks, two norms 4,096:
    # 18,878,752. Dense MLP 3 x 2,048 x 6,144 = 37,748,736; MoE: experts 256 x 3 x 2,048 x 512 = 805,306,368,
    # router 524,288, shared 3 x 2,048 x 1,024 = 6,291,456: 812,122,112
    raw = {"model_type": "flint", "architectures": ["FlintForCausalLM"], "vocab_size": 150144, "hidden_size": 2048,
           "intermediate_size": 6144, "num_hidden_layers": 49, "num_attention_heads": 32, "num_key_value_heads": 4,
           "head_dim": 128, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 1024,
           "num_experts": 256, "num_experts_per_tok": 6, "sliding_window": 513, "max_position_embeddings": 262144}
    model = build_model(raw, "flint")
    total = 49 * 18_878_752 + 2 * 37_748_736 + 47 * 812_122_112 + 2 * 150_144 * 2_048 + 2_048
    assert model.param_count == total == 39_785_287_456
    _adds_up(raw, "flint")
    # whole: 49 x (4,096 + 256) + 47 x 524,288 + 2,048 = 24,856,832 parameters
    assert model.weight_replicated_bytes == 2 * (49 * 4_352 + 47 * 524_288 + 2_048) == 49_713_664
    # TP 4: (79,570,574,912 - 49,713,664) / 4 + 49,713,664
    assert _per_gpu(model, 49, 4) == 19_880_215_312 + 49_713_664 == 19_929_928_976


# -- Kolibri 1 ---------------------------------------------------------------------------------------------------

def test_kolibri1_counts_four_norms_q_k_norms_and_the_score_bias():
    # Kolibri1Config's defaults, written out: hidden 2,560, 50 layers (all MoE), 48 heads and 4 KV heads of 128, 384
    # experts of 512 and a shared expert of 512, vocab 128,000, untied. A layer: q/o 2 x 2,560 x 6,144 + k/v 2 x
    # 2,560 x 512 = 34,078,720, q/k norms 256, four norms 10,240, router 384 x 2,560 = 983,040 and its bias 384,
    # experts 384 x 3 x 2,560 x 512 = 1,509,949,440, shared 3 x 2,560 x 512 = 3,932,160 (no gate: the old count's
    # hidden-wide shared_expert_gate is not built): 1,548,954,240
    raw = {"model_type": "kolibri1", "architectures": ["Kolibri1ForCausalLM"], "vocab_size": 128000,
           "hidden_size": 2560, "num_hidden_layers": 50, "num_attention_heads": 48, "num_key_value_heads": 4,
           "head_dim": 128, "moe_intermediate_size": 512, "num_experts": 384, "num_experts_per_tok": 6,
           "shared_expert_intermediate_size": 512, "sliding_window": 513, "max_position_embeddings": 262144}
    model = build_model(raw, "kolibri1")
    assert model.param_count == 50 * 1_548_954_240 + 2 * 128_000 * 2_560 + 2_560 == 78_103_074_560
    _adds_up(raw, "kolibri1")
    # whole: 50 x (10,240 + 256 + 983,040 + 384) + 2,560 = 49,698,560 parameters
    assert model.weight_replicated_bytes == 2 * (50 * 993_920 + 2_560) == 99_397_120
    # TP 4: (156,206,149,120 - 99,397,120) / 4 + 99,397,120
    assert _per_gpu(model, 50, 4) == 39_026_688_000 + 99_397_120 == 39_126_085_120


# -- Ergo --------------------------------------------------------------------------------------------------------

def test_ergo_names_its_checkpoint_tensors_from_the_top_and_counts_the_router_bias():
    # transformers 5.25 ErgoConfig's defaults (tests/data/configs/transformers-5.25-defaults.json): hidden 8,192, 64
    # layers (layer 0 dense), 64 heads and 8 KV heads of 128, dense 32,768, 256 experts of 4,096, shared 8,192, vocab
    # 262,144, untied. A layer: wqkv 8,192 x 80 x 128 = 83,886,080, wo 8,192 x 8,192 = 67,108,864, q/k norms 256,
    # four norms and two residual gates 49,152: 151,044,352. Dense up / down 2 x 8,192 x 32,768 = 536,870,912; MoE:
    # experts 256 x (2 x 8,192 x 4,096 + an output norm 8,192) = 17,181,966,336, router 2,097,152 and its bias 256
    # (uncounted before), shared up / down 2 x 8,192 x 8,192 and its norm 8,192: 17,318,289,664
    defaults = json.loads((Path(__file__).parent / "data/configs/transformers-5.25-defaults.json").read_text())
    raw = dict(defaults["ergo"], architectures=["ErgoForCausalLM"])
    model = build_model(raw, "ergo")
    total = 64 * 151_044_352 + 536_870_912 + 63 * 17_318_289_664 + 2 * 262_144 * 8_192 + 8_192
    assert model.param_count == total == 1_105_550_933_760
    modules = _adds_up(raw, "ergo")
    assert {"layers.1.feed_forward.gate_kernel", "tok_embeddings", "output"} <= {m.name for m in modules}
    # whole: 64 x (256 + 49,152) + 63 x (router 2,097,152 + bias 256 + expert norms 256 x 8,192 + shared norm 8,192)
    # + 8,192 = 267,943,680 parameters
    assert model.weight_replicated_bytes == 2 * (64 * 49_408 + 63 * 4_202_752 + 8_192) == 535_887_360
    # TP 8: (2,211,101,867,520 - 535,887,360) / 8 + 535,887,360
    assert _per_gpu(model, 64, 8) == 276_320_747_520 + 535_887_360 == 276_856_634_880


# -- Param2 ------------------------------------------------------------------------------------------------------

def test_param2moe_reads_under_sarvams_checkpoint_names():
    # transformers 5.25 Param2MoeConfig's defaults (tests/data/configs/transformers-5.25-defaults.json): hidden 2,048,
    # 21 layers (layer 0 dense), 32 heads and 8 KV heads of 64, dense 9,216, 64 experts of 2,048 and 2 shared,
    # vocab 128,000, the head tied. A layer: attention.query_key_value 2,048 x 48 x 64 = 6,291,456, attention.dense
    # 2,048 x 2,048 = 4,194,304, query / key_layernorm 128, two norms 4,096: 10,489,984. Dense MLP 3 x 2,048 x
    # 9,216 = 56,623,104; MoE: experts 64 x 3 x 2,048 x 2,048 = 805,306,368, router 131,072, expert_bias 64,
    # shared 3 x 2,048 x 4,096 = 25,165,824: 830,603,328
    defaults = json.loads((Path(__file__).parent / "data/configs/transformers-5.25-defaults.json").read_text())
    raw = dict(defaults["param2moe"], architectures=["Param2MoEForCausalLM"])
    model = build_model(raw, "param2")
    total = 21 * 10_489_984 + 56_623_104 + 20 * 830_603_328 + 128_000 * 2_048 + 2_048
    assert model.param_count == total == 17_151_125_376
    modules = _adds_up(raw, "param2")
    assert {"word_embeddings", "layers.1.attention.query_key_value", "layers.1.mlp.gate.expert_bias"} <= {
        m.name for m in modules}
    # whole: 21 x (4,096 + 128) + 20 x (131,072 + 64) + 2,048 = 2,713,472 parameters
    assert model.weight_replicated_bytes == 2 * (21 * 4_224 + 20 * 131_136 + 2_048) == 5_426_944
    # TP 8: (34,302,250,752 - 5,426,944) / 8 + 5,426,944
    assert _per_gpu(model, 21, 8) == 4_287_102_976 + 5_426_944 == 4_292_529_920


# -- the other tables add up to their counts on their config classes' defaults -------------------------------

@pytest.mark.parametrize("raw", [
    # AriaTextConfig's defaults, written out
    {"model_type": "aria_text", "architectures": ["AriaTextForCausalLM"], "vocab_size": 32000, "hidden_size": 4096,
     "intermediate_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "moe_num_experts": 8,
     "moe_topk": 2, "moe_num_shared_experts": 2, "max_position_embeddings": 2048},
], ids=lambda raw: raw["model_type"])
def test_the_table_adds_up_on_the_class_defaults(raw):
    _adds_up(raw, raw["model_type"])
