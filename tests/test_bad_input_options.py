"""Option values read exactly or refused with one line (exit 2)."""

from __future__ import annotations

import pytest

from kvplan.engines.vllm_rules import resolve


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("engine", ["vllm@0.11@0.12", "vllm@0.11x", "vllm@0.11.0;rm", "vllm@0.11.0+", "vllm@.11"])
def test_engine_version_with_trailing_junk_is_refused(cli, engine):
    # 'vllm@0.11@0.12' ran as 0.11 without a word: anything after a PEP 440 version is an error now
    code, _, err = cli("estimate", "llama-3.1-8b", "--engine", engine, "--kv-memory", "10GiB")
    assert code == 2 and "unknown vLLM version" in one_line(err)


@pytest.mark.parametrize("version, rules, note", [
    ("0.11.0", "0.11", None),
    ("0.11.0.post1", "0.11", None),  # a post-release is its release
    ("0.11.0+cu128", "0.11", None),  # a local build label changes no rule
    ("0.11.0rc1", "0.11", "pre-release"),  # read as its release, and said
    ("0.12.0.dev3", "0.12", "pre-release"),
    ("0.24.0.dev3+g1234", "0.23", "pre-release"),  # a dev build before 0.24.0: 0.23's rules, with a note
    ("0.11.1rc6.dev42+g2b2d4c6d1.d20251120", "0.11.1", "pre-release"),  # a nightly's full string
    ("0.9.2rc2.dev45+g1234", "0.11", "oldest release"),  # logs of older builds print these
    ("0.6.4.post2.dev394+g1234", "0.11", "oldest release"),
])
def test_pep440_version_tails(version, rules, note):
    got, said = resolve(version)
    assert got.version == rules
    assert (said is None) if note is None else (note in said)


LOG = "tests/data/vllm_logs/v0191_qwen3_8b_a100_40gb_tokenkaki.log"


@pytest.mark.parametrize("args, words", [
    # Qwen3-8B: 32 query heads, 8 KV heads; Llama-3.1-8B: 32 layers. Both ran before: calibrate
    # printed a what-if at --tp 3 and weights split 32 heads three ways or 32 layers into 40 stages
    (["calibrate", LOG, "--model", "qwen3-8b", "--tp", "3"], ["--tp 3 does not divide the 32 attention heads"]),
    (["calibrate", LOG, "--model", "qwen3-8b", "--tp", "1000000"], ["--tp 1000000"]),
    (["weights", "llama-3.1-8b", "--tp", "3"], ["--tp 3 does not divide the 32 attention heads"]),
    (["weights", "llama-3.1-8b", "--pp", "40"], ["--pp 40 exceeds the model's 32 layers"]),
])
def test_parallelism_the_engines_refuse_is_refused_everywhere(cli, args, words):
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and all(w in line for w in words), line


@pytest.mark.parametrize("spec, words", [
    # each ran before: mqa:2 planned ONE head without a word, cla:33 "33 layers per cache" on a
    # 32-layer model, offload with no active sequence put 0 B on the GPU while decode read 512 MiB
    ("mqa:2", ["takes no value", "gqa:N"]),
    ("mqa:heads=2", ["takes no value"]),
    ("cla:33", ["33 layers per cache", "32 layers", "from 2 to 32"]),
    ("offload:cpu=64GiB,active=0", ["active must be a positive integer"]),
])
def test_technique_values_that_mean_nothing_are_refused(cli, spec, words):
    code, _, err = cli("estimate", "llama-3.1-8b", "-t", spec, "--gpu", "h100")
    line = one_line(err)
    assert code == 2 and all(w in line for w in words), line


def test_cla_at_the_layer_count_is_one_cache(cli):
    # cla:32 on Llama-3.1-8B's 32 layers: one layer's cache, 8 KV heads x 128 x 2 x 2 B = 4,096 B per token
    code, out, err = cli("estimate", "llama-3.1-8b", "-t", "cla:32", "--context", "1024", "--format", "json")
    assert code == 0, err
    import json
    assert json.loads(out)["bytes_per_token"] == 4_096


@pytest.mark.parametrize("args, words", [
    # each ran before: --timeout 0 and nan were accepted (a distributed rank would fail at once or
    # wait forever); fit --plot x.txt ended in an internal error after the search, --plot x wrote
    # x.png; --max-gpus 100000 searched for hours; --price h100=nan ranked by NaN; --top -1 said
    # "no valid TP/PP split"; --max-kv-gib 0 and --max-decode-ms -1 said no deployment meets them
    (["bench", "--technique", "fp8", "--timeout", "0"], ["--timeout", "must be > 0"]),
    (["bench", "--technique", "fp8", "--timeout", "nan"], ["--timeout", "finite"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--plot", "fit.txt"], ["--plot fit.txt", "unsupported file type '.txt'", ".png, .svg"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--plot", "fit"], ["unsupported file type '(none)'"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "100000"], ["--max-gpus 100,000", "at most 1,024"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--price", "h100=nan"], ["--price 'h100=nan'", "finite"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--price", "h100=-1"], ["0 or more"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--top", "-1"], ["--top -1"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--max-kv-gib", "0"], ["--max-kv-gib", "must be > 0"]),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--max-decode-ms", "-1"], ["--max-decode-ms", "must be > 0"]),
    # 11 GPU kinds x 7,262 splits (1,024 GPUs) x 8 dtypes x 432 technique sets: ran for minutes, then out of memory
    (["fit", "llama-3.1-8b", "--max-gpus", "1024", "--kv-dtype", "auto,fp8,int8,int4,int2,bf16,fp16,fp32", "--allow",
      "fp8,kivi,evict:0.5,int4,int8,int2,page:16,window:1024,evict:0.25,page:32,cla:2,gqa:2,mqa"],
     # 40 catalog GPU kinds (Dec 2026: + A10G, T4, two V100s, six GeForce cards, MI355X) x 7,262 x 8 x 432
     # = 290,480 x 3,456 = 1,003,898,880
     ["1,003,898,880 deployments", "40 GPU kinds x 7,262 TP/PP splits x 8 KV dtypes x 432 technique sets",
      "above the limit of 4,000,000", "narrow it"]),
])
def test_bench_and_fit_numbers_that_mean_nothing_are_refused(cli, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and all(w in line for w in words), line
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("spec", ["window:100000000000000000000", "window:" + "9" * 40, "evict:2000000000000"])
def test_a_technique_count_too_large_says_so(cli, spec):
    # "tokens must be a positive integer, got '100000000000000000000'" said the number was not positive
    code, _, err = cli("estimate", "llama-3.1-8b", "-t", spec)
    line = one_line(err)
    assert code == 2 and "is above the limit of 2^40 = 1,099,511,627,776 tokens" in line, line


@pytest.mark.parametrize("args", [
    ["estimate", "llama-3.1-8b", "--tp", "abc"],  # click's own type check: was Usage / Try / blank / Error
    ["estimate", "llama-3.1-8b", "--bogus"],
    ["estimate", "deepseek-v3", "--engine", "vllm", "--mtp", "--num-speculative-tokens", "1.5"],
    ["calibrate"],
])
def test_option_parsing_errors_are_one_line(cli, args):
    code, _, err = cli(*args)
    assert code == 2 and one_line(err).startswith("kvplan: error:") and "-h'" in err
