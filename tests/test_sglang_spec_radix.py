"""Speculative decoding on SGLang's state models: whether the radix cache stays on, and what that does to the state
slots a request holds and to the state pool's size. Every figure is worked out by hand below.

Read in the sources:
- 0.5.9 server_args.py: __post_init__ turns mamba_scheduler_strategy "auto" into "no_buffer";
  _handle_model_specific_adjustments calls _handle_mamba_radix_cache(support_mamba_cache=True) for Qwen3-Next,
  Qwen3.5's two ForConditionalGeneration classes, Nemotron-H, Falcon-H1 (and JetNemotron / JetVLM), Granite 4.0-H
  when its layer_types name "mamba", and LFM2; under no_buffer a speculative algorithm sets disable_radix_cache
  ("speculative decoding for X is not supported with radix cache yet"). Kimi Linear and Ling 2.5 get
  support_mamba_cache=False: the radix cache is off with or without speculation. Lfm2MoeForCausalLM and
  NemotronH_Nano_VL_V2 have no branch there, so their radix cache stays on.
- 0.5.9 model_runner_kv_cache_mixin.py: handle_max_mamba_cache reserves mamba_cache_per_req x max_running_requests x
  speculative_num_draft_tokens first, then with disable_radix_cache and max_running_requests set (48 under
  speculation unless given: _handle_speculative_decoding) max_mamba_cache_size = max_running_requests; init_memory_pool
  uses ratio 1 with the radix cache off, MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO 3 with it on.
- 0.5.23 arg_groups/overrides.py _mamba_radix_cache_resolution: no speculative branch; the radix cache stays on and
  "auto" is extra_buffer under the overlap schedule, which EAGLE keeps on CUDA (speculative_hook._handle_eagle_family:
  only CPU turns it off), so kv_cache_configurator._calculate_mamba_ratio is 3 + get_mamba_tracking_slots 2 = 5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang import Speculation, pool
from kvplan.engines.sglang_rules import RULES
from kvplan.sources import load_model

GIB = 2**30
R059, R0523 = RULES["0.5.9"], RULES["0.5.23"]
CONFIGS = Path(__file__).parent / "data" / "configs"
MTP = Speculation("EAGLE", 2, 3, 1)  # Qwen3-Next's MTP layer, 2 steps of top-1: 3 draft tokens
DRAFT = Speculation("STANDALONE", 3, 4, 16, "draft", "LlamaForCausalLM")  # a 16-layer draft, 4 draft tokens


def test_qwen3_next_059_speculation_sizes_the_states_from_the_requests():
    # Qwen3-Next-80B at TP 2: a request's state 38,633,472 B, a token's cell 12 full layers x 1 KV head x (256 + 256)
    # x 2 B = 12,288 B (tests/test_sglang.py test_hybrid_recurrent_pool). 50 GiB = 53,687,091,200 B.
    # 48 requests x 3 draft tokens of intermediate states: 38,633,472 x 144 = 5,563,219,968 B, leaving 48,123,871,232;
    # radix cache off: 48 states (not int(48,123,871,232 x 0.9 / 1.9 // 38,633,472) = 590), 1,854,406,656 B;
    # tokens (48,123,871,232 - 1,854,406,656) // 12,288 = 46,269,464,576 // 12,288 = 3,765,418; requests min(48, 48 // 1)
    got = pool(load_model("qwen3-next-80b-a3b"), rest_bytes=50 * GIB, context_len=8192, tp=2, speculation=MTP,
               rules=R059)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (48, 3_765_418, 48)
    assert (got.state_slots_per_request, got.states_from_requests) == (1, True)
    assert any("radix cache off for Qwen3NextForCausalLM under speculative decoding" in n for n in got.notes)
    # a given --max-running-requests 32 is the pool's size: 38,633,472 x (32 x 3 + 32) = 4,945,084,416 B;
    # (53,687,091,200 - 4,945,084,416) // 12,288 = 3,966,634
    got = pool(load_model("qwen3-next-80b-a3b"), rest_bytes=50 * GIB, context_len=8192, tp=2, speculation=MTP,
               max_running_requests=32, rules=R059)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (32, 3_966_634, 32)
    # without speculation the radix cache stays on: the ratio solve and 3 slots a request (tests/test_sglang.py)
    plain = pool(load_model("qwen3-next-80b-a3b"), rest_bytes=50 * GIB, context_len=8192, tp=2, rules=R059)
    assert (plain.mamba_cache_size, plain.state_slots_per_request, plain.states_from_requests) == (658, 3, False)


def test_nemotron_h_059_speculation():
    # Nemotron-H-8B (bundled config: 24 Mamba-2 layers of 128 heads x 64, 8 groups, state 128, kernel 4; 4 attention
    # layers of 8 KV heads x 128). A request's state: conv (4 - 1) x (128 x 64 + 2 x 8 x 128) x 2 B = 61,440 B and
    # SSM 128 x 64 x 128 x 4 B = 4,194,304 B a layer, x 24 = 102,137,856 B; the cell 4 x 8 x (128 + 128) x 2 B = 16,384.
    # 40 GiB = 42,949,672,960 B; the draft's intermediate states 102,137,856 x 48 x 4 = 19,610,468,352 B, leaving
    # 23,339,204,608; 48 states 4,902,617,088 B; tokens 18,436,587,520 // 16,384 = 1,125,280. The radix-on reading it
    # replaces had int(23,339,204,608 x 0.9 / 1.9 // 102,137,856) = 108 states and min(48, 108 // 3) = 36 requests
    got = pool(load_model("nemotron-h-8b"), rest_bytes=40 * GIB, context_len=8192, speculation=DRAFT, rules=R059)
    assert (got.cell.bytes, got.cell.state.bytes) == (16_384, 102_137_856)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (48, 1_125_280, 48)


def test_kimi_linear_059_speculation():
    # Kimi-Linear-48B-A3B: 43,417,600 B of state a request, 8,064 B a token (tests/test_sglang_0523.py); its radix
    # cache is off in 0.5.9 with or without speculation. 20 GiB = 21,474,836,480 B less 43,417,600 x 48 x 4 =
    # 8,336,179,200 B of intermediate states = 13,138,657,280; less 48 states (2,084,044,800 B) = 11,054,612,480;
    # // 8,064 = 1,370,859 tokens
    got = pool(load_model("kimi-linear-48b-a3b"), rest_bytes=20 * GIB, context_len=8192, speculation=DRAFT, rules=R059)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (48, 1_370_859, 48)


@pytest.mark.parametrize("name", ["qwen3-next-80b-a3b", "qwen3.5-35b-a3b", "qwen3.6-27b", "nemotron-h-8b",
                                  "falcon-h1-7b", "granite-4.0-h-tiny", "lfm2-1.2b", "kimi-linear-48b-a3b"])
def test_059_radix_off_under_speculation_for_each_branch(name):
    # every architecture of the branches above: the state pool is max_running_requests (48), one slot a request
    got = pool(load_model(name), rest_bytes=80 * GIB, context_len=8192, speculation=DRAFT, rules=R059)
    assert (got.mamba_cache_size, got.state_slots_per_request, got.max_running_requests) == (48, 1, 48)


def test_lfm2_moe_keeps_its_radix_cache_in_059():
    # LFM2-8B-A1B (Lfm2MoeForCausalLM): no branch in 0.5.9's _handle_model_specific_adjustments, so the radix cache
    # stays on under speculation. A request's state: 18 short-conv layers x 2,048 channels x (3 - 1) x 2 B = 147,456 B;
    # the cell 6 x 8 x (64 + 64) x 2 B = 12,288 B. 20 GiB less 147,456 x 48 x 4 = 28,311,552 B = 21,446,524,928;
    # states int(21,446,524,928 x 0.9 / 1.9 // 147,456) = 68,894; tokens (21,446,524,928 - 68,894 x 147,456) //
    # 12,288 = 918,594; requests min(48, 68,894 // 3)
    got = pool(load_model("lfm2-8b-a1b"), rest_bytes=20 * GIB, context_len=8192, speculation=DRAFT, rules=R059)
    assert (got.cell.bytes, got.cell.state.bytes) == (12_288, 147_456)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (68_894, 918_594, 48)
    assert (got.state_slots_per_request, got.states_from_requests) == (3, False)


@pytest.mark.parametrize("name,slots", [("qwen3-next-80b-a3b", 5), ("nemotron-h-8b", 5), ("kimi-linear-48b-a3b", 5),
                                        ("lfm2-1.2b", 3)])
def test_0523_keeps_the_radix_cache_under_speculation(name, slots):
    # 0.5.23: no speculative branch in _mamba_radix_cache_resolution; extra_buffer (5 slots) where the architecture
    # supports it, LFM2 no_buffer (3); the states from the joint solve, not from max_running_requests
    got = pool(load_model(name), rest_bytes=80 * GIB, context_len=8192, speculation=DRAFT, rules=R0523)
    assert (got.state_slots_per_request, got.states_from_requests) == (slots, False)
    assert got.mamba_cache_size != 48


def test_the_report_says_what_sized_the_states(cli):
    # the CLI at --kv-memory 50 GiB, TP 2, --mtp with 2 speculative tokens: the figures of the first test above
    def engine(*args):
        rc, out, err = cli("estimate", "qwen3-next-80b-a3b", "--kv-memory", "50GiB", "--tp", "2", "--context", "8k",
                           "--format", "json", *args)
        assert rc == 0, err
        return json.loads(out)["engine"]

    spec = engine("--engine", "sglang@0.5.9", "--mtp", "--num-speculative-tokens", "2")
    assert (spec["mamba_cache_size"], spec["max_total_num_tokens"], spec["max_running_requests"]) == (48, 3_765_418, 48)
    states = next(n for n in spec["notes"] if n.startswith("recurrent states:"))
    assert "48 of them (max_running_requests, the radix cache off" in states and "1 a request" in states
    assert "mamba_full_memory_ratio" not in states
    plain = next(n for n in engine("--engine", "sglang@0.5.9")["notes"] if n.startswith("recurrent states:"))
    assert "(mamba_full_memory_ratio 0.9), 3 a request" in plain


def test_a_draft_named_by_its_file_under_059(cli):
    # 0.5.9 sizes the draft's own pool from the draft's config: a --draft-model given as a file is reloaded from that
    # file (not from its name). Nemotron-H-8B with a 16-layer Llama-shaped draft (tests/data/configs, hand-written)
    rc, out, err = cli("estimate", "nemotron-h-8b", "--kv-memory", "40GiB", "--context", "8k", "--engine",
                       "sglang@0.5.9", "--draft-model", str(CONFIGS / "draft-llama-1b-shape.json"),
                       "--num-speculative-tokens", "3", "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["speculative_algorithm"], engine["mamba_cache_size"]) == ("STANDALONE", 48)
    assert engine["max_total_num_tokens"] == 1_125_280  # test_nemotron_h_059_speculation's figures


def test_emit_under_speculation(cli):
    # --emit sglang@0.5.9 with --kv-memory: --max-total-tokens is the pool the estimate reports (the speculative
    # state pool above, 3,765,418 tokens), and the radix-cache note says it is off
    rc, out, err = cli("estimate", "qwen3-next-80b-a3b", "--kv-memory", "50GiB", "--tp", "2", "--context", "8k",
                       "--mtp", "--num-speculative-tokens", "2", "--emit", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    emit = json.loads(out)["emit"]
    assert "--max-total-tokens 3765418 " in emit["command"]
    assert any("turns the radix cache off for Qwen3NextForCausalLM under speculative decoding" in n
               for n in emit["notes"])
    rc, out, err = cli("estimate", "qwen3-next-80b-a3b", "--kv-memory", "50GiB", "--tp", "2", "--context", "8k",
                       "--mtp", "--emit", "sglang", "--format", "json")
    assert rc == 0, err
    assert any(n.startswith("SGLang's radix prefix cache is on by default") for n in json.loads(out)["emit"]["notes"])


def test_calibrate_reads_the_logged_radix_cache():
    # a hand-written excerpt (no public 0.5.9 Kimi Linear log was found): the figures of tests/test_sglang_0523.py
    # test_kimi_linear_kda_state_pool at 0.5.9. server_args as resolved print disable_radix_cache=True, so
    # init_memory_pool's ratio is 1: min(max(int(1,403,164 / 8,192 x 512) = 87,697, 2,048), 4,096, 1,403,164 // 2)
    # = 4,096, at most 234 // 1 = 234 (with the radix cache on it would be 234 // 3 = 78)
    from kvplan.engines.sglang_calibrate import SglangCalibration, _requests
    from kvplan.engines.sglang_log import parse

    text = ("[2026-12-06 00:00:00] server_args=ServerArgs(model_path='moonshotai/Kimi-Linear-48B-A3B-Instruct', "
            "tp_size=1, mem_fraction_static=0.835, max_running_requests=None, disable_radix_cache=True)\n"
            "[2026-12-06 00:00:01 TP0] Mamba Cache is allocated. max_mamba_cache_size: 234, conv_state size: 0.02GB, "
            "ssm_state size: 9.14GB\n"
            "[2026-12-06 00:00:01 TP0] KV Cache is allocated. #tokens: 1403164, KV size: 10.54 GB\n"
            "[2026-12-06 00:00:02 TP0] max_total_num_tokens=1403164, chunked_prefill_size=8192, max_prefill_tokens="
            "16384, max_running_requests=234, context_len=8192, available_gpu_mem=5.00 GB\n")
    cal = SglangCalibration(parse(text, "kimi-linear-059.log"))
    _requests(cal, "KimiLinearForCausalLM")
    (figure,) = cal.figures
    assert (figure.logged, figure.predicted, figure.within_rounding) == ("234", "234", True)
    assert "// 1 (disable_radix_cache=True" in figure.explanation


def test_059_state_line_under_speculation():
    # 0.5.9 memory_pool.MambaPool under speculation: the state buffers hold 48 + 1 states, the intermediate caches
    # [layers, max_running_requests + 1, draft tokens, ...]. Qwen3-Next at TP 2, 3 draft tokens: a request's SSM
    # state 36 x 1,048,576 = 37,748,736 B and conv 36 x 24,576 = 884,736 B; 49 x 37,748,736 = 1,849,688,064 B = 1.72
    # GiB, 49 x 884,736 = 43,352,064 B = 0.04; intermediate 49 x 3 x 37,748,736 = 5,549,064,192 B = 5.17 GiB and
    # 147 x 884,736 = 130,056,192 B = 0.12 GiB (GB in SGLang's log is 2^30 B)
    got = pool(load_model("qwen3-next-80b-a3b"), rest_bytes=50 * GIB, context_len=8192, tp=2, speculation=MTP,
               rules=R059)
    assert got.log_lines()[0] == ("Mamba Cache is allocated. max_mamba_cache_size: 48, conv_state size: 0.04GB, "
                                  "ssm_state size: 1.72GB intermediate_ssm_state_cache size: 5.17GB "
                                  "intermediate_conv_window_cache size: 0.12GB")
    # and the log reader still takes the state figures from such a line
    from kvplan.engines.sglang_log import parse

    log = parse("[2026-12-06 00:00:01 TP0] " + got.log_lines()[0] + "\n", "x.log")
    assert (log.mamba_cache_size, log.conv_state_gib, log.ssm_state_gib) == (48, 0.04, 1.72)


@pytest.mark.parametrize("args, refused", [
    # 0.5.9 MambaRadixCache.__init__ asserts page_size == 1 without the extra buffer (mem_cache/mamba_radix_cache.py)
    (("qwen3-next-80b-a3b", "--engine", "sglang@0.5.9", "-t", "page:16"), True),
    (("qwen3-next-80b-a3b", "--engine", "sglang@0.5.9"), False),  # page 1
    (("qwen3-next-80b-a3b", "--engine", "sglang", "-t", "page:16"), False),  # 0.5.23: no such assert
    # radix cache off (Kimi Linear always; Qwen3-Next under speculation): a ChunkCache, any page size
    (("kimi-linear-48b-a3b", "--engine", "sglang@0.5.9", "-t", "page:16"), False),
    (("qwen3-next-80b-a3b", "--engine", "sglang@0.5.9", "-t", "page:16", "--mtp"), False),
    (("llama-3.1-8b", "--engine", "sglang@0.5.9", "-t", "page:16"), False),  # no state: a RadixCache, any page
])
def test_sglang_059_refuses_a_paged_state_model_with_its_radix_cache_on(cli, args, refused):
    rc, out, err = cli("estimate", *args, "--kv-memory", "50GiB", "--tp", "2", "--format", "json")
    assert rc == 0, err
    notes = json.loads(out)["engine"]["notes"]
    assert any("would not start with --page-size 16" in n for n in notes) is refused
