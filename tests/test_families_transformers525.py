"""Model types transformers 5.25 added (the release vLLM 0.33 runs with), read exactly.

tests/data/configs/transformers-5.25-defaults.json holds each type's default config as transformers 5.25
builds it (`CONFIG_MAPPING[type]().to_dict()`, bookkeeping keys dropped). The suite's transformers is 5.23,
which lacks these types, so tests/parity cannot check them here; with 5.25 installed, the parity harness
(tests/parity/check.evaluate) found kvplan's cache equal to transformers' for every type below (Ergo by the
window rule). Expected parameter counts are transformers 5.25's meta-device counts of the causal LM (sum of
numel), measured once and written here; cache sizes are worked out by hand from the configs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate

DEFAULTS = json.loads((Path(__file__).parent / "data" / "configs" / "transformers-5.25-defaults.json").read_text())


def _model(model_type: str, **changes):
    return build_model({**DEFAULTS[model_type], **changes}, model_type)


def test_ergo_every_fourth_layer_is_full_and_the_rest_slide():
    model = _model("ergo")
    assert model.reading == "exact"
    full = [i for i, layer in enumerate(model.layers) if layer.caches[0].policy.window_tokens is None]
    assert full == list(range(3, 64, 4))
    # 8 KV heads x 128 (hidden 8,192 / 64 heads), K and V in bf16: 4,096 B a token a layer; 48 layers keep 512
    n = 8192
    assert estimate(model, n).kv_bytes_per_sequence == 16 * n * 4096 + 48 * 512 * 4096
    # the released checkpoints name the window local_attention_window (ErgoConfig.attribute_map)
    config = {k: v for k, v in DEFAULTS["ergo"].items() if k not in ("sliding_window", "layer_types")}
    renamed = build_model({**config, "local_attention_window": 1024}, "ergo")
    assert estimate(renamed, n).kv_bytes_per_sequence == 16 * n * 4096 + 48 * 1024 * 4096


def test_minicpm5_moe_caches_gqa_on_every_layer():
    model = _model("minicpm5_moe")
    assert estimate(model, 4096).bytes_per_token == 28 * 2 * 128 * 2 * 2


@pytest.mark.parametrize("model_type, transformers_count, extra", [
    ("ergo", 1_105_550_917_632, 0),
    ("minicpm5_moe", 15_002_552_320, 0),
    # Param2 and Sarvam-MoE run GLM-4-MoE's model; kvplan also counts each MoE router's
    # e_score_correction_bias (one value per routed expert), a buffer transformers' count leaves out
    ("param2moe", 17_151_124_096, 20 * 64),
    ("sarvam_moe", 32_152_648_064, 18 * 128),
])
def test_parameters_equal_transformers_meta_count(model_type, transformers_count, extra):
    assert _model(model_type).param_count == transformers_count + extra


@pytest.mark.parametrize("model_type", ["param2moe", "sarvam_moe"])
def test_glm4_moe_implementations_cache_plain_gqa(model_type):
    model = _model(model_type)
    config = DEFAULTS[model_type]
    per_layer = 2 * config["num_key_value_heads"] * config["head_dim"] * 2
    assert estimate(model, 1000).bytes_per_token == config["num_hidden_layers"] * per_layer


@pytest.mark.parametrize("model_type", ["llava_onevision1_5", "ovis2_5"])
def test_image_text_wrappers_read_their_qwen3_text_model(model_type):
    model = _model(model_type)
    text = DEFAULTS[model_type]["text_config"]
    assert model.model_type == "qwen3" and model.num_layers == text["num_hidden_layers"]
    assert estimate(model, 1000).bytes_per_token == (text["num_hidden_layers"] * 2 * text["num_key_value_heads"]
                                                     * text["head_dim"] * 2)
