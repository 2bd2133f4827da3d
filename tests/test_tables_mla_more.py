"""Per-module tables of Mistral Large 4's and Mistral Small 4's text models, Sarvam-MLA, Youtu-LLM, HY-V4, dots3-note,
A.X-K1, A.X-K2 and Kolibri 1.1 (configs/weight_tables/mla_more.py), and the counts they mirror: each table adds up to
the family's count, and the parameters each TP rank holds whole and the bytes a GPU holds are worked out here by hand
from the configs below and the module shapes of transformers 5.25 (modeling_mistral_large4.py, modeling_mistral4.py,
DeepseekV3 for sarvam_mla, modeling_youtu.py, modeling_hy_v4.py, modeling_dots3_note.py, modeling_axk1.py,
modeling_axk2.py, modeling_kolibri1_1.py). What vLLM 0.34 builds whole: the table module's docstrings. BF16: 2 B a
parameter.

No bundled config of these types exists; the configs here are written out: Mistral Large 4's as the hand-written
params.json of tests/test_families_vllm034.py (LARGE4_PARAMS) in the Hugging Face form; Youtu-LLM's with the field
values of tencent/Youtu-LLM-2B's config.json as a public test fixture quotes them (they are also YoutuConfig's
defaults); Mistral Small 4's, HY-V4's, A.X-K1's, A.X-K2's, Kolibri 1.1's and Dory's as transformers 5.25's config
classes' defaults (Mistral4Config, HYV4Config, AXK1Config, AXK2Config, Kolibri1_1Config, DoryConfig); dots3-note's as
Dots3NoteTextConfig's defaults over 8 layers; Sarvam-MLA's as the Sarvam-105B-shaped fixture of Megatron Bridge's
Sarvam MLA bridge unit test (SarvamMLAConfig's defaults, in the original config's num_experts / num_shared_experts
names). No public quantized config of these types was found."""

from __future__ import annotations

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from tests.weight_table_checks import per_gpu as _per_gpu

LARGE4_TEXT = {
    "model_type": "mistral_large4_text", "num_hidden_layers": 8, "hidden_size": 7168, "num_attention_heads": 128,
    "num_key_value_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "intermediate_size": 16384, "moe_intermediate_size": 4096, "n_routed_experts": 64,
    "n_shared_experts": 1, "num_experts_per_tok": 4, "first_k_dense_replace": 1, "vocab_size": 131072,
    "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048, "no_rope_layers": [1, 0] * 4,
    "indexer_types": ["full", "shared", "shared", "shared"] * 2, "tie_word_embeddings": False}
LARGE4 = {"model_type": "mistral_large4", "text_config": LARGE4_TEXT}
SMALL4 = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
          "vision_config": {"model_type": "pixtral"}, "text_config": {
              "model_type": "mistral4", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
              "num_key_value_heads": 32, "q_lora_rank": 1024, "kv_lora_rank": 256, "qk_rope_head_dim": 64,
              "qk_nope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 128, "n_shared_experts": 1,
              "moe_intermediate_size": 2048, "intermediate_size": 12288, "num_experts_per_tok": 4,
              "first_k_dense_replace": 0, "vocab_size": 131072, "tie_word_embeddings": False}}
SARVAM = {"model_type": "sarvam_mla", "architectures": ["SarvamMLAForCausalLM"], "num_hidden_layers": 32,
          "hidden_size": 4096, "intermediate_size": 16384, "moe_intermediate_size": 2048, "num_attention_heads": 64,
          "num_experts": 128, "num_experts_per_tok": 8, "num_shared_experts": 1, "first_k_dense_replace": 1,
          "vocab_size": 262144, "max_position_embeddings": 131072, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
          "qk_rope_head_dim": 64, "v_head_dim": 128}
HY_V4 = {"model_type": "hy_v4", "architectures": ["HYV4ForCausalLM"], "vocab_size": 120832, "hidden_size": 2816,
         "intermediate_size": 6912, "moe_intermediate_size": 768, "num_hidden_layers": 34, "num_attention_heads": 32,
         "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "q_lora_rank": 1536,
         "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
         "index_head_dim": 128, "index_n_heads": 16, "index_topk": 2048, "hc_mult": 4, "tie_word_embeddings": False}
AXK1 = {"model_type": "axk1", "architectures": ["AXK1ForCausalLM"], "vocab_size": 163840, "hidden_size": 7168,
        "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 64,
        "n_shared_experts": 1, "n_routed_experts": 192, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "num_experts_per_tok": 8,
        "first_k_dense_replace": 1, "tie_word_embeddings": False}
DOTS3 = {"model_type": "dots3_note_text", "num_hidden_layers": 8, "hidden_size": 5120, "num_attention_heads": 128,
         "q_lora_rank": 1024, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
         "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048, "intermediate_size": 13824,
         "moe_intermediate_size": 1536, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
         "first_k_dense_replace": 1, "vocab_size": 152064, "swa_num_attention_heads": 64, "swa_q_lora_rank": 1024,
         "swa_kv_lora_rank": 1024, "swa_head_dim": 256, "swa_qk_nope_head_dim": 192, "swa_v_head_dim": 128,
         "sliding_window": 512}
