"""Each technique worked out by hand on real shapes, and the article's waterfall.

Llama-3.1-8B: 32 layers x 8 KV heads x head_dim 128; one layer stores
2 x 8 x 128 x 2 B = 4,096 B per token in bf16 (131,072 B per token in all).
"""

from __future__ import annotations

import json

import pytest

from kvplan import load_model
from kvplan.capacity.pool import batch_bytes
from kvplan.errors import KvplanError, TechniqueError
from kvplan.planner import compose, evaluate
from kvplan.techniques.registry import build, build_all

GIB = 1024**3
N = 131_072
LAYER_TOKEN = 4096  # bytes per token per layer, Llama-3.1-8B bf16


def kv(alias, specs, tokens=N, batch=1):
    return evaluate(load_model(alias), build_all(specs), tokens, batch).estimate


def test_article_waterfall_40_20_10_5():
    result = evaluate(load_model("llama-3.1-70b"), build_all(["cla:2", "fp8", "evict:0.5"]), N, 1)
    gib = [round(s.gpu_bytes / GIB, 6) for s in result.steps]
    assert gib == [40.0, 20.0, 10.0, 5.0]
    assert [round(s.factor, 6) for s in result.steps[1:]] == [0.5, 0.5, 0.5]
    assert [s.caveat for s in result.steps[1:]] == ["needs training", "quality risk", "quality risk"]


