"""Real MoE / MLA / hybrid config.json files (the second sweep of benchmarks/wild_configs.py, docs/models.md "Real
configs from the Hub") that kvplan read wrongly or refused. Each figure is worked out by hand from the config and
the checkpoint's published tensor list; each source is named here.

tests/data/configs/ (the configs as public model reports print them: a GitHub-indexed markdown report per model
with the original config.json or transformers' to_dict of it, then every tensor's shape, dtype and size):
- glm-4.5v-transformers5.json: GLM-4.5V, transformers 5.7's to_dict (code index id 62538297598); the report's
  checkpoint: 107,710,933,120 parameters in 46 safetensors files
- mimo-v2.5-fp8-trimmed.json: XiaomiMiMo/MiMo-V2.5's original config.json (code index id 62758385424), its
  processor_config and vision_config.vit_window_attn_types left out
- mimo-v2.5-pro-fp8.json: XiaomiMiMo/MiMo-V2.5-Pro's original config.json (code index id 62727537601), verbatim
  but for key order
- minimax-m3-mxfp8.json: MiniMax-M3-MXFP8's original config.json (code index id 62550018882), verbatim but for
  key order; the report's checkpoint: 413.27 GiB in 31 files
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
GLM45V = str(CONFIGS / "glm-4.5v-transformers5.json")
MIMO_V25 = str(CONFIGS / "mimo-v2.5-fp8-trimmed.json")
MINIMAX_M3 = str(CONFIGS / "minimax-m3-mxfp8.json")
MIMO_V25_PRO = str(CONFIGS / "mimo-v2.5-pro-fp8.json")


def test_glm45v_text_model_keeps_its_first_layer_dense():
    # The report's tensor list, vision side (model.visual.*): 24 blocks of qkv 4608 x 1536, proj 1536 x 1536,
    # gate/up/down 3 x 4096 x 1536 and two norms of 1536 (28,314,624 each: 679,550,976); downsample 4096 x 1536 x 2
    # x 2 + 4096 bias (25,169,920); position embedding 576 x 1536 (884,736); merger gate/up/down 3 x 4096 x 10944,
    # proj 4096 x 4096, a LayerNorm of 4096 with bias (151,265,280); patch_embed 1536 x 3 x 2 x 14 x 14 + 1536
    # (1,807,872); two norms of 1536 (3,072): 858,681,856. The text model is the rest, 107,710,933,120 -
    # 858,681,856 = 106,852,251,264: layer 0 a dense MLP of 3 x 4096 x 10944 (first_k_dense_replace 1), layers
    # 1-45 128 experts + a shared one of 1408. kvplan built all 46 layers as MoE (108,950,372,352: + 2,232,446,976
    # - 134,479,872 - the o_proj biases and score biases it got wrong)
    d = estimate_json(GLM45V)
    assert d["model"]["param_count"] == 106_852_251_264
    # K/V: 2 x 46 layers x 8 heads x 128 x 2 B
    assert d["bytes_per_token"] == 2 * 46 * 8 * 128 * 2


def test_fp8_store_dtype_fp8_is_plain_block_fp8():
    # MiMo-V2.5 writes quantization_config.store_dtype "fp8"; vLLM 0.34 Fp8Config compares store_dtype with "mxfp4"
    # only, so the experts load as block FP8 like every linear. kvplan refused ("kvplan knows 'mxfp4'").
    # Block FP8 128 x 128: 1 B + a float32 scale per 16,384 weights (1 + 1/4096 B). By the report's tensors:
    #   embeddings + head 2 x 152576 x 4096 x 2 B                                   2,499,805,184
    #   qkv_proj, 9 full layers 13568 x 4096 and 39 sliding ones 14848 x 4096 (FP8)  500,292,864 + 2,372,457,984
    #   o_proj, 48 x 4096 x 8192 in bf16 (every one in ignored_layers)              3,221,225,472
    #   layer 0's gate/up/down 3 x 16384 x 4096 (FP8)                               201,375,744
    #   47 x 256 experts x 3 x 2048 x 4096 (FP8)                                    302,869,118,976
    #   routers 47 x 256 x 4096 and score biases 47 x 256 at 2 B                    98,566,144 + 24,064
    #   97 norms of 4096 and 39 x 64 attention sinks at 2 B                         794,624 + 4,992
    # = 311,763,666,048 B. (The files store the routers in float32, + 98,590,208 B, which vLLM's profile adds
    # from configs/param_fp32.py; their qkv scales pad q, k and v to 128 rows each, + 2,304 B.)
    d = estimate_json(MIMO_V25)
    assert d["model"]["weight_bytes"] == 311_763_666_048
    # K/V per token: 9 full layers x 4 heads x (192 + 128) x 2 B + 39 sliding layers x 8 heads x (192 + 128) x 2 B
    assert d["bytes_per_token"] == 9 * 4 * 320 * 2 + 39 * 8 * 320 * 2


def test_mxfp8_checkpoint_is_sized_as_vllm_loads_it():
    # quant_method "mxfp8" (MiniMax-M3): vLLM 0.34 loads it as ModelOpt MXFP8, e4m3 weights + a uint8 E8M0 scale
    # per 32 inputs (1 + 1/32 B); ignored_layers keeps the head, embeddings, routers and the vision side. kvplan
    # refused ("quant_method 'mxfp8' is not a format whose bytes kvplan knows"). By the report's tensors:
    #   head + embeddings 2 x 200064 x 6144 x 2 B                                 4,916,772,864
    #   60 layers' q, o (8192 x 6144 each), k, v (512 x 6144 each) at 33/32 B      6,617,825,280
    #   3 dense MLPs 3 x 12288 x 6144 at 33/32 B                                   700,710,912
    #   57 x (128 + 1 shared) experts x 3 x 3072 x 6144 at 33/32 B                 429,360,611,328
    #   57 indexers' index_q 512 x 6144, index_k 128 x 6144 at 33/32 B             231,137,280
    #   routers 57 x 128 x 6144 and score biases 57 x 128 at 2 B                   89,653,248 + 14,592
    #   120 norms of 6144 + 1, 120 q/k norms and 114 index norms of 128 at 2 B     1,486,848 + 30,720 + 29,184
    # = 441,918,272,256 B; vLLM holds the routers and score biases in float32 (+ 89,667,840 B), which gives
    # 442,007,940,096 B, the report's language-model tensors to the byte
    d = estimate_json(MINIMAX_M3)
    assert d["model"]["weight_bytes"] == 441_918_272_256
    assert d["model"]["weights"]["quantization"] == "mxfp8"


def test_mimo_v2_reads_hybrid_layer_pattern_and_swa_heads_as_vllm_does():
    # model_type "mimo_v2" is remote code (transformers 5.25 has only mimo_v2_flash); vLLM 0.34 mimo_v2.py
    # MiMoV2DecoderLayer reads hybrid_layer_pattern (1: sliding) and builds sliding layers with
    # swa_num_key_value_heads. MiMo-V2.5-Pro: full layers 0, 7, 15, 23, 31, 39, 47, 55, 62, 69 (10 of 70), KV
    # heads 8 on both kinds. kvplan refused it (the pattern is not MiMo-V2-Flash's every-6th rule, and 8 is not
    # 2 x 8). K/V per token: 70 layers x 8 heads x (192 + 128) x 2 B = 358,400 B.
    # Weights (block FP8 128 x 128, 1 + 1/4096 B; o_proj in ignored_layers, bf16), by the report's tensors:
    #   embeddings + head 2 x 152576 x 6144 x 2 B                          3,749,707,776
    #   qkv_proj 70 x 27136 x 6144 (FP8)                                   11,673,500,160
    #   o_proj 70 x 6144 x 16384 x 2 B                                     14,092,861,440
    #   layer 0's gate/up/down 3 x 16384 x 6144 (FP8)                      302,063,616
    #   69 x 384 experts x 3 x 2048 x 6144 (FP8)                           1,000,434,696,192
    #   routers 69 x 384 x 6144, score biases 69 x 384, 60 x 128 sinks, 141 norms of 6144, at 2 B
    #                                                                      325,582,848 + 52,992 + 15,360 + 1,732,608
    # = 1,030,580,212,992 B
    d = estimate_json(MIMO_V25_PRO)
    assert d["bytes_per_token"] == 70 * 8 * 320 * 2
    kinds = {k["kind"]: k["layers"] for k in d["layer_kinds"]}
    assert sorted(kinds.values()) == [10, 60]
    assert d["model"]["weight_bytes"] == 1_030_580_212_992
