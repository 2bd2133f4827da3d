"""vLLM speculative decoding in the KV pool: MTP draft layers, draft tokens, separate draft checkpoints (kvplan.engines.vllm_speculative).

The expected figures are worked out by hand from the configs and vLLM's rules
(one more layer of the target's attention spec per MTP layer, on the last
pipeline stage); benchmarks/vllm_oracle_versions.py --grid --mtp checks the
same pools against each release's own planner.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_log import parse_log
from kvplan.engines.vllm_speculative import draft_layer_count, is_mtp_method
from kvplan.errors import UsageError
from kvplan.sources import load_model

from kvplan_inprocess import kvplan

GIB = 2**30
MEM = 40 * GIB
LOGS = Path(__file__).parent / "data" / "vllm_logs"
MLA_BF16_TOKEN = (512 + 64) * 2  # DeepSeek-V3: kv_lora_rank + qk_rope_head_dim, bf16
GQA_TOKEN = 2 * 8 * 128 * 2  # GLM-4.5-Air: K and V, 8 KV heads x 128, bf16


def _pool(name, draft, **kw):
    from kvplan.engines.vllm_rules import V0_33

    kw.setdefault("rules", V0_33)  # the figures below are 0.33's 16-token blocks (0.34's default is 64)
    return simulate(load_model(name), kv_memory_bytes=kw.pop("mem", MEM), max_model_len=kw.pop("max_len", 131072),
                    draft_layers=draft, **kw)


def test_draft_layer_counts_follow_each_family_config_field():
    assert draft_layer_count(load_model("deepseek-v3")) == 1  # num_nextn_predict_layers
    assert draft_layer_count(load_model("glm-4.5-air")) == 1
    assert draft_layer_count(load_model("qwen3.5-35b-a3b")) == 1  # text_config.mtp_num_hidden_layers
    assert draft_layer_count(load_model("qwen3-next-80b-a3b")) == 1  # no field: Qwen3NextMultiTokenPredictor's 1
    for name in ("llama-3.1-8b", "kimi-k2"):  # no MTP layers (Kimi-K2: num_nextn_predict_layers 0)
        with pytest.raises(UsageError, match="has no MTP layers"):
            draft_layer_count(load_model(name))
    # a config that declares MTP layers of a family whose module kvplan has not read
    from kvplan.configs import build_model

    declared = build_model({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
                            "num_attention_heads": 8, "num_nextn_predict_layers": 1}, "llama-with-mtp")
    with pytest.raises(UsageError, match="MTP draft layers .* not modelled"):
        draft_layer_count(declared)
    assert is_mtp_method("mtp") and is_mtp_method("deepseek_mtp") and is_mtp_method("qwen3_next_mtp")
    assert not is_mtp_method("eagle3") and not is_mtp_method("ngram") and not is_mtp_method(None)


def test_deepseek_v3_mtp_adds_one_mla_layer_per_block():
    # bf16 MLA on Hopper: 16-token blocks (FlashAttention MLA, 0.18+); one uniform group of 61 (+1) layers
    page = 16 * MLA_BF16_TOKEN
    without, with_mtp = _pool("deepseek-v3", 0), _pool("deepseek-v3", 1)
    assert without.num_blocks == MEM // (61 * page) == 38_199
    assert with_mtp.num_blocks == MEM // (62 * page) == 37_583
    assert with_mtp.gpu_kv_cache_tokens == 37_583 * 16  # 131,072 is a whole number of blocks
    assert with_mtp.max_concurrency == pytest.approx(37_583 / (131072 // 16))


def test_longcat_builds_one_mtp_layer_whatever_the_config_says():
    # LongCatMultiTokenPredictor: num_mtp_layers = 1, a DeepseekV2DecoderLayer (the target's MLA);
    # 28 layers x 2 attention blocks = 56 latent caches, 57 with the draft
    page = 16 * MLA_BF16_TOKEN
    assert draft_layer_count(load_model("longcat-flash-chat")) == 1
    assert _pool("longcat-flash-chat", 1).num_blocks == MEM // (57 * page) == 40_880


def test_glm_mtp_layer_and_pipeline_parallel_last_stage():
    page = 16 * GQA_TOKEN
    assert _pool("glm-4.5-air", 1).num_blocks == MEM // (47 * page) == 13_943
    # PP 2: 46 layers split 23 + 23; the drafter lives on the last stage, 24 layers there decide
    assert _pool("glm-4.5-air", 0, pp=2).num_blocks == MEM // (23 * page)
    assert _pool("glm-4.5-air", 1, pp=2).num_blocks == MEM // (24 * page) == 27_306


def test_deepseek_v32_draft_layer_brings_its_indexer():
    # sparse MLA: 64-token blocks; bf16 latent 1,152 B/token + indexer keys 128 fp8 + 4 B scale = 132 B/token
    per_layer = 64 * (MLA_BF16_TOKEN + 132)
    assert _pool("deepseek-v3.2-exp", 0).num_blocks == MEM // (61 * per_layer) == 8_568
    assert _pool("deepseek-v3.2-exp", 1).num_blocks == MEM // (62 * per_layer) == 8_429


def test_qwen3_next_mtp_layer_regroups_the_hybrid_pool():
    # 0.33: GDN state 8,192 x 3 x 2 (conv) + 32 x 128 x 128 x 2 (SSM) = 1,097,728 B; attention 2 KV heads x 256
    # x 2 x 2 B = 2,048 B/token, so the block grows to 536 tokens, aligned to 64: 576 -> a 1,179,648 B page.
    page = 576 * 2048
    assert 8192 * 3 * 2 + 32 * 128 * 128 * 2 <= page
    # 36 GDN + 12 attention layers: groups of 12 (4 groups). With the draft, 13 attention layers: vLLM's group size
    # is the smallest count, 13 (36 >= 1.5 x 13), the GDN layers split 3 ways into 12s, the attention group 13.
    without, with_mtp = _pool("qwen3-next-80b-a3b", 0), _pool("qwen3-next-80b-a3b", 1)
    assert [len(g.layers) for g in without.groups] == [12, 12, 12, 12]
    assert [len(g.layers) for g in with_mtp.groups] == [12, 12, 12, 13]
    assert without.num_blocks == MEM // (12 * page) == 3_034
    assert with_mtp.num_blocks == MEM // (13 * page) == 2_800


def test_draft_of_a_model_without_mtp_layers_is_refused():
    with pytest.raises(UsageError, match="has no MTP layers"):
        _pool("llama-3.1-8b", 1)


def _kvplan(*args, offline: bool = False):
    if not offline:
        return kvplan(*args)  # `python -m kvplan ARGS`, in this process
    import os

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # read when huggingface_hub is imported: a process of its own
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, env=env)


def test_cli_mtp_flag_counts_the_draft_and_emits_vllm_flag():
    out = _kvplan("estimate", "deepseek-v3", "--engine", "vllm@0.33", "--kv-memory", "40GiB", "--context", "128k",
                  "--mtp", "--emit", "vllm@0.33", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["engine"]["num_blocks"] == 37_583 and data["engine"]["mtp_draft_layers"] == 1
    spec = data["emit"]["argv"][data["emit"]["argv"].index("--speculative-config") + 1]
    assert json.loads(spec) == {"method": "mtp", "num_speculative_tokens": 1}


@pytest.mark.parametrize("args", [
    ["estimate", "llama-3.1-8b", "--engine", "vllm", "--kv-memory", "10GiB", "--mtp"],
    ["estimate", "kimi-k2", "--engine", "vllm", "--kv-memory", "10GiB", "--mtp"],
    ["estimate", "deepseek-v3", "--mtp"],  # not a vLLM plan
])
def test_cli_mtp_refusals_are_one_line(args):
    out = _kvplan(*args)
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def _mtp_log(tmp_path, spec_line: str):
    # a 0.33 log: DeepSeek-V3 at TP 8, 40 GiB per GPU, 131,072 tokens. The MLA latent is replicated over TP,
    # so each rank holds 62 layers' pages with the draft: 37,583 blocks of 16 tokens (601,328 tokens, 4.59x);
    # without it 38,199 blocks (611,184 tokens, 4.66x)
    log = tmp_path / "v3_mtp.log"
    log.write_text(
        "INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.33.0\n"
        "INFO 12-01 10:00:01 [utils.py:1] non-default args: {'model': 'deepseek-ai/DeepSeek-V3', "
        f"'tensor_parallel_size': 8, 'max_model_len': 131072{spec_line}}}\n"
        "INFO 12-01 10:05:00 [gpu_worker.py:1] Available KV cache memory: 40.0 GiB\n"
        "INFO 12-01 10:05:01 [kv_cache_utils.py:1] GPU KV cache size: 601,328 tokens, Maximum concurrency for "
        "131,072 tokens per request: 4.59x\n")
    return log


def _predicted_tokens(log) -> str:
    out = _kvplan("calibrate", str(log), "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["log"]["version"] == "0.33.0"
    return next(f["predicted"] for f in data["figures"] if f["name"] == "GPU KV cache size (tokens)")


def test_calibrate_counts_the_draft_of_a_logged_mtp_server(tmp_path):
    log = _mtp_log(tmp_path, ", 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 1}")
    assert parse_log(log.read_text()).speculative_method == "mtp"
    assert _predicted_tokens(log).startswith("601,328 ")
    # the same server without the draft: kvplan predicts the 61-layer pool, and the log no longer matches
    plain = _mtp_log(tmp_path, "")
    assert _predicted_tokens(plain).startswith("611,184 ")


def test_fit_under_vllm_counts_the_draft():
    # Qwen3-Next on H200, 128K x 32: the same option (TP 1 x PP 3, bf16) holds fewer sequences with the draft
    # (13 attention pages a block on the last stage, not 12); the check command keeps --mtp. At utilization 0.9
    # (vLLM 0.34's own default, 1.0, fits it on TP 2)
    def first(*extra):
        out = _kvplan("fit", "qwen3-next-80b-a3b", "--context", "128k", "-n", "32", "--gpu", "h200",
                      "--engine", "vllm", "--kv-dtype", "auto", "--mem-util", "0.9", "--top", "1", "--format", "json",
                      *extra)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    plain, drafted = first(), first("--mtp")
    a, b = plain["options"][0], drafted["options"][0]
    assert (a["tp"], a["pp"]) == (b["tp"], b["pp"]) == (1, 3)
    assert b["engine_max_concurrency"] < a["engine_max_concurrency"]
    assert drafted["engine"]["mtp"] is True and b["estimate_command"].endswith("--engine vllm --mtp")
    out = _kvplan("fit", "qwen3-next-80b-a3b", "--context", "128k", "--mtp")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


# Four public start-ups of Qwen3.6 with MTP (tests/data/vllm_logs/, each file's header names its source).
# Qwen3.6-35B-A3B is run with the bundled Qwen3.5-35B-A3B config: the logs themselves confirm the shape that
# matters (the block sizes below and "Add 3 padding layers, may waste at most 10.00%": 30 GDN layers grouped
# by 11 attention layers, i.e. 10 of the target's + the draft's).
GDN_35B_CONV_DIM = 2 * 16 * 128 + 32 * 128  # linear key heads x key dim x 2 + value heads x value dim
GDN_35B_SSM_BYTES = 32 * 128 * 128 * 4  # float32 (the config's mamba_ssm_dtype)


def _gdn_35b_state(draft_tokens: int) -> int:
    return GDN_35B_CONV_DIM * (3 + draft_tokens) * 2 + GDN_35B_SSM_BYTES  # conv rows: kernel - 1 + draft tokens


@pytest.mark.parametrize("log, model, tokens, block", [
    # fp8_e4m3, 2 draft tokens: 2,179,072 B of state = 2,128 tokens x 1,024 B (2 KV heads x 256 x 2, fp8)
    ("v0202_qwen36_35b_a3b_nvfp4_mtp2_spark.log", "qwen3.5-35b-a3b", 5_747_892, 2128),
    ("v0221rc_qwen36_35b_a3b_nvfp4_mtp2_spark.log", "qwen3.5-35b-a3b", 6_455_296, 2128),
    # KV dtype auto (bf16), 3 draft tokens: 2,195,456 B = 1,072 tokens x 2,048 B
    ("v0220_qwen36_35b_a3b_prismaquant_mtp3.log", "qwen3.5-35b-a3b", 3_131_683, 1072),
    # Qwen3.6-27B (bundled), fp8, 1 draft token: conv 10,240 x 4 x 2 + SSM 48 x 128 x 128 x 4 = 3,227,648 B,
    # / 2,048 B (4 KV heads x 256 x 2) = 1,576 tokens, aligned to 16: 1,584 ("Padding mamba page size by 0.51%")
    ("v0200_qwen36_27b_nvfp4_mtp1_eager.log", "qwen3.6-27b", 36_432, 1584),
])
def test_public_qwen36_mtp_logs_are_reproduced(log, model, tokens, block):
    from kvplan.engines.vllm_calibrate import calibrate
    from kvplan.engines.vllm_log import read_log

    cal = calibrate(read_log(str(LOGS / log)), model=model)
    assert cal.problem is None
    assert f"Setting attention block size to {block} tokens" in (LOGS / log).read_text()
    assert cal.pool.block_size == block
    figure = next(f for f in cal.figures if f.name == "GPU KV cache size (tokens)")
    assert figure.within_rounding and cal.pool.gpu_kv_cache_tokens == tokens
    conc = next(f for f in cal.figures if f.name.startswith("Maximum concurrency"))
    assert conc.within_rounding


def test_block_sizes_follow_the_draft_tokens():
    assert _gdn_35b_state(2) == 2128 * 1024 and _gdn_35b_state(3) == 1072 * 2048
    assert 1576 * 2048 == GDN_27B_STATE_1 and 1584 % 16 == 0


GDN_27B_STATE_1 = (2 * 16 * 128 + 48 * 128) * (3 + 1) * 2 + 48 * 128 * 128 * 4


def test_v0202_log_by_hand():
    # 0.20.2, fp8_e4m3, 262,144 tokens, 2 draft tokens, prefix caching ('align'): groups of 11 layers (3 GDN
    # groups of 10 + 1 padding, 1 attention group of 11), a block 11 pages of 2,179,072 B. 66.58 GiB printed:
    # 2,982 blocks. A request: cdiv(262,144, 2,128) = 124 attention blocks + 3 GDN groups x (2 + 2) state pages.
    bytes_per_block = 11 * _gdn_35b_state(2)
    blocks = int(66.58 * GIB) // bytes_per_block
    per_request = -(-262_144 // 2128) + 3 * (2 + 2)
    assert (blocks, per_request) == (2982, 136)
    assert int(blocks / per_request * 262_144) == 5_747_892  # the logged figure
    assert f"{blocks / per_request:.2f}" == "21.93"
    cal_pool = _log_pool("v0202_qwen36_35b_a3b_nvfp4_mtp2_spark.log", "qwen3.5-35b-a3b")
    assert cal_pool.num_blocks == blocks and cal_pool.blocks_per_request == per_request
    assert [len(g.layers) for g in cal_pool.groups] == [10, 10, 10, 11]


def test_without_the_draft_tokens_the_logs_do_not_reproduce():
    # the same v0.22.0 server planned as if the draft added no conv rows and no state pages: 1,056-token blocks
    from kvplan.engines.vllm_rules import resolve

    rules = resolve("0.22.0")[0]
    plain = simulate(load_model("qwen3.5-35b-a3b"), kv_memory_bytes=int(71.15 * GIB), max_model_len=200_000,
                     rules=rules, prefix_caching=True, max_num_batched_tokens=32768, draft_layers=1)
    assert plain.block_size == 1056 and plain.gpu_kv_cache_tokens != 3_131_683


def _log_pool(log, model):
    from kvplan.engines.vllm_calibrate import calibrate
    from kvplan.engines.vllm_log import read_log

    return calibrate(read_log(str(LOGS / log)), model=model).pool


def test_prefix_caching_probe_names_the_setting_a_log_leaves_out(tmp_path):
    # the v0.22.0 log without its non-default args line: kvplan plans 0.22's default (prefix caching off for
    # hybrids) and says that with it on the logged figure is reproduced
    from kvplan.engines.vllm_calibrate import calibrate
    from kvplan.engines.vllm_log import read_log

    text = (LOGS / "v0220_qwen36_35b_a3b_prismaquant_mtp3.log").read_text().splitlines()
    stripped = tmp_path / "no_args.log"
    stripped.write_text("\n".join(line for line in text if "non-default args" not in line and
                                  "Mamba cache mode" not in line and "enable_prefix_caching" not in line))
    cal = calibrate(read_log(str(stripped)), model="qwen3.5-35b-a3b")
    figure = next(f for f in cal.figures if f.name == "GPU KV cache size (tokens)")
    assert not figure.within_rounding
    assert "with prefix caching on" in figure.explanation and "3,131,683" in figure.explanation


def test_calibrate_what_if_without_speculative_decoding():
    # the v0.20.2 server (5,747,892 tokens with MTP and 2 draft tokens) without speculative decoding, on the same
    # memory (the reproduction's 2,982 blocks of 11 x 2,179,072 B, plus half a block): the state is 2,146,304 B,
    # a 2,096-token block, 10 layers a group (21,463,040 B a block): 3,330 blocks, a request 126 + 3 x 2 pages
    kv = 2982 * 11 * _gdn_35b_state(2) + 11 * _gdn_35b_state(2) // 2
    assert _gdn_35b_state(0) == 2096 * 1024
    blocks, per_request = kv // (10 * _gdn_35b_state(0)), -(-262_144 // 2096) + 3 * 2
    expected = int(blocks / per_request * 262_144)
    assert (blocks, per_request, expected) == (3330, 132, 6_613_178)
    out = _kvplan("calibrate", str(LOGS / "v0202_qwen36_35b_a3b_nvfp4_mtp2_spark.log"), "--model", "qwen3.5-35b-a3b",
                  "--num-speculative-tokens", "0", "--format", "json")
    assert out.returncode == 0, out.stderr
    what = json.loads(out.stdout)["what_if"]
    assert what["gpu_kv_cache_tokens"] == expected and what["mtp_draft_layers"] == 0


def test_calibrate_prefix_caching_setting(tmp_path):
    text = (LOGS / "v0220_qwen36_35b_a3b_prismaquant_mtp3.log").read_text().splitlines()
    stripped = tmp_path / "no_args.log"
    stripped.write_text("\n".join(line for line in text if "non-default args" not in line and
                                  "Mamba cache mode" not in line and "enable_prefix_caching" not in line))
    out = _kvplan("calibrate", str(stripped), "--model", "qwen3.5-35b-a3b", "--prefix-caching", "on", "--format",
                  "json")
    assert out.returncode == 0, out.stderr
    figure = next(f for f in json.loads(out.stdout)["figures"] if f["name"] == "GPU KV cache size (tokens)")
    assert figure["within_rounding"] and figure["predicted"].startswith("3,131,683 ")
    for args in (["--prefix-caching", "off"], ["--prefix-caching", "maybe"], ["--num-speculative-tokens", "-1"]):
        out = _kvplan("calibrate", str(LOGS / "v0220_qwen36_35b_a3b_prismaquant_mtp3.log"), "--model",
                      "qwen3.5-35b-a3b", *args)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr


# A separate draft checkpoint (EAGLE / EAGLE-3 head, a small draft LLM): its own layers join the pool.
CONFIGS = Path(__file__).parent / "data" / "configs"
EAGLE3 = str(CONFIGS / "eagle3-head-llama-8b-shape.json")  # 1 layer, 8 KV heads of 128 (a test input)
DRAFT_1B = str(CONFIGS / "draft-llama-1b-shape.json")  # 16 layers, 8 KV heads of 64 (a test input)


def test_eagle3_head_adds_its_layer():
    # Llama-3.1-8B: 32 layers x 16 tokens x 8 KV heads x (128 + 128) x 2 B = 65,536 B pages; the head's one layer
    # has the same shape: 33 pages a block. 10 GiB: 4,964 blocks (4,964.8), 79,424 tokens at 8K, 9.70x
    draft = load_model(EAGLE3)
    for release in ("0.11", "0.20", "0.33"):
        from kvplan.engines.vllm_rules import resolve

        pool = _pool("llama-3.1-8b", 0, mem=10 * GIB, max_len=8192, draft_model=draft, rules=resolve(release)[0])
        assert pool.num_blocks == 10 * GIB // (33 * 65_536) == 4964
        assert pool.gpu_kv_cache_tokens == 4964 * 16 and f"{pool.max_concurrency:.2f}" == "9.70"


def test_small_draft_llm_with_other_heads_shares_the_block():
    # a 16-layer draft whose pages are half the target's (head dim 64): one group of every full-attention layer,
    # a block = 32 x 65,536 + 16 x 32,768 = 2,621,440 B (vLLM's UniformTypeKVCacheSpecs): 4,096 blocks in 10 GiB.
    # The draft_model method exists from 0.15.0 (v1/spec_decode/draft_model.py).
    from kvplan.engines.vllm_rules import resolve

    draft = load_model(DRAFT_1B)
    pool = _pool("llama-3.1-8b", 0, mem=10 * GIB, max_len=8192, draft_model=draft)
    assert pool.num_blocks == 10 * GIB // (32 * 65_536 + 16 * 32_768) == 4096
    with pytest.raises(UsageError, match="0.15.0"):
        _pool("llama-3.1-8b", 0, mem=10 * GIB, max_len=8192, draft_model=draft, rules=resolve("0.14")[0])


def test_cli_draft_model_emits_its_method_and_folder():
    out = _kvplan("estimate", "llama-3.1-8b", "--engine", "vllm@0.33", "--kv-memory", "10GiB", "--context", "8k",
                  "--draft-model", EAGLE3, "--num-speculative-tokens", "3", "--emit", "vllm@0.33", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["engine"]["num_blocks"] == 4964 and data["engine"]["draft_model_layers"] == 1
    argv = data["emit"]["argv"]
    assert json.loads(argv[argv.index("--speculative-config") + 1]) == {
        "method": "eagle3", "model": str(CONFIGS), "num_speculative_tokens": 3}


@pytest.mark.parametrize("args", [
    ["--draft-model", EAGLE3],  # vLLM requires num_speculative_tokens for a draft checkpoint
    ["--draft-model", EAGLE3, "--num-speculative-tokens", "2", "--mtp"],
    ["--draft-model", "no/such-draft", "--num-speculative-tokens", "2"],
    ["--draft-model", DRAFT_1B, "--num-speculative-tokens", "2", "--engine", "vllm@0.14"],
])
def test_cli_draft_model_refusals_are_one_line(args):
    engine = [] if "--engine" in args else ["--engine", "vllm"]
    out = _kvplan("estimate", "llama-3.1-8b", *engine, "--kv-memory", "10GiB", *args)
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_calibrate_puts_the_logged_draft_in_the_pool(tmp_path):
    # a 0.31 log of Llama-3.1-8B with an EAGLE-3 head, 10 GiB: 4,964 blocks of 33 pages (worked out above)
    log = tmp_path / "eagle.log"
    log.write_text(
        "INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.31.0\n"
        "INFO 12-01 10:00:01 [utils.py:1] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'max_model_len': 8192, 'speculative_config': {'method': 'eagle3', 'model': "
        "'yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3}}\n"
        "INFO 12-01 10:05:00 [gpu_worker.py:1] Available KV cache memory: 10.0 GiB\n"
        "INFO 12-01 10:05:01 [kv_cache_utils.py:1] GPU KV cache size: 79,424 tokens, Maximum concurrency for "
        "8,192 tokens per request: 9.70x\n")
    parsed = parse_log(log.read_text())
    assert (parsed.speculative_method, parsed.speculative_model, parsed.speculative_tokens) == (
        "eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3)

    def tokens(*extra):
        out = _kvplan("calibrate", str(log), "--format", "json", *extra, offline=True)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        return next(f for f in data["figures"] if f["name"] == "GPU KV cache size (tokens)"), data["notes"]

    with_draft, _ = tokens("--draft-model", EAGLE3)
    assert with_draft["within_rounding"] and with_draft["predicted"].startswith("79,424 ")
    unread, notes = tokens()  # offline, the Hub id cannot be read: the pool lacks the draft, and says so
    assert not unread["within_rounding"] and any("--draft-model" in n for n in notes)


def test_conv_kernel_of_one_still_widens_by_the_draft_tokens():
    # kernel 1 keeps no conv rows; with one draft token vLLM's GDN conv state has 0 + 1 rows of 10,240 channels:
    # 10,240 x 1 x 2 B + the float32 SSM 48 x 128 x 128 x 4 = 3,166,208 B of state per layer
    model = load_model("qwen3.6-27b", overrides=["linear_conv_kernel_dim=1"])
    pool = simulate(model, kv_memory_bytes=20 * GIB, max_model_len=32768, draft_layers=1, num_speculative_tokens=1)
    assert {s.state_bytes for s in pool.layer_specs if s.kind == "mamba"} == {10_240 * 2 + 48 * 128 * 128 * 4}


def test_an_explicit_zero_mtp_layer_count_means_no_draft():
    with pytest.raises(UsageError, match="no MTP layers"):
        draft_layer_count(load_model("qwen3.6-27b", overrides=["mtp_num_hidden_layers=0"]))


def test_fit_refuses_mtp_for_a_model_without_a_modelled_draft_up_front():
    out = _kvplan("fit", "llama-3.1-8b", "--context", "32k", "-n", "8", "--gpu", "h100", "--engine", "vllm", "--mtp")
    assert out.returncode == 2 and "has no MTP layers" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_min_concurrency_is_checked_on_vllms_pool_too():
    # Qwen3.5-35B-A3B under vLLM 0.20 in 20 GiB at 32K: the plan alone holds more than 20 sequences, vLLM's pool
    # with the MTP draft and 5 draft tokens fewer: the budget fails on vLLM's figure
    args = ["estimate", "qwen3.5-35b-a3b", "--engine", "vllm@0.20", "--kv-memory", "20GiB", "--context", "32k",
            "--min-concurrency", "20"]
    assert _kvplan(*args).returncode == 0
    out = _kvplan(*args, "--mtp", "--num-speculative-tokens", "5")
    assert out.returncode == 1 and "vLLM's pool holds" in out.stderr


def test_calibrate_refuses_an_implausible_logged_token_count(tmp_path):
    text = (LOGS / "v0200_qwen36_27b_nvfp4_mtp1_eager.log").read_text()
    bad = tmp_path / "huge.log"
    bad.write_text(text.replace("num_spec_tokens=1", "num_spec_tokens=999999")
                   .replace("'num_speculative_tokens': 1", "'num_speculative_tokens': 999999"))
    out = _kvplan("calibrate", str(bad))
    assert out.returncode in (1, 2) and "999,999" in out.stderr and "Traceback" not in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.startswith("kvplan: error")]) == 1


def test_calibrate_a_draft_that_names_the_target_itself(tmp_path):
    # a garbled log: method eagle3 but the draft is the target's own checkpoint: not a separate draft, a note
    text = (LOGS / "v0200_qwen36_27b_nvfp4_mtp1_eager.log").read_text()
    odd = tmp_path / "odd.log"
    odd.write_text(text.replace("method='mtp'", "method='eagle3'").replace("'method': 'mtp'", "'method': 'eagle3'"))
    out = _kvplan("calibrate", str(odd), "--format", "json", offline=True)
    assert out.returncode == 0, out.stderr
    assert any("names the target checkpoint itself" in n for n in json.loads(out.stdout)["notes"])


def test_calibrate_tp_must_agree_with_a_printed_tp():
    out = _kvplan("calibrate", str(LOGS / "v0200_qwen36_27b_nvfp4_mtp1_eager.log"), "--tp", "2")
    assert out.returncode == 2 and "tensor_parallel_size 1" in out.stderr


def test_calibrate_says_when_a_file_holds_two_start_ups(tmp_path):
    two = tmp_path / "two.log"
    two.write_text((LOGS / "v0200_qwen36_27b_nvfp4_mtp1_eager.log").read_text()
                   + (LOGS / "v0220_qwen36_35b_a3b_prismaquant_mtp3.log").read_text())
    out = _kvplan("calibrate", str(two), "--format", "json")
    assert any("2 engine start-ups" in n for n in json.loads(out.stdout)["notes"]), out.stderr


def test_a_window_on_mla_layers_is_said_to_have_no_vllm_form():
    pool = simulate(load_model("deepseek-v3"), kv_memory_bytes=20 * GIB, max_model_len=32768)
    from kvplan.techniques.registry import build_all
    from kvplan.planner import compose

    windowed = compose(load_model("deepseek-v3"), build_all(["window:4096"]))[-1].model
    same = simulate(windowed, kv_memory_bytes=20 * GIB, max_model_len=32768)
    assert same.num_blocks == pool.num_blocks  # vLLM sizes the latent in full either way
    assert any("no vLLM form" in n for n in same.notes) and not any("no vLLM form" in n for n in pool.notes)


def test_dflash_drafts_are_refused(tmp_path):
    # DFlash / DSpark drafts have their own layer kinds (qwen3_dflash.py: sliding, non-causal): not modelled
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 4096,
                                  "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                                  "num_hidden_layers": 5, "vocab_size": 151936, "intermediate_size": 12288}))
    out = _kvplan("estimate", "qwen3-8b", "--engine", "vllm", "--kv-memory", "10GiB", "--draft-model", str(config),
                  "--num-speculative-tokens", "8")
    assert out.returncode == 2 and "DFlash" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_0_34_block_drafters_are_refused_by_name():
    # vLLM 0.34.0's new DSpark / DFlash2 drafters: each refused with what was read of its layout
    from dataclasses import replace
    from types import SimpleNamespace

    from kvplan.engines.vllm_speculative import with_speculation

    target = load_model("llama-3.1-8b")
    cases = {"DSparkMiniMaxDraftModel": "minimax_m3/common/dspark.py",
             "MistralLarge4DSparkModel": "mistral_large4/nvidia/dspark.py",
             "DFlash2RicursiveDraftModel": "ricursive_dflash2.py"}
    for arch, where in cases.items():
        draft = replace(load_model(DRAFT_1B), architecture=arch)
        with pytest.raises(UsageError) as err:
            with_speculation(target, SimpleNamespace(version="0.34"), draft=draft, tokens=2)
        assert where in err.value.message and arch in err.value.message


def test_peagle_drafts_are_refused_from_0_34(tmp_path):
    # 0.34.0 dropped P-EAGLE: registry.py lists no PEagle* drafts and speculators' update_peagle raises
    from dataclasses import replace
    from types import SimpleNamespace

    from kvplan.engines.vllm_speculative import with_speculation

    target = load_model("llama-3.1-8b")
    draft = replace(load_model(EAGLE3), architecture="PeagleLlamaForCausalLM")
    with pytest.raises(UsageError) as err:
        with_speculation(target, SimpleNamespace(version="0.34"), draft=draft, tokens=2)
    assert "P-EAGLE" in err.value.message
    # 0.33 still serves it (llama_eagle3.py registers its layers like an EAGLE-3 head's)
    model, _ = with_speculation(target, SimpleNamespace(version="0.33"), draft=draft, tokens=2)
    assert model.num_layers == target.num_layers + draft.num_layers


def test_fit_with_a_draft_checkpoint_matches_estimate():
    # each option fit keeps was re-planned through estimate's path (its verification): the draft must be in both
    # vLLM 0.33: one profile figure for both paths. TP 2 and PP 2 on two H100 hold about 31 requests of 32k each
    # (vLLM's concurrency at TP 2 is 30.99 since V2's bitmasks are counted, floored to 30, so the plain fit keeps
    # PP 2 first and the drafted one TP 2): the draft is compared with the plain option of the same split
    out = _kvplan("fit", "llama-3.1-8b", "--context", "32k", "-n", "16", "--gpu", "h100", "--engine", "vllm@0.33",
                  "--draft-model", EAGLE3, "--num-speculative-tokens", "3", "--top", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    option = data["options"][0]
    assert data["engine"]["draft_model"] == EAGLE3 and option["estimate_command"].endswith(
        f"--draft-model {EAGLE3} --num-speculative-tokens 3")
    plains = json.loads(_kvplan("fit", "llama-3.1-8b", "--context", "32k", "-n", "16", "--gpu", "h100", "--engine",
                                "vllm@0.33", "--top", "2", "--format", "json").stdout)["options"]
    plain = next(p for p in plains if (p["gpus"], p["tp"], p["pp"]) == (option["gpus"], option["tp"], option["pp"]))
    # one more layer of 32 a block: the draft costs the pool 1/33 of its blocks (the GPU memory is the same)
    assert option["engine_max_concurrency"] < plain["engine_max_concurrency"] * 0.98


def test_calibrate_says_a_draft_at_its_own_tp_is_not_modelled(tmp_path):
    # vLLM allows draft_tensor_parallel_size 1 under a TP 2 target (config/speculative.py _verify_and_get_draft_tp):
    # each rank then holds the draft's heads whole; kvplan shards them by the target's TP and says so
    log = tmp_path / "eagle_tp2.log"
    log.write_text(
        "INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.31.0\n"
        "INFO 12-01 10:00:01 [utils.py:1] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'tensor_parallel_size': 2, 'max_model_len': 8192, 'speculative_config': {'method': 'eagle3', 'model': "
        "'yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3, 'draft_tensor_parallel_size': 1}}\n"
        "INFO 12-01 10:05:00 [gpu_worker.py:1] Available KV cache memory: 10.0 GiB\n"
        "INFO 12-01 10:05:01 [kv_cache_utils.py:1] GPU KV cache size: 158,848 tokens, Maximum concurrency for "
        "8,192 tokens per request: 19.39x\n")
    out = _kvplan("calibrate", str(log), "--draft-model", EAGLE3, "--format", "json", offline=True)
    assert out.returncode == 0, out.stderr
    assert any("draft_tensor_parallel_size 1" in n for n in json.loads(out.stdout)["notes"])


def test_cli_sglang_names_the_draft_checkpoint_s_folder_not_the_file_stem(cli):
    # SGLang's --speculative-draft-model-path loads a checkpoint: a folder or a Hub id, as vLLM's "model" above
    rc, out, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "10GiB", "--context", "8k",
                       "--draft-model", EAGLE3, "--num-speculative-tokens", "3", "--emit", "sglang", "--format", "json")
    assert rc == 0, err
    emit = json.loads(out)["emit"]
    argv = emit["argv"]
    assert argv[argv.index("--speculative-draft-model-path") + 1] == str(CONFIGS)
    assert any("the draft checkpoint's folder" in n for n in emit["notes"])


# MiMo-7B and ERNIE-4.5 MoE (vLLM mimo_mtp.py MiMoMultiTokenPredictor, ernie_mtp.py ErnieMultiTokenPredictor, read in
# 0.11.0 and 0.34.0): num_nextn_predict_layers decoder layers built from the target's config, so each draft layer is
# one more full-attention layer of the target's K/V. 0.34's default block is 64 tokens. vLLM 0.34's own planner and
# its FullAttentionSpec (benchmarks/vllm_oracle_mtp_families.py, on CPU) give the same blocks and pages.
CONFIGS = Path(__file__).parent / "data" / "configs"


def _config_pool(raw, name, draft, rules_name="0.34", mem=MEM):
    from kvplan.configs import build_model
    from kvplan.engines.vllm_rules import resolve

    return simulate(build_model(raw, name), rules=resolve(rules_name)[0], kv_memory_bytes=mem, max_model_len=8192,
                    draft_layers=draft)


def test_mimo_7b_mtp_layer_is_one_more_qwen2_attention_layer():
    raw = json.loads((CONFIGS / "mimo-7b.json").read_text())
    model_draft = draft_layer_count(load_model(str(CONFIGS / "mimo-7b.json")))
    assert model_draft == 1  # num_nextn_predict_layers
    # Qwen2Attention: 8 KV heads x (4,096 / 32 =) 128, K and V, bf16 = 4,096 B/token; 64-token page 262,144 B
    page = 64 * 2 * 8 * 128 * 2
    assert _config_pool(raw, "mimo-7b", 0).num_blocks == 42_949_672_960 // (36 * page) == 4_551
    drafted = _config_pool(raw, "mimo-7b", 1)
    assert drafted.num_blocks == 42_949_672_960 // (37 * page) == 4_428
    assert drafted.gpu_kv_cache_tokens == 4_428 * 64 == 283_392
    # vLLM 0.33: 16-token blocks of 65,536 B, 40 GiB // (37 x 65,536) = 17,712, the same 283,392 tokens
    assert _config_pool(raw, "mimo-7b", 1, "0.33").num_blocks == 17_712


def test_ernie_45_moe_mtp_layer_under_either_field_name():
    from kvplan.configs import build_model

    raw = json.loads((CONFIGS / "ernie-4.5-21b-a3b-quoted.json").read_text())
    # the quoted config names no MTP layers; ERNIE-4.5's checkpoints write num_nextn_predict_layers, transformers 5's
    # Ernie4_5_MoeConfig num_mtp_layers (its attribute_map reads one as the other)
    for field in ("num_nextn_predict_layers", "num_mtp_layers"):
        assert draft_layer_count(build_model({**raw, field: 1}, "ernie-21b")) == 1
    with pytest.raises(UsageError, match="has no MTP layers"):
        draft_layer_count(build_model(raw, "ernie-21b"))
    # LlamaAttention: 4 KV heads x (head_dim null: 2,560 / 20 =) 128, K and V, bf16 = 2,048 B/token; 28 + 1 layers
    page = 64 * 2 * 4 * 128 * 2
    drafted = _config_pool({**raw, "num_mtp_layers": 1}, "ernie-21b", 1)
    assert drafted.num_blocks == 42_949_672_960 // (29 * page) == 11_299
    assert drafted.gpu_kv_cache_tokens == 11_299 * 64 == 723_136


def test_mtp_refusals_of_families_not_modelled_say_why(tmp_path):
    from kvplan.configs import build_model

    # Step-3.5: layer_types names the 2 decoder layers only and no mtp_layer_types names the MTP layer, so vLLM
    # 0.34 step3p5.py _get_layer_type ([*layer_types, *mtp_layer_types][2]) would index past the list
    step = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 1024,
            "num_hidden_layers": 2, "num_attention_heads": 8, "num_attention_groups": 2, "head_dim": 128,
            "num_nextn_predict_layers": 1, "sliding_window": 512,
            "layer_types": ["full_attention", "sliding_attention"]}
    with pytest.raises(UsageError, match="would index past the list"):
        draft_layer_count(build_model(step, "step-3.5-mtp"))
    dense = json.loads((CONFIGS / "ernie-4.5-0.3b.json").read_text())
    with pytest.raises(UsageError, match="only ernie4_5_moe"):
        draft_layer_count(build_model({**dense, "num_nextn_predict_layers": 1}, "ernie-dense-mtp"))


def test_cli_mimo_mtp_json():
    out = _kvplan("estimate", str(CONFIGS / "mimo-7b.json"), "--engine", "vllm", "--kv-memory", "40GiB",
                  "--max-model-len", "8192", "--mtp", "--format", "json")
    assert out.returncode == 0, out.stderr
    engine = json.loads(out.stdout)["engine"]
    assert engine["num_blocks"] == 4_428 and engine["mtp_draft_layers"] == 1  # as worked above
    assert engine["gpu_kv_cache_tokens"] == 283_392


# Nemotron-H (vLLM 0.17.0-0.34.0 nemotron_h_mtp.py NemotronHMultiTokenPredictor: one step asserted, a
# NemotronHAttentionDecoderLayer per '*' of mtp_hybrid_override_pattern, 'E' a MoE layer; mamba_mixer2.py
# MambaMixer2.get_state_shape and nemotron_h.py get_mamba_state_shape_from_config pass num_spec =
# num_speculative_tokens to mamba2_state_shape: conv rows conv_kernel - 1 + num_spec). Checked against vLLM 0.33's
# and 0.34's own planner and mamba2_state_shape on CPU (benchmarks/vllm_oracle_mtp_families.py: auto/fp8 x TP 1/2/4/8
# x 0/1/3 draft tokens x 10/40 GiB x 8K/128K, 96 of 96 agree on each).
def _nemotron(**extra):
    from kvplan.configs import build_model

    raw = json.loads((CONFIGS / "nemotron-h-8b-tf5.json").read_text())  # mtp_layers_block_type [full_attention, moe]
    return build_model({**raw, "num_nextn_predict_layers": 1, **extra}, "nemotron-h-mtp")


def _nemotron_pool(draft, tokens, rules_name="0.34"):
    from kvplan.engines.vllm_rules import resolve

    return simulate(_nemotron(), rules=resolve(rules_name)[0], kv_memory_bytes=MEM, max_model_len=8192,
                    draft_layers=draft, num_speculative_tokens=tokens)


def test_nemotron_h_mtp_adds_an_attention_layer_and_widens_the_conv_state():
    assert draft_layer_count(_nemotron()) == 1  # one '*' in ['full_attention', 'moe']
    # Mamba-2 state: conv (4 - 1 + 1 draft token) rows x (8,192 + 2 x 8 x 128 =) 10,240 channels x 2 B = 81,920;
    # SSM 128 heads x 64 x 128 x 4 B (float32) = 4,194,304: 4,276,224 B. Attention 8 x 128 x 2 x 2 B = 4,096 B/token,
    # so the block grows to a multiple of 64 holding it: ceil(4,276,224 / 4,096) = 1,044 -> 1,088 tokens, 4,456,448 B
    state = 4 * 10_240 * 2 + 128 * 64 * 128 * 4
    assert state == 4_276_224 and 1024 * 4096 < state <= 1088 * 4096
    # 24 Mamba + 5 attention layers (4 + the draft's): groups of 5, a block costs 5 pages
    pool = _nemotron_pool(1, 1)
    assert [len(g.layers) for g in pool.groups] == [5, 5, 5, 5, 4, 5]
    assert pool.num_blocks == MEM // (5 * 1088 * 4096) == 1_927
    # a request at 8K: 8 attention blocks, and per Mamba group 2 (align) + 1 draft token + 1 checkpoint = 4 pages:
    # 8 + 5 x 4 = 28 blocks; 1,927 / 28 = 68.82x, 1,927 x 8,192 // 28 = 563,785 tokens
    assert pool.gpu_kv_cache_tokens == 1_927 * 8192 // 28 == 563_785
    # without speculative decoding: 4 attention layers, groups of 4, conv 3 rows (4,255,744 B, the same 1,088 block)
    assert _nemotron_pool(0, 0).num_blocks == MEM // (4 * 1088 * 4096) == 2_409


def test_nemotron_h_mtp_refusals():
    with pytest.raises(UsageError, match="NemotronHMTPModel from 0.17.0"):  # registry.py, 0.16.0 lacks it
        _nemotron_pool(1, 1, "0.16")
    with pytest.raises(UsageError, match="asserts 1"):
        draft_layer_count(_nemotron(num_nextn_predict_layers=2))
    with pytest.raises(UsageError, match="not one or more attention layers"):  # 'M': NotImplementedError in vLLM
        draft_layer_count(_nemotron(mtp_layers_block_type=["mamba", "moe"]))
    # the older pattern field, as NVIDIA's configs write it, when no list is given
    raw = {"mtp_hybrid_override_pattern": "*E*E", "mtp_layers_block_type": None}
    assert draft_layer_count(_nemotron(**raw)) == 2


# MiMo-V2 (vLLM 0.21.0 / 0.27.1 / 0.34.0 mimo_v2_mtp.py: config/speculative.py sets n_predict 1 and
# MiMoV2MultiTokenPredictor builds one MiMoV2MTPLayer, a MiMoV2Attention of swa_num_key_value_heads x swa_head_dim
# (K) / swa_v_head_dim (V) over sliding_window_size, as the target's SWA layers in mimo_v2.py): one more sliding
# layer. vLLM 0.33's and 0.34's own planner and SlidingWindowSpec agree on these pools
# (benchmarks/vllm_oracle_mtp_families.py: auto/fp8 x TP 1-8 x 10/40 GiB x 8K/128K, with and without the draft).
def test_mimo_v2_mtp_layer_fills_a_sliding_groups_padding():
    model = load_model(str(CONFIGS / "mimo-v2.6-flash.json"))
    assert draft_layer_count(model) == 1  # the config's num_nextn_predict_layers is 3; vLLM builds one
    # full layers: 4 KV heads x (192 + 128) x 2 B = 2,560 B/token; SWA layers 8 x (192 + 128) x 2 = 5,120 B/token.
    # 0.34's 64-token block: 327,680 B SWA pages; the full layers' block doubles to 128 for the same page.
    # 9 full and 39 sliding layers (hybrid_layer_pattern): groups of 9 slots, the sliding layers in 5 groups
    # (8, 8, 8, 8, 7); the draft's 40th sliding layer takes a padding slot (8 x 5), so the pool is unchanged:
    # 40 GiB // (9 x 327,680) = 14,563 blocks; a request at 8K holds 64 full blocks + 5 x (128 + 1) sliding ones
    # (its window and 16,384 tokens in flight exceed 8,192): 709; 14,563 x 8,192 // 709 = 168,265 tokens
    for draft in (0, 1):
        pool = simulate(model, kv_memory_bytes=MEM, max_model_len=8192, draft_layers=draft)
        assert sorted(len(g.layers) for g in pool.groups) == [7 + draft, 8, 8, 8, 8, 9]
        assert pool.num_blocks == MEM // (9 * 327_680) == 14_563
        assert pool.gpu_kv_cache_tokens == 14_563 * 8192 // 709 == 168_265
    with pytest.raises(UsageError, match="MiMoV2MTPModel from 0.21.0"):
        from kvplan.engines.vllm_rules import resolve

        simulate(model, kv_memory_bytes=MEM, max_model_len=8192, draft_layers=1, rules=resolve("0.20")[0])


# Step-3.5 (vLLM 0.33.0 / 0.34.0 step3p5_mtp.py Step3p5AMultiTokenPredictor): num_nextn_predict_layers
# Step3p5DecoderLayers numbered num_hidden_layers + k, each full or sliding by step3p5.py _get_layer_type
# ([*layer_types, *mtp_layer_types][index]; transformers 5.25 Step3p7TextConfig moves a legacy layer_types' trailing
# entries to mtp_layer_types), with num_attention_groups K/V heads of head_dim. With min(layers, draft tokens) > 1,
# multi-module MTP keeps num_speculative_tokens - 1 more tokens below every window (0.34 kv_cache_planning.py
# get_kv_cache_configs: extra_retained_tokens = num_prefill_lookahead_tokens - 1;
# MultiModuleMTPSpeculatorConfig.num_prefill_lookahead_tokens = num_speculative_tokens). A constructed config in
# the hub's legacy shape: 45 layers, full on every 4th (12), 33 sliding over 512, then 3 trailing sliding entries.
STEP35_TYPES = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)]
STEP35 = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
          "num_hidden_layers": 45, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
          "sliding_window": 512, "layer_types": STEP35_TYPES, "num_nextn_predict_layers": 3,
          "max_position_embeddings": 262144, "vocab_size": 128896}


def _step35_pool(raw, draft, tokens=0, max_len=8192, release="0.34"):
    from kvplan.configs import build_model
    from kvplan.engines.vllm_rules import resolve

    return simulate(build_model(raw, "step-3.5"), rules=resolve(release)[0], kv_memory_bytes=MEM,
                    max_model_len=max_len, draft_layers=draft, num_speculative_tokens=tokens)


def test_step35_mtp_layers_fill_the_sliding_groups_and_keep_draft_tokens():
    from kvplan.configs import build_model

    assert draft_layer_count(build_model(STEP35, "step-3.5")) == 3
    # 8 K/V heads x 128, K and V, bf16 = 4,096 B/token; 0.34's 64-token page 262,144 B. 12 full layers; 33 sliding
    # in three groups of 11 padded to 12; the 3 sliding MTP layers fill the padding: 40 GiB // (12 x 262,144) =
    # 13,653 blocks with or without them. At 8K a request holds 128 full blocks + 3 x (cdiv(8,192, 64) + 1) sliding
    # (window 511 + 16,384 in flight exceed 8K) = 515: 13,653 x 8,192 // 515 = 217,175 tokens
    for draft in (0, 3):
        pool = _step35_pool(STEP35, draft, draft)
        assert sorted(len(g.layers) for g in pool.groups) == [11 + draft // 3] * 3 + [12]
        assert pool.num_blocks == MEM // (12 * 262_144) == 13_653
        assert pool.gpu_kv_cache_tokens == 13_653 * 8192 // 515 == 217_175
    # 128K, one draft token (no retained tokens): 2,048 full + 3 x (cdiv(511 + 16,384, 64) + 1 = 265) = 2,843 blocks;
    # three draft tokens keep 2 more: 3 x (cdiv(16,897, 64) + 1 = 266) -> 2,846
    one = _step35_pool(STEP35, 3, 1, max_len=131072)
    three = _step35_pool(STEP35, 3, 3, max_len=131072)
    assert one.gpu_kv_cache_tokens == 13_653 * 131072 // 2843 == 629_449
    assert three.gpu_kv_cache_tokens == 13_653 * 131072 // 2846 == 628_786
    assert any("= 2 more tokens" in note for note in three.notes)


def test_step35_mtp_layer_kinds_follow_mtp_layer_types_and_num_attention_groups():
    # transformers' saved form: 45 layer_types and mtp_layer_types [sliding, full, sliding]: the draft's three pages
    # come last, sliding / full / sliding
    saved = {**STEP35, "layer_types": STEP35_TYPES[:45],
             "mtp_layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}
    assert [s.kind for s in _step35_pool(saved, 3).layer_specs[-3:]] == ["sliding", "full", "sliding"]
    # no layer_types: every layer full (Step3p7TextConfig), the MTP ones too; num_attention_groups 4 (the hub's name
    # for the K/V heads): 4 x 128 x 2 x 2 = 2,048 B/token, 131,072 B pages, one group of 8 (+ 2) layers:
    # 40 GiB // (8 x 131,072) = 40,960 blocks, with the draft // (10 x 131,072) = 32,768; 32,768 / 128 x 8,192
    plain = {k: v for k, v in STEP35.items() if k != "layer_types"} | {
        "num_hidden_layers": 8, "num_attention_groups": 4, "num_nextn_predict_layers": 2}
    assert _step35_pool(plain, 0).num_blocks == MEM // (8 * 131_072) == 40_960
    drafted = _step35_pool(plain, 2)
    assert drafted.num_blocks == MEM // (10 * 131_072) == 32_768
    assert drafted.gpu_kv_cache_tokens == 32_768 // 128 * 8192 == 2_097_152


def test_step35_mtp_refusals():
    from kvplan.configs import build_model
    from kvplan.engines.vllm_rules import resolve

    model = build_model(STEP35, "step-3.5")
    # 0.16-0.32 read Step-3.5 with vLLM's own Step3p5Config: not modelled
    with pytest.raises(UsageError, match="modelled from vLLM 0.33.0"):
        simulate(model, rules=resolve("0.32")[0], kv_memory_bytes=MEM, max_model_len=8192, draft_layers=3)
    # above the MTP layers, the draft tokens must be a multiple of them ('must be divisible by n_predict')
    with pytest.raises(UsageError, match="multiple"):
        _step35_pool(STEP35, 3, 4)
    # a per-layer K/V width (kvplan reads it; vLLM 0.34's Step3p5Attention does not) leaves no layer to copy
    wide = {**STEP35, "per_layer_config": {"1": {"num_key_value_heads": 16}}}
    with pytest.raises(UsageError, match="per_layer_config"):
        draft_layer_count(build_model(wide, "step-3.5"))


def test_qwen4_exp_mtp_is_refused_saying_what_was_read():
    # the test config names mtp_num_hidden_layers 1, which vLLM 0.33 / 0.34 config/speculative.py takes as n_predict
    # (the old refusal said the config declared no MTP layers); its draft (models/qwen4_exp/nvidia/mtp.py: QSA
    # layers, rings widened by the draft tokens) is not in kvplan's packed pool
    model = load_model(str(CONFIGS / "qwen3.8-flash-next.json"))
    assert model.mtp_layers == 1
    with pytest.raises(UsageError, match="Qwen4ExpMultiTokenPredictor builds mtp_num_hidden_layers QSA"):
        draft_layer_count(model)


def _mimo_sliding_pool(tokens: int, release: str):
    # MiMo-7B's shape with use_sliding_window (vLLM slides every layer, the MTP layers too: they take the cache
    # config's window) and two MTP layers, constructed: 36 + 2 layers of 8 KV heads x 128 x 2 x 2 B = 4,096 B/token
    from kvplan.configs import build_model
    from kvplan.engines.vllm_rules import resolve

    raw = {**json.loads((CONFIGS / "mimo-7b.json").read_text()), "use_sliding_window": True, "sliding_window": 4096,
           "num_nextn_predict_layers": 2}
    return simulate(build_model(raw, "mimo-7b-sliding"), rules=resolve(release)[0], kv_memory_bytes=MEM,
                    max_model_len=32768, max_num_batched_tokens=8192, draft_layers=2, num_speculative_tokens=tokens)


def test_multi_module_mtp_keeps_window_tokens_for_every_family_from_0_28():
    # vLLM tags every SlidingWindowSpec with extra_retained_tokens = num_speculative_tokens - 1 when
    # min(MTP modules, num_speculative_tokens) > 1, whatever the family (0.28.0-0.33.0 kv_cache_utils /
    # kv_cache_planning get_global_kv_cache_groups, modules = the draft config's num_nextn_predict_layers; 0.34.0
    # n_predict); kvplan applied it to Step-3.5 and Inkling only. In flight: 2 x 8,192 (async scheduling).
    # 0.34, block 64: 40 GiB // (38 x 64 x 4,096) = 4,311 blocks; a request at 32K holds
    # cdiv(min(4,095 + r + 16,384, 32,768), 64) + 1: r = 0 -> 320 + 1 = 321; 4 draft tokens, r = 3 -> 321 + 1 = 322
    one, four = _mimo_sliding_pool(1, "0.34"), _mimo_sliding_pool(4, "0.34")
    assert (one.num_blocks, one.blocks_per_request, four.blocks_per_request) == (4_311, 321, 322)
    assert four.gpu_kv_cache_tokens == 4_311 * 32768 // 322 == 438_704
    assert any("num_speculative_tokens - 1 = 3 more tokens" in n for n in four.notes)
    # 0.27 (block 16): no extra_retained_tokens field yet: cdiv(20,479, 16) + 1 = 1,281 with 4 tokens too;
    # 0.28: cdiv(20,482, 16) + 1 = 1,282
    assert _mimo_sliding_pool(4, "0.27").blocks_per_request == 1_281
    assert _mimo_sliding_pool(4, "0.28").blocks_per_request == 1_282


def test_mtp_module_count_by_release_and_the_divisibility_refusal_for_every_family():
    from kvplan.configs import build_model
    from kvplan.engines.vllm_speculative import mtp_modules

    # Qwen3.5's count is mtp_num_hidden_layers: vLLM 0.34 reads it as n_predict, 0.28-0.33 read
    # num_nextn_predict_layers, which a Qwen3.5 config lacks (getattr default 1)
    raw = json.loads((CONFIGS / "qwen3.5-397b-a17b-shape.json").read_text())
    raw["text_config"]["mtp_num_hidden_layers"] = 2
    qwen2 = build_model(raw, "qwen3.5-2mtp")
    assert qwen2.mtp_layers == 2
    assert (mtp_modules(qwen2, "num_nextn_predict_layers"), mtp_modules(qwen2, "n_predict")) == (1, 2)
    # MiMo-V2: hf_config_override sets both to 1, whatever num_nextn_predict_layers (3 here) says
    mimo_v2 = load_model(str(CONFIGS / "mimo-v2.6-flash.json"))
    assert mimo_v2.mtp_layers == 3 and mtp_modules(mimo_v2, "n_predict") == 1
    # 'must be divisible by n_predict' (config/speculative.py; 0.34 speculator_config.py): GLM-4.5-Air with two
    # MTP layers refuses 3 draft tokens (3 > 2, 3 % 2 = 1) and takes 4; kvplan refused it for Step-3.5 / Inkling only
    raw = {**json.loads((Path(__file__).parents[1] / "model_specs" / "glm-4.5-air.json").read_text()),
           "num_nextn_predict_layers": 2}
    glm = build_model(raw, "glm-4.5-air-2mtp")
    with pytest.raises(UsageError, match=r"num_speculative_tokens 3 .*\(n_predict 2\)"):
        simulate(glm, kv_memory_bytes=MEM, max_model_len=8192, draft_layers=2, num_speculative_tokens=3)
    assert simulate(glm, kv_memory_bytes=MEM, max_model_len=8192, draft_layers=2, num_speculative_tokens=4).fits


def test_multi_module_mtp_with_prefix_caching_needs_the_draft_tokens_in_a_block(cli, tmp_path):
    # 0.33.0 / 0.34.0 v1/core/kv_cache_coordinator.py KVCacheCoordinator.__init__: prefix caching (on by default) and
    # an EAGLE-family group with scheduler_block_size (kv_cache_utils.py: lcm of the groups' block sizes; every group
    # here 16) < num_prefill_lookahead (multi-module MTP, min(3 MTP layers, 18 tokens) > 1: num_speculative_tokens 18)
    # raise 'Multi-module MTP with prefix caching requires scheduler_block_size (=16) >= num_speculative_tokens (=18)'
    from kvplan.configs import build_model
    from kvplan.engines.vllm_rules import resolve

    model = build_model(STEP35, "step-3.5")

    def pool(release, tokens, prefix_caching=None):
        return simulate(model, rules=resolve(release)[0], kv_memory_bytes=MEM, max_model_len=8192, draft_layers=3,
                        num_speculative_tokens=tokens, block_tokens=16, prefix_caching=prefix_caching)

    for release in ("0.33", "0.34"):
        with pytest.raises(UsageError, match="scheduler block of 16 tokens is below num_speculative_tokens 18"):
            pool(release, 18)
    # 15 tokens (a multiple of n_predict 3) fit the block; without prefix caching vLLM checks nothing
    assert pool("0.34", 15).num_blocks == pool("0.34", 18, prefix_caching=False).num_blocks
    path = tmp_path / "config.json"
    path.write_text(json.dumps(STEP35))
    rc, _, err = cli("estimate", str(path), "--engine", "vllm", "--kv-memory", "40GiB", "--max-model-len", "8192",
                     "--mtp", "-t", "page:16", "--num-speculative-tokens", "18")
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and "Multi-module MTP with prefix caching" in lines[0], err
