"""ZAYA1 in Zyphra's Megatron-style config layout (ZAYA1-base and its siblings), read by kvplan itself.

The layout, as SGLang 0.5.23's configs/zaya.py ZayaConfig reads it: zaya_layers lists the half-layers ("a"
attention, an integer the expert count of a MoE half-layer), num_hidden_layers counts half-layers, the per-half-layer
lists cca_num_q_heads / num_query_groups_list hold the heads (0 on MoE entries; the first non-zero entry is read),
kv_channels the head width. transformers 5.25's ZayaConfig refuses such a config (rope_scaling false fails its strict
rope_parameters check) and vLLM 0.34's zaya.py loads transformers' weight names only (its load_weights indexes its
own parameters: self_attn.qkv_proj..., mlp.experts...). Configs are hand-written with those field names (the shape of
ZAYA1-base: 80 half-layers, 8 heads, 2 KV heads of 128); every figure is worked out by hand below.
"""

from __future__ import annotations

import json

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.engines.vllm import simulate
from kvplan.errors import ConfigError, UsageError

BASE = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 80,
        "zaya_layers": ["a", 16] * 40, "cca_num_q_heads": [8, 0] * 40, "num_query_groups_list": [2, 0] * 40,
        "ffn_hidden_size_list": [0, 4096] * 40, "num_attention_heads": 16, "num_query_groups": 2,
        "kv_channels": 128, "cca": True, "rope_scaling": False, "vocab_size": 262272, "torch_dtype": "bfloat16"}


def test_attention_half_layers_heads_and_cca_state():
    # 40 "a" entries of 80: K/V 40 x 2 (K, V) x 2 KV heads x 128 x 2 B = 40,960 B a token (the MoE half-layers keep
    # nothing; reading num_hidden_layers 80 gave 81,920). CCA state a layer: (2 - 1) + (2 - 1) = 2 conv columns of
    # (8 + 2) x 128 channels = 2,560, plus the delayed value half 2 x 128 / 2 = 128, bf16: 5,376 B; x 40 = 215,040
    # (num_attention_heads 16 would give (2 x 18 x 128 + 128) x 2 = 9,472 B a layer)
    e = estimate(build_model(BASE, "zaya1-base"), 8192)
    assert e.bytes_per_token == 40_960
    assert e.kv_bytes_per_sequence == 40_960 * 8192
    assert e.state_bytes_per_sequence == 215_040


def test_head_dim_is_kv_channels_and_parameters_are_not_counted():
    # kv_channels 64, no head_dim: 40 x 2 x 2 x 64 x 2 B = 20,480 B a token
    model = build_model({**BASE, "kv_channels": 64}, "t")
    assert estimate(model, 1).bytes_per_token == 20_480
    assert model.param_count == 0
    assert any(n.startswith("parameters not counted") and "Megatron-style" in n for n in model.notes)
    assert any(n.startswith("Megatron-style ZAYA config (zaya_layers): 40 attention half-layers of 80") and
               "8 heads, 2 KV heads x 64" in n for n in model.notes)


@pytest.mark.parametrize("changes,says", [
    ({"swa_layers": [1, 0] * 40}, "swa_layers is set"),
    ({"layer_types": ["hybrid"] * 40}, "both zaya_layers"),
    ({"cca_num_q_heads": [8, 0, 4, 0] * 20}, "cca_num_q_heads differs between attention layers"),
    ({"zaya_layers": ["a", "m"] * 40}, "zaya_layers[1] is 'm'"),
    ({"num_query_groups_list": [3, 0] * 40}, "cca_num_q_heads 8 is not a multiple of num_query_groups 3"),
])
def test_readings_kvplan_cannot_make_exact_are_refused(changes, says):
    with pytest.raises(ConfigError) as err:
        build_model({**BASE, **changes}, "t")
    assert says in str(err.value)


def test_vllm_refuses_the_megatron_layout():
    with pytest.raises(UsageError, match="vLLM 0.34 cannot load t: its config is Megatron-style"):
        simulate(build_model(BASE, "t"), kv_memory_bytes=2**30, max_model_len=8192)


def test_cli(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(BASE))
    rc, out, _ = cli("estimate", str(path), "--context", "8192", "--format", "json")
    assert rc == 0 and json.loads(out)["bytes_per_token"] == 40_960
    rc, _, err = cli("estimate", str(path), "--engine", "vllm", "--kv-memory", "10GiB")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "use --engine sglang" in err
    # SGLang 0.5.23 reads the same 40 layers: cell 40 x 2 x (128 + 128) x 2 B = 40,960; state a layer
    # ((8 + 2) x 128 x 2 + 2,048 x 1) x 2 B = 9,216, x 40 = 368,640
    rc, out, _ = cli("estimate", str(path), "--engine", "sglang", "--kv-memory", "10GiB", "--format", "json")
    engine = json.loads(out)["engine"]
    assert rc == 0 and (engine["cell_bytes"], engine["state_bytes_per_request"]) == (40_960, 368_640)


@pytest.mark.parametrize("bad", [{"zaya_layers": "a16"}, {"zaya_layers": []}, {"zaya_layers": None}])
def test_megatron_fields_without_a_usable_list_are_refused(bad):
    # a malformed or missing zaya_layers beside the half-layer lists: num_hidden_layers (80) counts half-layers, so
    # transformers' reading would make 80 caching layers where 40 cache (81,920 B a token, not 40,960)
    with pytest.raises(ConfigError, match="zaya_layers|Megatron-style ZAYA fields"):
        build_model(dict(BASE, **bad), "zaya1-base")


def test_transformers_layout_with_a_null_zaya_layers_is_read_as_transformers_layout():
    # --set zaya_layers=null leaves the key as null, which is no list: transformers' layout, 40 hybrid layers of 2
    # KV heads x 128: 40 x 2 x 2 x 128 x 2 B = 40,960 B a token
    raw = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 40,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2,
           "vocab_size": 1000, "torch_dtype": "bfloat16", "zaya_layers": None}
    assert estimate(build_model(raw, "zaya"), 8192).bytes_per_token == 40_960