AXK2 = {"model_type": "axk2", "architectures": ["AXK2ForCausalLM"], "vocab_size": 163840, "hidden_size": 2048,
        "intermediate_size": 5120, "moe_intermediate_size": 512, "num_hidden_layers": 48, "num_attention_heads": 32,
        "n_shared_experts": 1, "n_routed_experts": 128, "kv_lora_rank": 128, "q_lora_rank": 384,
        "qk_rope_head_dim": 32, "v_head_dim": 64, "qk_nope_head_dim": 64, "num_experts_per_tok": 8,
        "index_head_dim": 128, "index_n_heads": 16, "index_topk": 2048, "gated_norm_rank": 16,
        "first_k_dense_replace": 1, "tie_word_embeddings": False}
KOLIBRI = {"model_type": "kolibri1_1", "architectures": ["Kolibri1_1ForCausalLM"], "vocab_size": 128000,
           "hidden_size": 2560, "num_hidden_layers": 50, "num_attention_heads": 48, "num_key_value_heads": 4,
           "head_dim": 128, "sliding_window": 513, "moe_intermediate_size": 512, "num_experts_per_tok": 6,
           "num_experts": 384, "shared_expert_intermediate_size": 512, "mlp_only_intermediate_size": 3584,
           "tie_word_embeddings": False}
DORY = {"model_type": "dory", "architectures": ["DoryForCausalLM"], "vocab_size": 131072, "hidden_size": 2560,
        "intermediate_size": 7168, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
        "head_dim": 256, "sliding_window": 1024, "n_input_layers": 8, "n_output_layers": 8, "n_recurrent_loops": 2,
        "tie_word_embeddings": False}
YOUTU = {"model_type": "youtu", "architectures": ["YoutuForCausalLM"], "vocab_size": 128256, "hidden_size": 2048,
         "intermediate_size": 6144, "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 16,
         "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
         "qk_nope_head_dim": 128, "tie_word_embeddings": True}


@pytest.mark.parametrize("raw", [LARGE4, SMALL4, SARVAM, YOUTU, dict(YOUTU, attention_bias=True, q_lora_rank=None),
                                 dict(SMALL4, text_config=dict(SMALL4["text_config"], first_k_dense_replace=2)),
                                 HY_V4, dict(HY_V4, attention_bias=True),
                                 {"model_type": "hy_v4_vl", "text_config": dict(HY_V4, model_type="hy_v4_vl_text")},
                                 AXK1, dict(AXK1, attention_bias=True, first_k_dense_replace=3), DOTS3, AXK2,
                                 dict(AXK2, attention_bias=True), KOLIBRI, dict(KOLIBRI, mlp_only_layers=[0, 5])],
                         ids=["large4", "small4", "sarvam", "youtu", "youtu-bias-no-q-lora", "small4-dense-first",
                              "hy-v4", "hy-v4-bias", "hy-v4-vl", "axk1", "axk1-bias", "dots3", "axk2", "axk2-bias",
                              "kolibri", "kolibri-dense-0-5"])
def test_the_table_adds_up_to_the_family_count(raw):
    family, f, _, layers, dims = _read(raw, "t")
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


# -- Mistral Large 4 (mistral_large4_text) ------------------------------------------------------------------------

# hidden 7,168, 128 heads, kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128, 8 layers (NoPE on the odd ones),
# indexers (64 heads of 128) on layers 0 and 4, layer 0 dense (16,384), 7 MoE layers (64 experts of 4,096, 1 shared),
# vocab 131,072, head untied. A layer's attention: q_proj 7,168 x 128 x 192 = 176,160,768; softmax_scaling 2 x 128;
# kv_a_proj_with_mqa 7,168 x 576 = 4,128,768 (a NoPE layer 7,168 x 512 = 3,670,016); kv_a_layernorm 512; kv_b_proj
# 512 x 128 x (128 + 128) = 16,777,216 (a NoPE layer 512 x 128 x (128 + 64 + 128) = 20,971,520); o_proj
# 128 x 128 x 7,168 = 117,440,512; two norms 14,336: 314,522,368 a RoPE layer, 318,257,920 a NoPE layer.
# The indexer: q_input_norm 2 x 7,168, wq_b 7,168 x 8,192 = 58,720,256, wk 7,168 x 128 = 917,504, k_norm 2 x 128,
# weights_proj 7,168 x 64 = 458,752, softmax_scaling 2 x 64: 60,111,232. The dense MLP 3 x 7,168 x 16,384 =
# 352,321,536; a MoE: experts 64 x 3 x 7,168 x 4,096 = 5,637,144,576, router 64 x 7,168 = 458,752, shared expert
# 3 x 7,168 x 4,096 = 88,080,384. Embeddings and head 2 x 131,072 x 7,168, final norm 7,168, LeRoPE alpha 64 / 2.
LARGE4_TOTAL = (4 * 314_522_368 + 4 * 318_257_920 + 2 * 60_111_232 + 352_321_536
                + 7 * (5_637_144_576 + 458_752 + 88_080_384) + 2 * 131_072 * 7_168 + 7_168 + 32)
