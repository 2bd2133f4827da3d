"""Three questions the second wild-config sweep left open, settled from the engines' and transformers' source.

tests/data/configs/qwen3-vl-30b-a3b-instruct-transformers5.json: Qwen3-VL-30B-A3B-Instruct as transformers 5.7's
to_dict prints it (code index id 62501178117): text_config.tie_word_embeddings true (Qwen3VLMoeTextConfig's
default) beside the wrapper's false; the checkpoint ships lm_head.weight. The MiMo-V2 and Kimi K3 configs are the
ones other tests use (mimo-v2.6-flash.json, kimi-k3.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang import pool
from kvplan.engines.sglang_rules import LATEST, RULES
from kvplan.errors import PlanError
from kvplan.sources import load_model
from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
QWEN3_VL_TF5 = CONFIGS / "qwen3-vl-30b-a3b-instruct-transformers5.json"


def test_qwen3_vl_moe_head_follows_the_wrapper_flag():
    # transformers 5.25 Qwen3VLMoeForConditionalGeneration ties by the wrapper's config (False), vLLM 0.34
    # VllmConfig.with_hf_config copies that flag into the text config, SGLang 0.5.23 qwen3_vl.py likewise; the
    # checkpoint holds lm_head.weight. Text model by hand: per layer q 2,048 x 4,096, k and v 2,048 x 512 each,
    # o 4,096 x 2,048, q/k norms 2 x 128, router 2,048 x 128, 128 experts x 3 x 2,048 x 768, two norms of 2,048;
    # embeddings and an own head 151,936 x 2,048 each, the final norm. kvplan tied the head (30,220,957,696)
    layer = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 2048 * 128 + 128 * 3 * 2048 * 768 + 2 * 2048
    assert layer == 623_120_640
    d = estimate_json(str(QWEN3_VL_TF5))
    assert d["model"]["param_count"] == 48 * layer + 2 * 151936 * 2048 + 2048 == 30_532_122_624


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_qwen3_vl_moe_engines_load_the_same_head_from_both_config_forms(engine, tmp_path):
    # the original config.json (transformers 4.57) writes no text_config.tie_word_embeddings: the same checkpoint,
    # so both engines size the same pool from either form (vLLM 0.34 H100 TP 2: 944,448 tokens; the transformers 5
    # form gave 950,784 before, the head's 311,164,928 parameters / 2 ranks x 2 B = 311 MB not counted)
    raw = json.loads(QWEN3_VL_TF5.read_text())
    raw["text_config"].pop("tie_word_embeddings")
    original = tmp_path / "qwen3-vl-original.json"
    original.write_text(json.dumps(raw))
    args = ("--gpu", "h100", "--tp", "2", "--engine", engine)
    tf5, orig = estimate_json(str(QWEN3_VL_TF5), *args), estimate_json(str(original), *args)
    assert tf5["engine"]["gpu_kv_cache_tokens"] == orig["engine"]["gpu_kv_cache_tokens"]
    assert tf5["capacity"]["weight_bytes_per_gpu"] == orig["capacity"]["weight_bytes_per_gpu"]


def test_sglang_0523_swa_floor_uses_sliding_window_size():
    # SGLang 0.5.23 HybridSWAPoolConfigurator refuses a sliding-window pool of at most sliding_window_size +
    # page_size tokens (validate_swa_pool_size), reading ModelConfig.sliding_window_size: MiMo-V2's 128, where the
    # model (and kvplan's plan) keeps 129. swa = int(full x 0.8), page 1: full 162 -> 129 <= 128 + 1, refused;
    # full 163 -> 130 > 129, served (a 129 window would refuse it too)
    model = load_model(str(CONFIGS / "mimo-v2.6-flash.json"))
    assert {c.policy.window_tokens for layer in model.layers for c in layer.caches} >= {129}
    rules = RULES[LATEST]
    with pytest.raises(PlanError, match=r"holds 129 tokens.*\(128\) \+ page_size \(1\)"):
        pool(model, rest_bytes=40 * 2**30, context_len=100, max_total_tokens=162, rules=rules)
    got = pool(model, rest_bytes=40 * 2**30, context_len=100, max_total_tokens=163, rules=rules)
    assert (got.max_total_num_tokens, got.swa_tokens) == (163, 130)


def test_kimi_k3_latent_projections_are_bf16_and_whole():
    # moonshotai/Kimi-K3's checkpoint (code index id 62826164383): routed_expert_down_proj.weight [3584, 7168] and
    # routed_expert_up_proj.weight [7168, 3584] in bf16 in every MoE layer; SGLang 0.5.23 kimi_k3.py and vLLM 0.34
    # models/kimi_k3/nvidia/model.py build both as ReplicatedLinear (whole on every TP rank)
    from kvplan.configs.build import _read
    from kvplan.configs.weight_tables import table

    raw = json.loads((CONFIGS / "kimi-k3.json").read_text())
    assert raw["text_config"]["routed_expert_hidden_size"] == 3584
    _, f, _, layers, dims = _read(raw, "kimi-k3")
    modules = {m.name: m for m in table(f, layers, dims)}
    for name in ("routed_expert_down_proj", "routed_expert_up_proj"):
        m = modules[f"layers.1.block_sparse_moe.{name}"]
        assert (m.weight, m.other, m.whole) == (0, 7168 * 3584, True)
