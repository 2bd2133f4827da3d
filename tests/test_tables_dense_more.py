"""Per-module tables of Command R (cohere), StarCoder2, Phi-2, OLMo 2, OLMo, Seed-OSS and the Llama-shaped SmolLM3 /
Ministral types (configs/weight_tables/dense_more.py), and the counters they mirror (configs/params_dense_more.py):
the parameters each counts and the bytes each TP rank holds whole, worked out here by hand from the configs below and
the module shapes of transformers 5.25 (modeling_cohere.py, modeling_starcoder2.py, modeling_phi.py,
modeling_olmo2.py, modeling_olmo.py, modeling_seed_oss.py). What vLLM 0.34 holds whole: the module's docstring.

No config of these families is bundled; the configs below carry the fields the counts read, with the values of the
published checkpoints' config.json as public sources quote them:
- CohereForAI/c4ai-command-r-v01 (hidden 8,192, 40 layers, 64 heads and 64 KV heads, intermediate 22,528, vocab
  256,000, tied, no use_qk_norm), as third-party loaders quote it in their tests;
- bigcode/starcoder2-3b (hidden 3,072, 30 layers, 24 heads and 2 KV heads, intermediate 12,288, vocab 49,152;
  use_bias and the tied head are Starcoder2Config's defaults), as third-party tests quote it;
- microsoft/phi-2 (hidden 2,560, 32 layers, 32 heads, intermediate 10,240, vocab 51,200, untied, no qk_layernorm),
  as sdpython's onnx-diagnostic example quotes it with a link to the config;
- allenai/OLMo-2-1124-7B and allenai/OLMo-7B-hf: hidden 4,096, 32 layers and 32 heads (the model cards), intermediate
  11,008, vocab 100,352 (OLMo 2) and 50,304 (OLMo), untied.
Configs with other fields (Cohere's use_qk_norm with 8 KV heads, Seed-OSS's bias flags, Phi's qk_layernorm) are
written here, not published ones.
"""

from __future__ import annotations

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from tests.weight_table_checks import per_gpu as _per_gpu

COMMAND_R = {"architectures": ["CohereForCausalLM"], "model_type": "cohere", "hidden_size": 8192,
             "intermediate_size": 22528, "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 64,
             "vocab_size": 256000, "max_position_embeddings": 8192, "logit_scale": 0.0625, "use_qk_norm": False,
             "tie_word_embeddings": True, "torch_dtype": "float16"}
STARCODER2_3B = {"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2", "hidden_size": 3072,
                 "intermediate_size": 12288, "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2,
                 "vocab_size": 49152, "max_position_embeddings": 16384, "sliding_window": 4096, "torch_dtype": "bfloat16"}
PHI_2 = {"architectures": ["PhiForCausalLM"], "model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 51200,
         "partial_rotary_factor": 0.4, "qk_layernorm": False, "tie_word_embeddings": False,
         "max_position_embeddings": 2048, "torch_dtype": "float16"}