# whole on every rank (vLLM 0.34 models/mistral): kv_a_proj_with_mqa (4 x 4,128,768 + 4 x 3,670,016), kv_a_layernorm
# and the two norms (8 x (512 + 14,336)), both indexers whole (2 x 60,111,232), the routers (7 x 458,752), the final
# norm and alpha
LARGE4_WHOLE = 4 * 4_128_768 + 4 * 3_670_016 + 8 * (512 + 14_336) + 2 * 60_111_232 + 7 * 458_752 + 7_168 + 32


def test_mistral_large_4_counts_its_own_modules():
    # before (DeepSeek's count): an indexer on every layer with a q_lora_rank-wide wq_b, no q_input_norm, SSMax or
    # alpha, and layer 0 a MoE: 50,211,714,048
    assert build_model(LARGE4, "large4").param_count == LARGE4_TOTAL == 44_962_506_528


def test_mistral_large_4_holds_its_latent_projections_indexers_and_routers_whole():
    model = build_model(LARGE4, "large4")
    assert LARGE4_WHOLE == 154_754_848
    assert model.weight_replicated_bytes == 2 * LARGE4_WHOLE == 309_509_696
    # TP 8: (89,925,013,056 - 309,509,696) / 8 + 309,509,696 (before: an even split, 12,552,928,512)
    assert model.weight_bytes == 2 * LARGE4_TOTAL == 89_925_013_056
    assert _per_gpu(model, 8, 8) == (89_925_013_056 - 309_509_696) // 8 + 309_509_696 == 11_511_447_616


# An FP8 block-quantized checkpoint (128 x 128 blocks: 1 + 4 / 16,384 B a quantized weight). vLLM 0.34 builds
# kv_a_proj_with_mqa, kv_b_proj (models/mistral/nvidia/attention.py MistralMLAAttention) and the indexer's
# wk_weights_proj (indexer.py MistralIndexer) with quant_config=None, so they stay 16-bit; quantized: wq
# (8 x 176,160,768), wo (8 x 117,440,512), the indexers' wq_b (2 x 58,720,256), the dense MLP (352,321,536), the
# routed experts (7 x 5,637,144,576) and the shared experts (7 x 88,080,384): 42,895,147,008 weights, every dim a
# multiple of 128. The other 2,067,359,520 parameters (embeddings, head, latent projections, norms, routers...) at 2 B.
LARGE4_FP8_QUANTIZED = (8 * 176_160_768 + 8 * 117_440_512 + 2 * 58_720_256 + 352_321_536 + 7 * 5_637_144_576
                        + 7 * 88_080_384)


def test_mistral_large_4_fp8_keeps_its_latent_projections_and_indexer_keys_in_bf16():
    model = build_model({**LARGE4, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                                                           "weight_block_size": [128, 128]}}, "large4")
    assert LARGE4_FP8_QUANTIZED == 42_895_147_008
    total = LARGE4_FP8_QUANTIZED + LARGE4_FP8_QUANTIZED // 4_096 + 2 * (LARGE4_TOTAL - LARGE4_FP8_QUANTIZED)
    # before: 31,195,136 latent down-, 150,994,944 latent up- and 1,835,008 indexer key weights counted as FP8
    # (46,856,358,336 B)
    assert model.weight_bytes == total == 47_040_338_496
    # whole on every rank: the whole modules of LARGE4_WHOLE at 2 B, but wq_b (2 x 58,720,256) in FP8
    whole = 2 * (LARGE4_WHOLE - 2 * 58_720_256) + 2 * 58_720_256 * (4_096 + 1) // 4_096
    assert model.weight_replicated_bytes == whole == 192_097_856
    assert _per_gpu(model, 8, 4) == (total - whole) // 4 + whole == 11_904_158_016


def test_mistral_large_4_names_modules_as_its_checkpoint_does():
    family, f, _, layers, dims = _read(LARGE4, "large4")
    names = {m.name for m in table(f, layers, dims)}
    assert {"tok_embeddings", "output", "norm", "lerope.alpha", "layers.0.attention.wq",
            "layers.0.attention.wkv_a_with_mqa", "layers.0.attention.indexer.wq_b", "layers.0.feed_forward.w1",
            "layers.1.experts.{e}.w2", "layers.1.gate", "layers.1.shared_experts.w3"} <= names
    assert "layers.1.attention.indexer.wq_b" not in names  # a "shared" indexer layer holds none


# -- Mistral Small 4 (mistral4, in a Mistral3ForConditionalGeneration) ---------------------------------------------

# hidden 4,096, 32 heads, q_lora_rank 1,024, kv_lora_rank 256, qk_rope 64, qk_nope 64, v 128, 36 layers, 128 experts
# of 2,048 and 1 shared, vocab 131,072, untied. Attention: q_a_proj 4,096 x 1,024 = 4,194,304, q_a_layernorm 1,024,
# q_b_proj 1,024 x 32 x 128 = 4,194,304, kv_a_proj_with_mqa 4,096 x 320 = 1,310,720, kv_a_layernorm 256, kv_b_proj
# 256 x 32 x 192 = 1,572,864, o_proj 32 x 128 x 4,096 = 16,777,216: 28,050,688; two norms 8,192; a MoE: experts
# 128 x 3 x 4,096 x 2,048 = 3,221,225,472, router 128 x 4,096 = 524,288 (no e_score_correction_bias), shared
# 3 x 4,096 x 2,048 = 25,165,824; a dense MLP 3 x 4,096 x 12,288 = 150,994,944. Embeddings and head 2 x 131,072 x
# 4,096, final norm 4,096.
SMALL4_LAYER = 28_050_688 + 8_192
SMALL4_MOE = 3_221_225_472 + 524_288 + 25_165_824
SMALL4_ENDS = 2 * 131_072 * 4_096 + 4_096


