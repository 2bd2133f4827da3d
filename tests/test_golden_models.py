"""Published and hand-worked figures for real models (bf16 = 2 bytes per element).

Every expected value below is worked out from the formula
2 (K and V) x layers x kv_heads x head_dim x bytes x tokens, or from the state
shapes in the docstring of kvplan/configs/hybrid.py, not read from kvplan.
"""

from __future__ import annotations

import json

import pytest

from kvplan import estimate, load_model

GIB = 1024**3
K128 = 131072


def est(name, tokens=K128, batch=1, overrides=()):
    return estimate(load_model(name, overrides=overrides), tokens, batch)


def kind(e, prefix):
    rows = [k for k in e.kinds if k.kind.startswith(prefix)]
    assert rows, [k.kind for k in e.kinds]
    return rows[0]


def test_llama_3_1_70b_published():
    e = est("llama-3.1-70b")
    assert e.bytes_per_token == 2 * 80 * 8 * 128 * 2 == 327_680
    assert e.kv_bytes_per_sequence == 40 * GIB
    assert est("meta-llama/Llama-3.1-70B").kv_bytes_per_sequence == 40 * GIB  # by HF id
    wide = est("llama-3.1-70b", overrides=["num_key_value_heads=64"])
    assert wide.kv_bytes_per_sequence == 320 * GIB


def test_llama_batch_and_total():
    e = est("llama-3.1-8b", tokens=8192, batch=4)
    assert e.bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131_072
    assert e.total_bytes == 4 * 8192 * 131_072


