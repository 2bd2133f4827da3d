"""`--engine vllm[@VERSION]`: vLLM's own KV pool accounting, checked against values worked by hand.

Every expected number below is derived in the comment next to it from the
model's config and the release's rules (kvplan/engines/vllm_rules.py), not
read from kvplan's output. The first half models vLLM 0.11, the second the
newest release (0.33).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.capacity.hardware import make_deployment
from kvplan.cli.app import app
from kvplan.engines import vllm
from kvplan.engines.vllm import PageSpec, simulate
from kvplan.engines.vllm_rules import V0_11
from kvplan.errors import UsageError
from kvplan.planner import evaluate
from kvplan.render import Report
from kvplan.sources import load_model
from kvplan.workflows import apply_kv_dtype

GIB = 1024**3
KV_10_GIB = 10 * GIB  # 10,737,418,240 B


def pool(name: str, max_len: int, kv_dtype: str = "auto", **kwargs):
    model, _ = apply_kv_dtype(load_model(name), kv_dtype)
    kwargs.setdefault("rules", V0_11)
    return simulate(model, kv_memory_bytes=kwargs.pop("kv", KV_10_GIB), max_model_len=max_len, **kwargs)


def test_llama_3_1_8b_full_attention():
    # page = 16 tokens x 8 KV heads x (128 + 128) x 2 B = 65,536 B per layer
    # num_blocks = 10 GiB // (65,536 x 32 layers) = 5,120 -> 5,120 x 16 = 81,920 tokens
    # one 8,192-token request needs 8,192 / 16 = 512 blocks -> 5,120 / 512 = 10.00x
    p = pool("llama-3.1-8b", 8192)
    assert p.page_bytes == 65_536
    assert p.num_blocks == 5_120
    assert p.gpu_kv_cache_tokens == 81_920
    assert p.blocks_per_request == 512
    assert p.max_concurrency == 10.0
    assert p.log_lines()[1:] == [
        "GPU KV cache size: 81,920 tokens",
        "Maximum concurrency for 8,192 tokens per request: 10.00x",
    ]
    assert p.log_lines()[0] == "Available KV cache memory: 10.00 GiB"


def test_fp8_halves_the_page():
    # fp8: 16 x 8 x 256 x 1 B = 32,768 B; 10 GiB // (32,768 x 32) = 10,240 blocks = 163,840 tokens
    p = pool("llama-3.1-8b", 8192, "fp8")
    assert (p.page_bytes, p.num_blocks, p.gpu_kv_cache_tokens) == (32_768, 10_240, 163_840)
    assert p.concurrency_text == "20.00x"


@pytest.mark.parametrize("max_len, mnbt, blocks, text", [
    # min(4096 - 1 + 8192, 32768) = 12,287 tokens -> cdiv(12287, 16) = 768, + 1 = 769 -> 5120 / 769 = 6.658
    (32_768, 8192, 769, "6.66x"),
    # min(4095 + 2048, 32768) = 6,143 -> cdiv(6143, 16) = 384, + 1 = 385 -> 5120 / 385 = 13.299
    (32_768, 2048, 385, "13.30x"),
    # min(12287, 4096) = 4,096 -> 256, + 1 = 257 -> 5120 / 257 = 19.92
    (4_096, 8192, 257, "19.92x"),
])
def test_mistral_sliding_window_worst_case(max_len, mnbt, blocks, text):
    # Mistral-7B-v0.1: every layer a 4,096-token window, same page as Llama-3.1-8B -> one group,
    # 5,120 blocks, 81,920 tokens
    p = pool("mistral-7b-v0.1", max_len, max_num_batched_tokens=mnbt)
    assert len(p.groups) == 1 and p.groups[0].spec.kind == "sliding"
    assert p.num_blocks == 5_120 and p.gpu_kv_cache_tokens == 81_920
    assert p.blocks_per_request == blocks
    assert p.concurrency_text == text


def test_sliding_window_needs_one_extra_block():
    # block 4, window 4, budget 2: min(4 - 1 + 2, 100) = 5 tokens -> cdiv(5, 4) = 2, + 1 = 3 pages
    spec = PageSpec("sliding", 4, token_bytes=10, window_tokens=4)
    assert spec.max_memory_bytes(100, 2) == 3 * 40
    # a short max_len caps it: min(5, 3) = 3 -> 1 + 1 = 2 pages
    assert spec.max_memory_bytes(3, 2) == 2 * 40


def test_gpt_oss_20b_two_groups():
    # 12 sliding (128) + 12 full layers, 8 KV heads x 64: page 16 x 8 x 128 x 2 = 32,768 B, equal for both
    # -> two groups of 12; num_blocks = 10 GiB // 32,768 // 12 = 327,680 // 12 = 27,306
    # tokens = 27,306 // 2 groups x 16 = 218,448
    # at 131,072: full 8,192 blocks; sliding min(127 + 8192, 131072) = 8,319 -> 520 + 1 = 521
    # -> 27,306 / 8,713 = 3.134
    p = pool("gpt-oss-20b", 131_072)
    assert sorted((g.spec.kind, len(g.layers)) for g in p.groups) == [("full", 12), ("sliding", 12)]
    assert p.num_blocks == 27_306
    assert p.gpu_kv_cache_tokens == 218_448
    assert p.blocks_per_request == 8_713
    assert p.concurrency_text == "3.13x"


def test_hybrid_manager_off_sizes_windows_as_full():
    # all 24 layers full: one group; 10 GiB // 32,768 // 24 = 13,653 blocks x 16 = 218,448 tokens;
    # 131,072 / 16 = 8,192 blocks per request -> 1.67x
    p = pool("gpt-oss-20b", 131_072, hybrid_manager=False)
    assert len(p.groups) == 1 and p.num_blocks == 13_653
    assert p.concurrency_text == "1.67x"


def test_gemma3_groups_are_padded():
    # 52 sliding + 10 full, 16 KV heads x 128: page 16 x 16 x 256 x 2 = 131,072 B; group size 10
    # sliding -> cdiv(52, 10) = 6 groups of 9,9,9,9,8,8 (8 padding slots), full -> 1 group: 7 groups
    # num_blocks = 10 GiB // 131,072 // 10 = 8,192; tokens = 8,192 // 7 x 16 = 18,720
    p = pool("gemma-3-27b", 8192)
    assert len(p.groups) == 7
    assert sum(g.padding_layers for g in p.groups) == 8
    assert sorted(len(g.layers) for g in p.groups) == [8, 8, 9, 9, 9, 9, 10]
    assert p.num_blocks == 8_192
    assert p.gpu_kv_cache_tokens == 18_720


def test_deepseek_v3_mla_one_tensor_block_64():
    # FlashMLA forces block 64; page = 64 x (512 + 64) x 2 B = 73,728 B, ONE tensor (no K and V)
    # 10 GiB // 73,728 = 145,635; // 61 layers = 2,387 blocks -> 2,387 x 64 = 152,768 tokens
    # 8,192 / 64 = 128 blocks per request -> 2,387 / 128 = 18.648
    p = pool("deepseek-v3", 8192)
    assert p.block_size == 64 and p.page_bytes == 73_728
    assert p.num_blocks == 2_387
    assert p.gpu_kv_cache_tokens == 152_768
    assert p.concurrency_text == "18.65x"
    # the latent is replicated on every TP rank: the same numbers at tp 8
    assert pool("deepseek-v3", 8192, tp=8).num_blocks == 2_387


def test_deepseek_v32_fp8_ds_mla_and_indexer_in_one_group():
    # fp8_ds_mla 656 B/token + indexer 128 + 4 = 132 B/token = 788 B/token per layer
    # one uniform-type group, page = 64 x 788 x 61 = 3,076,352 B
    # 10 GiB // 3,076,352 = 3,490 blocks -> 223,360 tokens; 3,490 / 128 = 27.27x
    p = pool("deepseek-v3.2-exp", 8192, "fp8")
    assert p.uniform_type and len(p.groups) == 1
    assert p.page_bytes == 3_076_352
    assert p.num_blocks == 3_490
    assert p.gpu_kv_cache_tokens == 223_360
    assert p.concurrency_text == "27.27x"


def test_jamba_attention_block_enlarged_to_the_mamba_page():
    # Mamba state: conv 3 x 8,192 + SSM 8,192 x 16 = 155,648 elements x 2 B = 311,296 B
    # attention, one token: 8 x 256 x 2 = 4,096 B -> block = 16 x cdiv(311,296, 16 x 4,096) = 80
    # page = 80 x 4,096 = 327,680 B (Mamba padded up to it)
    # 4 attention + 28 Mamba layers -> groups of 4: 1 + 7 = 8 groups
    # num_blocks = 10 GiB // 327,680 // 4 = 8,192; tokens = 8,192 // 8 x 80 = 81,920
    # request: cdiv(8,192, 80) = 103 attention blocks + 7 Mamba blocks = 110 -> 74.47x
    p = pool("jamba-v0.1", 8192)
    attention = [g for g in p.groups if g.spec.kind == "full"]
    assert attention[0].spec.block_tokens == 80
    assert p.page_bytes == 327_680
    assert all(g.spec.page_bytes == 327_680 for g in p.groups)
    assert len(p.groups) == 8 and all(len(g.layers) == 4 for g in p.groups)
    assert p.num_blocks == 8_192
    assert p.gpu_kv_cache_tokens == 81_920
    assert p.blocks_per_request == 110
    assert p.concurrency_text == "74.47x"


def test_qwen3_next_tp4_block_272():
    # per rank: KV heads max(1, 2 // 4) = 1 -> one token 1 x 512 x 2 = 1,024 B
    # Gated DeltaNet state / 4: conv 24,576 / 4 = 6,144 + SSM 524,288 / 4 = 131,072 -> 274,432 B
    # block = 16 x cdiv(274,432, 16,384) = 16 x 17 = 272; page = 278,528 B
    # 12 attention + 36 GDN -> groups of 12: 4 groups; num_blocks = 10 GiB // 278,528 // 12 = 3,212
    # tokens = 3,212 // 4 x 272 = 218,416; request cdiv(8192, 272) = 31 + 3 = 34 -> 94.47x
    p = pool("qwen3-next-80b-a3b", 8192, tp=4)
    assert p.block_size == 272
    assert p.page_bytes == 278_528
    assert p.num_blocks == 3_212
    assert p.gpu_kv_cache_tokens == 218_416
    assert p.concurrency_text == "94.47x"


def test_tp_past_the_kv_heads_replicates_them():
    # tp 16 on 8 KV heads: max(1, 8 // 16) = 1 head per rank, not half a head
    # page = 16 x 1 x 256 x 2 = 8,192 B; 10 GiB // 8,192 // 32 = 40,960 blocks = 655,360 tokens, 80.00x
    p16, p8 = pool("llama-3.1-8b", 8192, tp=16), pool("llama-3.1-8b", 8192, tp=8)
    assert p16.page_bytes == 8_192
    assert p16.num_blocks == p8.num_blocks == 40_960
    assert p16.gpu_kv_cache_tokens == 655_360
    assert p16.concurrency_text == "80.00x"


def test_pipeline_stage_with_most_layers_binds():
    # Llama-3.1-70B, 80 layers over pp 3 -> 27, 27, 26; 10 GiB // 65,536 // 27 = 6,068 blocks
    assert pool("llama-3.1-70b", 8192, pp=3).num_blocks == 6_068


def test_too_little_memory_for_one_request():
    # one 131,072-token request: 32 x 8,192 blocks x 65,536 B = 16 GiB > 1 GiB
    # largest L with 32 x cdiv(L, 16) x 65,536 <= 1 GiB: cdiv(L, 16) <= 512 -> L = 8,192
    p = pool("llama-3.1-8b", 131_072, kv=GIB)
    assert not p.fits
    assert p.estimated_max_model_len == 8_192


def test_default_batched_tokens_follow_the_gpu():
    from kvplan.capacity.gpus import lookup

    assert vllm.default_max_num_batched_tokens(None, V0_11) == 8192
    assert vllm.default_max_num_batched_tokens(lookup("h100"), V0_11) == 8192
    assert vllm.default_max_num_batched_tokens(lookup("a100"), V0_11) == 2048
    assert vllm.default_max_num_batched_tokens(lookup("b200"), V0_11) == 8192  # no 160 GiB tier in 0.11


def test_python_api_add_to_report():
    model = load_model("llama-3.1-8b")
    result = evaluate(model, [], 8192, 1, make_deployment(None, kv_memory_bytes=KV_10_GIB))
    report = Report({})
    vllm.add_to_report(report, result, 8192, rules=V0_11)
    engine = report.data["engine"]
    assert engine["name"] == "vllm" and engine["version"] == "0.11"
    assert (engine["gpu_kv_cache_tokens"], engine["num_blocks"], engine["block_size"], engine["page_bytes"]) == (
        81_920, 5_120, 16, 65_536)
    assert engine["max_concurrency"] == 10.0
    assert engine["groups"][0]["layers"] == 32
    assert "  GPU KV cache size: 81,920 tokens" in report.lines


def test_python_api_needs_kv_memory():
    result = evaluate(load_model("llama-3.1-8b"), [], 8192)
    with pytest.raises(UsageError):
        vllm.add_to_report(Report({}), result, 8192, rules=V0_11)


def _run(*args):
    result = CliRunner().invoke(app, list(args))
    return result


def test_cli_json():
    r = _run("estimate", "llama-3.1-8b", "--engine", "vllm@0.11", "--kv-memory", "10GiB", "--max-model-len", "8192",
             "--format", "json")
    assert r.exit_code == 0, r.output
    engine = json.loads(r.stdout)["engine"]
    assert engine["gpu_kv_cache_tokens"] == 81_920
    assert engine["max_concurrency"] == 10.0
    assert engine["max_concurrency_text"] == "10.00x"
    assert engine["num_blocks"] == 5_120
    assert engine["log"][1:] == ["GPU KV cache size: 81,920 tokens",
                                 "Maximum concurrency for 8,192 tokens per request: 10.00x"]


def test_cli_table_prints_the_log_lines():
    r = _run("estimate", "mistral-7b-v0.1", "--engine", "vllm@0.11", "--kv-memory", "10GiB", "--max-model-len", "32k")
    assert r.exit_code == 0, r.output
    assert "GPU KV cache size: 81,920 tokens" in r.stdout
    assert "Maximum concurrency for 32,768 tokens per request: 6.66x" in r.stdout


def test_cli_block_size_from_page_technique():
    # page:32 -> 32 x 8 x 256 x 2 = 131,072 B; 10 GiB // (131,072 x 32) = 2,560 blocks = 81,920 tokens
    r = _run("estimate", "llama-3.1-8b", "--engine", "vllm@0.11", "--kv-memory", "10GiB", "-t", "page:32",
             "--context", "8192", "--format", "json")
    engine = json.loads(r.stdout)["engine"]
    assert (engine["block_size"], engine["num_blocks"], engine["gpu_kv_cache_tokens"]) == (32, 2_560, 81_920)


def test_log_lines_reproduce_a_published_vllm_pair():
    # vLLM PR #13596 shows the v1 log pair "GPU KV cache size: 2,042,016 tokens" /
    # "Maximum concurrency for 2,048 tokens per request: 997.08x" (127,626 blocks of 16).
    # Give Llama-3.1-8B exactly 127,626 blocks: 32 layers x 65,536 B = 2 MiB per block.
    p = pool("llama-3.1-8b", 2048, kv=127_626 * 32 * 65_536)
    assert p.num_blocks == 127_626
    assert p.log_lines()[1:] == [
        "GPU KV cache size: 2,042,016 tokens",
        "Maximum concurrency for 2,048 tokens per request: 997.08x",
    ]