def test_mistral_small_4_counts_dense_layers_below_first_k_dense_replace():
    assert build_model(SMALL4, "small4").param_count == 36 * (SMALL4_LAYER + SMALL4_MOE) + SMALL4_ENDS \
        == 118_972_826_624
    # Mistral4DecoderLayer builds Mistral4MLP below first_k_dense_replace (the count made every layer a MoE before)
    dense_first = dict(SMALL4, text_config=dict(SMALL4["text_config"], first_k_dense_replace=1))
    assert build_model(dense_first, "small4-1").param_count \
        == 35 * (SMALL4_LAYER + SMALL4_MOE) + SMALL4_LAYER + 150_994_944 + SMALL4_ENDS == 115_876_905_984


def test_mistral_small_4_holds_its_latent_down_projections_norms_and_routers_whole():
    model = build_model(SMALL4, "small4")
    # a layer: q_a_proj 4,194,304 + q_a_layernorm 1,024 + kv_a_proj_with_mqa 1,310,720 + kv_a_layernorm 256 + two
    # norms 8,192 + router 524,288 = 6,038,784; 36 layers and the final norm
    whole = 36 * 6_038_784 + 4_096
    # and PixtralVisionConfig's default tower with Mistral3's projector (configs/vision_towers.py): patch conv
    # 3 x 16^2 x 1,024 = 786,432, ln_pre 1,024, 24 layers of 4 x 1,024^2 + 3 x 1,024 x 4,096 + 2 x 1,024 =
    # 16,779,264, the projector's norm 1,024, patch merger 4 x 1,024 x 1,024, linear_1 1,024 x 4,096 and linear_2
    # 4,096 x 4,096: 428,656,640 parameters; held whole: the conv, the norms and the merger, 5,031,936
    tower = 786_432 + 1_024 + 24 * 16_779_264 + 1_024 + 4 * 1_024 * 1_024 + 1_024 * 4_096 + 4_096 * 4_096
    tower_whole = 786_432 + 1_024 + 24 * 2 * 1_024 + 1_024 + 4 * 1_024 * 1_024
    assert (tower, tower_whole) == (428_656_640, 5_031_936) and model.weight_vision[:2] == (tower, 2 * tower)
    assert model.weight_replicated_bytes == 2 * whole + 2 * tower_whole == 434_800_640 + 10_063_872
    # TP 8: (237,945,653,248 + 857,313,280 - 444,864,512) / 8 + 444,864,512 (before the tower: 30,123,657,216; before
    # the table: an even split, 29,743,206,656)
    assert _per_gpu(model, 36, 8) == (238_802_966_528 - 444_864_512) // 8 + 444_864_512 == 30_239_627_264


# -- Sarvam-MLA (sarvam_mla: DeepSeek-V3's modules) ------------------------------------------------------------------

# hidden 4,096, 64 heads, no q_lora_rank, kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128, 32 layers (layer 0
# dense, 16,384), 128 experts of 2,048 and 1 shared, vocab 262,144, untied. Attention: q_proj 4,096 x 64 x 192 =
# 50,331,648, kv_a_proj_with_mqa 4,096 x 576 = 2,359,296, kv_a_layernorm 512, kv_b_proj 512 x 64 x 256 =
# 8,388,608, o_proj 64 x 128 x 4,096 = 33,554,432: 94,634,496; two norms 8,192; the dense MLP 3 x 4,096 x 16,384 =
# 201,326,592; a MoE: experts 128 x 3 x 4,096 x 2,048 = 3,221,225,472, router 524,288 and its
# e_score_correction_bias 128, shared 3 x 4,096 x 2,048 = 25,165,824.
SARVAM_TOTAL = (32 * (94_634_496 + 8_192) + 201_326_592 + 31 * (3_221_225_472 + 524_288 + 128 + 25_165_824)
                + 2 * 262_144 * 4_096 + 4_096)


def test_sarvam_mla_holds_kv_a_proj_norms_and_routers_whole():
    model = build_model(SARVAM, "sarvam")
    assert model.param_count == SARVAM_TOTAL == 106_031_767_424
    # whole: kv_a_proj_with_mqa, kv_a_layernorm and two norms a layer (32 x 2,368,000), the routers and their
    # score biases (31 x 524,416), the final norm
    whole = 32 * (2_359_296 + 512 + 8_192) + 31 * (524_288 + 128) + 4_096
    assert model.weight_replicated_bytes == 2 * whole == 184_073_984
    # TP 8: (212,063,534,848 - 184,073,984) / 8 + 184,073,984 (before: no table, an even split, 26,507,941,856)
    assert _per_gpu(model, 32, 8) == (212_063_534_848 - 184_073_984) // 8 + 184_073_984 == 26_669_006_592


# -- Youtu-LLM (youtu) -------------------------------------------------------------------------------------------

