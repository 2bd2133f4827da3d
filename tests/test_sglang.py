"""SGLang 0.5.9's token pool (kvplan.engines.sglang): every expected figure is worked out by hand from the
rules read in its sdist (get_cell_size_per_token, profile_max_num_token, init_memory_pool,
set_num_tokens_hybrid_swa, _handle_gpu_memory_settings) and the models' configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang import cell, pool
from kvplan.engines.sglang_rules import RULES, memory_defaults
from kvplan.errors import PlanError, UsageError
from kvplan.sources import load_model

CONFIGS = Path(__file__).parent / "data" / "configs"

GIB = 2**30
R059 = RULES["0.5.9"]  # the tests below assert 0.5.9's rules; tests/test_sglang_0523.py the newest's


def pool059(*args, **kwargs):
    return pool(*args, rules=R059, **kwargs)


@pytest.mark.parametrize("mib,tp,chunked,graph_bs,reserved,fraction", [
    # H100 SXM (nvidia-smi 81,559 MiB), TP 1: 512 + 8,192 x 1.5 + 256 x 2 + 1/8 x 1,024 = 13,440 MiB
    (81559, 1, 8192, 256, 13440, 0.835),  # (81,559 - 13,440) / 81,559 = 0.83521
    # H200 (143,771 MiB), TP 8: 512 + 12,288 + 512 x 2 + 8/8 x 1,024 = 14,848 MiB -> 0.89672
    (143771, 8, 8192, 512, 14848, 0.897),
    # RTX 4090 (24,564 MiB), TP 1: 512 + 2,048 x 1.5 + 24 x 2 + 128 = 3,760 MiB -> 0.84693
    (24564, 1, 2048, 24, 3760, 0.847),
    # A100 40 GB (40,960 MiB), TP 4: 512 + 4,096 x 1.5 + 160 x 2 + 512 = 7,488 MiB -> 0.81719
    (40960, 4, 4096, 160, 7488, 0.817),
])
def test_default_mem_fraction_static(mib, tp, chunked, graph_bs, reserved, fraction):
    got = memory_defaults(mib, tp, rules=R059)
    assert (got.chunked_prefill_size, got.cuda_graph_max_bs, got.reserved_mib, got.mem_fraction_static) == (
        chunked, graph_bs, reserved, fraction)


def test_cell_sizes():
    llama = load_model("llama-3.1-8b")  # 32 layers, 8 KV heads of 128
    assert cell(llama).bytes == 8 * (128 + 128) * 32 * 2 == 131_072
    assert cell(llama, tp=8).bytes == 1 * 256 * 32 * 2
    assert cell(llama, tp=16).bytes == 1 * 256 * 32 * 2  # at least one head a rank
    v3 = load_model("deepseek-v3")  # MLA: (kv_lora_rank 512 + rope 64) x 61 layers
    assert cell(v3, tp=8).bytes == 576 * 61 * 2 == 70_272
    assert cell(v3, kv_bytes=1).bytes == 35_136
    # GPT-OSS-120B: a hybrid sliding-window pool, 18 full and 18 sliding layers of 8 KV heads x 64
    oss = cell(load_model("gpt-oss-120b"))
    assert (oss.kind, oss.full_layers, oss.swa_layers, oss.full_per_token) == ("hybrid_swa", 18, 18, 8 * 128 * 2)
    assert oss.bytes == 2048 * 36 == 73_728
    # Gemma 3 27B is not a hybrid architecture for SGLang: all 62 layers pooled as full attention
    gemma = cell(load_model("gemma-3-27b"))
    assert gemma.kind == "mha" and gemma.bytes == 16 * 256 * 62 * 2 == 507_904
    assert "save nothing" in gemma.notes[0]


def test_pool_from_memory():
    llama = load_model("llama-3.1-8b")
    got = pool059(llama, rest_bytes=50 * GIB, context_len=131072)
    assert got.max_total_num_tokens == 50 * GIB // 131_072 == 409_600
    # max_running_requests: min(max(int(409,600 / 131,072 x 512) = 1,600, 2,048), 4,096)
    assert got.max_running_requests == 2048
    # the buffers hold one page more: (409,600 + 1) x 8 x 128 x 2 B x 32 layers = 25.0000 GiB each
    assert got.log_lines()[0] == "KV Cache is allocated. #tokens: 409600, K size: 25.00 GB, V size: 25.00 GB"
    # a 64-token page rounds down; --max-total-tokens caps first
    assert pool059(llama, rest_bytes=50 * GIB, context_len=8192, page_size=64,
                max_total_tokens=100_000).max_total_num_tokens == 100_000 // 64 * 64 == 99_968
    # short requests: int(409,600 / 8,192 x 512) = 25,600, capped at 4,096
    assert pool059(llama, rest_bytes=50 * GIB, context_len=8192).max_running_requests == 4096


def test_hybrid_sliding_window_split():
    got = pool059(load_model("gpt-oss-120b"), rest_bytes=50 * GIB, context_len=131072)
    tokens = 50 * GIB // 73_728
    assert tokens == 728_177
    # full = int(tokens x (F x 18 + S x 18) / (F x 18 + 0.8 x S x 18)) with F = S: int(tokens x 2 / 1.8)
    full = int(tokens * 73_728 / (2048 * 18 + 0.8 * 2048 * 18))
    assert got.max_total_num_tokens == full == 809_085
    assert got.swa_tokens == int(full * 0.8) == 647_268
    assert got.log_lines()[0] == "Use sliding window memory pool. full_layer_tokens=809085, swa_layer_tokens=647268"


def test_refusals():
    with pytest.raises(UsageError, match="compressor state"):  # DeepSeek-V4's compressed attention
        cell(load_model("deepseek-v4-flash"))
    with pytest.raises(PlanError, match="no KV cache tokens"):
        pool059(load_model("llama-3.1-8b"), rest_bytes=-GIB, context_len=8192)


def test_estimate_with_sglang(cli):
    rc, out, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "50GiB", "--context", "8k", "--engine", "sglang@0.5.9",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["name"], engine["version"], engine["max_total_num_tokens"]) == ("sglang", "0.5.9", 409_600)
    assert engine["kv_memory_source"] == "--kv-memory" and engine["concurrent_requests"] == 409_600 // 8192 == 50
    # from the GPU: the pool is T0 x mem_fraction_static - weights; the default fraction of an H100 is 0.835
    rc, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--context", "8k", "--engine", "sglang@0.5.9",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert engine["mem_fraction_static"] == 0.835
    assert engine["max_total_num_tokens"] == engine["kv_memory_bytes"] // 131_072
    # --min-concurrency is checked on SGLang's pool too: Gemma 3 27B's windows give kvplan's own plan room for
    # 6 sequences of 32K in 20 GiB, but SGLang pools all 62 layers in full: 20 GiB // 507,904 B = 42,281 tokens,
    # 1.29 sequences
    rc, out, err = cli("estimate", "gemma-3-27b", "--kv-memory", "20GiB", "--context", "32k", "--engine", "sglang@0.5.9",
                       "--min-concurrency", "2")
    assert 20 * GIB // 507_904 == 42_281
    assert rc == 1 and "SGLang's pool holds 1.29 sequences" in out


@pytest.mark.parametrize("args,message", [
    (("jamba-v0.1", "--kv-memory", "20GiB", "--engine", "sglang@0.5.9"), "mamba state"),
    (("nemotron-h-8b", "--gpu", "h100", "--pp", "2", "--engine", "sglang@0.5.9"), "modelled for attention-only models"),
    (("llama-3.1-8b", "--engine", "sglang@0.4.0"), "SGLang 0.4.0 is not a release kvplan models"),
    (("llama-3.1-8b", "--engine", "sglang@0.5.9", "--enforce-eager"), "vLLM setting"),
    (("llama-3.1-8b", "--kv-memory", "20GiB", "--engine", "sglang@0.5.9", "--mtp"), "SGLang: meta-llama/Llama-3.1-8B (llama) has no MTP layers"),
    (("llama-3.1-8b", "--engine", "sglang@0.5.9"), "needs the KV memory"),
])
def test_bad_sglang_requests_get_one_line(cli, args, message):
    rc, out, err = cli("estimate", *args)
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1


def test_fit_under_sglang(cli):
    # Gemma 3 27B, 16 requests of 32K on H100s: kvplan's own plan (windows kept) needs 2 GPUs, but SGLang pools
    # all 62 layers in full, so its check pushes the answer past 4 GPUs (TP 2 x PP 3 would do on 6), and 0.5.9
    # refuses PP for Gemma3ForConditionalGeneration (gemma3_mm.py: its forward takes **kwargs, no
    # pp_proxy_tensors; tests/test_sglang_pp.py), so TP alone: 32 heads and 16 KV heads leave TP 8 as the next
    # split above 4; the estimate command reproduces its figure
    def fit(*extra):
        rc, out, err = cli("fit", "gemma-3-27b", "--context", "32k", "-n", "16", "--gpu", "h100", "--top", "1",
                           "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)

    ideal, sglang = fit(), fit("--engine", "sglang@0.5.9")
    assert (ideal["options"][0]["tp"], ideal["options"][0]["pp"]) == (2, 1)
    first = sglang["options"][0]
    assert sglang["engine"]["name"] == "sglang" and (first["gpus"], first["tp"], first["pp"]) == (8, 8, 1)
    command = first["estimate_command"].split()
    assert "--mem-util" not in command  # SGLang's own mem_fraction_static for the card, as fit used
    rc, out, err = cli(*command[1:], "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["engine"]["max_concurrency"] == first["engine_max_concurrency"]
    # --mem-util given: SGLang's fraction too, and the command carries it
    given = fit("--engine", "sglang@0.5.9", "--mem-util", "0.85")["options"][0]["estimate_command"]
    assert "--mem-util 0.85" in given


def test_hybrid_recurrent_pool():
    # Qwen3-Next-80B at TP 2: 36 Gated DeltaNet layers (16 key, 32 value heads of 128, kernel 4) and 12 full
    # attention layers of 2 KV heads of 256. A request's state per GPU: conv (32 x 128 + 2 x 16 x 128) / 2 x 3
    # x 2 B = 24,576 B and SSM 16 x 128 x 128 x 4 B = 1,048,576 B a layer: 38,633,472 B
    model = load_model("qwen3-next-80b-a3b")
    c = cell(model, tp=2)
    assert (c.state.conv_bytes, c.state.ssm_bytes) == (36 * 24_576, 36 * 1_048_576)
    assert c.bytes == 1 * 512 * 12 * 2  # the full-attention layers only: 1 KV head a rank x (256 + 256)
    rest = 50 * GIB
    got = pool059(model, rest_bytes=rest, context_len=4096, tp=2)
    # handle_max_mamba_cache: states = int(rest x 0.9 / 1.9 // 38,633,472), the rest less them sizes the tokens
    states = int(rest * 0.9 / 1.9 // 38_633_472)
    assert got.mamba_cache_size == states == 658
    assert got.max_total_num_tokens == (rest - states * 38_633_472) // 12_288
    # max_running_requests = min(4,096, 658 // 3 = 219): the state pool caps it, and so the concurrency
    assert got.max_running_requests == 219 and got.max_concurrency == 219
    assert got.log_lines()[0].startswith("Mamba Cache is allocated. max_mamba_cache_size: 658, ")
    # the SSM state in the config's dtype when it names one (Qwen3.5's configs say float32)
    assert cell(model, tp=2, ssm_bytes=2).state.ssm_bytes == 36 * 16 * 128 * 128 * 2
    with pytest.raises(UsageError, match="mamba state"):  # Jamba's Mamba-1 layers: not read for SGLang
        cell(load_model("jamba-v0.1"))


def test_deepseek_sparse_attention_pool():
    # DeepSeek-V3.2: the indexer keys join the cell, index_head_dim 128 + a float32 scale per 128 = 132 B
    # (uint8) a layer and token; 61 layers
    model = load_model("deepseek-v3.2-exp")
    bf16, fp8 = cell(model, rules=R059), cell(model, kv_bytes=1, rules=R059)
    assert bf16.bytes == (576 * 2 + 132) * 61 == 78_324 and bf16.mla_stored == 1152
    assert fp8.bytes == (576 + 132) * 61 == 43_188
    # at fp8 SGLang stores 512 fp8 + 512 / 128 x 4 B of scales + the 64 rope dims in bf16 = 656 B a layer, more
    # than the 576 its profile counts: the buffers outgrow the pool's memory by 80 / 708 = 11.3%
    assert fp8.mla_stored == 512 + 16 + 128 == 656
    got = pool059(model, rest_bytes=40 * GIB, context_len=8192, nsa_fp8=True)
    assert got.kv_cache_dtype == "fp8_e4m3" and got.page_size == 64  # SGLang's DSA defaults on SM >= 10
    assert got.max_total_num_tokens == 40 * GIB // 43_188 // 64 * 64
    assert any("11.3%" in n for n in got.notes)
    assert pool059(model, rest_bytes=40 * GIB, context_len=8192).kv_cache_dtype == "auto"  # bf16 below SM 10


def test_kv_sharing_models_are_refused_outside_gemma3n(tmp_path):
    # Gemma 3n's shared layers are pooled as SGLang allocates them (tests/test_sglang_pure_ssm.py); another
    # architecture's KV sharing is not read: refused, not guessed
    from kvplan.sources import bundled_config, bundled_index

    raw = {**bundled_config(bundled_index()["gemma-3n-e4b"]), "architectures": ["Gemma3nForCausalLMX"]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UsageError, match="reuses earlier layers"):
        cell(load_model(str(path)))


def test_emit_sglang(cli):
    rc, out, err = cli("estimate", "llama-3.1-70b", "--gpu", "h100", "--tp", "4", "--context", "32k", "-t", "fp8",
                       "-t", "page:16", "--emit", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    emit = json.loads(out)["emit"]
    assert emit["engine"] == "sglang" and emit["argv"][:5] == ["python", "-m", "sglang.launch_server",
                                                               "--model-path", "meta-llama/Llama-3.1-70B"]
    argv = emit["argv"]
    for flag, value in (("--context-length", "32768"), ("--kv-cache-dtype", "fp8_e4m3"), ("--page-size", "16"),
                        ("--tp-size", "4")):
        assert argv[argv.index(flag) + 1] == value
    assert "--mem-fraction-static" not in argv  # SGLang's default for the card unless --mem-util is given
    # what SGLang cannot apply is listed, not emitted; a length past the model's maximum carries the variable
    rc, out, err = cli("estimate", "gemma-3-27b", "--kv-memory", "20GiB", "--context", "200k", "-t", "int4",
                       "--emit", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    emit = json.loads(out)["emit"]
    assert [n["spec"] for n in emit["not_applied"]] == ["int4"] and "--kv-cache-dtype" in emit["argv"]
    assert emit["env"] == ["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"]
    # --kv-memory has no SGLang flag: the pool's tokens become --max-total-tokens (20 GiB // 507,904 B)
    rc, out, err = cli("estimate", "gemma-3-27b", "--kv-memory", "20GiB", "--context", "32k", "--emit", "sglang@0.5.9",
                       "--format", "json")
    argv = json.loads(out)["emit"]["argv"]
    assert argv[argv.index("--max-total-tokens") + 1] == str(20 * GIB // 507_904)
    rc, out, err = cli("estimate", "gemma-3-27b", "--emit", "tgi")
    assert rc == 2 and "only vllm[@VERSION] or sglang" in err


def test_speculative_decoding_under_sglang(cli):
    from kvplan.engines.sglang import Speculation
    from kvplan.engines.sglang_report import resolve_speculation
    from kvplan.request import Speculation as Asked

    # the draft reserves 2 GiB more (EAGLE, EAGLE3; STANDALONE 6): H100 TP 1, 13,440 + 2,048 MiB -> 0.81009
    assert memory_defaults(81559, 1, speculative="EAGLE", rules=R059).mem_fraction_static == 0.810
    assert memory_defaults(81559, 1, speculative="STANDALONE", rules=R059).mem_fraction_static == 0.760  # 19,584 MiB
    v3 = load_model("deepseek-v3")
    assert resolve_speculation(v3, Asked(mtp=True)) == Speculation("EAGLE", 3, 4, 1)  # NEXTN, auto (3, 1, 4)
    assert resolve_speculation(v3, Asked(mtp=True, tokens=2)) == Speculation("EAGLE", 2, 3, 1)
    head = str(CONFIGS / "eagle3-head-llama-8b-shape.json")
    llama = load_model("llama-3.1-8b")
    assert resolve_speculation(llama, Asked(draft_model=head, tokens=3)).algorithm == "EAGLE3"
    assert resolve_speculation(llama, Asked(draft_model=str(CONFIGS / "draft-llama-1b-shape.json"),
                                            tokens=3)).algorithm == "STANDALONE"
    # max_running_requests defaults to 48; a hybrid reserves its intermediate states for 48 requests x the draft
    # tokens first: Qwen3-Next TP 2, 38,633,472 B x 48 x 3 = 5,563,219,968 B. Under speculation 0.5.9 turns
    # Qwen3-Next's radix cache off (server_args._handle_mamba_radix_cache, no_buffer with a speculative algorithm),
    # so handle_max_mamba_cache takes max_running_requests (48) as the state pool's size: tests/test_sglang_spec_radix.py
    spec = Speculation("EAGLE", 2, 3, 1)
    model = load_model("qwen3-next-80b-a3b")
    got = pool059(model, rest_bytes=50 * GIB, context_len=32768, tp=2, speculation=spec)
    rest = 50 * GIB - 38_633_472 * 48 * 3
    assert got.mamba_cache_size == 48 and got.max_running_requests == 48
    assert got.max_total_num_tokens == (rest - 48 * 38_633_472) // 12_288
    # the CLI: --mtp with --engine sglang, and the flags --emit sglang prints for it
    rc, out, err = cli("estimate", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--context", "32k", "--engine", "sglang@0.5.9",
                       "--mtp", "--emit", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["engine"]["speculative_algorithm"] == "EAGLE" and data["engine"]["max_running_requests"] == 48
    assert "--speculative-algorithm NEXTN" in data["emit"]["command"]


def test_max_num_seqs_is_sglangs_max_running_requests(cli):
    # --max-num-seqs N under --engine sglang is its --max-running-requests: the cap, and the flag emitted
    rc, out, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "50GiB", "--context", "1k", "--engine", "sglang@0.5.9",
                       "--max-num-seqs", "64", "--emit", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    # 409,600 tokens hold 400 requests of 1K; 64 run
    assert data["engine"]["max_running_requests"] == 64 and data["engine"]["max_concurrency"] == 64
    argv = data["emit"]["argv"]
    assert argv[argv.index("--max-running-requests") + 1] == "64"


def test_context_length_past_the_models(cli, monkeypatch):
    from kvplan.engines.sglang_rules import context_limit
    from kvplan.sources import load_config

    # get_context_length: the first of max_sequence_length, seq_length, max_seq_len, model_max_length,
    # max_position_embeddings, times the rope scaling factor unless llama3's or with original_max_position_embeddings
    assert context_limit(load_config("llama-2-7b")[0]) == (4096, True)
    assert context_limit(load_config("llama-3.1-8b")[0]) == (131072, True)  # llama3 scaling: factor 1
    assert context_limit(load_config("internlm2.5-7b-chat")[0]) == (32768 * 2, True)  # dynamic, factor 2
    assert context_limit(load_config("chatglm3-6b")[0]) == (8192, True)  # seq_length
    assert context_limit(load_config("gemma-3-27b")[0]) == (None, False)  # left to the config class's default
    rc, out, err = cli("estimate", "llama-2-7b", "--kv-memory", "20GiB", "--context", "32k", "--engine", "sglang@0.5.9")
    assert rc == 2 and "SGLang refuses --context-length 32,768" in err and len(err.strip().splitlines()) == 2
    monkeypatch.setenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
    rc, out, err = cli("estimate", "llama-2-7b", "--kv-memory", "20GiB", "--context", "32k", "--engine", "sglang@0.5.9")
    assert rc == 0 and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN allows it" in out


def test_a_config_naming_an_fp8_kv_cache_is_said(cli, tmp_path):
    # SGLang's KV dtype auto follows a ModelOpt quant config's FP8 KV cache (kv_cache_scheme: 8-bit floats)
    from kvplan.sources import load_config

    raw = dict(load_config("llama-3.1-8b")[0], quantization_config={
        "quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"type": "float", "num_bits": 8}})
    (tmp_path / "config.json").write_text(json.dumps(raw))
    rc, out, err = cli("estimate", str(tmp_path / "config.json"), "--kv-memory", "20GiB", "--context", "8k",
                       "--engine", "sglang@0.5.9", "--format", "json")
    assert rc == 0, err
    assert any("names an FP8 KV cache" in n for n in json.loads(out)["engine"]["notes"])


def test_pipeline_stages_each_size_a_pool_and_take_the_smallest(cli):
    # Llama-3.1-8B at PP 3: SGLang's get_pp_indices gives 32 // 3 = 10 layers a stage and the last 32 % 3 = 2 stages
    # one more (10, 11, 11; vLLM's split is 11, 11, 10). With 10 GiB a GPU: 10 GiB // (8 x 256 x 2 B x 10 =
    # 40,960) = 262,144 tokens on stage 0, 10 GiB // 45,056 = 238,312 on stages 1 and 2; every rank takes 238,312
    from kvplan.capacity.shard import sglang_stage_bounds

    assert sglang_stage_bounds(32, 3) == [(0, 10), (10, 21), (21, 32)]
    for release in ("sglang", "sglang@0.5.9"):
        rc, out, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "10GiB", "--pp", "3", "--context", "8k",
                           "--engine", release, "--format", "json")
        assert rc == 0, err
        engine = json.loads(out)["engine"]
        assert engine["max_total_num_tokens"] == 10 * GIB // 45_056 == 238_312
        assert any("stages of 10, 11, 11 layers" in n and "262,144, 238,312, 238,312" in n for n in engine["notes"])


def test_no_room_for_sglangs_pool_exits_1_as_a_plan_that_does_not_fit(cli):
    # Llama-3.1-70B (141.1 GB of bf16 weights) on 2 x H100: 65.7 GiB a GPU fits the planner's 0.9 x 79.18 GiB but
    # not SGLang's mem_fraction_static share, so SGLang has no KV pool. That is a deployment that does not fit (exit
    # 1, as the weights exceeding one H100), not a bad option (exit 2, which it was)
    rc, out, err = cli("estimate", "llama-3.1-70b", "--gpu", "h100", "--tp", "2", "--context", "32k",
                       "--engine", "sglang")
    assert rc == 1 and "SGLang would have no KV cache tokens" in err and len(err.strip().splitlines()) == 1
    rc, out, err = cli("estimate", "llama-3.1-70b", "--gpu", "h100", "--context", "32k", "--engine", "sglang")
    assert rc == 1 and "does not fit on 1 x h100-sxm" in err
