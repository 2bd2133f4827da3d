"""Claims the prose of docs/*.md makes about what a command prints or refuses, outside the example blocks docgen
refreshes (tests/test_docs_sync.py) and the README's (tests/test_readme_examples.py).

Each claim pairs a sentence of a page (compared with runs of whitespace collapsed, so rewrapping the page keeps it)
with the command it describes and what that command prints. A claim fails when the page no longer says it or the
command no longer prints it: then fix the page (or the code), and this table. Session 29's audit found each of these
stale (the page described an older release default or a refusal since lifted); the hand arithmetic beside a claim
checks the figure it rests on where one can be worked out without kvplan.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kvplan.docgen import run_cli

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _run(command: str) -> tuple[int, str]:
    return run_cli(shlex.split(command)[1:], columns=200)


# (page, what the page says, command, what the command prints (each a substring), exit code: 2 for a refusal)
CLAIMS = [
    # SGLang attention DP is planned for the families read (engines/sglang_dp.py DP_FAMILIES), not "not modelled"
    ("sglang.md", "Attention DP (`--dp`) is planned for the architectures read",
     "kvplan estimate deepseek-v3 --context 32k --gpu h200 --tp 8 --dp 8 --engine sglang",
     ["over the 8 DP ranks (each its own scheduler and pool of 233,521 tokens): 56 requests"], 0),
    ("sglang.md", "Attention DP (`--dp`) is refused for it: `ZayaForCausalLM` is not among",
     "kvplan estimate {zaya} --engine sglang --kv-memory 10GiB --tp 2 --dp 2",
     ["not ZayaForCausalLM"], 2),
    # engines_side_by_side.py's figures: the engines' requests of 8K on one H100
    ("sglang.md", "Llama-3.1-8B 54 / 59.53 / 50.45",
     "kvplan estimate llama-3.1-8b --gpu h100 --context 8k --engine vllm",
     ["Maximum concurrency for 8,192 tokens per request: 59.53x"], 0),
    ("sglang.md", "GLM-4.7-Flash 20.63 / 24.29",
     "kvplan estimate glm-4.7-flash --gpu h100 --context 8k --engine sglang", ["held at once: 20 (20.63x)"], 0),
    ("sglang.md", "GLM-4.7-Flash 20.63 / 24.29",
     "kvplan estimate glm-4.7-flash --gpu h100 --context 8k --engine sglang@0.5.9", ["held at once: 24 (24.29x)"], 0),
    ("sglang.md", "Qwen3.6-27B 9 / 15.65",
     "kvplan estimate qwen3.6-27b --gpu h100 --context 8k --engine sglang@0.5.9", ["held at once: 15 (15.65x)"], 0),
    # 0.5.9: 3 states of 61.4 MiB, 3 slots a request (max_running_requests <= states // 3 = 1); 0.5.23 refuses
    ("sglang.md", "leave room for 3 states of 61.4 MiB under 0.5.9 (1 request), no longer starts under 0.5.23",
     "kvplan estimate qwen3.5-35b-a3b --gpu h100 --context 8k --engine sglang@0.5.9",
     ["max_mamba_cache_size: 3,", "held at once: 1 (1.00x)"], 0),
    ("sglang.md", "no longer starts under 0.5.23",
     "kvplan estimate qwen3.5-35b-a3b --gpu h100 --context 8k --engine sglang",
     ["no room for Qwen/Qwen3.5-35B-A3B's recurrent states (61.4 MiB a request)"], 2),
    # Gemma 3 under SGLang: no pipeline stages, so the 6-GPU TP 2 x PP 3 is out and TP 8 is the first option
    ("sglang.md", "SGLang's pool (every layer full) needs 8, TP 8 (26.39 requests; 26.44 under 0.5.9",
     "kvplan fit gemma-3-27b --context 32k --concurrency 16 --gpu h100 --engine sglang --format markdown",
     ["| 1 | 8 x h100-sxm | 8 x 1 | bf16 | 173 | 26.39 |"], 0),
    ("sglang.md", "the 6-GPU TP 2 x PP 3 that would hold 16 is screened out",
     "kvplan estimate gemma-3-27b --context 32k --batch 16 --gpu h100 --tp 2 --pp 3 --engine sglang",
     ["SGLang 0.5.23 refuses --pp 3 for Gemma3ForConditionalGeneration"], 2),
    # fit --dp-ep under vLLM 0.34: 8 DP ranks of 19.11 requests each = 152.86
    ("fit.md", "`dp 8 x tp 1 +EP` (160; vLLM 8 x 19.11 = 152.86)",
     "kvplan fit deepseek-v3 --context 32k --concurrency 100 --gpu h200 --kv-dtype auto --engine vllm --dp-ep "
     "--format markdown",
     ["| 8 x h200 | dp 8 x tp 1 +EP | bf16 | 160 | 152.86 |", "| 7 x h200 | 1 x 7 | bf16 | 152 | 133.58 |",
      "| 8 x h200 | dp 2 x tp 1 x pp 4 +EP | bf16 | 202 | 188.40 |"], 0),
    ("fit.md", "others (Mixtral, ...) get the line",
     "kvplan fit mixtral-8x7b --context 32k --concurrency 50 --gpu h200 --engine sglang --dp-ep",
     ["--dp-ep: no data-parallel + expert-parallel split searched", "not MixtralForCausalLM"], 0),
    ("fit.md", "Qwen2 / Qwen3 MoE", "kvplan fit qwen3-30b-a3b --context 32k --concurrency 50 --gpu h200 "
     "--engine sglang --dp-ep --format markdown", ["| 2 x h200 | dp 2 x tp 1 +EP |"], 0),
    # Gemma 3n's towers are counted (vision_gemma3n.py): 983,281,504 parameters x 2 B = 1,966,563,008 B
    ("weights.md", "Gemma 3n's MobileNetV5 and audio towers are counted",
     "kvplan weights gemma-3n-e4b --format markdown", ["| vision | 1,966,563,008 |", "MobileNetV5 (timm mobilenetv5_300m_enc)"], 0),
]


@pytest.fixture(scope="module")
def zaya(tmp_path_factory):
    import json

    from test_sglang_zaya import ZAYA_40

    path = tmp_path_factory.mktemp("zaya") / "config.json"
    path.write_text(json.dumps(ZAYA_40))
    return str(path)


@pytest.mark.parametrize("page,said,command,printed,code", CLAIMS, ids=[f"{c[0]}: {c[1][:40]}" for c in CLAIMS])
def test_the_page_says_what_the_command_prints(page, said, command, printed, code, zaya, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert _flat(said) in _flat((DOCS / page).read_text(encoding="utf-8")), f"docs/{page} no longer says: {said}"
    got_code, output = _run(command.format(zaya=zaya))
    assert got_code == code, output[-1500:]
    flat = _flat(output)
    for text in printed:
        assert _flat(text) in flat, f"{command}: no longer prints {text!r}\n{output[-1500:]}"


def test_the_stale_sentences_are_gone():
    # what the pages said before session 29's audit, each contradicted by a claim above
    gone = {"sglang.md": ["DP attention (SGLang asserts attention TP = TP) is not modelled for any model",
                          "Not in the prediction: DP attention", "(vLLM 0.33, SGLang 0.5.23)"],
            "fit.md": ["Six H200s cannot hold the weights", "(DeepSeek-V2 / V3) get them", "8 x 18.29 = 146.33"],
            "weights.md": ["Gemma 3n's MobileNetV5 and audio towers are not counted"]}
    for page, sentences in gone.items():
        text = _flat((DOCS / page).read_text(encoding="utf-8"))
        for sentence in sentences:
            assert _flat(sentence) not in text, f"docs/{page}: {sentence}"


def test_fit_md_worked_example_arithmetic():
    # Llama-3.1-70B, 128K, bf16 on H200 under vLLM 0.34 (utilization 1.0, reserve 2 GiB): the driver's 139.81 GiB.
    usable = 139.81 - 2
    seq = 80 * 8 * 128 * 2 * 2 * 131_072 / 2**30  # 40 GiB a sequence
    assert seq == 40
    assert 5 * usable < 131.4 + 16 * seq < 6 * usable  # five cannot, six can
    stage = 40 * 27 / 80 / 2  # TP 2 x PP 3: 27 / 27 / 26 layers, half the KV heads: 6.75 GiB a sequence a GPU
    assert int((usable - 21.90) / stage) == 17  # the example's conc column (weights per GPU 21.90 from the table)
    assert int((usable - 32.86) / (seq / 2 / 4)) == 20  # fp8 at TP 4: 5 GiB a sequence a GPU
    text = _flat((DOCS / "fit.md").read_text(encoding="utf-8"))
    assert "six can at TP 2 x PP 3" in text and "| 1 | 6 x h200 | 2 x 3 | bf16 | 17 |" in text