# hidden 2,048, 16 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128, 32 layers, mlp
# 6,144, vocab 128,256, tied. A layer: q_a_proj 2,048 x 1,536 = 3,145,728, q_a_layernorm 1,536, q_b_proj
# 1,536 x 16 x 192 = 4,718,592, kv_a_proj_with_mqa 2,048 x 576 = 1,179,648, kv_a_layernorm 512, kv_b_proj
# 512 x 16 x 256 = 2,097,152, o_proj 16 x 128 x 2,048 = 4,194,304, mlp 3 x 2,048 x 6,144 = 37,748,736, two norms
# 4,096: 53,090,304
YOUTU_TOTAL = 32 * 53_090_304 + 128_256 * 2_048 + 2_048


def test_youtu_holds_its_latent_down_projections_and_norms_whole():
    model = build_model(YOUTU, "youtu")
    assert model.param_count == YOUTU_TOTAL == 1_961_560_064
    # whole a layer: q_a_proj 3,145,728 + q_a_layernorm 1,536 + kv_a_proj_with_mqa 1,179,648 + kv_a_layernorm 512
    # + two norms 4,096 = 4,331,520; and the final norm
    whole = 32 * 4_331_520 + 2_048
    assert model.weight_replicated_bytes == 2 * whole == 277_221_376
    # TP 4: (3,923,120,128 - 277,221,376) / 4 + 277,221,376 (before: no table, an even split, 980,780,032)
    assert _per_gpu(model, 32, 4) == (3_923_120_128 - 277_221_376) // 4 + 277_221_376 == 1_188_696_064


def test_youtu_with_attention_bias_holds_the_latent_biases_and_o_proj_bias_whole():
    # attention_bias: q_a_proj 1,536, kv_a_proj_with_mqa 576 and o_proj 2,048 biases a layer, all three whole
    # (the fused latent projection is built whole; o_proj is a RowParallelLinear)
    model = build_model(dict(YOUTU, attention_bias=True), "youtu-bias")
    assert model.param_count == YOUTU_TOTAL + 32 * (1_536 + 576 + 2_048)
    assert model.weight_replicated_bytes == 2 * (32 * (4_331_520 + 1_536 + 576 + 2_048) + 2_048) == 277_487_616


# -- HY-V4 (hy_v4) -----------------------------------------------------------------------------------------------

# hidden 2,816, 32 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 192, qk_rope 64, v 256, 34 layers (layer 0
# dense, 6,912), 256 experts of 768 and 1 shared, indexers (16 heads of 128) on layers 0, 1, 5, 9 ... 33 (10 layers:
# HYV4Config's rule without indexer_types), hc_mult 4, vocab 120,832, untied. Attention: q_a_proj 2,816 x 1,536 =
# 4,325,376, q_a_layernorm 1,536, q_b_proj 1,536 x 32 x 256 = 12,582,912, kv_a_proj_with_mqa 2,816 x 576 =
# 1,622,016, kv_a_layernorm 512, kv_b_proj 512 x 32 x 448 = 7,340,032, o_proj and linear_gate 2 x 32 x 256 x 2,816
# = 46,137,344, sinks 32: 72,009,760; two norms 5,632; two hyper-connections 2 x (8 x 11,264 + 8 + 2) = 180,244.
# The indexer: wq_b 1,536 x 2,048 = 3,145,728, wk 2,816 x 128 = 360,448, k_norm 256, weights_proj 2,816 x 16 =
# 45,056: 3,551,488. The dense MLP 3 x 2,816 x 6,912 = 58,392,576; a MoE: experts 256 x 3 x 2,816 x 768 =
# 1,660,944,384, router 256 x 2,816 = 720,896 and its score bias 256, shared 3 x 2,816 x 768 = 6,488,064.
# Embeddings and head 2 x 120,832 x 2,816, final norm 2,816, hc_head 4 x 11,264 + 4 + 1 = 45,061.
HY_LAYER = 72_009_760 + 5_632 + 180_244
HY_TOTAL = (34 * HY_LAYER + 10 * 3_551_488 + 58_392_576 + 33 * (1_660_944_384 + 720_896 + 256 + 6_488_064)
            + 2 * 120_832 * 2_816 + 2_816 + 45_061)


def test_hy_v4_holds_its_latent_projections_indexers_mixers_and_routers_whole():
    model = build_model(HY_V4, "hy")
    assert model.param_count == HY_TOTAL == 58_278_201_581
    # whole a layer: q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm, two norms and the
    # hyper-connections (4,325,376 + 1,536 + 1,622,016 + 512 + 5,632 + 180,244 = 6,135,316); the 10 indexers; the
    # routers and their score biases (33 x 721,152); the final norm and hc_head
    whole = 34 * 6_135_316 + 10 * 3_551_488 + 33 * 721_152 + 2_816 + 45_061
    assert model.weight_replicated_bytes == 2 * whole == 535_923_034
    # TP 8: (116,556,403,162 - 535,923,034) / 8 + 535,923,034 (before: no table, an even split, 14,569,550,396)
    assert _per_gpu(model, 34, 8) == (116_556_403_162 - 535_923_034) // 8 + 535_923_034 == 15_038_483_050


