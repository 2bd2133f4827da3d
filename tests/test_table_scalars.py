"""A tensor table's one-element scales whole on every TP rank, and GPTQ's g_idx left out of vLLM's load from 0.31.0
(kept in kvplan's own plan), as the config path does (test_quant_leftovers.py).

Read in vLLM 0.34.0: model_executor/parameter.py PerTensorScaleParameter (load_column_parallel_weight and
load_row_parallel_weight load it as it is; a merged layer one value a logical shard), layers/quantization/
modelopt.py (weight_scale_2, input_scale: PerTensorScaleParameter, [num_experts] in a FusedMoE),
compressed_tensors/schemes/compressed_tensors_w4a4_nvfp4.py (weight_global_scale, input_global_scale: the same),
layers/quantization/kv_cache.py KVCacheScaleParameter (a 0-dim tensor, q/k/v/prob_scale), base_config.py
QuantizationConfig.get_checkpoint_weight_mapper (orig_to_new_suffix {".g_idx": None}).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.engines.vllm_profile import predict_available
from kvplan.engines.vllm_load import rope_bytes
from kvplan.weights.load import from_safetensors

from safetensors_files import write_safetensors

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def test_one_element_scales_are_whole_on_every_tp_rank(tmp_path):
    # one layer (hidden 64, 4 query heads and 2 KV heads of 16): FP8 per-tensor attention with an FP8 KV cache's
    # k_scale / v_scale, and two NVFP4 experts' down_proj (intermediate 32: U8 [64, 16], F8 scales [64, 2])
    a, e = "model.layers.0.self_attn.", "model.layers.0.mlp.experts."
    write_safetensors(tmp_path / "model.safetensors", {
        a + "q_proj.weight": ("F8_E4M3", [64, 64], 1),       # 4,096 B, split
        a + "q_proj.weight_scale": ("F32", [], 4),           # 4 B, whole (AutoFP8's 0-dim scale)
        a + "q_proj.input_scale": ("F32", [], 4),            # 4 B, whole
        a + "k_proj.weight": ("F8_E4M3", [32, 64], 1),       # 2,048 B, split
        a + "k_proj.weight_scale": ("F32", [1], 4),          # 4 B, whole (compressed-tensors' [1])
        a + "k_proj.input_scale": ("F32", [1], 4),           # 4 B, whole
        a + "k_proj.k_scale": ("F32", [], 4),                # 4 B, whole
        a + "v_proj.weight": ("F8_E4M3", [32, 64], 1),       # 2,048 B, split
        a + "v_proj.weight_scale": ("F32", [], 4),           # 4 B, whole
        a + "v_proj.input_scale": ("F32", [], 4),            # 4 B, whole
        a + "v_proj.v_scale": ("F32", [], 4),                # 4 B, whole
        a + "o_proj.weight": ("F8_E4M3", [64, 64], 1),       # 4,096 B, split
        a + "o_proj.weight_scale": ("F32", [], 4),           # 4 B, whole
        a + "o_proj.input_scale": ("F32", [], 4),            # 4 B, whole
        e + "0.down_proj.weight": ("U8", [64, 16], 1),       # 1,024 B, split
        e + "0.down_proj.weight_scale": ("F8_E4M3", [64, 2], 1),  # 128 B, split: one per 16 values, not a scalar
        e + "0.down_proj.weight_scale_2": ("F32", [], 4),    # 4 B, whole
        e + "0.down_proj.input_scale": ("F32", [], 4),       # 4 B, whole
        e + "1.down_proj.weight": ("U8", [64, 16], 1),
        e + "1.down_proj.weight_scale": ("F8_E4M3", [64, 2], 1),
        e + "1.down_proj.weight_global_scale": ("F32", [1], 4),  # compressed-tensors' name: 4 B, whole
        e + "1.down_proj.input_global_scale": ("F32", [1], 4),   # 4 B, whole
        "model.layers.0.input_layernorm.weight": ("BF16", [64], 2),  # 128 B, a norm: whole
    })
    w = from_safetensors(tmp_path, {"model_type": "qwen3_moe"})
    # attention 4,096 + 2,048 + 2,048 + 4,096 = 12,288 split and 10 scalars x 4 = 40 whole; experts
    # 2 x (1,024 + 128) = 2,304 split and 4 scalars x 4 = 16 whole; the norm 128
    assert w.total_bytes == 12_288 + 40 + 2_304 + 16 + 128 == 14_776
    # TP 4: 12,288 / 4 + 40 + 2,304 / 4 + 16 + 128 = 3,072 + 40 + 576 + 16 + 128 (before, the scalars split with
    # their role: ceil(12,328 / 4) + ceil(2,320 / 4) + 128 = 3,082 + 580 + 128 = 3,790)
    assert stage_weight_bytes(w, 1, tp=4) == [3_072 + 40 + 576 + 16 + 128] == [3_832]
    assert stage_weight_bytes(w, 1, tp=1) == [14_776]


def _gptq_table(path: Path) -> None:
    # GPTQ int4, group 32, of one layer's q_proj and o_proj (64 x 64): qweight I32 [64 / 8, 64] = 2,048 B, qzeros
    # I32 [64 / 32, 64 / 8] = 64 B, scales F16 [2, 64] = 256 B, g_idx I32 [64] = 256 B (AutoGPTQ QuantLinear)
    tensors = {"model.layers.0.input_layernorm.weight": ("BF16", [64], 2)}  # 128 B, whole
    for proj in ("q_proj", "o_proj"):
        stem = f"model.layers.0.self_attn.{proj}."
        tensors |= {stem + "qweight": ("I32", [8, 64], 4), stem + "qzeros": ("I32", [2, 8], 4),
                    stem + "scales": ("F16", [2, 64], 2), stem + "g_idx": ("I32", [64], 4)}
    write_safetensors(path / "model.safetensors", tensors)


def test_a_tensor_tables_g_idx_is_kept_in_the_plan_and_left_out_of_vllms_load_from_0_31(tmp_path):
    _gptq_table(tmp_path)
    quant = {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": False, "sym": True}
    raw = dict(json.loads((SPECS / "llama-3.1-8b.json").read_text()), quantization_config=quant)
    w = from_safetensors(tmp_path, raw)
    assert w.total_bytes == 2 * (2_048 + 64 + 256 + 256) + 128 == 5_376
    # kvplan's own plan keeps what the checkpoint stores: (5,376 - 128) / 2 + 128 at TP 2
    assert stage_weight_bytes(w, 1, tp=2) == [2_624 + 128] == [2_752]
    model = build_model(raw, "gptq")

    def weights_term(version):  # the profile's weights less the rotary cos/sin tables vLLM also builds at load
        got = predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=2, version=version,
                                weights=w)
        return got.weight_bytes - (rope_bytes(model, version) or 0), got.weights_from

    # vLLM 0.34.0 drops the two g_idx (512 B): (5,248 - 512) / 2 + 128 = 2,496 B a GPU at TP 2 (before: 2,752)
    term, how = weights_term("0.34.0")
    assert term == 2_368 + 128 == 2_496
    assert "less GPTQ's g_idx (512 B; vLLM drops it at load)" in how
    # 0.29.0 still loads them (auto_gptq.py: RowvLLMParameter g_idx): as kvplan's plan
    term, how = weights_term("0.29.0")
    assert term == 2_752 and "g_idx" not in how
