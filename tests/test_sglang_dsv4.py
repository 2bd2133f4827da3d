"""SGLang 0.5.23's DeepSeek-V4 pool (kvplan.engines.sglang_dsv4), worked by hand from
model_executor/pool_configurator.py DSV4PoolConfigurator at its CUDA defaults (flashmla, KVLayout.V4, page 256,
fp8_e4m3, swa_full_tokens_ratio 0.1, max_running_requests 256, float32 compress state, no speculation).

KVLayout.V4 (kv_layout.py): 584 B a token (576 data + 8 scales), a page's stride padded to 576 B:
  page 256 (SWA window): ceil(256 x 584 / 576) = 260 strides -> 260 x 576 / 256 = 585 B a token
  page 64 (c4, 256 / 4): ceil(64 x 584 / 576) = 65 -> 65 x 576 / 64 = 585 B
  page 2 (c128, 256 / 128): ceil(2 x 584 / 576) = 3 -> 3 x 576 / 2 = 864 B
indexer keys (get_dsv4_indexer_bytes_per_token, fp8): 128 + 128 / 128 x 4 = 132 B.
c4 compress state per SWA slot: ring 8 / page 256 x (2 x 2 x 512 x 4 + 2 x 2 x 128 x 4 = 10,240 B) = 320 B a c4 layer.

DeepSeek-V4-Flash, 43 layers (compress_ratios: 2 x 0, 21 x 4, 20 x 128):
  SWA token: 43 x 585 + 21 x 320 = 31,875 B
  full token: 0.1 x 31,875 + 21 x (585 / 4 + 132 / 4) + 20 x 864 / 128 = 3,187.5 + 3,764.25 + 135 = 7,086.75 B
  c128 state (fixed): (257 x 128 + 128 + 1 = 33,025 rows -> 33,152 padded to 128) x 2 x 512 x 4 B x 20 layers
    = 2,715,811,840 B
DeepSeek-V4-Pro, 61 layers (30 x 4, 31 x 128):
  SWA token: 61 x 585 + 30 x 320 = 45,285 B; full token: 4,528.5 + 30 x 179.25 + 31 x 6.75 = 10,115.25 B
  c128 state: 33,152 x 4,096 x 31 = 4,209,508,352 B
At 100 GiB (107,374,182,400 B) of pool memory:
  Flash: int((107,374,182,400 - 2,715,811,840) / 7,086.75) = 14,768,175 -> 14,768,128 (page 256);
    swa int(0.1 x full) // 256 x 256 = 1,476,608; c4 3,692,032; c128 115,376; c4_state 1,476,608 / 256 x 8 = 46,144
  Pro: int((107,374,182,400 - 4,209,508,352) / 10,115.25) = 10,198,924 -> 10,198,784; swa 1,019,648
"""

from __future__ import annotations

import json

import pytest

from kvplan.engines.sglang import Speculation, pool
from kvplan.engines.sglang_rules import RULES
from kvplan.errors import UsageError
from kvplan.sources import load_model

GIB = 2**30
R0523, R059 = RULES["0.5.23"], RULES["0.5.9"]


@pytest.fixture(scope="module")
def flash():
    return load_model("deepseek-v4-flash")


@pytest.fixture(scope="module")
def pro():
    return load_model("deepseek-v4-pro")


def test_flash_at_100_gib(flash):
    got = pool(flash, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523)
    d = got.dsv4
    assert (d.bytes_per_swa_token, d.bytes_per_full_token, d.c128_state_fixed_bytes) == (31_875, 7_086.75,
                                                                                       2_715_811_840)
    assert (got.max_total_num_tokens, got.swa_tokens, d.c4_tokens, d.c128_tokens, d.c4_state_pool_size) == (
        14_768_128, 1_476_608, 3_692_032, 115_376, 46_144)
    assert (got.page_size, got.kv_cache_dtype, got.max_running_requests) == (256, "fp8_e4m3", 256)
    lines = got.log_lines()
    assert "DSV4 pool sizes: full=14768128, swa=1476608, c4=3692032, c128=115376, c4_state=46144, c128_state=0" \
        in lines
    assert lines[-1] == "max_total_num_tokens=14768128, max_running_requests=256, context_len=4096"


