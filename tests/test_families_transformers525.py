"""Model types transformers 5.25 added (newer than the <5.21 vLLM 0.33.0 requires), read exactly.

tests/data/configs/transformers-5.25-defaults.json holds each type's default config as transformers 5.25
builds it (`CONFIG_MAPPING[type]().to_dict()`, bookkeeping keys dropped). These tests were written while the
suite's transformers was 5.23, which lacks these types; the suite's pin is now 5.25 (ci-constraints.txt), so
tests/parity checks each of them against the cache transformers builds, and before the bump the parity harness
(benchmarks/parity_newer_transformers.py) found kvplan's cache equal to transformers' for every type below
(Ergo and Kolibri 1.1 by the window rule) but Dory, whose per-loop cache copies the harness cannot count: a
tiny Dory run printed 56 cache layers at 2 loops (14 full, 42 sliding), 36 with last_loop, as kvplan reads.
Expected parameter counts are transformers 5.25's meta-device counts of the causal LM (sum of numel),
measured once and written here; cache sizes are worked out by hand from the configs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import KvplanError

DEFAULTS = json.loads((Path(__file__).parent / "data" / "configs" / "transformers-5.25-defaults.json").read_text())


def _model(model_type: str, **changes):
    return build_model({**DEFAULTS[model_type], **changes}, model_type)


def test_ergo_every_fourth_layer_is_full_and_the_rest_slide():
    model = _model("ergo")
    assert model.reading == "exact"
    full = [i for i, layer in enumerate(model.layers) if layer.caches[0].policy.window_tokens is None]
    assert full == list(range(3, 64, 4))
    # 8 KV heads x 128 (hidden 8,192 / 64 heads), K and V in bf16: 4,096 B a token a layer; 48 layers keep 512
    n = 8192
    assert estimate(model, n).kv_bytes_per_sequence == 16 * n * 4096 + 48 * 512 * 4096
    # the released checkpoints name the window local_attention_window (ErgoConfig.attribute_map)
    config = {k: v for k, v in DEFAULTS["ergo"].items() if k not in ("sliding_window", "layer_types")}
    renamed = build_model({**config, "local_attention_window": 1024}, "ergo")
    assert estimate(renamed, n).kv_bytes_per_sequence == 16 * n * 4096 + 48 * 1024 * 4096


def test_minicpm5_moe_caches_gqa_on_every_layer():
    model = _model("minicpm5_moe")
    assert estimate(model, 4096).bytes_per_token == 28 * 2 * 128 * 2 * 2


@pytest.mark.parametrize("model_type, transformers_count, extra", [
    # Ergo: kvplan also counts the 63 sparse layers' e_score_correction_bias (256 each: a buffer, the checkpoints'
    # feed_forward.router_bias, which transformers' count leaves out)
    ("ergo", 1_105_550_917_632, 63 * 256),
    # MiniCPM5-MoE: kvplan also counts the 27 sparse layers' e_score_correction_bias (160 each: a buffer the
    # checkpoints hold, which transformers' count leaves out)
    ("minicpm5_moe", 15_002_552_320, 27 * 160),
    # Param2 runs GLM-4-MoE's model; kvplan also counts each MoE router's e_score_correction_bias (one value
    # per routed expert), a buffer transformers' count leaves out
    ("param2moe", 17_151_124_096, 20 * 64),
    # Sarvam-MoE is counted as vLLM 0.33 builds it (sarvam.py SarvamMoEForCausalLM = bailing_moe.py's model):
    # the 18 MoE routers' expert_bias (128 each), and query / key norms that are nn.LayerNorm without
    # use_rmsnorm, a bias of head_dim 64 each beyond transformers' RMSNorm weights, on all 19 layers
    ("sarvam_moe", 32_152_648_064, 18 * 128 + 19 * 2 * 64),
])
def test_parameters_equal_transformers_meta_count(model_type, transformers_count, extra):
    assert _model(model_type).param_count == transformers_count + extra


@pytest.mark.parametrize("model_type", ["param2moe", "sarvam_moe"])
def test_glm4_moe_and_bailing_implementations_cache_plain_gqa(model_type):
    model = _model(model_type)
    config = DEFAULTS[model_type]
    per_layer = 2 * config["num_key_value_heads"] * config["head_dim"] * 2
    assert estimate(model, 1000).bytes_per_token == config["num_hidden_layers"] * per_layer


@pytest.mark.parametrize("model_type", ["llava_onevision1_5", "ovis2_5"])
def test_image_text_wrappers_read_their_qwen3_text_model(model_type):
    model = _model(model_type)
    text = DEFAULTS[model_type]["text_config"]
    assert model.model_type == "qwen3" and model.num_layers == text["num_hidden_layers"]
    assert estimate(model, 1000).bytes_per_token == (text["num_hidden_layers"] * 2 * text["num_key_value_heads"]
                                                     * text["head_dim"] * 2)


# -- Dory: a recurrent block run n_recurrent_loops times (defaults: 16 / 40 / 16 entries of the physical layout,
# attention entries alternating with "mlp" ones, 2 loops, per_loop); every 4th attention entry is full

def _dory_caches(model):
    full = sum(1 for layer in model.layers for c in layer.caches if c.policy.window_tokens is None)
    return full, sum(len(layer.caches) for layer in model.layers) - full


def test_dory_per_loop_keeps_a_cache_per_loop_of_the_recurrent_layers():
    model = _model("dory")
    assert model.num_layers == 72  # the physical layout: 36 attention and 36 MLP entries
    # input + output: 4 full, 12 sliding attention entries; recurrent: 5 full, 15 sliding, each kept twice
    assert _dory_caches(model) == (4 + 2 * 5, 12 + 2 * 15)
    n, per_token = 8192, 2 * 4 * 256 * 2  # 4 KV heads x 256, K and V, bf16
    assert estimate(model, n).kv_bytes_per_sequence == 14 * n * per_token + 42 * 1024 * per_token


def test_dory_last_loop_stores_one_cache_that_every_loop_reads():
    model = _model("dory", recurrent_kv_cache_mode="last_loop")
    assert _dory_caches(model) == (9, 27)
    n, per_token = 8192, 2 * 4 * 256 * 2
    est = estimate(model, n)
    assert est.kv_bytes_per_sequence == 9 * n * per_token + 27 * 1024 * per_token
    # both loops read the recurrent layers' one cache: the same reads as per_loop's two caches
    assert est.read_bytes_per_step == 14 * n * per_token + 42 * 1024 * per_token
    assert _model("dory", n_recurrent_loops=1).layers[16].caches == model.layers[16].caches


def test_dory_parameters_do_not_grow_with_loops():
    # transformers 5.25's meta-device count of DoryForCausalLM; the checkpoint nvidia/NVIDIA-Nemotron-Labs-Dory1.0-4B
    # is quoted at 3,975,229,440 tensor elements (a public model card)
    assert _model("dory").param_count == _model("dory", n_recurrent_loops=7).param_count == 3_975_229_440


def test_dory_refusals():
    with pytest.raises(KvplanError, match="recurrent_kv_cache_mode"):
        _model("dory", recurrent_kv_cache_mode="every_loop")
    with pytest.raises(KvplanError, match="is not the 72 layers"):
        _model("dory", n_input_layers=20)


# -- Kolibri 1.1: 40 sliding layers (513), 10 NoPE indexed layers of which 6 read an earlier one's K/V

def test_kolibri1_1_indexed_layers_are_plain_kv_and_six_share():
    model = _model("kolibri1_1")
    assert {i: layer.shares_cache_of for i, layer in enumerate(model.layers) if layer.shares_cache_of is not None} == {
        9: 4, 14: 4, 34: 29, 39: 29, 44: 29, 49: 4}
    per_token, n = 2 * 4 * 128 * 2, 8192
    est = estimate(model, n)
    assert est.kv_bytes_per_sequence == 4 * n * per_token + 40 * 513 * per_token
    # a step: every sliding layer's window, and 2,048 + 128 + 8 picked tokens on each of the 10 indexed layers
    assert est.read_bytes_per_step == 40 * 513 * per_token + 10 * 2184 * per_token


def test_kolibri1_1_parameters_and_engines():
    # transformers 5.25's meta-device count (75,112,646,912) plus the 48 MoE routers' e_score_correction_bias
    # buffers of 384 values, which the checkpoint holds
    assert _model("kolibri1_1").param_count == 75_112_646_912 + 48 * 384
    from kvplan.engines.vllm import simulate
    from kvplan.errors import UsageError

    with pytest.raises(UsageError, match="cannot serve Kolibri 1.1"):
        simulate(_model("kolibri1_1"), kv_memory_bytes=2**34, max_model_len=8192)
    with pytest.raises(KvplanError, match="kv_source_layers"):
        _model("kolibri1_1", kv_source_layers=[0] * 50)


def test_lara_mini_linear_sliding_and_nope_full_layers():
    model = _model("lara_mini")  # 34 layers: linear, sliding, linear, full, sliding repeated
    kinds = [layer.kind for layer in model.layers]
    assert kinds.count("gated_deltanet state") == 14 and kinds.count("full attention") == 7
    assert kinds.count("sliding window 512") == 13
    est = estimate(model, 8192)
    per_token = 2 * 4 * 128 * 2  # 4 KV heads x 128, bf16
    assert est.kv_bytes_per_sequence == 7 * 8192 * per_token + 13 * 512 * per_token
    # Gated DeltaNet: conv over 2 x 8 x 128 + 16 x 128 channels, 3 columns, bf16; the recurrent state 16 x 128 x 128
    # in float32, as transformers' kernels keep it whatever the model dtype
    assert est.state_bytes_per_sequence == 14 * (3 * 4096 * 2 + 16 * 128 * 128 * 4)
    assert model.param_count == 7_281_684_672  # transformers 5.25's meta-device count (tied embeddings)


def test_inkling2_loop_keeps_a_cache_per_pass_of_the_looped_layers():
    model = _model("inkling2_loop")  # 24 layers, full at 5, 11, 17, 23; layers 6-17 run 3 times
    est = estimate(model, 8192)
    # cache layers: full 5 and 23 once, 11 and 17 three times (8); sliding 10 outside the loop, 10 x 3 inside (40)
    assert est.bytes_per_token == 8 * 4096 + 40 * 4096
    assert est.kv_bytes_per_sequence == 8 * 8192 * 4096 + 40 * 1024 * 4096
    # four short convs per cache layer (K and V of 8 x 128, twice hidden 2,304), 3 columns in bf16
    assert est.state_bytes_per_sequence == 48 * (2 * 8 * 128 + 2 * 2304) * 3 * 2
    nested = dict(DEFAULTS["inkling2_loop"])
    nested["text_config"] = {**nested["text_config"], "loop_config": {"core_start": 6, "core_end": 12, "num_passes": 2}}
    assert estimate(build_model(nested, "nested"), 8192).bytes_per_token == (4 + 1) * 4096 + (20 + 5) * 4096
    # transformers 5.25's meta count (26,068,156,416: the text model, its message gates and queries, an lm_head of
    # unpadded_vocab_size rows) plus the 24 routers' e_score_correction_bias buffers (128 experts), plus the head's
    # padding rows the checkpoint holds and kvplan counts: (201,024 - 200,058) x 2,304 = 2,225,664
    assert model.param_count == 26_068_156_416 + 24 * 128 + 966 * 2304
    nested["text_config"]["loop_config"] = {"core_start": 6, "core_end": 30, "num_passes": 2}
    with pytest.raises(KvplanError, match="loop covers layers"):
        build_model(nested, "bad")


def test_sarvam_mla_is_deepseek_v3s_latent_and_the_original_names_count_the_same():
    model = _model("sarvam_mla")  # 32 layers, kv_lora_rank 512 + rope 64, as DeepseekV3ForCausalLM caches it
    assert estimate(model, 1000).bytes_per_token == 32 * (512 + 64) * 2
    # transformers 5.25's meta count plus the 31 MoE routers' e_score_correction_bias buffers (128 experts)
    assert model.param_count == 106_031_763_456 + 31 * 128
    for model_type, moe_layers in (("sarvam_mla", 31), ("sarvam_moe", 18)):
        config = dict(DEFAULTS[model_type])
        config["num_experts"], config["num_shared_experts"] = config.pop("n_routed_experts"), config.pop("n_shared_experts")
        assert build_model(config, "original").param_count == _model(model_type).param_count


def test_hy_v4_vl_reads_hy_v4s_text_model_and_counts_its_parameters():
    model = _model("hy_v4_vl")  # hy_v4_vl_text: 78 MLA layers, index keys on the 21 'full' indexer layers
    assert estimate(model, 1).bytes_per_token == 78 * (512 + 64) * 2 + 21 * 132
    # transformers 5.25's meta count of the text model and lm_head (769,907,389,085; with the vision tower
    # 771,142,515,869) plus the 77 MoE routers' e_score_correction_bias buffers (256 experts)
    assert model.param_count == 769_907_389_085 + 77 * 256


def test_hy_v4_parameters_follow_its_layers():
    # HYV4Config's defaults: 34 layers, layer 0 dense (mlp_layer_types), the indexer only on the 10 'full'
    # layers, the output gate, sinks and hyper-connections counted: transformers 5.25's meta count
    # 58,278,193,133 plus 33 x 256 e_score_correction_bias values
    config = {"model_type": "hy_v4", "hidden_size": 2816, "num_hidden_layers": 34, "num_attention_heads": 32,
              "vocab_size": 120832, "intermediate_size": 6912, "moe_intermediate_size": 768, "n_routed_experts": 256,
              "n_shared_experts": 1, "num_experts_per_tok": 8, "q_lora_rank": 1536, "kv_lora_rank": 512,
              "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256, "index_n_heads": 16,
              "index_head_dim": 128, "hc_mult": 4}
    assert build_model(config, "hy_v4").param_count == 58_278_193_133 + 33 * 256


@pytest.mark.parametrize("gib, max_len, blocks, tokens", [(10, 8192, 11_702, 46_739), (40, 131072, 46_811, 535_440)])
def test_dory_vllm_pool_equals_vllms_planner(gib, max_len, blocks, tokens):
    # vLLM 0.33.0's planner on the 56 specs its dory.py registers per loop (benchmarks/vllm_oracle.py, dory())
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import V0_33

    pool = simulate(_model("dory"), kv_memory_bytes=gib * 2**30, max_model_len=max_len, max_num_batched_tokens=8192,
                    allow_long_max_model_len=True, rules=V0_33)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == (blocks, tokens)


def test_apertus1p5_text_counts_apertus_mlp_and_a_pruned_head():
    # Apertus1p5TextForCausalLM (modeling_apertus1p5.py): hidden 64, 2 layers, 4 heads / 2 KV heads of 16:
    # q 64x64 + k 64x32 + v 64x32 + o 64x64 = 12,288, q_norm + k_norm 2 x 16, up + down 2 x 64 x 128 = 16,384 (no
    # gate), two norms 2 x 64, xIELU's alpha_p and alpha_n: 28,834 a layer; embeddings 1,000 x 64 = 64,000, final
    # norm 64, lm_head output_vocab_size 600 x 64 = 38,400 (untied by default): 64,000 + 38,400 + 64 + 2 x 28,834
    config = {"model_type": "apertus1p5_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 1000,
              "output_vocab_size": 600}
    assert build_model(config, "t").param_count == 160_132
    # no output_vocab_size: the head keeps every row, 400 x 64 = 25,600 more
    assert build_model({k: v for k, v in config.items() if k != "output_vocab_size"}, "t").param_count == 185_732
    # tied (one matrix for both): the embeddings alone
    assert build_model(dict(config, output_vocab_size=None, tie_word_embeddings=True), "t").param_count \
        == 185_732 - 64_000
