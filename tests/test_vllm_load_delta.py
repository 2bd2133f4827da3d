"""What vLLM holds beyond a config-sized checkpoint, or below it, where it builds a module otherwise than the
checkpoint stores it (configs/param_vllm_load.py, engines/vllm_load_delta.py). Figures worked out by hand from the
configs and the sources named; kvplan's own plan (the checkpoint) does not change."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.engines.vllm_profile import predict_available
from kvplan.engines.vllm_load import config_weights_per_gpu, rope_bytes
from kvplan.sources import load_model
from kvplan.units import GIB

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def _profile_weights(model, tp=1, pp=1, version="0.34.0"):
    est = predict_available(model, total_bytes=int(140 * GIB), gpu_memory_utilization=0.9, tp=tp, pp=pp,
                            max_model_len=8192, version=version, gpu="h200")
    return est.weight_bytes - (rope_bytes(model, version, 8192) or 0), est


def test_gemma4_k_eq_v_layers_hold_a_v_copy_of_k_proj():
    # Gemma-4-31B: attention_k_eq_v, 10 full_attention layers of its 60 (layer_types), none KV-shared; each full
    # layer's k_proj is 5,376 -> 4 (num_global_key_value_heads) x 512 (global_head_dim), no bias, and no v_proj in
    # the checkpoint (transformers 5.25 Gemma4TextAttention). vLLM 0.34 gemma4.py builds a QKVParallelLinear and
    # loads k_proj into its K and V shards: 10 x 4 x 512 x 5,376 = 110,100,480 parameters more, 220,200,960 B.
    # Split by KV head as the keys: TP 2 -> 110,100,480 B a GPU; TP 8 (above the 4 heads: one whole head a
    # rank) -> 220,200,960 / 4 = 55,050,240 B a GPU
    model = load_model("gemma-4-31b")
    for tp, extra in ((1, 220_200_960), (2, 110_100_480), (8, 55_050_240)):
        weights, est = _profile_weights(model, tp)
        assert weights == config_weights_per_gpu(model, tp) + extra, tp
    assert "110,100,480 parameters vLLM builds beyond the checkpoint" in est.weights_from
    # 0.19.0, the first release with Gemma4ForConditionalGeneration, duplicates k_proj as v_proj at load too
    weights, _ = _profile_weights(model, 2, version="0.19.0")
    assert weights == config_weights_per_gpu(model, 2) + 110_100_480
    # kvplan's own plan counts the checkpoint: 2 B a parameter, no V rows
    assert model.weight_bytes == 2 * model.param_count


def test_gemma4_k_eq_v_of_a_quantized_checkpoint_is_named_not_sized():
    # NVFP4 Gemma-4-31B-it: the V copy would be stored in the format the list gives k_proj; not sized, said so
    model = load_model(str(CONFIGS / "gemma-4-31b-it-nvfp4.json"))
    weights, est = _profile_weights(model, 2)
    assert weights == config_weights_per_gpu(model, 2, version="0.34.0")
    assert any("110,100,480 parameters of quantized weights beyond the checkpoint" in n for n in est.notes)


def test_longcat_flash_router_bias_is_stored_but_not_built_by_vllm_from_0_32(tmp_path):
    # LongCat-Flash-Chat with router_bias: transformers 5.25 LongcatFlashTopkRouter builds classifier with
    # bias=router_bias, so the checkpoint stores 28 layers x (512 + 256) = 21,504 bias parameters, 43,008 B at
    # bf16: kvplan's plan counts them. vLLM 0.32.0-0.34.0 longcat_flash.py LongcatRouter: GateLinear(bias=False), the
    # .bias skipped at load; so vLLM's weights equal those of the same model without router_bias (its float32
    # router then holds 28 x (6,144 x 768 + 768) parameters either way). Before: 43,008 B + 2 B x 21,504 for the
    # float32 upcast = 86,016 B too many on every GPU.
    raw = json.loads((SPECS / "longcat-flash-chat.json").read_text())
    raw["router_bias"] = True
    (tmp_path / "config.json").write_text(json.dumps(raw))
    biased, plain = load_model(str(tmp_path / "config.json")), load_model("longcat-flash-chat")
    assert biased.weight_bytes - plain.weight_bytes == 43_008
    for tp, pp in ((8, 1), (4, 2)):
        assert _profile_weights(biased, tp, pp)[0] == _profile_weights(plain, tp, pp)[0]
    # vLLM 0.31.0 built ReplicatedLinear(bias=config.router_bias) in float32: 21,504 x 4 B = 86,016 B more a GPU
    assert _profile_weights(biased, 8, version="0.31.0")[0] - _profile_weights(plain, 8, version="0.31.0")[0] == 86_016


def test_weights_from_a_record_name_the_v_copy_without_counting_it():
    # a size given for Gemma-4-31B's checkpoint: kvplan cannot tell the k_proj bytes in it, so the V copy
    # (110,100,480 parameters, as above) is named in a note and the weights are the given record's
    from kvplan.weights.record import Weights

    model = load_model("gemma-4-31b")
    record = Weights(62_000_000_000, "given")
    est = predict_available(model, total_bytes=int(140 * GIB), gpu_memory_utilization=0.9, max_model_len=8192,
                            version="0.34.0", gpu="h200", weights=record)
    assert est.weight_bytes - (rope_bytes(model, "0.34.0", 8192) or 0) == 62_000_000_000
    assert any("110,100,480 parameters beyond the checkpoint's" in n and "read from given" in n for n in est.notes)