OLMO_2_7B = {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": 4096,
             "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
             "vocab_size": 100352, "attention_bias": False, "tie_word_embeddings": False,
             "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
OLMO_7B = {"architectures": ["OlmoForCausalLM"], "model_type": "olmo", "hidden_size": 4096, "intermediate_size": 11008,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 50304,
           "attention_bias": False, "tie_word_embeddings": False, "max_position_embeddings": 2048,
           "torch_dtype": "float32"}
# written here: a small Seed-OSS with its SeedOssConfig flags left out (attention_bias true, attention_out_bias and
# mlp_bias false by default); hidden 256, 2 layers, 4 heads and 2 KV heads of 64, intermediate 512, vocab 1,000
SEED_OSS = {"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "hidden_size": 256,
            "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 64, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
CONFIGS = [COMMAND_R, STARCODER2_3B, PHI_2, OLMO_2_7B, OLMO_7B, SEED_OSS]


@pytest.mark.parametrize("raw", CONFIGS, ids=lambda raw: raw["model_type"])
def test_the_table_adds_up_to_the_family_count(raw):
    family, f, _, layers, dims = _read(raw, raw["model_type"])
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


# -- the counts (each was off before: the modules transformers builds, counted by hand) ----------------------------

def test_command_r_counts_one_layer_norm_a_layer():
    # a layer: q/k/v/o 4 x 8,192 x 8,192 = 268,435,456; mlp 3 x 8,192 x 22,528 = 553,648,128; input_layernorm 8,192
    # (CohereDecoderLayer has no second norm: before, 2 x 8,192 were counted) = 822,091,776; 40 layers + the tied
    # embeddings 256,000 x 8,192 + the final norm
    model = build_model(COMMAND_R, "command-r")
    assert model.param_count == 40 * 822_091_776 + 256_000 * 8_192 + 8_192 == 34_980_831_232


def test_cohere_use_qk_norm_counts_q_norm_and_k_norm_over_the_heads():
    # q_norm [64, 128] and k_norm [8, 128] a layer (CohereAttention with use_qk_norm): 72 x 128 = 9,216; with 8 KV
    # heads a layer is q, o 2 x 8,192 x 8,192 + k, v 2 x 8,192 x 1,024 = 150,994,944, mlp 553,648,128, norm 8,192
    # and 9,216: 704,660,480
    raw = dict(COMMAND_R, num_key_value_heads=8, use_qk_norm=True)
    layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 553_648_128 + 8_192 + 72 * 128
    assert layer == 704_660_480
    assert build_model(raw, "cohere-qk").param_count == 40 * layer + 256_000 * 8_192 + 8_192 == 30_283_579_392


def test_olmo_2_counts_q_norm_and_k_norm_over_the_whole_projections():
    # a layer: q/k/v/o 4 x 4,096 x 4,096 = 67,108,864; q_norm 32 x 128 and k_norm 32 x 128 = 8,192 (Olmo2Attention;
    # uncounted before); mlp 3 x 4,096 x 11,008 = 135,266,304; 2 norms 8,192: 202,391,552
    model = build_model(OLMO_2_7B, "olmo-2")
    assert model.param_count == 32 * 202_391_552 + 2 * 100_352 * 4_096 + 4_096 == 7_298_617_344


def test_olmo_counts_no_norm_parameters():
    # OlmoLayerNorm holds neither weight nor bias: a layer is 67,108,864 + 135,266,304 = 202,375,168, and the model
    # 32 of them + 2 x 50,304 x 4,096 (before: 2 x 4,096 a layer and a final 4,096 besides)
    model = build_model(OLMO_7B, "olmo")
    assert model.param_count == 32 * 202_375_168 + 2 * 50_304 * 4_096 == 6_888_095_744


def test_seed_oss_counts_its_bias_flags_by_their_defaults():
    # SeedOssConfig: attention_bias true (q 256 + k, v 2 x 128 biases), attention_out_bias false (no o_proj bias).
    # A layer: q 256 x 256 + k, v 2 x 256 x 128 + o 256 x 256 + 512 biases = 196,608 + 512; mlp 3 x 256 x 512 =
    # 393,216; 2 norms 512: 590,848; 2 layers + 2 x 1,000 x 256 + 256 (before: no biases, a config without the flag)
    assert build_model(SEED_OSS, "seed").param_count == 2 * 590_848 + 512_000 + 256 == 1_693_952
    # attention_out_bias adds o_proj's 256 a layer; mlp_bias gate, up 2 x 512 and down 256 a layer
    raw = dict(SEED_OSS, attention_out_bias=True, mlp_bias=True)
    assert build_model(raw, "seed-biased").param_count == 1_693_952 + 2 * (256 + 1_280) == 1_697_024


def test_phi_qk_layernorm_counts_two_layer_norms_over_the_head_width():
    # q_layernorm and k_layernorm: LayerNorms (weight and bias) over 2,560 / 32 = 80: 4 x 80 = 320 a layer
    plain = build_model(PHI_2, "phi-2").param_count
    assert build_model(dict(PHI_2, qk_layernorm=True), "phi-qk").param_count == plain + 32 * 320


# -- what each TP rank holds whole and the bytes per GPU --------------------------------------------------------

def test_command_r_keeps_its_one_norm_a_layer_whole():
    model = build_model(COMMAND_R, "command-r")
    # float16: 69,961,662,464 B; whole: 40 LayerNorm weights of 8,192 + the final norm = 335,872 parameters
    assert model.weight_bytes == 69_961_662_464
    assert model.weight_replicated_bytes == (40 * 8_192 + 8_192) * 2 == 671_744
    # TP 4: (69,961,662,464 - 671,744) / 4 + 671,744 (before: 17,490,579,456, an even split of a count two norms high)
    assert _per_gpu(model, 40, 4) == 17_490_247_680 + 671_744 == 17_490_919_424


def test_cohere_q_and_k_norms_split_with_the_heads_and_k_norm_by_kv_head():
    # 8 KV heads at TP 16, kvplan's own plan (vLLM's commandr.py: q_norm [64 / 16, 128] a rank; k_norm [max(1, 8 / 16),
    # 128], one KV head's row a rank, as k_proj and v_proj; vLLM 0.34 itself fails to load it there: the test below). Whole: the norms, 671,744 B, as above. The KV share vLLM keeps one
    # whole head of a rank: k, v 2 x 8,192 x 1,024 + k_norm 1,024 a layer, 40 x 16,778,240 x 2 B = 1,342,259,200 B, of
    # which each rank holds 1 / 8 = 167,782,400 B; the rest, 60,567,158,784 - 671,744 - 1,342,259,200 =
    # 59,224,227,840 B, splits 16 ways: 3,701,514,240 B
    model = build_model(dict(COMMAND_R, num_key_value_heads=8, use_qk_norm=True), "cohere-qk")
    assert model.weight_bytes == 2 * 30_283_579_392 == 60_567_158_784
    assert model.weight_replicated_bytes == 671_744
    assert _per_gpu(model, 40, 16) == 3_701_514_240 + 671_744 + 167_782_400 == 3_869_968_384


def test_starcoder2_3b_keeps_layer_norms_and_row_parallel_biases_whole():
    model = build_model(STARCODER2_3B, "starcoder2-3b")
    # a layer: q 3,072 x 3,072 + 3,072; k, v 2 x (3,072 x 256 + 256); o 3,072 x 3,072 + 3,072; c_fc 3,072 x 12,288 +
    # 12,288; c_proj 12,288 x 3,072 + 3,072; 2 LayerNorms 2 x 2 x 3,072: 9,440,256 + 1,573,376 + 9,440,256 +
    # 37,761,024 + 37,751,808 + 12,288 = 95,979,008
    layer = (3072 * 3072 + 3072) + 2 * (3072 * 256 + 256) + (3072 * 3072 + 3072) + (3072 * 12288 + 12288) \
        + (12288 * 3072 + 3072) + 4 * 3072
    assert layer == 95_979_008
    assert model.param_count == 30 * layer + 49_152 * 3_072 + 2 * 3_072 == 3_030_371_328
    # whole: a layer's o_proj and c_proj biases (RowParallelLinear) and its LayerNorms' weights and biases, 6 x 3,072,
    # and the final LayerNorm 2 x 3,072: 559,104 parameters in bfloat16
    assert model.weight_replicated_bytes == (30 * 6 * 3_072 + 2 * 3_072) * 2 == 1_118_208
    # TP 2: (6,060,742,656 - 1,118,208) / 2 + 1,118,208 (before: 3,030,371,328)
    assert _per_gpu(model, 30, 2) == 3_029_812_224 + 1_118_208 == 3_030_930_432
    # TP 4, above the 2 KV heads: k_proj and v_proj with their biases, 30 x 2 x 786,688 x 2 B = 94,402,560 B, are held
    # half a rank (one KV head); the rest, 6,060,742,656 - 1,118,208 - 94,402,560 = 5,965,221,888, splits 4 ways
    assert _per_gpu(model, 30, 4) == 1_491_305_472 + 1_118_208 + 47_201_280 == 1_539_624_960


def test_phi_2_keeps_layer_norms_and_row_parallel_biases_whole_and_splits_the_head_bias():
    model = build_model(PHI_2, "phi-2")
    # a layer: q, k, v, dense 4 x (2,560 x 2,560 + 2,560) = 26,224,640; fc1 2,560 x 10,240 + 10,240 = 26,224,640;
    # fc2 10,240 x 2,560 + 2,560 = 26,216,960; input_layernorm 2 x 2,560: 78,671,360. Model: 32 layers + embeddings
    # 51,200 x 2,560 + lm_head 51,200 x 2,560 + its bias 51,200 + final_layernorm 5,120
    assert model.param_count == 32 * 78_671_360 + 2 * 131_072_000 + 51_200 + 5_120 == 2_779_683_840
    # whole: dense's and fc2's biases and the LayerNorm (4 x 2,560 a layer) and final_layernorm 5,120: 332,800; the
    # head's bias splits with the vocabulary (ParallelLMHead)
    assert model.weight_replicated_bytes == (32 * 4 * 2_560 + 5_120) * 2 == 665_600
    # TP 2: (5,559,367,680 - 665,600) / 2 + 665,600 (before: 2,779,683,840)
    assert _per_gpu(model, 32, 2) == 2_779_351_040 + 665_600 == 2_780_016_640


def test_olmo_2_7b_keeps_its_whole_width_q_k_norms_whole():
    model = build_model(OLMO_2_7B, "olmo-2")
    # 32 layers x (2 norms of 4,096 + q_norm 4,096 + k_norm 4,096) + the final norm: 528,384 parameters
    assert model.weight_replicated_bytes == (32 * 4 * 4_096 + 4_096) * 2 == 1_056_768
    # TP 2: (14,597,234,688 - 1,056,768) / 2 + 1,056,768
    assert _per_gpu(model, 32, 2) == 7_298_088_960 + 1_056_768 == 7_299_145_728


def test_olmo_7b_holds_nothing_whole():
    model = build_model(OLMO_7B, "olmo")
    # no norm parameters, no biases: an even split of 6,888,095,744 x 4 B (float32) at TP 4, 6,888,095,744 B a GPU
    assert model.weight_replicated_bytes == 0
    assert _per_gpu(model, 32, 4) == 6_888_095_744


# -- quantized: the table splits a format's weights module by module ---------------------------------------------

def test_phi_2_awq_keeps_biases_norms_and_the_head_in_fp16():
    # AWQ int4, group 128, zero point, GEMM: the form of quantization_config TheBloke's AWQ repositories publish
    # (TheBloke/phi-2-AWQ; this config is written here with those fields, not read from that repository).
    # Quantized: the linear weights, 32 x (4 x 2,560 x 2,560 + 2 x 2,560 x 10,240) = 2,516,582,400 at
    # 1/2 + (2 + 1/2) / 128 = 133/256 B; in float16 the rest, 2,779,683,840 - 2,516,582,400 = 263,101,440 parameters:
    # embeddings and head 262,144,000, the head's bias 51,200, the q/k/v/dense/fc1/fc2 biases 32 x 23,040 = 737,280,
    # the LayerNorms 32 x 5,120 + 5,120 = 168,960 (before: those 957,440 biases and norms at 133/256 B)
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(dict(PHI_2, quantization_config=awq), "phi-2-awq")
    assert 262_144_000 + 51_200 + 32 * 23_040 + 32 * 5_120 + 5_120 == 263_101_440
    assert model.weight_bytes == 2_516_582_400 * 133 // 256 + 263_101_440 * 2 == 1_833_646_080
    assert any("read module by module" in n for n in model.notes)
    assert model.weight_replicated_bytes == 665_600


# -- the Llama-shaped types ------------------------------------------------------------------------------------

def test_smollm3_with_mlp_bias_and_ministral_with_attention_bias():
    small = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 4096}
    raw = {"model_type": "ministral", "attention_bias": True, **small}
    _, f, _, layers, dims = _read(raw, raw["model_type"])
    assert table(f, layers, dims) == []
    _, f, _, layers, dims = _read({"model_type": "smollm3", **small}, "smollm3")
    # SmolLM3 ties its head by default: embeddings 256,000 + final norm 256 + 2 layers of q, o 2 x 65,536 + k, v
    # 2 x 32,768 + mlp 3 x 131,072 + 2 norms 512
    assert sum(m.weight + m.other for m in table(f, layers, dims)) == 256_000 + 256 + 2 * (196_608 + 393_216 + 512)
    # mlp_bias (SmolLM3MLP: nn.Linear(..., bias=config.mlp_bias)): gate and up 2 x 512, down 256 a layer more
    _, f, _, layers, dims = _read({"model_type": "smollm3", "mlp_bias": True, **small}, "smollm3")
    assert sum(m.weight + m.other for m in table(f, layers, dims)) == (256_000 + 256
                                                                       + 2 * (196_608 + 393_216 + 512 + 1_280))


# -- EXAONE, Nemotron, Granite SWA, Apertus (configs written here, of the shapes their checkpoints have) -----------

# LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct's config.json (transformers 4.45.2), as a public README quotes it in full: the
# fields the counts read (num_layers, not num_hidden_layers: its remote ExaoneConfig)
EXAONE = {"activation_function": "silu", "architectures": ["ExaoneForCausalLM"], "hidden_size": 4096,
          "intermediate_size": 14336, "layer_norm_epsilon": 1e-05, "max_position_embeddings": 4096,
          "model_type": "exaone", "num_attention_heads": 32, "num_key_value_heads": 8, "num_layers": 32,
          "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 102400}
NEMOTRON = {"architectures": ["NemotronForCausalLM"], "model_type": "nemotron", "hidden_size": 3072,
            "intermediate_size": 9216, "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
            "head_dim": 128, "vocab_size": 256000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
GRANITE_SWA = {"architectures": ["GraniteSWAForCausalLM"], "model_type": "granite_swa", "hidden_size": 2560,
               "intermediate_size": 8192, "num_hidden_layers": 24, "num_attention_heads": 20,
               "num_key_value_heads": 4, "vocab_size": 49160, "max_position_embeddings": 8192,
               "torch_dtype": "bfloat16"}


def test_exaone_3_names_its_modules_as_its_checkpoints_and_keeps_its_rms_norms_whole():
    # EXAONE's checkpoints: transformer.wte, transformer.h.N.{ln_1, ln_2, attn.attention.{q,k,v,out}_proj,
    # mlp.{c_fc_0, c_fc_1, c_proj}}, transformer.ln_f, lm_head (vLLM 0.34 exaone.py; transformers renames them on
    # load). Before, kvplan refused the config: it has num_layers, no num_hidden_layers
    _, f, _, layers, dims = _read(EXAONE, "exaone")
    assert len(layers) == 32
    names = {m.name for m in table(f, layers, dims)}
    assert {"transformer.wte", "transformer.ln_f", "transformer.h.0.ln_1", "transformer.h.31.ln_2",
            "transformer.h.0.attn.attention.q_proj", "transformer.h.0.attn.attention.out_proj",
            "transformer.h.0.mlp.c_fc_0", "transformer.h.0.mlp.c_fc_1", "transformer.h.0.mlp.c_proj", "lm_head"} <= names
    assert not any(n.startswith(("layers.", "embed_tokens")) for n in names)
    model = build_model(EXAONE, "exaone-3.0-7.8b")
    # hidden 4,096, 32 heads of 128 and 8 KV heads, intermediate 14,336, vocab 102,400, untied. A layer: q, o 2 x
    # 4,096 x 4,096 + k, v 2 x 4,096 x 1,024 + mlp 3 x 4,096 x 14,336 + ln_1, ln_2 2 x 4,096 = 33,554,432 +
    # 8,388,608 + 176,160,768 + 8,192 = 218,112,000
    assert model.param_count == 32 * 218_112_000 + 2 * 102_400 * 4_096 + 4_096 == 7_818_448_896
    # whole: 32 x 2 RMSNorms of 4,096 + ln_f: 266,240 parameters; TP 2: (15,636,897,792 - 532,480) / 2 + 532,480
    assert model.weight_replicated_bytes == (32 * 2 * 4_096 + 4_096) * 2 == 532_480
    assert _per_gpu(model, 32, 2) == 7_818_182_656 + 532_480 == 7_818_715_136


def test_exaone_3_counts_mlp_bias():
    # ExaoneConfig's mlp_bias (transformers 5.25 builds LlamaForCausalLM: LlamaMLP bias=config.mlp_bias; vLLM 0.34
    # exaone.py ExaoneGatedMLP bias=mlp_bias): c_fc_0, c_fc_1 2 x 14,336 and c_proj 4,096 a layer more, 32 layers;
    # the module table (which refused such a config) adds up to the same count
    model = build_model(dict(EXAONE, mlp_bias=True), "exaone-mlp-bias")
    assert model.param_count == 7_818_448_896 + 32 * (2 * 14_336 + 4_096) == 7_819_497_472
    _, f, _, layers, dims = _read(dict(EXAONE, mlp_bias=True), "exaone")
    modules = table(f, layers, dims)
    assert sum(m.weight + m.other for m in modules) == 7_819_497_472
    assert next(m for m in modules if m.name == "transformer.h.0.mlp.c_proj").other == 4_096


def test_nemotron_keeps_its_layer_norm_weights_and_biases_whole():
    model = build_model(NEMOTRON, "nemotron")
    # a layer: q, o 2 x 3,072 x 3,072 + k, v 2 x 3,072 x 1,024 + the relu2 MLP's up and down 2 x 3,072 x 9,216 +
    # two NemotronLayerNorm1P (weight and bias) 4 x 3,072 = 81,801,216; untied: 2 x 256,000 x 3,072; final norm 6,144
    assert model.param_count == 32 * 81_801_216 + 2 * 256_000 * 3_072 + 6_144 == 4_190_509_056
    # whole: 32 x 4 x 3,072 + 6,144 = 399,360 parameters; TP 4: (8,381,018,112 - 798,720) / 4 + 798,720
    assert model.weight_replicated_bytes == 798_720
    assert _per_gpu(model, 32, 4) == 2_095_054_848 + 798_720 == 2_095_853_568


def test_granite_swa_counts_one_sink_a_query_head_split_with_the_heads():
    # a layer: q, o 2 x 2,560 x 2,560 + k, v 2 x 2,560 x 512 + mlp 3 x 2,560 x 8,192 + 2 norms 5,120 + sinks 20
    # (GraniteSWAAttention; uncounted before) = 78,648,340; tied (GraniteSWAConfig)
    model = build_model(GRANITE_SWA, "granite-swa")
    assert model.param_count == 24 * 78_648_340 + 49_160 * 2_560 + 2_560 == 2_013_412_320
    # the sinks split with the query heads (vLLM 0.34 granite.py sharded_weight_loader(0)): only the norms are whole
    assert model.weight_replicated_bytes == (24 * 2 * 2_560 + 2_560) * 2 == 250_880


def test_apertus_keeps_its_xielu_scalars_and_q_k_norms_whole():
    # written here: hidden 256, 2 layers, 4 heads and 2 KV heads of 64, intermediate 512, vocab 1,000, untied;
    # per layer: q, o 2 x 256 x 256 + k, v 2 x 256 x 128 + up, down 2 x 256 x 512 + q_norm, k_norm 2 x 64 +
    # attention_layernorm, feedforward_layernorm 2 x 256 + alpha_p, alpha_n 2 = 196,608 + 262,144 + 642 = 459,394
    raw = {"architectures": ["ApertusForCausalLM"], "model_type": "apertus", "hidden_size": 256,
           "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    model = build_model(raw, "apertus")
    assert model.param_count == 2 * 459_394 + 2 * 1_000 * 256 + 256 == 1_431_044
    # whole: a layer's q_norm, k_norm, two norms and xIELU's two scalars, 128 + 512 + 2, and the final norm 256
    assert model.weight_replicated_bytes == (2 * 642 + 256) * 2 == 3_080


def test_hunyuan_dense_counts_and_keeps_its_query_and_key_layernorms_whole():
    # written here: hidden 4,096, 32 layers, 32 heads and 8 KV heads of 128, intermediate 14,336, vocab 128,167,
    # untied. A layer: q, o 2 x 4,096 x 4,096 + k, v 2 x 4,096 x 1,024 + mlp 3 x 4,096 x 14,336 + 2 norms 8,192 +
    # query_layernorm, key_layernorm 2 x 128 (HunYuanDenseV1Attention; uncounted before) = 218,112,256
    raw = {"architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 128167, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
    model = build_model(raw, "hunyuan-dense")
    assert model.param_count == 32 * 218_112_256 + 2 * 128_167 * 4_096 + 4_096 == 8_029_540_352
    # whole (the Transformers backend's RMSNorms): 32 x (8,192 + 256) + 4,096 = 274,432 parameters;
    # TP 2: (16,059,080,704 - 548,864) / 2 + 548,864
    assert model.weight_replicated_bytes == 548_864
    assert _per_gpu(model, 32, 2) == 8_029_265_920 + 548_864 == 8_029_814_784


def test_diffllama_counts_its_lambdas_and_holds_them_whole():
    # written here: hidden 2,048, 16 layers, 32 heads and 8 KV heads of 64, intermediate 8,192, vocab 32,000,
    # untied. A layer: q, o 2 x 2,048 x 2,048 + k, v 2 x 2,048 x 512 + mlp 3 x 2,048 x 8,192 + 2 norms 4,096 +
    # lambda_q1, lambda_k1, lambda_q2, lambda_k2 4 x 64 (DiffLlamaAttention; uncounted before) = 60,821,760
    raw = {"architectures": ["DiffLlamaForCausalLM"], "model_type": "diffllama", "hidden_size": 2048,
           "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"}
    model = build_model(raw, "diffllama")
    assert model.param_count == 16 * 60_821_760 + 2 * 32_000 * 2_048 + 2_048 == 1_104_222_208
    # whole: 16 x (2 norms of 2,048 + the four lambdas of 64) + the final norm = 71,680 parameters
    assert model.weight_replicated_bytes == (16 * (4_096 + 256) + 2_048) * 2 == 143_360


def test_bitnet_keeps_its_sub_norms_whole():
    # written here, unquantized (BF16): hidden 2,560, 30 layers, 20 heads and 5 KV heads of 128, intermediate 6,912,
    # vocab 128,256, tied. A layer: q, o 2 x 2,560 x 2,560 + k, v 2 x 2,560 x 640 + attn_sub_norm 2,560 + mlp
    # 3 x 2,560 x 6,912 + ffn_sub_norm 6,912 + 2 norms 5,120 = 69,482,752
    raw = {"architectures": ["BitNetForCausalLM"], "model_type": "bitnet", "hidden_size": 2560,
           "intermediate_size": 6912, "num_hidden_layers": 30, "num_attention_heads": 20, "num_key_value_heads": 5,
           "vocab_size": 128256, "tie_word_embeddings": True, "max_position_embeddings": 4096,
           "torch_dtype": "bfloat16"}
    model = build_model(raw, "bitnet-bf16")
    assert model.param_count == 30 * 69_482_752 + 128_256 * 2_560 + 2_560 == 2_412_820_480
    # whole: every RMSNorm at its full width, 30 x (2,560 + 6,912 + 5,120) + 2,560 = 440,320 parameters;
    # TP 2: (4,825,640,960 - 880,640) / 2 + 880,640
    assert model.weight_replicated_bytes == 880_640
    assert _per_gpu(model, 30, 2) == 2_412_380_160 + 880_640 == 2_413_260_800


def test_apertus_1_5_prunes_its_head_to_output_vocab_size():
    # the Apertus table above with output_vocab_size 600 (of vocab 1,000) and an untied head: lm_head 600 x 256
    raw = {"architectures": ["Apertus1p5TextForCausalLM"], "model_type": "apertus1p5_text", "hidden_size": 256,
           "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 1000, "output_vocab_size": 600, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    _, f, _, layers, dims = _read(raw, "apertus1p5")
    head = [m for m in table(f, layers, dims) if m.name == "lm_head"]
    assert [(m.weight, m.top) for m in head] == [(600 * 256, True)]
    assert build_model(raw, "apertus1p5").param_count == 1_431_044 - 400 * 256 == 1_328_644


def test_vllm_refuses_command_r_with_qk_norm_above_its_kv_heads(tmp_path):
    # vLLM 0.34 commandr.py: k_norm = norm_cls(param_shape=(max(1, 8 // 16) = 1, head_dim)); row_parallel_weight_loader
    # narrows the checkpoint's [8, 128] k_norm at tp_rank x 1: ranks 8-15 start past its 8 rows, so the load fails.
    # At TP 8 (one KV head a rank) it loads; without use_qk_norm there is no k_norm.
    import json

    from kvplan_inprocess import kvplan

    path = tmp_path / "command-r-qk.json"
    path.write_text(json.dumps(COHERE_QK := dict(COMMAND_R, num_key_value_heads=8, use_qk_norm=True)))
    out = kvplan("estimate", str(path), "--engine", "vllm", "--gpu", "h100", "--tp", "16", "--context", "8k")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "use_qk_norm" in out.stderr and "8 to 15" in out.stderr
    assert kvplan("estimate", str(path), "--engine", "vllm", "--gpu", "h100", "--tp", "8",
                  "--context", "8k").returncode == 0
    path.write_text(json.dumps({**COHERE_QK, "use_qk_norm": False}))
    assert kvplan("estimate", str(path), "--engine", "vllm", "--gpu", "h100", "--tp", "16",
                  "--context", "8k").returncode == 0
