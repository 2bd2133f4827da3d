"""Real configs from the fourth sweep of public model reports (docs/models.md "Real configs from the Hub"): each
report prints the config and every tensor's shape, dtype and size; each expected figure is summed here from that
tensor list by hand.

tests/data/configs/:
- glm-4.5-fp8-transformers5-trimmed.json: zai-org GLM-4.5-FP8 (compressed-tensors float-quantized, FP8 weights
  per channel), transformers 5.7's to_dict as the report prints it (code index id 62988695292), trimmed: its
  generic fields (attention_dropout, initializer_range, bos_token_id, use_cache) and all but four of its 1,100-odd
  ignore entries left out (those name norms, biases, routers and their e_score_correction_bias, which no format
  quantizes); kept: lm_head, model.norm and the MTP layer's embed_tokens and eh_proj
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
GLM45_FP8 = str(CONFIGS / "glm-4.5-fp8-transformers5-trimmed.json")


def test_glm45_fp8_per_channel_scales_are_counted():
    # The report's tensor list, layers 0-91 (layer 92 is the MTP module kvplan leaves out), float32 weight_scale
    # [rows, 1] beside each FP8 weight:
    #   head and embeddings 2 x 151,552 x 5,120 BF16; 3 dense MLPs 5,120 x 12,288 x 3 FP8
    #   attention a layer (92): q 12,288 x 5,120, k and v 1,024 x 5,120, o 5,120 x 12,288 FP8 with BF16 q/k/v biases
    #   and q/k norms of 128; 89 MoE layers of 160 experts of 1,536 and one shared expert, FP8; routers
    #   160 x 5,120 BF16 and e_score_correction_bias 160 float32; norms 2 x 92 + 1 of 5,120 BF16
    fp8 = 3 * 3 * 5120 * 12288 + 92 * (2 * 12288 + 2 * 1024) * 5120 + 89 * 161 * 3 * 1536 * 5120
    rows = 3 * (5120 + 2 * 12288) + 92 * (12288 + 2 * 1024 + 5120) + 89 * 161 * (5120 + 2 * 1536)
    bf16 = 2 * 151552 * 5120 + 92 * (12288 + 2 * 1024 + 2 * 128) + 89 * 160 * 5120 + 185 * 5120
    assert rows == 119_262_208
    report = fp8 + 4 * rows + 2 * bf16 + 4 * 89 * 160
    assert report == 354_902_011_520  # summed from the report's rows for layers 0-91
    d = estimate_json(GLM45_FP8)
    m = d["model"]
    # kvplan sizes the routers' e_score_correction_bias (float32 in the checkpoint) at 2 B like the other floats;
    # before, the per-channel scales were left out (477,048,832 B, 0.134% under)
    assert m["weight_bytes"] == report - 2 * 89 * 160 == 354_901_983_040
    # parameters: the report's 358,458,543,424 less the MTP layer's 5,541,452,192 and the 119,262,208 scales
    assert m["param_count"] == 358_458_543_424 - 5_541_452_192 - rows
    assert d["bytes_per_token"] == 2 * 92 * 8 * 128 * 2


def test_glm45_fp8_row_parallel_channel_scales_are_whole_on_every_tp_rank():
    # vLLM 0.34 holds the [rows, 1] float32 channel scales of row-parallel modules whole on every rank
    # (RowParallelLinear: output_size_per_partition = output_size; ChannelQuantScaleParameter loaded as it is;
    # the MoE's w2_weight_scale [E, hidden, 1]): o_proj 92 x 5,120, the dense down_proj 3 x 5,120, the MoE layers'
    # down_proj 89 x 161 (160 experts + the shared one) x 5,120 rows
    row_parallel_rows = 92 * 5120 + 3 * 5120 + 89 * 161 * 5120
    assert row_parallel_rows == 73_850_880
    # the rest each rank holds whole, in kvplan's 2 B floats: norms 185 x 5,120 and q/k norms 92 x 2 x 128,
    # routers 89 x 160 x 5,120 with their e_score_correction_bias 89 x 160 (GLM-4.5's o_proj has no bias)
    floats = 2 * (185 * 5120 + 92 * 2 * 128 + 89 * 160 * 5120 + 89 * 160)
    whole = floats + 4 * row_parallel_rows
    total = 354_901_983_040  # the test above: the report's bytes, layers 0-91
    d = estimate_json(GLM45_FP8, "--tp", "8", "--gpu", "H200")
    # 8 KV heads at TP 8: no KV-head replication; the rest split evenly (rounded up)
    assert d["capacity"]["weight_bytes_per_gpu"] == -(-(total - whole) // 8) + whole == 44_750_540_096
    # before, the row-parallel scales were split: 258,478,080 B (0.58%) a GPU under


def test_llama31_8b_channel_fp8_row_parallel_scales_whole_at_tp2(tmp_path):
    # Llama-3.1-8B shapes, compressed-tensors float-quantized FP8 per channel, lm_head kept (ignore), at TP 2
    import json

    spec = json.loads((Path(__file__).resolve().parent.parent / "model_specs" / "llama-3.1-8b.json").read_text())
    spec["quantization_config"] = {
        "quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
            "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(spec))
    # per layer: q 4,096 x 4,096, k and v 1,024 x 4,096, o 4,096 x 4,096, gate/up 14,336 x 4,096, down 4,096 x 14,336
    fp8 = 32 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336)
    rows = 32 * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096)  # one float32 scale each
    bf16 = 2 * 128256 * 4096 + 65 * 4096  # embeddings, lm_head, 2 x 32 + 1 norms
    total = fp8 + 4 * rows + 2 * bf16
    assert total == 9_086_705_664
    # held whole on each rank: the norms and the scales of o_proj's and down_proj's 4,096 rows a layer
    whole = 2 * 65 * 4096 + 4 * 32 * (4096 + 4096)
    d = estimate_json(str(path), "--tp", "2", "--gpu", "H200")
    assert d["model"]["weight_bytes"] == total
    assert d["capacity"]["weight_bytes_per_gpu"] == (total - whole) // 2 + whole == 4_544_143_360


def test_a_tensor_table_keeps_row_parallel_channel_scales_whole():
    # safetensors names as llm-compressor writes a channel-FP8 checkpoint: one float32 weight_scale [rows, 1] a
    # quantized weight; vLLM 0.34 splits q_proj's and gate_proj's rows (and their scales) over TP, and holds
    # o_proj's, down_proj's and a per-expert down_proj's scales whole (RowParallelLinear, FusedMoE w2)
    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.weights.roles import TensorEntry, fold

    shapes = {
        "model.layers.0.self_attn.q_proj.weight": ((64, 32), 1),  # 2,048 B, split
        "model.layers.0.self_attn.q_proj.weight_scale": ((64, 1), 4),  # 256 B, split with its rows
        "model.layers.0.self_attn.o_proj.weight": ((32, 64), 1),  # 2,048 B, split
        "model.layers.0.self_attn.o_proj.weight_scale": ((32, 1), 4),  # 128 B, whole
        "model.layers.0.mlp.gate_proj.weight_scale": ((128, 1), 4),  # 512 B, split
        "model.layers.0.mlp.down_proj.weight_scale": ((32, 1), 4),  # 128 B, whole
        "model.layers.0.mlp.experts.3.down_proj.weight_scale": ((32, 1), 4),  # 128 B, whole
        "model.layers.0.mlp.experts.3.gate_proj.weight_scale": ((16, 1), 4),  # 64 B, split
    }
    entries = [TensorEntry(name, "F8_E4M3" if width == 1 else "F32", shape[0] * shape[1],
                           shape[0] * shape[1] * width, shape) for name, (shape, width) in shapes.items()]
    w = fold(entries, source="safetensors", origin="hand", quantization="", files=1)
    # TP 4: whole 128 + 128 + 128 = 384; split (2,048 + 256 + 2,048 + 512 + 64) / 4 = 1,232 (before: all 5,312 / 4)
    assert stage_weight_bytes(w, 1, tp=4) == [384 + 1_232] == [1_616]