def test_waterfall_through_the_cli(cli):
    code, out, err = cli("estimate", "llama-3.1-70b", "--context", "128k", "-t", "cla:2", "-t", "fp8", "-t", "evict:0.5", "--format", "json")
    assert code == 0, err
    steps = json.loads(out)["techniques"]
    assert [s["spec"] for s in steps] == ["baseline", "cla:2", "fp8", "evict:0.5"]
    assert [s["gpu_bytes"] // 2**20 for s in steps] == [40 * 1024, 20 * 1024, 10 * 1024, 5 * 1024]


def test_gqa_and_mqa():
    assert kv("llama-3.1-70b", ["gqa:2"]).bytes_per_token == 80 * 2 * 2 * 128 * 2
    assert kv("llama-3.1-70b", ["mqa"]).bytes_per_token == 80 * 2 * 1 * 128 * 2


def test_cla_respects_existing_sharing():
    # Gemma 3n: 20 owners (16 sliding, 4 full), 15 layers already shared.
    e = kv("gemma-3n-e4b", ["cla:2"], tokens=4096)
    owners = sum(k.cache_layers for k in e.kinds)
    # sliding owners come in runs of 4 between full layers -> 2 owners per run;
    # full layers are never adjacent -> each stays an owner
    assert owners == 8 + 4


def test_window_all_and_pattern():
    assert kv("llama-3.1-8b", ["window:4096"], 32_768).kv_bytes_per_sequence == 32 * 4096 * LAYER_TOKEN
    e = kv("llama-3.1-8b", ["window:1024,pattern=3:1"], 32_768)
    # 32 layers in blocks of 4: 24 local (1024 tokens), 8 global (32,768)
    assert e.kv_bytes_per_sequence == (24 * 1024 + 8 * 32_768) * LAYER_TOKEN


def test_mla_what_if():
    assert kv("llama-3.1-8b", ["mla:rank=512,rope=64"]).bytes_per_token == 32 * 576 * 2


def test_hybrid_what_if():
    e = kv("llama-3.1-8b", ["hybrid:3:1"], 8192)
    assert e.bytes_per_token == 8 * LAYER_TOKEN
    assert e.state_bytes_per_sequence == 24 * 32 * 128 * 128 * 2


def test_csa_stored_and_read():
    e = kv("llama-3.1-8b", ["csa:m=4,k=512,window=128"])
    assert e.kv_bytes_per_sequence == 32 * (N // 4 + 128) * LAYER_TOKEN
    # k compressed entries + the window, plus the selector reading every compressed key
    assert e.read_bytes_per_step == 32 * ((512 + 128) * LAYER_TOKEN + (N // 4) * 8 * 128 * 2)
    # a trailing partial group stays raw in the window: 1001 tokens -> 250 entries
    assert kv("llama-3.1-8b", ["csa:m=4,k=512,window=128"], 1001).kv_bytes_per_sequence == 32 * (250 + 128) * LAYER_TOKEN


def test_quest_stores_more_reads_less():
    e = kv("llama-3.1-8b", ["quest:page=16,topk=64"])
    meta = (N // 16) * 2 * 8 * 128 * 2  # per page: min and max of K, bf16
    assert e.kv_bytes_per_sequence == 32 * (N * LAYER_TOKEN + meta)
    assert e.read_bytes_per_step == 32 * (64 * 16 * LAYER_TOKEN + meta)


@pytest.mark.parametrize(
    "spec, per_layer_token",
    [
        ("fp8", 2048),
        ("int8", 2 * (1024 + 8 * 2 * 4)),  # payload + (scale + zero, fp16) per 64 channels
        ("int4:group=64", 2 * (512 + 8 * 2 * 4)),
        ("int2:group=32", 2 * (256 + 8 * 4 * 4)),
    ],
)
def test_quantization_bytes(spec, per_layer_token):
    assert kv("llama-3.1-8b", [spec]).bytes_per_token == 32 * per_layer_token


def test_fp8_scales_are_fixed_bytes():
    plan = compose(load_model("llama-3.1-8b"), build_all(["fp8:scales=head"]))[-1]
    b = batch_bytes(plan, 1000, 3)
    assert b.total_bytes == 3 * 1000 * 32 * 2048 + 32 * 2 * 8 * 4  # one fp32 scale per head for K and V


def test_kivi_layout_exact():
    e = kv("llama-3.1-8b", ["kivi:bits=2,group=32,residual=128"], 1000)
    # 872 tokens quantised (the newest 128 stay in 16-bit for K and V); a row is 8 x 128 channels
    keys = 872 * 256 + 28 * 1024 * 4 + (128 + 32) * 2048  # codes, ceil(872/32) key groups, recent + open-group buffer
    values = 872 * (256 + 8 * 4 * 4) + 128 * 2048  # codes + per-token scale/zero per 32 channels, recent
    assert e.kv_bytes_per_sequence == 32 * (keys + values)
    # residual=0 is allowed: the kernel's layout (codes for all, one 32-row key buffer)
    e0 = kv("llama-3.1-8b", ["kivi:bits=2,group=32,residual=0"], 1024)
    assert e0.kv_bytes_per_sequence == 32 * (1024 * 256 + 32 * 1024 * 4 + 32 * 2048 + 1024 * (256 + 128))


def test_fp8_skip_sliding_keeps_window_layers_native():
    e = kv("gemma-3-27b", ["fp8,skip=sliding"])
    per = 2 * 16 * 128
    assert e.kv_bytes_per_sequence == 52 * 1024 * per * 2 + 10 * N * per * 1


def test_eviction_fraction_count_and_recent():
    assert kv("llama-3.1-8b", ["evict:0.5"]).kv_bytes_per_sequence == 32 * (N // 2) * LAYER_TOKEN
    assert kv("llama-3.1-8b", ["evict:2048,recent=64"]).kv_bytes_per_sequence == 32 * 2048 * LAYER_TOKEN
    assert kv("llama-3.1-8b", ["evict:2048,recent=64"], 1000).kv_bytes_per_sequence == 32 * 1000 * LAYER_TOKEN


def test_evict_1_keeps_one_token_and_says_so():
    # "evict:1" is a count (no point): one token per layer, 32 x 1 x LAYER_TOKEN, with a warning;
    # "evict:1.0" keeps every token, silently
    with pytest.warns(UserWarning, match="keeps one token per layer; write 1.0"):
        assert kv("llama-3.1-8b", ["evict:1"]).kv_bytes_per_sequence == 32 * 1 * LAYER_TOKEN
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kv("llama-3.1-8b", ["evict:1.0"]).kv_bytes_per_sequence == 32 * N * LAYER_TOKEN


def test_pyramid_same_total_larger_at_the_bottom():
    e = kv("llama-3.1-8b", ["pyramid:0.25"], 31 * 64)  # 1984 tokens: exact fractions
    uniform = kv("llama-3.1-8b", ["evict:0.25"], 31 * 64)
    assert e.kv_bytes_per_sequence == uniform.kv_bytes_per_sequence
    plan = compose(load_model("llama-3.1-8b"), build_all(["pyramid:0.25"]))[-1]
    kept = [layer.caches[0].policy.retained_tokens(1984) for layer in plan.model.layers]
    assert kept[0] == 744 and kept[-1] == 248 and kept == sorted(kept, reverse=True)


def test_paging_fragmentation_with_a_window():
    plan = compose(load_model("mistral-7b-v0.1"), build_all(["page:16"]))[-1]
    b = batch_bytes(plan, 5000, 1)
    # kept positions [904, 5000): blocks 56..312 = 257 blocks of 16
    assert b.kv_bytes_per_sequence == 32 * 257 * 16 * LAYER_TOKEN
    assert b.fragmentation_bytes == 32 * (257 * 16 - 4096) * LAYER_TOKEN


def test_prefix_sharing_counts_only_full_blocks(cli):
    code, out, err = cli("estimate", "llama-3.1-8b", "--context", "4096", "--batch", "32",
                         "-t", "prefix:tokens=2010,requests=32", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    shared = 2000 * 32 * LAYER_TOKEN  # 125 full blocks of 16; the last 10 tokens are not shared
    assert data["prefix"]["shared_bytes"] == shared
    assert data["prefix"]["saved_bytes"] == 31 * shared
    assert data["total_bytes"] == 32 * 4096 * 32 * LAYER_TOKEN - 31 * shared
    assert data["prefix"]["hit_rate"] == pytest.approx(31 / 32 * 2000 / 2010)


def test_sparse_reads_do_not_change_capacity(cli):
    base = json.loads(cli("estimate", "llama-3.1-8b", "--context", "32k", "--kv-memory", "20GiB", "--format", "json")[1])
    quest = json.loads(cli("estimate", "llama-3.1-8b", "--context", "32k", "--kv-memory", "20GiB", "-t", "quest", "--format", "json")[1])
    assert quest["max_concurrency"] <= base["max_concurrency"]
    assert quest["techniques"][-1]["read_bytes_per_step"] < base["techniques"][-1]["read_bytes_per_step"]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("cla:0", "factor must be a positive integer"),
        ("cla:1", "must be >= 2"),
        ("evict:1.5", "in (0, 1]"),
        ("int3", "unknown technique 'int3'"),
        ("window:-1", "positive integer"),
        ("fp8:e3m4", "e4m3 or e5m2"),
        ("quest:page=16,topk=0", "topk must be a positive integer"),
        ("prefix:requests=4", "needs tokens=N"),
        ("gqa:3", "do not divide"),
        ("frobnicate", "unknown technique"),
        ("evict:100,recent=200", "smaller than recent"),
        ("csa:m=8,window=4", "window >= m - 1"),
    ],
)
def test_bad_technique_parameters(spec, message):
    with pytest.raises(KvplanError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        evaluate(load_model("llama-3.1-70b"), build_all([spec]), 1024)


@pytest.mark.parametrize(
    "model, spec, message",
    [("mamba-2.8b", "cla:2", "no layer owns a growing cache"), ("deepseek-v3", "mla", "already uses latent"),
     ("mamba-2.8b", "fp8", "no K/V cache"), ("deepseek-v3", "gqa:2", "no attention K/V cache")],
)
def test_techniques_that_cannot_apply(model, spec, message):
    with pytest.raises(TechniqueError, match=message):
        evaluate(load_model(model), [build(spec)], 1024)


def test_bad_technique_through_cli_is_one_line(cli):
    code, out, err = cli("estimate", "mamba-2.8b", "-t", "cla:2")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
