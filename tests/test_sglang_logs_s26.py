"""One more public SGLang 0.5.x start (collected Dec 2026, session 26; docs/sglang.md's table of public logs):
Qwen3-32B on SGLang 0.5.19, one H100 80GB, in llm-d's GKE pod-snapshot guide (code-index id 70494913886: a
benchmark note that quotes the start's lines, not a log file, so no file joins tests/data/sglang_logs).

The note quotes "Load weight end. elapsed=100.34 s, type=Qwen3ForCausalLM, avail mem=17.40 GB, mem usage=61.07 GB."
verbatim and the KV pool as "9.54 GB for 39,078 tokens"; the flags: --mem-fraction-static 0.90 --context-length
8192 --enable-memory-saver --enable-weights-cpu-backup, TP 1, CUDA graphs on, a gVisor sandbox on driver 580.

Read in the 0.5.19 wheel: mem_cache/kv_cache_configurator.py KVCacheConfigurator._profile_available_bytes sizes the
pool from rest = the free memory when the pool is sized (after gc.collect) - pre_model_load_memory x (1 -
mem_fraction_static) - the multimodal reservation (none for a text model), and arg_groups/overrides.py
post_capture_kv_sizing_planned is False under --enable-memory-saver, so no post-capture resize follows. kvplan's
calibration reads the same formula from the printed figures: A, the free memory the load's line prints, and T0 =
A + the load's mem usage (the note quotes no "Load weight begin"), so rest = 0.9 A - 0.1 x usage. Each printed
figure is +-0.005 GiB ("GB" in SGLang's lines is 2**30 B).
"""

from __future__ import annotations

import json

from kvplan import load_model
from kvplan.engines.sglang import cell, pool
from kvplan.engines.sglang_rules import RULES

GIB = 2**30
# Qwen/Qwen3-32B's config.json fields (as tests/test_vllm_logs_qwen3_32b.py quotes them)
QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128, "hidden_act": "silu",
             "hidden_size": 5120, "intermediate_size": 25600, "max_position_embeddings": 40960,
             "max_window_layers": 64, "model_type": "qwen3", "num_attention_heads": 64, "num_hidden_layers": 64,
             "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 151936}
CELL = 64 * 8 * 128 * 2 * 2  # 262,144 B a token: 64 layers x 8 KV heads x 128 x K and V x 2 B
LOGGED_TOKENS = 39_078


def _config(tmp_path):
    path = tmp_path / "qwen3-32b.json"
    path.write_text(json.dumps(QWEN3_32B), encoding="utf-8")
    return str(path)


def test_v0519_qwen3_32b_h100_pool_from_the_logged_memory(tmp_path):
    spec = load_model(_config(tmp_path))
    assert cell(spec).bytes == CELL
    # the KV line's size: 39,078 x 262,144 B = 10,244,128,768 B = 9.54 GiB, the note's figure: the cell holds
    assert round(LOGGED_TOKENS * CELL / GIB, 2) == 9.54
    # rest from the printed figures: at least 0.9 x 17.395 - 0.1 x 61.075 = 9.548 GiB, at most 0.9 x 17.405 -
    # 0.1 x 61.065 = 9.558 GiB; int(9.548 GiB) // 262,144 = 39,108 and int(9.558 GiB) // 262,144 = 39,149 tokens
    low, high = (pool(spec, rest_bytes=int(rest * GIB), context_len=8192, rules=RULES["0.5.23"]).max_total_num_tokens
                 for rest in (0.9 * 17.395 - 0.1 * 61.075, 0.9 * 17.405 - 0.1 * 61.065))
    assert (low, high) == (39_108, 39_149)
    # the logged 39,078 lies 30 tokens (7,864,320 B, 0.08%) below that interval: about 8 MB less was free when the
    # pool was sized than the load's line printed (or T0 at the distributed init differed from A + usage by that
    # much), which the printed figures cannot show and no term of kvplan's SGLang pool models
    assert (low - LOGGED_TOKENS) * CELL == 7_864_320
    assert 0.07 < 100 * (low - LOGGED_TOKENS) / LOGGED_TOKENS < 0.09


def test_v0519_qwen3_32b_h100_from_the_gpu(cli, tmp_path):
    # `kvplan estimate --gpu h100-sxm --engine sglang` (0.5.23's rules; the pool formula read above is 0.5.19's too)
    # from the catalog's 79.18 GiB less the 0.37 GiB it takes as held before the load: T0 = 85,018,877,624 - 397,284,474
    # = 84,621,593,150 B; x 0.9 = 76,159,433,835 B; weights (31,205,621,760 linear + 2 x 777,912,320 embedding and
    # head + 676,864 norm parameters) x 2 B = 65,524,246,528 B; rest 10,635,187,307 B // 262,144 = 40,570 tokens,
    # +3.8% on the logged 39,078. The start's own T0 was 17.40 + 61.07 = 78.47 GiB against kvplan's 78.81: the
    # sandboxed card had 0.34 GiB less free before the load; with its own figures the row is -0.08% (above)
    code, out, err = cli("estimate", _config(tmp_path), "--gpu", "h100-sxm", "--engine", "sglang", "--context", "8192",
                         "--mem-util", "0.9", "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert engine["kv_memory_bytes"] == 76_159_433_835 - 65_524_246_528 == 10_635_187_307
    assert engine["max_total_num_tokens"] == 10_635_187_307 // CELL == 40_570
    assert 3.7 < 100 * (40_570 - LOGGED_TOKENS) / LOGGED_TOKENS < 3.9
