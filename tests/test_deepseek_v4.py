"""DeepSeek-V4 (model_type deepseek_v4): hybrid compressed attention.

Expected values are worked out by hand from the layout in transformers'
modeling_deepseek_v4.py and vLLM's DeepSeek-V4 cache specs, or are published
figures: V4-Flash 284B / V4-Pro 1.6T parameters; V4-Pro's KV cache at 1M tokens,
9.62 GiB per sequence in bf16. Bytes are bf16 (2 B) unless said otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.shard import shard_layer
from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError
from kvplan.sources import load_model

from kvplan_inprocess import kvplan

GIB = 2**30
MIB = 2**20
N = 2**20  # 1M tokens
D, DI, W = 512, 128, 128  # head_dim, index_head_dim, sliding_window of both checkpoints
LOGS = Path(__file__).parent / "data" / "vllm_logs"


def _flash_config() -> dict:
    from importlib import resources

    return json.loads((resources.files("kvplan.model_specs") / "deepseek-v4-flash.json").read_text())


def test_flash_layer_kinds_follow_compress_ratios_and_drop_the_mtp_entry():
    model = load_model("deepseek-v4-flash")
    kinds = [layer.kind for layer in model.layers]
    assert len(kinds) == 43  # compress_ratios has 44 entries: the last is the MTP layer's
    assert kinds[:2] == ["shared K/V window 128"] * 2
    assert kinds[2] == "CSA 1/4 + window 128 + indexer keys 1/4 + compressor state"
    assert kinds[3] == "HCA 1/128 + window 128 + compressor state"
    assert kinds.count(kinds[2]) == 21 and kinds.count(kinds[3]) == 20
    assert kinds[42] == kinds[2]  # ratio 4 on the last decoder layer, 0 on the MTP entry


def test_flash_growth_per_token_and_kv_at_1m_by_hand():
    model = load_model("deepseek-v4-flash")
    est = estimate(model, N)
    # CSA: (512 + 128) x 2 B per 4 tokens = 320 B/token; HCA: 512 x 2 B per 128 tokens = 8 B/token;
    # the two sliding layers grow 1,024 B/token below their 128-token cap
    assert est.bytes_per_token == 21 * 320 + 20 * 8 + 2 * 1024 == 8928
    csa = (N // 4 + W) * D * 2 + (N // 4) * DI * 2  # entries + window of shared K/V, indexer keys
    hca = (N // 128 + W) * D * 2
    sliding = W * D * 2
    assert est.kv_bytes_per_sequence == 21 * csa + 20 * hca + 2 * sliding == 7_219_838_976
    # compressor state, float32 (vLLM CompressorStateCache): CSA 8 tokens x 2 x 2 x (512 + 128) x 4 B,
    # HCA 128 tokens x 2 x 512 x 4 B
    assert est.state_bytes_per_sequence == 21 * 8 * 4 * (D + DI) * 4 + 20 * 128 * 2 * D * 4
    assert est.state_bytes_per_sequence == 21 * 81_920 + 20 * 524_288


def test_pro_reproduces_the_published_9_62_gib_at_1m():
    est = estimate(load_model("deepseek-v4-pro"), N)
    # 30 CSA x 320 + 31 HCA x 8 = 9,848 B/token, plus 61 windows of 128 tokens
    assert est.kv_bytes_per_sequence == 9848 * N + 61 * W * D * 2
    assert round(est.kv_bytes_per_sequence / GIB, 2) == 9.62


def test_decode_reads_topk_entries_plus_window_and_every_indexer_key():
    model = load_model("deepseek-v4-flash")
    n = 100_000
    csa = (512 + W) * D * 2 + (n // 4) * DI * 2  # index_topk 512 chosen entries + window; indexer scores all
    hca = (n // 128 + W) * D * 2  # HCA reads every compressed entry
    assert estimate(model, n).read_bytes_per_step == 21 * csa + 20 * hca + 2 * W * D * 2


def test_parameters_match_transformers_and_the_published_totals():
    flash, pro = load_model("deepseek-v4-flash"), load_model("deepseek-v4-pro")
    # transformers 5.25 DeepseekV4ForCausalLM built on the meta device, sum of numel (284,332,230,231 and
    # 1,572,997,179,491), plus the routers' e_score_correction_bias buffers (one float32 an expert; the checkpoint's
    # ffn.gate.bias) on the layers after the num_hash_layers 3 hash-routed ones: 40 x 256 and 58 x 384
    assert flash.param_count == 284_332_230_231 + 40 * 256 == 284_332_240_471
    assert pro.param_count == 1_572_997_179_491 + 58 * 384 == 1_572_997_201_763
    assert round(flash.param_count / 1e9) == 284 and round(pro.param_count / 1e12, 1) == 1.6
    # active: all but the routed experts, plus 6 of them per layer (published 13B and 49B)
    per_expert_flash = 3 * 4096 * 2048
    assert flash.active_param_count == flash.param_count - 43 * 250 * per_expert_flash
    assert round(flash.active_param_count / 1e9) == 14 and round(pro.active_param_count / 1e9) == 50


def test_weights_hold_the_experts_in_fp4():
    flash = load_model("deepseek-v4-flash")
    experts = 43 * 256 * 3 * 4096 * 2048  # MXFP4: 1/2 B + one E8M0 byte per 32
    # the rest module by module (FP8 linears with a UE8M0 byte per 128 x 128 block, BF16 and float32 floats):
    # worked out in tests/test_tables_mla.py, 8,827,343,068 B
    assert flash.weight_bytes == experts * 17 // 32 + 8_827_343_068 == 155_997_081_820
    assert flash.weight_dtype == "fp4 experts + fp8"


def test_transformers_5_layer_types_and_compress_rates_read_the_same():
    raw = _flash_config()
    ratios = raw.pop("compress_ratios")[:43]
    names = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
    raw["layer_types"] = [names[r] for r in ratios]
    raw["compress_rates"] = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}
    new = build_model(raw, "v4")
    old = load_model("deepseek-v4-flash")
    assert estimate(new, N).kv_bytes_per_sequence == estimate(old, N).kv_bytes_per_sequence
    assert [l.kind for l in new.layers] == [l.kind for l in old.layers]


def test_default_schedule_without_a_per_layer_list():
    raw = _flash_config()
    del raw["compress_ratios"]
    raw["num_hidden_layers"] = 6
    kinds = [layer.kind.split(" ")[0] for layer in build_model(raw, "v4").layers]
    # transformers' default: two HCA layers, then CSA and HCA alternating, starting with HCA
    assert kinds == ["HCA", "HCA", "HCA", "CSA", "HCA", "CSA"]


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r["compress_ratios"].__setitem__(5, 8), "compress_ratios[5] is 8"),
    (lambda r: r.__setitem__("compress_ratios", r["compress_ratios"][:40]), "has 40 entries for 43 layers"),
    (lambda r: r.__setitem__("num_key_value_heads", 2), "one shared K/V head"),
])
def test_bad_configs_are_refused_with_one_line(edit, needle):
    raw = _flash_config()
    edit(raw)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        build_model(raw, "v4")


def test_tensor_parallel_replicates_the_single_kv_head_and_the_compressor_state():
    csa = load_model("deepseek-v4-flash").layers[2]
    sharded = shard_layer(csa, 8)
    assert sharded.state.bytes == csa.state.bytes == 81_920
    assert [c.stored_bytes(1000) for c in sharded.caches] == [c.stored_bytes(1000) for c in csa.caches]


def _kvplan(*args):
    return kvplan(*args)  # `python -m kvplan ARGS`, in this process


# vLLM's own planner (0.29.0, 0.30.0, 0.32.0 and 0.33.0 alike) on the specs DeepSeek-V4 registers in 0.33.0
# (benchmarks/vllm_oracle_dsv4.py): (GiB, max_model_len) -> (blocks, tokens); 0.33's start check refuses the
# 7.01 GiB cases (one request needs more blocks than the pool holds)
VLLM_DSV4 = {
    ("deepseek-v4-flash", 10, 131072): (10_713, 195_186), ("deepseek-v4-flash", 40, 1048576): (42_853, 4_169_106),
    ("deepseek-v4-flash", 7.01, 912128): (7_510, 668_626),
    ("deepseek-v4-pro", 10, 131072): (7_477, 136_228), ("deepseek-v4-pro", 40, 1048576): (29_909, 2_909_803),
    ("deepseek-v4-pro", 7.01, 912128): (5_241, 466_614),
}
VLLM_DSV4_REFUSED = {("deepseek-v4-flash", 7.01, 912128), ("deepseek-v4-pro", 7.01, 912128)}


@pytest.mark.parametrize("name, gib, max_len", sorted(VLLM_DSV4))
def test_vllm_pool_equals_vllms_own_planner(name, gib, max_len):
    from kvplan.engines.vllm import simulate

    pool = simulate(load_model(name), kv_memory_bytes=int(gib * GIB), max_model_len=max_len,
                    allow_long_max_model_len=True)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == VLLM_DSV4[(name, gib, max_len)]
    assert pool.fits is ((name, gib, max_len) not in VLLM_DSV4_REFUSED)


def test_vllm_pool_by_hand():
    from kvplan.engines.vllm import simulate

    pool = simulate(load_model("deepseek-v4-flash"), kv_memory_bytes=10 * GIB, max_model_len=131072)
    # pages rounded up to 576 B: a 256-token block holds 64 CSA entries of 584 B (37,376 -> 37,440), 64 indexer
    # keys of 132 B (8,448 -> 8,640), 2 HCA entries (1,168 -> 1,728); a 64-token window page 37,440; compressor
    # states in float32: 4 tokens x 2,048 (32,768 -> 32,832), 4 x 512 (8,192 -> 8,640), 8 x 1,024 (-> 32,832)
    assert [(g.spec.kind, len(g.layers), g.spec.page_bytes) for g in pool.groups] == [
        ("sliding", 22, 22 * 37_440), ("sliding", 21, 21 * 37_440), ("mla", 62, 21 * 37_440 + 21 * 8_640 + 20 * 1_728),
        ("state", 42, 21 * 32_832 + 21 * 8_640), ("state", 20, 20 * 32_832)]
    assert pool.bytes_per_block == 1_002_240  # the widest group
    # per request at 128K, 2 x 8,192 tokens in flight: 512 entry blocks, 2 x (cdiv(127 + 16,384, 64) + 1) window
    # blocks, cdiv(7 + 16,384, 4) + 1 and cdiv(127 + 16,384, 8) + 1 state blocks
    assert pool.blocks_per_request == 512 + 2 * 259 + 4099 + 2065 == 7194
    assert pool.num_blocks == 10 * GIB // 1_002_240 == 10_713
    assert pool.gpu_kv_cache_tokens == int(10_713 / 7194 * 131072)


# each release's own planner (0.20.0, 0.23.0, 0.26.0, 0.28.0) on the same specs, MTP draft layers added
# (benchmarks/vllm_oracle_dsv4.py --grid RELEASE compares 72 cases a release, 0.20 to 0.34):
# (release, model, MTP layers, GiB, max_model_len, max_num_batched_tokens) -> (blocks, tokens, start check passes)
VLLM_DSV4_BY_RELEASE = {
    ("0.20", "flash", 0, 10, 131072, 8192): (10_208, 384_367, True),
    ("0.20", "flash", 1, 10, 131072, 8192): (10_208, 383_816, True),
    ("0.20", "pro", 0, 7.01, 912128, 8192): (5_078, 703_064, False),
    ("0.23", "flash", 1, 10.29, 1048576, 4096): (10_627, 1_992_350, True),
    ("0.23", "pro", 1, 40, 1048576, 8192): (29_149, 4_290_418, True),
    ("0.26", "flash", 1, 7.01, 912128, 4096): (7_239, 1_010_080, True),
    ("0.26", "pro", 0, 7.01, 912128, 8192): (5_108, 485_783, False),
    ("0.28", "flash", 1, 10.29, 1048576, 4096): (11_024, 1_551_610, True),
    ("0.28", "pro", 1, 40, 1048576, 8192): (29_909, 2_909_803, True),
    # vLLM 0.34.0's planner (its DeepSeek-V4 attention.py, compressor.py and sparse_swa.py register the same specs)
    ("0.34", "flash", 1, 10.29, 1048576, 4096): (11_024, 1_551_610, True),
    ("0.34", "pro", 0, 7.01, 912128, 8192): (5_241, 466_614, False),
}


@pytest.mark.parametrize("case", sorted(VLLM_DSV4_BY_RELEASE))
def test_vllm_pool_before_0_30_equals_each_releases_planner(case):
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    release, name, mtp, gib, max_len, mnbt = case
    pool = simulate(load_model(f"deepseek-v4-{name}"), kv_memory_bytes=int(gib * GIB), max_model_len=max_len,
                    max_num_batched_tokens=mnbt, rules=resolve(release)[0], draft_layers=mtp,
                    allow_long_max_model_len=True)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits) == VLLM_DSV4_BY_RELEASE[case]


def test_vllm_0_25_pool_with_the_mtp_layer_by_hand():
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    pool = simulate(load_model("deepseek-v4-flash"), kv_memory_bytes=int(10.29 * GIB), max_model_len=N,
                    max_num_batched_tokens=4096, rules=resolve("0.25")[0], draft_layers=1)
    # 0.25 pads each window and state page to the nearest MLA page size at least as large (37,440 / 8,640 /
    # 1,728): window 37,440; indexer state 8,192 -> 8,640; compressor states 32,768 -> 37,440. The MTP layer is a
    # 44th window layer, so the window layers split 22 + 22.
    assert [(g.spec.kind, len(g.layers), g.spec.page_bytes) for g in pool.groups] == [
        ("sliding", 22, 22 * 37_440), ("sliding", 22, 22 * 37_440), ("mla", 62, 21 * 37_440 + 21 * 8_640 + 20 * 1_728),
        ("state", 42, 21 * 37_440 + 21 * 8_640), ("state", 20, 20 * 37_440)]
    # a block: each page size x the most layers of that size in any group
    assert pool.bytes_per_block == 22 * 37_440 + 20 * 1_728 + 21 * 8_640 == 1_039_680
    # per request at 1M, 4,096 tokens in flight (one batch before 0.26): 4,096 entry blocks, cdiv(127 + 4,096, 64)
    # + 1 = 67 window blocks, cdiv(7 + 4,096, 4) + 1 = 1,027 and cdiv(127 + 4,096, 8) + 1 = 529 state blocks, each
    # group weighted by its bytes over the MLA group's
    weighted = 4096 * 1_002_240 + 2 * 67 * 823_680 + 1027 * 967_680 + 529 * 748_800
    assert pool.blocks_per_request == -(-weighted // 1_002_240) == 5593
    assert pool.num_blocks == int(10.29 * GIB) // 1_039_680 == 10_627
    # 0.20-0.22: the MLA page sizes' sum x the most layers of one page size in any group
    old = simulate(load_model("deepseek-v4-flash"), kv_memory_bytes=10 * GIB, max_model_len=131072,
                   rules=resolve("0.20")[0], draft_layers=1)
    assert old.bytes_per_block == (37_440 + 8_640 + 1_728) * 22 == 1_051_776


def test_calibrate_reproduces_the_public_0_25_mtp_log():
    # DeepSeek-V4-Flash, vLLM 0.25.0, TP 2 on RTX PRO 6000, fp8 KV, --max-num-batched-tokens 4096, MTP with 2
    # speculative tokens: "Available KV cache memory: 10.29 GiB", "GPU KV cache size: 1,993,100 tokens", 1.90x
    out = _kvplan("calibrate", str(LOGS / "v025_deepseek_v4_flash_tp2_rtxpro6000_mtp2.log"), "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["model"] == "deepseek-v4-flash"  # read from the log's Hugging Face cache snapshot path
    tokens = next(f for f in data["figures"] if f["name"].startswith("GPU KV cache size"))
    assert tokens["logged"] == "1,993,100" and tokens["within_rounding"] is True
    assert any("MTP draft layer" in n for n in data["notes"])


def test_the_mtp_layer_explains_the_logged_tokens_exactly():
    # 10.29 GiB printed: 10.285-10.295 GiB, 10,622-10,632 blocks of 1,039,680 B. 1,993,100 tokens needs
    # int(blocks / per_request x 1M) == 1,993,100: with the MTP layer (5,593 blocks a request) 10,631 blocks do;
    # without it (5,591) no block count does
    def tokens(blocks, per_request):
        return int(blocks / per_request * N)

    assert tokens(10_631, 5593) == 1_993_100
    assert all(tokens(b, 5591) != 1_993_100 for b in range(10_622, 10_633))
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    for mtp, per_request in ((1, 5593), (0, 5591)):
        pool = simulate(load_model("deepseek-v4-flash"), kv_memory_bytes=10 * GIB, max_model_len=N,
                        max_num_batched_tokens=4096, rules=resolve("0.25")[0], draft_layers=mtp)
        assert pool.blocks_per_request == per_request


def test_issue_51041_table_lies_between_the_printed_memory_bounds_with_the_mtp_layer():
    # vLLM issue #51041 (0.26.0, H20 TP 2, fp8, MTP): 7.01 GiB -> 1,009,661 tokens at max_model_len 912,128 (the
    # author's table). 8,192 tokens in flight (4,096 batched tokens x 2 under async scheduling, or 8,192 without
    # it); the server started, as 0.26's start check says
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    def run(gib, mtp):
        return simulate(load_model("deepseek-v4-flash"), kv_memory_bytes=int(gib * GIB), max_model_len=912_128,
                        max_num_batched_tokens=4096, rules=resolve("0.26")[0], draft_layers=mtp)

    with_mtp = [run(g, 1) for g in (7.005, 7.015)]
    assert with_mtp[0].gpu_kv_cache_tokens <= 1_009_661 <= with_mtp[1].gpu_kv_cache_tokens
    assert all(p.fits for p in with_mtp)
    assert run(7.005, 0).gpu_kv_cache_tokens > 1_009_661  # without the MTP layer the table is not reached


def test_draft_layers_of_other_families_are_refused():
    from kvplan.engines.vllm import simulate
    from kvplan.errors import UsageError

    with pytest.raises(UsageError, match="has no MTP layers"):
        simulate(load_model("llama-3.1-8b"), kv_memory_bytes=10 * GIB, max_model_len=8192, draft_layers=1)


def test_vllm_before_0_20_block_size_and_emit_refuse_in_one_line():
    for args in (["estimate", "deepseek-v4-flash", "--engine", "vllm@0.19", "--kv-memory", "10GiB"],
                 ["estimate", "deepseek-v4-flash", "--engine", "vllm", "--kv-memory", "10GiB", "-t", "page:64"],
                 ["estimate", "deepseek-v4-flash", "--engine", "vllm", "--kv-memory", "10GiB", "--kv-dtype", "int4"],
                 ["estimate", "deepseek-v4-flash", "--emit", "vllm", "--gpu", "h200", "--tp", "2"]):
        out = _kvplan(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr, out.stderr


def test_csa_technique_is_refused_on_already_compressed_caches():
    out = _kvplan("estimate", "deepseek-v4-flash", "-t", "csa")
    assert out.returncode != 0 and "already compressed" in out.stderr and "Traceback" not in out.stderr


def test_csa_technique_growth_per_token_counts_one_entry_per_ratio():
    # the csa technique on Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B per
    # entry, one entry per 4 tokens: 32,768 B per token of context
    from kvplan.planner import compose
    from kvplan.techniques.registry import build

    planned = compose(load_model("llama-3.1-8b"), [build("csa:4")])[-1]
    assert estimate(planned.model, 10**6).bytes_per_token == 131_072 // 4


def test_calibrate_shows_what_it_read_then_refuses_in_one_line(tmp_path):
    from pathlib import Path

    src = Path(__file__).parent / "data" / "vllm_logs" / "v0191_qwen3_8b_a100_40gb_tokenkaki.log"
    log = tmp_path / "v4.log"
    log.write_text(src.read_text().replace("Qwen/Qwen3-8B", "deepseek-ai/DeepSeek-V4-Flash"))
    out = _kvplan("calibrate", str(log))
    assert out.returncode == 2
    errors = [line for line in out.stderr.splitlines() if line.startswith("kvplan: error:")]
    assert len(errors) == 1 and "has no DeepSeek-V4 model" in errors[0]  # the log is 0.19.1
    assert "Available KV cache memory" in out.stdout or "available" in out.stdout.lower()


def test_compressed_attention_pairs_by_brute_force():
    from kvplan.capacity.costs import compressed_pairs

    for n in (0, 1, 3, 4, 5, 17, 100, 513):
        for ratio, topk, window in ((4, 8, 3), (4, None, 0), (128, None, 128), (2, 1, 5)):
            brute = sum(min(topk if topk is not None else t, t // ratio) + min(t, window) for t in range(1, n + 1))
            assert compressed_pairs(n, ratio, topk, window) == brute, (n, ratio, topk, window)


def test_pro_is_8_7_times_smaller_than_v3_2_in_bf16():
    # published with the 9.62 GiB figure: "an 8.7x reduction compared to DeepSeek V3.2" in bf16, i.e. V3.2's
    # 61 layers of a bf16 latent (512 + 64) x 2 B plus bf16 indexer keys 128 x 2 B per token
    v32_bf16 = 61 * ((512 + 64) * 2 + 128 * 2) * N
    v4 = estimate(load_model("deepseek-v4-pro"), N).kv_bytes_per_sequence
    assert round(v32_bf16 / v4, 1) == 8.7


@pytest.mark.parametrize("technique", ["window:1024", "evict:0.5"])
def test_vllm_refuses_techniques_that_change_the_tokens_kept(technique):
    out = _kvplan("estimate", "deepseek-v4-flash", "--engine", "vllm", "--kv-memory", "10GiB", "-t", technique)
    assert out.returncode == 2 and "no vLLM form" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_vllm_keeps_fp8_as_fp8_ds_mla():
    out = _kvplan("estimate", "deepseek-v4-flash", "--engine", "vllm", "--kv-memory", "10GiB", "-c", "128k",
                  "-t", "fp8", "--format", "json")
    engine = json.loads(out.stdout)["engine"]
    assert (engine["num_blocks"], engine["gpu_kv_cache_tokens"]) == VLLM_DSV4[("deepseek-v4-flash", 10, 131072)]


def test_vllm_multi_module_mtp_keeps_more_tokens_in_every_window_and_compressor_state():
    # DeepSeek-V4-Flash with two MTP layers (constructed: compress_ratios gains the second MTP layer's entry) at
    # 40 GiB, 128K, 8,192 batched tokens under 0.34. With 4 draft tokens min(n_predict 2, 4) > 1, so vLLM tags every
    # SlidingWindowMLASpec (the 128-token windows and the compressor states) with extra_retained_tokens 3
    # (kv_cache_planning.get_global_kv_cache_groups); vLLM 0.34.0's own planner on those specs
    # (benchmarks/vllm_oracle_dsv4.py plan(config, 2, ..., tokens)) prints 42,853 blocks and 780,765 tokens
    # (5.9568x) with 1 or 2 draft tokens, 780,331 (5.9535x) with 4: 7,198 blocks a request instead of 7,194
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    config = _flash_config()
    config.update(num_nextn_predict_layers=2, compress_ratios=config["compress_ratios"] + [0])
    model = build_model(config, "deepseek-v4-flash-2mtp")
    got = {tokens: simulate(model, rules=resolve("0.34")[0], kv_memory_bytes=40 * GIB, max_model_len=131072,
                            max_num_batched_tokens=8192, draft_layers=2, num_speculative_tokens=tokens)
           for tokens in (1, 4)}
    assert [(p.num_blocks, p.gpu_kv_cache_tokens) for p in got.values()] == [(42_853, 780_765), (42_853, 780_331)]
    assert got[4].blocks_per_request - got[1].blocks_per_request == 7_198 - 7_194
    assert any("= 3 more tokens" in note and "compressor states" in note for note in got[4].notes)
