"""`--engine vllm[@VERSION]`: vLLM's own KV pool accounting, checked against values worked by hand.

Every expected number below is derived in the comment next to it from the
model's config and the release's rules (kvplan/engines/vllm_rules.py), not
read from kvplan's output. The first half models vLLM 0.11, the second the
newest release (0.34).
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


# ---------------------------------------------------------------------------------------------
# vLLM 0.33 (the default, `--engine vllm`): the rules that changed since 0.11 (vllm_rules.py).

from kvplan.capacity.shard import shard  # noqa: E402
from kvplan.engines.vllm_rules import LATEST, V0_33, V0_34, parse_engine, resolve  # noqa: E402


def pool33(name: str, max_len: int, kv_dtype: str = "auto", **kwargs):
    kwargs.setdefault("rules", V0_33)
    return pool(name, max_len, kv_dtype, **kwargs)


def test_latest_is_0_34():
    assert LATEST is V0_34 and parse_engine("vllm")[1] is V0_34 and parse_engine("vllm@0.11")[1] is V0_11
    assert parse_engine("vllm@0.34")[1] is V0_34 and parse_engine("vllm@0.33")[1] is V0_33
    # every field names the vLLM file it comes from
    assert all("vllm/" in source or field == "version" for field, source in V0_34.sources().items())


def test_0_33_one_log_line_and_tokens_from_concurrency():
    # same pool as 0.11 (5,120 blocks, 512 per request) but ONE line
    p = pool33("llama-3.1-8b", 8192)
    assert p.log_lines()[1:] == ["GPU KV cache size: 81,920 tokens, Maximum concurrency for 8,192 tokens per request: 10.00x"]
    # max_len 3,000: cdiv(3000, 16) = 188 blocks per request -> 5,120 / 188 = 27.234x
    # 0.11: 5,120 x 16 = 81,920 tokens; 0.33: int(5,120 / 188 x 3,000) = int(81,702.13) = 81,702
    assert pool("llama-3.1-8b", 3000).gpu_kv_cache_tokens == 81_920
    p = pool33("llama-3.1-8b", 3000)
    assert p.num_blocks == 5_120 and p.blocks_per_request == 188
    assert p.gpu_kv_cache_tokens == 81_702 and p.concurrency_text == "27.23x"


def test_0_33_sliding_window_counts_two_batches_in_flight():
    # async scheduling: min(4,096 - 1 + 2 x 8,192, 32,768) = 20,479 -> cdiv(20,479, 16) + 1 = 1,281
    # 5,120 / 1,281 = 3.997x; tokens int(5,120 x 32,768 / 1,281) = int(130,969.68) = 130,969
    p = pool33("mistral-7b-v0.1", 32_768)
    assert p.blocks_per_request == 1_281 and p.concurrency_text == "4.00x"
    assert p.gpu_kv_cache_tokens == 130_969
    # gpt-oss-20b at 131,072: 8,192 full + (cdiv(min(127 + 16,384, 131,072), 16) + 1 = 1,033) = 9,225
    # 27,306 / 9,225 = 2.96x; tokens int(27,306 x 131,072 / 9,225) = int(387,973.09) = 387,973
    p = pool33("gpt-oss-20b", 131_072)
    assert (p.num_blocks, p.blocks_per_request, p.gpu_kv_cache_tokens) == (27_306, 9_225, 387_973)


def test_0_33_mla_block_follows_the_backend():
    # bf16 -> FLASH_ATTN_MLA, block 16: page 16 x 576 x 2 = 18,432 B; x 61 layers = 1,124,352 B per block
    # 10 GiB // 1,124,352 = 9,549 blocks; 8,192 / 16 = 512 per request -> 18.65x; tokens 9,549 x 16 = 152,784
    p = pool33("deepseek-v3", 8192)
    assert (p.block_size, p.page_bytes, p.num_blocks, p.gpu_kv_cache_tokens) == (16, 18_432, 9_549, 152_784)
    # fp8 -> FlashMLA, block 64: page 64 x 576 = 36,864 B; 10 GiB // (36,864 x 61) = 4,774; 128 per request
    # -> 37.30x; tokens 4,774 x 64 = 305,536
    p = pool33("deepseek-v3", 8192, "fp8")
    assert (p.block_size, p.page_bytes, p.num_blocks, p.gpu_kv_cache_tokens) == (64, 36_864, 4_774, 305_536)
    assert p.concurrency_text == "37.30x"


def test_0_33_deepseek_v32_auto_is_bf16_fp8_is_ds_mla():
    # auto: bf16 latent 576 x 2 = 1,152 B + indexer 128 + 4 = 132 B -> 1,284 B/token/layer, sparse block 64
    # page = 64 x 1,284 x 61 = 5,012,736 B; 10 GiB // 5,012,736 = 2,142 -> 2,142 x 64 = 137,088 tokens, 16.73x
    p = pool33("deepseek-v3.2-exp", 8192)
    assert (p.page_bytes, p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text) == (
        5_012_736, 2_142, 137_088, "16.73x")
    # fp8 -> fp8_ds_mla (656 B) as in 0.11: 3,490 blocks; 0.11's auto was fp8_ds_mla already
    assert pool33("deepseek-v3.2-exp", 8192, "fp8").num_blocks == 3_490
    assert pool("deepseek-v3.2-exp", 8192).num_blocks == 3_490


def test_0_33_hybrid_align_mode_pages_per_request():
    # Jamba (Mamba-1): block 80 and page 327,680 B as in 0.11; 'align' mode: 2 state pages per request
    # 103 attention blocks + 7 Mamba groups x 2 = 117 -> 8,192 / 117 = 70.02x
    # tokens int(8,192 x 8,192 / 117) = int(573,580.03) = 573,580
    p = pool33("jamba-v0.1", 8192)
    assert (p.num_blocks, p.block_size, p.blocks_per_request) == (8_192, 80, 117)
    assert p.concurrency_text == "70.02x" and p.gpu_kv_cache_tokens == 573_580


def test_nemotron_h_ssm_state_by_release():
    # Mamba-2: d_inner 128 x 64 = 8,192, conv (4 - 1) x (8,192 + 2 x 8 x 128) = 30,720 elements x 2 B = 61,440 B
    # SSM 128 x 64 x 128 = 1,048,576 elements; attention 8 x 256 x 2 B = 4,096 B per token
    # 0.11 (SSM bf16): 2,097,152 + 61,440 = 2,158,592 B -> block 16 x cdiv(2,158,592, 65,536) = 528
    assert pool("nemotron-h-8b", 8192).block_size == 528
    # 0.33 (SSM fp32): 4,194,304 + 61,440 = 4,255,744 B -> block 16 x 65 = 1,040, page 4,259,840 B
    # 4 attention + 24 Mamba layers -> 7 groups of 4: 10 GiB // (4,259,840 x 4) = 630 blocks
    # request: cdiv(8,192, 1,040) = 8 + 6 Mamba groups x 3 pages (Mamba-2 keeps a checkpoint page) = 26
    # -> 24.23x; tokens int(630 x 8,192 / 26) = int(198,498.46) = 198,498
    p = pool33("nemotron-h-8b", 8192)
    assert (p.block_size, p.page_bytes, p.num_blocks, p.blocks_per_request) == (1_040, 4_259_840, 630, 26)
    assert p.gpu_kv_cache_tokens == 198_498 and p.concurrency_text == "24.23x"


def test_float32_checkpoint_state_is_served_in_bf16():
    # mamba-2.8b's checkpoint is float32; vLLM serves it in bf16 and keeps the state in bf16:
    # conv 3 x 5,120 + SSM 5,120 x 16 = 97,280 elements x 2 B = 194,560 B per layer (float32 would be 389,120)
    # 64 layers, one group: 10 GiB // (64 x 194,560) = 862 blocks, one per request
    for rules in (V0_11, V0_33):
        p = pool("mamba-2.8b", 8192, rules=rules)
        assert p.layer_specs[0].page_bytes == 194_560
        assert p.num_blocks == 862 and p.max_concurrency == 862.0


def test_mamba2_groups_padded_for_tp():
    # Falcon-H1-7B: d_ssm 3,072, ONE group of d_state 256, 24 heads x 128, conv 4.
    # tp 2: groups padded 1 -> 2: conv (3,072 + 2 x 2 x 256) / 2 = 2,048 channels x 3 = 6,144 elements
    #       (unpadded it would be (3,072 + 512) x 3 / 2 = 5,376); SSM 12 x 128 x 256 = 393,216
    # tp 4: 1 -> 4 groups: (3,072 + 2 x 4 x 256) / 4 = 1,280 x 3 = 3,840; SSM 6 x 128 x 256 = 196,608
    model = load_model("falcon-h1-7b")
    s2 = shard(model, 2)[0].layers[0].state
    s4 = shard(model, 4)[0].layers[0].state
    assert (s2.conv_elements, s2.ssm_elements) == (6_144, 393_216)
    assert (s4.conv_elements, s4.ssm_elements) == (3_840, 196_608)
    # Nemotron-H's 8 groups divide tp 8: no padding, (8,192 + 2,048) x 3 / 8 = 3,840
    assert shard(load_model("nemotron-h-8b"), 8)[0].layers[0].state.conv_elements == 3_840


def test_0_33_start_check_holds_back_the_null_block():
    # one 8,192-token request: 512 blocks x 2 MiB (32 layers x 65,536 B) = 1 GiB
    # 0.11: needs 1 GiB <= 1 GiB -> starts; 0.33: 1 GiB - one block < 512 blocks -> refuses;
    # the largest length that fits 511 blocks is 511 x 16 = 8,176
    assert pool("llama-3.1-8b", 8192, kv=GIB).fits
    p = pool33("llama-3.1-8b", 8192, kv=GIB)
    assert p.num_blocks == 512 and not p.fits and p.estimated_max_model_len == 8_176


@pytest.mark.parametrize("dtype, token_bytes", [
    # 8 KV heads per layer: fp8 1 B x 256; per token head: + 4 B scale for K and V;
    # int4: 64 + 64 + 8; nvfp4: 2 slots x (64 + 128 / 16) = 144 per head
    ("fp8", 8 * 256), ("int8_per_token_head", 8 * 264), ("fp8_per_token_head", 8 * 264),
    ("int4_per_token_head", 8 * 136), ("nvfp4", 8 * 144),
])
def test_0_33_kv_dtype_pages(dtype, token_bytes):
    p = pool33("llama-3.1-8b", 8192, kv_cache_dtype=dtype)
    assert p.page_bytes == 16 * token_bytes
    assert p.num_blocks == KV_10_GIB // (16 * token_bytes * 32)


def test_0_11_rejects_the_new_kv_dtypes_and_block_sizes():
    with pytest.raises(UsageError, match="0.11"):
        pool("llama-3.1-8b", 8192, kv_cache_dtype="int8_per_token_head")
    with pytest.raises(UsageError, match="block-size 20"):
        pool("llama-3.1-8b", 8192, block_tokens=20)
    # 0.33 takes any positive block: 20 x 8 x 256 x 2 = 81,920 B
    assert pool33("llama-3.1-8b", 8192, block_tokens=20).page_bytes == 81_920


def test_max_model_len_above_the_model_is_refused_unless_allowed():
    with pytest.raises(UsageError, match="VLLM_ALLOW_LONG_MAX_MODEL_LEN"):
        pool33("llama-3.1-8b", 262_144)
    assert pool33("llama-3.1-8b", 262_144, kv=40 * GIB, allow_long_max_model_len=True).fits


def test_0_33_batched_tokens_by_gpu_size():
    from kvplan.capacity.gpus import lookup

    # >= 160 GiB -> 16,384; >= 70 GiB and not A100 -> 8,192; else 2,048
    assert vllm.default_max_num_batched_tokens(lookup("b200"), V0_33) == 16_384
    assert vllm.default_max_num_batched_tokens(lookup("h200"), V0_33) == 8_192
    assert vllm.default_max_num_batched_tokens(lookup("a100"), V0_33) == 2_048
    assert V0_33.gpu_memory_utilization == 0.92 and V0_11.gpu_memory_utilization == 0.9


@pytest.mark.parametrize("text, version, noted", [
    ("0.11", "0.11", False), ("0.11.2", "0.11.1", False), ("v0.33.0", "0.33", False), ("0.34.0", "0.34", False), ("latest", "0.34", False),
    ("0.20.1", "0.20.1", False), ("0.20.2", "0.20.1", False), ("0.22.0", "0.20.1", False), ("0.24.0", "0.23", False), ("0.7.3", "0.11", True),
])
def test_version_resolution(text, version, noted):
    rules, note = resolve(text)
    assert rules.version == version and bool(note) == noted


@pytest.mark.parametrize("engine", ["vllm@0.99", "vllm@banana", "vllm@", "tgi", "sglang@0.4.0"])
def test_unknown_engine_version_is_one_line_exit_2(cli, engine):
    code, out, err = cli("estimate", "llama-3.1-8b", "--engine", engine, "--kv-memory", "10GiB")
    assert code == 2 and out == ""
    assert err.startswith("kvplan: error: ") and err.count("\n") == 1, err


def test_cli_default_engine_is_latest_and_json_has_version():
    r = _run("estimate", "llama-3.1-8b", "--engine", "vllm", "--kv-memory", "10GiB", "--max-model-len", "3000",
             "--format", "json")
    assert r.exit_code == 0, r.output
    engine = json.loads(r.stdout)["engine"]
    assert engine["version"] == "0.34"
    # 0.34: block 64 (CacheConfig.DEFAULT_BLOCK_SIZE): 64 x 32 layers x 8 heads x (128 + 128) x 2 B = 8 MiB a block;
    # 10 GiB / 8 MiB = 1,280 blocks; cdiv(3,000, 64) = 47 a request; int(1,280 / 47 x 3,000) = int(81,702.13)
    assert (engine["num_blocks"], engine["gpu_kv_cache_tokens"], engine["fits"]) == (1_280, 81_702, True)
    assert engine["max_concurrency"] == round(1280 / 47, 6)


def test_cli_mamba_state_in_bf16():
    # the acceptance line: 194,560 B per layer (bf16), not 389,120 (float32)
    r = _run("estimate", "mamba-2.8b", "--engine", "vllm", "--kv-memory", "10GiB", "--max-model-len", "8192",
             "--format", "json")
    assert r.exit_code == 0, r.output
    engine = json.loads(r.stdout)["engine"]
    assert engine["page_bytes"] == 194_560 and engine["num_blocks"] == 862


# The hand-worked grid over every bundled family (dense, MLA, sliding, hybrid, Mamba) is in
# tests/test_vllm_grid.py.


def test_chunked_local_attention_by_release():
    # Llama-4 Scout: 36 chunked layers (C 8,192) + 12 full, 8 KV x 128 bf16: 4,096 B per token and layer,
    # page 16 x 4,096 = 65,536 B; 10 GiB, max_model_len 131,072, 8,192 batched tokens (no GPU: H100 class)
    # 0.33 (hybrid manager on): counts 36 / 12 -> groups of 12: 3 chunked + 1 full; a block costs 12 pages
    # = 786,432 B -> 10,737,418,240 // 786,432 = 13,653 blocks; a request needs 3 x cdiv(min(8,192 +
    # 2 x 8,192, 131,072), 16) = 3 x 1,536 plus 131,072 / 16 = 8,192 -> 12,800 blocks;
    # tokens int(13,653 x 131,072 / 12,800) = int(139,806.72) = 139,806
    p = pool33("llama-4-scout", 131_072)
    assert (p.num_blocks, p.blocks_per_request, p.gpu_kv_cache_tokens) == (13_653, 12_800, 139_806)
    assert sorted(g.spec.kind for g in p.groups) == ["chunked", "chunked", "chunked", "full"]
    # 0.11: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0 turns the hybrid manager off: 48 full layers,
    # one block 48 x 65,536 = 3,145,728 B -> 3,413 blocks; tokens 3,413 x 16 = 54,608; a request 8,192 blocks
    p = pool("llama-4-scout", 131_072)
    assert (p.num_blocks, p.blocks_per_request, p.gpu_kv_cache_tokens) == (3_413, 8_192, 54_608)
    assert any("chunked layers are sized as full attention" in n for n in p.notes)


def test_default_context_is_capped_at_a_short_models_maximum(cli):
    # gpt2's max_position_embeddings is 1,024: without --context, `kvplan estimate gpt2 --engine vllm` plans 1,024
    # tokens (vLLM would refuse the default 4,096 as max_model_len); with --context 4096 given, the user's length
    # stands and vLLM's refusal is reported (exit 2)
    code, out, err = cli("estimate", "gpt2", "--gpu", "h100", "--engine", "vllm", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["context_tokens"] == 1024 and data["context_from"] == "default, capped at the model's maximum"
    # 12 layers x 12 heads x 64 x 2 (K, V) x 2 B = 36,864 B per token
    assert data["kv_bytes_per_sequence"] == 1024 * 36_864
    code, out, err = cli("estimate", "gpt2", "--gpu", "h100", "--engine", "vllm", "--context", "4096")
    assert code == 2 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in err
    # a model trained for more keeps the 4,096 default
    code, out, err = cli("estimate", "llama-3.1-8b", "--format", "json")
    data = json.loads(out)
    assert data["context_tokens"] == 4096 and data["context_from"] == "default"


def test_a_release_modelled_with_older_rules_keeps_its_name(cli):
    # vLLM 0.24 changed no rule kvplan models since 0.23 (vllm_rules: the version table), so vllm@0.24 runs the
    # 0.23 rules; the report used to call the result "vLLM 0.23" and engine.version "0.23"
    code, out, err = cli("estimate", "llama-3.1-8b", "--engine", "vllm@0.24", "--kv-memory", "10GiB",
                         "--max-model-len", "8192", "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert engine["version"] == "0.24" and engine["version_modelled"] == "0.23"
    code, text, err = cli("estimate", "llama-3.1-8b", "--engine", "vllm@0.24", "--kv-memory", "10GiB",
                          "--max-model-len", "8192")
    assert code == 0, err
    assert "vLLM 0.24 (modelled with the rules of 0.23) would log:" in text
    code, out, err = cli("estimate", "llama-3.1-8b", "--engine", "vllm@0.34.0", "--kv-memory", "10GiB",
                         "--format", "json")
    assert json.loads(out)["engine"]["version"] == "0.34"  # the rules' own release, however it is spelled
