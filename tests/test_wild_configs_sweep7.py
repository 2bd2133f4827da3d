"""Real config.json files of the seventh sweep of benchmarks/wild_configs.py (docs/models.md, "Sweep 7") that kvplan
read wrongly or refused wrongly: each figure is worked out by hand from the config, and each source is named.

tests/data/configs/:
- muse-glimmer-30b-tf5.json: meta-models/Muse-Glimmer-30B's config.json as aiconfigurator commits it
  (github.com/ai-dynamo/aiconfigurator at 397b8ae4b05bd37f0b3a724d9a569947e48e8cad,
  aic-core/src/aiconfigurator_core/model_configs/meta-models--Muse-Glimmer-30B_config.json; verbatim)
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json, kvplan

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
MUSE_GLIMMER = str(CONFIGS / "muse-glimmer-30b-tf5.json")


def test_muse_glimmer_reads_as_its_layer_types_say():
    # text_config: 52 layers, layer_types 39 sliding_attention (window 2048) + 13 full_attention, 2 K/V heads of 128:
    # 2 (K, V) x 2 heads x 128 x 2 B = 1,024 B a layer and token, x 52 layers = 53,248 B a token
    d = estimate_json(MUSE_GLIMMER)
    assert d["bytes_per_token"] == 52 * 2 * 2 * 128 * 2 == 53_248
    # parameters (text model): per layer q 6656 x 4096 (32 heads x 128), k, v 6656 x 256, o 4096 x 6656, the
    # attention's output gate 6656 x 4096, the MLP 3 x 6656 x 19968, four norms of 6656:
    # 27,262,976 + 2 x 1,703,936 + 27,262,976 + 27,262,976 + 398,721,024 + 26,624 = 483,944,448; x 52 =
    # 25,165,111,296; embeddings and the untied head 2 x 202,048 x 6656 = 2,689,662,976; final norm 6656
    assert d["model"]["param_count"] == 483_944_448 * 52 + 2 * 202_048 * 6656 + 6656 == 27_854_780_928


def test_sglang_refuses_a_sliding_window_model_without_room_for_weights_by_its_memory_not_a_negative_pool():
    # weights 27,854,780,928 x 2 B = 55,709,561,856 B = 51.88 GiB on one H100 (79.18 GiB as the driver reports it).
    # SGLang 0.5.23's static budget there is at most 79.18 GiB x 0.84 (its default mem_fraction_static for an 80 GB
    # card is below that) x 0.95 x 0.8 (adjust_mem_fraction_for_vlm: a vision tower) = 50.55 GiB < 51.88 GiB, so
    # kv_cache_configurator.py _profile_available_bytes raises "Loaded weights leave no GPU memory for the KV cache"
    # before the hybrid-SWA pool configurator runs. kvplan ran the configurator's SWA-size check first and refused
    # with "its sliding-window pool holds -37358 tokens"
    out = kvplan("estimate", MUSE_GLIMMER, "--engine", "sglang", "--gpu", "h100")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "no KV cache tokens" in lines[0]
    assert "sliding-window pool" not in lines[0]


def test_sglang_plans_the_same_model_on_two_gpus():
    # TP 2 halves the weights (25.9 GiB a GPU): a positive budget, split between the full and the sliding-window
    # pools by swa_full_tokens_ratio 0.8 (SGLang 0.5.23's default): swa = int(full x 0.8) at page size 1
    d = estimate_json(MUSE_GLIMMER, "--engine", "sglang", "--gpu", "h100", "--tp", "2")
    e = d["engine"]
    assert e["fits"] is True
    full, swa = e["max_total_num_tokens"], e["swa_tokens"]
    assert full > 0 and swa == int(full * 0.8)