def test_hy_v4_counts_and_holds_the_attention_biases():
    # attention_bias: HYV4Attention biases q_a_proj (1,536), kv_a_proj_with_mqa (576) and o_proj (2,816), uncounted
    # before; all three whole on every rank (the fused latent projection; o_proj a RowParallelLinear)
    model = build_model(dict(HY_V4, attention_bias=True), "hy-bias")
    assert model.param_count == HY_TOTAL + 34 * (1_536 + 576 + 2_816) == 58_278_369_133
    assert model.weight_replicated_bytes == 535_923_034 + 2 * 34 * 4_928


# -- A.X-K1 (axk1) -----------------------------------------------------------------------------------------------

# hidden 7,168, 64 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128, 61 layers (layer 0
# dense, 18,432), 192 experts of 2,048 and 1 shared, vocab 163,840, untied. Attention: q_a_proj 7,168 x 1,536 =
# 11,010,048, q_a_layernorm 1,536, q_b_proj 1,536 x 64 x 192 = 18,874,368, kv_a_proj_with_mqa 7,168 x 576 =
# 4,128,768, kv_a_layernorm 512, kv_b_proj 512 x 64 x 256 = 8,388,608, o_proj 64 x 128 x 7,168 = 58,720,256:
# 101,124,096; two norms 14,336; the dense MLP 3 x 7,168 x 18,432 = 396,361,728; a MoE: experts 192 x 3 x 7,168 x
# 2,048 = 8,455,716,864, router 192 x 7,168 = 1,376,256 and its score bias 192, shared 3 x 7,168 x 2,048 =
# 44,040,192, post_mlp_layernorm 7,168.
AXK1_TOTAL = (61 * (101_124_096 + 14_336) + 396_361_728 + 60 * (8_455_716_864 + 1_376_256 + 192 + 44_040_192 + 7_168)
              + 2 * 163_840 * 7_168 + 7_168)


def test_axk1_holds_its_latent_down_projections_norms_and_routers_whole():
    model = build_model(AXK1, "axk1")
    assert model.param_count == AXK1_TOTAL == 518_983_063_808
    # whole: q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm and two norms a layer (61 x 15,155,200);
    # the routers, their score biases and post_mlp_layernorm (60 x 1,383,616); the final norm
    whole = 61 * (11_010_048 + 1_536 + 4_128_768 + 512 + 14_336) + 60 * (1_376_256 + 192 + 7_168) + 7_168
    assert model.weight_replicated_bytes == 2 * whole == 2_014_982_656
    # TP 8: (1,037,966,127,616 - 2,014,982,656) / 8 + 2,014,982,656 (before: no table, an even split,
    # 129,745,765,952)
    assert _per_gpu(model, 61, 8) == (1_037_966_127_616 - 2_014_982_656) // 8 + 2_014_982_656 == 131_508_875_776


# -- dots3-note (dots3_note_text) ----------------------------------------------------------------------------------

# hidden 5,120, 8 layers: DSA on 0, 1 and 5 (i < 2 or i % 4 == 1), sliding elsewhere; layer 0 dense (13,824), 7 MoE
# layers (256 experts of 1,536, 1 shared of 1,536); vocab 152,064, untied. A DSA layer's attention (128 heads,
# q_lora_rank 1,024, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128): q_a_proj 5,120 x 1,024 = 5,242,880,
# q_a_layernorm 1,024, q_b_proj 1,024 x 128 x 192 = 25,165,824, kv_a_proj_with_mqa 5,120 x 576 = 2,949,120,
# kv_a_layernorm 512, kv_b_proj 512 x 128 x 256 = 16,777,216, o_proj 128 x 128 x 5,120 = 83,886,080,
# k_rope_only_layernorm 64, g_proj 5,120 x 128 = 655,360: 134,678,080; its indexer (64 heads of 128): wq_b
# 1,024 x 8,192 = 8,388,608, wk 5,120 x 128 = 655,360, k_norm 256, weights_proj 5,120 x 64 = 327,680: 9,371,904.
# A sliding layer's (the swa_* widths: 64 heads, q_lora_rank 1,024, kv_lora_rank 1,024, qk_nope 192, qk_rope
# 256 - 192 = 64, v 128): q_a_proj 5,242,880, q_a_layernorm 1,024, q_b_proj 1,024 x 64 x 256 = 16,777,216,
# kv_a_proj_with_mqa 5,120 x 1,088 = 5,570,560, kv_a_layernorm 1,024, kv_b_proj 1,024 x 64 x 320 = 20,971,520,
# o_proj 64 x 128 x 5,120 = 41,943,040, k_rope_only_layernorm 64, g_proj 5,120 x 64 = 327,680: 90,835,008.
# Two norms 10,240 a layer; the dense MLP 3 x 5,120 x 13,824 = 212,336,640; a MoE: experts 256 x 3 x 5,120 x 1,536
# = 6,039,797,760, router 256 x 5,120 = 1,310,720 and its score bias 256, shared 3 x 5,120 x 1,536 = 23,592,960.
DOTS3_TOTAL = (3 * (134_678_080 + 10_240) + 3 * 9_371_904 + 5 * (90_835_008 + 10_240) + 212_336_640
               + 7 * (6_039_797_760 + 1_310_720 + 256 + 23_592_960) + 2 * 152_064 * 5_120 + 5_120)


