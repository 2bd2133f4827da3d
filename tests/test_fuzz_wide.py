"""Crashes found by the wide fuzz (benchmarks/fuzz_configs.py: every reader's input, the engine options, mutated
start-up logs through `kvplan calibrate`), each replayed here once: one clear line and exit 1/2 now, never an
internal error. Each case is a real log of tests/data (or a test config) with one figure edited the way the fuzz
edited it; a number of hundreds of digits is what float() reads as infinity and int() refuses past 4,300 digits.
Plus a few mutated logs and inputs drawn as the benchmark draws them, to keep the harness itself working.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings

import config_fuzz
import log_fuzz

DIGITS_400 = "9" * 400  # float(): inf (past 1.8e308)
DIGITS_5000 = "9" * 5000  # int(): ValueError (past Python's 4,300-digit limit)


def _edited(name: str, pattern: str, replacement: str) -> bytes:
    text = log_fuzz.LOG_PATHS[name].read_text(encoding="utf-8")
    edited, count = re.subn(pattern, lambda m: replacement, text, count=1)
    assert count == 1, f"{pattern!r} is not in {name}"
    return edited.encode()


# (log, what the edit replaces, with what, extra arguments, words of the one line)
LOG_CASES = {
    # vllm_log.py parse_log: int(float('inf')) of a setting (OverflowError)
    "max_seq_len_inf": ("v0191_qwen3_8b_a100_40gb_tokenkaki", r"max_seq_len=\d+", f"max_seq_len={DIGITS_400}", (),
                        "line 11, after 'dtype=torch.bfloat16, max_seq_len=': a figure vLLM prints as a number reads "
                        "'99999999999999999999... (400 characters)'"),
    # vllm_log.py parse_log: the concurrency line's length (OverflowError)
    "concurrency_len_inf": ("v0191_qwen3_8b_a100_40gb_tokenkaki", r"Maximum concurrency for [0-9,]+ tokens",
                            f"Maximum concurrency for {DIGITS_400} tokens", (), "(400 characters)"),
    # vllm_profile.py requested_bytes: int(total x inf) of the v0 profiling line's utilization (OverflowError)
    "utilization_inf": ("v06_llama3_8b_a100_40gb", r"gpu_memory_utilization \(0\.90\)",
                        f"gpu_memory_utilization ({DIGITS_400})", (), "(400 characters)"),
    # vllm_rules.py resolve: int() of a 5,000-digit version part (ValueError)
    "version_5000_digits": ("v0191_qwen3_8b_a100_40gb_tokenkaki", r"LLM engine \(v0\.19\.1\)",
                            f"LLM engine (v0.{DIGITS_5000})", (),
                            "the version it prints, '0.999999999999999999... (5,002 characters)', is not a vLLM release"),
    # vllm_log.py: the v0 refusal's token count, past float() (OverflowError where int() read it)
    "v0_blocks_inf": ("v06_llama3_8b_a100_40gb", r"# GPU blocks: 5691", f"# GPU blocks: {DIGITS_400}", (),
                      "line 7, after 'gpu_executor.py:76] # GPU blocks:': a figure vLLM prints as a number reads "
                      "'99999999999999999999... (401 characters)'"),  # the comma after it is read too
    # vllm_log.py parse_log: int() of the refusal's 5,000-digit estimate (ValueError)
    "refused_estimate_5000_digits": ("v010_fp8_kv_221k_refused_issue25350", r"estimated maximum model length is \d+",
                                     f"estimated maximum model length is {DIGITS_5000}", (),
                                     "after 'the estimated maximum model length is': a figure vLLM prints as a number "
                                     "reads '99999999999999999999... (5,000 characters)'"),
    # sglang_calibrate.py _tokens: int(inf GiB) of 'avail mem' (OverflowError)
    "sglang_avail_inf": ("sglang:v041_llama31_8b_h100_docs", r"avail mem=78\.81 GB", f"avail mem={DIGITS_400} GB", (),
                         "'Load weight begin' avail mem reads '99999999999999999999... (400 characters)'"),
    # sglang_log.py parse: int() of a 5,000-digit TP rank (ValueError)
    "sglang_rank_5000_digits": ("sglang:main2026_qwen35_397b_ktransformers_rtx4090_tp2", r"TP0\]",
                                f"TP{DIGITS_5000}]", (), "the TP rank reads"),
    # sglang_log.py _kv: int() of a 5,000-digit #tokens (ValueError)
    "sglang_kv_tokens_5000_digits": ("sglang:main2026_qwen35_397b_ktransformers_rtx4090_tp2", r"#tokens: 580364",
                                     f"#tokens: {DIGITS_5000}", (), "the KV line's #tokens reads"),
    # sglang_log.py _server_args: int() of a 5,000-digit tp_size (ValueError)
    "sglang_tp_size_5000_digits": ("sglang:v052rc2_grok2_fp8_h100_tp8", r"tp_size=8", f"tp_size={DIGITS_5000}", (),
                                   "server_args tp_size reads '99999999999999999999... (5,000 characters)'"),
    # sglang_log.py _server_args: float('1.2.3') of mem_fraction_static (ValueError)
    "sglang_mem_fraction_text": ("sglang:v052rc2_grok2_fp8_h100_tp8", r"mem_fraction_static=[0-9.]+",
                                 "mem_fraction_static=1.2.3", (), "server_args mem_fraction_static reads '1.2.3'"),
}


@pytest.mark.parametrize("case", list(LOG_CASES))
def test_an_edited_log_figure_is_one_line_naming_it(case, tmp_path):
    name, pattern, replacement, extra, words = LOG_CASES[case]
    outcome = log_fuzz.run_calibrate(name, _edited(name, pattern, replacement), extra, tmp_path)
    assert outcome.crash is None, f"{outcome.crash} at {outcome.site}"
    assert outcome.code in (1, 2) and words in outcome.stderr and str(tmp_path) in outcome.stderr, outcome.stderr


def test_zaya_per_layer_heads_of_the_wrong_type_are_one_line(tmp_path):
    # zaya_layout.py megatron_dims: a set of the per-half-layer entries met a list entry (TypeError: unhashable)
    files = config_fuzz.SOURCES["zaya-megatron"]()
    files["config.json"]["cca_num_q_heads"][2] = [8]
    outcome = config_fuzz.run_inputs(files, config_fuzz.VARIANTS[1], tmp_path)
    assert outcome.crash is None, f"{outcome.crash} at {outcome.site}"
    assert outcome.code == 1 and "cca_num_q_heads[2] is [8]; ZAYA's per-half-layer head counts are integers" \
        in outcome.stderr and "config.json" in outcome.stderr


# -- a few draws of the benchmark's own, so its harness stays in working order -----------------------------------

FEW = settings(max_examples=6, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.function_scoped_fixture])


@FEW
@given(case=log_fuzz.mutated_logs())
def test_mutated_logs_calibrate_or_fail_cleanly(case, tmp_path):
    name, edits, data, extra = case
    outcome = log_fuzz.run_calibrate(name, data, extra, tmp_path)
    assert outcome.crash is None, (f"{name} {'; '.join(e.describe() for e in edits)} {' '.join(extra)}: "
                                   f"{outcome.crash} at {outcome.site}")


@pytest.mark.parametrize("name", [n for n in config_fuzz.SOURCE_NAMES if not n.startswith(("spec:", "data:"))])
def test_every_other_reader_input_answers_unmutated(name, tmp_path):
    """The wide fuzz's inputs that are not a config.json of model_specs or tests/data/configs (those have their
    own baseline tests) give a result as written: a mutation then starts from an input kvplan reads."""
    outcome = config_fuzz.run_inputs(config_fuzz.SOURCES[name](), (), tmp_path)
    assert outcome.code == 0 and outcome.crash is None, outcome.stderr


@pytest.mark.parametrize("field", ["window_sizes", "position_layers"])
def test_a_null_domyn_edge_per_layer_list_is_one_line(field, tmp_path):
    # domyn_edge.py _windows: `for ... in enumerate(None)` (TypeError) when the list is null
    files = config_fuzz.SOURCES["data:domyn-edge-defaults-handwritten"]()
    files["config.json"][field] = None
    outcome = config_fuzz.run_inputs(files, (), tmp_path)
    assert outcome.crash is None, f"{outcome.crash} at {outcome.site}"
    assert outcome.code == 1 and f"config.json: {field} is null; DomynEdge reads one entry a layer" in outcome.stderr


def test_a_gpu_name_of_thousands_of_digits_is_read_in_linear_time(tmp_path):
    # vllm_log.py parse_log: the GPU-name pattern (a lazy run, \d+, a lazy run) backtracked over every split of a
    # 5,000-digit run that no terminator follows: minutes (the fuzz's 2 s limit stopped it). The comment line
    # "# GPU: NVIDIA A100-SXM4-40GB (nvidia-smi ..." has " (" after the name, which ends no name.
    name = "v092_qwen3_8b_a100_40gb_tokenkaki_early"
    log_fuzz.run_calibrate(name, log_fuzz.LOG_PATHS[name].read_bytes(), (), tmp_path)  # imports: not timed
    outcome = log_fuzz.run_calibrate(name, _edited(name, r"NVIDIA A100-SXM4", f"NVIDIA A100-SXM{DIGITS_5000}"), (),
                                     tmp_path)
    assert outcome.crash is None, f"{outcome.crash} at {outcome.site}"
    assert outcome.code == 0 and outcome.seconds < 1.0  # 0.02 s warm here; the old pattern: minutes
