"""`kvplan fit` on a card below SM 8.0 under --engine vllm: the candidate kvplan calls "kv bf16" (the checkpoint's
dtype, --kv-dtype auto) is one vLLM 0.34 serves in float16 there, and its label says so; the search is unchanged.

Source (vLLM 0.34.0, engines/vllm_sm7.py): platforms/cuda.py CudaPlatformBase.supported_dtypes is [float16, float32]
from SM 6.0 to 7.x, so config/model.py _resolve_auto_dtype serves Qwen3-8B's bfloat16 checkpoint (torch_dtype
bfloat16) in float16 on a T4 (SM 7.5) and a V100 (SM 7.0), and the KV cache of --kv-cache-dtype auto takes the
model's dtype. SGLang 0.5.23 keeps bfloat16 there (engines/sglang_sm7.py), so its label is unchanged."""

import pytest

FIT = ["fit", "qwen3-8b", "-c", "32k", "-n", "8", "--max-gpus", "2", "--kv-dtype", "auto"]


@pytest.mark.parametrize("gpu", ["t4", "v100-16gb"])
def test_vllm_below_sm80_labels_bf16_as_served_float16(cli, gpu):
    code, out, err = cli(*FIT, "--gpu", gpu, "--engine", "vllm")
    assert code != 0  # 8 sequences of 32K do not fit two 16 GB cards: the closest one is named
    assert f"closest: 2 x {gpu} (tp 2, pp 1), kv bf16 (served as float16): " in err, err


def test_sglang_and_newer_cards_keep_the_plain_label(cli):
    code, out, err = cli(*FIT, "--gpu", "t4", "--engine", "sglang")
    assert code != 0 and "closest: 2 x t4 (tp 2, pp 1), kv bf16: " in err, err
    code, out, err = cli(*FIT, "-n", "64", "--gpu", "l4", "--engine", "vllm")
    assert code != 0 and "kv bf16: " in err and "served as" not in err, err


def test_label_only_not_the_search():
    # the search groups and ranks by set_label; the served dtype is shown beside it
    from kvplan.capacity.gpus import lookup
    from kvplan.fit.search import Candidate

    c = Candidate(lookup("t4"), 2, 1, "bf16", ("prefix",), (), None, kv_served_as="float16")
    assert c.set_label == "kv bf16 + prefix"
    assert c.shown_set_label == "kv bf16 (served as float16) + prefix"
    assert c.label().endswith(", kv bf16 (served as float16) + prefix")
