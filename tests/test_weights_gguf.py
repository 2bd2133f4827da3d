"""GGUF files written by the gguf package's own writer: kvplan's small reader
gives back the bytes written, and the architecture metadata gives the same
cache as the model's config.json."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvplan.weights.load import from_gguf

gguf = pytest.importorskip("gguf")
Q = gguf.GGMLQuantizationType

# bytes of one ggml block, from ggml's block structs (ggml-common.h), written out by hand:
Q8_0_BLOCK = 2 + 32  # fp16 scale + 32 int8 values, per 32 values
Q4_K_BLOCK = 2 + 2 + 12 + 128  # fp16 d, dmin, 12 bytes of 6-bit scales, 256 4-bit values


def write_gguf(path, arch: str, meta: dict, tensors: dict):
    """tensors: name -> (numpy array) or (bytes array, ggml type)."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(meta["layers"])
    w.add_embedding_length(meta["hidden"])
    w.add_head_count(meta["heads"])
    w.add_head_count_kv(meta["kv"])
    w.add_context_length(meta.get("context", 8192))
    w.add_feed_forward_length(meta.get("ffn", 4 * meta["hidden"]))
    if "key_length" in meta:
        w.add_key_length(meta["key_length"])
        w.add_value_length(meta["key_length"])
    if "window" in meta:
        w.add_sliding_window(meta["window"])
    if "experts" in meta:
        w.add_expert_count(meta["experts"])
        w.add_expert_used_count(meta["used"])
        w.add_expert_feed_forward_length(meta["expert_ffn"])
    if "file_type" in meta:
        w.add_file_type(meta["file_type"])
    written = 0
    for name, value in tensors.items():
        if isinstance(value, tuple):
            raw, qtype = value
            w.add_tensor(name, raw, raw_dtype=qtype)
            written += raw.nbytes
        else:
            w.add_tensor(name, value)
            written += value.nbytes
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return written


def llama_tensors(layers: int, hidden: int, vocab: int = 256, tied: bool = False) -> dict:
    t = {"token_embd.weight": np.zeros((vocab, hidden), np.float16), "output_norm.weight": np.ones(hidden, np.float32)}
    if not tied:
        t["output.weight"] = (np.zeros((vocab, hidden // 256 * Q4_K_BLOCK), np.uint8), Q.Q4_K)
    for i in range(layers):
        t[f"blk.{i}.attn_norm.weight"] = np.ones(hidden, np.float32)
        t[f"blk.{i}.attn_q.weight"] = (np.zeros((hidden, hidden // 32 * Q8_0_BLOCK), np.uint8), Q.Q8_0)
        t[f"blk.{i}.ffn_up.weight"] = (np.zeros((2 * hidden, hidden // 256 * Q4_K_BLOCK), np.uint8), Q.Q4_K)
    return t


def test_bytes_read_back_equal_bytes_written(tmp_path):
    path = tmp_path / "m.gguf"
    layers, hidden = 2, 512
    written = write_gguf(path, "llama", {"layers": layers, "hidden": hidden, "heads": 8, "kv": 2, "file_type": 15},
                         llama_tensors(layers, hidden))
    w = from_gguf(path)
    assert w.source == "gguf" and w.total_bytes == written
    by = {d.dtype: d.bytes for d in w.by_dtype}
    assert by["Q8_0"] == layers * hidden * (hidden // 32) * Q8_0_BLOCK
    assert by["Q4_K"] == (256 + layers * 2 * hidden) * (hidden // 256) * Q4_K_BLOCK
    assert by["F16"] == 256 * hidden * 2 and by["F32"] == (1 + layers) * hidden * 4
    assert w.by_role["lm_head"] == 256 * (hidden // 256) * Q4_K_BLOCK
    assert w.quantization == "GGUF Q4_K_M (Q4_K, Q8_0, F16, F32)"  # llama_ftype 15, types by bytes
    assert not w.tied_embeddings


def _kv(cli, model: str, context: int = 16384) -> dict:
    code, out, err = cli("estimate", model, "--context", str(context), "--format", "json")
    assert code == 0, err
    return json.loads(out)


CASES = {
    # arch: (GGUF metadata, the same model's Hugging Face config.json)
    "llama": ({"layers": 4, "hidden": 512, "heads": 8, "kv": 2},
              {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
               "num_key_value_heads": 2, "intermediate_size": 2048, "vocab_size": 256, "torch_dtype": "float16"}),
    # Mistral 7B v0.1 GGUFs carry the llama architecture and its 4096-token window
    "mistral": ({"layers": 4, "hidden": 512, "heads": 8, "kv": 2, "window": 4096},
                {"model_type": "mistral", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
                 "num_key_value_heads": 2, "sliding_window": 4096, "intermediate_size": 2048, "vocab_size": 256,
                 "torch_dtype": "float16"}),
    "qwen3": ({"layers": 3, "hidden": 512, "heads": 8, "kv": 4, "key_length": 128},
              {"model_type": "qwen3", "num_hidden_layers": 3, "hidden_size": 512, "num_attention_heads": 8,
               "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 2048, "vocab_size": 256, "torch_dtype": "float16"}),
    "qwen3moe": ({"layers": 2, "hidden": 512, "heads": 8, "kv": 4, "key_length": 128, "experts": 8, "used": 2, "expert_ffn": 256},
                 {"model_type": "qwen3_moe", "num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                  "num_key_value_heads": 4, "head_dim": 128, "num_experts": 8, "num_experts_per_tok": 2,
                  "moe_intermediate_size": 256, "intermediate_size": 2048, "vocab_size": 256, "torch_dtype": "float16"}),
    "gemma2": ({"layers": 4, "hidden": 512, "heads": 8, "kv": 4, "key_length": 256, "window": 4096},
               {"model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
                "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096, "intermediate_size": 2048,
                "vocab_size": 256, "torch_dtype": "float16"}),
    "gemma3": ({"layers": 12, "hidden": 512, "heads": 4, "kv": 1, "key_length": 256, "window": 512},
               {"model_type": "gemma3_text", "num_hidden_layers": 12, "hidden_size": 512, "num_attention_heads": 4,
                "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 512, "sliding_window_pattern": 6,
                "intermediate_size": 2048, "vocab_size": 256, "torch_dtype": "float16"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gguf_cache_equals_the_config_json_cache(tmp_path, cli, case):
    meta, config = CASES[case]
    arch = "llama" if case == "mistral" else case
    path = tmp_path / f"{case}.gguf"
    written = write_gguf(path, arch, meta, llama_tensors(meta["layers"], meta["hidden"], tied=arch.startswith("gemma")))
    (tmp_path / "config.json").write_text(json.dumps(config))
    from_file, from_config = _kv(cli, str(path)), _kv(cli, str(tmp_path / "config.json"))
    assert from_file["bytes_per_token"] == from_config["bytes_per_token"]
    assert from_file["kv_bytes_per_sequence"] == from_config["kv_bytes_per_sequence"]
    assert [k["kind"] for k in from_file["layer_kinds"]] == [k["kind"] for k in from_config["layer_kinds"]]
    assert from_file["model"]["weights"]["source"] == "gguf" and from_file["model"]["weight_bytes"] == written


def test_gemma3_window_pattern_by_hand(tmp_path, cli):
    """12 layers, pattern 6: layers 5 and 11 full, ten windowed at 512 tokens;
    1 KV head x 256 x 2 (K, V) x 2 bytes = 1024 B per layer per token."""
    meta, _ = CASES["gemma3"]
    write_gguf(tmp_path / "g.gguf", "gemma3", meta, llama_tensors(12, 512, tied=True))
    data = _kv(cli, str(tmp_path / "g.gguf"), 16384)
    assert data["kv_bytes_per_sequence"] == 2 * 16384 * 1024 + 10 * 512 * 1024


def test_unknown_version_and_architecture_are_one_line(tmp_path, cli):
    path = tmp_path / "m.gguf"
    write_gguf(path, "llama", {"layers": 1, "hidden": 256, "heads": 4, "kv": 4}, llama_tensors(1, 256))
    raw = bytearray(path.read_bytes())
    raw[4:8] = (7).to_bytes(4, "little")
    bad = tmp_path / "v7.gguf"
    bad.write_bytes(bytes(raw))
    code, out, err = cli("estimate", str(bad))
    assert code == 1 and "unknown GGUF version 7" in err and str(bad) in err and len(err.strip().splitlines()) == 1
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(path.read_bytes()[:200])
    code, out, err = cli("weights", str(truncated))
    assert code == 1 and "truncated" in err and str(truncated) in err and "Traceback" not in err
    other = tmp_path / "phi.gguf"
    write_gguf(other, "phi2", {"layers": 1, "hidden": 256, "heads": 4, "kv": 4}, {"token_embd.weight": np.zeros((4, 256), np.float16)})
    code, out, err = cli("estimate", str(other))
    assert code == 1 and "'phi2'" in err and len(err.strip().splitlines()) == 1


def test_gguf_as_weights_for_a_config(tmp_path, cli):
    meta, config = CASES["llama"]
    written = write_gguf(tmp_path / "m.gguf", "llama", meta, llama_tensors(4, 512))
    (tmp_path / "config.json").write_text(json.dumps(config))
    code, out, err = cli("estimate", str(tmp_path / "config.json"), "--weights", str(tmp_path / "m.gguf"), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["model"]["weight_bytes"] == written


def test_split_gguf_is_read_whole(tmp_path):
    """llama.cpp's gguf-split: every part carries split.count; the bytes are the sum of the parts'."""
    total = 0
    for i in (1, 2):
        path = tmp_path / f"m-{i:05d}-of-00002.gguf"
        w = gguf.GGUFWriter(str(path), "llama")
        w.add_uint16("split.no", i - 1)
        w.add_uint16("split.count", 2)
        arr = np.zeros((8 * i, 64), np.float16)
        w.add_tensor(f"blk.{i}.attn_q.weight", arr)
        total += arr.nbytes
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    rec = from_gguf(tmp_path / "m-00001-of-00002.gguf")
    assert rec.files == 2 and rec.total_bytes == total
    (tmp_path / "m-00002-of-00002.gguf").unlink()
    from kvplan.errors import WeightsError

    with pytest.raises(WeightsError, match="m-00002-of-00002.gguf"):
        from_gguf(tmp_path / "m-00001-of-00002.gguf")
