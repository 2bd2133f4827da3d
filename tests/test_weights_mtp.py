"""A checkpoint's multi-token-prediction module is not what a serving engine
loads (vLLM skips it unless MTP speculative decoding is on): it is told apart
from the tensor names and left out of the bytes per GPU. Expected values are
worked out by hand from the shapes written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvplan.capacity.weights import mtp_bytes, served_bytes, stage_weight_bytes
from kvplan.weights.load import from_safetensors
from kvplan.weights.record import NO_LAYER, Weights
from kvplan.weights.roles import layer_of, role_of

from test_weights_safetensors import CONFIG, H, I, L, V, dense_tensors, write_sharded


@pytest.mark.parametrize("name", [
    "mtp.layers.0.mlp.experts.3.up_proj.weight",  # Qwen3-Next / Qwen3.5
    "mtp.fc.weight",
    "model.mtp_layers.0.self_attn.q_proj.weight",  # MiMo
    "blk.92.nextn.eh_proj.weight",  # llama.cpp's GLM-4.5 GGUF
])
def test_mtp_namespaces_are_their_own_role(name):
    assert role_of(name) == "mtp"


@pytest.mark.parametrize("name,role", [
    ("model.layers.3.mlp.gate_proj.weight", "mlp"),
    ("model.layers.3.self_attn.q_proj.weight", "attention"),
    ("model.layers.61.mlp.experts.0.up_proj.weight", "experts"),  # DeepSeek-style MTP: told apart by its index
])
def test_other_names_keep_their_role(name, role):
    assert role_of(name) == role


def _deepseek_style() -> Weights:
    # 2 decoder layers + a third (index 2 = num_layers) holding the MTP module
    parts = [("embeddings", NO_LAYER, 1000), ("lm_head", NO_LAYER, 1000), ("norms", NO_LAYER, 10)]
    for layer in range(3):
        parts += [("attention", layer, 400), ("experts", layer, 4000), ("norms", layer, 20)]
    parts += [("embeddings", 2, 1000), ("other", 2, 1000)]  # the module's own embedding and head copies
    return Weights(total_bytes=sum(n for _, _, n in parts), source="safetensors", parts=tuple(parts))


def test_layers_past_num_layers_are_mtp_and_not_served():
    w = _deepseek_style()
    module = 400 + 4000 + 20 + 1000 + 1000
    assert mtp_bytes(w, num_layers=2) == module
    assert served_bytes(w, 2) == w.total_bytes - module
    assert served_bytes(w, 2, include_mtp=True) == w.total_bytes
    # tp 2: split roles halve, norms do not; the module is left out
    assert stage_weight_bytes(w, 2, tp=2) == [(2000 + 2 * 4400) // 2 + 10 + 2 * 20]
    # loaded for MTP speculative decoding: on the last stage
    assert stage_weight_bytes(w, 2, pp=2, include_mtp=True) == [1000 + 4420, 1000 + 10 + 4420 + module]
    assert stage_weight_bytes(w, 2, pp=2) == [1000 + 4420, 1000 + 10 + 4420]


def test_a_record_without_a_tensor_table_keeps_its_total():
    w = Weights(total_bytes=1001, source="index")
    assert mtp_bytes(w, 4) == 0 and served_bytes(w, 4) == 1001


def test_safetensors_checkpoint_with_an_mtp_namespace(tmp_path):
    tensors = dense_tensors()
    mtp = {"mtp.fc.weight": np.zeros((H, 2 * H), np.float16),
           "mtp.layers.0.mlp.gate_proj.weight": np.zeros((I, H), np.float16),
           "mtp.norm.weight": np.ones(H, np.float32)}
    tensors.update(mtp)
    write_sharded(tmp_path / "m", tensors)
    w = from_safetensors(tmp_path / "m")
    module = H * 2 * H * 2 + I * H * 2 + H * 4
    assert w.by_role["mtp"] == module
    assert served_bytes(w, L) == w.total_bytes - module
    # layer 0 holds only the decoder's own tensors: the MTP layer 0 is not folded into it
    layer0 = sum(n for role, layer, n in w.parts if layer == 0)
    assert layer0 == (H * H * 2 + 2 * (H // 2) * H) * 2 + 3 * I * H * 2 + 2 * H * 4
    assert layer_of("mtp.layers.0.mlp.gate_proj.weight") == 0  # why fold() must not ask layer_of for MTP tensors


def test_estimate_and_weights_report_leave_the_module_out(tmp_path, cli):
    tensors = dense_tensors()
    tensors["mtp.layers.0.mlp.gate_proj.weight"] = np.zeros((I, H), np.float16)
    write_sharded(tmp_path / "m", tensors)
    module = I * H * 2
    rc, out, err = cli("weights", str(tmp_path / "m" / "config.json"), "--weights", str(tmp_path / "m"), "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["mtp_bytes"] == module
    assert data["weight_bytes_per_gpu"] == sum(a.nbytes for a in tensors.values()) - module
    assert data["weights"]["total_bytes"] == sum(a.nbytes for a in tensors.values())


def test_config_fixture_is_the_one_written():
    assert CONFIG["num_hidden_layers"] == L and CONFIG["vocab_size"] == V


def test_estimate_capacity_counts_the_served_weights(tmp_path, cli):
    tensors = dense_tensors()
    tensors["mtp.layers.0.mlp.gate_proj.weight"] = np.zeros((I, H), np.float16)
    write_sharded(tmp_path / "m", tensors)
    served = sum(a.nbytes for a in tensors.values()) - I * H * 2
    rc, out, err = cli("estimate", str(tmp_path / "m" / "config.json"), "--weights", str(tmp_path / "m"),
                       "--gpu", "h100", "--context", "1k", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["capacity"]["weight_bytes_per_gpu"] == served
    assert data["model"]["mtp_weight_bytes"] == I * H * 2
    rc, out, err = cli("estimate", str(tmp_path / "m" / "config.json"), "--weights", str(tmp_path / "m"),
                       "--gpu", "h100", "--context", "1k")
    assert rc == 0 and "MTP" in out


def test_ernie_mtp_names_are_mtp_for_ernie_configs_only(tmp_path):
    # ERNIE-4.5 stores its MTP module flat (vLLM 0.34.0 ernie_mtp.py: model.mtp_block.0.*, model.mtp_linear_proj.0.*,
    # model.mtp_emb_norm.0.*, model.mtp_hidden_norm.0.*); the config's model_type decides
    tensors = dense_tensors()
    tensors.update({"model.mtp_block.0.self_attn.q_proj.weight": np.zeros((H, H), np.float16),
                    "model.mtp_linear_proj.0.weight": np.zeros((H, 2 * H), np.float16),
                    "model.mtp_emb_norm.0.weight": np.ones(H, np.float32),
                    "model.mtp_hidden_norm.0.weight": np.ones(H, np.float32)})
    write_sharded(tmp_path / "m", tensors)
    module = H * H * 2 + H * 2 * H * 2 + 2 * H * 4  # 8,192 + 16,384 + 512
    ernie = from_safetensors(tmp_path / "m", {**CONFIG, "model_type": "ernie4_5_moe"})
    assert ernie.by_role["mtp"] == module == 25_088
    assert served_bytes(ernie, L) == ernie.total_bytes - module
    assert sorted(ernie.mtp_parts) == [("attention", NO_LAYER, 8192), ("mtp_proj", NO_LAYER, 16_384),
                                       ("norms", NO_LAYER, 512)]
    llama = from_safetensors(tmp_path / "m", CONFIG)
    assert "mtp" not in llama.by_role and served_bytes(llama, L) == llama.total_bytes


@pytest.mark.parametrize("name,role", [
    ("model.mtp_layers.0.input_proj.weight", "mtp_proj"),  # MiMo: nn.Linear (vLLM 0.34.0 mimo_mtp.py)
    ("mtp.layers.0.eh_proj.weight", "mtp_proj"),  # Nemotron-H: ColumnParallelLinear; the engine decides the split
    ("mtp.layers.1.mixer.gate.weight", "router"),  # Nemotron-H's GateLinear (a "mixer" outside an MTP module)
    ("mtp.layers.1.mixer.gate.e_score_correction_bias", "router"),
    ("mtp.layers.1.mixer.fc1_latent_proj.weight", "latent_proj"),
    ("model.mtp_layers.0.token_layernorm.weight", "norms"),
    ("blk.92.nextn.shared_head_head.weight", "lm_head"),  # llama.cpp GLM-4.5: the layer's own head
    ("mtp.layers.0.mlp.gate_proj.weight", "mlp"),
])
def test_roles_inside_an_mtp_module(name, role):
    from kvplan.weights.roles import mtp_role_of

    assert role_of(name) == "mtp" and mtp_role_of(name) == role