def test_qwen3_next_full_layers_and_fixed_state():
    e = est("qwen3-next-80b-a3b")
    assert e.bytes_per_token == 12 * 2 * 2 * 256 * 2 == 24_576
    assert e.kv_bytes_per_sequence == 3 * GIB
    # Gated DeltaNet: conv (4-1) x (2*16*128 + 32*128), SSM 32 x 128 x 128, bf16, 36 layers
    per_layer = (3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 2
    assert e.state_bytes_per_sequence == 36 * per_layer == 39_518_208
    assert kind(e, "gated_deltanet").layers == 36
    assert kind(e, "full attention").layers == 12
    # the state does not grow with the context
    assert est("qwen3-next-80b-a3b", tokens=1024).state_bytes_per_sequence == e.state_bytes_per_sequence


def test_jamba_vs_mixtral_at_256k():
    jamba, mixtral = est("jamba-v0.1", 262_144), est("mixtral-8x7b", 262_144)
    assert jamba.kv_bytes_per_sequence == 4 * GIB
    assert mixtral.kv_bytes_per_sequence == 32 * GIB
    # Mamba: conv (4-1) x 8192 + SSM 8192 x 16, bf16, 28 layers (attention at 4, 12, 20, 28)
    assert jamba.state_bytes_per_sequence == 28 * (3 * 8192 + 8192 * 16) * 2
    assert kind(jamba, "full attention").layers == 4


def test_deepseek_mla_one_tensor():
    assert est("deepseek-v2").bytes_per_token == 576 * 60 * 2 == 69_120
    assert est("deepseek-v3").bytes_per_token == 576 * 61 * 2 == 70_272
    assert est("kimi-k2").bytes_per_token == 70_272


def test_deepseek_v32_indexer_cache():
    e = est("deepseek-v3.2-exp")
    # latent 576 bf16 + indexer keys 128 fp8 + one fp32 scale per 128 channels
    assert e.bytes_per_token == 61 * (576 * 2 + 128 + 4)


def test_gemma3_27b_local_and_global():
    e = est("gemma-3-27b")
    per_layer_token = 2 * 16 * 128 * 2
    local, glob = kind(e, "sliding window 1024"), kind(e, "full attention")
    assert (local.layers, glob.layers) == (52, 10)
    assert local.retained_tokens == 1024 and glob.retained_tokens == K128
    assert e.kv_bytes_per_sequence == 52 * 1024 * per_layer_token + 10 * K128 * per_layer_token


def test_gpt_oss_20b_alternating_window():
    e = est("gpt-oss-20b")
    per = 2 * 8 * 64 * 2
    assert e.kv_bytes_per_sequence == 12 * 128 * per + 12 * K128 * per


def test_mistral_v01_window_and_v03_full():
    per_token = 2 * 32 * 8 * 128 * 2
    assert est("mistral-7b-v0.1", 32768).kv_bytes_per_sequence == 4096 * per_token
    assert est("mistral-7b-v0.1", 2048).kv_bytes_per_sequence == 2048 * per_token
    assert est("mistral-7b-v0.3", 32768).kv_bytes_per_sequence == 32768 * per_token


def test_gemma3n_twenty_layers_own_a_cache():
    e = est("gemma-3n-e4b", 8192)
    owners = sum(k.cache_layers for k in e.kinds)
    assert owners == 20
    assert kind(e, "shared").layers == 15
    per = 2 * 2 * 256 * 2
    assert e.bytes_per_token == 20 * per
    assert e.kv_bytes_per_sequence == 4 * 8192 * per + 16 * 512 * per


def test_falcon_7b_multi_query_trap():
    assert est("falcon-7b").bytes_per_token == 2 * 32 * 1 * 64 * 2 == 8_192
    # falcon-40b uses the new decoder architecture: num_kv_heads 8 counts
    assert est("falcon-40b").bytes_per_token == 2 * 60 * 8 * 64 * 2


def test_starcoder_multi_query():
    assert est("starcoder").bytes_per_token == 2 * 40 * 1 * 128 * 2


def test_nemotron_h_four_attention_layers_fp32_state():
    e = est("nemotron-h-8b", 8192)
    assert kind(e, "full attention").layers == 4
    assert e.bytes_per_token == 4 * 2 * 8 * 128 * 2
    conv = 3 * (128 * 64 + 2 * 8 * 128) * 2  # bf16 conv state
    ssm = 128 * 64 * 128 * 4  # float32: NemotronHConfig's default mamba_ssm_cache_dtype (the file names none)
    assert e.state_bytes_per_sequence == 24 * (conv + ssm)
    # a config that asks for a bf16 SSM cache gets one
    bf16 = estimate(load_model("nemotron-h-8b", new=["mamba_ssm_cache_dtype=bfloat16"]), 8192)
    assert bf16.state_bytes_per_sequence == 24 * (conv + 128 * 64 * 128 * 2)


def test_falcon_h1_both_caches_every_layer():
    e = est("falcon-h1-7b", 4096)
    assert len(e.kinds) == 1 and e.kinds[0].layers == 44
    assert e.bytes_per_token == 44 * 2 * 2 * 128 * 2
    conv = 3 * (3072 + 2 * 1 * 256)
    ssm = 24 * 128 * 256
    assert e.state_bytes_per_sequence == 44 * (conv + ssm) * 2


def test_pure_mamba_has_no_growing_cache():
    e = est("mamba-2.8b", 1_000_000)
    assert e.kv_bytes_per_sequence == 0 and e.bytes_per_token == 0
    # float32 model: conv 3 x 5120, SSM 5120 x 16, 64 layers
    assert e.state_bytes_per_sequence == 64 * (3 * 5120 + 5120 * 16) * 4


def test_qwen_sliding_window_ignored_when_disabled():
    assert est("qwen2.5-7b").bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344
    assert est("qwen3-8b").bytes_per_token == 2 * 36 * 8 * 128 * 2 == 147_456


def test_phi3_window_2047():
    e = est("phi-3-mini-4k", 4096)
    assert e.kv_bytes_per_sequence == 2047 * 2 * 32 * 32 * 96 * 2


def test_deepseek_llm_67b_is_gqa():
    assert est("deepseek-llm-67b").bytes_per_token == 2 * 95 * 8 * 128 * 2 == 389_120


@pytest.mark.parametrize(
    "alias, published",
    [
        ("llama-3.1-8b", 8_030_261_248),  # HF safetensors total
        ("llama-3.1-70b", 70_553_706_496),
        ("mixtral-8x7b", 46_702_792_704),
        ("qwen2.5-7b", 7_615_616_512),
    ],
)
def test_exact_parameter_counts(alias, published):
    assert load_model(alias).param_count == published


@pytest.mark.parametrize(
    "alias, billions, tolerance",
    [("deepseek-v3", 671, 0.01), ("gpt-oss-20b", 20.9, 0.02), ("qwen3-30b-a3b", 30.5, 0.02), ("llama-3.1-405b", 405.9, 0.01)],
)
def test_parameter_counts_near_published(alias, billions, tolerance):
    assert abs(load_model(alias).param_count / 1e9 - billions) / billions < tolerance


def test_every_bundled_model_loads_and_lists(cli):
    code, out, err = cli("models", "--format", "json")
    assert code == 0, err
    models = json.loads(out)["models"]
    assert len(models) >= 20
    by_alias = {m["alias"]: m for m in models}
    assert by_alias["llama-3.1-70b"]["bytes_per_token"] == 327_680
    assert by_alias["llama-3.1-70b"]["kv_heads"] == 8 and by_alias["llama-3.1-70b"]["head_dim"] == 128


def test_qwen_moe_families():
    # qwen2_moe: head_dim from hidden 3584 / 28 heads = 128; the window is off
    assert est("qwen2-57b-a14b").bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344
    assert est("qwen3-30b-a3b").bytes_per_token == 2 * 48 * 4 * 128 * 2 == 98_304


def test_gemma_7b_multi_head():
    assert est("gemma-7b", 8192).kv_bytes_per_sequence == 8192 * 2 * 28 * 16 * 256 * 2


def test_gemma2_alternates_window_and_full():
    e = est("gemma-2-9b", 8192)
    per = 2 * 8 * 256 * 2
    assert (kind(e, "sliding window 4096").layers, kind(e, "full attention").layers) == (21, 21)
    assert e.kv_bytes_per_sequence == 21 * 4096 * per + 21 * 8192 * per


def test_gemma3_text_pattern_from_the_config():
    e = est("gemma-3-1b", 32_768)
    per = 2 * 1 * 256 * 2
    assert (kind(e, "sliding window 512").layers, kind(e, "full attention").layers) == (22, 4)
    assert e.kv_bytes_per_sequence == 22 * 512 * per + 4 * 32_768 * per


def test_mamba2_state():
    e = est("mamba-codestral-7b", 100_000)
    conv = 3 * (128 * 64 + 2 * 8 * 128)
    ssm = 128 * 64 * 128
    assert e.kv_bytes_per_sequence == 0
    assert e.state_bytes_per_sequence == 64 * (conv + ssm) * 2
