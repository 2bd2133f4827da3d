"""vLLM's pool for Inkling (kvplan.engines.vllm_inkling), worked by hand from vLLM's source.

Read in vLLM 0.26.0 (InklingForCausalLM's first release) to 0.34.0; the specs are the same in all of them:
- models/inkling/nvidia/sconv_swa_attn.py InklingConvState.get_kv_cache_spec: SlidingWindowSpec(block_size =
  sliding_window = sconv_kernel_size, num_kv_heads = KV heads // TP, head_size = 2 x head_dim + 2 x
  (hidden_size // KV heads) rounded up to a power of two, head_size_v = 0, bfloat16), one per decoder layer,
  registered before the layer's attention (nvidia/model.py InklingDecoderLayer builds it first);
- nvidia/attention.py InklingAttention.get_kv_cache_spec: SlidingWindowSpec(sliding_window_size) on
  local_layer_ids, else FullAttentionSpec, with cache_config.block_size (16; 64 from 0.34);
- the model class is not IsHybrid: no Mamba alignment; v1/core/kv_cache_planning.py (0.33, 0.34)
  unify_kv_cache_spec_page_size scales the smaller page's block size, _get_kv_cache_groups_uniform_page_size
  makes one group per spec and group size (the smallest layer count unless the largest is below 1.5x it);
- v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes: cdiv(min(W - 1 + in-flight tokens,
  max_model_len), block) + 1 pages a request; in flight: 2 x max_num_batched_tokens (async scheduling, 0.26+).

tests/data/configs/inkling-small-text-quoted.json (see test_vllm_own_configs.py): 42 layers, 35 local (window
512), 7 full, 8 KV heads x 128 on both, hidden 4096, kernel 4. Its conv state: raw width 2 x 128 + 2 x (4096 //
8 = 512) = 1,280 -> 2,048; page = 4 tokens x 8 heads x 2,048 x 2 B = 131,072 B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve
from kvplan.errors import UsageError

DATA = Path(__file__).parent / "data" / "configs"
GIB = 2**30
MNBT = 8192  # in flight: 2 x 8,192 = 16,384 tokens


def _small():
    return build_model(json.loads((DATA / "inkling-small-text-quoted.json").read_text()), "inkling-small")


def _pool(model, version, **kw):
    return simulate(model, kv_memory_bytes=kw.pop("mem", 40 * GIB), max_model_len=kw.pop("max_len", 131072),
                    rules=resolve(version)[0], max_num_batched_tokens=MNBT, **kw)


def test_inkling_small_034_conv_state_is_a_sliding_window_of_the_kernel():
    pool = _pool(_small(), "0.34")
    # attention page at block 64: 64 x 8 x (128 + 128) x 2 B = 262,144 B; the conv page (131,072 B) divides it:
    # the conv block is scaled 4 -> 8 tokens (unify_kv_cache_spec_page_size), its window stays 4
    conv = [s for s in pool.layer_specs if s.kind == "sliding" and s.window_tokens == 4]
    assert len(conv) == 42 and {(s.block_tokens, s.page_bytes) for s in conv} == {(8, 262_144)}
    assert not any(s.kind == "mamba" for s in pool.layer_specs)
    # specs: 42 conv, 35 sliding-512, 7 full; 42 >= 1.5 x 7, so groups of 7: 6 conv + 5 sliding + 1 full = 12
    assert len(pool.groups) == 12 and {len(g.layers) for g in pool.groups} == {7}
    # one block costs 7 layers x 262,144 B = 1,835,008 B; 40 GiB = 42,949,672,960 B
    # 42,949,672,960 // 1,835,008 = 23,405 (23,405 x 1,835,008 = 42,948,362,240)
    assert pool.bytes_per_block == 1_835_008 and pool.num_blocks == 23_405
    # a request: conv cdiv(min(3 + 16,384, 131,072), 8) + 1 = 2,049 + 1 = 2,050 pages x 6 groups = 12,300;
    # sliding cdiv(511 + 16,384 = 16,895, 64) + 1 = 264 + 1 = 265 x 5 = 1,325; full 131,072 / 64 = 2,048
    assert pool.blocks_per_request == 12_300 + 1_325 + 2_048 == 15_673
    # tokens = int(23,405 / 15,673 x 131,072) = int(195,734.8...) (23,405 x 131,072 = 3,067,740,160)
    assert pool.gpu_kv_cache_tokens == 3_067_740_160 // 15_673 == 195_734
    assert pool.fits  # 15,673 x 1,835,008 = 28.8e9 B <= 40 GiB less one block


def test_inkling_small_033_scales_the_attention_block_instead():
    pool = _pool(_small(), "0.33")
    # block 16: attention page 16 x 8 x 256 x 2 B = 65,536 B < the conv page 131,072 B: attention block 16 -> 32
    assert {(s.kind, s.block_tokens, s.page_bytes) for s in pool.layer_specs} == {
        ("sliding", 4, 131_072), ("sliding", 32, 131_072), ("full", 32, 131_072)}
    # 12 groups of 7 again: one block = 7 x 131,072 = 917,504 B; 42,949,672,960 // 917,504 = 46,811
    assert len(pool.groups) == 12 and pool.num_blocks == 46_811
    # conv cdiv(16,387, 4) + 1 = 4,098 x 6 = 24,588; sliding cdiv(16,895, 32) + 1 = 529 x 5 = 2,645; full 4,096
    assert pool.blocks_per_request == 24_588 + 2_645 + 4_096 == 31_329
    assert pool.gpu_kv_cache_tokens == 46_811 * 131_072 // 31_329


def test_inkling_small_fp8_kv_leaves_the_conv_state_in_bf16():
    pool = _pool(_small(), "0.34", kv_cache_dtype="fp8")
    # fp8 attention page 64 x 8 x 256 x 1 B = 131,072 B = the bf16 conv page: nothing is rescaled, conv block 4
    assert {(s.kind, s.block_tokens, s.page_bytes) for s in pool.layer_specs} == {
        ("sliding", 4, 131_072), ("sliding", 64, 131_072), ("full", 64, 131_072)}
    # conv cdiv(16,387, 4) + 1 = 4,098 x 6 = 24,588; sliding 265 x 5 = 1,325; full 2,048
    assert pool.blocks_per_request == 24_588 + 1_325 + 2_048 == 27_961
    assert pool.num_blocks == 40 * GIB // (7 * 131_072) == 46_811


def test_inkling_all_full_layers_and_a_short_context():
    # InklingModelConfig defaults: no local_layer_ids (all 4 layers full), head_dim 256 // 4 = 64, kernel 4
    raw = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 4,
           "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}
    pool = _pool(build_model(raw, "tiny"), "0.34", mem=GIB, max_len=8192)
    # conv width 2 x 64 + 2 x (256 // 2) = 384 -> 512; page 4 x 2 x 512 x 2 B = 8,192 B; attention page
    # 64 x 2 x 128 x 2 B = 32,768 B: conv block 4 x 4 = 16. 4 conv + 4 full layers: 2 groups of 4
    assert len(pool.groups) == 2 and pool.bytes_per_block == 4 * 32_768
    # conv cdiv(min(3 + 16,384, 8,192), 16) + 1 = 512 + 1 = 513; full 8,192 / 64 = 128
    assert pool.blocks_per_request == 513 + 128
    assert pool.num_blocks == GIB // (4 * 32_768) == 8_192


def test_inkling_tp2_halves_the_heads_of_both():
    pool = _pool(_small(), "0.34", tp=2)
    # 4 KV heads a rank: conv 4 x 4 x 2,048 x 2 = 65,536 B, attention 64 x 4 x 256 x 2 = 131,072 B: conv block 8
    assert {(s.kind, s.block_tokens, s.page_bytes) for s in pool.layer_specs} == {
        ("sliding", 8, 131_072), ("sliding", 64, 131_072), ("full", 64, 131_072)}


def test_inkling_refusals():
    raw = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 4,
           "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}
    with pytest.raises(UsageError, match="TP <= the layer's 2 KV heads"):  # InklingConvState's assert
        _pool(build_model(raw, "tiny"), "0.34", tp=4)
    with pytest.raises(UsageError, match="bfloat16"):  # InklingConvState asserts a bf16 model dtype
        _pool(build_model(raw | {"torch_dtype": "float16"}, "tiny"), "0.34")
    # draft tokens without the MTP depths: a separate draft checkpoint, which kvplan does not model for Inkling
    with pytest.raises(UsageError, match="separate draft checkpoint for tiny is not modelled"):
        _pool(build_model(raw, "tiny"), "0.34", num_speculative_tokens=1)


def test_inkling_conv_states_of_equal_pages_but_other_shapes_are_separate_specs():
    # 14 layers, local_layer_ids 0-7 with 4 KV heads of 64, full layers 2 of 64, hidden 256. Conv widths: full
    # 2 x 64 + 2 x (256 // 2) = 384 -> 512, local 2 x 64 + 2 x (256 // 4) = 256 -> 256; both 2 x 512 = 4 x 256
    # = 1,024 values a token, so equal pages, but SlidingWindowSpec compares heads and head_size: two specs
    raw = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 14,
           "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "local_layer_ids": list(range(8)),
           "swa_num_attention_heads": 4, "swa_num_key_value_heads": 4, "swa_head_dim": 64}
    pool = _pool(build_model(raw, "close"), "0.34", mem=GIB, max_len=8192)
    # pages: local attention 64 x 4 x 128 x 2 = 65,536 B (the largest); full 64 x 2 x 128 x 2 = 32,768 -> block
    # 128; convs 4 x 1,024 x 2 = 8,192 -> block 32. Buckets 8 conv-local, 6 conv-full, 8 sliding, 6 full:
    # 8 < 1.5 x 6, so groups of 8 (the 6-layer ones padded by 2): 4 groups, 8 x 65,536 = 524,288 B a block
    assert len(pool.groups) == 4 and pool.bytes_per_block == 524_288
    assert pool.num_blocks == GIB // 524_288 == 2_048
    # convs cdiv(min(3 + 16,384, 8,192), 32) + 1 = 257 each; sliding cdiv(8,192, 64) + 1 = 129; full 8,192 / 128
    assert pool.blocks_per_request == 257 + 257 + 129 + 64


def test_inkling_is_not_a_hybrid_to_the_model_runner_choice():
    # 0.26 config/vllm.py _is_default_v2_model_runner_model: a model_config.is_hybrid model (the class is IsHybrid)
    # stays on Model Runner V1; Inkling's class is not IsHybrid and InklingForConditionalGeneration is in 0.26's
    # DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES, so Inkling-Small (MoE) runs in V2 there
    from kvplan.engines.vllm_profile import model_kind, runs_model_runner_v2

    kind = model_kind(_small())
    assert kind["is_hybrid"] is False and kind["is_moe"] is True
    assert runs_model_runner_v2("0.26.0", kind) is True


def test_inkling_emitted_max_num_seqs_is_what_vllms_pool_keeps_decoding():
    # --emit vllm with --engine vllm at --context 4,096 (40 GiB, the small config): 23,405 blocks (as in
    # test_inkling_small_034_conv_state_is_a_sliding_window_of_the_kernel, the pool does not depend on the length).
    # A decoding request of 4,096 tokens holds (SlidingWindowManager.remove_skipped_blocks frees whole blocks below
    # the window): full cdiv(4,096, 64) = 64; each sliding-512 group at most cdiv(511, 64) + 1 = 9 (x 5 = 45);
    # each conv group (window 4, block 8) at most cdiv(3, 8) + 1 = 2 (x 6 = 12): 121 blocks.
    # 23,405 // 121 = 193 (121 x 193 = 23,353; 121 x 194 = 23,474 > 23,405)
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    r = CliRunner().invoke(app, ["estimate", str(DATA / "inkling-small-text-quoted.json"), "--engine", "vllm",
                                 "--kv-memory", "40GiB", "--context", "4096", "--emit", "vllm", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["engine"]["num_blocks"] == 23_405
    argv = out["emit"]["argv"]
    assert argv[argv.index("--max-num-seqs") + 1] == "193"
    assert any("121 blocks each" in n for n in out["emit"]["notes"])


def _small_mtp(mtp: dict):
    raw = json.loads((DATA / "inkling-small-text-quoted.json").read_text())
    return build_model(raw | {"mtp_config": mtp}, "inkling-small-mtp")  # top level, where vLLM reads it


def test_inkling_mtp_one_token_builds_one_full_depth():
    # mtp_config: 3 depths, depth 1 local. vLLM 0.34 nvidia/mtp.py builds min(3, num_speculative_tokens 1) = 1 depth,
    # depth 0 full: one more conv state (8 heads x 2,048, as every layer of this config) and one more full layer.
    # Buckets: 43 conv, 35 sliding, 8 full; 43 >= 1.5 x 8, so groups of 8: 6 conv + 5 sliding + 1 full = 12
    pool = _pool(_small_mtp({"num_nextn_predict_layers": 3, "local_layer_ids": [1]}), "0.34",
                 draft_layers=3, num_speculative_tokens=1)
    assert len(pool.groups) == 12 and pool.bytes_per_block == 8 * 262_144 == 2_097_152
    assert pool.num_blocks == 42_949_672_960 // 2_097_152 == 20_480
    # one module: nothing retained, so a request holds what it holds without the draft (6 x 2,050 + 5 x 265 + 2,048)
    assert not any(s.retained_tokens for s in pool.layer_specs)
    assert pool.blocks_per_request == 12_300 + 1_325 + 2_048 == 15_673
    assert pool.gpu_kv_cache_tokens == 20_480 * 131_072 // 15_673 == 171_272


def test_inkling_mtp_three_depths_keep_two_more_tokens_in_every_window():
    # num_speculative_tokens 3: 3 depths (0 full, 1 local, 2 full): 45 conv, 36 sliding, 9 full; groups of 9:
    # 5 conv + 4 sliding + 1 full = 10, 9 x 262,144 = 2,359,296 B a block; 42,949,672,960 // 2,359,296 = 18,204
    pool = _pool(_small_mtp({"num_nextn_predict_layers": 3, "local_layer_ids": [1]}), "0.34",
                 draft_layers=3, num_speculative_tokens=3)
    assert len(pool.groups) == 10 and pool.bytes_per_block == 2_359_296 and pool.num_blocks == 18_204
    # multi-module MTP: extra_retained_tokens = num_prefill_lookahead_tokens (3) - 1 = 2 on every sliding spec
    # (get_global_kv_cache_groups). Conv: cdiv(min(3 + 2 + 16,384, 131,072), 8) + 1 = 2,049 + 1 = 2,050 (x 5);
    # sliding: cdiv(511 + 2 + 16,384 = 16,897, 64) + 1 = 265 + 1 = 266 (x 4; 265 without the 2); full 2,048
    assert {s.retained_tokens for s in pool.layer_specs if s.kind == "sliding"} == {2}
    assert pool.blocks_per_request == 5 * 2_050 + 4 * 266 + 2_048 == 13_362
    assert pool.gpu_kv_cache_tokens == 18_204 * 131_072 // 13_362 == 178_568
    # a decoding request of 131,072 tokens (vllm_decode.decode_blocks): full 2,048; sliding at most
    # cdiv(511 + 2, 64) + 1 = 10 (x 4); conv cdiv(3 + 2, 8) + 1 = 2 (x 5): 2,098. 0.34 frees below the processed
    # tokens, one more kept (the token in flight): cdiv(512 + 2 + 1 + 63, 64) = 10 and cdiv(4 + 2 + 1 + 7, 8) = 2
    from kvplan.engines.vllm_decode import decode_blocks
    from kvplan.engines.vllm_rules import V0_34

    assert decode_blocks(pool, 131_072, V0_34)[0] == 2_048 + 40 + 10 == 2_098


def test_inkling_mtp_refusals():
    small = _small_mtp({"num_nextn_predict_layers": 3, "local_layer_ids": [1]})
    # SpeculatorConfig.resolve_num_speculative_tokens: 4 > n_predict 3 and 4 % 3 != 0
    with pytest.raises(UsageError, match=r"num_speculative_tokens 4 .*\(n_predict 3\): above n_predict it must be a "):
        _pool(small, "0.34", draft_layers=3, num_speculative_tokens=4)
    with pytest.raises(UsageError, match="checked it against vLLM 0.33 and 0.34"):  # not run on the planner
        _pool(small, "0.32", draft_layers=3, num_speculative_tokens=3)
    raw = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 4,
           "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}
    # a sliding depth needs the swa_* shape of a local layer, and this target has none
    tiny = build_model(raw | {"mtp_config": {"num_nextn_predict_layers": 1, "local_layer_ids": [0]}}, "tiny")
    with pytest.raises(UsageError, match="MTP depth 0 has sliding attention"):
        _pool(tiny, "0.34", draft_layers=1, num_speculative_tokens=1)
    from kvplan.engines.vllm_speculative import draft_layer_count

    with pytest.raises(UsageError, match="does not contain MTP weights"):  # no mtp_config: vLLM's ValueError
        draft_layer_count(build_model(raw, "tiny"))
    # an mtp_config kvplan cannot read: the model is planned without it (vLLM reads it only for MTP), --mtp refused
    bad = build_model(raw | {"mtp_config": {"num_nextn_predict_layers": "2"}}, "tiny")
    assert any(n.startswith("mtp_config is not an object") for n in bad.notes)
    with pytest.raises(UsageError, match="does not contain MTP weights"):
        draft_layer_count(bad)


def test_inkling_mtp_from_the_cli(tmp_path):
    # --mtp reads the depths from mtp_config (3) and --num-speculative-tokens 3 builds all three: the pool of
    # test_inkling_mtp_three_depths_keep_two_more_tokens_in_every_window (18,204 blocks); --emit vllm at 131,072
    # tokens (= max_model_len): a decoding step with 3 drafts holds 3 x 3 = 9 slots past the k = 0 step's (the
    # step in flight's 3 drafts, its own 3, 3 lookahead; async scheduling), each window keeps 9 more tokens:
    # sliding 512 + 2 + 1 + 9 = 524 over at most cdiv(524 + 63, 64) = 10 blocks (x 4), conv 4 + 2 + 1 + 9 = 16
    # over cdiv(16 + 7, 8) = 3 (x 5, 2 without the drafts), full cdiv(min(131,072 + 9, 131,072), 64) = 2,048:
    # 2,103 a request (2,098 without). 18,203 usable // 2,103 = 8 (2,103 x 9 = 18,927)
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    raw = json.loads((DATA / "inkling-small-text-quoted.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw | {"mtp_config": {"num_nextn_predict_layers": 3, "local_layer_ids": [1]}}))
    r = CliRunner().invoke(app, ["estimate", str(path), "--engine", "vllm", "--kv-memory", "40GiB", "--context",
                                 "131072", "--mtp", "--num-speculative-tokens", "3", "--emit", "vllm",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["engine"]["num_blocks"] == 18_204
    argv = out["emit"]["argv"]
    assert argv[argv.index("--max-num-seqs") + 1] == "8"
    assert any("// 2,103 blocks each (5 x 3 Inkling conv state" in n for n in out["emit"]["notes"])
    assert '"num_speculative_tokens": 3' in argv[argv.index("--speculative-config") + 1]
