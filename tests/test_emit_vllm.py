"""`--emit vllm`: the `vllm serve` command for a plan, and the techniques vLLM cannot apply."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.capacity.hardware import make_deployment
from kvplan.cli.app import app
from kvplan.engines import vllm_flags
from kvplan.planner import evaluate
from kvplan.render import Report
from kvplan.sources import load_model
from kvplan.techniques.registry import build_all

GIB = 1024**3


def emit(*args):
    r = CliRunner().invoke(app, ["estimate", *args, "--emit", "vllm", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


def flag(argv, name):
    return argv[argv.index(name) + 1]


def test_plain_model_uses_auto_dtype():
    out = emit("llama-3.1-8b", "--context", "8192")
    assert out["argv"][:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B"]
    assert flag(out["argv"], "--kv-cache-dtype") == "auto"
    assert flag(out["argv"], "--max-model-len") == "8192"
    assert "--block-size" not in out["argv"]
    assert out["not_applied"] == []
    assert out["command"].startswith("vllm serve meta-llama/Llama-3.1-8B --kv-cache-dtype auto")


def test_serving_techniques_become_flags():
    out = emit("llama-3.1-8b", "--context", "8192", "--max-model-len", "16k", "--kv-memory", "10GiB", "--tp", "2",
               "--pp", "2", "-t", "fp8", "-t", "page:32", "-t", "prefix:tokens=2000,requests=8",
               "-t", "offload:cpu=64GiB")
    argv = out["argv"]
    assert flag(argv, "--kv-cache-dtype") == "fp8"
    assert flag(argv, "--block-size") == "32"
    assert flag(argv, "--max-model-len") == "16384"
    assert "--enable-prefix-caching" in argv
    assert flag(argv, "--kv-offloading-size") == "64"  # 64 GiB, vLLM's unit
    assert flag(argv, "--kv-offloading-backend") == "native"
    assert flag(argv, "--tensor-parallel-size") == "2"
    assert flag(argv, "--pipeline-parallel-size") == "2"
    assert flag(argv, "--kv-cache-memory-bytes") == str(10 * GIB)
    assert out["not_applied"] == []


def test_max_num_seqs_from_capacity():
    # 10 GiB pool, 128 KiB/token x 8,192 tokens = 1 GiB per sequence -> 10 sequences
    out = emit("llama-3.1-8b", "--context", "8192", "--kv-memory", "10GiB")
    assert flag(out["argv"], "--max-num-seqs") == "10"


@pytest.mark.parametrize("engine", [[], ["--engine", "vllm"]])
def test_a_pool_that_holds_no_sequence_is_a_warning_not_a_note(engine):
    # 1 GiB pool, 128 KiB/token x 16,384 tokens = 2 GiB per sequence: none fits, and the emitted command would not
    # serve one; that was a plain note among the others, unlike every other "would not start" of --emit
    out = emit("llama-3.1-8b", "--context", "16k", "--kv-memory", "1GiB", *engine)
    assert "--max-num-seqs" not in out["argv"]
    assert [n for n in out["notes"] if "not one sequence" in n][0].startswith("warning: not one sequence")


def test_fp8_e5m2():
    assert flag(emit("llama-3.1-8b", "-t", "fp8:e5m2")["argv"], "--kv-cache-dtype") == "fp8_e5m2"


def test_skip_sliding_layers():
    argv = emit("gpt-oss-20b", "-t", "fp8:skip=sliding")["argv"]
    assert flag(argv, "--kv-cache-dtype") == "fp8"
    assert flag(argv, "--kv-cache-dtype-skip-layers") == "sliding_window"
    # without skip no such flag
    assert "--kv-cache-dtype-skip-layers" not in emit("gpt-oss-20b", "-t", "fp8")["argv"]


@pytest.mark.parametrize("technique, words", [
    ("cla:2", "trained"),
    ("mla", "trained"),
    ("hybrid:3:1", "trained"),
    ("csa:m=4,k=512,window=128", "trained"),
    ("window:4096", "trained"),
    ("gqa:2", "uptrained"),
    ("mqa", "uptrained"),
    ("evict:0.5", "engine support"),
    ("pyramid:0.12", "engine support"),
    ("quest:page=16,topk=64", "engine support"),
    ("int2", "not a vLLM 0.34 KV cache dtype"),
    ("kivi", "not a vLLM 0.34 KV cache dtype"),
])
def test_techniques_vllm_cannot_apply(technique, words):
    out = emit("llama-3.1-8b", "-t", technique)
    assert [s["spec"] for s in out["not_applied"]] == [technique]
    assert words in out["not_applied"][0]["reason"]
    if technique in ("int2", "kivi"):
        assert flag(out["argv"], "--kv-cache-dtype") == "auto"


@pytest.mark.parametrize("technique, value", [("int8", "int8_per_token_head"), ("int4", "int4_per_token_head")])
def test_integer_kv_dtypes_by_release(technique, value):
    # 0.33 has per-token-head integer caches (vllm/config/cache.py CacheDType); 0.11 has none
    out = emit("llama-3.1-8b", "-t", technique)
    assert flag(out["argv"], "--kv-cache-dtype") == value and out["not_applied"] == []
    old = CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "-t", technique, "--emit", "vllm@0.11", "--format", "json"])
    data = json.loads(old.stdout)["emit"]
    assert data["version"] == "0.11"
    assert flag(data["argv"], "--kv-cache-dtype") == "auto"
    assert "not a vLLM 0.11 KV cache dtype" in data["not_applied"][0]["reason"]


def test_block_size_checked_against_the_release():
    # 0.11's BlockSize Literal is 1, 8, 16, 32, 64, 128; 0.33 takes any positive size
    assert not any("block-size" in n for n in emit("llama-3.1-8b", "-t", "page:20")["notes"])
    old = json.loads(CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "-t", "page:20", "--emit", "vllm@0.11",
                                              "--format", "json"]).stdout)["emit"]
    assert any("--block-size 20 is rejected by vLLM 0.11" in n for n in old["notes"])


def test_engine_version_carries_to_emit():
    r = CliRunner().invoke(app, ["estimate", "gpt-oss-20b", "-t", "fp8:skip=sliding", "--engine", "vllm@0.11",
                                 "--kv-memory", "10GiB", "--emit", "vllm", "--format", "json"])
    data = json.loads(r.stdout)["emit"]
    assert data["version"] == "0.11"
    assert "--kv-cache-dtype-skip-layers" not in data["argv"]  # not a 0.11 flag
    assert any("not a vLLM 0.11 flag" in n for n in data["notes"])


def test_long_max_model_len_names_the_variable():
    # Llama-3.1-8B: max_position_embeddings 131,072 -> 262,144 needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
    out = emit("llama-3.1-8b", "--max-model-len", "256k")
    assert out["env"] == ["VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"]
    assert out["command"].startswith("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve ")
    assert any("exceeds the model's maximum 131,072" in n for n in out["notes"])
    assert emit("llama-3.1-8b", "--max-model-len", "128k")["env"] == []


def test_max_num_seqs_warns_that_it_caps_short_requests():
    out = emit("llama-3.1-8b", "--context", "8192", "--kv-memory", "10GiB")
    assert flag(out["argv"], "--max-num-seqs") == "10"
    warning = [n for n in out["notes"] if n.startswith("warning: --max-num-seqs 10")]
    assert warning and "shorter requests" in warning[0] and "default is 1024" in warning[0]


def test_offloading_is_not_a_0_11_flag():
    r = CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "-t", "offload:cpu=64GiB", "--emit", "vllm@0.11",
                                 "--format", "json"])
    data = json.loads(r.stdout)["emit"]
    assert "--kv-offloading-size" not in data["argv"]
    assert [s["spec"] for s in data["not_applied"]] == ["offload:cpu=64GiB"]


def test_table_output_prints_the_command():
    r = CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "-t", "fp8", "-t", "cla:2", "--emit", "vllm"])
    assert r.exit_code == 0, r.output
    assert "vllm serve meta-llama/Llama-3.1-8B --kv-cache-dtype fp8" in r.stdout
    assert "not applied by vLLM: cla:2" in r.stdout


def test_python_api():
    chain = build_all(["fp8", "page:16", "evict:0.5"])
    result = evaluate(load_model("llama-3.1-8b"), chain, 8192, 1, make_deployment(None, kv_memory_bytes=10 * GIB))
    report = Report({})
    vllm_flags.add_to_report(report, result, chain, "bf16", 8192)
    data = report.data["emit"]
    assert data["engine"] == "vllm"
    assert flag(data["argv"], "--block-size") == "16"
    assert [s["spec"] for s in data["not_applied"]] == ["evict:0.5"]
    assert any(line.strip().startswith("vllm serve") for line in report.lines)


@pytest.mark.parametrize("release, served", [("0.11.0", False), ("0.11.1", True), (None, True)])
def test_emit_says_when_the_release_does_not_serve_the_model(release, served):
    # KimiLinearForCausalLM enters vLLM's registry in 0.11.1 (model_executor/models/registry.py)
    engine = "vllm" if release is None else f"vllm@{release}"
    r = CliRunner().invoke(app, ["estimate", "kimi-linear-48b-a3b", "--emit", engine, "--context", "32k",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)["emit"]
    assert out["served"] is served
    assert any("does not register KimiLinearForCausalLM (added in 0.11.1)" in n for n in out["notes"]) is not served


def test_emit_passes_the_users_max_num_seqs_and_enforce_eager(cli):
    # the user's own --max-num-seqs replaces kvplan's capacity figure; --enforce-eager is passed on
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--context", "32k", "--emit", "vllm",
                         "--max-num-seqs", "64", "--enforce-eager", "--format", "json")
    assert code == 0, err
    argv = json.loads(out)["emit"]["argv"]
    assert argv[argv.index("--max-num-seqs") + 1] == "64" and "--enforce-eager" in argv
    assert argv.count("--max-num-seqs") == 1


# --trust-remote-code (engines/vllm_remote_code.py). Facts read from the sources: vLLM 0.33.0's
# vllm/transformers_utils/config.py _CONFIG_REGISTRY registers chatglm and kimi_k2 (not internlm2, baichuan,
# nemotron-nas); transformers 5.20.0's models/auto/auto_mappings.py CONFIG_MAPPING_NAMES has deepseek_v3 and
# llama, not internlm2 / baichuan / nemotron-nas. AutoConfig runs auto_map's class only for a type in neither.
@pytest.mark.parametrize("model, needed", [
    ("internlm2.5-7b-chat", True),  # internlm2: auto_map, in neither table
    ("baichuan2-7b-chat", True),  # baichuan: auto_map, in neither table
    ("tests/data/configs/llama-3.3-nemotron-super-49b-v1.json", True),  # nemotron-nas: auto_map, in neither
    ("deepseek-v3", False),  # auto_map, but transformers' own DeepseekV3Config reads it
    ("llama-3.1-8b", False),  # no auto_map, transformers' own
    ("tests/data/configs/mimo-7b.json", True),  # mimo: auto_map, in neither
])
def test_trust_remote_code_only_where_the_config_needs_it(model, needed):
    out = emit(model)
    assert ("--trust-remote-code" in out["argv"]) is needed
    assert any("review that code" in n for n in out["notes"]) is needed


def test_chatglm_and_kimi_k2_configs_need_no_flag_but_their_tokenizers_do():
    # configs: vLLM 0.33 registers chatglm and kimi_k2 (remote_code.check); tokenizers: their tokenizer_config.json
    # auto_map names ChatGLMTokenizer / TikTokenTokenizer, code transformers has no class for (model_specs/index.json)
    from kvplan.engines.remote_code import check

    # glm-4-9b-chat: ChatGLM4Tokenizer (a public copy of its tokenizer_config.json); Kimi-Linear: a tiktoken tokenizer
    # of its own (transformers PR #48250's docs, vLLM's recipe), whose class name kvplan infers and says so
    for model, config_type in (("chatglm3-6b", "chatglm"), ("kimi-k2", "kimi_k2"), ("glm-4-9b-chat", "chatglm"),
                               ("kimi-linear-48b-a3b", "kimi_linear")):
        assert check(config_type, True, "0.33.0").needed is False
        out = emit(model)
        assert "--trust-remote-code" in out["argv"]
        said = [n for n in out["notes"] if "the tokenizer ships its own code" in n]
        assert len(said) == 1
        assert ("the class name is inferred" in said[0]) is (model == "kimi-linear-48b-a3b")
    assert "ChatGLM4Tokenizer" in str(emit("glm-4-9b-chat")["notes"])


def test_trust_remote_code_for_a_release_before_the_tables_is_flagged_unchecked():
    # kimi_k2 is a vLLM 0.33 config class; for 0.11 kvplan cannot say, and keeps the flag with a note
    r = CliRunner().invoke(app, ["estimate", "kimi-k2", "--emit", "vllm@0.11", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)["emit"]
    assert "--trust-remote-code" in out["argv"]
    assert any("whether vLLM 0.11" in n and "not checked" in n for n in out["notes"])


def test_unknown_model_type_without_code_says_vllm_cannot_read_it(tmp_path):
    cfg = json.loads(open("model_specs/llama-3.1-8b.json").read())
    cfg["model_type"] = "made_up_decoder"
    cfg.pop("auto_map", None)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    out = emit(str(path))
    assert "--trust-remote-code" not in out["argv"]
    assert any("'made_up_decoder'" in n and "vLLM cannot read it" in n for n in out["notes"])


def test_0_34_memory_flags_and_the_extensible_kv_cache():
    # vLLM 0.34 config/vllm.py _resolve_extensible_kv_cache: kv_cache_memory_bytes turns the extensible KV cache
    # (sized after warmup, the CUDA default) off, so --kv-cache-memory-bytes keeps the planned pool; with only a
    # GPU the emitted --gpu-memory-utilization leaves it on and the note names the flag that turns it off
    fixed = emit("llama-3.1-8b", "--kv-memory", "10GiB")
    assert fixed["version"] == "0.34" and flag(fixed["argv"], "--kv-cache-memory-bytes") == str(10 * GIB)
    assert any("turns vLLM 0.34's extensible KV cache off" in n for n in fixed["notes"])
    gpu = emit("llama-3.1-8b", "--gpu", "h100", "--context", "8192")
    assert "--gpu-memory-utilization" in gpu["argv"]
    assert any("--no-enable-extensible-kv-cache" in n for n in gpu["notes"])
    old = json.loads(CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "--gpu", "h100", "--context", "8192",
                                              "--emit", "vllm@0.33", "--format", "json"]).stdout)["emit"]
    assert not any("extensible" in n for n in old["notes"])
