"""Fuzzing `kvplan calibrate LOG` with mutated copies of the real start-up logs in tests/data.

Shared by benchmarks/fuzz_configs.py (--calibrate: thousands of mutated logs) and tests/test_fuzz_configs.py (a
few). A mutation works on the log's bytes: cut it short, drop or repeat lines, put junk where a number was (NaN,
Infinity, a negative, a huge or a 5,000-digit number, text), or put bytes that are not UTF-8 (or a NUL) in a line.
Each mutated log runs through `kvplan calibrate` in-process with the arguments that make the real log reproduce
(LOGS: the --model its tests give where the log names none kvplan can read offline), sometimes with a what-if or a
`--set` of junk. The oracle is config_fuzz.run_argv's: a result or one kvplan error line, within 2 s.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

import config_fuzz

ROOT = Path(__file__).resolve().parents[1]
VLLM = ROOT / "tests" / "data" / "vllm_logs"
SGLANG = ROOT / "tests" / "data" / "sglang_logs"
QWEN3_06B = str(ROOT / "tests" / "data" / "configs" / "qwen3-0.6b-shape.json")

# log: the arguments its tests give (the model where the log names none kvplan reads offline); every log of the
# two folders is here (a log added without an entry runs with none: the bare log is fuzzed too)
_MODEL = {
    "v01011_qwen2_7b_a100_80gb_util025_flashinfer": "qwen2.5-7b",
    "v01011_qwen2_7b_a100_80gb_util05_flashinfer": "qwen2.5-7b",
    "v01011_qwen2_7b_tp2_a100_80gb_util05_flashinfer": "qwen2.5-7b",
    "v0101_qwen3_coder_480b_fp8_dp8_refused_recipes12_a": "qwen3-30b-a3b",
    "v0101_qwen3_coder_480b_fp8_dp8_refused_recipes12_b": "qwen3-30b-a3b",
    "v0102_qwen3_235b_fp8_tp8_ep_l40s_note": "qwen3-30b-a3b",
    "v010_fp8_kv_100k_issue25350": "qwen3-30b-a3b",
    "v010_fp8_kv_221k_refused_issue25350": "qwen3-30b-a3b",
    "v010_gpt_oss_120b_h100_no_memory": "gpt-oss-120b",
    "v010_qwen3_14b_lmcache1739": "qwen3-8b",
    "v010dev_gemma3_4b_b200_breakdown_pr21489": "gemma-3-4b",
    "v0190_qwen3_06b_rtx3060_retriva": QWEN3_06B,
    "v0202_qwen36_35b_a3b_nvfp4_mtp2_spark": "qwen3.5-35b-a3b",
    "v0210_qwen3_8b_rtxa5000_lmcache3430": "qwen3-8b",
    "v0220_qwen36_35b_a3b_prismaquant_mtp3": "qwen3.5-35b-a3b",
    "v0221rc_qwen36_35b_a3b_nvfp4_mtp2_spark": "qwen3.5-35b-a3b",
    "v024_qwen36_35b_a3b_nvfp4_fp8kv_club3090_612": "qwen3.5-35b-a3b",
    "v026_qwen25_05b_16gb_v2_streaming_notes": "qwen2.5-7b",
    "v0271_qwen25_05b_24gb_wsl_notes": "qwen2.5-7b",
    "v0271_qwen25_05b_4090_llm_class_notes": "qwen2.5-7b",
    "v0271_qwen3_32b_pp2_rtxpro6000_blog": "qwen3-8b",
    "v0271_qwen3_32b_tp1_rtxpro6000_no_memory_blog": "qwen3-8b",
    "v0271_qwen3_32b_tp2_rtxpro6000_blog": "qwen3-8b",
    "v027_qwen3_235b_a22b_fp8_tp4_rtxpro6000_runbook": "qwen3-30b-a3b",
    "v05_llama3_70b_refused_openrlhf": "llama-3.1-70b",
    "v06_llama3_8b_a100_40gb": "llama-3.1-8b",
    "v071_v1_llama31_70b_w8a8_pr12569": "llama-3.1-70b",
    "v07_v1_blocks_to_tokens_pr13596": "llama-3.1-8b",
    "v09_qwen3_235b_a22b_fp8_tp4_lmcache": "qwen3-30b-a3b",
    "v0_llama31_8b_rtx3090_20k": "llama-3.1-8b",
    "v0_llama31_8b_rtx3090_29k_refused": "llama-3.1-8b",
    # SGLang logs
    "main2026_qwen35_397b_ktransformers_rtx4090_tp2": "qwen3.5-35b-a3b",
    "main2026_qwen3_14b_rtx4090_tp4": "qwen3-8b",
    "v0410_qwen3_06b_rtx5080": QWEN3_06B,
    "v042_r1_distill_qwen_7b_rtx3090": "qwen2.5-7b",
    "v043post4_qwq_32b_l4_tp4": "qwen2.5-7b",
    "v044_llama31_8b_h100_fa3_pr4760": "llama-3.1-8b",
    "v049_llama31_8b_24gb_thesis": "llama-3.1-8b",
    "v052rc2_grok2_fp8_h100_tp8": "llama-3.1-70b",
    "v053_deepseek_v32_exp_b200_dp8_pr11309": "deepseek-v3.2-exp",
    "v058post1_kimi_k25_mi355x_tp8": "kimi-k2",
}
LOG_PATHS = {p.stem if p.parent == VLLM else f"sglang:{p.stem}": p
             for p in sorted(VLLM.glob("*.log")) + sorted(SGLANG.glob("*.log"))}
LOG_NAMES = tuple(LOG_PATHS)


def base_args(name: str) -> tuple[str, ...]:
    model = _MODEL.get(name.removeprefix("sglang:"))
    return ("--model", model) if model else ()


# what-ifs that apply to a vLLM log (an SGLang log takes -t, --max-model-len, --block-size)
WHAT_IFS = ((), ("-t", "fp8"), ("--max-model-len", "64k"), ("--block-size", "32"), ("--as-version", "0.11"),
            ("--as-version", "0.33"), ("--num-speculative-tokens", "0"), ("--gpu", "h100"), ("--tp", "2"))
SGLANG_WHAT_IFS = ((), ("-t", "fp8_e4m3"), ("--max-model-len", "64k"), ("--block-size", "32"), ("--version", "0.5.23"))
SET_KEYS = ("num_hidden_layers", "num_key_value_heads", "num_attention_heads", "head_dim", "hidden_size",
            "max_position_embeddings", "vocab_size", "sliding_window", "torch_dtype")

JUNK_NUMBERS = ("nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "-0.0", "1e400", "1e308", "99999999999999999999",
                "9" * 5000, "", "abc", "0x10", "1,000", "1.2.3", "\u00b2", "\u0663", "1_000")
BAD_BYTES = (b"\xff\xfe", b"\x80", b"\xc3", b"\x00", b"\xed\xa0\x80", b"\r", b"\x1b[31m")
_NUMBER = re.compile(rb"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Edit:
    op: str  # "cut" | "drop" | "repeat" | "number" | "bytes"
    at: int  # a byte offset (cut, bytes), a line (drop, repeat) or the number's index (number)
    value: object = None  # lines dropped / times repeated, the junk number, the bytes

    def describe(self) -> str:
        value = "" if self.value is None else repr(self.value)
        return f"{self.op}@{self.at}{'=' + value[:40] if value else ''}"


def apply_edit(data: bytes, edit: Edit) -> bytes:
    if edit.op == "cut":
        return data[:edit.at % (len(data) + 1)]
    if edit.op == "bytes":
        at = edit.at % (len(data) + 1)
        return data[:at] + edit.value + data[at:]
    if edit.op == "number":
        found = list(_NUMBER.finditer(data))
        if not found:
            return data
        match = found[edit.at % len(found)]
        return data[:match.start()] + edit.value.encode() + data[match.end():]
    lines = data.split(b"\n")
    at = edit.at % max(len(lines), 1)
    if edit.op == "drop":
        return b"\n".join(lines[:at] + lines[at + edit.value:])
    assert edit.op == "repeat"
    return b"\n".join(lines[:at] + [lines[at]] * edit.value + lines[at:])


EDITS = st.one_of(
    st.builds(Edit, st.just("cut"), st.integers(0, 2**20)),
    st.builds(Edit, st.just("drop"), st.integers(0, 2**12), st.integers(1, 20)),
    st.builds(Edit, st.just("repeat"), st.integers(0, 2**12), st.sampled_from([1, 2, 5, 50])),
    st.builds(Edit, st.just("number"), st.integers(0, 2**12), st.sampled_from(JUNK_NUMBERS)),
    st.builds(Edit, st.just("number"), st.integers(0, 2**12), st.sampled_from(JUNK_NUMBERS)),
    st.builds(Edit, st.just("bytes"), st.integers(0, 2**20), st.sampled_from(BAD_BYTES)),
)


@st.composite
def mutated_logs(draw, names=LOG_NAMES):
    """(log name, edits, mutated bytes, extra arguments: a what-if and at times a --set of junk)."""
    name = draw(st.sampled_from(names))
    data = LOG_PATHS[name].read_bytes()
    edits = tuple(draw(st.lists(EDITS, min_size=1, max_size=4)))
    for edit in edits:
        data = apply_edit(data, edit)
    extra = draw(st.sampled_from(SGLANG_WHAT_IFS if name.startswith("sglang:") else WHAT_IFS))
    if not name.startswith("sglang:") and draw(st.integers(0, 3)) == 0:
        text = draw(st.one_of(st.sampled_from(config_fuzz.OVERRIDE_TEXTS), st.sampled_from(JUNK_NUMBERS)))
        extra += ("--set", f"{draw(st.sampled_from(SET_KEYS))}={text}")
    return name, edits, data, extra


def run_calibrate(name: str, data: bytes, extra: tuple, folder: Path) -> config_fuzz.Outcome:
    """`kvplan calibrate LOG BASE_ARGS EXTRA --format json` on the mutated bytes, classified (offline: a log that
    names a Hub repo must not reach the network)."""
    path = folder / "server.log"
    path.write_bytes(data)
    saved = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        return config_fuzz.run_argv(["calibrate", str(path), *base_args(name), *extra, "--format", "json"])
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved
