"""safetensors headers read without torch: files written by the safetensors
package's own numpy writer, bytes read back equal the bytes written."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from kvplan.errors import WeightsError
from kvplan.weights.load import from_index, from_safetensors
from kvplan.weights.quant import identify
from kvplan.weights.safetensors import read_file

save_file = pytest.importorskip("safetensors.numpy").save_file

H, V, I, L = 64, 100, 128, 2  # hidden, vocab, intermediate, layers
CONFIG = {"model_type": "llama", "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": I, "vocab_size": V, "torch_dtype": "float16"}


def dense_tensors(dtype=np.float16) -> dict[str, np.ndarray]:
    t = {"model.embed_tokens.weight": np.zeros((V, H), dtype), "model.norm.weight": np.ones(H, np.float32),
         "lm_head.weight": np.zeros((V, H), dtype)}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = np.zeros((H, H), dtype)
        t[p + "self_attn.k_proj.weight"] = np.zeros((H // 2, H), dtype)
        t[p + "self_attn.v_proj.weight"] = np.zeros((H // 2, H), dtype)
        t[p + "self_attn.o_proj.weight"] = np.zeros((H, H), dtype)
        t[p + "mlp.gate_proj.weight"] = np.zeros((I, H), dtype)
        t[p + "mlp.up_proj.weight"] = np.zeros((I, H), dtype)
        t[p + "mlp.down_proj.weight"] = np.zeros((H, I), dtype)
        t[p + "input_layernorm.weight"] = np.ones(H, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(H, np.float32)
    return t


def write_sharded(folder, tensors: dict[str, np.ndarray], shards: int = 2, config: dict | None = CONFIG) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted(tensors)
    files, weight_map = [], {}
    for s in range(shards):
        part = {n: tensors[n] for n in names[s::shards]}
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        save_file(part, str(folder / fname))
        files.append(folder / fname)
        weight_map.update({n: fname for n in part})
    total = sum(a.nbytes for a in tensors.values())
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return files


def test_single_file_bytes_equal_bytes_written(tmp_path):
    tensors = dense_tensors()
    save_file(tensors, str(tmp_path / "model.safetensors"))
    w = from_safetensors(tmp_path / "model.safetensors")
    assert w.source == "safetensors"
    assert w.total_bytes == sum(a.nbytes for a in tensors.values())
    by = {d.dtype: d for d in w.by_dtype}
    f16 = [a for a in tensors.values() if a.dtype == np.float16]
    assert by["F16"].bytes == sum(a.nbytes for a in f16) and by["F16"].elements == sum(a.size for a in f16)
    assert by["F32"].tensors == 1 + 2 * L
    # roles, worked out by hand from the shapes above
    roles = w.by_role
    assert roles["embeddings"] == V * H * 2 and roles["lm_head"] == V * H * 2
    assert roles["attention"] == L * (H * H * 2 + 2 * (H // 2) * H) * 2
    assert roles["mlp"] == L * 3 * I * H * 2
    assert roles["norms"] == (1 + 2 * L) * H * 4
    assert not w.tied_embeddings


def test_sharded_folder_reads_every_shard(tmp_path):
    tensors = dense_tensors()
    write_sharded(tmp_path / "m", tensors, shards=3)
    w = from_safetensors(tmp_path / "m")
    assert w.files == 3 and w.tensors == len(tensors)
    assert w.total_bytes == sum(a.nbytes for a in tensors.values())
    # the index alone beside the shards gives the same headers
    assert from_index(tmp_path / "m" / "model.safetensors.index.json").total_bytes == w.total_bytes


def test_index_without_shards_gives_its_total(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 123456}, "weight_map": {"a": "x.safetensors"}}))
    w = from_index(tmp_path / "model.safetensors.index.json")
    assert (w.source, w.total_bytes) == ("index", 123456)


def test_gptq_and_awq_bytes_are_the_sum_of_their_tensors(tmp_path):
    """4-bit packed layouts: qweight int32 (8 values each), scales fp16, qzeros int32 (GPTQ also g_idx)."""
    group = 32
    def packed(gptq: bool):
        t = {"model.embed_tokens.weight": np.zeros((V, H), np.float16), "lm_head.weight": np.zeros((V, H), np.float16)}
        for i in range(L):
            for proj, (k, n) in {"q_proj": (H, H), "down_proj": (I, H)}.items():
                p = f"model.layers.{i}.{'self_attn' if proj == 'q_proj' else 'mlp'}.{proj}."
                if gptq:  # GPTQ packs along the input dimension
                    t[p + "qweight"] = np.zeros((k // 8, n), np.int32)
                    t[p + "g_idx"] = np.zeros(k, np.int32)
                else:  # AWQ packs along the output dimension
                    t[p + "qweight"] = np.zeros((k, n // 8), np.int32)
                t[p + "qzeros"] = np.zeros((k // group, n // 8), np.int32)
                t[p + "scales"] = np.zeros((k // group, n), np.float16)
        return t
    for gptq, method in ((True, "gptq"), (False, "awq")):
        tensors = packed(gptq)
        write_sharded(tmp_path / method, tensors, shards=2, config={**CONFIG, "quantization_config": {"quant_method": method, "bits": 4, "group_size": group}})
        w = from_safetensors(tmp_path / method, {"quantization_config": {"quant_method": method, "bits": 4, "group_size": group}})
        assert w.total_bytes == sum(a.nbytes for a in tensors.values())
        assert w.quantization == f"{method.upper()} int4, group {group}"


def test_mxfp4_blocks_and_scales_are_recognised(tmp_path):
    E = 4
    tensors = {
        "model.layers.0.mlp.experts.gate_up_proj_blocks": np.zeros((E, 2 * I, H // 32, 16), np.uint8),
        "model.layers.0.mlp.experts.gate_up_proj_scales": np.zeros((E, 2 * I, H // 32), np.uint8),
        "model.layers.0.mlp.router.weight": np.zeros((E, H), np.float16),
    }
    save_file(tensors, str(tmp_path / "model.safetensors"))
    w = from_safetensors(tmp_path / "model.safetensors")
    assert w.quantization == "MXFP4"
    assert w.by_role == {"experts": E * 2 * I * H // 32 * 17, "router": E * H * 2}


def test_fp8_granularity_from_scale_shapes():
    from kvplan.weights.roles import TensorEntry

    w = TensorEntry("m.layers.0.mlp.up_proj.weight", "F8_E4M3", 256 * 512, 256 * 512, (256, 512))
    block = [w, TensorEntry("m.layers.0.mlp.up_proj.weight_scale_inv", "F32", 8, 32, (2, 4))]
    chan = [w, TensorEntry("m.layers.0.mlp.up_proj.weight_scale", "F32", 256, 1024, (256, 1))]
    tensor = [w, TensorEntry("m.layers.0.mlp.up_proj.weight_scale", "F32", 1, 4, ())]
    assert identify({"quant_method": "fp8", "weight_block_size": [128, 128]}, block) == "FP8 block-scaled 128x128"
    assert identify(None, chan) == "FP8 per-channel"
    assert identify(None, tensor) == "FP8 per-tensor"
    assert identify({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}) == "bitsandbytes 4-bit (nf4)"
    ct = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
          "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group"}}}}
    assert identify(ct) == "compressed-tensors nvfp4-pack-quantized (float4 tensor_group)"


def _raw_file(path, header: bytes, data: bytes = b""):
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)


def test_packed_and_fp8_dtypes_from_a_hand_written_header(tmp_path):
    """Dtypes numpy cannot write: sizes from the format's bit widths (F4 = 4 bits, F8 = 8)."""
    header = json.dumps({"a": {"dtype": "F4", "shape": [4, 6], "data_offsets": [0, 12]},
                         "b": {"dtype": "F8_E4M3", "shape": [3, 5], "data_offsets": [12, 27]},
                         "c": {"dtype": "F8_E8M0", "shape": [2], "data_offsets": [27, 29]}}).encode()
    _raw_file(tmp_path / "x.safetensors", header, bytes(29))
    entries, _ = read_file(tmp_path / "x.safetensors")
    assert {e.name: e.bytes for e in entries} == {"a": 12, "b": 15, "c": 2}


@pytest.mark.parametrize("case", ["truncated", "too_long", "dtype", "span", "past_end"])
def test_bad_files_are_one_line_naming_the_file(tmp_path, cli, case):
    path = tmp_path / "model.safetensors"
    if case == "truncated":
        path.write_bytes(b"\x05\x00\x00")
    elif case == "too_long":
        path.write_bytes(struct.pack("<Q", 10_000) + b"{}")
    elif case == "dtype":
        _raw_file(path, json.dumps({"a": {"dtype": "F7", "shape": [2], "data_offsets": [0, 2]}}).encode(), bytes(2))
    elif case == "span":
        _raw_file(path, json.dumps({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 2]}}).encode(), bytes(2))
    else:
        _raw_file(path, json.dumps({"a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}}).encode(), bytes(4))
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(WeightsError):
        from_safetensors(path)
    code, out, err = cli("estimate", str(tmp_path), "--format", "json")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and str(path) in err and "Traceback" not in err
    expected = {"truncated": "truncated", "too_long": "larger than the file", "dtype": "'F7'", "span": "needs", "past_end": "truncated"}
    assert expected[case] in err


def test_shard_missing_from_index_is_one_line(tmp_path, cli):
    files = write_sharded(tmp_path / "m", dense_tensors(), shards=3)
    files[1].unlink()
    code, out, err = cli("estimate", str(tmp_path / "m"))
    assert code == 1 and out == ""
    assert str(files[1]) in err and "missing" in err and len(err.strip().splitlines()) == 1


def test_estimate_folder_uses_the_headers(tmp_path, cli):
    tensors = dense_tensors()
    write_sharded(tmp_path / "m", tensors, shards=2)
    code, out, err = cli("estimate", str(tmp_path / "m"), "--gpu-memory", "1GiB", "--reserve", "0", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    total = sum(a.nbytes for a in tensors.values())
    assert data["model"]["weights"]["source"] == "safetensors"
    assert data["model"]["weight_bytes"] == total == data["capacity"]["weight_bytes_per_gpu"]
    # --weights PATH on a bundled model's config reads those files instead
    code, out, err = cli("estimate", str(tmp_path / "m" / "config.json"), "--weights", str(tmp_path / "m" / "model-00001-of-00002.safetensors"), "--format", "json")
    assert code == 0, err
    first = sum(tensors[n].nbytes for n in sorted(tensors)[0::2])
    assert json.loads(out)["model"]["weight_bytes"] == first


def test_weights_command_breakdown(tmp_path, cli):
    tensors = dense_tensors()
    write_sharded(tmp_path / "m", tensors, shards=2)
    code, out, err = cli("weights", str(tmp_path / "m"), "--tp", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["weights"]["total_bytes"] == sum(a.nbytes for a in tensors.values())
    norms = (1 + 2 * L) * H * 4
    split = data["weights"]["total_bytes"] - norms
    # norms replicated, the rest halved (every split role here divides evenly)
    assert data["weight_bytes_per_gpu"] == split // 2 + norms
