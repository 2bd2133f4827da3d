"""vLLM's rules release by release: at every boundary, the last release before and the first after.

The boundaries were bisected over the released wheels' sources of every vLLM
release from 0.11.0 to 0.34.0 (kvplan/engines/vllm_rules.py cites the file and
function of each). Every expected number is worked by hand in the comment next
to it from the model's config and that release's code, not read from kvplan.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.capacity.hardware import lookup
from kvplan.cli.app import app
from kvplan.engines.vllm import PageSpec, kv_cache_groups, simulate
from kvplan.engines.vllm_rules import LATEST, RULES, V0_33, V0_34, _key, parse_engine, resolve
from kvplan.errors import UsageError
from kvplan.sources import load_model
from kvplan.workflows import apply_kv_dtype

GIB = 1024**3


def rules(version: str):
    found, note = resolve(version)
    assert note is None, note
    return found


def pool(name: str, version: str, max_len: int, kv: int = 10 * GIB, kv_dtype: str = "auto", **kwargs):
    model, _ = apply_kv_dtype(load_model(name), kv_dtype)
    return simulate(model, kv_memory_bytes=kv, max_model_len=max_len, rules=rules(version), **kwargs)


# ------------------------------------------------------------------ the objects and resolve()

def test_one_object_per_boundary_sorted_and_cited():
    versions = [r.version for r in RULES]
    assert versions == ["0.11", "0.11.1", "0.12", "0.13", "0.14", "0.15", "0.17", "0.18", "0.19", "0.20", "0.20.1",
                        "0.23", "0.25", "0.26", "0.27", "0.28", "0.29", "0.31", "0.32", "0.33", "0.34"]
    assert [_key(v) for v in versions] == sorted(_key(v) for v in versions)
    assert LATEST is V0_34 and RULES[-1] is V0_34
    for name, source in V0_34.sources().items():
        assert name == "version" or "vllm/" in source, name
    # neighbouring objects differ: each one exists because a rule changed (0.34 too: its block, sizing, PP)
    for older, newer in zip(RULES, RULES[1:]):
        differ = {f for f in V0_34.sources() if f != "version" and getattr(older, f) != getattr(newer, f)}
        assert differ, newer.version
    assert {f for f in V0_34.sources() if f != "version" and getattr(V0_33, f) != getattr(V0_34, f)} == {
        "default_block_tokens", "mla_block_bf16", "extensible_kv_cache", "gpu_memory_utilization",
        "async_scheduling_with_pp", "sparse_mla_sm100_plain_fp8", "multi_module_mtp"}


@pytest.mark.parametrize("text, version", [
    ("0.11.0", "0.11"), ("0.11.1", "0.11.1"), ("0.11.2", "0.11.1"), ("0.12.0", "0.12"), ("0.13.0", "0.13"),
    ("0.14.0", "0.14"), ("0.14.1", "0.14"), ("0.15.1", "0.15"), ("0.16.0", "0.15"), ("0.17.0", "0.17"),
    ("0.17.1", "0.17"), ("0.18.1", "0.18"), ("0.19.1", "0.19"), ("0.20", "0.20"), ("0.20.0", "0.20"),
    ("0.20.1", "0.20.1"), ("0.20.2", "0.20.1"), ("0.22.0", "0.20.1"), ("v0.24.0", "0.23"), ("0.25.1", "0.25"), ("0.27.1", "0.27"),
    ("0.28.0", "0.28"), ("0.29.0", "0.29"), ("0.30.0", "0.29"), ("0.31.0", "0.31"), ("0.32.0", "0.32"), ("0.33.0", "0.33"),
    ("0.33.1", "0.33"), ("0.34.0", "0.34"), ("0.34.1", "0.34"), ("latest", "0.34"),
])
def test_every_read_release_resolves_without_a_note(text, version):
    found, note = resolve(text)
    assert found.version == version and note is None


def test_older_releases_keep_the_note_and_newer_are_refused():
    found, note = resolve("0.10.2")
    assert found.version == "0.11" and "oldest release kvplan models" in note
    with pytest.raises(UsageError, match="newer than the newest"):
        resolve("0.35.0")


# ------------------------------------------------------------------ serving defaults

def test_gpu_memory_utilization_0_19_1_vs_0_20_0():
    # vllm/config/cache.py CacheConfig.gpu_memory_utilization: Field(default=0.9) in 0.19.1, 0.92 in 0.20.0
    assert rules("0.19.1").gpu_memory_utilization == 0.9
    assert rules("0.20.0").gpu_memory_utilization == 0.92


def test_batched_tokens_160_gib_tier_0_27_1_vs_0_28_0():
    # get_batch_defaults: the ">= 160 GiB -> 16,384" tier appears in 0.28.0; a B200 (180 GB) had 8,192 before
    b200 = lookup("b200")
    assert rules("0.27.1").max_num_batched_tokens(b200.memory_bytes, b200.name) == 8_192
    assert rules("0.28.0").max_num_batched_tokens(b200.memory_bytes, b200.name) == 16_384


# ------------------------------------------------------------------ what the log prints

def test_token_figure_0_20_0_vs_0_20_1():
    # Llama-3.1-8B: 32 layers x 16 x 8 x 256 x 2 B = 2 MiB per block; 10 GiB -> 5,120 blocks
    # max_model_len 3,000 -> cdiv(3,000, 16) = 188 blocks per request -> 27.23x
    # 0.20.0: 5,120 // 1 group x 16 = 81,920; 0.20.1: int(5,120 / 188 x 3,000) = int(81,702.13) = 81,702
    old, new = pool("llama-3.1-8b", "0.20.0", 3_000), pool("llama-3.1-8b", "0.20.1", 3_000)
    assert old.num_blocks == new.num_blocks == 5_120 and old.blocks_per_request == 188
    assert (old.gpu_kv_cache_tokens, new.gpu_kv_cache_tokens) == (81_920, 81_702)


def test_log_lines_0_27_1_vs_0_28_0_and_gib_text_0_13_vs_0_14():
    # 0.27.1 _report_kv_cache_config: two logger calls; 0.28.0 update_kv_cache_capacity: one
    two = pool("llama-3.1-8b", "0.27.1", 3_000).log_lines()
    one = pool("llama-3.1-8b", "0.28.0", 3_000).log_lines()
    assert two[1:] == ["GPU KV cache size: 81,702 tokens", "Maximum concurrency for 3,000 tokens per request: 27.23x"]
    assert one[1:] == ["GPU KV cache size: 81,702 tokens, Maximum concurrency for 3,000 tokens per request: 27.23x"]
    # "Available KV cache memory: %.2f GiB" until 0.13.0; format_gib = str(round(x, 2)) from 0.14.0
    assert pool("llama-3.1-8b", "0.13.0", 3_000).log_lines()[0] == "Available KV cache memory: 10.00 GiB"
    assert pool("llama-3.1-8b", "0.14.0", 3_000).log_lines()[0] == "Available KV cache memory: 10.0 GiB"


# ------------------------------------------------------------------ sliding window in flight

def test_sliding_window_in_flight_0_25_1_vs_0_26_0():
    # Mistral-7B-v0.1: window 4,096 on all 32 layers (one group); 10 GiB -> 5,120 blocks of 2 MiB
    # max_model_len 32,768, max_num_batched_tokens 8,192:
    # 0.25.1: cdiv(min(4,095 + 8,192, 32,768), 16) + 1 = cdiv(12,287, 16) + 1 = 769 -> 5,120 / 769 = 6.66x
    # 0.26.0: max_in_flight_tokens = 2 x 8,192: cdiv(20,479, 16) + 1 = 1,281 -> 4.00x (3.997)
    old = pool("mistral-7b-v0.1", "0.25.1", 32_768, max_num_batched_tokens=8_192)
    new = pool("mistral-7b-v0.1", "0.26.0", 32_768, max_num_batched_tokens=8_192)
    assert (old.blocks_per_request, new.blocks_per_request) == (769, 1_281)
    assert (old.concurrency_text, new.concurrency_text) == ("6.66x", "4.00x")


# ------------------------------------------------------------------ MLA block size on Hopper

def test_mla_block_0_17_1_vs_0_18_0():
    # DeepSeek-V2-Lite: latent 512 + rope 64 = 576 x 2 B = 1,152 B per token and layer
    # 0.17.1 check_and_update_config forces FlashMLA's 64: page 73,728 B; 0.18.0 picks FLASH_ATTN_MLA
    # (MultipleOf(16)) -> the default 16: page 18,432 B. fp8 (FlashMLA, [64]) stays 64: 64 x 576 = 36,864 B
    assert pool("deepseek-v2-lite", "0.17.1", 8_192).page_bytes == 73_728
    assert pool("deepseek-v2-lite", "0.18.0", 8_192).page_bytes == 18_432
    assert pool("deepseek-v2-lite", "0.18.0", 8_192, kv_cache_dtype="fp8").page_bytes == 36_864


def test_mla_user_block_0_11_0_vs_0_11_1_vs_0_18():
    # 0.11.0: block_size != 64 -> 64; 0.11.1-0.17.1: block_size % 64 != 0 -> 64 (128 kept, 32 -> 64);
    # 0.18.0: a user's --block-size is kept (user_specified_block_size)
    assert pool("deepseek-v2-lite", "0.11.0", 8_192, block_tokens=128).block_size == 64
    assert pool("deepseek-v2-lite", "0.11.1", 8_192, block_tokens=128).block_size == 128
    assert pool("deepseek-v2-lite", "0.17.1", 8_192, block_tokens=32).block_size == 64
    assert pool("deepseek-v2-lite", "0.18.0", 8_192, block_tokens=32).block_size == 32


def test_deepseek_v32_auto_0_11_0_vs_0_11_1():
    # 0.11.0 DeepseekV32ForCausalLM: auto -> fp8_ds_mla (656 B/token); 0.11.1: auto stays bf16,
    # (512 + 64) x 2 = 1,152 B/token; the indexer 128 + 128 / 128 x 4 = 132 B/token in both
    # uniform-type group of 61 layers x 2 caches, block 64 (sparse): page 64 x 61 x (656 | 1,152 + 132)
    assert pool("deepseek-v3.2-exp", "0.11.0", 8_192).page_bytes == 64 * 61 * (656 + 132)
    assert pool("deepseek-v3.2-exp", "0.11.1", 8_192).page_bytes == 64 * 61 * (1_152 + 132)


# ------------------------------------------------------------------ hybrid attention + Mamba

def test_hybrid_alignment_0_19_1_vs_0_20_0_with_a_user_block():
    # Jamba: Mamba state 311,296 B, attention 4,096 B per token, --block-size 32
    # 0.19.1 HybridAttentionMambaModelConfig aligns to 16: 16 x cdiv(311,296, 65,536) = 80 > 32 -> 80
    # 0.20.0 _align_hybrid_block_size aligns to max(16, 32) = 32: 32 x cdiv(311,296, 131,072) = 96
    assert pool("jamba-v0.1", "0.19.1", 8_192, block_tokens=32).block_size == 80
    new = pool("jamba-v0.1", "0.20.0", 8_192, block_tokens=32)
    assert new.block_size == 96 and new.page_bytes == 96 * 4_096


def test_qwen35_ssm_dtype_0_16_vs_0_17():
    # Qwen3.5-35B-A3B GDN: conv 3 x (2 x 16 x 128 + 32 x 128) = 24,576 x 2 B = 49,152 B,
    # SSM 32 x 128 x 128 = 524,288 elements; attention 2 x 512 x 2 B = 2,048 B per token
    # 0.16.0 (SSM in the serving bf16): 1,097,728 B -> 16 x cdiv(1,097,728, 32,768) = 16 x 34 = 544
    # 0.17.0 Qwen3_5ForConditionalGenerationConfig: the config's mamba_ssm_dtype float32:
    #        2,146,304 B -> 16 x cdiv(2,146,304, 32,768) = 16 x 66 = 1,056
    assert pool("qwen3.5-35b-a3b", "0.16.0", 8_192).block_size == 544
    assert pool("qwen3.5-35b-a3b", "0.17.0", 8_192).block_size == 1_056


def test_hybrid_prefix_caching_default_0_25_1_vs_0_26_0():
    # Qwen3.5-35B-A3B from 0.17: block 1,056; 10 full + 30 GDN -> 4 groups of 10
    # max_model_len 131,072: full cdiv(131,072, 1,056) = 125 blocks (1,056 x 124 = 130,944)
    # 0.25.1 (prefix caching off for hybrids, is_prefix_caching_supported): 125 + 3 GDN groups x 1 = 128
    # 0.26.0 (on: Mamba cache mode 'align', 2 state pages): 125 + 3 x 2 = 131
    assert pool("qwen3.5-35b-a3b", "0.25.1", 131_072).blocks_per_request == 128
    assert pool("qwen3.5-35b-a3b", "0.26.0", 131_072).blocks_per_request == 131
    # the flag overrides the default either way; before 0.15 (no mamba_cache_mode) vLLM turns prefix caching
    # off for a model without SupportsMambaPrefixCaching: one page
    assert pool("qwen3.5-35b-a3b", "0.25.1", 131_072, prefix_caching=True).blocks_per_request == 131
    assert pool("qwen3.5-35b-a3b", "0.26.0", 131_072, prefix_caching=False).blocks_per_request == 128
    assert pool("qwen3.5-35b-a3b", "0.17.0", 131_072, prefix_caching=True).blocks_per_request == 131
    # 0.14.1 (SSM bf16, block 544): cdiv(131,072, 544) = 241 (544 x 240 = 130,560) + 3 x 1
    assert pool("qwen3.5-35b-a3b", "0.14.1", 131_072, prefix_caching=True).blocks_per_request == 244


def test_mamba2_checkpoint_page_0_31_vs_0_32_and_all_mode_note_0_26():
    # Nemotron-H-8B (0.20+: SSM float32): block 1,040; 4 attention + 24 Mamba-2 -> 1 + 6 groups of 4
    # 8,192 tokens: cdiv(8,192, 1,040) = 8 attention blocks
    # 0.31.0 'align': 2 pages -> 8 + 6 x 2 = 20; 0.32.0 mamba_mixer2 adds a prefill checkpoint: 8 + 6 x 3 = 26
    assert pool("nemotron-h-8b", "0.31.0", 8_192).blocks_per_request == 20
    assert pool("nemotron-h-8b", "0.32.0", 8_192).blocks_per_request == 26
    # 0.26-0.27: Nemotron-H supports Mamba prefix caching -> mode 'all', which kvplan does not size: a note says so
    notes = pool("nemotron-h-8b", "0.27.1", 8_192).notes
    assert any("'all'" in n and "not modelled" in n for n in notes)
    assert not any("'all'" in n for n in pool("nemotron-h-8b", "0.28.0", 8_192).notes)


def test_nemotron_h_ssm_dtype_0_12_vs_0_13():
    # SSM 1,048,576 elements, conv 61,440 B, attention 4,096 B per token.
    # 0.12.0 (no NemotronHForCausalLMConfig): the serving bf16:
    #   2,097,152 + 61,440 = 2,158,592 B -> 16 x cdiv(2,158,592, 65,536) = 16 x 33 = 528
    # 0.13.0: getattr(hf_config, "mamba_ssm_cache_dtype", "float16"); transformers' NemotronHConfig defaults it
    # to "float32", so the config object names float32: 4,194,304 + 61,440 = 4,255,744 B -> 16 x 65 = 1,040
    # (0.20.0 only changes the fallback for a config without the attribute to float32)
    assert pool("nemotron-h-8b", "0.12.0", 8_192).block_size == 528
    assert pool("nemotron-h-8b", "0.13.0", 8_192).block_size == 1_040
    assert pool("nemotron-h-8b", "0.20.0", 8_192).block_size == 1_040


# ------------------------------------------------------------------ groups and the start check

def test_chunked_local_attention_0_13_vs_0_14():
    # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to "0" in 0.13.0: the hybrid manager is off
    # for Llama-4's chunked layers, every layer is sized as full attention (one group); "1" from 0.14.0
    old, new = pool("llama-4-scout", "0.13.0", 8_192), pool("llama-4-scout", "0.14.0", 8_192)
    assert len(old.groups) == 1 and {s.kind for s in old.layer_specs} == {"full"}
    assert len(new.groups) > 1 and "chunked" in {g.spec.kind for g in new.groups}


def _specs(sliding: int, full: int) -> list[PageSpec]:
    return ([PageSpec("sliding", 16, token_bytes=2_048, window_tokens=128)] * sliding
            + [PageSpec("full", 16, token_bytes=2_048)] * full)


@pytest.mark.parametrize("sliding, full, version, sizes", [
    # 8 sliding + 9 full (9 < 8 x 1.25): 0.11 group_size = min = 8 -> full splits in 2 (5 + 4): 3 groups;
    # 0.12.0 takes the larger count when within 1.25x: 2 groups of 8 and 9
    (8, 9, "0.11.2", [4, 5, 8]), (8, 9, "0.12.0", [8, 9]),
    # 8 + 11 (11 >= 10 = 8 x 1.25, 11 < 12 = 8 x 1.5): 0.17.1 min 8 -> 3 groups; 0.18.0 -> 2 groups
    (8, 11, "0.17.1", [5, 6, 8]), (8, 11, "0.18.0", [8, 11]),
])
def test_layers_per_group_by_release(sliding, full, version, sizes):
    groups, _ = kv_cache_groups(_specs(sliding, full), rules(version))
    assert sorted(len(g.layers) for g in groups) == sizes


def test_start_check_by_release_gpt_oss_20b():
    # gpt-oss-20b: 24 layers alternating sliding (128) / full, first layer sliding; 8 KV x 64:
    # page 16 x 8 x 128 x 2 = 32,768 B; 2 groups of 12 -> 393,216 B per block
    # max_model_len 131,072, max_num_batched_tokens 8,192: full 8,192 blocks,
    # sliding cdiv(min(127 + 8,192, 131,072), 16) + 1 = 521 blocks (in flight x1 until 0.25)
    # 0.13.0 every layer summed: 12 x 32,768 x (8,192 + 521) = 3,426,091,008 B > 1 GiB -> refuses
    # 0.14.0-0.18.1 the FIRST group (sliding) only: 393,216 x 521 = 204,865,536 <= 1 GiB -> starts
    # 0.19.0 all groups: 393,216 x 8,713 = 3,426,091,008 -> refuses
    args = dict(kv=GIB, max_num_batched_tokens=8_192)
    assert not pool("gpt-oss-20b", "0.13.0", 131_072, **args).fits
    first = pool("gpt-oss-20b", "0.14.0", 131_072, **args)
    assert first.groups[0].spec.kind == "sliding" and first.bytes_per_block == 393_216 and first.fits
    assert pool("gpt-oss-20b", "0.18.1", 131_072, **args).fits
    assert not pool("gpt-oss-20b", "0.19.0", 131_072, **args).fits
    # exactly enough for the groups at 3,426,091,008 B: 0.19 starts
    assert pool("gpt-oss-20b", "0.19.0", 131_072, kv=393_216 * 8_713, max_num_batched_tokens=8_192).fits


def test_null_block_0_28_vs_0_29():
    # gpt-oss-20b from 0.26 (2 batches in flight): sliding cdiv(min(127 + 16,384, 131,072), 16) + 1 = 1,033
    # one request: 8,192 + 1,033 = 9,225 blocks x 393,216 B = 3,627,417,600 B
    # 0.28.0: needs <= available -> starts; 0.29.0: available less one block (the null block) -> refuses
    kv = 393_216 * 9_225
    assert pool("gpt-oss-20b", "0.28.0", 131_072, kv=kv, max_num_batched_tokens=8_192).fits
    assert not pool("gpt-oss-20b", "0.29.0", 131_072, kv=kv, max_num_batched_tokens=8_192).fits


# ------------------------------------------------------------------ flags and dtypes

@pytest.mark.parametrize("before, after, block", [("0.11.0", "0.11.1", 256), ("0.17.1", "0.18.0", 20)])
def test_block_sizes_by_release(before, after, block):
    # BlockSize Literal: 1..128 in 0.11.0, + 256 in 0.11.1; 0.18.0 block_size: int (any)
    with pytest.raises(UsageError, match=f"block-size {block}"):
        pool("llama-3.1-8b", before, 8_192, block_tokens=block)
    assert pool("llama-3.1-8b", after, 8_192, block_tokens=block).block_size == block


@pytest.mark.parametrize("dtype, before, after", [
    ("fp8_ds_mla", "0.11.0", "0.11.1"), ("float16", "0.17.1", "0.18.0"),
    ("int8_per_token_head", "0.19.1", "0.20.0"), ("nvfp4", "0.19.1", "0.20.0"),
    ("int4_per_token_head", "0.24.0", "0.25.0"),
])
def test_kv_cache_dtypes_by_release(dtype, before, after):
    # vllm/config/cache.py CacheDType Literal of each release
    assert dtype not in rules(before).kv_cache_dtypes and dtype in rules(after).kv_cache_dtypes


def _emit(version: str, *args: str) -> dict:
    r = CliRunner().invoke(app, ["estimate", *args, "--emit", f"vllm@{version}", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


def test_emit_offloading_0_11_0_vs_0_11_1_and_skip_layers_0_18_vs_0_19():
    # --kv-offloading-size appears in 0.11.1's EngineArgs, --kv-cache-dtype-skip-layers in 0.19.0's
    assert "--kv-offloading-size" not in _emit("0.11.0", "llama-3.1-8b", "-t", "offload:cpu=64GiB")["argv"]
    assert "--kv-offloading-size" in _emit("0.11.1", "llama-3.1-8b", "-t", "offload:cpu=64GiB")["argv"]
    assert "--kv-cache-dtype-skip-layers" not in _emit("0.18.1", "gpt-oss-20b", "-t", "fp8:skip=sliding")["argv"]
    assert "--kv-cache-dtype-skip-layers" in _emit("0.19.0", "gpt-oss-20b", "-t", "fp8:skip=sliding")["argv"]


def test_engine_names_the_release_whose_rules_apply():
    # --engine vllm@0.24.0: read, no "not read" note, but the report says 0.23's object applies
    name, found, note = parse_engine("vllm@0.24.0")
    assert (name, found.version) == ("vllm", "0.23") and "rules of 0.23" in note and "not read" not in note
    assert parse_engine("vllm@0.20.1")[2] is None and parse_engine("vllm@0.11")[2] is None


def test_gdn_prefill_checkpoint_0_32_vs_0_33():
    # Qwen3.5-35B-A3B, bf16 KV (2,048 B per token), GDN state 2,146,304 B (float32 SSM), 'align' mode (default)
    # 0.32.0: block 16 x cdiv(2,146,304, 32,768) = 1,056; 131,072 tokens: 125 + 3 GDN groups x 2 = 131
    # 0.33.0 on Hopper: FlashInfer's GDN prefill exports a checkpoint -> 3 pages, and the block is aligned to
    # lcm(16, 64) = 64: 64 x cdiv(2,146,304, 131,072) = 64 x 17 = 1,088; cdiv(131,072, 1,088) = 121 + 3 x 3 = 130
    old, new = pool("qwen3.5-35b-a3b", "0.32.0", 131_072), pool("qwen3.5-35b-a3b", "0.33.0", 131_072)
    assert (old.block_size, old.blocks_per_request) == (1_056, 131)
    assert (new.block_size, new.blocks_per_request, new.page_bytes) == (1_088, 130, 1_088 * 2_048)
    # without prefix caching there is no checkpoint: one page, the 16-token alignment
    off = pool("qwen3.5-35b-a3b", "0.33.0", 131_072, prefix_caching=False)
    assert (off.block_size, off.blocks_per_request) == (1_056, 128)


# ------------------------------------------------------------------ 0.33.0 vs 0.34.0 (read from 0.34.0's sdist)

def test_default_block_0_33_vs_0_34():
    # vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE: 16 in 0.33.0, 64 in 0.34.0; platforms/interface.py
    # update_block_size_for_backend asks FLASH_ATTN get_preferred_block_size(64): MultipleOf(16) supports 64 -> 64.
    # Llama-3.1-8B, 10 GiB, max_model_len 8,200: 32 layers x 8 heads x (128 + 128) x 2 B = 131,072 B a token
    # 0.33: 16 tokens -> 2,097,152 B a block, 10 GiB / 2 MiB = 5,120 blocks; cdiv(8,200, 16) = 513 a request:
    #       5,120 / 513 = 9.9805 -> "9.98x", int(9.9805 x 8,200) = 81,840 tokens
    # 0.34: 64 tokens -> 8,388,608 B a block, 10 GiB / 8 MiB = 1,280 blocks; cdiv(8,200, 64) = 129 a request:
    #       1,280 / 129 = 9.9225 -> "9.92x", int(9.9225 x 8,200) = 81,364 tokens
    old, new = pool("llama-3.1-8b", "0.33.0", 8_200), pool("llama-3.1-8b", "0.34.0", 8_200)
    assert (old.block_size, old.num_blocks, old.blocks_per_request, old.gpu_kv_cache_tokens) == (16, 5_120, 513, 81_840)
    assert old.concurrency_text == "9.98x"
    assert (new.block_size, new.num_blocks, new.blocks_per_request, new.gpu_kv_cache_tokens) == (64, 1_280, 129, 81_364)
    assert new.concurrency_text == "9.92x" and new.bytes_per_block == 8_388_608
    # a --block-size the user gives is kept (user_specified_block_size)
    assert pool("llama-3.1-8b", "0.34.0", 8_200, block_tokens=16).num_blocks == 5_120


def test_mla_block_0_33_vs_0_34():
    # DeepSeek-V3 bf16: FLASH_ATTN_MLA (first on Hopper) get_supported_kernel_block_sizes [MultipleOf(16)] keeps
    # the default: 16 in 0.33, 64 in 0.34 (v1/attention/backends/mla/flashattn_mla.py, unchanged). Latent
    # (512 + 64) x 2 B = 1,152 B a token, 61 layers, 10 GiB, 8,192 tokens:
    # 0.33: 16 x 1,152 x 61 = 1,124,352 B a block -> 9,549 blocks; 512 a request -> 18.65x, int(9,549/512 x 8,192)
    #       = 152,784 tokens; 0.34: 64 x 1,152 x 61 = 4,497,408 B -> 2,387 blocks; 128 a request -> 18.65x,
    #       int(2,387 / 128 x 8,192) = 152,768 tokens
    old, new = pool("deepseek-v3", "0.33.0", 8_192), pool("deepseek-v3", "0.34.0", 8_192)
    assert (old.block_size, old.num_blocks, old.gpu_kv_cache_tokens) == (16, 9_549, 152_784)
    assert (new.block_size, new.num_blocks, new.gpu_kv_cache_tokens) == (64, 2_387, 152_768)
    # fp8 (FlashMLA [64]) was 64 already
    assert pool("deepseek-v3", "0.33.0", 8_192, kv_dtype="fp8").block_size == 64


def test_hybrid_alignment_follows_the_64_block_0_34():
    # platforms/interface.py _align_hybrid_block_size: alignment max(smallest kernel block 16, block size), so 64
    # from 0.34's default. Nemotron-H-8B: Mamba-2 state 61,440 + 4,194,304 = 4,255,744 B (float32 SSM),
    # attention 2 x 8 x 128 x 2 B = 4,096 B a token:
    # 0.33: 16 x cdiv(4,255,744, 16 x 4,096) = 16 x 65 = 1,040 tokens; 0.34: 64 x cdiv(4,255,744, 64 x 4,096)
    # = 64 x 17 = 1,088 tokens, page 1,088 x 4,096 = 4,456,448 B (the Mamba page padded to it)
    old, new = pool("nemotron-h-8b", "0.33.0", 8_192), pool("nemotron-h-8b", "0.34.0", 8_192)
    assert old.block_size == 1_040
    assert new.block_size == 1_088 and new.page_bytes == 4_456_448
    # Mamba-2 keeps its prefill-checkpoint page in 0.34 (layers/mamba/mamba_mixer2.py get_kv_cache_spec:
    # num_prefill_checkpoint_blocks=1): 3 state pages a request in 'align' mode
    assert {s.state_pages for s in new.layer_specs if s.kind == "mamba"} == {3}


def test_gdn_0_34_keeps_the_checkpoint_and_aligns_to_64_without_it():
    # Qwen3.5-35B-A3B as in the 0.32/0.33 test above: 0.34 keeps FlashInfer's GDN checkpoint (qwen_gdn_linear_attn.py
    # get_kv_cache_spec, FLASHINFER_GDN_CHECKPOINT_ALIGNMENT 64) and lcm(max(16, 64), 64) = 64: block 1,088, 130 a
    # request as in 0.33. Without prefix caching 0.33 aligned to 16 (1,056 tokens); 0.34 aligns to its 64-token
    # block: 64 x cdiv(2,146,304, 64 x 2,048) = 1,088, cdiv(131,072, 1,088) = 121 + 3 GDN groups x 1 page = 124
    on = pool("qwen3.5-35b-a3b", "0.34.0", 131_072)
    assert (on.block_size, on.blocks_per_request) == (1_088, 130)
    off = pool("qwen3.5-35b-a3b", "0.34.0", 131_072, prefix_caching=False)
    assert (off.block_size, off.blocks_per_request) == (1_088, 124)


def test_in_flight_with_pp_0_33_vs_0_34():
    # config/vllm.py VllmConfig.max_concurrent_batches: 0.33's V1 model runner turned async scheduling off with
    # PP (PP batches); 0.34 removed the V1 runner and keeps it on: PP + 1. max_in_flight_tokens = batches x 8,192.
    # gpt-oss-20b (window 128), PP 2, 131,072 tokens: 0.33: 2 x 8,192 = 16,384; 0.34: 3 x 8,192 = 24,576, and a
    # sliding layer's worst case is cdiv(min(127 + 24,576, 131,072), 64) + 1 = 386 + 1 = 387 pages (PP 1: 2 x 8,192
    # -> cdiv(16,511, 64) + 1 = 259)
    assert pool("gpt-oss-20b", "0.33.0", 131_072, pp=2).in_flight_tokens == 16_384
    new = pool("gpt-oss-20b", "0.34.0", 131_072, pp=2)
    assert new.in_flight_tokens == 24_576
    sliding = next(s for s in new.layer_specs if s.kind == "sliding")
    assert sliding.max_memory_bytes(131_072, 24_576) == 387 * sliding.page_bytes
    assert pool("gpt-oss-20b", "0.34.0", 131_072).in_flight_tokens == 16_384
    assert sliding.max_memory_bytes(131_072, 16_384) == 259 * sliding.page_bytes


def test_extensible_kv_cache_and_utilization_default_0_34():
    # config/cache.py 0.34: gpu_memory_utilization None -> resolved_gpu_memory_utilization: 1.0 with the extensible
    # KV cache (CUDA's default), else DEFAULT_GPU_MEMORY_UTILIZATION 0.92
    from kvplan.engines.vllm_extensible import extensible_by_default, resolved_utilization

    assert not rules("0.33.0").extensible_kv_cache and rules("0.34.0").extensible_kv_cache
    assert rules("0.34.0").gpu_memory_utilization == 1.0 and rules("0.33.0").gpu_memory_utilization == 0.92
    assert resolved_utilization(rules("0.34.0"), None) == 1.0 and resolved_utilization(rules("0.34.0"), False) == 0.92
    assert resolved_utilization(rules("0.33.0"), False) == 0.92 and resolved_utilization(rules("0.19"), None) == 0.9
    assert extensible_by_default("0.34.0") and not extensible_by_default("0.33.2")
    assert not extensible_by_default(None) and not extensible_by_default("0.99")  # unreadable or unmodelled


def test_packed_pools_are_refused_past_the_releases_read():
    # DeepSeek-V4.1's pool was read in 0.33 and 0.34 (vllm_dsv4.PACKED_POOLS_READ): a later release is refused in
    # one line with a hint, an earlier one too; both read releases plan it
    from dataclasses import replace

    later = replace(V0_34, version="0.35")
    with pytest.raises(UsageError, match="read DeepSeek-V4.1's pool in vLLM 0.33 and 0.34 only") as err:
        simulate(load_model("deepseek-v4.1-flash"), kv_memory_bytes=10 * GIB, max_model_len=8_192, rules=later)
    assert err.value.hint == "use --engine vllm@0.34"
    with pytest.raises(UsageError, match="as vLLM 0.33 and 0.34 plan it") as err:
        pool("deepseek-v4.1-flash", "0.32.0", 8_192)
    assert err.value.hint == "use --engine vllm@0.33"
    assert pool("deepseek-v4.1-flash", "0.33.0", 8_192).fits and pool("deepseek-v4.1-flash", "0.34.0", 8_192).fits


@pytest.mark.parametrize("line, one_line", [
    # 0.11-0.27: two logger calls; 0.28-0.29: "GPU KV cache size: ..., Maximum concurrency ...";
    # 0.30+: the device first ("GPU" on CUDA, device_type.upper() elsewhere); 0.33: " + host" with HiSparse
    ("GPU KV cache size: 12,345 tokens\nMaximum concurrency for 1,000 tokens per request: 12.35x", False),
    ("GPU KV cache size: 12,345 tokens, Maximum concurrency for 1,000 tokens per request: 12.35x", True),
    ("XPU KV cache size: 12,345 tokens, Maximum concurrency for 1,000 tokens per request: 12.35x", True),
    ("GPU + host KV cache size: 12,345 tokens, Maximum concurrency for 1,000 tokens per request: 12.35x", True),
])
def test_parser_reads_every_release_wording(line, one_line):
    from kvplan.engines.vllm_log import parse_log

    # 0.14+ prints the memory with format_gib = str(round(x, 2)): "5.9", not "5.90"
    log = parse_log("INFO [gpu_worker.py:773] Available KV cache memory: 5.9 GiB\nINFO [kv_cache_utils.py:1148] " + line)
    assert (log.gpu_kv_cache_tokens, log.concurrency, log.concurrency_len, log.one_line) == (12_345, 12.35, 1_000,
                                                                                           one_line)
    assert log.available_kv_gib == 5.9 and log.available_kv_bytes_range == (int(5.895 * GIB), int(5.905 * GIB))


def test_nemotron_h_state_dtype_at_0_13_to_0_19_says_it_is_uncertain():
    # vLLM 0.13-0.19: getattr(hf_config, "mamba_ssm_cache_dtype", "float16") depends on the config class
    from kvplan.engines.vllm import simulate as sim
    from kvplan.engines.vllm_rules import resolve
    from kvplan.sources import load_model as load

    notes = sim(load("nemotron-h-8b"), kv_memory_bytes=10 * 2**30, max_model_len=8192, rules=resolve("0.16")[0]).notes
    assert any(n.startswith("uncertain: when config.json does not name mamba_ssm_cache_dtype") for n in notes)
    notes = sim(load("nemotron-h-8b"), kv_memory_bytes=10 * 2**30, max_model_len=8192, rules=resolve("0.20")[0]).notes
    assert not any(n.startswith("uncertain:") for n in notes)


def test_gemma4_fp8_kernel_page_note_0_33_vs_0_34():
    # flash_attn.py _get_sm90_fa4_fp8_kv_block_size (0.31+): fp8 KV at head size 512 on SM90 runs FA4 with a
    # 64-token kernel page. 0.33's 16-token default block is not a multiple of it (kvplan: a note); 0.34's 64 is
    # (128 for the global layers once pages unify), so no note unless --block-size is not a multiple of 64
    def notes(version, **kw):
        return [n for n in pool("gemma-4-31b", version, 8_192, kv_dtype="fp8", **kw).notes if "head size 512" in n]

    assert notes("0.33.0") and not notes("0.34.0") and notes("0.34.0", block_tokens=16)
