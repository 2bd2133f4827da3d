"""Nemotron-NAS (model_type nemotron-nas, DeciLMForCausalLM): per-layer blocks read from block_configs.

Config (tests/data/configs/):
- llama-3.3-nemotron-super-49b-v1.json: nvidia/Llama-3_3-Nemotron-Super-49B-v1's config.json, verbatim as
  ai-dynamo/aiconfigurator keeps it (aic-core model_configs/nvidia--Llama-3_3-Nemotron-Super-49B-v1_config.json);
  NVIDIA's own copy in a test module ("Config copy from https://huggingface.co/nvidia/Llama-3_3-Nemotron-Super-
  49B-v1/blob/main/config.json", code index id 5860950287) lists the same blocks as far as it was compared (0-34).
Expected values are worked out by hand from the layouts in the checkpoint's remote code (block_config.py,
configuration_decilm.py, modeling_decilm.py as NVIDIA's Model-Optimizer keeps it) and vLLM's nemotron_nas.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kvplan.configs import kinds as K
from kvplan.configs.build import build_model
from kvplan.configs.nemotron_nas import ffn_mult_to_intermediate_size
from kvplan.core.estimate import estimate
from kvplan.engines.vllm import simulate
from kvplan.errors import ConfigError, UsageError

DATA = Path(__file__).parent / "data" / "configs"
SUPER = "llama-3.3-nemotron-super-49b-v1.json"
GIB = 2**30
# the attention layers Super-49B drops (no_op): 31 of 80
SUPER_NO_OP = [6, 7, 11, *range(42, 52), *range(53, 71)]


def _raw(name: str = SUPER) -> dict:
    return json.loads((DATA / name).read_text())


def test_super_49b_bytes_per_token_by_hand():
    model = build_model(_raw(), "super-49b")
    assert model.reading == "exact" and model.family == "nemotron-nas" and model.num_layers == 80
    assert [i for i, layer in enumerate(model.layers) if not layer.caches] == SUPER_NO_OP
    # 49 attention layers, each n_heads_in_group 8: 64 // 8 = 8 KV heads of 8,192 / 64 = 128, K and V in bf16:
    # 49 x 8 x 128 x 2 x 2 B = 200,704 B a token; the 31 no_op layers cache nothing
    assert {(c.heads, c.key_dim, c.value_dim) for layer in model.layers for c in layer.caches} == {(8, 128, 128)}
    assert estimate(model, 32768).bytes_per_token == 49 * 8 * 128 * 2 * 2 == 200_704
    assert estimate(model, 32768).kv_bytes_per_sequence == 200_704 * 32768


def test_super_49b_parameters_equal_the_published_count():
    # embeddings and the untied LM head 2 x 128,256 x 8,192 = 2,101,346,304; final norm 8,192;
    # 49 attentions of q, o 8,192 x 8,192 and k, v 8,192 x 1,024: 49 x 150,994,944 = 7,398,752,256;
    # gated MLPs (3 x 8,192 x width), the width int(2 x ffn_mult x 8,192 / 3) rounded up to 256:
    # 5.25 -> 28,672 (49 layers), 2.625 -> 14,336 (6), 3.28125 -> 17,920 (1), 1.3125 -> 7,168 (10),
    # 1.0 -> 5,461 -> 5,632 (8), 0.5 -> 2,730 -> 2,816 (6): 3 x 8,192 x 1,642,496 = 40,365,981,696;
    # RMSNorms where the sublayer exists: (49 + 80) x 8,192 = 1,056,768
    expected = 2_101_346_304 + 8_192 + 7_398_752_256 + 40_365_981_696 + 1_056_768
    model = build_model(_raw(), "super-49b")
    assert model.param_count == model.active_param_count == expected == 49_867_145_216
    # published: "Confirmed size 49,867,145,216 bf16 params" for nvidia/Llama-3_3-Nemotron-Super-49B-v1 in a
    # public research log that read the Hub's model info (code index id 63224824488); the model card says 49B
    assert model.weight_bytes == 2 * 49_867_145_216


@pytest.mark.parametrize("mult, hidden, width", [
    (5.25, 8192, 28_672), (1.0, 8192, 5_632), (0.5, 8192, 2_816), (3.28125, 8192, 17_920), (2.625, 1024, 1_792),
])
def test_ffn_mult_to_intermediate_size(mult, hidden, width):
    assert ffn_mult_to_intermediate_size(mult, hidden) == width


def _block(attention: dict, ffn: dict) -> dict:
    return {"attention": attention, "ffn": ffn}


def _attn(group: int) -> dict:
    return {"n_heads_in_group": group, "no_op": False, "replace_with_linear": False, "window_length": None}


NO_OP = {"n_heads_in_group": None, "no_op": True, "replace_with_linear": False}
LINEAR = {"n_heads_in_group": None, "no_op": False, "replace_with_linear": True}


def _ffn(mult: float) -> dict:
    return {"ffn_mult": mult, "no_op": False, "replace_with_linear": False}


def _small() -> dict:
    """Six layers of every block kind: 16 heads of 1,024 / 16 = 64 (a fresh copy: tests edit it)."""
    return copy.deepcopy({
        "model_type": "nemotron-nas", "architectures": ["DeciLMForCausalLM"], "hidden_size": 1024,
        "num_attention_heads": 16, "num_key_value_heads": None, "num_hidden_layers": 6, "vocab_size": 1000,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "intermediate_size": None,
        "block_configs": [
            _block(_attn(2), _ffn(2.625)),  # 8 KV heads; MLP 1,792
            _block(NO_OP, _ffn(1.0)),  # no attention; MLP int(682.7) -> 768
            _block(_attn(16), _ffn(0.5)),  # 1 KV head; MLP int(341.3) -> 512
            _block(LINEAR, {"no_op": True}),  # a linear in place of attention, no MLP
            _block(_attn(4), {"replace_with_linear": True}),  # 4 KV heads; a linear in place of the MLP
            _block(NO_OP, {"no_op": True}),  # nothing at all
        ],
    })


def test_small_config_kinds_and_kv_heads_per_layer():
    model = build_model(_small(), "small")
    kinds = [K.FULL if layer.caches else K.NONE for layer in model.layers]
    assert kinds == [K.FULL, K.NONE, K.FULL, K.NONE, K.FULL, K.NONE]
    assert [layer.caches[0].heads if layer.caches else 0 for layer in model.layers] == [8, 0, 1, 0, 4, 0]
    assert all(c.key_dim == c.value_dim == 64 for layer in model.layers for c in layer.caches)
    # (8 + 1 + 4) KV heads x 64 x (K, V) x 2 B
    assert estimate(model, 1000).bytes_per_token == 13 * 64 * 2 * 2 == 3_328
    assert any(n.startswith("Nemotron-NAS: a linear layer replaces the attention of layer 3, the MLP of layer 4")
               for n in model.notes)


def test_small_config_parameters_by_hand():
    h = 1024
    attention = {8: 2 * h * h + 2 * h * 8 * 64, 1: 2 * h * h + 2 * h * 64, 4: 2 * h * h + 2 * h * 4 * 64}  # q, o; k, v
    mlps = 3 * h * (1792 + 768 + 512)
    linears = 2 * h * h  # layer 3's attention, layer 4's MLP: no bias
    norms = (4 + 4) * h  # input norms on layers 0, 2, 3, 4; post-attention norms on 0, 1, 2, 4
    expected = 2 * 1000 * h + h + sum(attention.values()) + mlps + linears + norms
    model = build_model(_small(), "small")
    assert model.param_count == expected == 21_586_944


def test_ffn_mult_rounded_to_six_decimals_first():
    # FFNConfig rounds ffn_mult to 6 decimals: 5.2499999 -> 5.25 -> 28,672 (unrounded: int(28,671.99) -> 28,928)
    raw = _small()
    raw["hidden_size"], raw["num_attention_heads"] = 8192, 64
    raw["block_configs"] = [_block(_attn(8), _ffn(5.2499999))] + [_block(NO_OP, {"no_op": True})] * 5
    model = build_model(raw, "rounded")
    embeddings, attention, norms = 2 * 1000 * 8192 + 8192, 2 * 8192 * 8192 + 2 * 8192 * 1024, 2 * 8192
    assert model.param_count - embeddings - attention - norms == 3 * 8192 * 28_672


def _refused(raw: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        build_model(raw, "bad")


def test_unknown_block_field_is_refused():
    raw = _small()
    raw["block_configs"][0]["attention"]["num_key_value_heads"] = 8  # not a block_config.py field
    _refused(raw, r"block_configs\[0\]\.attention has 'num_key_value_heads', which kvplan does not read")
    raw = _small()
    raw["block_configs"][2]["ffn"]["intermediate_size"] = 512
    _refused(raw, r"block_configs\[2\]\.ffn has 'intermediate_size'")
    raw = _small()
    raw["block_configs"][1]["mixer"] = {}
    _refused(raw, r"block_configs\[1\] has 'mixer'")


def test_windows_sinks_and_broken_blocks_are_refused():
    raw = _small()
    raw["block_configs"][0]["attention"]["window_length"] = 4096
    _refused(raw, r"window_length is 4096: a window or attention sinks")
    raw = _small()
    raw["block_configs"][4]["attention"]["num_sink_tokens"] = 4
    _refused(raw, r"num_sink_tokens")
    raw = _small()
    raw["block_configs"][0]["attention"]["n_heads_in_group"] = 3
    _refused(raw, r"does not divide num_attention_heads 16")
    raw = _small()
    raw["block_configs"][2]["attention"]["n_heads_in_group"] = None
    _refused(raw, r"n_heads_in_group is needed")
    raw = _small()
    raw["block_configs"][5]["attention"]["replace_with_linear"] = True
    _refused(raw, r"sets both no_op and replace_with_linear")
    raw = _small()
    raw["block_configs"] = raw["block_configs"][:5]
    _refused(raw, r"must list 6 entries")
    raw = _small()
    del raw["block_configs"]
    _refused(raw, r"without block_configs")
    raw = _small()
    raw["layer_types"] = ["full_attention"] * 6
    _refused(raw, r"'layer_types' is set")


def test_window_fields_of_a_dropped_attention_are_ignored():
    raw = _small()  # AttentionConfig nulls them for a no_op or linear layer
    raw["block_configs"][1]["attention"]["window_length"] = 4096
    raw["block_configs"][3]["attention"]["n_heads_in_group"] = 8
    assert estimate(build_model(raw, "ok"), 1000).bytes_per_token == 3_328


def test_vllm_pool_super_49b():
    # TP 2: 4 KV heads a rank; a 16-token page is 16 x 4 x 128 x 2 x 2 B = 32,768 B; every attention layer has
    # the same spec, so one group of 49 layers and a block costs 49 x 32,768 = 1,605,632 B
    from kvplan.engines.vllm_rules import V0_33  # 16-token blocks (0.34's default is 64)

    pool = simulate(build_model(_raw(), "super-49b"), kv_memory_bytes=20 * GIB, max_model_len=32768, tp=2, rules=V0_33)
    assert len(pool.groups) == 1 and len(pool.groups[0].layers) == 49 and not pool.uniform_type
    assert pool.page_bytes == 32_768 and pool.bytes_per_block == 1_605_632
    assert pool.num_blocks == 20 * GIB // 1_605_632 == 13_374
    assert pool.blocks_per_request == 32768 // 16 and pool.fits


def test_vllm_pool_mixed_kv_heads_is_one_uniform_type_group():
    raw = _small()
    raw["block_configs"][3] = _block(dict(NO_OP), _ffn(1.0))
    raw["block_configs"][4] = _block(_attn(4), _ffn(1.0))
    # full attention of 8, 1 and 4 KV heads: pages differ, but every spec is FullAttentionSpec with one block
    # size, so vLLM's UniformTypeKVCacheSpecs keeps one group whose page is their sum (kv_cache_interface.py)
    from kvplan.engines.vllm_rules import V0_33  # 16-token blocks (0.34's default is 64)

    pool = simulate(build_model(raw, "mixed"), kv_memory_bytes=GIB, max_model_len=4096, rules=V0_33)
    assert len(pool.groups) == 1 and pool.uniform_type
    assert pool.page_bytes == 16 * (8 + 1 + 4) * 64 * 2 * 2 == 53_248
    assert pool.num_blocks == GIB // 53_248


def test_vllm_refuses_linear_replacements():
    # vLLM's DeciLMDecoderLayer builds attention from num_attention_heads // n_heads_in_group (null for a linear
    # layer in the remote config) and an MLP from ffn_mult (null too): it has no replace_with_linear branch
    with pytest.raises(UsageError, match=r"vLLM cannot serve small: Nemotron-NAS: a linear layer replaces"):
        simulate(build_model(_small(), "small"), kv_memory_bytes=GIB, max_model_len=4096)


def test_sglang_refuses_linear_replacements_too():
    # SGLang 0.5.23's DeciLMDecoderLayer (srt/models/nemotron_nas.py) builds LlamaAttention with
    # num_attention_heads // block_config.attention.n_heads_in_group for every attention that is not no_op, and a
    # LlamaMLP from ffn_mult for every FFN that is not: no replace_with_linear branch either
    from kvplan.engines.sglang import cell

    with pytest.raises(UsageError, match=r"SGLang cannot serve small: Nemotron-NAS: a linear layer replaces"):
        cell(build_model(_small(), "small"), 1, 2)


def test_cli_estimate_with_the_vllm_engine(cli):
    path = str(DATA / SUPER)
    code, out, err = cli("estimate", path, "--gpu", "h100", "--tp", "2", "--engine", "vllm@0.33", "--max-model-len",
                         "32768", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["bytes_per_token"] == 200_704
    engine = data["engine"]
    assert engine["served"] is True and engine["groups"][0]["layers"] == 49
    assert engine["bytes_per_block"] == 1_605_632
    assert engine["num_blocks"] == engine["kv_memory_bytes"] // 1_605_632
    # one H100 cannot hold the 92.9 GiB of bf16 weights: refused before the pool, as for any model
    code, _, err = cli("estimate", path, "--gpu", "h100", "--engine", "vllm", "--max-model-len", "32768")
    assert code == 1 and "does not fit on 1 x h100" in err



def test_vllm_rope_table():
    # DeciLMAttention's get_rope: llama3 rope, max_position_embeddings rows x head size 128 x bf16, one table
    from kvplan.configs.build import resolve
    from kvplan.engines.vllm_rope_cache import rope_cache_bytes

    assert rope_cache_bytes(resolve(_raw(), "super-49b")[1]) == 131_072 * 128 * 2 == 33_554_432
