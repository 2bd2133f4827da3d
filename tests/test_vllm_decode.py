"""--emit vllm's --max-num-seqs from vLLM's own pool (kvplan.engines.vllm_decode): the blocks a decoding request
holds per group, worked out by hand from vLLM's KV cache managers (v1/core/single_type_kv_cache_manager.py,
0.34.0); benchmarks/vllm_oracle_decode.py runs those managers on CPU for the per-kind rule."""

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.vllm import PageSpec
from kvplan.engines.vllm_decode import held_blocks


def emit(*args: str) -> tuple[dict, list[str], int]:
    r = CliRunner().invoke(app, ["estimate", *args, "--emit", "vllm", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    argv = out["emit"]["argv"]
    seqs = int(argv[argv.index("--max-num-seqs") + 1])
    return out, [n for n in out["emit"]["notes"] if n.startswith("warning: --max-num-seqs")], seqs


def test_dense_llama_holds_every_block():
    # Llama-3.1-8B, 0.34, 10 GiB: a block is 64 tokens x 8 KV heads x 128 x 2 (K, V) x 2 B = 262,144 B a layer,
    # x 32 layers = 8 MiB -> 10 GiB / 8 MiB = 1,280 blocks, 1,279 less the null block. A 1,000-token request
    # holds cdiv(1,000, 64) = 16 blocks: 1,279 // 16 = 79 (16 x 80 = 1,280 > 1,279). kvplan's own plan:
    # 10 GiB / (1,000 x 131,072 B) = 81.9 -> 81
    out, warning, seqs = emit("llama-3.1-8b", "--engine", "vllm", "--kv-memory", "10GiB", "--context", "1000")
    assert out["engine"]["num_blocks"] == 1_280
    assert seqs == 79
    assert len(warning) == 1 and "1,279 blocks" in warning[0] and "16 blocks each" in warning[0]
    assert "kvplan's own plan fits 81" in warning[0]
    # issue 14 item 4: warn that it caps shorter requests, and name vLLM's default
    assert "caps shorter requests" in warning[0] and "vLLM 0.34's default is 1024" in warning[0]


def test_sliding_gemma_windows_hold_whole_blocks_at_context_not_max_model_len():
    # Gemma-3-12B, 0.34, 40 GiB: 8 KV heads x 256 x 2 x 2 B = 8,192 B a token, 512 KiB a 64-token page; 40 sliding
    # + 8 full layers -> 5 + 1 groups of 8, a block 4 MiB -> 10,240 blocks (10,239 usable). A 4,096-token request
    # (--context; --max-model-len 8,192 does not change the pool): full 4,096 / 64 = 64; a sliding-1024 group
    # keeps the window + the token in flight, 1,025 tokens, over at most cdiv(1,025 + 63, 64) = 17 blocks: 64 +
    # 5 x 17 = 149 -> 10,239 // 149 = 68 (149 x 69 = 10,281). kvplan's own: 40 GiB / 576 MiB = 71.1 -> 71
    out, warning, seqs = emit("gemma-3-12b", "--engine", "vllm", "--kv-memory", "40GiB", "--context", "4096",
                              "--max-model-len", "8192")
    assert out["engine"]["num_blocks"] == 10_240
    assert seqs == 68
    assert "149 blocks each (5 x 17 sliding window 1024 + 64 full attention" in warning[0]
    assert "kvplan's own plan fits 71" in warning[0]


def test_sliding_gemma_under_vllm_0_11():
    # 0.11: block 16, 128 KiB pages, 8 layers a group -> 1 MiB a block, 40,960 blocks (40,959 usable). Freed below
    # the computed tokens (no token in flight kept): 1,024 kept over cdiv(1,024 + 15, 16) = 65 blocks; full
    # 4,096 / 16 = 256: 256 + 5 x 65 = 581 -> 40,959 // 581 = 70 (581 x 71 = 41,251)
    out, warning, seqs = emit("gemma-3-12b", "--engine", "vllm@0.11", "--kv-memory", "40GiB", "--context", "4096")
    assert out["engine"]["num_blocks"] == 40_960 and out["emit"]["version"] == "0.11"
    assert seqs == 70
    assert "581 blocks each" in warning[0] and "vLLM 0.11's default is 1024" in warning[0]


def test_mamba_hybrid_granite_holds_two_state_blocks_in_align_mode():
    # Granite-4.0-H-Tiny, 0.34, 10 GiB: Mamba-2 state 806,400 B (conv 3 x 3,328 + SSM 48 x 64 x 128, bf16); a token
    # of attention 2 x 4 x 128 x 2 = 2,048 B -> block 64 x cdiv(806,400, 64 x 2,048) = 448, page 917,504 B; 4
    # attention + 36 Mamba -> 1 + 9 groups of 4, a block 3,670,016 B -> 2,925 blocks (2,924 usable). A decoding
    # request of 8,192: full cdiv(8,192, 448) = 19; each Mamba group 2 ('align': the state and the one it was
    # copied from; the start-up's third, the prefill checkpoint, is not held in decode): 19 + 18 = 37 ->
    # 2,924 // 37 = 79 (37 x 79 = 2,923). kvplan's own plan: 111
    out, warning, seqs = emit("granite-4.0-h-tiny", "--engine", "vllm", "--kv-memory", "10GiB", "--context", "8192")
    assert out["engine"]["num_blocks"] == 2_925
    assert seqs == 79
    assert "37 blocks each (9 x 2 mamba state + 19 full attention" in warning[0]
    # 0.25: no prefix caching by default, Mamba mode 'none' (one state block); block 16 x cdiv(806,400, 32,768)
    # = 400, 3,276,800 B a block -> 3,276 blocks (3,275 usable); cdiv(8,192, 400) = 21 + 9 = 30 -> 109
    out, warning, seqs = emit("granite-4.0-h-tiny", "--engine", "vllm@0.25", "--kv-memory", "10GiB",
                              "--context", "8192")
    assert out["engine"]["num_blocks"] == 3_276
    assert seqs == 109 and "30 blocks each (9 x 1 mamba state + 21 full attention" in warning[0]


def test_mla_deepseek_v2_lite():
    # DeepSeek-V2-Lite, 0.34, 10 GiB: the latent (512 + 64) x 2 B = 1,152 B a token, FLASH_ATTN_MLA's 64-token
    # block: 73,728 B a layer x 27 = 1,990,656 B a block -> 10,737,418,240 // 1,990,656 = 5,393 blocks (5,392
    # usable); a 1,000-token request holds 16 -> 5,392 // 16 = 337. kvplan's own plan: 10 GiB / 31,104,000 = 345
    out, warning, seqs = emit("deepseek-v2-lite", "--engine", "vllm", "--kv-memory", "10GiB", "--context", "1000")
    assert out["engine"]["num_blocks"] == 5_393
    assert seqs == 337 and "16 blocks each (16 latent (MLA)" in warning[0] and "plan fits 345" in warning[0]


def test_mimo_v2_sliding_window_is_sliding_window_size_under_vllm():
    # MiMo-V2 (tests/data/configs/mimo-v2.6-flash.json: sliding_window_size 128): transformers keeps
    # sliding_window_size + 1 = 129 tokens, vLLM's mimo_v2.py passes per_layer_sliding_window = sliding_window_size
    # = 128. 0.34, 40 GiB, 8,192 tokens: 14,563 blocks (14,562 usable); the full group's block is 128 tokens:
    # 8,192 / 128 = 64 blocks; each of the 5 sliding groups (block 64) keeps W + 1 in-flight = 129 tokens, at most
    # cdiv(129 + 63, 64) = 3 blocks (with 129 it would be cdiv(130 + 63, 64) = 4): 64 + 5 x 3 = 79 a request,
    # 14,562 // 79 = 184 (with 4: 84 a request, 173)
    out, warning, seqs = emit("tests/data/configs/mimo-v2.6-flash.json", "--engine", "vllm", "--kv-memory", "40GiB",
                              "--max-model-len", "8192", "--context", "8192")
    assert out["engine"]["num_blocks"] == 14_563
    assert seqs == 184
    assert "5 x 3 sliding window 128" in warning[0]


def test_users_max_num_seqs_above_what_the_pool_keeps_decoding():
    # the user's --max-num-seqs 100 is passed on, with the 79 of test_dense_llama_holds_every_block beside it
    out, warning, seqs = emit("llama-3.1-8b", "--engine", "vllm", "--kv-memory", "10GiB", "--context", "1000",
                              "--max-num-seqs", "100")
    assert seqs == 100 and not warning
    assert any(n.startswith("--max-num-seqs 100: vLLM's pool keeps only 79 sequences of 1,000 tokens")
               for n in out["emit"]["notes"])


@pytest.mark.parametrize("spec, length, lag, held", [
    # sliding 513, block 16: 513 + 1 in flight = 514 tokens kept over cdiv(514 + 15, 16) = 34 blocks; without the
    # token in flight (before 0.26) 513 over cdiv(528, 16) = 33; a request shorter than that holds all its blocks
    (PageSpec("sliding", 16, token_bytes=1, window_tokens=513), 4_096, 1, 34),
    (PageSpec("sliding", 16, token_bytes=1, window_tokens=513), 4_096, 0, 33),
    (PageSpec("sliding", 16, token_bytes=1, window_tokens=513), 300, 1, 19),
    # chunked 8,192 (Llama 4), block 64: at 8,193 slots the processed tokens (8,191) are still in the first chunk,
    # so all 129 blocks are held; freeing on the computed ones (8,192) leaves 1: the most is then 8,192 / 64 = 128
    (PageSpec("chunked", 64, token_bytes=1, window_tokens=8_192), 32_768, 1, 129),
    (PageSpec("chunked", 64, token_bytes=1, window_tokens=8_192), 32_768, 0, 128),
    # Mamba 'align' (3 start-up pages): 1 block until the request crosses its first block, then 2; + the draft's
    (PageSpec("mamba", 448, state_bytes=1, state_pages=3), 448, 1, 1),
    (PageSpec("mamba", 448, state_bytes=1, state_pages=3), 449, 1, 2),
    (PageSpec("mamba", 448, state_bytes=1, state_pages=5, speculative_pages=2), 4_096, 1, 4),
    (PageSpec("ring", 64, state_bytes=1), 4_096, 1, 1),
])
def test_held_blocks_by_kind(spec, length, lag, held):
    assert held_blocks(spec, length, lag) == held


# Speculative decoding (vllm_decode.decode_slots): a decoding step with k drafts schedules 1 + k tokens and
# allocate_slots adds k lookahead slots (eagle, eagle3, mtp, draft_model); under async scheduling the computed
# tokens count the step in flight with its k drafts too. So an attention group holds slots up to 3k past the
# k = 0 step's (2k without async scheduling), at most max_model_len, and a window keeps 3k (2k) more tokens;
# Mamba 'align' counts the target's tokens only: 2k (k). Read in vLLM 0.34.0 v1/core/sched/scheduler.py
# (Scheduler.schedule num_new_tokens, allocate_slots(..., num_lookahead_tokens)), async_scheduler.py and
# kv_cache_manager.py allocate_slots; benchmarks/vllm_oracle_decode.py runs 0.34.0's KVCacheManager so.

@pytest.mark.parametrize("tokens", [1, 2, 3])
def test_mtp_deepseek_v3_holds_the_drafts_and_lookahead_below_max_model_len(tokens):
    # DeepSeek-V3, 0.34, 40 GiB: the latent (512 + 64) x 2 B x 64 tokens = 73,728 B a layer, 61 layers + 1 MTP
    # layer = 4,571,136 B a block -> 42,949,672,960 // 4,571,136 = 9,395 blocks (9,394 usable). A 4,096-token
    # request (--max-model-len 32,768) reaches 4,096 + 3k slots: cdiv(4,099 .. 4,105, 64) = 65 blocks ->
    # 9,394 // 65 = 144 (65 x 145 = 9,425). Without the drafts (the old count) 4,096 / 64 = 64 -> 146
    out, warning, seqs = emit("deepseek-v3", "--engine", "vllm", "--kv-memory", "40GiB", "--context", "4096",
                              "--max-model-len", "32768", "--mtp", "--num-speculative-tokens", str(tokens))
    assert out["engine"]["num_blocks"] == 9_395
    assert seqs == 144 and "65 blocks each (65 latent (MLA)" in warning[0]
    assert any(f"the {3 * tokens} slots past a request's tokens" in n for n in out["emit"]["notes"])


def test_mtp_slots_stop_at_max_model_len():
    # the same at --context = --max-model-len 4,096: allocate_slots caps the slots at max_model_len
    # (min(num_tokens + num_lookahead_tokens, max_model_len)), so the request holds 4,096 / 64 = 64 blocks; the
    # pool: 9,395 blocks as above (the block does not depend on max_model_len) -> 9,394 // 64 = 146
    out, warning, seqs = emit("deepseek-v3", "--engine", "vllm", "--kv-memory", "40GiB", "--context", "4096",
                              "--max-model-len", "4096", "--mtp", "--num-speculative-tokens", "3")
    assert out["engine"]["num_blocks"] == 9_395
    assert seqs == 146 and "64 blocks each" in warning[0]


@pytest.mark.parametrize("tokens, seqs", [(1, 58), (2, 51), (3, 46)])
def test_mtp_qwen3_next_full_group_crosses_a_block_and_states_hold_the_drafts(tokens, seqs):
    # Qwen3-Next-80B-A3B, 0.34, 20 GiB, --max-model-len 32,768: block 576 (the GDN state aligned to 64, under
    # 576 x 2,048 B), a full-attention token 2 KV heads x 256 x 2 x 2 B = 2,048 B, page 1,179,648 B; 12 full + 1
    # MTP layer, 36 GDN -> groups of 13: 13 x 1,179,648 = 15,335,424 B a block -> 21,474,836,480 // 15,335,424 =
    # 1,400 blocks (1,399 usable). --context 8,064 = 14 x 576: the full group holds cdiv(8,064 + 3k, 576) = 15
    # (14 without the drafts); each of the 3 GDN groups 2 ('align') + k draft pages. k = 1: 15 + 9 = 24 ->
    # 1,399 // 24 = 58 (old 23 -> 60); k = 2: 15 + 12 = 27 -> 51 (old 53); k = 3: 15 + 15 = 30 -> 46 (old 48)
    out, warning, got = emit("qwen3-next-80b-a3b", "--engine", "vllm", "--kv-memory", "20GiB", "--context", "8064",
                             "--max-model-len", "32768", "--mtp", "--num-speculative-tokens", str(tokens))
    assert out["engine"]["num_blocks"] == 1_400 and out["engine"]["block_size"] == 576
    assert got == seqs
    assert f"3 x {2 + tokens} mamba state + 15 full attention" in warning[0]


@pytest.mark.parametrize("tokens", [1, 2, 3])
def test_mtp_mimo_v2_windows_keep_the_drafts(tokens):
    # MiMo-V2 (as test_mimo_v2_sliding_window_is_sliding_window_size_under_vllm, 14,563 blocks: the MTP draft's
    # sliding layer takes the last sliding group's padding slot), 8,192 tokens = --max-model-len: full 8,192 /
    # 128 = 64 (the slots stop at max_model_len); each of the 5 sliding groups (block 64) keeps W + 1 in flight
    # + 3k = 132, 135, 138 tokens, at most cdiv(132 .. 138 + 63, 64) = 4 blocks (3 without the drafts):
    # 64 + 5 x 4 = 84 -> 14,562 // 84 = 173 (84 x 174 = 14,616); the old count 79 -> 184
    out, warning, seqs = emit("tests/data/configs/mimo-v2.6-flash.json", "--engine", "vllm", "--kv-memory", "40GiB",
                              "--max-model-len", "8192", "--context", "8192", "--mtp", "--num-speculative-tokens",
                              str(tokens))
    assert out["engine"]["num_blocks"] == 14_563
    assert seqs == 173 and "5 x 4 sliding window 128" in warning[0]


@pytest.mark.parametrize("release, held", [("0.27", 256), ("0.28", 257)])
def test_draft_model_decodes_synchronously_before_0_28(release, held):
    # Llama-3.1-8B with a 16-layer draft checkpoint (method draft_model), 2 drafts, 10 GiB: block 16, 10 GiB //
    # (32 x 65,536 + 16 x 32,768) = 4,096 blocks (test_vllm_speculative). 0.26-0.27 turn async scheduling off for
    # draft_model (config/vllm.py), so nothing is in flight: a 4,091-token request reaches 4,091 + 2 + 2 = 4,095
    # slots, cdiv(4,095, 16) = 256 blocks; 0.28 keeps async scheduling: 4,091 + 6 = 4,097 -> 257
    out, warning, seqs = emit("llama-3.1-8b", "--engine", f"vllm@{release}", "--kv-memory", "10GiB", "--context",
                              "4091", "--max-model-len", "16384", "--draft-model",
                              "tests/data/configs/draft-llama-1b-shape.json", "--num-speculative-tokens", "2")
    assert out["engine"]["num_blocks"] == 4_096
    assert f"// {held} blocks each" in warning[0] and seqs == 4_095 // held == 15


@pytest.mark.parametrize("spec, args, held", [
    # full, 4,096 tokens, 9 slots ahead: cdiv(4,105, 64) = 65; capped at max_model_len 4,096: 64
    (PageSpec("full", 64, token_bytes=1), (4_096, 1, 9, 6, None), 65),
    (PageSpec("full", 64, token_bytes=1), (4_096, 1, 9, 6, 4_096), 64),
    # Mamba 'align', block 576, one draft: the target's tokens reach L + 2 (not the lookahead's L + 3): at 574 they
    # stay in the first block (1 + 1 draft page), at 575 they cross it (2 + 1)
    (PageSpec("mamba", 576, state_bytes=1, state_pages=4, speculative_pages=1), (574, 1, 3, 2, 32_768), 2),
    (PageSpec("mamba", 576, state_bytes=1, state_pages=4, speculative_pages=1), (575, 1, 3, 2, 32_768), 3),
    # sliding 4 + 2 retained, block 8, k = 1 async: 4 + 2 + 1 + 3 = 10 tokens kept, over at most cdiv(10 + 7, 8) =
    # 3 blocks; synchronous (lag 0, 2 ahead): 8 kept, cdiv(15, 8) = 2
    (PageSpec("sliding", 8, token_bytes=1, window_tokens=4, retained_tokens=2), (2_000, 1, 3, 2, 3_000), 3),
    (PageSpec("sliding", 8, token_bytes=1, window_tokens=4, retained_tokens=2), (2_000, 0, 2, 1, 3_000), 2),
])
def test_held_blocks_with_speculative_slots(spec, args, held):
    assert held_blocks(spec, *args) == held


def test_decode_slots_by_release_and_method():
    # (lag, ahead, state ahead) for k = 2: async (0.26+; draft_model 0.28+): 1, 2 + 2 + 2, 2 + 2; else 0, 2 + 2, 2
    from kvplan.engines.vllm_decode import decode_slots
    from kvplan.engines.vllm_rules import V0_25, V0_27, V0_28, V0_34

    def triple(rules, method):
        s = decode_slots(rules, 2, method)
        return s.lag_tokens, s.ahead_tokens, s.state_ahead_tokens

    assert triple(V0_34, "mtp") == triple(V0_27, "eagle3") == triple(V0_28, "draft_model") == (1, 6, 4)
    assert triple(V0_27, "draft_model") == triple(V0_25, "mtp") == (0, 4, 2)
    none = decode_slots(V0_34)  # no speculative decoding: the k = 0 step
    assert (none.lag_tokens, none.ahead_tokens, none.state_ahead_tokens) == (1, 0, 0)