def test_pro_at_100_gib(pro):
    got = pool(pro, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523)
    d = got.dsv4
    assert (d.bytes_per_swa_token, d.bytes_per_full_token, d.c128_state_fixed_bytes) == (45_285, 10_115.25,
                                                                                       4_209_508_352)
    assert (got.max_total_num_tokens, got.swa_tokens) == (10_198_784, 1_019_648)


def test_given_requests_shrink_the_c128_state(flash):
    # 64 requests: (65 x 128 + 129 = 8,449 rows -> 8,576) x 4,096 B x 20 layers = 702,545,920 B
    got = pool(flash, rest_bytes=100 * GIB, context_len=4096, tp=8, max_running_requests=64, rules=R0523)
    assert got.dsv4.c128_state_fixed_bytes == 702_545_920 and got.max_running_requests == 64
    assert got.max_total_num_tokens == int((100 * GIB - 702_545_920) / 7_086.75) // 256 * 256


def test_estimate_h200_tp8(cli):
    """The CLI's figure is the hand formula applied to the pool memory it reports."""
    rc, out, err = cli("estimate", "deepseek-v4-flash", "--engine", "sglang", "--gpu", "h200", "--tp", "8",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    full = int((engine["kv_memory_bytes"] - 2_715_811_840) / 7_086.75) // 256 * 256
    assert full > 10_000_000 and engine["max_total_num_tokens"] == full
    assert engine["swa_tokens"] == int(full * 0.1) // 256 * 256 and engine["page_size"] == 256
    assert any("bytes_per_full_token=7086.75" in line and "c128_state_fixed=2.53 GB" in line
               for line in engine["log"])


def test_refusals(flash):
    with pytest.raises(UsageError, match="0.5.9 registers no DeepseekV4ForCausalLM"):
        pool(flash, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R059)
    with pytest.raises(UsageError, match="bf16 DeepSeek-V4 cache is not modelled"):
        pool(flash, rest_bytes=100 * GIB, context_len=4096, tp=8, kv_cache_dtype="bf16", rules=R0523)
    with pytest.raises(UsageError, match="speculative decoding is not modelled"):
        pool(flash, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523,
             speculation=Speculation("EAGLE", 1, 2, 1))


def test_cli_refuses_059_in_one_line(cli):
    rc, out, err = cli("estimate", "deepseek-v4-flash", "--engine", "sglang@0.5.9", "--gpu", "h200", "--tp", "8")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "SGLang 0.5.9 registers no DeepseekV4ForCausalLM" in err


# DeepSeek-V4.1-Flash (model_type deepseek_v41, served as DeepseekV4ForCausalLM), worked by hand from
# pool_configurator.py DSV4PoolConfigurator (0.5.23) on CUDA below SM100 (KVLayout.V4 for every ratio), no speculation,
# radix cache and overlap schedule on, chunked prefill 8,192 (a card of 60-160 GiB), max_running_requests 256:
#   40 layers, compress_ratios 2 x 0, 18 x 2, 20 x 1; kv_source_layer_ids [2, 8, 14, 20]: owners c2 = 3 (2, 8, 14),
#   c1 = 1 (20) (collect_sources_by_ratio); V(256) = V(128) = 585; fp4 index keys 128 / 2 + 128 / 32 = 68 B
#   SWA token: 40 x 585 = 23,400 B (no c4 state); full token (cap mode: no SWA share):
#     c1 (585 + 68) x 1 + c2 (585 + 68) / 2 x 3 = 653 + 979.5 = 1,632.5 B
#   c2 state: (257 x 2 + 2 + 1 = 517 rows -> 518, padded to 2) x 2 x 512 x 4 B x 3 = 6,365,184 B
#   SWA cap: per request 128 + 128 x 1 + 256 (trailing) + 256 (decode) = 768; 768 x 256 + 2 x 8,192 + 256 = 213,248;
#     headroom 4 x 256 = 1,024 tails x (128 + 256) = 393,216; 606,464 tokens (2,369 pages) x 23,400 = 14,191,257,600 B
#   padding at a page-aligned full F: 4 x 256 x 585 (a reserved latent page per source) + 68 x (320 c1 index slots
#     past F: (F + 256) + 64 rounded up to 64; + 3 x 192 c2 slots: (F + 256) / 2 + 64 - F / 2) = 659,968 B
# At 100 GiB: 107,374,182,400 - 6,365,184 - 14,191,257,600 = 93,176,559,616 B for tokens;
#   int(/ 1,632.5) = 57,076,201 -> 57,075,968; 57,075,968 x 1,632.5 + 659,968 exceeds it by 618,112 B, 57,075,712 by
#   200,192: two pages off, full 57,075,456; c4 14,268,864, c128 445,902 (the log's full // 4, // 128)
# 64 requests: cap 768 x 64 + 16,384 + 256 + 256 x 384 = 164,096; c2 (65 x 2 + 3 -> 134) x 4,096 x 3 = 1,646,592;
#   107,374,182,400 - 1,646,592 - 164,096 x 23,400 = 103,532,689,408 -> 63,419,648 -> (loop) 63,419,136


@pytest.fixture(scope="module")
def v41():
    return load_model("deepseek-v4.1-flash")


def test_v41_at_100_gib(v41):
    got = pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523, chunked_prefill_size=8192)
    d = got.dsv4
    assert (d.bytes_per_swa_token, d.bytes_per_full_token, d.c128_state_fixed_bytes, d.c2_state_fixed_bytes) == (
        23_400, 1_632.5, 0, 6_365_184)
    assert (d.swa_cap_tokens, d.prefix_tails, d.swa_fixed_bytes) == (606_464, 1_024, 14_191_257_600)
    assert (got.max_total_num_tokens, got.swa_tokens, d.c4_tokens, d.c128_tokens, d.c4_state_pool_size) == (
        57_075_456, 606_464, 14_268_864, 445_902, 0)
    lines = got.log_lines()
    assert lines[0] == "DSV4 SWA sizing: mode=cap, swa_tokens=606464, request_cap+headroom=606464, prefix_tails=1024"
    assert "c2_state_fixed=0.01 GB, swa_fixed=13.22 GB" in lines[1] and "full_token=57075456" in lines[1]
    assert "bytes_per_full_token=1632.50" in lines[1]


