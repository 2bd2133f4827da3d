"""What a config-sized checkpoint holds beside its per-weight rate, and how it splits over tensor parallelism
(kvplan/configs/quant_stored.py, ModelSpec.weight_replicated_bytes).

Hand figures from the formats' layouts and vLLM 0.34.0's sources: ModelOpt's FP8 KV cache writes
self_attn.k_proj.k_scale and v_proj.v_scale, a float32 scalar each (tests/test_hf_quant_config.py lays out
nvidia/Qwen3-30B-A3B-NVFP4); bitsandbytes' Linear8bitLt._save_to_state_dict writes SCB (float32, one per output
row) and a uint8 weight_format; vLLM drops every *.g_idx at load (base_config.py get_checkpoint_weight_mapper,
0.31.0-0.34.0) and keeps norms, routers (ReplicatedLinear) and per-tensor scales (PerTensorScaleParameter) whole
on every TP rank.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.engines.vllm_load import config_weights_per_gpu
from kvplan.weights.estimate import estimated
from kvplan_inprocess import kvplan

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
NVFP4_30B = json.loads((Path(__file__).resolve().parent / "data" / "hf_quant_config" / "qwen3-30b-a3b-nvfp4.json")
                       .read_text())


def _spec(name: str, **extra) -> dict:
    return dict(json.loads((SPECS / f"{name}.json").read_text()), **extra)


# Qwen3-30B-A3B: whole on every TP rank, in BF16: the routers 48 x 2,048 x 128 = 12,582,912 and the norms
# 48 x (2 x 2,048 + 2 x 128) + 2,048 = 210,944 parameters, 12,793,856 x 2 B = 25,587,712 B
QWEN3_30B_WHOLE = 25_587_712


def test_a_config_sized_checkpoint_keeps_norms_routers_and_scalars_whole_under_tp(tmp_path):
    # nvidia/Qwen3-30B-A3B-NVFP4 (hf_quant_config.json: NVFP4, kv_cache_quant_algo FP8): 18,087,458,688 B laid out
    # tensor by tensor (tests/test_hf_quant_config.py). Whole on each rank: norms and routers 25,587,712 B, two F32
    # scalars for each of 48 x (4 + 128 x 3) = 18,624 quantized tensors, 148,992 B, and the KV scales 48 x 8 = 384 B
    model = build_model(_spec("qwen3-30b-a3b", quantization_config=NVFP4_30B), "nv")
    assert model.weight_bytes == 18_087_458_688
    whole = QWEN3_30B_WHOLE + 18_624 * 8 + 48 * 8
    assert model.weight_replicated_bytes == whole == 25_737_088
    # TP 2: (18,087,458,688 - 25,737,088) / 2 + 25,737,088 = 9,056,597,888 B a GPU (before: 9,043,729,344, all of
    # it halved); TP 2 x PP 2: 18,061,721,600 / 4 + 25,737,088 / 2 = 4,528,298,944
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 9_056_597_888  # vLLM's profile
    record = estimated(model)
    assert stage_weight_bytes(record, 48, tp=2) == [9_056_597_888]  # kvplan's own plan
    assert stage_weight_bytes(record, 48, tp=2, pp=2) == [4_528_298_944] * 2
    # the CLI's plan of the config with no weights beside it says the same
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_spec("qwen3-30b-a3b", quantization_config=NVFP4_30B)))
    out = kvplan("estimate", str(path), "--gpu", "h100", "--tp", "2", "--context", "8k", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["capacity"]["weight_bytes_per_gpu"] == 9_056_597_888


def test_gptq_g_idx_is_stored_and_vllm_drops_it():
    quant = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
    model = build_model(_spec("llama-3.1-8b", torch_dtype="float16", quantization_config=quant), "gptq")
    # Llama-3.1-8B: 32 layers of q, k, v, o, gate, up (4,096 inputs each) and down (14,336); the head in fp16.
    # Per linear (in, out): qweight int32 [in/8, out], qzeros int32 [in/128, out/8], scales fp16 [in/128, out],
    # g_idx int32 [in]
    linears = [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096), (4096, 14336), (4096, 14336), (14336, 4096)]
    packed = 32 * sum(i // 8 * o * 4 + i // 128 * (o // 8) * 4 + i // 128 * o * 2 for i, o in linears)
    g_idx = 32 * sum(i * 4 for i, _ in linears)
    assert g_idx == 4_980_736
    norms = (2 * 4096 * 32 + 4096) * 2  # 532,480 B, whole on each rank
    embed_and_head = 2 * 128_256 * 4096 * 2
    assert model.weight_bytes == packed + g_idx + norms + embed_and_head
    assert model.weight_g_idx_bytes == g_idx and model.weight_replicated_bytes == norms
    # vLLM 0.34 at TP 2: the g_idx gone, the rest halved but the norms
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == (packed + embed_and_head) // 2 + norms
    # 0.29.0 still created g_idx (auto_gptq.py: RowvLLMParameter int32 per input row) and loaded it
    assert config_weights_per_gpu(model, 2, 1, "0.29.0") == (packed + embed_and_head + g_idx) // 2 + norms


def test_what_the_config_cannot_size_is_named_in_the_note():
    nvfp4_kv = dict(NVFP4_30B, quantization=dict(NVFP4_30B["quantization"], kv_cache_quant_algo="NVFP4"))
    model = build_model(_spec("qwen3-30b-a3b", quantization_config=nvfp4_kv), "nvkv")
    assert model.weight_bytes == 18_087_458_688 - 48 * 8  # the NVFP4 KV cache's scales are not read
    note = next(n for n in model.notes if n.startswith("weights estimated"))
    assert "estimated: not counted" in note and "KV-cache scales of its nvfp4 KV cache" in note
    # attention kept unquantized: whether ModelOpt still writes the 48 layers' KV scales is not read, so none counted
    kept = dict(NVFP4_30B, quantization=dict(NVFP4_30B["quantization"],
                                             exclude_modules=NVFP4_30B["quantization"]["exclude_modules"]
                                             + ["*self_attn*"]))
    note = next(n for n in build_model(_spec("qwen3-30b-a3b", quantization_config=kept), "nvattn").notes
                if n.startswith("weights estimated"))
    assert "KV-cache scales of 48 attention layers without a quantized k_proj and v_proj" in note
    assert "k_scale and v_scale in" not in note
    ct = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
          "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False,
                              "symmetric": True},
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
                                                                     "strategy": "channel"}}}}
    model = build_model(_spec("llama-3.1-8b", quantization_config=ct), "ct")
    note = next(n for n in model.notes if n.startswith("weights estimated"))
    assert "estimated: not counted" in note and "KV-cache scales of its kv_cache_scheme" in note


def test_the_vllm_report_says_when_the_release_will_not_load_the_quantization(tmp_path):
    # vLLM 0.28.0 removed bitsandbytes (0.27.1's layers/quantization/bitsandbytes.py is gone); 0.31.0-0.34.0
    # refuse GPTQ desc_act=True with groups (utils/gptq_utils.py normalize_and_validate_gptq_desc_act)
    def notes(quant: dict, engine: str) -> list[str]:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(_spec("llama-3.1-8b", quantization_config=quant)))
        out = kvplan("estimate", str(path), "--engine", engine, "--kv-memory", "10GiB", "--context", "8k",
                     "--format", "json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["engine"]["notes"]

    bnb = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    assert any("Unknown quantization method: bitsandbytes" in n for n in notes(bnb, "vllm"))
    act = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True}
    assert any("desc_act=True" in n for n in notes(act, "vllm"))
    assert not any("desc_act" in n for n in notes(act, "vllm@0.29"))
    assert not any("desc_act" in n for n in notes(dict(act, desc_act=False), "vllm"))


def test_nemotron_h_kv_scales_under_mixer_are_counted():
    # Nemotron-H keeps its attention under layers.N.mixer (q/k/v/o_proj), not self_attn. ModelOpt's FP8 KV cache
    # writes mixer.k_proj.k_scale and mixer.v_proj.v_scale, a float32 scalar each (vLLM 0.34
    # quantization/base_config.py get_cache_scale_mapper: ".mixer.[kv]_proj.([kv])_scale" -> ".mixer.attn.*").
    # Nemotron-H-8B's hybrid_override_pattern has 4 attention layers ("*"): 4 x 2 x 4 B = 32 B, whole on every TP
    # rank. Before, only self_attn.k_proj was recognised: nothing counted and the note said so.
    fp8 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
    kv8 = {"producer": {"name": "modelopt"},
           "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
    plain = build_model(_spec("nemotron-h-8b", quantization_config=fp8), "nh")
    model = build_model(_spec("nemotron-h-8b", quantization_config=kv8), "nhkv")
    assert model.weight_bytes - plain.weight_bytes == 32
    assert model.weight_replicated_bytes - plain.weight_replicated_bytes == 32
    note = next(n for n in model.notes if n.startswith("weights estimated"))
    assert "float32 k_scale and v_scale in 4 attention layers (32 B)" in note
    assert "KV-cache scales" not in note
