"""DeepSeek-V4.1 (model_type deepseek_v41): compressed caches shared by groups of layers.

Expected values are worked out by hand from the layout in vLLM 0.33.0's
models/deepseek_v41 (attention.py, compressor.py), or are published figures:
DeepSeek-V4.1's technical report gives its global KV cache (always in HBM) as
890 bytes per token (abstract). Bytes are bf16 (2 B) unless said otherwise.

The released Flash layout: 40 layers; compress_ratios 0 on layers 0-1, 2 on
2-19, 1 on 20-39; KV sources 2, 8, 14, 20; index sources 2, 8, 14, 20, 24, 28,
32, 36; head_dim 512, index_head_dim 128, sliding_window 128, index_topk 512.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from importlib import resources

import pytest

from kvplan.capacity.shard import shard
from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.core.storage import Storage
from kvplan.core.transform import map_caches
from kvplan.errors import ConfigError
from kvplan.sources import load_model

D, DI, W, TOPK = 512, 128, 128, 512
N = 128 * 1024


def _config() -> dict:
    return json.loads((resources.files("kvplan.model_specs") / "deepseek-v4.1-flash.json").read_text())


def _text(**changes) -> dict:
    config = _config()
    config["text_config"].update(changes)
    return config


def test_layers_store_their_window_and_read_their_source():
    model = load_model("deepseek-v4.1-flash")
    layers = model.layers
    assert len(layers) == 40
    for i in (0, 1):  # compress_ratios 0: the window only
        assert [c.policy.window_tokens for c in layers[i].caches] == [W] and not layers[i].borrows
    for source, ratio in ((2, 2), (8, 2), (14, 2), (20, 1)):
        main, keys = layers[source].caches
        assert (main.policy.compress_ratio, main.policy.compress_window, main.policy.compress_topk) == (ratio, W, TOPK)
        assert (keys.kind, keys.key_dim, keys.policy.compress_ratio) == ("indexer", DI, ratio)
        assert not layers[source].borrows
        # ratio 2 keeps the open group (2 rows of kv + score, 512 float32 each); ratio 1 pools nothing
        assert (layers[source].state.bytes if layers[source].state else 0) == (2 * 2 * D * 4 if ratio == 2 else 0)
    expected_source = {i: max(s for s in (2, 8, 14, 20) if s <= i) for i in range(2, 40)}
    for i in set(range(2, 40)) - {2, 8, 14, 20}:
        layer = layers[i]
        assert layer.borrows_from == expected_source[i]
        assert [c.policy.window_tokens for c in layer.caches] == [W]  # stores only its window
        kinds = [c.kind for c in layer.borrows]
        # index sources 24, 28, 32, 36 also scan their source's index keys; the rest reuse the picks
        assert kinds == (["latent", "indexer"] if i in (24, 28, 32, 36) else ["latent"])


def test_kv_per_sequence_and_read_per_step_at_128k_by_hand():
    est = estimate(load_model("deepseek-v4.1-flash"), N)
    entry, key = D * 2, DI * 2  # 1,024 B and 256 B in bf16
    # the KV sources: entries (n / ratio) + their own window, and index keys (n / ratio)
    sources = 3 * ((N // 2 + W) * entry + N // 2 * key) + ((N + W) * entry + N * key)
    windows = 36 * W * entry  # layers 0-1 and the 34 layers that read a source: their window only
    assert est.kv_bytes_per_sequence == sources + windows == 424_673_280
    # below the window caps: the sources' entries and keys, plus 1,024 B on each of the 36 other layers
    assert est.bytes_per_token == 3 * (entry + key) // 2 + (entry + key) + 36 * entry == 40_064
    assert est.state_bytes_per_sequence == 3 * 2 * 2 * D * 4 == 24_576
    # a step: every compressed layer (38) reads the 512 picked entries and its window; layers 0-1 their
    # window; the 8 index sources every index key of their source (3 at n / 2, 5 at n)
    reads = 38 * (TOPK + W) * entry + 2 * W * entry + 3 * (N // 2) * key + 5 * N * key
    assert est.read_bytes_per_step == reads == 243_269_632


def test_published_global_kv_890_bytes_per_token():
    """The report's 890 B/token: the compressed entries in NVFP4 (512 values of 4 bits + an fp8 scale per 16:
    288 B) and the index keys in MXFP4 (128 values of 4 bits + a scale per 32: 68 B), over the 4 KV sources."""
    nvfp4 = Storage("nvfp4", 4, granularity="group", group_size=16, scale_bytes=1)
    mxfp4 = Storage("mxfp4", 4, granularity="group", group_size=32, scale_bytes=1)
    model = map_caches(load_model("deepseek-v4.1-flash"),
                       lambda c: replace(c, storage=mxfp4 if c.kind == "indexer" else nvfp4),
                       lambda i, layer, c: c.policy.compress_ratio is not None)
    growth = sum(c.growth_per_token() for layer in model.layers if not layer.borrows for c in layer.caches
                 if c.policy.compress_ratio is not None)
    assert growth == 3 * (288 + 68) / 2 + (288 + 68) == 890


def test_a_kv_dtype_changes_the_borrowed_entries_with_their_source():
    fp8 = estimate(load_model("deepseek-v4.1-flash"), N)
    out = subprocess.run([sys.executable, "-m", "kvplan", "estimate", "deepseek-v4.1-flash", "-c", "128k", "-t", "fp8",
                          "--format", "json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    # fp8 halves every latent entry (windows and picked entries: 38 x 640 + 2 x 128 entries of 512 B); the
    # index keys keep their width
    latent_entries = 38 * (TOPK + W) + 2 * W
    assert data["read_bytes_per_step"] == fp8.read_bytes_per_step - latent_entries * D == 230_686_720


@pytest.mark.parametrize("changes, message", [
    ({"compress_ratios": [0, 0] + [4] * 18 + [1] * 20}, "compress_ratios[2] is 4"),
    ({"compress_ratios": [0] * 5}, "'compress_ratios' has 5 entries for 40 layers"),
    ({"kv_source_layer_ids": [3, 8, 14, 20]}, "layer 2 is compressed"),
    ({"kv_source_layer_ids": [2, 8, 14]}, "layer 20 compresses 1/1 but reads the 1/2 cache of its KV source, layer 14"),
    ({"kv_source_layer_ids": [2, 8, 14, 20], "index_source_layer_ids": [2, 8, 14, 24]},
     "KV source layer 20 is not an index source"),
    ({"kv_source_layer_ids": [0, 2, 8, 14, 20]}, "lists layer 0, a sliding-window-only layer"),
    ({"kv_source_layer_ids": [2, 14, 8, 20]}, "is not strictly increasing"),
    ({"index_source_layer_ids": [2, 8, 14, 20, 40]}, "index_source_layer_ids[4] is 40, not a layer index below 40"),
    ({"num_key_value_heads": 2}, "one shared K/V head"),
])
def test_inconsistent_configs_are_refused_by_name(changes, message):
    with pytest.raises(ConfigError, match=None) as caught:
        build_model(_text(**changes), "v41")
    assert message in caught.value.message


def test_the_mtp_entries_of_compress_ratios_are_not_layers():
    config = _text(compress_ratios=[0, 0] + [2] * 18 + [1] * 20 + [0, 0, 0])  # + the 3 MTP layers
    assert build_model(config, "v41").layers == load_model("deepseek-v4.1-flash").layers


def test_a_pipeline_stage_that_starts_inside_a_group_holds_its_source_once():
    model = load_model("deepseek-v4.1-flash")
    stages = shard(model, 1, 4)  # [0, 10), [10, 20), [20, 30), [30, 40)
    second = stages[1]
    # layers 10-13 read layer 8 (stage 1): layer 10 holds 8's entries (and keys: none, 10 is not an index
    # source) and 11-13 read layer 10's; 14-19 read layer 14 as before
    holder = second.layers[0]
    assert not holder.borrows and len(holder.caches) == 2
    assert [layer.borrows_from for layer in second.layers[1:4]] == [10, 10, 10]
    assert [layer.borrows_from for layer in second.layers[5:]] == [14] * 5
    est = estimate(second, N)
    entry = D * 2
    # stage 1: layer 14 (source, its window included) + layer 10's copy of 8's entries (n / 2) + the
    # windows of 10-13 and 15-19
    source14 = (N // 2 + W) * entry + N // 2 * DI * 2
    assert est.kv_bytes_per_sequence == source14 + N // 2 * entry + 9 * W * entry
    # reads do not change with the split: the copy is read where the source's entries were
    whole = sum(estimate(s, N).read_bytes_per_step for s in stages)
    assert whole == estimate(model, N).read_bytes_per_step


@pytest.mark.parametrize("engine", ["sglang"])
def test_engines_refuse_in_one_line(engine):
    out = subprocess.run([sys.executable, "-m", "kvplan", "estimate", "deepseek-v4.1-flash", "--engine", engine,
                          "--kv-memory", "40GiB"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "DeepSeek-V4.1" in out.stderr


def test_parameters_and_weight_bytes_by_hand():
    """Counted from vLLM 0.33's modules by hand (the helper's table in docs/models.md). H 5,120, 40 layers,
    64 heads of 512, q rank 1,280, 8 output groups of rank 1,024, 384 experts of 2,304 (6 active), hc 4,
    index 32 heads of 128, vocab 129,280, Engram on layers 1 and 14 (max n-gram 4, 8 heads of 256)."""
    H, L, E, I = 5120, 40, 384, 2304
    expert = 3 * H * I
    mixer = 6 * 4 * (4 * H + 1) + 3
    # q_a and the shared K/V projection (1,280 + 512 rows), q norm, q_b, K/V norm, o_a, o_b, sinks
    attention = H * 1792 + 1280 + 1280 * 64 * 512 + 512 + 4096 * 8192 + 8192 * H + 64
    per_layer = attention + expert + E * H + 2 * E + 2 * mixer + 2 * H  # + shared expert, router and biases
    compressors = 3 * (2 * H * 512 + 512) + (H * 512 + 512)  # sources 2, 8, 14 (ratio 2, gated) and 20
    indexers = 8 * (1280 * 32 * 128 + H * 32) + 4 * (128 * 512 + 128)  # 8 index sources; wk + norm on 4
    engram = 2 * (3 * 8 * 256 * 5 * H + 2 * 4 * H)
    total = L * (per_layer + E * expert) + compressors + indexers + engram + 2 * 129_280 * H + H
    model = load_model("deepseek-v4.1-flash")
    assert model.param_count == total == 551_880_835_184
    assert model.active_param_count == total - L * (E - 6) * expert == 16_792_502_384  # published: 16B decoding
    # bytes: experts MXFP4 (0.5 + 1/32 B), the FP8 linears with one UE8M0 scale per 32 x 32 block, bf16 and
    # float32 as vLLM allocates them
    fp8 = L * (H * 1792 + 1280 * 64 * 512 + 4096 * 8192 + 8192 * H + expert) + 8 * 1280 * 32 * 128 + 2 * 3 * 8 * 256 * 5 * H
    fp32 = L * (64 + 2 * E + 2 * mixer)
    experts = L * E * expert
    bf16 = total - experts - fp8 - fp32
    assert model.weight_bytes == experts * 17 // 32 + fp8 + fp8 // 1024 + 2 * bf16 + 4 * fp32 == 298_624_579_008
    assert any("202.76 GB" in note and "pinned host memory" in note for note in model.notes)


# --- vLLM 0.33's pool ------------------------------------------------------------------------------------
# (blocks, tokens) vLLM 0.33.0's own planner gives on the specs its DeepSeek-V4.1 code registers, run on CPU
# by benchmarks/vllm_oracle_dsv41.py (vLLM's own DeepseekV4IndexerCache / DeepseekV4SWACache /
# CompressorStateCache modules, Model Runner V2's spec collection, get_kv_cache_groups /
# get_kv_cache_config_from_groups / get_kv_cache_capacity), max_num_batched_tokens 8,192 (16,384 in flight).
GIB = 2**30
VLLM_V41 = {
    # Hopper: FlashMLA, fp8_ds_mla; 7 window groups, 1 of entries + index keys, 1 ring; 116,928 B a block
    ("h200", 10, 8192): (91_829, 390_177), ("h200", 10, 131072): (91_829, 2_123_537),
    ("h200", 10, 1048576): (91_829, 4_813_521), ("h200", 40, 131072): (367_317, 8_494_173),
    ("h200", 7.01, 1048576): (64_372, 3_374_271),
    # Blackwell: mega attention, nvfp4_ds_mla; 5 window groups; 135,168 B rounded to lcm(528, 288) = 136,224
    ("b200", 10, 8192): (78_821, 478_297), ("b200", 10, 131072): (78_821, 2_861_835),
    ("b200", 10, 1048576): (78_821, 7_668_380), ("b200", 40, 131072): (315_287, 11_447_450),
    ("b200", 7.01, 1048576): (55_254, 5_375_581),
}


def _pool(gpu, gib, max_len, **kw):
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import V0_33

    kw.setdefault("rules", V0_33)  # the first release whose DeepSeek-V4.1 code kvplan read (0.34: below)
    return simulate(load_model("deepseek-v4.1-flash"), kv_memory_bytes=int(gib * GIB), max_model_len=max_len,
                    max_num_batched_tokens=8192, gpu=gpu, allow_long_max_model_len=True, **kw)


@pytest.mark.parametrize("case", sorted(VLLM_V41), ids=lambda c: f"{c[0]}-{c[1]}GiB-{c[2]}")
def test_vllm_pool_equals_vllms_planner(case):
    pool = _pool(*case)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == VLLM_V41[case]
    assert pool.fits


def test_vllm_pool_by_hand_on_hopper_at_128k():
    pool = _pool("h200", 10, 131072)
    # pages: a window 32 x 584 B -> 19,008 (576-B multiples); entries 32 x 584 -> 19,008 (ratio 2) and
    # 64 x 584 -> 37,440 (ratio 1); index keys 32 x 132 -> 4,608 and 64 x 132 -> 8,640; a ring 8 x 1,024 x 4
    mla = 3 * 19_008 + 37_440 + 3 * 4_608 + 8_640
    assert mla == 116_928 and pool.bytes_per_block == mla  # the widest group: entries + index keys
    # the 40 windows split into groups of 116,928 // 19,008 = 6: 7 groups; the 3 rings into one
    windows = -(-(127 + 16_384) // 32) + 1  # 517 blocks per window group
    assert pool.blocks_per_request == 7 * windows + 131072 // 64 + 1 == 5_668
    assert pool.num_blocks == 10 * GIB // 116_928 == 91_829


def test_vllm_034_pool_by_hand_at_40_gib():
    """vLLM 0.34.0 registers 0.33's specs (models/deepseek_v41 diffed) and its planner gave these on them
    (benchmarks/vllm_oracle_dsv41.py --grid --release 0.34: 54 cases agree). Its new default block, 64, is the
    one every Hopper backend takes (FLASHMLA_SPARSE_DSV41, DEEPSEEK_SPARSE_SWA, the indexer, the compressor), so
    B stays 64; mega attention rejects 64 and keeps 128 (platforms/interface.py
    _preferred_block_size_for_backends). 40 GiB = 42,949,672,960 B; max_model_len 131,072; 8,192 batched
    tokens, 2 batches in flight."""
    from kvplan.engines.vllm_rules import V0_34

    hopper = _pool("h200", 40, 131072, rules=V0_34)
    assert hopper.bytes_per_block == 3 * 19_008 + 37_440 + 3 * 4_608 + 8_640 == 116_928  # as at 0.33
    assert hopper.blocks_per_request == 7 * 517 + 131_072 // 64 + 1 == 5_668
    assert hopper.num_blocks == 42_949_672_960 // 116_928 == 367_317
    assert hopper.gpu_kv_cache_tokens == 367_317 * 131_072 // 5_668 == 8_494_173 and hopper.fits
    # Blackwell: windows 32 x 528 = 16,896; entries 64 x 288 = 18,432 (ratio 2), 128 x 288 = 36,864 (ratio 1);
    # index keys 64 x 132 = 8,448 -> 8,704 and 128 x 132 = 16,896 (512-B pages): 135,168, rounded up to a
    # multiple of lcm(528, 288) = 3,168 -> 43 x 3,168 = 136,224; windows 8 a group (5 groups)
    blackwell = _pool("b200", 40, 131072, rules=V0_34)
    assert blackwell.bytes_per_block == 136_224
    assert blackwell.blocks_per_request == 5 * 517 + 131_072 // 128 + 1 == 3_610
    assert blackwell.num_blocks == 42_949_672_960 // 136_224 == 315_287
    assert blackwell.gpu_kv_cache_tokens == 315_287 * 131_072 // 3_610 == 11_447_450


def test_vllm_pool_layouts_and_refusals():
    assert _pool("b200", 10, 131072, kv_cache_dtype="fp8_ds_mla").gpu_kv_cache_tokens == 2_143_724  # 528-B entries
    small = _pool("h200", 2, 1048576)  # needs 20,005 blocks of 116,928 B (2.18 GiB) with the null block
    assert not small.fits and small.estimated_max_model_len == 943_616
    for gpu, dtype, words in (("h200", "nvfp4_ds_mla", "fp8_ds_mla"), ("rtx-pro-6000", None, "SM 12.0"),
                              ("a100-80gb", None, "SM 8.0")):
        with pytest.raises(Exception) as caught:
            _pool(gpu, 10, 8192, kv_cache_dtype=dtype)
        assert words in str(caught.value)