def test_v41_given_requests(v41):
    got = pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523, chunked_prefill_size=8192,
               max_running_requests=64)
    assert (got.dsv4.swa_cap_tokens, got.dsv4.prefix_tails, got.dsv4.c2_state_fixed_bytes) == (164_096, 256, 1_646_592)
    assert (got.max_total_num_tokens, got.swa_tokens, got.max_running_requests) == (63_419_136, 164_096, 64)


def test_v41_max_total_tokens_keeps_the_cap(v41):
    # calculate_pool_sizes_from_max_tokens: the full count capped to pages, the SWA pool still the cap
    got = pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523, chunked_prefill_size=8192,
               max_total_tokens=1_000_000)
    assert (got.max_total_num_tokens, got.swa_tokens) == (999_936, 606_464)


def test_v41_refusals(v41):
    with pytest.raises(UsageError, match="chunked_prefill_size"):
        pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523)
    with pytest.raises(UsageError, match="DeepSeek-V4.1 on an SM >= 10 card is not modelled"):
        pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R0523, chunked_prefill_size=8192, nsa_fp8=True)
    with pytest.raises(UsageError, match="0.5.9 registers no DeepseekV41ForCausalLM"):
        pool(v41, rest_bytes=100 * GIB, context_len=4096, tp=8, rules=R059, chunked_prefill_size=8192)


def test_v41_served_as_v4():
    from kvplan.engines.sglang_served import looked_up

    assert looked_up("DeepseekV41ForCausalLM", "deepseek_v41", "0.5.23") == "DeepseekV4ForCausalLM"


def test_v41_estimate_h200_tp8(cli):
    """The CLI's figure is the hand formula applied to the pool memory it reports (H200: chunked prefill 8,192)."""
    rc, out, err = cli("estimate", "deepseek-v4.1-flash", "--engine", "sglang", "--gpu", "h200", "--tp", "8",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    for_tokens = engine["kv_memory_bytes"] - 6_365_184 - 14_191_257_600
    full = int(for_tokens / 1_632.5) // 256 * 256
    while full * 1_632.5 + 659_968 > for_tokens:
        full -= 256
    assert full > 40_000_000 and engine["max_total_num_tokens"] == full and engine["swa_tokens"] == 606_464
    assert any("mode=cap, swa_tokens=606464" in line for line in engine["log"])
    assert engine["served"] is True and not any("registers no" in note for note in engine["notes"])
