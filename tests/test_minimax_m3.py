"""MiniMax-M3's block-sparse attention (minimax_m3_vl / minimax_m3_vl_text).

The config is the checkpoint's text model as published in its sparse_attention_config
form (60 layers: 3 full, then 57 sparse; 4 KV heads x 128; index keys of 128; top 16
of 128-token blocks). Expected values are worked out by hand from the layout in
transformers' modeling_minimax_m3_vl.py (K/V plus one index key per token on a
sparse layer) and vLLM's MiniMax-M3 backends (128-token blocks, bf16 index keys,
the index head replicated under TP).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvplan.capacity.shard import shard
from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.engines.vllm import simulate
from kvplan.errors import ConfigError

GIB = 2**30
SPARSE = {"use_sparse_attention": True, "sparse_index_dim": 128, "sparse_num_index_heads": 4,
          "sparse_topk_blocks": 16, "sparse_block_size": 128, "sparse_local_block": 1,
          "sparse_attention_freq": [0, 0, 0] + [1] * 57, "sparse_disable_index_value": [0, 0, 0] + [1] * 57}


def text_config(**extra) -> dict:
    raw = {"model_type": "minimax_m3_vl_text", "num_hidden_layers": 60, "hidden_size": 6144,
           "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 200064,
           "intermediate_size": 3072, "num_local_experts": 128, "num_experts_per_tok": 4,
           "max_position_embeddings": 1048576, "sparse_attention_config": dict(SPARSE)}
    raw.update(extra)
    return raw


def model(**extra):
    return build_model(text_config(**extra), "m3")


def test_bytes_per_token_by_hand():
    # full: 4 heads x (128 + 128) x 2 B = 2,048; sparse: the same plus one 128-wide bf16 index key (256)
    assert estimate(model(), 1).bytes_per_token == 3 * 2048 + 57 * (2048 + 256) == 137_472
    n = 100_000
    assert estimate(model(), n).kv_bytes_per_sequence == 137_472 * n  # no per-page metadata is stored


def test_decode_reads_top_16_blocks_and_every_index_key():
    n = 2**20
    full = 3 * n * 2048
    sparse = 57 * (16 * 128 * 2048 + n * 256)  # 16 blocks of K/V (the current one among them) + all index keys
    assert estimate(model(), n).read_bytes_per_step == full + sparse
    short = 1000  # 8 blocks, fewer than 16: every token is read
    assert estimate(model(), short).read_bytes_per_step == 137_472 * short
    # a partial current block: 15 whole blocks + the 40 tokens of the last
    n = 16 * 128 * 5 + 40
    assert estimate(model(), n).read_bytes_per_step == 3 * n * 2048 + 57 * ((15 * 128 + 40) * 2048 + n * 256)


def test_layer_types_and_the_checkpoint_form_read_the_same():
    flat = text_config(layer_types=["full_attention"] * 3 + ["minimax_m3_sparse"] * 57, index_head_dim=128,
                       index_block_size=128, index_topk_blocks=16)
    del flat["sparse_attention_config"]
    a, b = build_model(flat, "a"), model()
    assert [l.kind for l in a.layers] == [l.kind for l in b.layers]
    assert estimate(a, 50_000).read_bytes_per_step == estimate(b, 50_000).read_bytes_per_step
    assert b.layers[3].kind == "block-sparse K/V (top 16 of 128-token blocks) + index keys"


def test_the_multimodal_wrapper_reads_its_text_config():
    wrapped = build_model({"model_type": "minimax_m3_vl", "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
                           "text_config": text_config()}, "m3")
    assert estimate(wrapped, 1).bytes_per_token == 137_472


def test_parameters_add_the_indexer_of_each_sparse_layer():
    dense = model(sparse_attention_config={})
    # q_proj 6144 -> 4 x 128, k_proj 6144 -> 128, two RMSNorms of 128
    assert model().param_count - dense.param_count == 57 * (6144 * 512 + 6144 * 128 + 2 * 128)


@pytest.mark.parametrize("edit, needle", [
    ({"sparse_disable_index_value": [0] * 60}, "sparse_disable_index_value[3]"),
    ({"sparse_attention_freq": [1] * 59}, "must list 60 values"),
    ({"sparse_local_block": 20}, "index_local_blocks 20 exceeds index_topk_blocks 16"),
])
def test_bad_sparse_settings_are_refused(edit, needle):
    with pytest.raises(ConfigError) as exc:
        model(sparse_attention_config={**SPARSE, **edit})
    assert needle in str(exc.value)


def test_vllm_forces_128_token_blocks_and_sums_the_pages():
    pool = simulate(model(), kv_memory_bytes=40 * GIB, max_model_len=131072)
    assert pool.groups[0].spec.block_tokens == 128
    per_block = 60 * 128 * 2048 + 57 * 128 * 256  # one 128-token block of every layer's K/V and index keys
    assert per_block == 17_596_416
    assert pool.num_blocks == 40 * GIB // per_block == 2440
    assert pool.blocks_per_request == 131072 // 128
    assert pool.gpu_kv_cache_tokens == int(2440 / 1024 * 131072) == 312_320
    # 0.34's default block is 64 (CacheConfig.DEFAULT_BLOCK_SIZE); its MiniMax-M3 backends still take only 128
    assert any("block size 64 -> 128" in note for note in pool.notes)


def test_tp4_shards_the_kv_heads_and_replicates_the_index_key():
    rank = shard(model(), tp=4)[0]
    assert estimate(rank, 1).bytes_per_token == 3 * 512 + 57 * (512 + 256) == 45_312
    pool = simulate(model(), kv_memory_bytes=40 * GIB, max_model_len=131072, tp=4)
    assert pool.num_blocks == 40 * GIB // (128 * 45_312) == 7405


# vLLM 0.33.0's own get_kv_cache_groups + get_kv_cache_config_from_groups (benchmarks/vllm_oracle.py), run on the
# specs MiniMax-M3 registers (FullAttentionSpec(block 128, 4 or 1 heads, 128/128) per layer, MLAAttentionSpec(block
# 128, 1 head, 128, bf16, INDEXER) per sparse layer), 40 GiB: one UniformTypeKVCacheSpecs group and these blocks
VLLM_0_33_BLOCKS = {("auto", 1): 2440, ("fp8", 1): 4413, ("auto", 4): 7405}


@pytest.mark.parametrize("kv_dtype, tp", sorted(VLLM_0_33_BLOCKS))
def test_blocks_agree_with_vllm_0_33s_own_planner(kv_dtype, tp):
    pool = simulate(model(), kv_memory_bytes=40 * GIB, max_model_len=131072, tp=tp, kv_cache_dtype=kv_dtype)
    assert len(pool.groups) == 1 and pool.num_blocks == VLLM_0_33_BLOCKS[(kv_dtype, tp)]


def test_quest_is_refused_on_layers_that_already_read_selected_blocks(tmp_path):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps(text_config()))
    out = subprocess.run([sys.executable, "-m", "kvplan", "estimate", str(path), "-t", "quest"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "already read" in out.stderr and "Traceback" not in out.stderr


def test_vllm_fp8_kv_keeps_the_index_keys_in_bf16():
    pool = simulate(model(), kv_memory_bytes=40 * GIB, max_model_len=131072, kv_cache_dtype="fp8")
    per_block = 60 * 128 * 1024 + 57 * 128 * 256  # fp8 K/V (1 B), bf16 index keys (indexer_kv_dtype 'bf16')
    assert pool.num_blocks == 40 * GIB // per_block == 4413
    assert pool.gpu_kv_cache_tokens == int(4413 / 1024 * 131072) == 564_864