def test_dots3_note_holds_its_latent_down_projections_gates_indexers_and_routers_whole():
    model = build_model(DOTS3, "dots3")
    assert model.param_count == DOTS3_TOTAL == 45_108_795_904
    # whole: a DSA layer's q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm, k_rope_only_layernorm,
    # g_proj and two norms (5,242,880 + 1,024 + 2,949,120 + 512 + 64 + 655,360 + 10,240 = 8,859,200), a sliding
    # layer's (5,242,880 + 1,024 + 5,570,560 + 1,024 + 64 + 327,680 + 10,240 = 11,153,472), the three indexers,
    # the routers and their score biases (7 x 1,310,976), the final norm
    whole = 3 * 8_859_200 + 5 * 11_153_472 + 3 * 9_371_904 + 7 * 1_310_976 + 5_120
    assert model.weight_replicated_bytes == 2 * whole == 239_285_248
    # TP 8: (90,217,591,808 - 239,285,248) / 8 + 239,285,248 (before: no table, an even split, 11,277,198,976)
    assert _per_gpu(model, 8, 8) == (90_217_591_808 - 239_285_248) // 8 + 239_285_248 == 11_486_573_568


# -- A.X-K2 (axk2) -----------------------------------------------------------------------------------------------

# hidden 2,048, 32 heads, q_lora_rank 384, kv_lora_rank 128, qk_rope 32, qk_nope 64, v 64, 48 layers (layer 0 dense,
# 5,120), 128 experts of 512 and 1 shared, an indexer (16 heads of 128) on every layer, gated_norm_rank 16, vocab
# 163,840, untied. Attention: q_a_proj 2,048 x 384 = 786,432, q_a_layernorm 384, q_b_proj 768 x 32 x 160 =
# 3,932,160, kv_a_proj_with_mqa 2,048 x 160 = 327,680, kv_a_layernorm 128, kv_b_proj 128 x 32 x 128 = 524,288,
# o_proj 32 x 64 x 2,048 = 4,194,304: 9,765,376; the indexer: wq_b 384 x 2,048 = 786,432, wk 2,048 x 128 = 262,144,
# k_norm 256, weights_proj 2,048 x 16 = 32,768: 1,081,600; a gated norm: 2,048 + W_down and W_up 2 x 2,048 x 16 =
# 67,584. The dense layer's plain post-attention norm 2,048 and MLP 3 x 2,048 x 5,120 = 31,457,280; a MoE layer's
# gated post-attention norm and MoE: experts 128 x 3 x 2,048 x 512 = 402,653,184, router 128 x 2,048 = 262,144 and
# its score bias 128, shared 3 x 2,048 x 512 = 3,145,728.
AXK2_TOTAL = (48 * (9_765_376 + 1_081_600 + 67_584) + 2_048 + 31_457_280
              + 47 * (67_584 + 402_653_184 + 262_144 + 128 + 3_145_728) + 2 * 163_840 * 2_048 + 2_048)


def test_axk2_holds_its_latent_down_projections_indexers_gated_norms_and_routers_whole():
    model = build_model(AXK2, "axk2")
    assert model.param_count == AXK2_TOTAL == 20_314_500_992
    # whole a layer: q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm (786,432 + 384 + 327,680 + 128),
    # the indexer and the gated input norm; the dense layer's plain norm; a MoE layer's gated norm, router and score
    # bias (67,584 + 262,272); the final norm
    whole = 48 * (1_114_624 + 1_081_600 + 67_584) + 2_048 + 47 * (67_584 + 262_272) + 2_048
    assert model.weight_replicated_bytes == 2 * whole == 248_340_224
    # TP 8: (40,629,001,984 - 248,340,224) / 8 + 248,340,224 (before: no table, an even split, 5,078,625,248)
    assert _per_gpu(model, 48, 8) == (40_629_001_984 - 248_340_224) // 8 + 248_340_224 == 5_295_922_944


# -- Kolibri 1.1 (kolibri1_1) --------------------------------------------------------------------------------------

# hidden 2,560, 50 layers, 48 heads and 4 KV heads of 128; indexed layers 4, 9 ... 49, of which 9, 14, 49 read layer
# 4's K/V and 34, 39, 44 layer 29's (Kolibri1_1Config's default kv_source_layers): 44 layers with k/v of their own.
# mlp_only_layers left out: Kolibri1_1Config makes layers 0 and 1 dense (3,584); 48 MoE layers of 384 experts of 512
# and a shared expert of 512 (num_experts: Kolibri1_1Config's attribute_map reads it as num_local_experts); vocab
# 128,000, untied. A layer: q_proj and o_proj 2 x 2,560 x 6,144 = 31,457,280, q_norm 128, four norms 10,240 =
# 31,467,648; a layer's own k_proj and v_proj 2 x 2,560 x 512 = 2,621,440 and k_norm 128. The dense MLP
# 3 x 2,560 x 3,584 = 27,525,120; a MoE: experts 384 x 3 x 2,560 x 512 = 1,509,949,440, router 384 x 2,560 = 983,040
# and its score bias 384, shared 3 x 2,560 x 512 = 3,932,160.
KOLIBRI_MOE = 1_509_949_440 + 983_040 + 384 + 3_932_160
KOLIBRI_TOTAL = (50 * 31_467_648 + 44 * 2_621_568 + 2 * 27_525_120 + 48 * KOLIBRI_MOE + 2 * 128_000 * 2_560 + 2_560)


