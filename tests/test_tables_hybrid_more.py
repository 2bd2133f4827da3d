"""Per-module tables of more hybrid and recurrent models (configs/weight_tables/hybrid_more.py): Bamba and
Qwen4-Exp. Each figure is worked out here by hand from the config and the module shapes of transformers 5.25
(modeling_bamba.py, modeling_qwen4_exp.py), and what each TP rank holds whole from vLLM's model files (Bamba:
0.23.0's bamba.py and layers/mamba/mamba_mixer2.py, the last release that serves it; Qwen4-Exp: 0.34.0's
models/qwen4_exp/nvidia/). BF16: 2 B a parameter."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.configs import build_model
from kvplan.configs.weight_tables import checked_table
from kvplan.engines import vllm_fp32
from kvplan.sources import load_model
from tests.weight_table_checks import per_gpu as _per_gpu

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
DATA = Path(__file__).resolve().parent / "data" / "configs"


def _bamba() -> dict:
    return json.loads((SPECS / "bamba-9b.json").read_text())


def _qwen38() -> dict:
    return json.loads((DATA / "qwen3.8-flash-next.json").read_text())


# -- Bamba-9B ------------------------------------------------------------------------------------------------------
# hidden 4,096, 32 layers (attention on 9, 18, 27: 3; Mamba-2 on 29), 32 heads and 8 KV heads of 128, MLP 14,336,
# vocab 128,256 untied. Mamba-2: 128 heads of 64 (inner 8,192), one group, state 128, conv 4 with bias, no
# projection biases.
#   in_proj 4,096 x (8,192 + 8,448 + 128) = 68,681,728 (conv_dim 8,192 + 2 x 128 = 8,448); conv1d 8,448 x 5 = 42,240;
#   dt_bias, A_log, D 3 x 128 = 384; gated norm 8,192; out_proj 8,192 x 4,096 = 33,554,432: 102,286,976 a mixer
#   attention: q, o 2 x 16,777,216 + k, v 2 x 4,194,304 = 41,943,040; MLP 3 x 4,096 x 14,336 = 176,160,768;
#   two norms 8,192
#   29 x (102,286,976 + 176,160,768 + 8,192) + 3 x (41,943,040 + 176,160,768 + 8,192) + 2 x 128,256 x 4,096 + 4,096
#   = 8,075,222,144 + 654,336,000 + 1,050,673,152 + 4,096 = 9,780,235,392 (the model card's 9.78B)
BAMBA_PARAMS = 9_780_235_392


def test_bamba_9b_table_adds_up_to_its_count():
    model = build_model(_bamba(), "bamba")
    assert model.param_count == BAMBA_PARAMS
    f, modules = checked_table(_bamba(), "bamba")
    assert sum(m.weight + m.other for m in modules) == BAMBA_PARAMS
    assert {m.vllm_fp32.suffix for m in modules if m.vllm_fp32} == {"mamba.A_log"}


def test_bamba_counts_the_mlp_biases_mlp_bias_gives():
    # BambaMLP: gate_proj, up_proj (14,336 each) and down_proj (4,096) biased under mlp_bias: 32 x 32,768 more
    # (uncounted before)
    raw = dict(_bamba(), mlp_bias=True)
    assert build_model(raw, "bamba-bias").param_count == BAMBA_PARAMS + 32 * 32_768 == 9_781_283_968
    # vLLM 0.23.0's BambaMLP builds no biases: no table
    assert checked_table(raw, "bamba-bias") is None


def test_bamba_9b_keeps_norms_and_the_one_groups_b_c_whole():
    model = build_model(_bamba(), "bamba")
    # norms: 32 x 2 x 4,096 + the final 4,096 = 266,240. The one group's B and C (2 x 128 = 256 channels), which
    # MambaMixer2 loads on every rank: in_proj 4,096 x 256 = 1,048,576 and conv1d 256 x 5 = 1,280 a Mamba layer,
    # 29 x 1,049,856 = 30,445,824. 30,712,064 parameters
    assert model.weight_replicated_bytes == (266_240 + 30_445_824) * 2 == 61_424_128
    # TP 2: (19,560,470,784 - 61,424,128) / 2 + 61,424,128 (before: an even split, 9,780,235,392)
    assert model.weight_bytes == 2 * BAMBA_PARAMS == 19_560_470_784
    assert _per_gpu(model, 32, 2) == 9_749_523_328 + 61_424_128 == 9_810_947_456


def test_bamba_9b_fp8_compressed_tensors():
    # ibm-ai-platform/Bamba-9B-fp8's quantization_config as a public audit of the family's Hugging Face configs
    # describes it (code index file id 57098957315, "Bamba Transformers audit": compressed-tensors,
    # float-quantized, targets Linear, static FP8 tensor weights, dynamic FP8 tensor activations, ignore lm_head);
    # rebuilt from that description, not a verbatim copy of the file
    raw = dict(_bamba(), quantization_config={
        "quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
        "config_groups": {"group_0": {"targets": ["Linear"],
                                      "weights": {"num_bits": 8, "type": "float", "strategy": "tensor",
                                                  "dynamic": False, "symmetric": True},
                                      "input_activations": {"num_bits": 8, "type": "float", "strategy": "tensor",
                                                            "dynamic": True, "symmetric": True}}}})
    model = build_model(raw, "bamba-fp8")
    # FP8: in_proj + out_proj 102,236,160 on 29 layers, q/k/v/o 41,943,040 on 3, the MLP 176,160,768 on 32:
    # 2,964,848,640 + 125,829,120 + 5,637,144,576 = 8,727,822,336 at 1 B; the rest (embeddings, head, norms,
    # conv1d, dt_bias / A_log / D) 9,780,235,392 - 8,727,822,336 = 1,052,413,056 at 2 B (the audit's 8.73 GB of
    # float8_e4m3fn and 2.10 GB of bfloat16)
    assert model.weight_bytes == 8_727_822_336 + 2 * 1_052_413_056 == 10_832_648_448
    # whole on every rank: the norms 266,240 x 2 B, B / C's in_proj rows 29 x 1,048,576 at 1 B and conv1d channels
    # 29 x 1,280 x 2 B
    assert model.weight_replicated_bytes == 532_480 + 30_408_704 + 74_240 == 31_015_424
    # TP 2: (10,832,648,448 - 31,015,424) / 2 + 31,015,424
    assert _per_gpu(model, 32, 2) == 5_400_816_512 + 31_015_424 == 5_431_831_936


def test_bamba_a_in_float32_under_vllm():
    # MambaMixer2's A (A_log: 128 a Mamba layer, split by heads): 29 x 128 = 3,712 parameters, + 2 B each
    up = vllm_fp32.upcast(load_model(str(SPECS / "bamba-9b.json")), "0.23.0")
    assert (up.whole_params, up.split_params) == (0, 3_712)
    assert up.per_gpu_bytes(tp=2) == 3_712


# -- Qwen3.8-Flash-Next (qwen4_exp) ------------------------------------------------------------------------------
# hidden 2,560, hc_count 4 (streams 10,240), hc_lowrank 320, 48 layers: attention (QSA) on every 4th (12), Gated
# DeltaNet on 36; 512 experts; shared expert 640; attention 24 heads / 2 KV heads of 256; indexer 4 + 1 heads of
# 128; GDN 48 value heads of 128; PLE on layer 2 (one-based), ple_embed_dim 2,560, conv 4; vocab 248,320 untied.

def test_qwen3_8_flash_next_table_adds_up():
    model = build_model(_qwen38(), "qwen3.8")
    f, modules = checked_table(_qwen38(), "qwen3.8")
    assert sum(m.weight + m.other for m in modules) == model.param_count
    assert {m.vllm_fp32.suffix for m in modules if m.vllm_fp32} == {"linear_attn.A_log"}


def test_qwen3_8_flash_next_keeps_hyper_connections_routers_norms_indexer_and_ple_projections_whole():
    model = build_model(_qwen38(), "qwen3.8")
    # a layer's two hyper-connection mixers (GatedResidual: hc_norm 10,240, input_mix_weight_down and _up
    # 2 x 10,240 x 320 = 6,553,600, block_inject_weight 10,240 x 4 = 40,960): 2 x 6,604,800 = 13,209,600; the
    # router 512 x 2,560 = 1,310,720 and shared_expert_gate 2,560: 14,522,880 a layer, x 48 = 697,098,240.
    # Attention layers: q_norm, k_norm 2 x 256, indexer.index_qk_proj 5 x 128 x 2,560 = 1,638,400, q_ / k_layernorm
    # 2 x 128: 1,639,168, x 12 = 19,670,016. GDN layers: the gated norm 128, x 36 = 4,608. The PLE layer: key_proj
    # 2,560 x 10,240 = 26,214,400, value_proj 2,560 x 2,560 = 6,553,600, three norms 3 x 10,240, conv1d
    # 10,240 x 4 = 40,960: 32,839,680. The final mixer: 10,240 + 6,553,600 = 6,563,840. 756,176,384 parameters
    whole = 697_098_240 + 19_670_016 + 4_608 + 32_839_680 + 6_563_840
    assert model.weight_replicated_bytes == whole * 2 == 1_512_352_768
    # TP 4: (353,887,799,040 - 1,512,352,768) / 4 + 1,512,352,768; the 2 KV heads' k_proj / v_proj under TP 4 (one
    # KV head a rank, QKVParallelLinear): 12 x 2 x 2 x 256 x 2,560 = 31,457,280 parameters held 1/2 a rank, not 1/4:
    # + 62,914,560 B x 1/4
    assert model.weight_bytes == 353_887_799_040
    assert _per_gpu(model, 48, 4) == 88_093_861_568 + 1_512_352_768 + 15_728_640 == 89_621_942_976


def test_qwen4_exp_gdn_a_log_in_float32_under_vllm_from_0_33():
    # QwenGatedDeltaNetAttention's A_log (float32, split by value heads): 36 layers x 48 = 1,728, + 2 B each;
    # 0.32 has no models/qwen4_exp
    model = load_model(str(DATA / "qwen3.8-flash-next.json"))
    up = vllm_fp32.upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params) == (0, 1_728)
    assert up.per_gpu_bytes(tp=4) == 864
    assert vllm_fp32.upcast(model, "0.32.0") is None


# -- GLM-5.3-Flash (glm5_next): the public EXL3 derivative's config (tests/data/configs, as test_families_2026.py
# reads it) without its quantization_config (EXL3, whose bytes kvplan does not know), i.e. as a bf16 checkpoint
# hidden 4,096, 45 layers: MLA + DSA indexer on 3, 7, ..., 43 (11), KDA on 34; hc_mult 4 (24 mix rows over
# 4 x 4,096 = 16,384); 64 heads, q_lora 1,536, kv_lora 512, no RoPE dims; indexer 32 heads of 128, k-pool 4; KDA
# 64 heads of 128, conv 4; first 3 layers dense, 42 sparse with 256 experts; vocab 154,880 untied.

def _glm53(tmp_path=None):
    raw = json.loads((DATA / "glm-5.3-flash-exl3-derivative.json").read_text())
    raw.pop("quantization_config")
    if tmp_path is None:
        return raw
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return load_model(str(path))


def test_glm_5_3_flash_table_adds_up():
    model = build_model(_glm53(), "glm-5.3")
    f, modules = checked_table(_glm53(), "glm-5.3")
    assert sum(m.weight + m.other for m in modules) == model.param_count


def test_glm5_next_counts_the_router_bias_and_reads_transformers_kda_fields():
    # the count before: 279,498,427,390 (test_families_2026.py), less the 42 x 256 score-correction biases the
    # checkpoint holds; a config that gives the KDA widths as linear_num_heads / linear_head_dim /
    # linear_conv_kernel_dim (Glm5NextTextConfig's own fields) instead of linear_attn_config counts the same (before:
    # refused, no linear_attn_config.num_heads)
    raw = _glm53()
    assert build_model(raw, "glm-5.3").param_count == 279_498_427_390 + 42 * 256 == 279_498_438_142
    text = raw["text_config"]
    text.pop("linear_attn_config")
    text.update(linear_num_heads=64, linear_head_dim=128, linear_conv_kernel_dim=4)
    assert build_model(raw, "glm-5.3-fields").param_count == 279_498_438_142


def test_glm_5_3_flash_keeps_hyper_connections_latents_indexers_and_routers_whole():
    model = build_model(_glm53(), "glm-5.3")
    # a layer: hc_attn / hc_ffn fn 24 x 16,384 = 393,216, base 24, scale 3: 2 x 393,243 = 786,486, two norms
    # 8,192: 794,678, x 45 = 35,760,510. MLA layers: q_a_proj 4,096 x 1,536 = 6,291,456, q_a_layernorm 1,536,
    # kv_a_proj_with_mqa 4,096 x 512 = 2,097,152, kv_a_layernorm 512; the indexer's wq_b 1,536 x 32 x 128 =
    # 6,291,456, wk 4,096 x 128 = 524,288, k_norm 2 x 128, weights_proj 4,096 x 32 = 131,072, the k-pool's ape
    # 4 x 128 = 512 and gate 128 x 4,096 = 524,288: 15,862,528, x 11 = 174,487,808. KDA layers: f_a_proj and
    # g_a_proj 2 x 4,096 x 128, o_norm 128: 1,048,704, x 34 = 35,655,936. Sparse layers: the router
    # 256 x 4,096 = 1,048,576 and its bias 256: 1,048,832, x 42 = 44,050,944. The final norm 4,096
    whole = 35_760_510 + 174_487_808 + 35_655_936 + 44_050_944 + 4_096
    assert model.weight_replicated_bytes == whole * 2 == 579_918_588
    # TP 8: (558,996,876,284 - 579,918,588) / 8 + 579,918,588 (before: an even split of 558,996,854,780,
    # 69,874,606,848)
    assert model.weight_bytes == 2 * 279_498_438_142 == 558_996_876_284
    assert _per_gpu(model, 45, 8) == 69_802_119_712 + 579_918_588 == 70_382_038_300


def test_glm5_next_float32_parameters_under_vllm(tmp_path):
    # vLLM 0.33 / 0.34 glm5next: whole in float32 the hyper-connections 45 x 786,486 = 35,391,870, the routers'
    # biases 42 x 256 = 10,752, the k-pool ape 11 x 512 = 5,632 and the indexer k_norm 11 x 256 = 2,816
    # (35,411,070); split in float32 KDA's dt_bias 64 x 128, A_log 64 and the q/k/v convolutions 3 x 8,192 x 4 on
    # 34 layers: 34 x (8,192 + 64 + 98,304) = 3,623,040. TP 8: + 2 B x (35,411,070 + 3,623,040 / 8)
    model = _glm53(tmp_path)
    up = vllm_fp32.upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params) == (35_411_070, 3_623_040)
    assert up.per_gpu_bytes(tp=8) == 2 * (35_411_070 + 452_880) == 71_727_900
    assert vllm_fp32.upcast(model, "0.32.0") is None


# -- Inkling (inkling_text): the quoted small Inkling's text sizes (tests/data/configs/inkling-small-text-quoted.json,
# vLLM's own inkling_model config) written as transformers' InklingTextConfig fields (conv_kernel_size for
# sconv_kernel_size). hidden 4,096, 42 layers, sliding (local_layer_ids: 35) and full (5, 11, ..., 41: 7) both 32
# heads / 8 KV heads of 128, d_rel 16, rel extent 1,024 (full) and 512 (sliding), conv 4; layers 0-1 dense
# (16,384), 40 sparse: 256 experts + 2 shared of 2,048; vocab 201,024

def _inkling() -> dict:
    local = json.loads((DATA / "inkling-small-text-quoted.json").read_text())["text_config"]["local_layer_ids"]
    return {"architectures": ["InklingForCausalLM"], "model_type": "inkling_text", "hidden_size": 4096,
            "num_hidden_layers": 42, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "swa_num_attention_heads": 32, "swa_num_key_value_heads": 8, "swa_head_dim": 128, "vocab_size": 201024,
            "d_rel": 16, "rel_extent": 1024, "sliding_window_size": 512, "conv_kernel_size": 4,
            "local_layer_ids": local, "dense_mlp_idx": 2, "dense_intermediate_size": 16384,
            "intermediate_size": 2048, "n_routed_experts": 256, "num_experts_per_tok": 6, "n_shared_experts": 2}


def test_inkling_table_adds_up_to_its_count_by_hand():
    # attention: q, o 2 x 16,777,216, k, v 2 x 4,194,304, r_proj 4,096 x 32 x 16 = 2,097,152, k/v sconv
    # 2 x 1,024 x 4 = 8,192, q/k norms 256, rel 16 x 1,024 = 16,384 (full: 44,065,024) or 16 x 512 (sliding:
    # 44,056,832); two norms and attn/mlp sconv 8,192 + 32,768 = 40,960 a layer. MoE: router 258 x 4,096 =
    # 1,056,768, global_scale 1, bias 256, experts 256 x 3 x 4,096 x 2,048 = 6,442,450,944, shared 2 x 3 x 4,096 x
    # 2,048 = 50,331,648: 6,493,839,617; dense 3 x 4,096 x 16,384 + 1 = 201,326,593. Ends: 2 x 201,024 x 4,096 +
    # embed_norm and norm 8,192 = 1,646,796,800
    total = (1_646_796_800 + 35 * (44_056_832 + 40_960) + 7 * (44_065_024 + 40_960) + 40 * 6_493_839_617
             + 2 * 201_326_593)
    model = build_model(_inkling(), "inkling")
    assert model.param_count == total == 263_655_199_274
    f, modules = checked_table(_inkling(), "inkling")
    assert sum(m.weight + m.other for m in modules) == total


def test_inkling_keeps_its_embeddings_router_and_rel_tables_whole():
    model = build_model(_inkling(), "inkling")
    # embed_tokens 201,024 x 4,096 = 823,394,304 (vLLM's InklingReplicatedEmbedding) + embed_norm and norm 8,192;
    # sliding layers q/k norms 256 + rel 8,192 + two norms 8,192 = 16,640 (x 35 = 582,400), full 256 + 16,384 +
    # 8,192 = 24,832 (x 7 = 173,824); the router 1,056,768 + 1 + 256 on 40 layers = 42,281,000; the dense
    # global_scale x 2
    whole = 823_394_304 + 8_192 + 582_400 + 173_824 + 42_281_000 + 2
    assert model.weight_replicated_bytes == whole * 2 == 1_732_879_444
    # TP 8: (527,310,398,548 - 1,732,879,444) / 8 + 1,732,879,444 (before: an even split, 65,913,799,819)
    assert model.weight_bytes == 2 * 263_655_199_274 == 527_310_398_548
    assert _per_gpu(model, 42, 8) == 65_697_189_888 + 1_732_879_444 == 67_430_069_332
    # TP 16 (8 KV heads): k_proj, v_proj and k/v_sconv, 42 x (8,388,608 + 8,192) = 352,665,600 parameters, held 1/8
    # a rank, not 1/16: + 705,331,200 B x 1/16
    assert _per_gpu(model, 42, 16) == 32_848_594_944 + 1_732_879_444 + 44_083_200 == 34_625_557_588


# -- Inkling2 (inkling2_text): Inkling2TextConfig's defaults (transformers 5.25) written out. hidden 4,608, 48 layers
# (every 6th full: 8; sliding: 40), 48 heads / 8 KV heads of 128 on both, d_rel 16, extents 1,024, conv 4, 384
# experts of 2,304, vocab 201,024 (the checkpoint's padded rows)

def _inkling2() -> dict:
    return {"model_type": "inkling2_text", "num_hidden_layers": 48,
            "layer_types": ["hybrid" if i % 6 == 5 else "hybrid_sliding" for i in range(48)], "hidden_size": 4608,
            "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "swa_num_attention_heads": 48,
            "swa_num_key_value_heads": 8, "swa_head_dim": 128, "sliding_window_size": 1024, "rel_extent": 1024,
            "d_rel": 16, "conv_kernel_size": 4, "moe_intermediate_size": 2304, "n_routed_experts": 384,
            "num_experts_per_tok": 8, "vocab_size": 201024}


def test_inkling2_table_adds_up_to_its_count_by_hand():
    # sliding attention: wq_du, wo_ud, gate_attn 3 x 4,608 x 6,144 = 84,934,656, wk_dv / wv_dv 2 x 4,608 x 1,024 =
    # 9,437,184, attn_sink_proj 4,608 x 48 = 221,184, wr_du 4,608 x 48 x 16 = 3,538,944, rel 16 x 1,024 = 16,384,
    # q / rel clip scales 6,144 + 768, k/v sconv 2 x 1,024 x 4 = 8,192: 98,163,456, + attn_norm, mlp_norm 9,216.
    # Full: the convolutions static_w 4 x 1,024 and weight_proj 4,608 x 8 x 4, twice: 303,104 for 8,192, + four
    # norms 18,432: 98,476,800. Every layer: router 384 x 4,608 = 1,769,472, its bias 384, experts 384 x 3 x
    # 4,608 x 2,304 = 12,230,590,464, the mlp query 4,608, attn/mlp sconv 2 x 4,608 x 4 = 36,864: 12,232,401,792.
    # Attention queries after layer 0: 39 sliding x 4,608 + 8 full x 3 x 4,608 = 290,304. Ends: 2 x 201,024 x
    # 4,608 + embed_norm, norm, output_query 3 x 4,608 = 1,852,651,008
    total = (1_852_651_008 + 40 * (98_172_672 + 12_232_401_792) + 8 * (98_476_800 + 12_232_401_792) + 290_304)
    model = build_model(_inkling2(), "inkling2")
    assert model.param_count == total == 593_722_948_608
    f, modules = checked_table(_inkling2(), "inkling2")
    assert sum(m.weight + m.other for m in modules) == total
    assert {n for m in modules for n in m.names()} >= {"model.llm.unembed", "model.llm.layers.5.attn.k_sconv.static_w",
                                                       "model.llm.attn_res.attn_queries.4"}


def test_inkling2_keeps_norms_router_queries_and_rel_tables_whole():
    model = build_model(_inkling2(), "inkling2")
    # norms: embed_norm, norm 9,216, sliding 40 x 9,216, full 8 x 18,432; the attention-residual queries 4,608 +
    # 290,304 + 48 x 4,608; rel tables 48 x 16,384; static convolution taps 8 x 2 x 4,096; router and bias
    # 48 x 1,769,856
    whole = (9_216 + 368_640 + 147_456 + 4_608 + 290_304 + 221_184 + 786_432 + 65_536 + 84_953_088)
    assert model.weight_replicated_bytes == whole * 2 == 173_692_928
    # TP 8: (1,187,445,897,216 - 173,692,928) / 8 + 173,692,928
    assert _per_gpu(model, 48, 8) == 148_409_025_536 + 173_692_928 == 148_582_718_464
    # TP 16 (8 KV heads): wk_dv / wv_dv 48 x 9,437,184, the sliding k/v sconv 40 x 8,192 and the full layers'
    # weight_proj 8 x 294,912, 455,671,808 parameters held 1/8 a rank, not 1/16: + 911,343,616 B x 1/16
    assert _per_gpu(model, 48, 16) == 74_204_512_768 + 173_692_928 + 56_958_976 == 74_435_164_672


# -- Inkling2-Loop (inkling2_loop_text): transformers 5.25's default config (tests/data/configs/
# transformers-5.25-defaults.json, as test_families_transformers525.py reads it). hidden 2,304, 24 layers (full at 5,
# 11, 17, 23), 24 heads / 8 KV heads of 128, d_rel 16, extents 1,024, conv 4, 128 experts of 1,152, vocab 201,024;
# layers 6-17 looped, gate rank 64

def _loop() -> dict:
    return json.loads((DATA / "transformers-5.25-defaults.json").read_text())["inkling2_loop"]


def test_inkling2_loop_table_adds_up_to_its_count_by_hand():
    # sliding attention: wq_du, wo_ud, gate_attn 3 x 2,304 x 3,072 = 21,233,664, wk / wv 2 x 2,304 x 1,024 =
    # 4,718,592, sink 2,304 x 24 = 55,296, wr_du 2,304 x 24 x 16 = 884,736, rel 16,384, clip scales 3,072 + 384,
    # k/v sconv 8,192: 26,920,320, + two norms 4,608. Full: convolutions 2 x (4 x 1,024 + 2,304 x 8 x 4) = 155,648
    # for 8,192, + four norms 9,216: 27,076,992. Every layer: router 128 x 2,304 = 294,912, bias 128, experts
    # 128 x 3 x 2,304 x 1,152 = 1,019,215,872, mlp query 2,304, attn/mlp sconv 18,432: 1,019,531,648. Attention
    # queries after layer 0: 19 x 2,304 + 4 x 6,912 = 71,424. Ends: 2 x 201,024 x 2,304 + 3 x 2,304 =
    # 926,325,504. The loop: 12 layers x (4 gates x (64 x 4,608 + 2 x 2,304 x 64) + 4 queries x 2,304) = 28,422,144
    total = (926_325_504 + 20 * (26_924_928 + 1_019_531_648) + 4 * (27_076_992 + 1_019_531_648) + 71_424
             + 28_422_144)
    model = build_model(_loop(), "loop")
    assert model.param_count == total == 26_070_385_152
    f, modules = checked_table(_loop(), "loop")
    assert sum(m.weight + m.other for m in modules) == total


def test_inkling2_loop_keeps_norms_router_and_queries_whole():
    model = build_model(_loop(), "loop")
    # embed_norm, norm, output_query 6,912; layer norms 20 x 4,608 + 4 x 9,216; attention and mlp queries 71,424 +
    # 24 x 2,304; rel tables 24 x 16,384; static taps 4 x 8,192; router and bias 24 x 295,040; the loop's queries
    # 2 x 12 x 2 x 2,304
    whole = 6_912 + 92_160 + 36_864 + 71_424 + 55_296 + 393_216 + 32_768 + 7_080_960 + 110_592
    assert model.weight_replicated_bytes == whole * 2 == 15_760_384
    # TP 8: (52,140,770,304 - 15,760,384) / 8 + 15,760,384
    assert model.weight_bytes == 2 * 26_070_385_152
    assert _per_gpu(model, 24, 8) == 6_515_626_240 + 15_760_384 == 6_531_386_624


# -- Lara mini (lara_mini): transformers 5.25's default config (tests/data/configs/transformers-5.25-defaults.json).
# hidden 1,024, 34 layers: 14 Gated DeltaNet, 13 sliding and 7 full attention (16 heads / 4 KV heads of 128); GDN
# 8 key heads and 16 value heads of 128, conv 4; 128 experts of 512 and a shared expert of 512; vocab 151,936, tied

def test_lara_mini_table_adds_up_to_its_count_by_hand():
    # attention: q, o 2 x 1,024 x 2,048, k, v 2 x 1,024 x 512, q/k norms 256: 5,243,136. GDN: in_proj 1,024 x
    # (2 x 1,024 + 2 x 2,048 + 2 x 16) = 6,324,224, conv1d (2 x 1,024 + 2,048) x 4 = 16,384, dt_bias and A_log 32,
    # out_norm 128, out_proj 2,048 x 1,024 = 2,097,152: 8,437,920. Every layer: experts 128 x 3 x 1,024 x 512 =
    # 201,326,592, router 131,072, shared expert 1,572,864, two norms 2,048: 203,032,576. Ends: 151,936 x 1,024
    # (tied) + the final norm 1,024
    raw = json.loads((DATA / "transformers-5.25-defaults.json").read_text())["lara_mini"]
    total = 155_583_488 + 20 * 5_243_136 + 14 * 8_437_920 + 34 * 203_032_576
    model = build_model(raw, "lara")
    assert model.param_count == total == 7_281_684_672
    f, modules = checked_table(raw, "lara")
    assert sum(m.weight + m.other for m in modules) == total
    # whole: the final norm 1,024, layer norms 34 x 2,048, q/k norms 20 x 256, GDN out_norm 14 x 128, routers
    # 34 x 131,072
    whole = 1_024 + 69_632 + 5_120 + 1_792 + 4_456_448
    assert model.weight_replicated_bytes == whole * 2 == 9_068_032
    # TP 4: (14,563,369,344 - 9,068,032) / 4 + 9,068,032
    assert _per_gpu(model, 34, 4) == 3_638_575_328 + 9_068_032 == 3_647_643_360


# -- ZAYA1 (zaya), transformers' layout: tests/test_families_vllm034.py's 40-layer config (hidden 2,048, 8 heads / 2
# KV heads of 128, CCA kernels 2 and 2, vocab 1,000) with ZayaConfig's defaults: 16 experts of 2,048, router 256,
# tied embeddings

def test_zaya_keeps_all_but_the_experts_and_embeddings_whole_as_vllm_0_34_does():
    from kvplan.engines.vllm_load import config_weights_per_gpu

    raw = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 40,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2,
           "vocab_size": 1000, "torch_dtype": "bfloat16"}
    # attention: q_proj 2,048 x 1,024, k_proj 2,048 x 256, v_proj_current / _delayed 2 x 2,048 x 128, the CCA convs
    # over 1,280 channels (1,280 x 2 + 1,280 depthwise; 1,280 x 128 x 2 + 1,280 grouped over 10 groups), o_proj
    # 1,024 x 2,048, qk_norm.temp 2: 5,575,682. Router: down_proj 2,048 x 256 + 256, norm 256, fc1 / fc2
    # 2 x (256 x 256 + 256), out_proj 256 x 17: 660,736 (+ router_states_scale 256 after layer 0). Experts
    # 16 x 3 x 2,048 x 2,048 = 201,326,592; two norms 4,096; residual scales 8 x 2,048 = 16,384: 207,583,490 a layer.
    # Ends: 1,000 x 2,048 (tied) + norm and input scale / bias 3 x 2,048
    total = 2_054_144 + 40 * 207_583_490 + 39 * 256
    model = build_model(raw, "zaya")
    assert model.param_count == total == 8_305_403_728
    f, modules = checked_table(raw, "zaya")
    assert sum(m.weight + m.other for m in modules) == total
    # whole: all but the embeddings (2,048,000) and the experts (40 x 201,326,592)
    whole = total - 2_048_000 - 40 * 201_326_592
    assert model.weight_replicated_bytes == whole * 2 == 500_584_096
    # TP 4: (16,610,807,456 - 500,584,096) / 4 + 500,584,096 (before: an even split, 4,152,701,864), in kvplan's plan
    # and in vLLM 0.34's profile
    assert _per_gpu(model, 40, 4) == 4_027_555_840 + 500_584_096 == 4_528_139_936
    assert config_weights_per_gpu(model, 4, 1, "0.34.0") == 4_528_139_936


# -- RWKV-4 (rwkv): RWKV-4-430M-Pile (model_specs/rwkv-4-430m-pile.json, a float32 checkpoint: 4 B a parameter).
# 24 blocks of hidden 1,024 (attention width 1,024, channel-mix 4,096), vocab 50,277, head untied

def test_rwkv_4_430m_keeps_layernorms_and_time_mix_whole():
    model = load_model("rwkv-4-430m-pile")
    # 24 x (time-mix 4,199,424 + channel-mix 9,439,232 + ln1, ln2 4,096) + embeddings and head 2 x 50,277 x 1,024 +
    # pre_ln and ln_out 4,096 (tests/test_quant_per_tensor.py works the same count)
    assert model.param_count == 430_397_440
    f, modules = checked_table(json.loads((SPECS / "rwkv-4-430m-pile.json").read_text()), "rwkv")
    assert sum(m.weight + m.other for m in modules) == 430_397_440
    # whole: the LayerNorms (weight and bias) 24 x 2 x 2,048 + pre_ln and ln_out 2 x 2,048 = 102,400, and the
    # time-mix vectors over hidden 24 x 5 x 1,024 = 122,880: 225,280 at 4 B
    assert model.weight_replicated_bytes == 225_280 * 4 == 901_120
    # TP 2: (1,721,589,760 - 901,120) / 2 + 901,120 (before: an even split, 860,794,880)
    assert _per_gpu(model, 24, 2) == 860_344_320 + 901_120 == 861_245_440


def test_rwkv_4_430m_awq_sizes_its_layernorms_and_time_mix_in_float():
    # AWQ 4-bit, group 128 (tests/test_quant_per_tensor.py's config; before this table the estimate counted every
    # non-embedding parameter, norms included, at the quantized width, 581,979,376 B). Quantized: a block's key,
    # value, receptance, output 4 x 1,024 x 1,024 and channel-mix key 1,024 x 4,096, receptance 1,024 x 1,024,
    # value 4,096 x 1,024: 13,631,488, x 24 = 327,155,712 at 1/2 + (2 + 1/2) / 128 = 133/256 B: 169,967,616 B; the
    # rest, 430,397,440 - 327,155,712 = 103,241,728, in float16 (AutoAWQ quantizes a float16 model whatever the
    # config's float32 says: quant_bytes._awq)
    raw = json.loads((SPECS / "rwkv-4-430m-pile.json").read_text())
    raw["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm",
                                  "zero_point": True}
    model = build_model(raw, "rwkv-awq")
    assert model.weight_bytes == 327_155_712 * 133 // 256 + 103_241_728 * 2 == 376_451_072
