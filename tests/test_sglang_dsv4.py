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