def test_kolibri_1_1_reads_num_experts_and_its_default_dense_layers():
    # before: "parameters not counted" (no num_local_experts), and with it every layer a MoE (mlp_only_layers
    # read as none when absent)
    assert build_model(KOLIBRI, "kolibri").param_count == KOLIBRI_TOTAL == 75_112_665_344
    assert build_model(dict(KOLIBRI, mlp_only_layers=[]), "kolibri-moe").param_count \
        == KOLIBRI_TOTAL + 2 * (KOLIBRI_MOE - 27_525_120)


def test_kolibri_1_1_holds_its_norms_and_routers_whole():
    model = build_model(KOLIBRI, "kolibri")
    # whole: q_norm and four norms a layer (50 x 10,368), k_norm on 44 layers, the routers and their score biases
    # (48 x 983,424), the final norm
    whole = 50 * (128 + 10_240) + 44 * 128 + 48 * 983_424 + 2_560
    assert model.weight_replicated_bytes == 2 * whole == 95_461_888
    # TP 4 (one KV head a rank: the k/v projections split by 4 as the rest): (150,225,330,688 - 95,461,888) / 4 +
    # 95,461,888 (before: not counted)
    assert _per_gpu(model, 50, 4) == (150_225_330_688 - 95_461_888) // 4 + 95_461_888 == 37_627_929_088


# -- Dory (dory) -------------------------------------------------------------------------------------------------

# hidden 2,560, 36 layers, 16 heads and 4 KV heads of 256, MLP 7,168, vocab 131,072, untied. A layer: q_proj, o_proj
# and g_proj 3 x 2,560 x 4,096 = 31,457,280, k_proj and v_proj 2 x 2,560 x 1,024 = 5,242,880, sqk and s_gate
# 2 x 4,096; the MLP 3 x 2,560 x 7,168 = 55,050,240 and suv_gate, suv_up 2 x 7,168; attn_alpha and mlp_alpha
# 2 x 2,560: 91,778,048. Embeddings and head 2 x 131,072 x 2,560, logit_scale 131,072. The loops add nothing.
DORY_TOTAL = 36 * 91_778_048 + 2 * 131_072 * 2_560 + 131_072


DORY_PHYSICAL = dict(DORY, num_hidden_layers=72, n_input_layers=16, n_output_layers=16, layer_types=[
    t for i in range(36) for t in ("full_attention" if (i + 1) % 4 == 0 else "sliding_attention", "mlp")])


@pytest.mark.parametrize("raw", [DORY, DORY_PHYSICAL], ids=["logical", "physical"])
def test_dory_names_each_decoder_layer_as_its_two_checkpoint_layers(raw):
    family, f, _, layers, dims = _read(raw, "dory")
    modules = table(f, layers, dims)
    assert sum(m.weight + m.other for m in modules) == DORY_TOTAL == 3_975_229_440
    names = {m.name for m in modules}
    # decoder layer 1: its attention at checkpoint layer 2, its MLP at layer 3
    assert {"backbone.layers.2.mixer.q_proj", "backbone.layers.2.mixer.g_proj", "backbone.layers.2.attn_alpha",
            "backbone.layers.3.mixer.down_proj", "backbone.layers.3.mlp_alpha", "backbone.embeddings",
            "lm_head.logit_scale"} <= names
    assert "backbone.layers.72.mixer.q_proj" not in names and "backbone.layers.71.mlp_alpha" in names
    # its nGPT scales, alphas and logit_scale are plain parameters of full width: 36 x (8,192 + 14,336 + 5,120)
    # + 131,072 = 1,126,400 parameters
    assert build_model(raw, "dory").weight_replicated_bytes == 2 * (36 * 27_648 + 131_072) == 2_252_800


def test_mistral_small_4_table_names_and_sizes_the_modules_transformers_builds():
    # transformers 5.25 registers Mistral4ForCausalLM as an image-text-to-text class, not a causal LM
    # (models/auto/modeling_auto.py), so tests/test_quant_exclude.py's check cannot build it: the same check here
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import warnings

    import torch
    from transformers import AutoModelForImageTextToText

    from parity import harness

    top = harness.shrunk_config("mistral4")
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = AutoModelForImageTextToText.from_config(top)
    theirs: dict[str, int] = {}
    tensors = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers()
                                                if n.endswith("e_score_correction_bias")]
    for name, tensor in tensors:
        key = name.rsplit(".", 1)[0] if name.endswith((".weight", ".bias")) else name
        theirs[key] = theirs.get(key, 0) + tensor.numel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        family, f, _, layers, dims = _read(harness.saved_form(top), "mistral4")
    ours: dict[str, int] = {}
    for m in table(f, layers, dims):
        name = ("" if m.top else "model.") + m.name
        if ".experts.{e}." in name:  # transformers packs the routed experts
            head, tail = name.split(".experts.{e}.")
            name = f"{head}.experts." + ("down_proj" if tail == "down_proj" else "gate_up_proj")
        ours[name] = ours.get(name, 0) + m.weight + m.other
    assert ours == theirs
    assert sum(ours.values()) == family.params(f, layers, dims)[0]
